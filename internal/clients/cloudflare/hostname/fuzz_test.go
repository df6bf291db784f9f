package hostname

import (
	"regexp"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim"
)

// fuzzHostnameRe is a DNS name as Kubernetes and the Ingress translator
// accept it (any case), with an optional leading "*." and trailing dot.
var fuzzHostnameRe = regexp.MustCompile(`^(\*\.)?[a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?(\.[a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?)*\.?$`)

// FuzzNormalize: hostname routes are compared in the form Cloudflare
// stores them, so that form must be the simulator's (the project's model of
// Cloudflare), lower case and without surrounding dots, and it must be a
// fixed point — otherwise the route reconciler sees a difference on every
// poll and rewrites the route forever.
//
// Known gap, reported with the hostile corpus: the fixed point only holds
// when the stored form has no "*." and no space left at its ends. For
// "*.*.x" Cloudflare stores "*.x", which normalises to "x"; for ". x" it
// stores " x". The HostnameRoute CRD accepts such hostnames (it has no
// pattern); the Ingress translator never produces them.
func FuzzNormalize(f *testing.F) {
	for _, s := range []string{
		"redis.team-a.svc.cluster.local", "*.internal.local", "App.Example.COM.", ".a.example.com.", " a.example.com ",
		"*.", "*", "..", "", "*.*.x", ". x", "*..x", "İ.example.com", "\u212a.example.com", "a\u00a0", "*.A.",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		n := Normalize(h)
		if s := sim.NormalizeHostname(h); s != n {
			t.Fatalf("Normalize(%q) = %q, but the simulated API stores %q", h, n, s)
		}
		if strings.ToLower(n) != n || strings.HasPrefix(n, ".") || strings.HasSuffix(n, ".") {
			t.Fatalf("Normalize(%q) = %q: not lower case, or a dot at an end", h, n)
		}
		if n == strings.TrimSpace(n) && !strings.HasPrefix(n, "*.") && Normalize(n) != n {
			t.Fatalf("Normalize(%q) = %q, which normalises to %q: a route for it never settles", h, n, Normalize(n))
		}
		if len(h) > 254 || !fuzzHostnameRe.MatchString(h) {
			return
		}
		// A valid hostname: its route form is the name, lower-cased,
		// without wildcard and trailing dot; a valid DNS subdomain; and it
		// settles against what the API stores.
		want := strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(h, "*."), "."))
		if n != want {
			t.Fatalf("Normalize(%q) = %q, want %q", h, n, want)
		}
		if errs := validation.IsDNS1123Subdomain(n); len(n) <= 253 && len(errs) > 0 {
			t.Fatalf("Normalize(%q) = %q: %v", h, n, errs)
		}
		if got := Normalize(sim.NormalizeHostname(h)); got != n {
			t.Fatalf("the route for %q is stored as %q, which compares as %q, not %q", h, sim.NormalizeHostname(h), got, n)
		}
	})
}
