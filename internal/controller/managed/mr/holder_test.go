package mr

import (
	"testing"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients"
)

func TestNormalizeHostname(t *testing.T) {
	for in, want := range map[string]string{
		"Grafana.Example.com":        "grafana.example.com",
		"grafana.example.com.":       "grafana.example.com",
		"grafana.example.com/admin":  "grafana.example.com",
		" grafana.example.com/a/b/ ": "grafana.example.com",
		"*.example.com":              "*.example.com",
		"":                           "",
	} {
		if got := NormalizeHostname(in); got != want {
			t.Errorf("NormalizeHostname(%q) = %q, want %q", in, got, want)
		}
	}
}

// Only the hostname itself in the config's suffixes hands it over: a
// parent suffix allows a namespace to publish under it, not to gate what
// another namespace publishes there.
func TestHandedOver(t *testing.T) {
	cfg := func(s ...string) clients.Config {
		var c clients.Config
		c.Allow.HostnameSuffixes = s
		return c
	}
	for _, tc := range []struct {
		name string
		cfg  clients.Config
		host string
		want bool
	}{
		{"no guardrails", cfg(), "grafana.example.com", false},
		{"a parent suffix", cfg("example.com"), "grafana.example.com", false},
		{"a wildcard parent", cfg("*.example.com"), "grafana.example.com", false},
		{"the hostname itself", cfg("team-b.example.com", "Grafana.Example.com."), "grafana.example.com", true},
		{"another hostname", cfg("grafana2.example.com"), "grafana.example.com", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := handedOver(tc.cfg, tc.host); got != tc.want {
				t.Errorf("handedOver(%v, %q) = %v, want %v", tc.cfg.Allow.HostnameSuffixes, tc.host, got, tc.want)
			}
		})
	}
}
