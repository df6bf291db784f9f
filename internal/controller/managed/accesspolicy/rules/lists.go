package rules

import (
	"encoding/json"
	"fmt"
	"strings"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/common"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
)

// Lists are the three rule lists of a policy or a group, as Cloudflare's
// JSON.
type Lists struct {
	Include, Exclude, Require []json.RawMessage
}

// Translate translates the three rule lists of a policy or a group.
func Translate(include, exclude, require []v1alpha1.AccessRule) Lists {
	return Lists{Include: Rules(include), Exclude: Rules(exclude), Require: Rules(require)}
}

// Diff describes, one line per list, how got differs from want: rules are
// compared by meaning (their JSON, whatever the key order), in order.
func (want Lists) Diff(got Lists) []string {
	var d []string
	for _, l := range []struct {
		name      string
		want, got []json.RawMessage
	}{{"include", want.Include, got.Include}, {"exclude", want.Exclude, got.Exclude}, {"require", want.Require, got.Require}} {
		if w, g := Canonical(l.want), Canonical(l.got); w != g {
			d = append(d, fmt.Sprintf("%s: %s in Cloudflare, %s desired", l.name, g, w))
		}
	}
	return d
}

// Unresolved names the rules of the three lists that reference a group or
// a service token not yet resolved to its ID, e.g. "include[1].groupRef".
func Unresolved(include, exclude, require []v1alpha1.AccessRule) []string {
	var out []string
	for _, l := range []struct {
		name  string
		rules []v1alpha1.AccessRule
	}{{"include", include}, {"exclude", exclude}, {"require", require}} {
		for i, r := range l.rules {
			if f := unresolved(r); f != "" {
				out = append(out, fmt.Sprintf("%s[%d].%s", l.name, i, f))
			}
		}
	}
	return out
}

// unresolved is the reference field of r that has no ID yet, or "".
func unresolved(r v1alpha1.AccessRule) string {
	switch {
	case (r.GroupRef != nil || r.GroupSelector != nil) && ptrEmpty(r.GroupID):
		return "groupRef"
	case (r.ServiceTokenRef != nil || r.ServiceTokenSelector != nil) && ptrEmpty(r.ServiceTokenID):
		return "serviceTokenRef"
	}
	return ""
}

func ptrEmpty(s *string) bool { return s == nil || *s == "" }

// UnresolvedError refuses to write rules while a reference in them has no
// ID: written without it, a rule would match no one (an include) or stop
// keeping anyone out (an exclude), so nothing is written until it has one.
type UnresolvedError struct {
	// Fields are the rules waiting, e.g. "include[1].groupRef".
	Fields []string
}

func (e *UnresolvedError) Error() string {
	return strings.Join(e.Fields, ", ") + ": the referenced AccessGroup or AccessServiceToken has no ID yet; nothing is written until it has (set the ID, or wait for the referenced resource to be created)"
}

// ConditionReason of a rule waiting for its reference: UnresolvedReference.
func (e *UnresolvedError) ConditionReason() xpv2.ConditionReason {
	return common.ReasonUnresolvedReference
}

// Resolved is an UnresolvedError naming the rules of the three lists still
// waiting for their reference, or nil when none is.
func Resolved(include, exclude, require []v1alpha1.AccessRule) error {
	if u := Unresolved(include, exclude, require); len(u) > 0 {
		return &UnresolvedError{Fields: u}
	}
	return nil
}

// ReferenceNamespaces lists the namespaces the rules' references and
// selectors name, so references into other namespaces can be refused.
func ReferenceNamespaces(lists ...[]v1alpha1.AccessRule) []*string {
	var out []*string
	for _, l := range lists {
		for _, r := range l {
			out = append(out, refNamespace(r.GroupRef), selectorNamespace(r.GroupSelector), refNamespace(r.ServiceTokenRef), selectorNamespace(r.ServiceTokenSelector))
		}
	}
	return out
}

func refNamespace(r *xpv2.NamespacedReference) *string {
	if r == nil {
		return nil
	}
	return &r.Namespace
}

func selectorNamespace(s *xpv2.NamespacedSelector) *string {
	if s == nil {
		return nil
	}
	return &s.Namespace
}

// GroupIDs are the Access group IDs the rules name, resolved or raw, so a
// group another namespace manages can be refused.
func GroupIDs(lists ...[]v1alpha1.AccessRule) []string {
	return ids(lists, func(r v1alpha1.AccessRule) *string { return r.GroupID })
}

// ServiceTokenIDs are the service token IDs the rules name, resolved or
// raw, so a token another namespace manages can be refused.
func ServiceTokenIDs(lists ...[]v1alpha1.AccessRule) []string {
	return ids(lists, func(r v1alpha1.AccessRule) *string { return r.ServiceTokenID })
}

func ids(lists [][]v1alpha1.AccessRule, id func(v1alpha1.AccessRule) *string) []string {
	var out []string
	for _, l := range lists {
		for _, r := range l {
			if v := id(r); !ptrEmpty(v) {
				out = append(out, *v)
			}
		}
	}
	return out
}
