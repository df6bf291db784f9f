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

func TestConnectionsMayHaveChanged(t *testing.T) {
	t0 := metav1.NewTime(time.Unix(1000, 0))
	t1 := metav1.NewTime(time.Unix(2000, 0))
	cases := map[string]struct {
		prev, cur v1alpha1.TunnelObservation
		want      bool
	}{
		"NeverRun":          {v1alpha1.TunnelObservation{Status: "inactive"}, v1alpha1.TunnelObservation{Status: "inactive"}, false},
		"BecameHealthy":     {v1alpha1.TunnelObservation{Status: "inactive"}, v1alpha1.TunnelObservation{Status: "healthy", ConnsActiveAt: &t0}, true},
		"SteadyHealthy":     {v1alpha1.TunnelObservation{Status: "healthy", ConnsActiveAt: &t0, Connectors: 2}, v1alpha1.TunnelObservation{Status: "healthy", ConnsActiveAt: &t0}, false},
		"HealthyNotCounted": {v1alpha1.TunnelObservation{Status: "healthy", ConnsActiveAt: &t0}, v1alpha1.TunnelObservation{Status: "healthy", ConnsActiveAt: &t0}, true},
		"Reconnected":       {v1alpha1.TunnelObservation{Status: "healthy", ConnsActiveAt: &t0, Connectors: 2}, v1alpha1.TunnelObservation{Status: "healthy", ConnsActiveAt: &t1}, true},
		"WentDown":          {v1alpha1.TunnelObservation{Status: "healthy", ConnsActiveAt: &t0, Connectors: 2}, v1alpha1.TunnelObservation{Status: "down", ConnsActiveAt: &t0, ConnsInactiveAt: &t1}, true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := connectionsMayHaveChanged(tc.prev, tc.cur); got != tc.want {
				t.Errorf("connectionsMayHaveChanged = %v, want %v", got, tc.want)
			}
		})
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
