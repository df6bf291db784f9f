// Package sharing decides which namespaces may use a CloudflareTunnel or an
// AccessPolicy: its own always; others as its spec.allowedNamespaces says
// (all, or those a label selector picks), as a Gateway listener's
// allowedRoutes does for routes. Sources name a tunnel of another namespace "<namespace>/<name>";
// what they make stays in their own namespace.
package sharing

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
)

// Reasons a source is refused a tunnel.
const (
	// ReasonTunnelNotFound: no such CloudflareTunnel. A typo: what the
	// source has stays as it is.
	ReasonTunnelNotFound = "TunnelNotFound"
	// ReasonTunnelNotShared: the tunnel does not allow the source's
	// namespace. Policy: what the source had through it is unpublished.
	ReasonTunnelNotShared = "TunnelNotShared"
)

// Ref is a tunnel as a source names it.
type Ref struct {
	Namespace, Name string
}

func (r Ref) String() string { return r.Namespace + "/" + r.Name }

// Parse reads a tunnel annotation: "<name>" (a tunnel of the source's
// namespace) or "<namespace>/<name>". The problem is "" when it is valid.
func Parse(v, sourceNamespace string) (Ref, string) {
	v = strings.TrimSpace(v)
	ns, name, cross := strings.Cut(v, "/")
	if !cross {
		ns, name = sourceNamespace, v
	}
	if cross && len(validation.IsDNS1123Label(ns)) > 0 {
		return Ref{}, fmt.Sprintf("%s is not a namespace: name a tunnel as <name> or <namespace>/<name>", publish.Clip(ns))
	}
	if len(validation.IsDNS1123Subdomain(name)) > 0 {
		return Ref{}, fmt.Sprintf("%s is not a CloudflareTunnel name: name a tunnel as <name> or <namespace>/<name>", publish.Clip(name))
	}
	return Ref{Namespace: ns, Name: name}, ""
}

// Allows says whether sources in ns (its labels: nil when they are not
// known) may use cft.
func Allows(cft *v1alpha1.CloudflareTunnel, ns string, nsLabels map[string]string) bool {
	return AllowedBy(cft.Spec.AllowedNamespaces, cft.Namespace, ns, nsLabels)
}

// AllowedBy says whether namespace ns (its labels: nil when they are not
// known) may use an object of namespace owner that allows a: its own
// namespace always, others as a says. A selector that does not parse
// allows none (fail closed).
func AllowedBy(a *ztv1alpha1.AllowedNamespaces, owner, ns string, nsLabels map[string]string) bool {
	if ns == owner {
		return true
	}
	if a == nil {
		return false
	}
	switch a.From {
	case v1alpha1.NamespacesFromAll:
		return true
	case v1alpha1.NamespacesFromSelector:
		if a.Selector == nil {
			return false
		}
		sel, err := metav1.LabelSelectorAsSelector(a.Selector)
		if err != nil {
			return false
		}
		return sel.Matches(labels.Set(nsLabels))
	}
	return false
}

// Shared says whether cft may be used from namespaces other than its own.
func Shared(cft *v1alpha1.CloudflareTunnel) bool {
	return SharedBy(cft.Spec.AllowedNamespaces)
}

// SharedBy says whether an object that allows a may be used from
// namespaces other than its own.
func SharedBy(a *ztv1alpha1.AllowedNamespaces) bool {
	return a != nil && a.From != "" && a.From != v1alpha1.NamespacesFromSame
}

// Refusal is why a source may not use a tunnel; zero when it may.
type Refusal struct {
	Reason, Message string
}

// Lookup is the CloudflareTunnel ref names, for a source in namespace
// sourceNamespace, or why it may not use it.
func Lookup(ctx context.Context, kube client.Reader, sourceNamespace string, ref Ref) (*v1alpha1.CloudflareTunnel, Refusal, error) {
	cft := &v1alpha1.CloudflareTunnel{}
	if err := kube.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, cft); err != nil {
		if kerrors.IsNotFound(err) {
			return nil, Refusal{Reason: ReasonTunnelNotFound, Message: fmt.Sprintf("no CloudflareTunnel %q in namespace %s", ref.Name, ref.Namespace)}, nil
		}
		return nil, Refusal{}, errors.Wrap(err, "cannot get CloudflareTunnel")
	}
	if ref.Namespace == sourceNamespace {
		return cft, Refusal{}, nil
	}
	ns := &corev1.Namespace{}
	if err := kube.Get(ctx, types.NamespacedName{Name: sourceNamespace}, ns); err != nil {
		return nil, Refusal{}, errors.Wrap(err, "cannot get the source's Namespace")
	}
	if !Allows(cft, sourceNamespace, ns.Labels) {
		return nil, Refusal{Reason: ReasonTunnelNotShared, Message: fmt.Sprintf("CloudflareTunnel %s does not allow namespace %s (its spec.allowedNamespaces)", ref, sourceNamespace)}, nil
	}
	return cft, Refusal{}, nil
}

// Names says whether a tunnel annotation of a source in namespace
// sourceNamespace names the tunnel ns/name.
func Names(annotation, sourceNamespace, ns, name string) bool {
	ref, bad := Parse(annotation, sourceNamespace)
	return bad == "" && ref.Namespace == ns && ref.Name == name
}

// CrossNamespace says whether a tunnel annotation names a tunnel of another
// namespace, whose sharing policy (and the namespace's labels) decide.
func CrossNamespace(annotation, sourceNamespace string) bool {
	ref, bad := Parse(annotation, sourceNamespace)
	return bad == "" && ref.Namespace != sourceNamespace
}

// Everyone says whether cft is shared with every namespace: from All, or a
// selector that selects every namespace (no labels, no expressions).
func Everyone(cft *v1alpha1.CloudflareTunnel) bool {
	a := cft.Spec.AllowedNamespaces
	if a == nil {
		return false
	}
	switch a.From {
	case v1alpha1.NamespacesFromAll:
		return true
	case v1alpha1.NamespacesFromSelector:
		return a.Selector != nil && len(a.Selector.MatchLabels) == 0 && len(a.Selector.MatchExpressions) == 0
	}
	return false
}
