package claim

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare/cidr"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/ownership"
)

var (
	me       = ownership.Identity{Owner: "cluster-a", Kind: "NetworkRoute", Namespace: "team-a", Name: "redis"}
	sibling  = ownership.Identity{Owner: "cluster-a", Kind: "NetworkRoute", Namespace: "team-a", Name: "wide"}
	stranger = ownership.Identity{Owner: "cluster-b", Kind: "NetworkRoute", Namespace: "team-a", Name: "redis"}
)

func route(id, network string, by *ownership.Identity) cidr.Route {
	c := "made by hand"
	if by != nil {
		c = ownership.Comment("", by.Mark())
	}
	return cidr.Route{ID: id, Network: network, TunnelID: "t", Comment: c}
}

func TestNetwork(t *testing.T) {
	type want struct {
		mine  string
		other string
		exact bool
	}
	cases := map[string]struct {
		network, self string
		routes        []cidr.Route
		want          want
	}{
		"Nothing":             {network: "10.0.0.1/32", want: want{}},
		"Unrelated":           {network: "10.0.0.1/32", routes: []cidr.Route{route("r1", "10.1.0.0/16", nil), route("r2", "fd00::/8", nil)}},
		"MineByMarker":        {network: "10.0.0.1/32", routes: []cidr.Route{route("r1", "10.0.0.1/32", &me)}, want: want{mine: "r1"}},
		"SameNetworkUnmarked": {network: "10.0.0.1/32", routes: []cidr.Route{route("r1", "10.0.0.1/32", nil)}, want: want{other: "r1", exact: true}},
		"SameNetworkSibling":  {network: "10.0.0.1/32", routes: []cidr.Route{route("r1", "10.0.0.1/32", &sibling)}, want: want{other: "r1", exact: true}},
		"InsideAForeignRoute": {network: "10.0.0.1/32", routes: []cidr.Route{route("r1", "10.0.0.0/8", nil)}, want: want{other: "r1"}},
		"AroundAForeignRoute": {network: "10.0.0.0/8", routes: []cidr.Route{route("r1", "10.9.9.9/32", nil)}, want: want{other: "r1"}},
		"AnotherInstallation": {network: "10.0.0.1/32", routes: []cidr.Route{route("r1", "10.0.0.0/8", &stranger)}, want: want{other: "r1"}},
		"InsideASibling":      {network: "10.0.0.1/32", routes: []cidr.Route{route("r1", "10.0.0.0/8", &sibling)}},
		"ExactBeatsOverlap": {network: "10.0.0.1/32", routes: []cidr.Route{route("r1", "10.0.0.0/8", nil), route("r2", "10.0.0.1/32", nil)},
			want: want{other: "r2", exact: true}},
		// Made before the foreign route appeared: it is kept (and deleted
		// when this resource is), not abandoned.
		"MineThoughOverlappedSince": {network: "10.0.0.1/32", routes: []cidr.Route{route("r1", "10.0.0.1/32", &me), route("r2", "10.0.0.0/24", nil)},
			want: want{mine: "r1"}},
		"MoveOntoAForeignOverlap": {network: "10.0.0.1/32", self: "r1", routes: []cidr.Route{route("r1", "10.9.0.0/16", &me), route("r2", "10.0.0.0/24", nil)},
			want: want{other: "r2"}},
		"MoveSkipsItself":     {network: "10.0.0.1/32", self: "r1", routes: []cidr.Route{route("r1", "10.0.0.0/8", &me)}},
		"MoveOntoAnotherMine": {network: "10.0.0.1/32", self: "r1", routes: []cidr.Route{route("r1", "10.2.0.0/16", &me), route("r2", "10.0.0.1/32", &me)}, want: want{other: "r2", exact: true}},
		"FamiliesApart":       {network: "::ffff:10.0.0.1/128", routes: []cidr.Route{route("r1", "10.0.0.0/8", nil)}},
		"DeletedIgnored": {network: "10.0.0.1/32", routes: []cidr.Route{func() cidr.Route {
			r := route("r1", "10.0.0.0/8", nil)
			r.DeletedAt = ptr.To(r.CreatedAt.AddDate(2000, 0, 0))
			return r
		}()}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			mine, err := Network(tc.network, tc.self, tc.routes, me)
			var got want
			if mine != nil {
				got.mine = mine.ID
			}
			var c *ConflictError
			if errors.As(err, &c) {
				got.other, got.exact = c.Other.ID, c.Exact
			} else if err != nil {
				t.Fatalf("Network: %v", err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("Network(%s) -want +got:\n%s", tc.network, diff)
			}
		})
	}
}

// FuzzNetwork: a route is claimed only when it is for the network and
// carries this resource's marker, and whatever is refused overlaps.
func FuzzNetwork(f *testing.F) {
	f.Add("10.0.0.1/32", "10.0.0.0/8", "fd00::/8", true)
	f.Add("10.0.0.0/8", "10.0.0.0/8", "10.9.0.0/16", false)
	f.Fuzz(func(t *testing.T, network, a, b string, marked bool) {
		by := &me
		if !marked {
			by = nil
		}
		rs := []cidr.Route{route("a", a, by), route("b", b, nil)}
		n := cidr.Normalize(network)
		mine, err := Network(n, "", rs, me)
		if mine != nil && err != nil {
			t.Fatalf("both a route (%s) and a conflict (%v)", mine.ID, err)
		}
		if mine != nil && (mine.ID != "a" || !marked || cidr.Normalize(mine.Network) != n) {
			t.Fatalf("claimed %+v for %s", mine, n)
		}
		// Whatever is refused overlaps, and a route without marker that
		// overlaps is always refused.
		var c *ConflictError
		if errors.As(err, &c) && len(cidr.Overlapping(n, []cidr.Route{c.Other})) != 1 {
			t.Fatalf("refused for %s, which does not overlap %s", c.Other.Network, n)
		}
		if len(cidr.Overlapping(n, rs[1:])) == 1 && err == nil && mine == nil {
			t.Fatalf("%s overlaps the unmarked %s and was not refused", n, b)
		}
	})
}

func TestConfirm(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	at := func(r cidr.Route, d time.Duration) cidr.Route { r.CreatedAt = t0.Add(d); return r }
	mine := at(route("mine", "10.250.1.0/24", &me), 0)
	cases := map[string]struct {
		mine   cidr.Route
		routes []cidr.Route
		// want is the route that makes mine go, "" when it stays.
		want  string
		exact bool
	}{
		"Alone": {mine: mine, routes: []cidr.Route{mine}},
		// The reported window: a foreign /16 made a moment before the
		// create, missed by the list the create checked.
		"ForeignRouteAroundItMadeFirst": {mine: mine, routes: []cidr.Route{mine, at(route("r1", "10.250.0.0/16", nil), -time.Second)}, want: "r1"},
		"ForeignRouteInsideItMadeFirst": {mine: at(route("mine", "10.0.0.0/8", &me), 0), routes: []cidr.Route{at(route("r1", "10.250.0.0/16", nil), -time.Second)}, want: "r1"},
		"SameInstantCountsAsFirst":      {mine: mine, routes: []cidr.Route{at(route("r1", "10.250.0.0/16", nil), 0)}, want: "r1"},
		"SameNetworkOfASibling":         {mine: mine, routes: []cidr.Route{at(route("r1", "10.250.1.0/24", &sibling), -time.Second)}, want: "r1", exact: true},
		"ForeignRouteMadeAfter":         {mine: mine, routes: []cidr.Route{at(route("r1", "10.250.0.0/16", nil), time.Second)}},
		"SiblingAround":                 {mine: mine, routes: []cidr.Route{at(route("r1", "10.250.0.0/16", &sibling), -time.Second)}},
		"AnotherInstallationAround":     {mine: mine, routes: []cidr.Route{at(route("r1", "10.250.0.0/16", &stranger), -time.Second)}, want: "r1"},
		"Unrelated":                     {mine: mine, routes: []cidr.Route{at(route("r1", "10.251.0.0/16", nil), -time.Second)}},
		// Without its own creation time, mine is taken as the newest.
		"NoCreationTime": {mine: route("mine", "10.250.1.0/24", &me), routes: []cidr.Route{at(route("r1", "10.250.0.0/16", nil), time.Hour)}, want: "r1"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := Confirm(tc.mine, tc.routes, me)
			var c *ConflictError
			got, exact := "", false
			if errors.As(err, &c) {
				got, exact = c.Other.ID, c.Exact
			} else if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("the route mine gives way to: -want +got:\n%s", diff)
			}
			if exact != tc.exact {
				t.Errorf("exact = %t, want %t", exact, tc.exact)
			}
		})
	}
}
