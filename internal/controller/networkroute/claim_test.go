package networkroute

import (
	"errors"
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

func route(id, network string, by *ownership.Identity) cloudflare.CIDRRoute {
	c := "made by hand"
	if by != nil {
		c = ownership.Comment("", by.Mark())
	}
	return cloudflare.CIDRRoute{ID: id, Network: network, TunnelID: "t", Comment: c}
}

func TestClaim(t *testing.T) {
	type want struct {
		mine  string
		other string
		exact bool
	}
	cases := map[string]struct {
		network, self string
		routes        []cloudflare.CIDRRoute
		want          want
	}{
		"Nothing":             {network: "10.0.0.1/32", want: want{}},
		"Unrelated":           {network: "10.0.0.1/32", routes: []cloudflare.CIDRRoute{route("r1", "10.1.0.0/16", nil), route("r2", "fd00::/8", nil)}},
		"MineByMarker":        {network: "10.0.0.1/32", routes: []cloudflare.CIDRRoute{route("r1", "10.0.0.1/32", &me)}, want: want{mine: "r1"}},
		"SameNetworkUnmarked": {network: "10.0.0.1/32", routes: []cloudflare.CIDRRoute{route("r1", "10.0.0.1/32", nil)}, want: want{other: "r1", exact: true}},
		"SameNetworkSibling":  {network: "10.0.0.1/32", routes: []cloudflare.CIDRRoute{route("r1", "10.0.0.1/32", &sibling)}, want: want{other: "r1", exact: true}},
		"InsideAForeignRoute": {network: "10.0.0.1/32", routes: []cloudflare.CIDRRoute{route("r1", "10.0.0.0/8", nil)}, want: want{other: "r1"}},
		"AroundAForeignRoute": {network: "10.0.0.0/8", routes: []cloudflare.CIDRRoute{route("r1", "10.9.9.9/32", nil)}, want: want{other: "r1"}},
		"AnotherInstallation": {network: "10.0.0.1/32", routes: []cloudflare.CIDRRoute{route("r1", "10.0.0.0/8", &stranger)}, want: want{other: "r1"}},
		"InsideASibling":      {network: "10.0.0.1/32", routes: []cloudflare.CIDRRoute{route("r1", "10.0.0.0/8", &sibling)}},
		"ExactBeatsOverlap": {network: "10.0.0.1/32", routes: []cloudflare.CIDRRoute{route("r1", "10.0.0.0/8", nil), route("r2", "10.0.0.1/32", nil)},
			want: want{other: "r2", exact: true}},
		// Made before the foreign route appeared: it is kept (and deleted
		// when this resource is), not abandoned.
		"MineThoughOverlappedSince": {network: "10.0.0.1/32", routes: []cloudflare.CIDRRoute{route("r1", "10.0.0.1/32", &me), route("r2", "10.0.0.0/24", nil)},
			want: want{mine: "r1"}},
		"MoveOntoAForeignOverlap": {network: "10.0.0.1/32", self: "r1", routes: []cloudflare.CIDRRoute{route("r1", "10.9.0.0/16", &me), route("r2", "10.0.0.0/24", nil)},
			want: want{other: "r2"}},
		"MoveSkipsItself":     {network: "10.0.0.1/32", self: "r1", routes: []cloudflare.CIDRRoute{route("r1", "10.0.0.0/8", &me)}},
		"MoveOntoAnotherMine": {network: "10.0.0.1/32", self: "r1", routes: []cloudflare.CIDRRoute{route("r1", "10.2.0.0/16", &me), route("r2", "10.0.0.1/32", &me)}, want: want{other: "r2", exact: true}},
		"FamiliesApart":       {network: "::ffff:10.0.0.1/128", routes: []cloudflare.CIDRRoute{route("r1", "10.0.0.0/8", nil)}},
		"DeletedIgnored": {network: "10.0.0.1/32", routes: []cloudflare.CIDRRoute{func() cloudflare.CIDRRoute {
			r := route("r1", "10.0.0.0/8", nil)
			r.DeletedAt = ptr.To(r.CreatedAt.AddDate(2000, 0, 0))
			return r
		}()}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			mine, err := Claim(tc.network, tc.self, tc.routes, me)
			var got want
			if mine != nil {
				got.mine = mine.ID
			}
			var c *ConflictError
			if errors.As(err, &c) {
				got.other, got.exact = c.Other.ID, c.Exact
			} else if err != nil {
				t.Fatalf("Claim: %v", err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("Claim(%s) -want +got:\n%s", tc.network, diff)
			}
		})
	}
}

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

func FuzzClaim(f *testing.F) {
	f.Add("10.0.0.1/32", "10.0.0.0/8", "fd00::/8", true)
	f.Add("10.0.0.0/8", "10.0.0.0/8", "10.9.0.0/16", false)
	f.Fuzz(func(t *testing.T, network, a, b string, marked bool) {
		by := &me
		if !marked {
			by = nil
		}
		rs := []cloudflare.CIDRRoute{route("a", a, by), route("b", b, nil)}
		n := cloudflare.NormalizeNetwork(network)
		mine, err := Claim(n, "", rs, me)
		if mine != nil && err != nil {
			t.Fatalf("both a route (%s) and a conflict (%v)", mine.ID, err)
		}
		if mine != nil && (mine.ID != "a" || !marked || cloudflare.NormalizeNetwork(mine.Network) != n) {
			t.Fatalf("claimed %+v for %s", mine, n)
		}
		// Whatever is refused overlaps, and a route without marker that
		// overlaps is always refused.
		var c *ConflictError
		if errors.As(err, &c) && len(Overlapping(n, []cloudflare.CIDRRoute{c.Other})) != 1 {
			t.Fatalf("refused for %s, which does not overlap %s", c.Other.Network, n)
		}
		if len(Overlapping(n, rs[1:])) == 1 && err == nil && mine == nil {
			t.Fatalf("%s overlaps the unmarked %s and was not refused", n, b)
		}
	})
}
