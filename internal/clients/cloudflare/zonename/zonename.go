// Package zonename decides which of an account's DNS zones a record name
// belongs to. It is a package of its own, without the Cloudflare SDK, so
// that its fuzz target builds in seconds rather than minutes (fuzzing
// rebuilds every dependency with coverage instrumentation).
package zonename

import "strings"

// Normalize is a DNS name as Cloudflare compares it: lower case, no
// surrounding space, no trailing dot.
func Normalize(n string) string {
	return strings.ToLower(strings.TrimSuffix(strings.TrimSpace(n), "."))
}

// In reports whether name is the zone's apex or below it, on a label
// boundary: "badexample.com" is not in example.com.
func In(name, zone string) bool {
	n, z := Normalize(name), Normalize(zone)
	return z != "" && (n == z || strings.HasSuffix(n, "."+z))
}

// Closest picks the zone a record name belongs to: the one whose name (as
// nameOf reads it) is the longest label-boundary suffix of it, so
// "app.dev.example.com" lands in dev.example.com when the account holds
// both that and example.com, as DNS delegation would have it.
func Closest[Z any](name string, zones []Z, nameOf func(Z) string) (Z, bool) {
	var best Z
	found := false
	for _, z := range zones {
		if In(name, nameOf(z)) && (!found || len(Normalize(nameOf(z))) > len(Normalize(nameOf(best)))) {
			best, found = z, true
		}
	}
	return best, found
}
