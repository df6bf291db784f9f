package hostname

import (
	"slices"
	"testing"
)

func TestCovers(t *testing.T) {
	for _, tc := range []struct {
		pattern, host string
		want          bool
	}{
		{"grafana.example.com", "grafana.example.com", true},
		{"Grafana.Example.com.", "grafana.example.com", true},
		{"*.apps.example.com", "x.apps.example.com", true},
		{"*.apps.example.com", "a.b.apps.example.com", true},
		{"*.apps.example.com", "apps.example.com", false},
		{"*.apps.example.com", "xapps.example.com", false},
		{"*.example.com", "x.apps.example.com", true},
		{"x.apps.example.com", "*.apps.example.com", false},
		{"*", "grafana.example.com", false},
		{"", "grafana.example.com", false},
		{"grafana.example.com", "", false},
		{"grafana.example.com", "grafana.example.com/admin", true},
		{"other.example.com", "grafana.example.com", false},
	} {
		if got := Covers(tc.pattern, tc.host); got != tc.want {
			t.Errorf("Covers(%q, %q) = %v, want %v", tc.pattern, tc.host, got, tc.want)
		}
	}
}

func TestCoveringPatterns(t *testing.T) {
	for host, want := range map[string][]string{
		"x.apps.example.com": {"x.apps.example.com", "*.apps.example.com", "*.example.com", "*.com"},
		"Example.COM.":       {"example.com", "*.com"},
		"*.apps.example.com": {"*.apps.example.com", "*.example.com", "*.com"},
		"localhost":          {"localhost"},
		"":                   nil,
		"*":                  nil,
	} {
		got := CoveringPatterns(host)
		if !slices.Equal(got, want) {
			t.Errorf("CoveringPatterns(%q) = %q, want %q", host, got, want)
		}
		for _, p := range got {
			if p != Key(host) && !Covers(p, host) {
				t.Errorf("CoveringPatterns(%q) lists %q, which does not cover it", host, p)
			}
		}
	}
}

// Every pattern that covers a name is listed by CoveringPatterns: the
// index lookups by those patterns miss no record or rule.
func FuzzCoveringPatternsComplete(f *testing.F) {
	f.Add("*.apps.example.com", "x.apps.example.com")
	f.Add("grafana.example.com", "grafana.example.com")
	f.Add("*.example.com", "a.b.c.example.com")
	f.Fuzz(func(t *testing.T, pattern, host string) {
		if Covers(pattern, host) && !slices.Contains(CoveringPatterns(host), Key(pattern)) {
			t.Errorf("%q covers %q but CoveringPatterns lists %q", pattern, host, CoveringPatterns(host))
		}
	})
}
