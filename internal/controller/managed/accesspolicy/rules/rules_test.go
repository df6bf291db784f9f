package rules

import (
	"testing"

	"k8s.io/utils/ptr"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
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
