package sim

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	cf "github.com/cloudflare/cloudflare-go/v7"
	"github.com/cloudflare/cloudflare-go/v7/zero_trust"
)

func everyone() zero_trust.AccessRuleUnionParam {
	return zero_trust.EveryoneRuleParam{Everyone: cf.F(zero_trust.EveryoneRuleEveryoneParam{})}
}

func domainRule(d string) zero_trust.AccessRuleUnionParam {
	return zero_trust.DomainRuleParam{EmailDomain: cf.F(zero_trust.DomainRuleEmailDomainParam{Domain: cf.F(d)})}
}

func (f *accessFixture) policyWith(t *testing.T, params zero_trust.AccessPolicyNewParams) string {
	t.Helper()
	params.AccountID = cf.F(account)
	p, err := f.zt.Access.Policies.New(ctx, params)
	if err != nil {
		t.Fatalf("create policy %v: %v", params.Name, err)
	}
	return p.ID
}

func (f *accessFixture) serviceToken(t *testing.T, name string) *zero_trust.AccessServiceTokenNewResponse {
	t.Helper()
	tok, err := f.zt.Access.ServiceTokens.New(ctx, zero_trust.AccessServiceTokenNewParams{AccountID: cf.F(account), Name: cf.F(name)})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestAccessDecision: Access's documented evaluation, one application per
// behaviour, everything set up through the SDK.
func TestAccessDecision(t *testing.T) {
	f := newAccessFixture(t, Options{})
	tokA, tokB := f.serviceToken(t, "deployer"), f.serviceToken(t, "monitor")
	grp, err := f.zt.Access.Groups.New(ctx, zero_trust.AccessGroupNewParams{
		AccountID: cf.F(account), Name: cf.F("engineers"),
		Include: cf.F([]zero_trust.AccessRuleUnionParam{zero_trust.OktaGroupRuleParam{Okta: cf.F(zero_trust.OktaGroupRuleOktaParam{Name: cf.F("eng"), IdentityProviderID: cf.F("okta")})}}),
		Exclude: cf.F([]zero_trust.AccessRuleUnionParam{emailRule("eve@example.com")}),
	})
	if err != nil {
		t.Fatal(err)
	}

	ann := f.policy(t, "ann", zero_trust.DecisionAllow, emailRule("ann@example.com")).ID
	org := f.policy(t, "example.org", zero_trust.DecisionAllow, domainRule("example.org")).ID
	corp := f.policyWith(t, zero_trust.AccessPolicyNewParams{Name: cf.F("corp but mallory"), Decision: cf.F(zero_trust.DecisionAllow),
		Include: cf.F([]zero_trust.AccessRuleUnionParam{domainRule("@corp.com")}), Exclude: cf.F([]zero_trust.AccessRuleUnionParam{emailRule("mallory@corp.com")})})
	team := f.policyWith(t, zero_trust.AccessPolicyNewParams{Name: cf.F("team from the office in Portugal"), Decision: cf.F(zero_trust.DecisionAllow),
		Include: cf.F([]zero_trust.AccessRuleUnionParam{domainRule("team.com")}),
		Require: cf.F([]zero_trust.AccessRuleUnionParam{
			zero_trust.CountryRuleParam{Geo: cf.F(zero_trust.CountryRuleGeoParam{CountryCode: cf.F("PT")})},
			zero_trust.IPRuleParam{IP: cf.F(zero_trust.IPRuleIPParam{IP: cf.F("10.0.0.0/8")})},
		})})
	blockBob := f.policy(t, "block bob", zero_trust.DecisionDeny, emailRule("bob@example.com")).ID
	all := f.policy(t, "everyone", zero_trust.DecisionAllow, everyone()).ID
	bypass := f.policy(t, "public", zero_trust.DecisionBypass, everyone()).ID
	deployer := f.policy(t, "deployer", zero_trust.DecisionNonIdentity, zero_trust.ServiceTokenRuleParam{ServiceToken: cf.F(zero_trust.ServiceTokenRuleServiceTokenParam{TokenID: cf.F(tokA.ID)})}).ID
	anyToken := f.policy(t, "any token", zero_trust.DecisionNonIdentity, zero_trust.AnyValidServiceTokenRuleParam{AnyValidServiceToken: cf.F(zero_trust.AnyValidServiceTokenRuleAnyValidServiceTokenParam{})}).ID
	engineers := f.policy(t, "engineers", zero_trust.DecisionAllow, zero_trust.GroupRuleParam{Group: cf.F(zero_trust.GroupRuleGroupParam{ID: cf.F(grp.ID)})}).ID

	f.app(t, "ann", "ann.example.com", link{ann, 1})
	f.app(t, "org", "org.example.com", link{org, 1})
	f.app(t, "corp", "corp.example.com", link{corp, 1})
	f.app(t, "team", "team.example.com", link{team, 1})
	f.app(t, "block first", "order.example.com", link{blockBob, 1}, link{all, 2})
	f.app(t, "allow first", "order2.example.com", link{all, 1}, link{blockBob, 2})
	f.app(t, "site", "site.example.com", link{ann, 1})
	f.app(t, "health", "site.example.com/health", link{bypass, 1})
	f.app(t, "api", "api.example.com", link{ann, 2}, link{deployer, 1})
	f.app(t, "any", "any.example.com", link{anyToken, 1})
	f.app(t, "eng", "eng.example.com", link{engineers, 1})
	f.app(t, "wild", "*.wild.example.com", link{ann, 1})

	tokenA := AccessIdentity{ClientID: tokA.ClientID, ClientSecret: tokA.ClientSecret}
	tokenB := AccessIdentity{ClientID: tokB.ClientID, ClientSecret: tokB.ClientSecret}
	for _, tc := range []struct {
		name, host, path string
		who              AccessIdentity
		want             bool
		why              string // a part of the reason
	}{
		{"no application", "elsewhere.example.net", "/", AccessIdentity{}, true, "no Access application"},
		{"allowed email", "ann.example.com", "/", AccessIdentity{Email: "ann@example.com"}, true, `allow policy "ann"`},
		{"email compared without case", "ann.example.com", "/", AccessIdentity{Email: "Ann@Example.COM"}, true, `allow policy "ann"`},
		{"another email", "ann.example.com", "/", AccessIdentity{Email: "zed@example.com"}, false, "no policy matched"},
		{"not logged in", "ann.example.com", "/", AccessIdentity{}, false, "has not logged in"},
		{"host with port and upper case", "ANN.example.com:443", "/x", AccessIdentity{Email: "ann@example.com"}, true, `allow policy "ann"`},
		{"email domain", "org.example.com", "/", AccessIdentity{Email: "x@example.org"}, true, `allow policy "example.org"`},
		{"another domain", "org.example.com", "/", AccessIdentity{Email: "x@example.org.evil.com"}, false, "no policy matched"},
		{"domain given with @", "corp.example.com", "/", AccessIdentity{Email: "alice@corp.com"}, true, "corp but mallory"},
		{"exclude wins", "corp.example.com", "/", AccessIdentity{Email: "mallory@corp.com"}, false, "no policy matched"},
		{"require: all met", "team.example.com", "/", AccessIdentity{Email: "c@team.com", Country: "PT", IP: "10.1.2.3"}, true, "team from the office"},
		{"require: wrong network", "team.example.com", "/", AccessIdentity{Email: "c@team.com", Country: "PT", IP: "192.168.1.1"}, false, "no policy matched"},
		{"require: wrong country", "team.example.com", "/", AccessIdentity{Email: "c@team.com", Country: "FR", IP: "10.1.2.3"}, false, "no policy matched"},
		{"require: include not met", "team.example.com", "/", AccessIdentity{Email: "c@other.com", Country: "PT", IP: "10.1.2.3"}, false, "no policy matched"},
		{"block before allow", "order.example.com", "/", AccessIdentity{Email: "bob@example.com"}, false, `block policy "block bob"`},
		{"block does not touch others", "order.example.com", "/", AccessIdentity{Email: "ann@example.com"}, true, `allow policy "everyone"`},
		{"allow at a higher precedence than block", "order2.example.com", "/", AccessIdentity{Email: "bob@example.com"}, true, `allow policy "everyone" (precedence 1)`},
		{"bypass needs no login", "site.example.com", "/health", AccessIdentity{}, true, `bypass policy "public"`},
		{"bypass covers the path below", "site.example.com", "/health/live", AccessIdentity{}, true, "bypass"},
		{"a sibling path is the parent app's", "site.example.com", "/healthz", AccessIdentity{}, false, `application "site"`},
		{"the parent app", "site.example.com", "/", AccessIdentity{Email: "ann@example.com"}, true, `application "site"`},
		{"service token: the named one", "api.example.com", "/", tokenA, true, `service auth policy "deployer" (precedence 1) with service token "deployer"`},
		{"service token: another one", "api.example.com", "/", tokenB, false, "has not logged in"},
		{"service token: wrong secret", "api.example.com", "/", AccessIdentity{ClientID: tokA.ClientID, ClientSecret: tokB.ClientSecret}, false, "wrong client secret"},
		{"service token: unknown client id", "api.example.com", "/", AccessIdentity{ClientID: "nope.access", ClientSecret: tokA.ClientSecret}, false, "no service token has that client ID"},
		{"service token app still takes logins", "api.example.com", "/", AccessIdentity{Email: "ann@example.com"}, true, `allow policy "ann"`},
		{"any valid service token", "any.example.com", "/", tokenB, true, `service auth policy "any token"`},
		{"any valid service token: none", "any.example.com", "/", AccessIdentity{Email: "ann@example.com"}, false, "no policy matched"},
		{"access group by identity provider group", "eng.example.com", "/", AccessIdentity{Email: "dave@example.com", IdPGroups: []string{"ops", "eng"}}, true, `allow policy "engineers"`},
		{"access group exclude", "eng.example.com", "/", AccessIdentity{Email: "eve@example.com", IdPGroups: []string{"eng"}}, false, "no policy matched"},
		{"access group, not a member", "eng.example.com", "/", AccessIdentity{Email: "frank@example.com"}, false, "no policy matched"},
		{"wildcard: one level", "a.wild.example.com", "/", AccessIdentity{Email: "ann@example.com"}, true, `application "wild"`},
		{"wildcard: not two levels", "a.b.wild.example.com", "/", AccessIdentity{}, true, "no Access application"},
		{"wildcard: not the apex", "wild.example.com", "/", AccessIdentity{}, true, "no Access application"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, why := f.s.AccessDecision(tc.host, tc.path, tc.who)
			if got != tc.want || !strings.Contains(why, tc.why) {
				t.Errorf("AccessDecision(%q, %q) = %v, %q; want %v, …%q…", tc.host, tc.path, got, why, tc.want, tc.why)
			}
		})
	}
}

// TestServiceTokenRotationOverlap: after a rotation the old secret works
// until previous_client_secret_expires_at, which defaults to now and may
// be moved later; a disabled or expired token works with no secret.
func TestServiceTokenRotationOverlap(t *testing.T) {
	f := newAccessFixture(t, Options{})
	tok, err := f.zt.Access.ServiceTokens.New(ctx, zero_trust.AccessServiceTokenNewParams{AccountID: cf.F(account), Name: cf.F("deployer"), Duration: cf.F("24h")})
	if err != nil {
		t.Fatal(err)
	}
	p := f.policy(t, "deployer", zero_trust.DecisionNonIdentity, zero_trust.ServiceTokenRuleParam{ServiceToken: cf.F(zero_trust.ServiceTokenRuleServiceTokenParam{TokenID: cf.F(tok.ID)})})
	f.app(t, "api", "api.example.com", link{p.ID, 1})
	allowed := func(secret string) bool {
		ok, _ := f.s.AccessDecision("api.example.com", "/", AccessIdentity{ClientID: tok.ClientID, ClientSecret: secret})
		return ok
	}
	type step struct {
		name string
		do   func() // runs before the checks
		want map[*string]bool
	}
	first := tok.ClientSecret
	var second, third string
	rotate := func(overlap time.Duration, into *string) func() {
		return func() {
			params := zero_trust.AccessServiceTokenRotateParams{AccountID: cf.F(account)}
			if overlap > 0 {
				params.PreviousClientSecretExpiresAt = cf.F(f.clock.Now().Add(overlap))
			}
			r, err := f.zt.Access.ServiceTokens.Rotate(ctx, tok.ID, params)
			if err != nil {
				t.Fatal(err)
			}
			*into = r.ClientSecret
		}
	}
	update := func(build func() zero_trust.AccessServiceTokenUpdateParams) func() {
		return func() {
			params := build()
			params.AccountID = cf.F(account)
			if _, err := f.zt.Access.ServiceTokens.Update(ctx, tok.ID, params); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, s := range []step{
		{"the current secret", func() {}, map[*string]bool{&first: true}},
		{"rotated with an hour's overlap", rotate(time.Hour, &second), map[*string]bool{&first: true, &second: true}},
		{"a minute before the overlap ends", func() { f.clock.Add(59 * time.Minute) }, map[*string]bool{&first: true, &second: true}},
		{"the overlap is over", func() { f.clock.Add(time.Minute) }, map[*string]bool{&first: false, &second: true}},
		{"rotated without overlap", rotate(0, &third), map[*string]bool{&first: false, &second: false, &third: true}},
		{"the overlap moved later", update(func() zero_trust.AccessServiceTokenUpdateParams {
			return zero_trust.AccessServiceTokenUpdateParams{PreviousClientSecretExpiresAt: cf.F(f.clock.Now().Add(2 * time.Hour))}
		}), map[*string]bool{&first: false, &second: true, &third: true}},
		{"the overlap moved into the past", update(func() zero_trust.AccessServiceTokenUpdateParams {
			return zero_trust.AccessServiceTokenUpdateParams{PreviousClientSecretExpiresAt: cf.F(f.clock.Now().Add(-time.Second))}
		}), map[*string]bool{&second: false, &third: true}},
		{"disabled", update(func() zero_trust.AccessServiceTokenUpdateParams {
			return zero_trust.AccessServiceTokenUpdateParams{Enabled: cf.F(false)}
		}), map[*string]bool{&third: false}},
		{"enabled again", update(func() zero_trust.AccessServiceTokenUpdateParams {
			return zero_trust.AccessServiceTokenUpdateParams{Enabled: cf.F(true)}
		}), map[*string]bool{&third: true}},
		{"expired", func() { f.clock.Add(23 * time.Hour) }, map[*string]bool{&third: false}},
		{"refreshed", func() {
			if _, err := f.zt.Access.ServiceTokens.Refresh(ctx, tok.ID, zero_trust.AccessServiceTokenRefreshParams{AccountID: cf.F(account)}); err != nil {
				t.Fatal(err)
			}
		}, map[*string]bool{&third: true}},
		// Two rotations took the version from 1 to 3.
		{"rotated by raising client_secret_version", update(func() zero_trust.AccessServiceTokenUpdateParams {
			return zero_trust.AccessServiceTokenUpdateParams{ClientSecretVersion: cf.F(4.0)}
		}), map[*string]bool{&third: false}},
	} {
		s.do()
		for secret, want := range s.want {
			if got := allowed(*secret); got != want {
				label := map[*string]string{&first: "first", &second: "second", &third: "third"}[secret]
				t.Errorf("%s: the %s secret allowed %v, want %v", s.name, label, got, want)
			}
		}
	}
	var seen struct {
		LastSeenAt *time.Time `json:"last_seen_at"`
	}
	decodeResult(t, call(t, f.srv, "GET", "/accounts/"+account+"/access/service_tokens/"+tok.ID, token, ""), &seen)
	if seen.LastSeenAt == nil {
		t.Error("last_seen_at is not set after the token was used")
	}
}

func TestAccessDecisionHook(t *testing.T) {
	f := newAccessFixture(t, Options{})
	p := f.policy(t, "ann", zero_trust.DecisionAllow, emailRule("ann@example.com"))
	f.app(t, "wiki", "wiki.example.com", link{p.ID, 1})
	for _, tc := range []struct {
		body        string
		wantStatus  int
		wantAllowed bool
	}{
		{`{"host":"wiki.example.com","path":"/","email":"ann@example.com"}`, 200, true},
		{`{"host":"wiki.example.com","email":"bob@example.com"}`, 200, false},
		{`{"host":"open.example.com"}`, 200, true},
		{`{"path":"/"}`, 400, false},
		{`nope`, 400, false},
	} {
		res, err := http.Post(f.srv.URL+"/__sim/access/decision", "application/json", strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		var out struct {
			Allowed bool   `json:"allowed"`
			Why     string `json:"why"`
		}
		if res.StatusCode == 200 {
			if err := json.NewDecoder(res.Body).Decode(&out); err != nil || out.Why == "" {
				t.Errorf("%s: answer %v %+v", tc.body, err, out)
			}
		}
		res.Body.Close()
		if res.StatusCode != tc.wantStatus || out.Allowed != tc.wantAllowed {
			t.Errorf("%s: %d %+v, want %d allowed=%v", tc.body, res.StatusCode, out, tc.wantStatus, tc.wantAllowed)
		}
	}
}
