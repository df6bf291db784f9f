package sim

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	cf "github.com/cloudflare/cloudflare-go/v7"
	"github.com/cloudflare/cloudflare-go/v7/zero_trust"
)

var scannableSecret = regexp.MustCompile(`^cfast_[0-9A-Za-z]{40}[0-9a-f]{8}$`)

// checkScannable fails unless secret is in the documented format with a
// checksum that holds.
func checkScannable(t *testing.T, what, secret string) {
	t.Helper()
	if !scannableSecret.MatchString(secret) {
		t.Errorf("%s: a secret of %d characters not in the cfast_ format", what, len(secret))
		return
	}
	cut := len(secret) - secretChecksumLength
	if got := clientSecretChecksum(secret[:cut]); got != secret[cut:] {
		t.Errorf("%s: checksum %s, want %s", what, secret[cut:], got)
	}
}

// Secrets made by a create, a rotation and a raised client_secret_version
// are in the format Cloudflare issues since 2026-08-26, and still let in.
func TestClientSecretsAreScannable(t *testing.T) {
	f := newAccessFixture(t, Options{})
	tok := f.serviceToken(t, "deployer")
	checkScannable(t, "create", tok.ClientSecret)
	p := f.policy(t, "deployer", zero_trust.DecisionNonIdentity, zero_trust.ServiceTokenRuleParam{ServiceToken: cf.F(zero_trust.ServiceTokenRuleServiceTokenParam{TokenID: cf.F(tok.ID)})})
	f.app(t, "api", "api.example.com", link{p.ID, 1})
	rotated, err := f.zt.Access.ServiceTokens.Rotate(ctx, tok.ID, zero_trust.AccessServiceTokenRotateParams{AccountID: cf.F(account)})
	if err != nil {
		t.Fatal(err)
	}
	checkScannable(t, "rotate", rotated.ClientSecret)
	if ok, why := f.s.AccessDecision("api.example.com", "/", AccessIdentity{ClientID: tok.ClientID, ClientSecret: rotated.ClientSecret}); !ok {
		t.Errorf("the rotated secret is refused: %s", why)
	}
	if _, err := f.zt.Access.ServiceTokens.Update(ctx, tok.ID, zero_trust.AccessServiceTokenUpdateParams{AccountID: cf.F(account), ClientSecretVersion: cf.F(5.0)}); err != nil {
		t.Fatal(err)
	}
	issued := f.s.ClientSecrets()
	checkScannable(t, "client_secret_version", issued[len(issued)-1])
}

// The organization answers its strict service token authentication: off
// for one made before 2026-10-05, which may turn it on and off; on for
// good for one made since.
func TestStrictServiceTokenAuthBySetupDate(t *testing.T) {
	older := newAccessFixture(t, Options{})
	org, err := older.zt.Organizations.List(ctx, zero_trust.OrganizationListParams{AccountID: cf.F(account)})
	if err != nil {
		t.Fatal(err)
	}
	if strict := org.JSON.ExtraFields["strict_service_token_auth"].Raw(); strict != "false" {
		t.Errorf("an organization of 2026-03: strict_service_token_auth %s, want false", strict)
	}
	if err := older.s.SetStrictServiceTokenAuth(true); err != nil {
		t.Fatal(err)
	}
	if err := older.s.SetStrictServiceTokenAuth(false); err != nil {
		t.Errorf("an organization of 2026-03 may turn it off: %v", err)
	}

	newer := newAccessFixture(t, Options{AccessOrganizationCreated: strictServiceTokenAuthForced})
	org, err = newer.zt.Organizations.List(ctx, zero_trust.OrganizationListParams{AccountID: cf.F(account)})
	if err != nil {
		t.Fatal(err)
	}
	if strict := org.JSON.ExtraFields["strict_service_token_auth"].Raw(); strict != "true" {
		t.Errorf("an organization of 2026-10-05: strict_service_token_auth %s, want true", strict)
	}
	if err := newer.s.SetStrictServiceTokenAuth(false); err == nil {
		t.Error("an organization of 2026-10-05 turned strict service token authentication off")
	}
}

// With strict service token authentication on, only a Service Auth policy
// lets in a request with service token headers: an Allow policy naming
// the token, which let in a logged-in visitor presenting it, no longer
// does; a Service Auth policy still does; a login without the headers is
// not concerned.
func TestStrictServiceTokenAuthIgnoresAllowPolicies(t *testing.T) {
	f := newAccessFixture(t, Options{})
	tok := f.serviceToken(t, "deployer")
	byToken := zero_trust.ServiceTokenRuleParam{ServiceToken: cf.F(zero_trust.ServiceTokenRuleServiceTokenParam{TokenID: cf.F(tok.ID)})}
	allow := f.policy(t, "allow the token", zero_trust.DecisionAllow, byToken)
	ann := f.policy(t, "ann", zero_trust.DecisionAllow, emailRule("ann@example.com"))
	service := f.policy(t, "service auth", zero_trust.DecisionNonIdentity, byToken)
	f.app(t, "allow", "allow.example.com", link{allow.ID, 1}, link{ann.ID, 2})
	f.app(t, "service", "service.example.com", link{service.ID, 1})
	withToken := AccessIdentity{Email: "ann@example.com", ClientID: tok.ClientID, ClientSecret: tok.ClientSecret}
	for _, tc := range []struct {
		name   string
		strict bool
		host   string
		who    AccessIdentity
		want   bool
		why    string
	}{
		{"lenient: an allow policy names the token", false, "allow.example.com", withToken, true, `allow policy "allow the token"`},
		{"strict: allow policies are ignored", true, "allow.example.com", withToken, false, "strict service token authentication"},
		{"strict: a login without token headers", true, "allow.example.com", AccessIdentity{Email: "ann@example.com"}, true, `allow policy "ann"`},
		{"strict: service auth", true, "service.example.com", AccessIdentity{ClientID: tok.ClientID, ClientSecret: tok.ClientSecret}, true, `service auth policy "service auth"`},
	} {
		if err := f.s.SetStrictServiceTokenAuth(tc.strict); err != nil {
			t.Fatal(err)
		}
		got, why := f.s.AccessDecision(tc.host, "/", tc.who)
		if got != tc.want || !strings.Contains(why, tc.why) {
			t.Errorf("%s: %v, %q; want %v, …%q…", tc.name, got, why, tc.want, tc.why)
		}
	}
}

// The cleanup of inactive tokens takes a token older than the period that
// has not authenticated during it, unless a policy names it directly: one
// named only through an Access group goes. It does nothing while off.
func TestInactiveServiceTokenCleanup(t *testing.T) {
	for _, action := range []string{"delete", "disable"} {
		t.Run(action, func(t *testing.T) {
			f := newAccessFixture(t, Options{})
			named, grouped, used := f.serviceToken(t, "named"), f.serviceToken(t, "grouped"), f.serviceToken(t, "used")
			tokenRule := func(id string) zero_trust.AccessRuleUnionParam {
				return zero_trust.ServiceTokenRuleParam{ServiceToken: cf.F(zero_trust.ServiceTokenRuleServiceTokenParam{TokenID: cf.F(id)})}
			}
			grp, err := f.zt.Access.Groups.New(ctx, zero_trust.AccessGroupNewParams{AccountID: cf.F(account), Name: cf.F("machines"),
				Include: cf.F([]zero_trust.AccessRuleUnionParam{tokenRule(grouped.ID)})})
			if err != nil {
				t.Fatal(err)
			}
			direct := f.policy(t, "direct", zero_trust.DecisionNonIdentity, tokenRule(named.ID), tokenRule(used.ID))
			viaGroup := f.policy(t, "via group", zero_trust.DecisionNonIdentity, zero_trust.GroupRuleParam{Group: cf.F(zero_trust.GroupRuleGroupParam{ID: cf.F(grp.ID)})})
			f.app(t, "api", "api.example.com", link{direct.ID, 1}, link{viaGroup.ID, 2})
			f.clock.Add(20 * 24 * time.Hour)
			young := f.serviceToken(t, "young")

			f.clock.Add(11 * 24 * time.Hour)
			if got := f.s.CleanUpInactiveServiceTokens(); got != nil {
				t.Errorf("the cleanup is off, yet it took %v", got)
			}
			if err := f.s.SetServiceTokenInactivity(ServiceTokenInactivity{Enabled: true, InactivityThresholdDays: 30, Action: action}); err != nil {
				t.Fatal(err)
			}
			if ok, why := f.s.AccessDecision("api.example.com", "/", AccessIdentity{ClientID: used.ClientID, ClientSecret: used.ClientSecret}); !ok {
				t.Fatalf("the used token is refused: %s", why)
			}
			if got := f.s.CleanUpInactiveServiceTokens(); !slices.Equal(got, []string{grouped.ID}) {
				t.Errorf("cleaned %v, want only the token named through a group (%s)", got, grouped.ID)
			}
			_, err = f.zt.Access.ServiceTokens.Get(ctx, grouped.ID, zero_trust.AccessServiceTokenGetParams{AccountID: cf.F(account)})
			if action == "delete" {
				if status, _ := apiCodes(t, err); status != 404 {
					t.Errorf("the grouped token: %d, want 404", status)
				}
			} else if got, err := f.zt.Access.ServiceTokens.Get(ctx, grouped.ID, zero_trust.AccessServiceTokenGetParams{AccountID: cf.F(account)}); err != nil || got.Enabled {
				t.Errorf("the grouped token: %+v, %v; want it kept, disabled", got, err)
			}
			for _, id := range []string{named.ID, used.ID, young.ID} {
				if got, err := f.zt.Access.ServiceTokens.Get(ctx, id, zero_trust.AccessServiceTokenGetParams{AccountID: cf.F(account)}); err != nil || !got.Enabled {
					t.Errorf("token %s: %+v, %v; want it spared, enabled", id, got, err)
				}
			}
		})
	}
}

// Out-of-bounds cleanup settings are refused, as Cloudflare documents
// their bounds.
func TestServiceTokenInactivityBounds(t *testing.T) {
	f := newAccessFixture(t, Options{})
	for _, c := range []ServiceTokenInactivity{
		{Enabled: true, InactivityThresholdDays: 29, Action: "delete"},
		{Enabled: true, InactivityThresholdDays: 366, Action: "delete"},
		{Enabled: true, InactivityThresholdDays: 90, Action: "archive"},
	} {
		if err := f.s.SetServiceTokenInactivity(c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}
