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

func TestRule(t *testing.T) {
	cases := map[string]struct {
		rule v1alpha1.AccessRule
		want string
	}{
		"Email":                {rule: v1alpha1.AccessRule{Email: ptr.To("ada@example.com")}, want: `{"email":{"email":"ada@example.com"}}`},
		"EmailDomainLowered":   {rule: v1alpha1.AccessRule{EmailDomain: ptr.To("Example.COM")}, want: `{"email_domain":{"domain":"example.com"}}`},
		"Everyone":             {rule: v1alpha1.AccessRule{Everyone: ptr.To(true)}, want: `{"everyone":{}}`},
		"IPRange":              {rule: v1alpha1.AccessRule{IPRange: ptr.To("192.0.2.0/24")}, want: `{"ip":{"ip":"192.0.2.0/24"}}`},
		"Country":              {rule: v1alpha1.AccessRule{Country: ptr.To("NL")}, want: `{"geo":{"country_code":"NL"}}`},
		"AccessGroup":          {rule: v1alpha1.AccessRule{GroupID: ptr.To("g-1")}, want: `{"group":{"id":"g-1"}}`},
		"ServiceToken":         {rule: v1alpha1.AccessRule{ServiceTokenID: ptr.To("st-1")}, want: `{"service_token":{"token_id":"st-1"}}`},
		"AnyValidServiceToken": {rule: v1alpha1.AccessRule{AnyValidServiceToken: ptr.To(true)}, want: `{"any_valid_service_token":{}}`},
		"OktaGroup": {
			rule: v1alpha1.AccessRule{IdentityProviderGroup: &v1alpha1.AccessIdentityProviderGroup{Type: "okta", IdentityProviderID: "idp-1", Group: "engineering"}},
			want: `{"okta":{"identity_provider_id":"idp-1","name":"engineering"}}`,
		},
		"AzureADGroup": {
			rule: v1alpha1.AccessRule{IdentityProviderGroup: &v1alpha1.AccessIdentityProviderGroup{Type: "azureAD", IdentityProviderID: "idp-2", Group: "0000-1111"}},
			want: `{"azureAD":{"id":"0000-1111","identity_provider_id":"idp-2"}}`,
		},
		"GSuiteGroup": {
			rule: v1alpha1.AccessRule{IdentityProviderGroup: &v1alpha1.AccessIdentityProviderGroup{Type: "gsuite", IdentityProviderID: "idp-3", Group: "eng@example.com"}},
			want: `{"gsuite":{"email":"eng@example.com","identity_provider_id":"idp-3"}}`,
		},
		// The schema refuses an empty rule; should one get through, it
		// matches no one rather than everyone.
		"Empty": {rule: v1alpha1.AccessRule{}, want: `{}`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := string(Rule(tc.rule)); got != tc.want {
				t.Errorf("Rule() = %s, want %s", got, tc.want)
			}
		})
	}
}

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
