package service

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
)

func networkRoute(owner string, edit func(*ztv1alpha1.NetworkRoute)) *ztv1alpha1.NetworkRoute {
	r := &ztv1alpha1.NetworkRoute{
		ObjectMeta: metav1.ObjectMeta{Name: "redis-net-x", Labels: map[string]string{"l": "v"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Service", Name: "redis", UID: types.UID("u-" + owner), Controller: ptr.To(true)}}},
		Spec: ztv1alpha1.NetworkRouteSpec{ForProvider: ztv1alpha1.NetworkRouteParameters{
			Network: "10.96.0.12/32", TunnelIDRef: &xpv2.NamespacedReference{Name: "edge"}, Comment: ptr.To("Service team-a/redis"),
		}},
	}
	if edit != nil {
		edit(r)
	}
	return r
}

// resolved is a route as the managed reconciler leaves it: its references
// resolved to IDs.
func resolved(r *ztv1alpha1.NetworkRoute) {
	r.Spec.ForProvider.TunnelID = ptr.To("tunnel-1")
	r.Spec.ForProvider.VirtualNetworkID = ptr.To("default-vnet")
}

func TestCopySpec(t *testing.T) {
	cases := map[string]struct {
		cur, want *ztv1alpha1.NetworkRoute
		changed   bool
		result    *ztv1alpha1.NetworkRoute
	}{
		"UpToDateKeepsWhatTheReconcilerAdded": {
			cur: networkRoute("1", resolved), want: networkRoute("1", nil),
			result: networkRoute("1", resolved),
		},
		// A recreated Service's routes are made anew (source.Converger), not
		// taken over: the owner is never copied.
		"TheOwnerIsNotCopied": {
			cur: networkRoute("1", resolved), want: networkRoute("2", nil),
			result: networkRoute("1", resolved),
		},
		"AnotherTunnelResolvesAgain": {
			cur: networkRoute("1", resolved),
			want: networkRoute("1", func(r *ztv1alpha1.NetworkRoute) {
				r.Spec.ForProvider.TunnelIDRef = &xpv2.NamespacedReference{Name: "other"}
			}), changed: true,
			result: networkRoute("1", func(r *ztv1alpha1.NetworkRoute) {
				resolved(r)
				r.Spec.ForProvider.TunnelIDRef, r.Spec.ForProvider.TunnelID = &xpv2.NamespacedReference{Name: "other"}, nil
			}),
		},
		"AVirtualNetworkNamedResolvesAgain": {
			cur: networkRoute("1", resolved),
			want: networkRoute("1", func(r *ztv1alpha1.NetworkRoute) {
				r.Spec.ForProvider.VirtualNetworkIDRef = &xpv2.NamespacedReference{Name: "blue"}
			}), changed: true,
			result: networkRoute("1", func(r *ztv1alpha1.NetworkRoute) {
				resolved(r)
				r.Spec.ForProvider.VirtualNetworkIDRef, r.Spec.ForProvider.VirtualNetworkID = &xpv2.NamespacedReference{Name: "blue"}, nil
			}),
		},
		"TheVirtualNetworkDroppedGoesBackToTheDefault": {
			cur: networkRoute("1", func(r *ztv1alpha1.NetworkRoute) {
				resolved(r)
				r.Spec.ForProvider.VirtualNetworkIDRef = &xpv2.NamespacedReference{Name: "blue"}
			}),
			want: networkRoute("1", nil), changed: true,
			result: networkRoute("1", func(r *ztv1alpha1.NetworkRoute) { resolved(r); r.Spec.ForProvider.VirtualNetworkID = nil }),
		},
		"HandEditedNetworkRestored": {
			cur:  networkRoute("1", func(r *ztv1alpha1.NetworkRoute) { resolved(r); r.Spec.ForProvider.Network = "10.0.0.0/8" }),
			want: networkRoute("1", nil), changed: true,
			result: networkRoute("1", resolved),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := CopySpec(tc.cur, tc.want); got != tc.changed {
				t.Errorf("CopySpec changed = %v, want %v", got, tc.changed)
			}
			if diff := cmp.Diff(tc.result, tc.cur); diff != "" {
				t.Errorf("-want +got:\n%s", diff)
			}
		})
	}
}
