package dnsrecord

// Fuzz targets for the zone-by-suffix lookup (the ownership marker is
// fuzzed in internal/ownership). This
// file is self-contained on purpose: the package's TestMain starts a control
// plane, which fuzz worker processes must not (hack/fuzz.sh builds these
// targets without the package's other test files).

import (
	"slices"
	"strings"
	"testing"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
)

// fuzzValidZone: a zone name as Cloudflare has them.
func fuzzValidZone(z string) bool {
	n := normalizeName(z)
	if n == "" || len(n) > 253 {
		return false
	}
	for _, l := range strings.Split(n, ".") {
		if l == "" || len(l) > 63 || strings.HasPrefix(l, "-") || strings.HasSuffix(l, "-") || strings.Trim(l, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
			return false
		}
	}
	return true
}

// fuzzInZone is inZone's oracle: the zone's labels are the last labels of
// the name (case and one trailing dot ignored).
func fuzzInZone(name, zone string) bool {
	ln, lz := strings.Split(normalizeName(name), "."), strings.Split(normalizeName(zone), ".")
	return len(ln) >= len(lz) && slices.Equal(ln[len(ln)-len(lz):], lz)
}

// FuzzZoneBySuffix: a record name belongs to a zone only on a label
// boundary ("badexample.com" is not in example.com), and the zone picked
// for it is the most specific of the account's zones it belongs to,
// whatever order the API lists them in.
func FuzzZoneBySuffix(f *testing.F) {
	f.Add("app.example.com", "example.com", "dev.example.com", "example.org")
	f.Add("app.dev.example.com", "example.com", "dev.example.com", "example.org")
	f.Add("badexample.com", "example.com", "xample.com", "com")
	f.Add("APP.Example.COM.", "EXAMPLE.com", "example.com.", "")
	f.Add("example.com", "example.com", "a.example.com", "b.example.com")
	f.Add(".example.com", "example.com", "com", "m")
	f.Add("a.b.c.d", "c.d", "b.c.d", "d")
	f.Add(" x.example.com\t", "example.com", "x.example.com", "-x.com")
	f.Fuzz(func(t *testing.T, name, z1, z2, z3 string) {
		var zones []cloudflare.Zone
		var names []string
		for i, z := range []string{z1, z2, z3} {
			// The account's zones: valid names, each once.
			if fuzzValidZone(z) && !slices.Contains(names, normalizeName(z)) {
				names = append(names, normalizeName(z))
				zones = append(zones, cloudflare.Zone{ID: string(rune('1' + i)), Name: z})
			}
		}
		var in []cloudflare.Zone
		for _, z := range zones {
			if got, want := inZone(name, z.Name), fuzzInZone(name, z.Name); got != want {
				t.Fatalf("inZone(%q, %q) = %t, want %t", name, z.Name, got, want)
			}
			if inZone(name, z.Name) {
				in = append(in, z)
			}
		}
		best, found := longestSuffixZone(name, zones)
		if found != (len(in) > 0) {
			t.Fatalf("longestSuffixZone(%q, %v) found=%t; zones containing it: %v", name, zones, found, in)
		}
		if !found {
			return
		}
		for _, z := range in {
			if len(normalizeName(z.Name)) > len(normalizeName(best.Name)) {
				t.Fatalf("longestSuffixZone(%q) = %q, but %q is more specific", name, best.Name, z.Name)
			}
		}
		rev := slices.Clone(zones)
		slices.Reverse(rev)
		if b2, _ := longestSuffixZone(name, rev); b2 != best {
			t.Fatalf("longestSuffixZone(%q) depends on the zones' order: %v then %v", name, best, b2)
		}
		// A zone that merely ends with the same characters is not a parent.
		if n := normalizeName(name); strings.Contains(n, ".") {
			if _, ok := longestSuffixZone(name, []cloudflare.Zone{{ID: "x", Name: "x" + normalizeName(best.Name)}}); ok && !fuzzInZone(name, "x"+normalizeName(best.Name)) {
				t.Fatalf("%q matched zone %q across a label boundary", name, "x"+best.Name)
			}
		}
	})
}
