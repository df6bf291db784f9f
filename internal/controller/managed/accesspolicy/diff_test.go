package accesspolicy

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
)

func TestDiff(t *testing.T) {
	spec := v1alpha1.AccessPolicyParameters{
		Name: "employees", Decision: "allow",
		Include: []v1alpha1.AccessRule{{EmailDomain: ptr.To("example.com")}},
		Exclude: []v1alpha1.AccessRule{{Email: ptr.To("mallory@example.com")}},
	}
	raw := func(s ...string) []json.RawMessage {
		out := []json.RawMessage{}
		for _, r := range s {
			out = append(out, json.RawMessage(r))
		}
		return out
	}
	held := cloudflare.AccessPolicy{
		ID: "p-1", Name: "employees", Decision: "allow", SessionDuration: "24h",
		Include: raw(`{"email_domain": {"domain": "example.com"}}`),
		Exclude: raw(`{"email":{"email":"mallory@example.com"}}`),
	}
	cases := map[string]struct {
		spec func(*v1alpha1.AccessPolicyParameters)
		got  func(*cloudflare.AccessPolicy)
		want []string // lines that must appear; none means up to date
	}{
		"UpToDate": {},
		// Cloudflare's default session and a missing require list are no
		// difference from an unset one.
		"CloudflaresDefaultsAreNoDifference": {got: func(p *cloudflare.AccessPolicy) { p.Require = nil }},
		"KeyOrderIsNoDifference": {got: func(p *cloudflare.AccessPolicy) {
			p.Include = raw(`{"email_domain":{"domain":"example.com"}}`)
		}},
		"DecisionChanged":      {got: func(p *cloudflare.AccessPolicy) { p.Decision = "bypass" }, want: []string{`decision: "bypass" in Cloudflare, "allow" desired`}},
		"RuleAddedByHand":      {got: func(p *cloudflare.AccessPolicy) { p.Include = append(p.Include, json.RawMessage(`{"everyone":{}}`)) }, want: []string{"include:"}},
		"ExcludeRemovedByHand": {got: func(p *cloudflare.AccessPolicy) { p.Exclude = nil }, want: []string{"exclude: [] in Cloudflare"}},
		"RulesReordered": {
			spec: func(s *v1alpha1.AccessPolicyParameters) {
				s.Include = append(s.Include, v1alpha1.AccessRule{Email: ptr.To("ada@example.org")})
			},
			got: func(p *cloudflare.AccessPolicy) {
				p.Include = raw(`{"email":{"email":"ada@example.org"}}`, `{"email_domain":{"domain":"example.com"}}`)
			},
			want: []string{"include:"},
		},
		"SessionDurationAsked": {spec: func(s *v1alpha1.AccessPolicyParameters) { s.SessionDuration = ptr.To("8h") }, want: []string{`sessionDuration: "24h" in Cloudflare, "8h" desired`}},
		"Renamed":              {got: func(p *cloudflare.AccessPolicy) { p.Name = "staff" }, want: []string{`name: "staff" in Cloudflare, "employees" desired`}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s, g := spec, held
			s.Include = append([]v1alpha1.AccessRule(nil), spec.Include...)
			if tc.spec != nil {
				tc.spec(&s)
			}
			if tc.got != nil {
				tc.got(&g)
			}
			d := Diff(s, g)
			if len(tc.want) == 0 && d != "" {
				t.Fatalf("Diff() = %q, want none", d)
			}
			for _, w := range tc.want {
				if !strings.Contains(d, w) {
					t.Errorf("Diff() = %q, want it to say %q", d, w)
				}
			}
		})
	}
}

func TestInputSendsEveryList(t *testing.T) {
	in := Input(v1alpha1.AccessPolicyParameters{Name: "n", Decision: "deny", Include: []v1alpha1.AccessRule{{Everyone: ptr.To(true)}}})
	want := cloudflare.AccessPolicyInput{Name: "n", Decision: "deny", Include: []json.RawMessage{json.RawMessage(`{"everyone":{}}`)}, Exclude: []json.RawMessage{}, Require: []json.RawMessage{}}
	if diff := cmp.Diff(want, in); diff != "" {
		t.Errorf("Input() -want +got:\n%s", diff)
	}
}
