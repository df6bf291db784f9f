// Package oracle holds the fuzz oracles of the annotation sources' parsers,
// written from the rules the translators document and independently of
// their code, so a fuzz target can check a translation against them. Only
// tests import it.
package oracle

import (
	"regexp"
	"strings"
)

// HostRe is a hostname the translators accept: DNS labels, ASCII lower
// case, with an optional leading "*." wildcard.
var HostRe = regexp.MustCompile(`^(\*\.)?[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$`)

// ASCIILower folds ASCII letters only, as DNS compares names.
func ASCIILower(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, s)
}

// Host is a hostname as given: surrounding space and one trailing dot
// dropped, ASCII case folded, at most 253 characters, DNS labels with an
// optional leading "*." wildcard. It returns the public form.
func Host(raw string) (string, bool) {
	h := strings.TrimSuffix(strings.TrimSpace(raw), ".")
	if len(h) > 253 {
		return "", false
	}
	h = ASCIILower(h)
	return h, HostRe.MatchString(h)
}

// Port is the vpc-port annotation: decimal digits only (leading zeros
// allowed), 1-65535.
func Port(v string) (int32, bool) {
	if v == "" {
		return 0, false
	}
	n := 0
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		if n = n*10 + int(c-'0'); n > 65535 {
			n = 65536 // too big, however many digits follow
		}
	}
	return int32(n), n >= 1 && n <= 65535
}
