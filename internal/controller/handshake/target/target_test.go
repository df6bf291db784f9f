package target

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/test"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sharing"
)

// kube answers Get from objs, by name alone (the names are distinct), and
// with err for every other.
func kube(err error, objs ...client.Object) *test.MockClient {
	return &test.MockClient{MockGet: func(_ context.Context, key client.ObjectKey, obj client.Object) error {
		for _, o := range objs {
			if o.GetName() == key.Name && sameKind(o, obj) {
				return copyInto(o, obj)
			}
		}
		if err != nil {
			return err
		}
		return kerrors.NewNotFound(schema.GroupResource{}, key.Name)
	}}
}

func sameKind(a, b client.Object) bool {
	switch a.(type) {
	case *v1alpha1.CloudflareTunnel:
		_, ok := b.(*v1alpha1.CloudflareTunnel)
		return ok
	case *corev1.Namespace:
		_, ok := b.(*corev1.Namespace)
		return ok
	}
	return false
}

func copyInto(from, to client.Object) error {
	switch t := to.(type) {
	case *v1alpha1.CloudflareTunnel:
		*t = *from.(*v1alpha1.CloudflareTunnel).DeepCopy()
	case *corev1.Namespace:
		*t = *from.(*corev1.Namespace).DeepCopy()
	}
	return nil
}

func cloudflareTunnel(edits ...func(*v1alpha1.CloudflareTunnel)) *v1alpha1.CloudflareTunnel {
	c := &v1alpha1.CloudflareTunnel{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "edge"}}
	for _, e := range edits {
		e(c)
	}
	return c
}

func sharedWithAll(c *v1alpha1.CloudflareTunnel) {
	c.Spec.AllowedNamespaces = &v1alpha1.AllowedNamespaces{From: v1alpha1.NamespacesFromAll}
}

// made is a CloudflareTunnel whose status says its Tunnel's ID and
// credentials.
func made(c *v1alpha1.CloudflareTunnel) {
	c.Status.TunnelID = "6f1c0d6e-0b8e-4f51-9f5a-3c3b0c8f7a21"
	c.Status.ProviderConfigRef = &xpv2.ProviderConfigReference{Kind: "ProviderConfig", Name: "team"}
	c.Spec.AdoptByName = true
}

// madeNoID is a CloudflareTunnel whose Tunnel is made (its credentials
// said) but not yet in Cloudflare.
func madeNoID(c *v1alpha1.CloudflareTunnel) {
	c.Status.ProviderConfigRef = &xpv2.ProviderConfigReference{Kind: "ClusterProviderConfig", Name: "default"}
}

func TestResolve(t *testing.T) {
	errBoom := errors.New("boom")
	ref := sharing.Ref{Namespace: "infra", Name: "edge"}
	deleting := func(c *v1alpha1.CloudflareTunnel) {
		c.DeletionTimestamp = ptr.To(metav1.Now())
	}
	type want struct {
		made    bool
		id      string
		pc      *xpv2.ProviderConfigReference
		adopt   bool
		refusal string
		err     error
	}
	cases := map[string]struct {
		reason string
		kube   *test.MockClient
		source string
		want   want
	}{
		"NotFound": {
			reason: "No CloudflareTunnel of the name: a refusal, not an error.",
			kube:   kube(nil), source: "infra",
			want: want{refusal: ReasonNotFound},
		},
		"NotShared": {
			reason: "Another namespace's tunnel that does not allow the source's is refused.",
			kube:   kube(nil, cloudflareTunnel(made), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}), source: "team-a",
			want: want{refusal: ReasonNotShared},
		},
		"Deleting": {
			reason: "A tunnel being deleted takes no new work.",
			kube:   kube(nil, cloudflareTunnel(deleting, made)), source: "infra",
			want: want{refusal: ReasonDeleting},
		},
		"NotMadeYet": {
			reason: "A tunnel whose status does not say its credentials yet is a target with no ID and no credentials: nothing may be made for it.",
			kube:   kube(nil, cloudflareTunnel()), source: "infra",
			want: want{},
		},
		"MadeWithoutAnID": {
			reason: "A tunnel whose Tunnel is made but not yet in Cloudflare gives the credentials its objects use, and no ID.",
			kube:   kube(nil, cloudflareTunnel(madeNoID)), source: "infra",
			want: want{made: true, pc: &xpv2.ProviderConfigReference{Kind: "ClusterProviderConfig", Name: "default"}},
		},
		"Made": {
			reason: "A tunnel made gives its ID and the credentials its objects use, from its status.",
			kube:   kube(nil, cloudflareTunnel(made)), source: "infra",
			want: want{made: true, id: "6f1c0d6e-0b8e-4f51-9f5a-3c3b0c8f7a21", pc: &xpv2.ProviderConfigReference{Kind: "ProviderConfig", Name: "team"}, adopt: true},
		},
		"SharedWithTheSourcesNamespace": {
			reason: "Another namespace's tunnel that allows every namespace is a target.",
			kube:   kube(nil, cloudflareTunnel(sharedWithAll, made), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}), source: "team-a",
			want: want{made: true, id: "6f1c0d6e-0b8e-4f51-9f5a-3c3b0c8f7a21", pc: &xpv2.ProviderConfigReference{Kind: "ProviderConfig", Name: "team"}, adopt: true},
		},
		"APIError": {
			reason: "An error reading the CloudflareTunnel is returned: not a refusal.",
			kube:   kube(errBoom), source: "infra",
			want: want{err: errors.Wrap(errBoom, "cannot get CloudflareTunnel")},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Resolve(context.Background(), tc.kube, tc.source, ref)
			g := want{made: got.Made, id: got.ID, pc: got.ProviderConfig, adopt: got.AdoptByName, err: err}
			if r, ok := Refused(err); ok {
				g.refusal, g.err = r.Reason, nil
			}
			if diff := cmp.Diff(tc.want, g, cmp.AllowUnexported(want{}), test.EquateErrors()); diff != "" {
				t.Errorf("%s\nResolve(...): -want +got:\n%s", tc.reason, diff)
			}
			if g.refusal == "" && g.err == nil && (got.Tunnel == nil || got.Ref != ref) {
				t.Errorf("%s\nResolve(...): target names %v, tunnel %v", tc.reason, got.Ref, got.Tunnel)
			}
		})
	}
}
