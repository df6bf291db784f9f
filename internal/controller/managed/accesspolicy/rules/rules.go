// Package rules translates Access rules into Cloudflare's JSON and compares
// rule lists, without the Cloudflare SDK (so it can be fuzzed cheaply).
package rules

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
)

// Rule is one Access rule as Cloudflare's API writes it: a single key
// naming the kind, and its fields.
func Rule(r v1alpha1.AccessRule) json.RawMessage {
	var v any
	switch {
	case r.Email != nil:
		v = map[string]any{"email": map[string]string{"email": *r.Email}}
	case r.EmailDomain != nil:
		v = map[string]any{"email_domain": map[string]string{"domain": strings.ToLower(*r.EmailDomain)}}
	case r.Everyone != nil:
		v = map[string]any{"everyone": map[string]string{}}
	case r.IPRange != nil:
		v = map[string]any{"ip": map[string]string{"ip": *r.IPRange}}
	case r.Country != nil:
		v = map[string]any{"geo": map[string]string{"country_code": *r.Country}}
	case r.GroupID != nil:
		v = map[string]any{"group": map[string]string{"id": *r.GroupID}}
	case r.IdentityProviderGroup != nil:
		v = idpGroup(*r.IdentityProviderGroup)
	case r.ServiceTokenID != nil:
		v = map[string]any{"service_token": map[string]string{"token_id": *r.ServiceTokenID}}
	case r.AnyValidServiceToken != nil:
		v = map[string]any{"any_valid_service_token": map[string]string{}}
	default:
		// The schema admits exactly one field; an empty rule matches no
		// one, and Cloudflare refuses it rather than reading it as anyone.
		v = map[string]any{}
	}
	b, _ := json.Marshal(v) // maps of strings always encode
	return b
}

// idpGroup is the rule of one identity provider's group, in the field that
// provider's groups are known by.
func idpGroup(g v1alpha1.AccessIdentityProviderGroup) map[string]any {
	field := map[string]string{"okta": "name", "azureAD": "id", "gsuite": "email"}[g.Type]
	return map[string]any{g.Type: map[string]string{field: g.Group, "identity_provider_id": g.IdentityProviderID}}
}

// Rules translates a list of rules.
func Rules(rs []v1alpha1.AccessRule) []json.RawMessage {
	out := make([]json.RawMessage, 0, len(rs))
	for _, r := range rs {
		out = append(out, Rule(r))
	}
	return out
}

// Canonical is a rule list's JSON with its keys sorted (a missing list and
// an empty one alike), so the same rules compare equal however either side
// ordered their keys.
func Canonical(rs []json.RawMessage) string {
	out := make([]any, 0, len(rs))
	for _, r := range rs {
		var v any
		if err := json.Unmarshal(r, &v); err != nil {
			v = string(r)
		}
		out = append(out, v)
	}
	b, _ := json.Marshal(out)
	return string(bytes.TrimSpace(b))
}
