package tunnel

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
)

func TestConfigDiff(t *testing.T) {
	want := &v1alpha1.TunnelConfig{Ingress: []v1alpha1.IngressRule{
		{Hostname: ptr.To("a.example.com"), Service: "http://a:80"},
		{Service: "http_status:404"},
	}}
	cases := map[string]struct {
		reason   string
		observed string
		equal    bool
	}{
		"Same":            {"an identical document is up to date", `{"ingress":[{"hostname":"a.example.com","service":"http://a:80"},{"service":"http_status:404"}]}`, true},
		"EmptyOrigin":     {"Cloudflare may add empty originRequest blocks", `{"ingress":[{"hostname":"a.example.com","service":"http://a:80","originRequest":{}},{"service":"http_status:404"}],"originRequest":{}}`, true},
		"ReadOnlyExtras":  {"fields we do not manage (warp-routing) are ignored", `{"ingress":[{"hostname":"a.example.com","service":"http://a:80"},{"service":"http_status:404"}],"warp-routing":{"enabled":true}}`, true},
		"ServiceChanged":  {"a changed service is drift", `{"ingress":[{"hostname":"a.example.com","service":"http://b:80"},{"service":"http_status:404"}]}`, false},
		"RuleRemoved":     {"a missing rule is drift", `{"ingress":[{"service":"http_status:404"}]}`, false},
		"NeverConfigured": {"an empty document differs from a desired one", `{}`, false},
		"Null":            {"a null document differs from a desired one", `null`, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := decodeConfig(json.RawMessage(tc.observed))
			if err != nil {
				t.Fatal(err)
			}
			if d := ConfigDiff(want, got); (d == "") != tc.equal {
				t.Errorf("%s: ConfigDiff = %q, want equal=%v", tc.reason, d, tc.equal)
			}
		})
	}
}

func TestConnectorsStale(t *testing.T) {
	t0 := metav1.NewTime(time.Unix(1000, 0))
	t1 := metav1.NewTime(time.Unix(2000, 0))
	counted := metav1.NewTime(time.Unix(3000, 0))
	now := counted.Add(30 * time.Second)
	onV3 := []v1alpha1.ConnectorObservation{{ID: "a", ConfigVersion: 3, Connections: 4}, {ID: "b", ConfigVersion: 3, Connections: 4}}
	healthy := func(mod func(*v1alpha1.TunnelObservation)) v1alpha1.TunnelObservation {
		o := v1alpha1.TunnelObservation{Status: "healthy", ConnsActiveAt: &t0, Connectors: 2, ConnectorDetails: onV3, ConnectorsObservedAt: &counted, RemoteConfigVersion: 3}
		if mod != nil {
			mod(&o)
		}
		return o
	}
	cases := map[string]struct {
		reason    string
		prev, cur v1alpha1.TunnelObservation
		every     time.Duration
		want      bool
	}{
		"NeverRun":       {"nothing ever connected", v1alpha1.TunnelObservation{Status: "inactive"}, v1alpha1.TunnelObservation{Status: "inactive"}, time.Minute, false},
		"BecameHealthy":  {"a tunnel that starts serving is counted", v1alpha1.TunnelObservation{Status: "inactive"}, v1alpha1.TunnelObservation{Status: "healthy", ConnsActiveAt: &t0}, time.Minute, true},
		"SteadyHealthy":  {"a steady tunnel counted recently costs no call", healthy(nil), healthy(nil), time.Minute, false},
		"NotCounted":     {"a serving tunnel never counted is counted", healthy(func(o *v1alpha1.TunnelObservation) { o.ConnectorsObservedAt, o.Connectors = nil, 0 }), healthy(nil), time.Minute, true},
		"CountAged":      {"a count older than the recount interval is refreshed", healthy(nil), healthy(nil), 30 * time.Second, true},
		"Reconnected":    {"new active time: the connectors changed", healthy(nil), healthy(func(o *v1alpha1.TunnelObservation) { o.ConnsActiveAt = &t1 }), time.Minute, true},
		"BecameDegraded": {"healthy to degraded is a status change", healthy(nil), healthy(func(o *v1alpha1.TunnelObservation) { o.Status = "degraded" }), time.Minute, true},
		"StaysDegraded":  {"degraded is counted every poll until it recovers", healthy(func(o *v1alpha1.TunnelObservation) { o.Status = "degraded" }), healthy(func(o *v1alpha1.TunnelObservation) { o.Status = "degraded" }), time.Minute, true},
		"NewConfig":      {"after a configuration change, the connectors' versions are read", healthy(nil), healthy(func(o *v1alpha1.TunnelObservation) { o.RemoteConfigVersion = 4 }), time.Minute, true},
		"WentDown":       {"down is a status change", healthy(nil), v1alpha1.TunnelObservation{Status: "down", ConnsActiveAt: &t0, ConnsInactiveAt: &t1}, time.Minute, true},
		"StaysDown":      {"a down tunnel has nothing to count", v1alpha1.TunnelObservation{Status: "down", ConnsActiveAt: &t0, ConnsInactiveAt: &t1}, v1alpha1.TunnelObservation{Status: "down", ConnsActiveAt: &t0, ConnsInactiveAt: &t1}, time.Nanosecond, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := connectorsStale(tc.prev, tc.cur, now, tc.every); got != tc.want {
				t.Errorf("%s: connectorsStale = %v, want %v", tc.reason, got, tc.want)
			}
		})
	}
}

func TestConnectorCounts(t *testing.T) {
	cs := []v1alpha1.ConnectorObservation{
		{ID: "a", ConfigVersion: 5, Connections: 4},
		{ID: "b", ConfigVersion: 4, Connections: 2},
		{ID: "gone", ConfigVersion: 5, Connections: 0},
	}
	connectors, connections := countConnections(cs)
	got := []int{connectors, connections, onLatestConfig(cs, 5), onLatestConfig(cs, 0)}
	// A listed connector without connections is not connected; one on an
	// older configuration version is not on the latest.
	if diff := cmp.Diff([]int{2, 6, 1, 2}, got); diff != "" {
		t.Errorf("connectors, connections, on v5, on v0: -want +got:\n%s", diff)
	}
}

func TestObserveKeepsConnectionCounts(t *testing.T) {
	// Counts come from a separate call; a status refresh must not zero them.
	prev := v1alpha1.TunnelObservation{Connections: 8, Connectors: 2, RemoteConfigVersion: 3}
	got := observe(&cfTunnelFixture, prev)
	if diff := cmp.Diff([]int{8, 2, 3}, []int{got.Connections, got.Connectors, got.RemoteConfigVersion}); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
}

var cfTunnelFixture = func() cloudflare.Tunnel {
	return cloudflare.Tunnel{ID: "t", Status: "healthy", CreatedAt: time.Unix(1000, 0)}
}()
