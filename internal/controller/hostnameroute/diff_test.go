package hostnameroute

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
)

func TestDiff(t *testing.T) {
	observed := &cloudflare.HostnameRoute{Hostname: "redis.team-a.svc.cluster.local", TunnelID: "t1", Comment: "c"}
	cases := map[string]struct {
		p        v1alpha1.HostnameRouteParameters
		upToDate bool
	}{
		"Same":                {v1alpha1.HostnameRouteParameters{Hostname: "redis.team-a.svc.cluster.local", TunnelID: ptr.To("t1"), Comment: ptr.To("c")}, true},
		"WrittenDifferently":  {v1alpha1.HostnameRouteParameters{Hostname: "Redis.Team-A.svc.cluster.local.", TunnelID: ptr.To("t1")}, true},
		"WildcardNormalised":  {v1alpha1.HostnameRouteParameters{Hostname: "*.redis.team-a.svc.cluster.local", TunnelID: ptr.To("t1")}, true},
		"OtherHostname":       {v1alpha1.HostnameRouteParameters{Hostname: "db.team-a.svc.cluster.local", TunnelID: ptr.To("t1")}, false},
		"OtherTunnel":         {v1alpha1.HostnameRouteParameters{Hostname: "redis.team-a.svc.cluster.local", TunnelID: ptr.To("t2")}, false},
		"CommentChanged":      {v1alpha1.HostnameRouteParameters{Hostname: "redis.team-a.svc.cluster.local", TunnelID: ptr.To("t1"), Comment: ptr.To("d")}, false},
		"CommentUnsetIgnored": {v1alpha1.HostnameRouteParameters{Hostname: "redis.team-a.svc.cluster.local", TunnelID: ptr.To("t1")}, true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if d := Diff(tc.p, observed); (d == "") != tc.upToDate {
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
	if LateInitialize(&p, &cloudflare.HostnameRoute{Comment: "other"}) {
		t.Error("a set comment was overwritten by late-initialisation")
	}
}
