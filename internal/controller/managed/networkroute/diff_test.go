package networkroute

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/ownership"
)

var (
	me       = ownership.Identity{Owner: "cluster-a", Kind: v1alpha1.NetworkRouteKind, Namespace: "team-a", Name: "redis"}
	sibling  = ownership.Identity{Owner: "cluster-a", Kind: v1alpha1.NetworkRouteKind, Namespace: "team-a", Name: "wide"}
	stranger = ownership.Identity{Owner: "cluster-b", Kind: v1alpha1.NetworkRouteKind, Namespace: "team-a", Name: "redis"}
)

func TestDiff(t *testing.T) {
	mark := me.Mark()
	observed := &cloudflare.CIDRRoute{Network: "10.1.0.0/16", TunnelID: "t1", VirtualNetworkID: "v1", Comment: ownership.Comment("c", mark)}
	base := v1alpha1.NetworkRouteParameters{Network: "10.1.0.0/16", TunnelID: ptr.To("t1"), VirtualNetworkID: ptr.To("v1"), Comment: ptr.To("c")}
	cases := map[string]struct {
		edit     func(*v1alpha1.NetworkRouteParameters)
		observed *cloudflare.CIDRRoute
		upToDate bool
	}{
		"Same":                {upToDate: true},
		"WrittenUnmasked":     {edit: func(p *v1alpha1.NetworkRouteParameters) { p.Network = "10.1.2.3/16" }, upToDate: true},
		"OtherNetwork":        {edit: func(p *v1alpha1.NetworkRouteParameters) { p.Network = "10.2.0.0/16" }},
		"OtherTunnel":         {edit: func(p *v1alpha1.NetworkRouteParameters) { p.TunnelID = ptr.To("t2") }},
		"OtherVirtualNetwork": {edit: func(p *v1alpha1.NetworkRouteParameters) { p.VirtualNetworkID = ptr.To("v2") }},
		"VirtualNetworkUnset": {edit: func(p *v1alpha1.NetworkRouteParameters) { p.VirtualNetworkID = nil }, upToDate: true},
		"CommentChanged":      {edit: func(p *v1alpha1.NetworkRouteParameters) { p.Comment = ptr.To("d") }},
		"CommentUnsetIgnored": {edit: func(p *v1alpha1.NetworkRouteParameters) { p.Comment = nil }, upToDate: true},
		"UnmarkedIsMarked":    {observed: &cloudflare.CIDRRoute{Network: "10.1.0.0/16", TunnelID: "t1", VirtualNetworkID: "v1", Comment: "c"}},
		"IPv6Compressed":      {edit: func(p *v1alpha1.NetworkRouteParameters) { p.Network = "fd00:0:0::1/128" }, observed: &cloudflare.CIDRRoute{Network: "fd00::1/128", TunnelID: "t1", VirtualNetworkID: "v1", Comment: ownership.Comment("c", mark)}, upToDate: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := base
			if tc.edit != nil {
				tc.edit(&p)
			}
			o := observed
			if tc.observed != nil {
				o = tc.observed
			}
			if d := Diff(p, o, mark); (d == "") != tc.upToDate {
				t.Errorf("Diff = %q, want up to date = %v", d, tc.upToDate)
			}
		})
	}
}

func TestLateInitialize(t *testing.T) {
	r := &cloudflare.CIDRRoute{VirtualNetworkID: "v1", Comment: ownership.Comment("team a", me.Mark())}
	p := v1alpha1.NetworkRouteParameters{Network: "10.0.0.0/8"}
	if !LateInitialize(&p, r) {
		t.Fatal("LateInitialize filled nothing")
	}
	// The virtual network stays unset: it was the default's choice.
	want := v1alpha1.NetworkRouteParameters{Network: "10.0.0.0/8", Comment: ptr.To("team a")}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
	if LateInitialize(&p, &cloudflare.CIDRRoute{VirtualNetworkID: "v2", Comment: "other"}) {
		t.Error("LateInitialize overwrote fields the spec sets")
	}
}
