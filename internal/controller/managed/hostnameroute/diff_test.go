package hostnameroute

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/ownership"
)

// mark is the ownership marker of the route under test.
var mark = ownership.Identity{Owner: "test-owner", Kind: v1alpha1.HostnameRouteKind, Namespace: "team-a", Name: "redis"}.Mark()

func TestDiff(t *testing.T) {
	observed := &cloudflare.HostnameRoute{Hostname: "redis.team-a.svc.cluster.local", TunnelID: "t1", Comment: ownership.Comment("c", mark)}
	unmarked := &cloudflare.HostnameRoute{Hostname: "redis.team-a.svc.cluster.local", TunnelID: "t1", Comment: "c"}
	legacy := &cloudflare.HostnameRoute{Hostname: "redis.team-a.svc.cluster.local", TunnelID: "t1", Comment: ownership.Comment("c", "0b7c5a8e-3f2d-4c1a-9e6b-1d2f3a4b5c6d")}
	cases := map[string]struct {
		p        v1alpha1.HostnameRouteParameters
		upToDate bool
		observed *cloudflare.HostnameRoute
	}{
		"UnmarkedIsMarked":     {v1alpha1.HostnameRouteParameters{Hostname: "redis.team-a.svc.cluster.local", TunnelID: ptr.To("t1"), Comment: ptr.To("c")}, false, unmarked},
		"LegacyMarkerMigrated": {v1alpha1.HostnameRouteParameters{Hostname: "redis.team-a.svc.cluster.local", TunnelID: ptr.To("t1"), Comment: ptr.To("c")}, false, legacy},
		"Same":                 {v1alpha1.HostnameRouteParameters{Hostname: "redis.team-a.svc.cluster.local", TunnelID: ptr.To("t1"), Comment: ptr.To("c")}, true, nil},
		"WrittenDifferently":   {v1alpha1.HostnameRouteParameters{Hostname: "Redis.Team-A.svc.cluster.local.", TunnelID: ptr.To("t1")}, true, nil},
		"WildcardNormalised":   {v1alpha1.HostnameRouteParameters{Hostname: "*.redis.team-a.svc.cluster.local", TunnelID: ptr.To("t1")}, true, nil},
		"OtherHostname":        {v1alpha1.HostnameRouteParameters{Hostname: "db.team-a.svc.cluster.local", TunnelID: ptr.To("t1")}, false, nil},
		"OtherTunnel":          {v1alpha1.HostnameRouteParameters{Hostname: "redis.team-a.svc.cluster.local", TunnelID: ptr.To("t2")}, false, nil},
		"CommentChanged":       {v1alpha1.HostnameRouteParameters{Hostname: "redis.team-a.svc.cluster.local", TunnelID: ptr.To("t1"), Comment: ptr.To("d")}, false, nil},
		"CommentUnsetIgnored":  {v1alpha1.HostnameRouteParameters{Hostname: "redis.team-a.svc.cluster.local", TunnelID: ptr.To("t1")}, true, nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o := observed
			if tc.observed != nil {
				o = tc.observed
			}
			if d := Diff(tc.p, o, mark); (d == "") != tc.upToDate {
				t.Errorf("Diff = %q, want up to date = %v", d, tc.upToDate)
			}
		})
	}
}

func TestNormalizeWildcard(t *testing.T) {
	// Cloudflare stores "*.internal.local" as "internal.local".
	if got := cloudflare.NormalizeHostname("*.Internal.Local."); got != "internal.local" {
		t.Errorf("NormalizeHostname = %q", got)
	}
}

func TestLateInitialize(t *testing.T) {
	p := v1alpha1.HostnameRouteParameters{Hostname: "h"}
	if !LateInitialize(&p, &cloudflare.HostnameRoute{Comment: "from cloudflare"}) {
		t.Fatal("an unset comment was not late-initialised")
	}
	if diff := cmp.Diff(ptr.To("from cloudflare"), p.Comment); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
	p = v1alpha1.HostnameRouteParameters{Hostname: "h"}
	if !LateInitialize(&p, &cloudflare.HostnameRoute{Comment: ownership.Comment("mine", mark)}) || *p.Comment != "mine" {
		t.Errorf("late-initialised comment %q: want the user's part without the ownership marker", *p.Comment)
	}
	if LateInitialize(&p, &cloudflare.HostnameRoute{Comment: "other"}) {
		t.Error("a set comment was overwritten by late-initialisation")
	}
}
