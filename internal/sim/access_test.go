package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	cf "github.com/cloudflare/cloudflare-go/v7"
	"github.com/cloudflare/cloudflare-go/v7/option"
	"github.com/cloudflare/cloudflare-go/v7/zero_trust"
	"github.com/google/go-cmp/cmp"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim/contract"
)

// Cloudflare Access through the real SDK, every request and response
// checked against Cloudflare's OpenAPI document.

type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

type accessFixture struct {
	s     *Server
	srv   *httptest.Server
	zt    *zero_trust.ZeroTrustService
	clock *testClock
}

func newAccessFixture(t *testing.T, o Options) *accessFixture {
	t.Helper()
	clock := &testClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	o.Token, o.AccountID, o.Now = token, account, clock.Now
	s := New(o)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	zt := zero_trust.NewZeroTrustService(
		option.WithBaseURL(srv.URL+"/client/v4/"),
		option.WithAPIToken(token),
		option.WithHTTPClient(&http.Client{Transport: contract.NewTransport(t, http.DefaultTransport)}),
		option.WithMaxRetries(0),
	)
	return &accessFixture{s: s, srv: srv, zt: zt, clock: clock}
}

var ctx = context.Background()

// apiCodes is the status and error codes of a failed SDK call.
func apiCodes(t *testing.T, err error) (int, []int64) {
	t.Helper()
	var e *zero_trust.Error
	if !errors.As(err, &e) {
		t.Fatalf("want a Cloudflare API error, got %v", err)
	}
	var codes []int64
	for _, d := range e.Errors {
		codes = append(codes, d.Code)
	}
	return e.StatusCode, codes
}

func emailRule(email string) zero_trust.AccessRuleUnionParam {
	return zero_trust.EmailRuleParam{Email: cf.F(zero_trust.EmailRuleEmailParam{Email: cf.F(email)})}
}

func (f *accessFixture) policy(t *testing.T, name string, decision zero_trust.Decision, include ...zero_trust.AccessRuleUnionParam) *zero_trust.AccessPolicyNewResponse {
	t.Helper()
	p, err := f.zt.Access.Policies.New(ctx, zero_trust.AccessPolicyNewParams{AccountID: cf.F(account), Name: cf.F(name), Decision: cf.F(decision), Include: cf.F(include)})
	if err != nil {
		t.Fatalf("create policy %s: %v", name, err)
	}
	return p
}

type link struct {
	id         string
	precedence int64
}

func selfHosted(name, domain string, links ...link) zero_trust.AccessApplicationNewParamsBodySelfHostedApplication {
	var ps []zero_trust.AccessApplicationNewParamsBodySelfHostedApplicationPolicyUnion
	for _, l := range links {
		ps = append(ps, zero_trust.AccessApplicationNewParamsBodySelfHostedApplicationPoliciesAccessAppPolicyLink{ID: cf.F(l.id), Precedence: cf.F(l.precedence)})
	}
	return zero_trust.AccessApplicationNewParamsBodySelfHostedApplication{
		Name: cf.F(name), Domain: cf.F(domain), Type: cf.F(zero_trust.ApplicationTypeSelfHosted), Policies: cf.F(ps),
	}
}

func (f *accessFixture) app(t *testing.T, name, domain string, links ...link) *zero_trust.AccessApplicationNewResponse {
	t.Helper()
	a, err := f.zt.Access.Applications.New(ctx, zero_trust.AccessApplicationNewParams{AccountID: cf.F(account), Body: selfHosted(name, domain, links...)})
	if err != nil {
		t.Fatalf("create application %s: %v", name, err)
	}
	return a
}

type timestamps struct {
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

func stamps(t *testing.T, raw string) timestamps {
	t.Helper()
	var ts timestamps
	if err := json.Unmarshal([]byte(raw), &ts); err != nil || ts.CreatedAt.IsZero() {
		t.Fatalf("timestamps of %s: %v", raw, err)
	}
	return ts
}

// rules is how the SDK reads a rule list back.
func rules(rs []zero_trust.AccessRule) []string {
	out := []string{}
	for _, r := range rs {
		switch u := r.AsUnion().(type) {
		case zero_trust.EmailRule:
			out = append(out, "email "+u.Email.Email)
		case zero_trust.DomainRule:
			out = append(out, "email_domain "+u.EmailDomain.Domain)
		case zero_trust.CountryRule:
			out = append(out, "geo "+u.Geo.CountryCode)
		case zero_trust.IPRule:
			out = append(out, "ip "+u.IP.IP)
		case zero_trust.EveryoneRule:
			out = append(out, "everyone")
		case zero_trust.OktaGroupRule:
			out = append(out, "okta "+u.Okta.Name)
		case zero_trust.GroupRule:
			out = append(out, "group "+u.Group.ID)
		default:
			out = append(out, fmt.Sprintf("%T", u))
		}
	}
	return out
}

// appPolicies reads an application's linked policies from its raw answer.
type appPolicyShape struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	Decision   string `json:"decision"`
	Precedence int    `json:"precedence"`
}

func appPolicies(t *testing.T, raw string) []appPolicyShape {
	t.Helper()
	var a struct {
		Policies []appPolicyShape `json:"policies"`
	}
	if err := json.Unmarshal([]byte(raw), &a); err != nil {
		t.Fatal(err)
	}
	return a.Policies
}

func TestAccessOrganization(t *testing.T) {
	for _, tc := range []struct {
		name       string
		opts       Options
		wantDomain string
		wantStatus int
		wantCodes  []int64
	}{
		{name: "default team", wantDomain: "sim-team.cloudflareaccess.com"},
		{name: "chosen team", opts: Options{AccessTeam: "acme"}, wantDomain: "acme.cloudflareaccess.com"},
		{name: "no Zero Trust", opts: Options{NoAccessOrganization: true}, wantStatus: 403, wantCodes: []int64{9999}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newAccessFixture(t, tc.opts)
			org, err := f.zt.Organizations.List(ctx, zero_trust.OrganizationListParams{AccountID: cf.F(account)})
			if tc.wantStatus == 0 {
				if err != nil {
					t.Fatal(err)
				}
				if org.AuthDomain != tc.wantDomain || org.Name == "" {
					t.Errorf("organization %q %q, want auth domain %q and a name", org.Name, org.AuthDomain, tc.wantDomain)
				}
				return
			}
			status, codes := apiCodes(t, err)
			if status != tc.wantStatus || !cmp.Equal(codes, tc.wantCodes) {
				t.Errorf("organization: %d %v, want %d %v", status, codes, tc.wantStatus, tc.wantCodes)
			}
			// Without Zero Trust, every Access call is refused alike.
			_, err = f.zt.Access.Policies.New(ctx, zero_trust.AccessPolicyNewParams{AccountID: cf.F(account), Name: cf.F("p"), Decision: cf.F(zero_trust.DecisionAllow), Include: cf.F([]zero_trust.AccessRuleUnionParam{emailRule("a@b.c")})})
			if status, codes := apiCodes(t, err); status != tc.wantStatus || !cmp.Equal(codes, tc.wantCodes) {
				t.Errorf("policy create: %d %v, want %d %v", status, codes, tc.wantStatus, tc.wantCodes)
			}
			if ok, why := f.s.AccessDecision("app.example.com", "/", AccessIdentity{}); !ok || why != "no Access application" {
				t.Errorf("decision without Zero Trust: %v %q", ok, why)
			}
		})
	}
}

func TestAccessPolicyLifecycle(t *testing.T) {
	f := newAccessFixture(t, Options{})
	created, err := f.zt.Access.Policies.New(ctx, zero_trust.AccessPolicyNewParams{
		AccountID: cf.F(account), Name: cf.F("staff"), Decision: cf.F(zero_trust.DecisionAllow),
		Include: cf.F([]zero_trust.AccessRuleUnionParam{
			emailRule("ann@example.com"),
			zero_trust.DomainRuleParam{EmailDomain: cf.F(zero_trust.DomainRuleEmailDomainParam{Domain: cf.F("example.org")})},
		}),
		Exclude:         cf.F([]zero_trust.AccessRuleUnionParam{zero_trust.CountryRuleParam{Geo: cf.F(zero_trust.CountryRuleGeoParam{CountryCode: cf.F("RU")})}}),
		Require:         cf.F([]zero_trust.AccessRuleUnionParam{zero_trust.IPRuleParam{IP: cf.F(zero_trust.IPRuleIPParam{IP: cf.F("10.0.0.0/8")})}}),
		SessionDuration: cf.F("12h"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if !isUUID(created.ID) || created.Name != "staff" || created.Decision != zero_trust.DecisionAllow || created.SessionDuration != "12h" || !bool(created.Reusable) || created.AppCount != 0 {
		t.Errorf("created: %s", created.JSON.RawJSON())
	}
	got := [][]string{rules(created.Include), rules(created.Exclude), rules(created.Require)}
	if diff := cmp.Diff([][]string{{"email ann@example.com", "email_domain example.org"}, {"geo RU"}, {"ip 10.0.0.0/8"}}, got); diff != "" {
		t.Errorf("rules as the SDK reads them back -want +got:\n%s", diff)
	}
	if !created.CreatedAt.Equal(f.clock.Now()) || !created.UpdatedAt.Equal(f.clock.Now()) {
		t.Errorf("timestamps %s %s, want %s", created.CreatedAt, created.UpdatedAt, f.clock.Now())
	}

	f.clock.Add(time.Minute)
	updated, err := f.zt.Access.Policies.Update(ctx, created.ID, zero_trust.AccessPolicyUpdateParams{
		AccountID: cf.F(account), Name: cf.F("staff only"), Decision: cf.F(zero_trust.DecisionDeny),
		Include: cf.F([]zero_trust.AccessRuleUnionParam{zero_trust.EveryoneRuleParam{Everyone: cf.F(zero_trust.EveryoneRuleEveryoneParam{})}}),
	})
	if err != nil {
		t.Fatal(err)
	}
	// PUT replaces the whole policy.
	if updated.ID != created.ID || updated.Name != "staff only" || updated.Decision != zero_trust.DecisionDeny || len(updated.Include) != 1 || len(updated.Exclude) != 0 || len(updated.Require) != 0 ||
		!updated.CreatedAt.Equal(created.CreatedAt) || !updated.UpdatedAt.Equal(f.clock.Now()) {
		t.Errorf("updated: %s", updated.JSON.RawJSON())
	}
	read, err := f.zt.Access.Policies.Get(ctx, created.ID, zero_trust.AccessPolicyGetParams{AccountID: cf.F(account)})
	if err != nil || read.Name != "staff only" || !cmp.Equal(rules(read.Include), []string{"everyone"}) {
		t.Fatalf("get: %v %+v", err, read)
	}
	f.policy(t, "second", zero_trust.DecisionBypass, emailRule("b@example.com"))
	var names []string
	iter := f.zt.Access.Policies.ListAutoPaging(ctx, zero_trust.AccessPolicyListParams{AccountID: cf.F(account), PerPage: cf.F(int64(1))})
	for iter.Next() {
		names = append(names, iter.Current().Name)
	}
	if err := iter.Err(); err != nil || !cmp.Equal(names, []string{"staff only", "second"}) {
		t.Errorf("list one by one: %v %v", names, err)
	}
	del, err := f.zt.Access.Policies.Delete(ctx, created.ID, zero_trust.AccessPolicyDeleteParams{AccountID: cf.F(account)})
	if err != nil || del.ID != created.ID {
		t.Fatalf("delete: %v %+v", err, del)
	}
	_, err = f.zt.Access.Policies.Get(ctx, created.ID, zero_trust.AccessPolicyGetParams{AccountID: cf.F(account)})
	if status, codes := apiCodes(t, err); status != 404 || !cmp.Equal(codes, []int64{12135}) {
		t.Errorf("get after delete: %d %v", status, codes)
	}
	// The statuses Cloudflare's document declares: 201 to create, 202 to delete.
	st := f.s.Stats()
	if st["access_policies.create"].ByStatus[201] != 2 || st["access_policies.delete"].ByStatus[202] != 1 || st["access_policies.update"].ByStatus[200] != 1 {
		t.Errorf("stats: %+v", st)
	}
}

// TestAccessPolicyValidation: what Cloudflare refuses. These bodies break
// the schema on purpose, so they go around the contract checker.
func TestAccessPolicyValidation(t *testing.T) {
	f := newAccessFixture(t, Options{})
	grp := `{"name":"g","include":[{"everyone":{}}]}`
	r := call(t, f.srv, "POST", "/accounts/"+account+"/access/groups", token, grp)
	var g struct{ ID string }
	decodeResult(t, r, &g)
	path := "/client/v4/accounts/" + account + "/access/policies"
	for _, tc := range []struct {
		name, body string
		wantStatus int
		wantCode   int
	}{
		{"valid", `{"name":"p","decision":"allow","include":[{"email":{"email":"a@b.c"}}]}`, 201, 0},
		{"group that exists", `{"name":"p","decision":"allow","include":[{"group":{"id":"` + g.ID + `"}}]}`, 201, 0},
		{"empty include", `{"name":"p","decision":"allow","include":[]}`, 400, 1001},
		{"no include", `{"name":"p","decision":"allow"}`, 400, 1001},
		{"unknown decision", `{"name":"p","decision":"maybe","include":[{"everyone":{}}]}`, 400, 1001},
		{"no name", `{"decision":"allow","include":[{"everyone":{}}]}`, 400, 1001},
		{"not an email", `{"name":"p","decision":"allow","include":[{"email":{"email":"nobody"}}]}`, 400, 1001},
		{"not an ip", `{"name":"p","decision":"allow","include":[{"ip":{"ip":"10.0.0.300/8"}}]}`, 400, 1001},
		{"not a country", `{"name":"p","decision":"allow","include":[{"geo":{"country_code":"FRA"}}]}`, 400, 1001},
		{"two selectors in one rule", `{"name":"p","decision":"allow","include":[{"everyone":{},"email":{"email":"a@b.c"}}]}`, 400, 1001},
		{"unknown selector", `{"name":"p","decision":"allow","include":[{"astrology":{}}]}`, 400, 1001},
		{"selector without its field", `{"name":"p","decision":"allow","include":[{"okta":{"name":"eng"}}]}`, 400, 1001},
		{"unknown group", `{"name":"p","decision":"allow","include":[{"group":{"id":"00000000-0000-4000-8000-000000000000"}}]}`, 400, 12109},
		{"unknown service token", `{"name":"p","decision":"non_identity","include":[{"service_token":{"token_id":"00000000-0000-4000-8000-000000000000"}}]}`, 400, 1001},
		{"bad session duration", `{"name":"p","decision":"allow","include":[{"everyone":{}}],"session_duration":"1 day"}`, 400, 1001},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := call(t, f.srv, "POST", path, token, tc.body)
			var want []int
			if tc.wantCode != 0 {
				want = []int{tc.wantCode}
			}
			if r.Status != tc.wantStatus || !cmp.Equal(codes(r), want) {
				t.Errorf("%d %v, want %d %v", r.Status, codes(r), tc.wantStatus, want)
			}
		})
	}
}

func TestAccessApplicationLifecycle(t *testing.T) {
	f := newAccessFixture(t, Options{})
	allow := f.policy(t, "allow staff", zero_trust.DecisionAllow, emailRule("ann@example.com"))
	bypass := f.policy(t, "public health", zero_trust.DecisionBypass, zero_trust.EveryoneRuleParam{Everyone: cf.F(zero_trust.EveryoneRuleEveryoneParam{})})

	body := selfHosted("wiki", "wiki.example.com", link{allow.ID, 2}, link{bypass.ID, 1})
	body.SessionDuration = cf.F("8h")
	body.AllowedIdPs = cf.F([]zero_trust.AllowedIdPsParam{"699d98642c564d2e855e9661899b7252"})
	body.AutoRedirectToIdentity = cf.F(true)
	body.AppLauncherVisible = cf.F(false)
	body.Destinations = cf.F([]zero_trust.AccessApplicationNewParamsBodySelfHostedApplicationDestinationUnion{
		zero_trust.AccessApplicationNewParamsBodySelfHostedApplicationDestinationsPublicDestination{Type: cf.F(zero_trust.AccessApplicationNewParamsBodySelfHostedApplicationDestinationsPublicDestinationTypePublic), URI: cf.F("wiki.example.com")},
		zero_trust.AccessApplicationNewParamsBodySelfHostedApplicationDestinationsPublicDestination{Type: cf.F(zero_trust.AccessApplicationNewParamsBodySelfHostedApplicationDestinationsPublicDestinationTypePublic), URI: cf.F("docs.example.com/wiki")},
	})
	created, err := f.zt.Access.Applications.New(ctx, zero_trust.AccessApplicationNewParams{AccountID: cf.F(account), Body: body})
	if err != nil {
		t.Fatal(err)
	}
	if !isUUID(created.ID) || !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(created.AUD) {
		t.Errorf("id %q aud %q, want a UUID and 64 hex characters", created.ID, created.AUD)
	}
	if created.Name != "wiki" || created.Domain != "wiki.example.com" || created.Type != zero_trust.ApplicationTypeSelfHosted || created.SessionDuration != "8h" || !created.AutoRedirectToIdentity || created.AppLauncherVisible {
		t.Errorf("created: %s", created.JSON.RawJSON())
	}
	var shape struct {
		Destinations []accessDestination `json:"destinations"`
		AllowedIdPs  []string            `json:"allowed_idps"`
	}
	if err := json.Unmarshal([]byte(created.JSON.RawJSON()), &shape); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]accessDestination{{"public", "wiki.example.com"}, {"public", "docs.example.com/wiki"}}, shape.Destinations); diff != "" || len(shape.AllowedIdPs) != 1 {
		t.Errorf("destinations -want +got:\n%s; allowed_idps %v", diff, shape.AllowedIdPs)
	}
	// Linked policies come back whole, in precedence order.
	want := []appPolicyShape{{bypass.ID, "public health", "bypass", 1}, {allow.ID, "allow staff", "allow", 2}}
	if diff := cmp.Diff(want, appPolicies(t, created.JSON.RawJSON())); diff != "" {
		t.Errorf("policies -want +got:\n%s", diff)
	}
	if p, _ := f.zt.Access.Policies.Get(ctx, allow.ID, zero_trust.AccessPolicyGetParams{AccountID: cf.F(account)}); p.AppCount != 1 {
		t.Errorf("app_count %d, want 1", p.AppCount)
	}

	// A policy an application uses cannot be deleted.
	_, err = f.zt.Access.Policies.Delete(ctx, allow.ID, zero_trust.AccessPolicyDeleteParams{AccountID: cf.F(account)})
	if status, codes := apiCodes(t, err); status != 409 {
		t.Errorf("deleting a policy in use: %d %v, want 409", status, codes)
	}

	// PUT replaces the application; id and aud stay.
	f.clock.Add(time.Hour)
	upd := zero_trust.AccessApplicationUpdateParamsBodySelfHostedApplication{
		Name: cf.F("wiki 2"), Domain: cf.F("wiki.example.com"), Type: cf.F(zero_trust.ApplicationTypeSelfHosted),
		Policies: cf.F([]zero_trust.AccessApplicationUpdateParamsBodySelfHostedApplicationPolicyUnion{
			zero_trust.AccessApplicationUpdateParamsBodySelfHostedApplicationPoliciesAccessAppPolicyLink{ID: cf.F(bypass.ID), Precedence: cf.F(int64(1))},
		}),
	}
	updated, err := f.zt.Access.Applications.Update(ctx, created.ID, zero_trust.AccessApplicationUpdateParams{AccountID: cf.F(account), Body: upd})
	if err != nil {
		t.Fatal(err)
	}
	before, after := stamps(t, created.JSON.RawJSON()), stamps(t, updated.JSON.RawJSON())
	if updated.ID != created.ID || updated.AUD != created.AUD || updated.Name != "wiki 2" || updated.SessionDuration != "24h" || !updated.AppLauncherVisible || !after.UpdatedAt.Equal(f.clock.Now()) || !after.CreatedAt.Equal(before.CreatedAt) {
		t.Errorf("updated: %s", updated.JSON.RawJSON())
	}
	if got := appPolicies(t, updated.JSON.RawJSON()); len(got) != 1 || got[0].ID != bypass.ID {
		t.Errorf("policies after update: %+v", got)
	}
	// Unlinked, the policy can go.
	if _, err := f.zt.Access.Policies.Delete(ctx, allow.ID, zero_trust.AccessPolicyDeleteParams{AccountID: cf.F(account)}); err != nil {
		t.Errorf("deleting an unlinked policy: %v", err)
	}

	got, err := f.zt.Access.Applications.Get(ctx, created.ID, zero_trust.AccessApplicationGetParams{AccountID: cf.F(account)})
	if err != nil || got.AUD != created.AUD || got.Name != "wiki 2" {
		t.Fatalf("get: %v %+v", err, got)
	}
	other := f.app(t, "shop", "shop.example.com")
	for _, tc := range []struct {
		name   string
		params zero_trust.AccessApplicationListParams
		want   []string
	}{
		{"all", zero_trust.AccessApplicationListParams{}, []string{"wiki 2", "shop"}},
		{"name substring", zero_trust.AccessApplicationListParams{Name: cf.F("WIKI")}, []string{"wiki 2"}},
		{"exact name", zero_trust.AccessApplicationListParams{Name: cf.F("wiki"), Exact: cf.F(true)}, nil},
		{"domain", zero_trust.AccessApplicationListParams{Domain: cf.F("shop.example.com")}, []string{"shop"}},
		{"aud", zero_trust.AccessApplicationListParams{AUD: cf.F(other.AUD)}, []string{"shop"}},
		{"search", zero_trust.AccessApplicationListParams{Search: cf.F("wiki.example")}, []string{"wiki 2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.params.AccountID = cf.F(account)
			var names []string
			iter := f.zt.Access.Applications.ListAutoPaging(ctx, tc.params)
			for iter.Next() {
				names = append(names, iter.Current().Name)
			}
			if err := iter.Err(); err != nil || !cmp.Equal(names, tc.want) {
				t.Errorf("%v %v, want %v", names, err, tc.want)
			}
		})
	}
	if del, err := f.zt.Access.Applications.Delete(ctx, created.ID, zero_trust.AccessApplicationDeleteParams{AccountID: cf.F(account)}); err != nil || del.ID != created.ID {
		t.Fatalf("delete: %v %+v", err, del)
	}
	_, err = f.zt.Access.Applications.Get(ctx, created.ID, zero_trust.AccessApplicationGetParams{AccountID: cf.F(account)})
	if status, _ := apiCodes(t, err); status != 404 {
		t.Errorf("get after delete: %d", status)
	}
	st := f.s.Stats()
	if st["access_apps.create"].ByStatus[201] != 2 || st["access_apps.delete"].ByStatus[202] != 1 || st["access_apps.list"].Requests < 6 {
		t.Errorf("stats: %+v", st)
	}
}

// TestAccessApplicationRefusals: what an application create is refused
// for, through the SDK where the body is schema-valid.
func TestAccessApplicationRefusals(t *testing.T) {
	f := newAccessFixture(t, Options{})
	p := f.policy(t, "p", zero_trust.DecisionAllow, emailRule("a@b.c"))
	q := f.policy(t, "q", zero_trust.DecisionAllow, emailRule("a@b.c"))
	f.app(t, "taken", "taken.example.com", link{p.ID, 1})
	for _, tc := range []struct {
		name       string
		body       zero_trust.AccessApplicationNewParamsBodySelfHostedApplication
		wantStatus int
		wantCodes  []int64
	}{
		{"unknown policy", selfHosted("x", "x.example.com", link{"00000000-0000-4000-8000-000000000000", 1}), 400, []int64{1001}},
		{"precedence twice", selfHosted("x", "x.example.com", link{p.ID, 1}, link{q.ID, 1}), 400, []int64{1001}},
		{"policy twice", selfHosted("x", "x.example.com", link{p.ID, 1}, link{p.ID, 2}), 400, []int64{1001}},
		{"domain taken", selfHosted("again", "TAKEN.example.com"), 409, []int64{11010}},
		{"port in domain", selfHosted("x", "x.example.com:8443"), 400, []int64{1001}},
		{"auto redirect without one idp", func() zero_trust.AccessApplicationNewParamsBodySelfHostedApplication {
			b := selfHosted("x", "x.example.com")
			b.AutoRedirectToIdentity = cf.F(true)
			return b
		}(), 400, []int64{1001}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.zt.Access.Applications.New(ctx, zero_trust.AccessApplicationNewParams{AccountID: cf.F(account), Body: tc.body})
			if status, codes := apiCodes(t, err); status != tc.wantStatus || !cmp.Equal(codes, tc.wantCodes) {
				t.Errorf("%d %v, want %d %v", status, codes, tc.wantStatus, tc.wantCodes)
			}
		})
	}
	if n := len(f.s.Snapshot().Access.Applications); n != 1 {
		t.Errorf("%d applications after the refusals, want 1", n)
	}
	// Types the simulator does not serve are refused, not half-served.
	r := call(t, f.srv, "POST", "/accounts/"+account+"/access/apps", token, `{"type":"saas","name":"crm"}`)
	if r.Status != 400 {
		t.Errorf("a saas application: %d, want 400", r.Status)
	}
}

func TestAccessGroupLifecycle(t *testing.T) {
	f := newAccessFixture(t, Options{})
	created, err := f.zt.Access.Groups.New(ctx, zero_trust.AccessGroupNewParams{
		AccountID: cf.F(account), Name: cf.F("engineers"),
		Include: cf.F([]zero_trust.AccessRuleUnionParam{
			zero_trust.OktaGroupRuleParam{Okta: cf.F(zero_trust.OktaGroupRuleOktaParam{Name: cf.F("eng"), IdentityProviderID: cf.F("okta-1")})},
		}),
		Require: cf.F([]zero_trust.AccessRuleUnionParam{emailRule("ann@example.com")}),
	})
	if err != nil {
		t.Fatal(err)
	}
	if !isUUID(created.ID) || created.Name != "engineers" || !cmp.Equal(rules(created.Include), []string{"okta eng"}) || !cmp.Equal(rules(created.Require), []string{"email ann@example.com"}) {
		t.Errorf("created: %s", created.JSON.RawJSON())
	}
	f.policy(t, "engineers only", zero_trust.DecisionAllow, zero_trust.GroupRuleParam{Group: cf.F(zero_trust.GroupRuleGroupParam{ID: cf.F(created.ID)})})
	_, err = f.zt.Access.Groups.Delete(ctx, created.ID, zero_trust.AccessGroupDeleteParams{AccountID: cf.F(account)})
	if status, _ := apiCodes(t, err); status != 409 {
		t.Errorf("deleting a group a policy uses: %d, want 409", status)
	}
	updated, err := f.zt.Access.Groups.Update(ctx, created.ID, zero_trust.AccessGroupUpdateParams{
		AccountID: cf.F(account), Name: cf.F("all engineers"),
		Include: cf.F([]zero_trust.AccessRuleUnionParam{zero_trust.EveryoneRuleParam{Everyone: cf.F(zero_trust.EveryoneRuleEveryoneParam{})}}),
	})
	if err != nil || updated.ID != created.ID || updated.Name != "all engineers" || len(updated.Require) != 0 {
		t.Fatalf("update: %v %+v", err, updated)
	}
	got, err := f.zt.Access.Groups.Get(ctx, created.ID, zero_trust.AccessGroupGetParams{AccountID: cf.F(account)})
	if err != nil || got.Name != "all engineers" {
		t.Fatalf("get: %v %+v", err, got)
	}
	var names []string
	iter := f.zt.Access.Groups.ListAutoPaging(ctx, zero_trust.AccessGroupListParams{AccountID: cf.F(account), Name: cf.F("all engineers")})
	for iter.Next() {
		names = append(names, iter.Current().Name)
	}
	if err := iter.Err(); err != nil || !cmp.Equal(names, []string{"all engineers"}) {
		t.Errorf("list by name: %v %v", names, err)
	}
	other, err := f.zt.Access.Groups.New(ctx, zero_trust.AccessGroupNewParams{AccountID: cf.F(account), Name: cf.F("temp"), Include: cf.F([]zero_trust.AccessRuleUnionParam{emailRule("t@example.com")})})
	if err != nil {
		t.Fatal(err)
	}
	if del, err := f.zt.Access.Groups.Delete(ctx, other.ID, zero_trust.AccessGroupDeleteParams{AccountID: cf.F(account)}); err != nil || del.ID != other.ID {
		t.Errorf("delete an unused group: %v %+v", err, del)
	}
	_, err = f.zt.Access.Groups.Get(ctx, other.ID, zero_trust.AccessGroupGetParams{AccountID: cf.F(account)})
	if status, codes := apiCodes(t, err); status != 404 || !cmp.Equal(codes, []int64{12109}) {
		t.Errorf("get after delete: %d %v", status, codes)
	}
}

// TestServiceTokenSecretShownOnce: the secret is in the create and rotate
// answers only, never in a get, a list, an update, a delete or the
// simulator's state.
func TestServiceTokenSecretShownOnce(t *testing.T) {
	f := newAccessFixture(t, Options{})
	created, err := f.zt.Access.ServiceTokens.New(ctx, zero_trust.AccessServiceTokenNewParams{AccountID: cf.F(account), Name: cf.F("ci")})
	if err != nil {
		t.Fatal(err)
	}
	if !isUUID(created.ID) || !strings.HasSuffix(created.ClientID, ".access") || !scannableSecret.MatchString(created.ClientSecret) || created.Duration != "8760h" || !created.Enabled {
		t.Errorf("created: %s", created.JSON.RawJSON())
	}
	rotated, err := f.zt.Access.ServiceTokens.Rotate(ctx, created.ID, zero_trust.AccessServiceTokenRotateParams{AccountID: cf.F(account)})
	if err != nil || rotated.ClientSecret == "" || rotated.ClientSecret == created.ClientSecret || rotated.ClientID != created.ClientID {
		t.Fatalf("rotate: %v %s", err, rotated.JSON.RawJSON())
	}
	secrets := []string{created.ClientSecret, rotated.ClientSecret}
	var raws []string
	got, err := f.zt.Access.ServiceTokens.Get(ctx, created.ID, zero_trust.AccessServiceTokenGetParams{AccountID: cf.F(account)})
	if err != nil {
		t.Fatal(err)
	}
	raws = append(raws, got.JSON.RawJSON())
	iter := f.zt.Access.ServiceTokens.ListAutoPaging(ctx, zero_trust.AccessServiceTokenListParams{AccountID: cf.F(account)})
	for iter.Next() {
		raws = append(raws, iter.Current().JSON.RawJSON())
	}
	if err := iter.Err(); err != nil || len(raws) != 2 {
		t.Fatalf("list: %v, %d answers", err, len(raws))
	}
	upd, err := f.zt.Access.ServiceTokens.Update(ctx, created.ID, zero_trust.AccessServiceTokenUpdateParams{AccountID: cf.F(account), Name: cf.F("ci-2")})
	if err != nil || upd.Name != "ci-2" {
		t.Fatalf("update: %v %+v", err, upd)
	}
	raws = append(raws, upd.JSON.RawJSON())
	state, err := json.Marshal(f.s.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	raws = append(raws, string(state))
	del, err := f.zt.Access.ServiceTokens.Delete(ctx, created.ID, zero_trust.AccessServiceTokenDeleteParams{AccountID: cf.F(account)})
	if err != nil || del.ID != created.ID {
		t.Fatalf("delete: %v %+v", err, del)
	}
	raws = append(raws, del.JSON.RawJSON())
	for i, raw := range raws {
		for _, secret := range secrets {
			if strings.Contains(raw, secret) || strings.Contains(raw, "client_secret") {
				t.Errorf("answer %d shows a secret: %s", i, raw)
			}
		}
	}
	if st := f.s.Stats(); st["access_service_tokens.create"].ByStatus[201] != 1 || st["access_service_tokens.delete"].ByStatus[200] != 1 || st["access_service_tokens.rotate"].ByStatus[200] != 1 {
		t.Errorf("stats: %+v", st)
	}
}

func TestServiceTokenDurations(t *testing.T) {
	f := newAccessFixture(t, Options{})
	start := f.clock.Now()
	for _, tc := range []struct {
		duration    string
		wantExpires time.Time
	}{
		{"", start.Add(8760 * time.Hour)},
		{"60m", start.Add(time.Hour)},
		{"forever", time.Time{}},
	} {
		t.Run("duration="+tc.duration, func(t *testing.T) {
			params := zero_trust.AccessServiceTokenNewParams{AccountID: cf.F(account), Name: cf.F("t" + tc.duration)}
			if tc.duration != "" {
				params.Duration = cf.F(tc.duration)
			}
			created, err := f.zt.Access.ServiceTokens.New(ctx, params)
			if err != nil {
				t.Fatal(err)
			}
			got, err := f.zt.Access.ServiceTokens.Get(ctx, created.ID, zero_trust.AccessServiceTokenGetParams{AccountID: cf.F(account)})
			if err != nil || !got.ExpiresAt.Equal(tc.wantExpires) {
				t.Errorf("expires_at %s, want %s (%v)", got.ExpiresAt, tc.wantExpires, err)
			}
		})
	}
	created, err := f.zt.Access.ServiceTokens.New(ctx, zero_trust.AccessServiceTokenNewParams{AccountID: cf.F(account), Name: cf.F("refreshed"), Duration: cf.F("1h")})
	if err != nil {
		t.Fatal(err)
	}
	f.clock.Add(30 * time.Minute)
	refreshed, err := f.zt.Access.ServiceTokens.Refresh(ctx, created.ID, zero_trust.AccessServiceTokenRefreshParams{AccountID: cf.F(account)})
	if err != nil || !refreshed.ExpiresAt.Equal(f.clock.Now().Add(time.Hour)) {
		t.Errorf("refresh: expires_at %s, want %s (%v)", refreshed.ExpiresAt, f.clock.Now().Add(time.Hour), err)
	}
	r := call(t, f.srv, "POST", "/accounts/"+account+"/access/service_tokens", token, `{"name":"bad","duration":"a year"}`)
	if r.Status != 400 {
		t.Errorf("a bad duration: %d, want 400", r.Status)
	}
}

// TestAccessListsLagAndFaults: the Access lists obey ListLag (a GET by ID
// never lags) and the operations take injected faults by name.
func TestAccessListsLagAndFaults(t *testing.T) {
	f := newAccessFixture(t, Options{ListLag: 5 * time.Second})
	p := f.policy(t, "p", zero_trust.DecisionAllow, emailRule("a@b.c"))
	a := f.app(t, "a", "a.example.com", link{p.ID, 1})
	g, err := f.zt.Access.Groups.New(ctx, zero_trust.AccessGroupNewParams{AccountID: cf.F(account), Name: cf.F("g"), Include: cf.F([]zero_trust.AccessRuleUnionParam{emailRule("a@b.c")})})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := f.zt.Access.ServiceTokens.New(ctx, zero_trust.AccessServiceTokenNewParams{AccountID: cf.F(account), Name: cf.F("t")})
	if err != nil {
		t.Fatal(err)
	}
	base := "/client/v4/accounts/" + account + "/access/"
	kinds := []struct{ list, id string }{{"policies", p.ID}, {"apps", a.ID}, {"groups", g.ID}, {"service_tokens", tok.ID}}
	check := func(when string, wantListed bool) {
		t.Helper()
		for _, k := range kinds {
			if r := checkedCall(t, f.srv, "GET", strings.TrimPrefix(base, "/client/v4")+k.list+"/"+k.id, ""); r.Status != 200 {
				t.Errorf("%s: GET %s/%s: %d, want 200", when, k.list, k.id, r.Status)
			}
			ids := listed(t, f.srv, base+k.list, "id")
			if got := contains(ids, k.id); got != wantListed {
				t.Errorf("%s: %s lists %s: %v, want %v", when, k.list, k.id, got, wantListed)
			}
		}
	}
	check("just created", false)
	f.clock.Add(5 * time.Second)
	check("once the lag is over", true)

	f.s.FailNext("access_apps.list", 1)
	if r := call(t, f.srv, "GET", base+"apps", token, ""); r.Status != 500 {
		t.Errorf("an injected failure: %d, want 500", r.Status)
	}
	f.s.LoseNext("access_policies.create", 1)
	if r := call(t, f.srv, "POST", base+"policies", token, `{"name":"lost","decision":"allow","include":[{"everyone":{}}]}`); r.Status != 500 {
		t.Errorf("a lost response: %d, want 500", r.Status)
	}
	if n := len(f.s.Snapshot().Access.Policies); n != 2 {
		t.Errorf("the write behind the lost response: %d policies, want 2", n)
	}
	if got := f.s.Served("GET", "/access/apps$"); got < 3 {
		t.Errorf("Served(GET, /access/apps$) = %d", got)
	}
}
