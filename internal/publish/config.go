package publish

import (
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
// document is the catch-all.
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
	for _, r := range all {
		if n := len(out); n > 0 && *out[n-1].Hostname == *r.Hostname && ptr.Deref(out[n-1].Path, "") == ptr.Deref(r.Path, "") {
			continue
		}
		if r.Path != nil && *r.Path == "" {
			r.Path = nil
		}
		out = append(out, r)
	}
	return &ztv1alpha1.TunnelConfig{Ingress: append(out, ztv1alpha1.IngressRule{Service: CatchAllService})}
}

// sortRules orders rules as cloudflared should try them (first match wins):
// exact hosts before wildcards, longer (more specific) wildcards first, then
// by host; within a host longer path literals first, Exact before Prefix of
// the same literal, path-less last; then by path and service for determinism.
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
		la, ea := pathRank(pa)
		lb, eb := pathRank(pb)
		if la != lb {
			return lb - la
		}
		if ea != eb {
			return boolCmp(eb, ea)
		}
		if c := strings.Compare(pa, pb); c != 0 {
			return c
		}
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

// pathRank is the length of the literal a path regex matches (as made by
// path: quoted, anchored) and whether it is exact; a missing path ranks -1.
// A regular expression of the user's ranks by its length.
func pathRank(p string) (int, bool) {
	if p == "" {
		return -1, false
	}
	lit, prefix := strings.CutSuffix(strings.TrimPrefix(p, "^"), prefixSuffix)
	n := 0
	for i := 0; i < len(lit); i++ {
		switch {
		case lit[i] == '\\':
			i++ // an escaped character is one literal character
		case lit[i] == '$' && i == len(lit)-1 && !prefix:
			return n, true
		}
		n++
	}
	return n, false
}
