package zonename

// Fuzz targets for the zone-by-suffix lookup (the ownership marker is
// fuzzed in internal/ownership).

import (
	"slices"
	"strings"
	"testing"
)

// fuzzValidZone: a zone name as Cloudflare has them.
func fuzzValidZone(z string) bool {
	n := Normalize(z)
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

// fuzzInZone is In's oracle: the zone's labels are the last labels of
// the name (case and one trailing dot ignored).
func fuzzInZone(name, zone string) bool {
	ln, lz := strings.Split(Normalize(name), "."), strings.Split(Normalize(zone), ".")
	return len(ln) >= len(lz) && slices.Equal(ln[len(ln)-len(lz):], lz)
}

// zone is a zone as an account lists it.
type zone struct{ ID, Name string }

func closest(name string, zones []zone) (zone, bool) {
	return Closest(name, zones, func(z zone) string { return z.Name })
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
		var zones []zone
		var names []string
		for i, z := range []string{z1, z2, z3} {
			// The account's zones: valid names, each once.
			if fuzzValidZone(z) && !slices.Contains(names, Normalize(z)) {
				names = append(names, Normalize(z))
				zones = append(zones, zone{ID: string(rune('1' + i)), Name: z})
			}
		}
		var in []zone
		for _, z := range zones {
			if got, want := In(name, z.Name), fuzzInZone(name, z.Name); got != want {
				t.Fatalf("In(%q, %q) = %t, want %t", name, z.Name, got, want)
			}
			if In(name, z.Name) {
				in = append(in, z)
			}
		}
		best, found := closest(name, zones)
		if found != (len(in) > 0) {
			t.Fatalf("closest(%q, %v) found=%t; zones containing it: %v", name, zones, found, in)
		}
		if !found {
			return
		}
		for _, z := range in {
			if len(Normalize(z.Name)) > len(Normalize(best.Name)) {
				t.Fatalf("closest(%q) = %q, but %q is more specific", name, best.Name, z.Name)
			}
		}
		rev := slices.Clone(zones)
		slices.Reverse(rev)
		if b2, _ := closest(name, rev); b2 != best {
			t.Fatalf("closest(%q) depends on the zones' order: %v then %v", name, best, b2)
		}
		// A zone that merely ends with the same characters is not a parent.
		if n := Normalize(name); strings.Contains(n, ".") {
			if _, ok := closest(name, []zone{{ID: "x", Name: "x" + Normalize(best.Name)}}); ok && !fuzzInZone(name, "x"+Normalize(best.Name)) {
				t.Fatalf("%q matched zone %q across a label boundary", name, "x"+best.Name)
			}
		}
	})
}
