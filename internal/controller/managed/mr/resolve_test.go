package mr

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
)

// tunnelReader serves one Tunnel as the informer cache does: with
// client.UnsafeDisableDeepCopy the cache's own object, else a copy.
type tunnelReader struct {
	client.Reader
	tunnel *ztv1alpha1.Tunnel
}

func (r tunnelReader) Get(_ context.Context, _ client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	src := r.tunnel.DeepCopy()
	if len(opts) > 0 {
		src = r.tunnel
	}
	*obj.(*ztv1alpha1.Tunnel) = *src
	return nil
}

func TestUnchangedFirstWritesOnlyNewResolutions(t *testing.T) {
	tunnel := &ztv1alpha1.Tunnel{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "edge"}}
	meta.SetExternalName(tunnel, "tunnel-id")
	tunnel.Spec.ForProvider.Config = &ztv1alpha1.TunnelConfig{Ingress: []ztv1alpha1.IngressRule{{Hostname: ptr.To("a.example.com"), Service: "http://a"}}}
	cached := tunnel.DeepCopy()

	route := func(id *string, policy *xpv2.ResolvePolicy) *ztv1alpha1.HostnameRoute {
		r := &ztv1alpha1.HostnameRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "r"}}
		r.Spec.ForProvider.TunnelIDRef = &xpv2.NamespacedReference{Name: "edge"}
		if policy != nil {
			r.Spec.ForProvider.TunnelIDRef.Policy = &xpv2.Policy{Resolve: policy}
		}
		r.Spec.ForProvider.TunnelID = id
		return r
	}
	cases := map[string]struct {
		mg        resource.Managed
		wantWrite bool
	}{
		"AlreadyResolved": {mg: route(ptr.To("tunnel-id"), nil)},
		"NotYetResolved":  {mg: route(nil, nil), wantWrite: true},
		// A value already set is kept unless the policy says resolve
		// always, as crossplane-runtime's resolver does.
		"SetValueKept":             {mg: route(ptr.To("old-id"), nil)},
		"ResolveAlwaysToNewTunnel": {mg: route(ptr.To("old-id"), ptr.To(xpv2.ResolvePolicyAlways)), wantWrite: true},
		"ResolveAlwaysUnchanged":   {mg: route(ptr.To("tunnel-id"), ptr.To(xpv2.ResolvePolicyAlways))},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			writes := 0
			writer := managed.ReferenceResolverFn(func(context.Context, resource.Managed) error { writes++; return nil })
			before := tc.mg.DeepCopyObject()
			u := unchangedFirst{kube: tunnelReader{tunnel: tunnel}, writer: writer}
			if err := u.ResolveReferences(context.Background(), tc.mg); err != nil {
				t.Fatal(err)
			}
			if got := writes > 0; got != tc.wantWrite {
				t.Errorf("written: got %v, want %v", got, tc.wantWrite)
			}
			// What it hands the writer is the resource as it was: the
			// writer resolves and compares for itself.
			if diff := cmp.Diff(before, tc.mg); diff != "" {
				t.Errorf("the resource changed: -before +after:\n%s", diff)
			}
			if diff := cmp.Diff(cached, tunnel); diff != "" {
				t.Errorf("the cached Tunnel changed: -before +after:\n%s", diff)
			}
		})
	}
}

func TestUnchangedFirstLeavesResourcesWithoutReferences(t *testing.T) {
	writes := 0
	u := unchangedFirst{writer: managed.ReferenceResolverFn(func(context.Context, resource.Managed) error { writes++; return nil })}
	if err := u.ResolveReferences(context.Background(), &ztv1alpha1.Tunnel{}); err != nil {
		t.Fatal(err)
	}
	if writes != 0 {
		t.Errorf("a resource without references went to the writer %d times", writes)
	}
}
