package dnsrecord

// Fuzz targets for the DNS ownership marker and zone-by-suffix lookup. This
// file is self-contained on purpose: the package's TestMain starts a control
// plane, which fuzz worker processes must not (hack/fuzz.sh builds these
// targets without the package's other test files).

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/types"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/dns/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
)

const fuzzUUID = types.UID("0b7c5a8e-3f2d-4c1a-9e6b-1d2f3a4b5c6d")

// FuzzOwnershipMarker: what Comment writes, SplitComment reads back exactly
// (user comment and UID) and ownedBy credits to that UID alone; and no
// comment anyone else wrote is read as owned unless it ends with a
// well-formed marker that is the whole comment or follows the user's text
// after exactly one space — so a marker-like text in the middle of a
// comment, glued to other text or followed by anything, never makes a
// record look owned.
func FuzzOwnershipMarker(f *testing.F) {
	for _, s := range [][3]string{
		{"", string(fuzzUUID), ""},
		{"managed by hand", string(fuzzUUID), "managed by hand"},
		{"trailing space ", "u", "[crossplane:u]"},
		{"[crossplane:other]", "u", "x [crossplane:u]"},
		{"a [crossplane:", "u", "x[crossplane:u]"},
		{strings.Repeat("é", 50), string(fuzzUUID), " [crossplane:u]"},
		{"x", "with]bracket", "[crossplane:u] trailing"},
		{"x", "tab\there", "[crossplane:]"},
		{"x", "", "[crossplane:a b]"},
		{"line\nbreak", "u\n", "a [crossplane:u] [crossplane:v]"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, user, uid, comment string) {
		// Round trip of what the provider writes, for any UID a marker can
		// carry (Kubernetes UIDs are UUIDs).
		if uid != "" && !strings.ContainsAny(uid, "[] \t") {
			c := Comment(user, types.UID(uid))
			u, id, ok := SplitComment(c)
			if !ok || u != user || id != uid {
				t.Fatalf("SplitComment(Comment(%q, %q) = %q) = %q, %q, %t", user, uid, c, u, id, ok)
			}
			if !ownedBy(c, types.UID(uid)) || ownedBy(c, types.UID(uid+"x")) || ownedBy(c, "") {
				t.Fatalf("ownedBy(%q) credits the wrong UID", c)
			}
		}
		// It fits Cloudflare's 100-character comment limit whenever the
		// user's part fits the CRD's.
		if utf8.RuneCountInString(user) <= v1alpha1.MaxCommentLength {
			if c := Comment(user, fuzzUUID); utf8.RuneCountInString(c) > 100 {
				t.Fatalf("Comment(%q) has %d characters", user, utf8.RuneCountInString(c))
			}
		}

		// Any comment, as a record made elsewhere may carry it.
		u, id, ok := SplitComment(comment)
		if !ok {
			if u != comment || id != "" {
				t.Fatalf("SplitComment(%q) = %q, %q, false: want the whole comment back", comment, u, id)
			}
			// Not even a marker-like text inside it makes it owned.
			if i := strings.LastIndex(comment, markerPrefix); i >= 0 {
				cand, _, _ := strings.Cut(comment[i+len(markerPrefix):], markerSuffix)
				if ownedBy(comment, types.UID(cand)) {
					t.Fatalf("ownedBy(%q, %q) without a well-formed marker at the end", comment, cand)
				}
			}
			if ownedBy(comment, fuzzUUID) {
				t.Fatalf("ownedBy(%q) without a marker", comment)
			}
			return
		}
		m := Marker(types.UID(id))
		if id == "" || strings.ContainsAny(id, "[] \t") || !(comment == u+" "+m || (u == "" && comment == m)) {
			t.Fatalf("SplitComment(%q) = %q, %q: not a user comment and a well-formed marker after one space", comment, u, id)
		}
		if !ownedBy(comment, types.UID(id)) || ownedBy(comment, types.UID(id+"x")) {
			t.Fatalf("ownedBy(%q) does not credit exactly %q", comment, id)
		}
	})
}

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
