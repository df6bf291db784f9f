package rules

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
)

// kinds are the rule kinds a spec field becomes, in AccessRule's field
// order, with the field of the kind's object that carries the value ("" for
// kinds that carry none).
var kinds = []struct{ key, field string }{
	{"email", "email"}, {"email_domain", "domain"}, {"everyone", ""}, {"ip", "ip"}, {"geo", "country_code"},
	{"group", "id"}, {"okta", "name"}, {"service_token", "token_id"}, {"any_valid_service_token", ""},
}

// FuzzRule: a rule with one field set becomes exactly one rule of that
// kind, carrying the value given (an email domain lower-cased); no rule
// becomes one that matches everyone unless it asked to; and a list's
// canonical form does not depend on how its JSON orders keys.
func FuzzRule(f *testing.F) {
	f.Add(uint8(0), "ada@example.com")
	f.Add(uint8(1), "Example.COM")
	f.Add(uint8(2), "")
	f.Add(uint8(6), `a"b\c`)
	f.Add(uint8(8), "\xff")
	f.Fuzz(func(t *testing.T, which uint8, value string) {
		if !utf8.ValidString(value) {
			return // the API server stores only valid UTF-8 strings
		}
		k := kinds[int(which)%len(kinds)]
		r := ruleOf(int(which)%len(kinds), value)
		var got map[string]map[string]string
		if err := json.Unmarshal(Rule(r), &got); err != nil {
			t.Fatalf("Rule(%+v) is not a JSON object of objects: %s (%v)", r, Rule(r), err)
		}
		if len(got) != 1 || got[k.key] == nil {
			t.Fatalf("Rule(%+v) = %s, want exactly one %q rule", r, Rule(r), k.key)
		}
		if _, everyone := got["everyone"]; everyone && k.key != "everyone" {
			t.Fatalf("Rule(%+v) matches everyone", r)
		}
		want := value
		if k.key == "email_domain" {
			want = strings.ToLower(value)
		}
		if k.field != "" && got[k.key][k.field] != want {
			t.Fatalf("Rule(%+v) = %s: %s is %q, want %q", r, Rule(r), k.field, got[k.key][k.field], want)
		}
		list := Rules([]v1alpha1.AccessRule{r, r})
		if Canonical(list) != Canonical(reencode(t, list)) {
			t.Fatalf("Canonical depends on key order: %s vs %s", Canonical(list), Canonical(reencode(t, list)))
		}
	})
}

func ruleOf(i int, v string) v1alpha1.AccessRule {
	t := true
	switch i {
	case 0:
		return v1alpha1.AccessRule{Email: &v}
	case 1:
		return v1alpha1.AccessRule{EmailDomain: &v}
	case 2:
		return v1alpha1.AccessRule{Everyone: &t}
	case 3:
		return v1alpha1.AccessRule{IPRange: &v}
	case 4:
		return v1alpha1.AccessRule{Country: &v}
	case 5:
		return v1alpha1.AccessRule{GroupID: &v}
	case 6:
		return v1alpha1.AccessRule{IdentityProviderGroup: &v1alpha1.AccessIdentityProviderGroup{Type: "okta", IdentityProviderID: "idp", Group: v}}
	case 7:
		return v1alpha1.AccessRule{ServiceTokenID: &v}
	default:
		return v1alpha1.AccessRule{AnyValidServiceToken: &t}
	}
}

// reencode writes each rule's inner object with its keys in reverse order,
// as another writer might.
func reencode(t *testing.T, rs []json.RawMessage) []json.RawMessage {
	out := make([]json.RawMessage, 0, len(rs))
	for _, r := range rs {
		var m map[string]map[string]string
		if err := json.Unmarshal(r, &m); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		b.WriteString("{")
		for k, inner := range m {
			kb, _ := json.Marshal(k)
			b.Write(kb)
			b.WriteString(":{")
			keys := make([]string, 0, len(inner))
			for ik := range inner {
				keys = append(keys, ik)
			}
			for i := len(keys) - 1; i >= 0; i-- {
				if i != len(keys)-1 {
					b.WriteString(",")
				}
				kb, _ := json.Marshal(keys[i])
				vb, _ := json.Marshal(inner[keys[i]])
				b.Write(kb)
				b.WriteString(":")
				b.Write(vb)
			}
			b.WriteString("}")
		}
		b.WriteString("}")
		out = append(out, json.RawMessage(b.String()))
	}
	return out
}
