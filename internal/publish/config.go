package publish

import (
	"regexp"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
)

// A Claim is one PublicHostname's claim on its hostname on one tunnel.
type Claim struct {
	// Name of the PublicHostname (its namespace is the tunnel's).
	Name string
	// Hostname claimed, as Hostname returns it.
	Hostname string
	// Created orders claims: the oldest wins.
	Created metav1.Time
	// Rules the PublicHostname asks for; none while it has never been valid
	// (it claims its hostname all the same, so that a newer claim does not
	// take it and lose it again once the older becomes valid).
	Rules []ztv1alpha1.IngressRule
}

// Decision is who holds each hostname.
type Decision struct {
	// Holder of each hostname, by claim name.
	Holder map[string]string
	// Lost maps each claim that lost its hostname to the claim holding it.
	Lost map[string]string
}

// Decide gives each hostname to its oldest claim (by creation, then name,
// so that the answer does not depend on listing order).
func Decide(claims []Claim) Decision {
	sorted := slices.Clone(claims)
	slices.SortStableFunc(sorted, func(a, b Claim) int {
		if !a.Created.Equal(&b.Created) {
			if a.Created.Before(&b.Created) {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	d := Decision{Holder: map[string]string{}, Lost: map[string]string{}}
	for _, c := range sorted {
		if holder, taken := d.Holder[c.Hostname]; taken {
			if holder != c.Name {
				d.Lost[c.Name] = holder
			}
			continue
		}
		d.Holder[c.Hostname] = c.Name
	}
	return d
}

// Config is a tunnel's whole remote configuration from the claims that hold
// their hostnames: ordered deterministically and so that the most specific
// rule matches first, de-duplicated by hostname and path (a later rule for
// the same hostname and path could never match), ending in the catch-all.
func Config(claims []Claim) *ztv1alpha1.TunnelConfig {
	d := Decide(claims)
	var held [][]ztv1alpha1.IngressRule
	for _, c := range claims {
		if d.Holder[c.Hostname] == c.Name {
			held = append(held, c.Rules)
		}
	}
	return TunnelConfig(held...)
}

// TunnelConfig aggregates rules into one configuration document. Rules
// without hostname or service are dropped: the only hostless rule of the
// document is the catch-all. Of two rules for the same hostname and path
// the first in precedence stays: the other could never match.
func TunnelConfig(rules ...[]ztv1alpha1.IngressRule) *ztv1alpha1.TunnelConfig {
	var all []ztv1alpha1.IngressRule
	for _, rs := range rules {
		for i := range rs {
			if ptr.Deref(rs[i].Hostname, "") != "" && rs[i].Service != "" {
				all = append(all, *rs[i].DeepCopy())
			}
		}
	}
	sortRules(all)
	out := make([]ztv1alpha1.IngressRule, 0, len(all)+1)
	seen := map[[2]string]bool{}
	for _, r := range all {
		k := [2]string{*r.Hostname, ptr.Deref(r.Path, "")}
		if seen[k] {
			continue
		}
		seen[k] = true
		if r.Path != nil && *r.Path == "" {
			r.Path = nil
		}
		out = append(out, r)
	}
	return &ztv1alpha1.TunnelConfig{Ingress: append(out, ztv1alpha1.IngressRule{Service: CatchAllService})}
}

// sortRules orders rules as cloudflared should try them (first match wins):
// exact hosts before wildcards, longer (more specific) wildcards first, then
// by host; within a host by PathPrecedence. It is stable: expressions
// keep their order.
func sortRules(rs []ztv1alpha1.IngressRule) {
	slices.SortStableFunc(rs, func(a, b ztv1alpha1.IngressRule) int {
		ha, hb := ptr.Deref(a.Hostname, ""), ptr.Deref(b.Hostname, "")
		wa, wb := strings.HasPrefix(ha, "*"), strings.HasPrefix(hb, "*")
		if wa != wb {
			return boolCmp(wa, wb)
		}
		if wa && len(ha) != len(hb) {
			return len(hb) - len(ha)
		}
		if c := strings.Compare(ha, hb); c != 0 {
			return c
		}
		pa, pb := ptr.Deref(a.Path, ""), ptr.Deref(b.Path, "")
		if c := PathPrecedence(pa, pb); c != 0 {
			return c
		}
		if k, _ := ClassifyPath(pa); k == PathRegex {
			return 0
		}
		// The same literal twice (never from one claim): the lowest
		// service stays, whatever order they came in.
		return strings.Compare(a.Service, b.Service)
	})
}

func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// PathKind is what a rule's path matches, read from cloudflared's form of
// it (see path): the rule's kind is what it matches, however it was asked
// for, so a RegularExpression written as an anchored literal is that
// literal.
type PathKind int

// Path kinds, in precedence order.
const (
	// PathExact: "^<quoted literal>$", that literal only.
	PathExact PathKind = iota
	// PathPrefix: "^<quoted literal>(/|$)", the literal and what lies
	// below it, by whole segments.
	PathPrefix
	// PathRegex: any other expression.
	PathRegex
	// PathAny: no path (a Prefix "/"), every path.
	PathAny
)

// ClassifyPath is the kind of a rule's path and, for Exact and Prefix, the
// literal it is made of.
func ClassifyPath(p string) (PathKind, string) {
	if p == "" {
		return PathAny, ""
	}
	if lit, ok := quotedLiteral(p, "$"); ok {
		return PathExact, lit
	}
	if lit, ok := quotedLiteral(p, prefixSuffix); ok {
		return PathPrefix, lit
	}
	return PathRegex, ""
}

// quotedLiteral is the literal s when p is "^" + regexp.QuoteMeta(s) +
// suffix, exactly: anything else is an expression of its own.
func quotedLiteral(p, suffix string) (string, bool) {
	body, ok := strings.CutPrefix(p, "^")
	if !ok {
		return "", false
	}
	if body, ok = strings.CutSuffix(body, suffix); !ok {
		return "", false
	}
	var lit strings.Builder
	for i := 0; i < len(body); i++ {
		if body[i] == '\\' {
			if i++; i == len(body) {
				return "", false
			}
		}
		lit.WriteByte(body[i])
	}
	if regexp.QuoteMeta(lit.String()) != body {
		return "", false
	}
	return lit.String(), true
}

// PathPrecedence orders two paths of one hostname as Gateway API orders
// matches: Exact before everything, then Prefix, the longest first; then
// regular expressions (whose precedence Gateway API leaves to the
// implementation: after every literal, so an expression never takes a
// path a literal names, but before the path-less rule, a Prefix "/", which
// an expression would otherwise never see); the path-less rule last.
// Expressions rank the same: the caller's order, oldest claim first,
// decides between them (the sort is stable).
func PathPrecedence(a, b string) int {
	ka, la := ClassifyPath(a)
	kb, lb := ClassifyPath(b)
	switch {
	case ka != kb:
		return int(ka) - int(kb)
	case ka == PathRegex || ka == PathAny:
		return 0
	case len(la) != len(lb):
		return len(lb) - len(la)
	}
	return strings.Compare(la, lb)
}
