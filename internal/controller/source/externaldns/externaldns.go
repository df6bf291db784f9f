// Package externaldns writes ExternalDNS DNSEndpoint objects: the records a
// source's hostnames need, for an installed external-dns to publish. It uses
// unstructured objects rather than external-dns's Go module, whose current
// versions need a newer Kubernetes stack than this provider's.
package externaldns

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

// GroupVersionKind of external-dns's DNSEndpoint.
var GroupVersionKind = schema.GroupVersionKind{Group: "externaldns.k8s.io", Version: "v1alpha1", Kind: "DNSEndpoint"}

// Outcomes of Apply.
type Outcome string

// Outcomes of Apply.
const (
	// Written: the DNSEndpoint holds the records (or, with none, is gone).
	Written Outcome = "Written"
	// CRDMissing: the DNSEndpoint kind is not installed.
	CRDMissing Outcome = "CRDMissing"
	// Conflict: a DNSEndpoint of that name exists and is not the owner's;
	// it is left alone.
	Conflict Outcome = "Conflict"
)

// Endpoint is the desired DNSEndpoint: one proxied CNAME to target for each
// hostname, in a stable order. proxiedKey is the provider-specific property
// external-dns's Cloudflare provider reads.
func Endpoint(name, namespace string, labels map[string]string, owner metav1.OwnerReference, hosts []string, target, proxiedKey string) *unstructured.Unstructured {
	hosts = slices.Clone(hosts)
	slices.Sort(hosts)
	hosts = slices.Compact(hosts)
	endpoints := make([]any, 0, len(hosts))
	for _, h := range hosts {
		endpoints = append(endpoints, map[string]any{
			"dnsName":          h,
			"recordType":       "CNAME",
			"targets":          []any{target},
			"providerSpecific": []any{map[string]any{"name": proxiedKey, "value": "true"}},
		})
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(GroupVersionKind)
	u.SetName(name)
	u.SetNamespace(namespace)
	u.SetLabels(labels)
	u.SetOwnerReferences([]metav1.OwnerReference{owner})
	u.Object["spec"] = map[string]any{"endpoints": endpoints}
	return u
}

// Hosts are the hostnames of a DNSEndpoint's records.
func Hosts(u *unstructured.Unstructured) []string {
	eps, _, _ := unstructured.NestedSlice(u.Object, "spec", "endpoints")
	var out []string
	for _, e := range eps {
		if m, ok := e.(map[string]any); ok {
			if n, ok := m["dnsName"].(string); ok {
				out = append(out, n)
			}
		}
	}
	return out
}

// Apply converges the DNSEndpoint to want; with no records it deletes the
// owner's DNSEndpoint instead. Only a DNSEndpoint controlled by the owner
// (want's controller reference) is changed or deleted.
func Apply(ctx context.Context, kube client.Client, want *unstructured.Unstructured) (Outcome, error) {
	cur := &unstructured.Unstructured{}
	cur.SetGroupVersionKind(GroupVersionKind)
	err := kube.Get(ctx, client.ObjectKeyFromObject(want), cur)
	empty := len(Hosts(want)) == 0
	switch {
	case meta.IsNoMatchError(err):
		return CRDMissing, nil
	case kerrors.IsNotFound(err) && empty:
		return Written, nil
	case kerrors.IsNotFound(err):
		if err := kube.Create(ctx, want); err != nil {
			if meta.IsNoMatchError(err) {
				return CRDMissing, nil
			}
			return "", errors.Wrapf(err, "cannot create DNSEndpoint %s", want.GetName())
		}
		return Written, nil
	case err != nil:
		return "", errors.Wrapf(err, "cannot get DNSEndpoint %s", want.GetName())
	}
	if !controlledBySame(cur, want) {
		return Conflict, nil
	}
	if empty {
		return Written, errors.Wrapf(client.IgnoreNotFound(kube.Delete(ctx, cur)), "cannot delete DNSEndpoint %s", cur.GetName())
	}
	if equality.Semantic.DeepEqual(cur.Object["spec"], want.Object["spec"]) && equality.Semantic.DeepEqual(cur.GetLabels(), want.GetLabels()) {
		return Written, nil
	}
	cur.Object["spec"] = want.Object["spec"]
	cur.SetLabels(want.GetLabels())
	return Written, errors.Wrapf(kube.Update(ctx, cur), "cannot update DNSEndpoint %s", cur.GetName())
}

// Delete removes the owner's DNSEndpoint name in namespace, if it has one.
func Delete(ctx context.Context, kube client.Client, namespace, name string, owner k8stypes.UID) error {
	_, err := DeleteIfInstalled(ctx, kube, namespace, name, owner)
	return err
}

// DeleteIfInstalled is Delete that also says whether the DNSEndpoint kind
// is installed: when it is not, no object can have one, and a caller with
// many objects to clean up can stop asking for a while (each lookup of a
// kind that is not there makes the client rediscover the API group).
func DeleteIfInstalled(ctx context.Context, kube client.Client, namespace, name string, owner k8stypes.UID) (installed bool, err error) {
	cur := &unstructured.Unstructured{}
	cur.SetGroupVersionKind(GroupVersionKind)
	err = kube.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, cur)
	switch {
	case meta.IsNoMatchError(err):
		return false, nil
	case kerrors.IsNotFound(err):
		return true, nil
	case err != nil:
		return true, errors.Wrapf(err, "cannot get DNSEndpoint %s", name)
	}
	if c := metav1.GetControllerOf(cur); c == nil || c.UID != owner {
		return true, nil
	}
	return true, errors.Wrapf(client.IgnoreNotFound(kube.Delete(ctx, cur)), "cannot delete DNSEndpoint %s", name)
}

func controlledBySame(cur, want *unstructured.Unstructured) bool {
	c, w := metav1.GetControllerOf(cur), metav1.GetControllerOf(want)
	return c != nil && w != nil && c.UID == w.UID
}

// Describe says what an outcome means for the hostnames' DNS.
func Describe(o Outcome, name string, n int) string {
	switch o {
	case CRDMissing:
		return fmt.Sprintf("ExternalDNS mode, but the DNSEndpoint kind (%s) is not installed: install external-dns's CRD; the hostnames are on the tunnel, and their records are not written", GroupVersionKind.GroupKind())
	case Conflict:
		return fmt.Sprintf("DNSEndpoint %s exists and is not this object's; it is left alone and no records are written", name)
	}
	return fmt.Sprintf("DNSEndpoint %s lists %d proxied CNAME records for external-dns to publish", name, n)
}
