package loadbalancer

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/loadbalancing/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/ownership"
)

var mark = ownership.Identity{Owner: "cluster-a", Kind: v1alpha1.LoadBalancerKind, Namespace: "web", Name: "app"}.Mark()

func TestInput(t *testing.T) {
	cases := map[string]struct {
		p    v1alpha1.LoadBalancerParameters
		want cloudflare.LoadBalancerInput
	}{
		"Defaults": {
			p:    v1alpha1.LoadBalancerParameters{Hostname: "App.Example.com.", DefaultPools: []string{"a", "b"}, FallbackPool: ptr.To("b")},
			want: cloudflare.LoadBalancerInput{Name: "app.example.com", Description: mark.String(), Enabled: true, Proxied: true, DefaultPools: []string{"a", "b"}, FallbackPool: "b", SteeringPolicy: "off", SessionAffinity: "none"},
		},
		"EverythingSet": {
			p: v1alpha1.LoadBalancerParameters{Hostname: "app.example.com", Description: ptr.To("d"), DefaultPools: []string{"b", "a"}, FallbackPool: ptr.To("a"),
				SteeringPolicy: ptr.To("random"), SessionAffinity: ptr.To("cookie"), SessionAffinityTTL: ptr.To(int64(3600)), Proxied: ptr.To(true), Enabled: ptr.To(false)},
			want: cloudflare.LoadBalancerInput{Name: "app.example.com", Description: "d " + mark.String(), Enabled: false, Proxied: true, DefaultPools: []string{"b", "a"}, FallbackPool: "a",
				SteeringPolicy: "random", SessionAffinity: "cookie", SessionAffinityTTL: ptr.To(3600.0)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Input(tc.p, mark)); diff != "" {
				t.Errorf("-want +got:\n%s", diff)
			}
		})
	}
}

func TestDiff(t *testing.T) {
	want := Input(v1alpha1.LoadBalancerParameters{Hostname: "app.example.com", DefaultPools: []string{"a", "b"}, FallbackPool: ptr.To("b")}, mark)
	held := func() cloudflare.LoadBalancer {
		return cloudflare.LoadBalancer{ID: "l", Name: want.Name, Description: want.Description, Enabled: true, Proxied: true, DefaultPools: []string{"a", "b"}, FallbackPool: "b", SteeringPolicy: "off", SessionAffinity: "none", SessionAffinityTTL: ptr.To(82800.0)}
	}
	cases := map[string]struct {
		edit     func(*cloudflare.LoadBalancer)
		wantDiff string
	}{
		"Same":                    {edit: func(*cloudflare.LoadBalancer) {}},
		"EmptySteeringIsOff":      {edit: func(l *cloudflare.LoadBalancer) { l.SteeringPolicy = "" }},
		"EmptyAffinityIsNone":     {edit: func(l *cloudflare.LoadBalancer) { l.SessionAffinity = "" }},
		"TrailingDotInName":       {edit: func(l *cloudflare.LoadBalancer) { l.Name = "App.example.com." }},
		"PoolsReordered":          {edit: func(l *cloudflare.LoadBalancer) { l.DefaultPools = []string{"b", "a"} }, wantDiff: "defaultPools"},
		"PoolRemoved":             {edit: func(l *cloudflare.LoadBalancer) { l.DefaultPools = []string{"a"} }, wantDiff: "defaultPools"},
		"FallbackChanged":         {edit: func(l *cloudflare.LoadBalancer) { l.FallbackPool = "a" }, wantDiff: "fallbackPool"},
		"SteeringChanged":         {edit: func(l *cloudflare.LoadBalancer) { l.SteeringPolicy = "random" }, wantDiff: "steeringPolicy"},
		"Unproxied":               {edit: func(l *cloudflare.LoadBalancer) { l.Proxied = false }, wantDiff: "proxied"},
		"Disabled":                {edit: func(l *cloudflare.LoadBalancer) { l.Enabled = false }, wantDiff: "enabled"},
		"MarkerRemoved":           {edit: func(l *cloudflare.LoadBalancer) { l.Description = "" }, wantDiff: "description"},
		"AffinityChanged":         {edit: func(l *cloudflare.LoadBalancer) { l.SessionAffinity = "cookie" }, wantDiff: "sessionAffinity"},
		"AffinityTTLNotAskedFor":  {edit: func(l *cloudflare.LoadBalancer) { l.SessionAffinityTTL = nil }},
		"HostnameMovedByHand":     {edit: func(l *cloudflare.LoadBalancer) { l.Name = "www.example.com" }, wantDiff: "hostname"},
		"DescriptionEditedByHand": {edit: func(l *cloudflare.LoadBalancer) { l.Description = ownership.Comment("x", mark) }, wantDiff: "description"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := held()
			tc.edit(&got)
			d := Diff(want, got)
			if (d == "") != (tc.wantDiff == "") || !strings.Contains(d, tc.wantDiff) {
				t.Errorf("Diff = %q, want %q", d, tc.wantDiff)
			}
		})
	}
}

func TestResolved(t *testing.T) {
	for name, tc := range map[string]struct {
		p  v1alpha1.LoadBalancerParameters
		ok bool
	}{
		"AllResolved":       {p: v1alpha1.LoadBalancerParameters{DefaultPools: []string{"a"}, FallbackPool: ptr.To("a")}, ok: true},
		"NoDefaultPools":    {p: v1alpha1.LoadBalancerParameters{FallbackPool: ptr.To("a")}},
		"NoFallback":        {p: v1alpha1.LoadBalancerParameters{DefaultPools: []string{"a"}}},
		"FewerThanTheRefs":  {p: v1alpha1.LoadBalancerParameters{DefaultPools: []string{"a"}, DefaultPoolsRefs: make([]xpv2.NamespacedReference, 2), FallbackPool: ptr.To("a")}},
		"EmptyFallbackPool": {p: v1alpha1.LoadBalancerParameters{DefaultPools: []string{"a"}, FallbackPool: ptr.To("")}},
	} {
		if err := resolved(tc.p); (err == nil) != tc.ok {
			t.Errorf("%s: resolved = %v, want ok %t", name, err, tc.ok)
		}
	}
}
