package ownership

import (
	"strings"
	"testing"
)

// FuzzMarker: what Comment writes, Split reads back exactly (user comment
// and mark) and Made credits to that identity alone; and no comment anyone
// else wrote is read as made by an identity unless it ends with a
// well-formed marker that is the whole comment or follows the user's text
// after exactly one space — so a marker-like text in the middle of a
// comment, glued to other text or followed by anything, never makes an
// object look owned.
func FuzzMarker(f *testing.F) {
	for _, s := range [][5]string{
		{"", "prod", "web", "www", ""},
		{"managed by hand", "prod", "web", "www", "managed by hand"},
		{"trailing space ", "a", "n", "m", "[crossplane:a/b]"},
		{"[crossplane:other]", "a", "n", "m", "x [crossplane:a/b]"},
		{"a [crossplane:", "a", "n", "m", "x[crossplane:a/b]"},
		{strings.Repeat("é", 50), "a", "n", "m", " [crossplane:u]"},
		{"x", "a", "with]bracket", "m", "[crossplane:u] trailing"},
		{"x", "a", "n", "tab\there", "[crossplane:]"},
		{"line\nbreak", "a", "n", "m", "a [crossplane:u] [crossplane:v]"},
	} {
		f.Add(s[0], s[1], s[2], s[3], s[4])
	}
	f.Fuzz(func(t *testing.T, user, owner, ns, name, comment string) {
		me := Identity{Owner: owner, Kind: "K", Namespace: ns, Name: name, UID: uid}
		if ValidOwner(owner) == nil {
			c := Comment(user, me.Mark())
			u, m, ok := Split(c)
			if !ok || u != user || m != me.Mark() || !me.Made(m) {
				t.Fatalf("Split(Comment(%q, %q) = %q) = %q, %q, %t", user, me.Mark(), c, u, m, ok)
			}
			other := me
			other.Name += "x"
			if other.Made(m) {
				t.Fatalf("%q credits %+v as well as %+v", c, other, me)
			}
		}

		// Any comment, as an object made elsewhere may carry it.
		u, m, ok := Split(comment)
		if !ok {
			if u != comment || m != "" {
				t.Fatalf("Split(%q) = %q, %q, false: want the whole comment back", comment, u, m)
			}
			if me.Made(m) {
				t.Fatalf("Made(%q) without a marker", comment)
			}
			return
		}
		if m == "" || strings.ContainsAny(string(m), "[] \t") || !(comment == u+" "+m.String() || (u == "" && comment == m.String())) {
			t.Fatalf("Split(%q) = %q, %q: not a user comment and a well-formed marker after one space", comment, u, m)
		}
		if me.Made(m) && m != me.Mark() && string(m) != string(uid) {
			t.Fatalf("Made(%q) for %+v, whose mark is %q", m, me, me.Mark())
		}
	})
}
