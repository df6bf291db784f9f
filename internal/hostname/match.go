package hostname

import "strings"

// Key is the form hostnames are compared and indexed in: lower case,
// without a trailing dot or a path. Unlike Normalize it keeps a leading
// "*.", so a wildcard stays distinct from the name it sits on.
func Key(h string) string {
	h, _, _ = strings.Cut(strings.TrimSpace(h), "/")
	return strings.TrimSuffix(strings.ToLower(h), ".")
}

// Covers says whether a hostname pattern of a DNS record or a tunnel rule
// answers for host, as cloudflared matches a rule's hostname and as a DNS
// wildcard does: the name itself, or "*.<suffix>" for any name at any depth
// below the suffix (not the suffix itself). A catch-all ("" or "*") covers
// no name here: it serves only what a DNS record sends to it. Both are
// compared as Keys.
func Covers(pattern, host string) bool {
	pattern, host = Key(pattern), Key(host)
	switch {
	case host == "" || pattern == "" || pattern == "*":
		return false
	case pattern == host:
		return true
	case strings.HasPrefix(pattern, "*."):
		return strings.HasSuffix(host, pattern[1:]) && len(host) > len(pattern)-1
	}
	return false
}

// CoveringPatterns lists every pattern that Covers host, most specific
// first: the name itself, then the wildcard of each of its parents, the
// nearest first. DNS answers with the first that exists.
func CoveringPatterns(host string) []string {
	host = Key(host)
	if host == "" || host == "*" {
		return nil
	}
	out := []string{host}
	rest := strings.TrimPrefix(host, "*.")
	for {
		_, parent, ok := strings.Cut(rest, ".")
		if !ok || parent == "" {
			return out
		}
		out = append(out, "*."+parent)
		rest = parent
	}
}
