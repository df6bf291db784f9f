package sim

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"time"
)

// Cloudflare Access, account scoped: the Zero Trust organization, reusable
// policies, Access groups, self-hosted applications and service tokens, at
// the paths and with the statuses of Cloudflare's OpenAPI document
// (creates 201, deletes 202, a service token's delete 200).
//
// Error answers. Access's own codes are not documented; where third-party
// code quotes a real answer it is used, otherwise the code is a GUESS:
//   - no Zero Trust organization: 403, code 9999
//     "access.api.error.not_enabled" (quoted by third-party error handlers);
//   - an unknown object: 404, code 12135 "access.api.error.not_found", an
//     unknown group 404, code 12109 "access.api.error.group_not_found"
//     (third-party test fixtures);
//   - a second application on a domain: 409, code 11010
//     "access.api.error.application_already_exists" (third-party retry
//     logic); which domains collide is a GUESS (any shared public
//     destination);
//   - a reusable policy still used by an application: 409 (a
//     terraform-provider-cloudflare pull request retries exactly that
//     409); the code, 1014, is a GUESS;
//   - an Access group still used by a policy or group: 409, 1014, a GUESS
//     made by analogy with policies;
//   - a body Cloudflare would refuse: 400, code 1001, the simulator's
//     usual GUESS; a bad page or per_page: 400, code 12091
//     "access.api.error.invalid_url_parameter_value" (third-party note).

type accessState struct {
	org      *accessOrganization
	policies []*accessPolicy
	groups   []*accessGroup
	apps     []*accessApp
	tokens   []*serviceToken
	// issued is every client secret ever made, for tests that look for
	// one where it must never be.
	issued []string
}

type accessRoute struct {
	pattern, op string
	status      int
	fn          handlerFn
}

func (s *Server) accessRoutes() []accessRoute {
	const acc = "/accounts/{account_id}/access"
	created, accepted, ok := http.StatusCreated, http.StatusAccepted, http.StatusOK
	return []accessRoute{
		{"GET " + acc + "/organizations", "access_organizations.get", ok, s.getAccessOrganization},
		{"POST " + acc + "/policies", "access_policies.create", created, s.createAccessPolicy},
		{"GET " + acc + "/policies", "access_policies.list", ok, s.listAccessPolicies},
		{"GET " + acc + "/policies/{policy_id}", "access_policies.get", ok, s.getAccessPolicy},
		{"PUT " + acc + "/policies/{policy_id}", "access_policies.update", ok, s.updateAccessPolicy},
		{"DELETE " + acc + "/policies/{policy_id}", "access_policies.delete", accepted, s.deleteAccessPolicy},
		{"POST " + acc + "/groups", "access_groups.create", created, s.createAccessGroup},
		{"GET " + acc + "/groups", "access_groups.list", ok, s.listAccessGroups},
		{"GET " + acc + "/groups/{group_id}", "access_groups.get", ok, s.getAccessGroup},
		{"PUT " + acc + "/groups/{group_id}", "access_groups.update", ok, s.updateAccessGroup},
		{"DELETE " + acc + "/groups/{group_id}", "access_groups.delete", accepted, s.deleteAccessGroup},
		{"POST " + acc + "/apps", "access_apps.create", created, s.createAccessApp},
		{"GET " + acc + "/apps", "access_apps.list", ok, s.listAccessApps},
		{"GET " + acc + "/apps/{app_id}", "access_apps.get", ok, s.getAccessApp},
		{"PUT " + acc + "/apps/{app_id}", "access_apps.update", ok, s.updateAccessApp},
		{"DELETE " + acc + "/apps/{app_id}", "access_apps.delete", accepted, s.deleteAccessApp},
		{"POST " + acc + "/service_tokens", "access_service_tokens.create", created, s.createServiceToken},
		{"GET " + acc + "/service_tokens", "access_service_tokens.list", ok, s.listServiceTokens},
		{"GET " + acc + "/service_tokens/{service_token_id}", "access_service_tokens.get", ok, s.getServiceToken},
		{"PUT " + acc + "/service_tokens/{service_token_id}", "access_service_tokens.update", ok, s.updateServiceToken},
		{"DELETE " + acc + "/service_tokens/{service_token_id}", "access_service_tokens.delete", ok, s.deleteServiceToken},
		{"POST " + acc + "/service_tokens/{service_token_id}/rotate", "access_service_tokens.rotate", ok, s.rotateServiceToken},
		{"POST " + acc + "/service_tokens/{service_token_id}/refresh", "access_service_tokens.refresh", ok, s.refreshServiceToken},
	}
}

// accessEnabled is every Access handler's first check: without a Zero
// Trust organization, every Access call is refused.
func (s *Server) accessEnabled() *apiError {
	if s.access.org == nil {
		return errf(http.StatusForbidden, 9999, "access.api.error.not_enabled: Access is not enabled. Set up Zero Trust for this account first.")
	}
	return nil
}

func accessNotFound(what, id string) *apiError {
	return errf(http.StatusNotFound, 12135, "access.api.error.not_found: %s %s not found", what, id)
}

func accessInvalid(format string, args ...any) *apiError {
	return errf(http.StatusBadRequest, 1001, "access.api.error.invalid_request: "+format, args...)
}

// accessPage pages a list with Access's bounds; per_page has no minimum in
// the document, 1 is the least that makes sense.
func accessPage[T any](r *http.Request, items []T, defPer int) ([]T, *resultInfo, *apiError) {
	page, info, err := paginate(r, items, 1, 1000, defPer, true)
	if err != nil {
		return nil, nil, errf(http.StatusBadRequest, 12091, "access.api.error.invalid_url_parameter_value: %s", err.msg)
	}
	return page, info, nil
}

// --- organization -------------------------------------------------------------

type accessOrganization struct {
	Name                     string    `json:"name"`
	AuthDomain               string    `json:"auth_domain"`
	SessionDuration          string    `json:"session_duration"`
	AutoRedirectToIdentity   bool      `json:"auto_redirect_to_identity"`
	AllowAuthenticateViaWARP bool      `json:"allow_authenticate_via_warp"`
	IsUIReadOnly             bool      `json:"is_ui_read_only"`
	CreatedAt                time.Time `json:"created_at"`
	UpdatedAt                time.Time `json:"updated_at"`
	// StrictServiceTokenAuth and ServiceTokenInactivity: see
	// access_tokens.go (SetStrictServiceTokenAuth,
	// SetServiceTokenInactivity).
	StrictServiceTokenAuth bool                   `json:"strict_service_token_auth"`
	ServiceTokenInactivity ServiceTokenInactivity `json:"service_token_inactivity"`
}

// newAccessOrganization is the organization Zero Trust onboarding leaves,
// made at created: the team name becomes both the name and the auth
// domain's subdomain (the name is a GUESS; onboarding asks only for the
// team name), with Access's default 24h session, and the service-token
// settings an organization of that date starts with
// (newOrganizationTokenSettings).
func newAccessOrganization(team string, created time.Time) *accessOrganization {
	o := &accessOrganization{Name: team, AuthDomain: team + ".cloudflareaccess.com", SessionDuration: "24h", CreatedAt: created, UpdatedAt: created}
	o.StrictServiceTokenAuth, o.ServiceTokenInactivity = newOrganizationTokenSettings(created)
	return o
}

func (s *Server) getAccessOrganization(_ *http.Request, _ []byte) (any, any, *apiError) {
	if err := s.accessEnabled(); err != nil {
		return nil, nil, err
	}
	o := *s.access.org
	return &o, nil, nil
}

// --- rules --------------------------------------------------------------------

// accessRule is one selector of an include, exclude or require list. It is
// answered back as it was sent.
type accessRule struct {
	kind string
	body ruleBody
	raw  json.RawMessage
}

// ruleBody holds every field the evaluated selectors have.
type ruleBody struct {
	Email              string `json:"email"`
	Domain             string `json:"domain"`
	IP                 string `json:"ip"`
	CountryCode        string `json:"country_code"`
	ID                 string `json:"id"`
	TokenID            string `json:"token_id"`
	Name               string `json:"name"`
	Team               string `json:"team"`
	AttributeName      string `json:"attribute_name"`
	AttributeValue     string `json:"attribute_value"`
	ClaimName          string `json:"claim_name"`
	ClaimValue         string `json:"claim_value"`
	IdentityProviderID string `json:"identity_provider_id"`
}

func (r accessRule) MarshalJSON() ([]byte, error) { return r.raw, nil }

// ruleKinds are the selectors of Cloudflare's access_rule schema with the
// fields each requires. Those the simulator evaluates are listed in
// accessRuleMatches; the others are stored and never match.
var ruleKinds = map[string][]string{
	"group":                     {"id"},
	"any_valid_service_token":   nil,
	"auth_context":              {"ac_id", "id", "identity_provider_id"},
	"auth_method":               {"auth_method"},
	"azureAD":                   {"id", "identity_provider_id"},
	"certificate":               nil,
	"common_name":               {"common_name"},
	"geo":                       {"country_code"},
	"device_posture":            {"integration_uid"},
	"email_domain":              {"domain"},
	"email_list":                {"id"},
	"email":                     {"email"},
	"everyone":                  nil,
	"external_evaluation":       {"evaluate_url", "keys_url"},
	"github-organization":       {"identity_provider_id", "name"},
	"gsuite":                    {"email", "identity_provider_id"},
	"login_method":              {"id"},
	"ip_list":                   {"id"},
	"ip":                        {"ip"},
	"okta":                      {"identity_provider_id", "name"},
	"saml":                      {"attribute_name", "attribute_value", "identity_provider_id"},
	"oidc":                      {"claim_name", "claim_value", "identity_provider_id"},
	"service_token":             {"token_id"},
	"linked_app_token":          {"app_uid"},
	"user_risk_score":           {"user_risk_score"},
	"cloudflare_account_member": nil,
}

// parseRules checks one rule list. Rules naming an Access group or a
// service token must name one that exists (a GUESS: Cloudflare's answer to
// a dangling reference is undocumented; refusing it catches typos that
// would otherwise lock everyone out silently).
func (s *Server) parseRules(field string, raws []json.RawMessage) ([]accessRule, *apiError) {
	out := []accessRule{}
	for i, raw := range raws {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil || len(m) != 1 {
			return nil, accessInvalid("%s[%d] must be an object with exactly one selector", field, i)
		}
		var kind string
		for k := range m {
			kind = k
		}
		required, known := ruleKinds[kind]
		if !known {
			return nil, accessInvalid("%s[%d]: unknown selector %q", field, i, kind)
		}
		var inner map[string]json.RawMessage
		if err := json.Unmarshal(m[kind], &inner); err != nil || inner == nil {
			return nil, accessInvalid("%s[%d].%s must be an object", field, i, kind)
		}
		for _, f := range required {
			v, ok := inner[f]
			if !ok || string(v) == `""` || string(v) == "null" {
				return nil, accessInvalid("%s[%d].%s.%s is required", field, i, kind, f)
			}
		}
		rule := accessRule{kind: kind, raw: append(json.RawMessage(nil), raw...)}
		// Only string fields are read back; a non-string (user_risk_score's
		// list) leaves them empty.
		_ = json.Unmarshal(m[kind], &rule.body)
		b := rule.body
		switch kind {
		case "email":
			if at := strings.LastIndexByte(b.Email, '@'); at <= 0 || at == len(b.Email)-1 {
				return nil, accessInvalid("%s[%d].email.email %q is not an email address", field, i, b.Email)
			}
		case "email_domain":
			if strings.TrimPrefix(b.Domain, "@") == "" {
				return nil, accessInvalid("%s[%d].email_domain.domain is empty", field, i)
			}
		case "ip":
			if _, ok := parseIPRule(b.IP); !ok {
				return nil, accessInvalid("%s[%d].ip.ip %q is not an IP address or CIDR block", field, i, b.IP)
			}
		case "geo":
			if len(b.CountryCode) != 2 {
				return nil, accessInvalid("%s[%d].geo.country_code %q is not a two-letter country code", field, i, b.CountryCode)
			}
		case "group":
			if s.accessGroupByID(b.ID) == nil {
				return nil, errf(http.StatusBadRequest, 12109, "access.api.error.group_not_found: %s[%d] names group %s, which does not exist", field, i, b.ID)
			}
		case "service_token":
			if s.serviceTokenByID(b.TokenID) == nil {
				return nil, accessInvalid("%s[%d] names service token %s, which does not exist", field, i, b.TokenID)
			}
		}
		out = append(out, rule)
	}
	return out, nil
}

// parseIPRule reads an ip selector: a CIDR block, or one address (a GUESS
// that Cloudflare takes it as a /32 or /128).
func parseIPRule(v string) (netip.Prefix, bool) {
	if p, err := netip.ParsePrefix(v); err == nil {
		return p.Masked(), true
	}
	if a, err := netip.ParseAddr(v); err == nil {
		return netip.PrefixFrom(a, a.BitLen()), true
	}
	return netip.Prefix{}, false
}

// ruleSets are the include, exclude and require lists of a policy or group.
type ruleSets struct {
	Include []accessRule `json:"include"`
	Exclude []accessRule `json:"exclude"`
	Require []accessRule `json:"require"`
}

func (s *Server) parseRuleSets(include, exclude, require []json.RawMessage) (ruleSets, *apiError) {
	var rs ruleSets
	var err *apiError
	// Access documents that every policy needs at least one Include rule:
	// it is the pool Require and Exclude narrow down.
	if len(include) == 0 {
		return rs, accessInvalid("include must hold at least one rule")
	}
	if rs.Include, err = s.parseRules("include", include); err != nil {
		return rs, err
	}
	if rs.Exclude, err = s.parseRules("exclude", exclude); err != nil {
		return rs, err
	}
	if rs.Require, err = s.parseRules("require", require); err != nil {
		return rs, err
	}
	return rs, nil
}

func (rs ruleSets) uses(kind, id string) bool {
	for _, list := range [][]accessRule{rs.Include, rs.Exclude, rs.Require} {
		for _, r := range list {
			if r.kind == kind && (r.body.ID == id || r.body.TokenID == id) {
				return true
			}
		}
	}
	return false
}

// checkDuration validates Access's duration strings: Go's syntax, with the
// units the document lists (ns, us or µs, ms, s, m, h).
func checkDuration(field, v string) *apiError {
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return accessInvalid("%s %q must be a duration such as 300ms or 2h45m", field, v)
	}
	return nil
}

// extras keeps the optional fields of an object that the simulator does
// not act on, so that they are answered back as they were sent; keys the
// object's schema does not have are dropped, as a GUESS of what Cloudflare
// does with them.
type extras map[string]json.RawMessage

func pickExtras(all map[string]json.RawMessage, allowed []string) extras {
	out := extras{}
	for _, k := range allowed {
		if v, ok := all[k]; ok && string(v) != "null" {
			out[k] = v
		}
	}
	return out
}

// marshalWith marshals v and merges extra keys into the object.
func marshalWith(v any, ex extras) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil || len(ex) == 0 {
		return b, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	for k, x := range ex {
		if _, set := m[k]; !set {
			m[k] = x
		}
	}
	return json.Marshal(m)
}

// --- reusable policies ----------------------------------------------------------

var accessDecisions = []string{"allow", "deny", "non_identity", "bypass"}

type accessPolicy struct {
	ID              string `json:"id"`
	Name            string `json:"name"`
	Decision        string `json:"decision"`
	SessionDuration string `json:"session_duration"`
	ruleSets
	AppCount  int       `json:"app_count"`
	Reusable  bool      `json:"reusable"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	extra     extras
}

var policyExtraKeys = []string{"approval_groups", "approval_required", "connection_rules", "isolation_required", "mfa_config", "purpose_justification_prompt", "purpose_justification_required"}

func (p accessPolicy) MarshalJSON() ([]byte, error) {
	type plain accessPolicy
	return marshalWith(plain(p), p.extra)
}

func (s *Server) accessPolicyByID(id string) *accessPolicy {
	for _, p := range s.access.policies {
		if p.ID == id {
			return p
		}
	}
	return nil
}

func (s *Server) findAccessPolicy(r *http.Request) (*accessPolicy, int, *apiError) {
	if err := s.accessEnabled(); err != nil {
		return nil, -1, err
	}
	id := r.PathValue("policy_id")
	if !isUUID(id) {
		return nil, -1, badID(r)
	}
	for i, p := range s.access.policies {
		if p.ID == id {
			return p, i, nil
		}
	}
	return nil, -1, accessNotFound("policy", id)
}

// policyView is a policy as answered: with the number of applications
// using it now.
func (s *Server) policyView(p *accessPolicy) accessPolicy {
	v := *p
	v.AppCount = 0
	for _, a := range s.access.apps {
		for _, l := range a.policies {
			if l.id == p.ID {
				v.AppCount++
			}
		}
	}
	return v
}

// parseAccessPolicy validates a policy body; PUT replaces the whole policy.
func (s *Server) parseAccessPolicy(body []byte) (*accessPolicy, *apiError) {
	var all map[string]json.RawMessage
	if err := decodeBody(body, &all); err != nil {
		return nil, err
	}
	var in struct {
		Name            string            `json:"name"`
		Decision        string            `json:"decision"`
		Include         []json.RawMessage `json:"include"`
		Exclude         []json.RawMessage `json:"exclude"`
		Require         []json.RawMessage `json:"require"`
		SessionDuration *string           `json:"session_duration"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, accessInvalid("malformed policy: %v", err)
	}
	if strings.TrimSpace(in.Name) == "" {
		return nil, accessInvalid("name is required")
	}
	if !slices.Contains(accessDecisions, in.Decision) {
		return nil, accessInvalid("decision must be one of %s", strings.Join(accessDecisions, ", "))
	}
	rs, err := s.parseRuleSets(in.Include, in.Exclude, in.Require)
	if err != nil {
		return nil, err
	}
	// GUESS: a policy without a session duration issues tokens for
	// Access's default 24h.
	sd := "24h"
	if in.SessionDuration != nil {
		if err := checkDuration("session_duration", *in.SessionDuration); err != nil {
			return nil, err
		}
		sd = *in.SessionDuration
	}
	return &accessPolicy{Name: in.Name, Decision: in.Decision, SessionDuration: sd, ruleSets: rs, Reusable: true, extra: pickExtras(all, policyExtraKeys)}, nil
}

func (s *Server) createAccessPolicy(_ *http.Request, body []byte) (any, any, *apiError) {
	if err := s.accessEnabled(); err != nil {
		return nil, nil, err
	}
	p, err := s.parseAccessPolicy(body)
	if err != nil {
		return nil, nil, err
	}
	p.ID, p.CreatedAt, p.UpdatedAt = newUUID(), s.now(), s.now()
	s.access.policies = append(s.access.policies, p)
	return s.policyView(p), nil, nil
}

func (s *Server) listAccessPolicies(r *http.Request, _ []byte) (any, any, *apiError) {
	if err := s.accessEnabled(); err != nil {
		return nil, nil, err
	}
	out := []accessPolicy{}
	for _, p := range s.access.policies {
		if s.listable(p.CreatedAt) {
			out = append(out, s.policyView(p))
		}
	}
	return pageOrErr(accessPage(r, out, 100))
}

func pageOrErr[T any](page []T, info *resultInfo, err *apiError) (any, any, *apiError) {
	if err != nil {
		return nil, nil, err
	}
	return page, info, nil
}

func (s *Server) getAccessPolicy(r *http.Request, _ []byte) (any, any, *apiError) {
	p, _, err := s.findAccessPolicy(r)
	if err != nil {
		return nil, nil, err
	}
	return s.policyView(p), nil, nil
}

func (s *Server) updateAccessPolicy(r *http.Request, body []byte) (any, any, *apiError) {
	old, i, err := s.findAccessPolicy(r)
	if err != nil {
		return nil, nil, err
	}
	p, err := s.parseAccessPolicy(body)
	if err != nil {
		return nil, nil, err
	}
	p.ID, p.CreatedAt, p.UpdatedAt = old.ID, old.CreatedAt, s.now()
	s.access.policies[i] = p
	return s.policyView(p), nil, nil
}

// deleteAccessPolicy refuses a policy an application still uses (409; see
// the file comment for the evidence): applications must drop it first.
func (s *Server) deleteAccessPolicy(r *http.Request, _ []byte) (any, any, *apiError) {
	p, i, err := s.findAccessPolicy(r)
	if err != nil {
		return nil, nil, err
	}
	for _, a := range s.access.apps {
		for _, l := range a.policies {
			if l.id == p.ID {
				return nil, nil, errf(http.StatusConflict, 1014, "access.api.error.conflict: policy %s is used by application %s (%s); remove it from the application first", p.ID, a.ID, a.Name)
			}
		}
	}
	s.access.policies = slices.Delete(s.access.policies, i, i+1)
	return map[string]string{"id": p.ID}, nil, nil
}

// --- Access groups ----------------------------------------------------------------

// accessGroup is an Access group. A request's is_default is taken and not
// answered: the document's response schema (and the SDK) type is_default
// as a rule list, which contradicts the boolean the request takes, so no
// answer could satisfy both.
type accessGroup struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	ruleSets
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

func (s *Server) accessGroupByID(id string) *accessGroup {
	for _, g := range s.access.groups {
		if g.ID == id {
			return g
		}
	}
	return nil
}

func (s *Server) findAccessGroup(r *http.Request) (*accessGroup, int, *apiError) {
	if err := s.accessEnabled(); err != nil {
		return nil, -1, err
	}
	id := r.PathValue("group_id")
	if !isUUID(id) {
		return nil, -1, badID(r)
	}
	for i, g := range s.access.groups {
		if g.ID == id {
			return g, i, nil
		}
	}
	return nil, -1, errf(http.StatusNotFound, 12109, "access.api.error.group_not_found: group %s not found", id)
}

func (s *Server) parseAccessGroup(body []byte) (*accessGroup, *apiError) {
	var in struct {
		Name    string            `json:"name"`
		Include []json.RawMessage `json:"include"`
		Exclude []json.RawMessage `json:"exclude"`
		Require []json.RawMessage `json:"require"`
	}
	if err := decodeBody(body, &in); err != nil {
		return nil, err
	}
	if strings.TrimSpace(in.Name) == "" {
		return nil, accessInvalid("name is required")
	}
	rs, err := s.parseRuleSets(in.Include, in.Exclude, in.Require)
	if err != nil {
		return nil, err
	}
	return &accessGroup{Name: in.Name, ruleSets: rs}, nil
}

func (s *Server) createAccessGroup(_ *http.Request, body []byte) (any, any, *apiError) {
	if err := s.accessEnabled(); err != nil {
		return nil, nil, err
	}
	g, err := s.parseAccessGroup(body)
	if err != nil {
		return nil, nil, err
	}
	g.ID, g.CreatedAt, g.UpdatedAt = newUUID(), s.now(), s.now()
	s.access.groups = append(s.access.groups, g)
	return g, nil, nil
}

// listAccessGroups filters by exact name (GUESS: the document says only
// "the name of the group") and by search, a case-insensitive substring of
// the name (GUESS).
func (s *Server) listAccessGroups(r *http.Request, _ []byte) (any, any, *apiError) {
	if err := s.accessEnabled(); err != nil {
		return nil, nil, err
	}
	q := r.URL.Query()
	out := []*accessGroup{}
	for _, g := range s.access.groups {
		if !s.listable(g.CreatedAt) {
			continue
		}
		if v := q.Get("name"); v != "" && g.Name != v {
			continue
		}
		if v := q.Get("search"); v != "" && !containsFold(g.Name, v) {
			continue
		}
		out = append(out, g)
	}
	return pageOrErr(accessPage(r, out, 1000))
}

func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}

func (s *Server) getAccessGroup(r *http.Request, _ []byte) (any, any, *apiError) {
	g, _, err := s.findAccessGroup(r)
	return g, nil, err
}

func (s *Server) updateAccessGroup(r *http.Request, body []byte) (any, any, *apiError) {
	old, i, err := s.findAccessGroup(r)
	if err != nil {
		return nil, nil, err
	}
	g, err := s.parseAccessGroup(body)
	if err != nil {
		return nil, nil, err
	}
	g.ID, g.CreatedAt, g.UpdatedAt = old.ID, old.CreatedAt, s.now()
	s.access.groups[i] = g
	return g, nil, nil
}

// deleteAccessGroup refuses a group that a policy or another group names
// (GUESS, by analogy with reusable policies): the rule would otherwise
// silently stop matching anyone.
func (s *Server) deleteAccessGroup(r *http.Request, _ []byte) (any, any, *apiError) {
	g, i, err := s.findAccessGroup(r)
	if err != nil {
		return nil, nil, err
	}
	for _, p := range s.access.policies {
		if p.uses("group", g.ID) {
			return nil, nil, errf(http.StatusConflict, 1014, "access.api.error.conflict: group %s is used by policy %s (%s)", g.ID, p.ID, p.Name)
		}
	}
	for _, o := range s.access.groups {
		if o != g && o.uses("group", g.ID) {
			return nil, nil, errf(http.StatusConflict, 1014, "access.api.error.conflict: group %s is used by group %s (%s)", g.ID, o.ID, o.Name)
		}
	}
	s.access.groups = slices.Delete(s.access.groups, i, i+1)
	return map[string]string{"id": g.ID}, nil, nil
}

// --- applications -------------------------------------------------------------------

type accessDestination struct {
	Type string `json:"type"`
	URI  string `json:"uri"`
}

// appPolicyLink is a reusable policy linked to an application.
type appPolicyLink struct {
	id         string
	precedence int
}

type accessApp struct {
	ID                     string              `json:"id"`
	AUD                    string              `json:"aud"`
	Name                   string              `json:"name"`
	Type                   string              `json:"type"`
	Domain                 string              `json:"domain"`
	Destinations           []accessDestination `json:"destinations"`
	SelfHostedDomains      []string            `json:"self_hosted_domains"`
	SessionDuration        string              `json:"session_duration"`
	AllowedIdPs            []string            `json:"allowed_idps"`
	AutoRedirectToIdentity bool                `json:"auto_redirect_to_identity"`
	AppLauncherVisible     bool                `json:"app_launcher_visible"`
	CreatedAt              time.Time           `json:"created_at"`
	UpdatedAt              time.Time           `json:"updated_at"`
	policies               []appPolicyLink
	extra                  extras
}

var appExtraKeys = []string{
	"allow_authenticate_via_warp", "allow_iframe", "cors_headers", "custom_deny_message", "custom_deny_url",
	"custom_non_identity_deny_url", "custom_pages", "eager_redirect_cookie_setting", "enable_binding_cookie",
	"http_only_cookie_attribute", "logo_url", "mfa_config", "oauth_configuration", "options_preflight_bypass",
	"path_cookie_attribute", "read_service_tokens_from_header", "same_site_cookie_attribute", "scim_config",
	"service_auth_401_redirect", "skip_interstitial", "tags", "use_clientless_isolation_app_launcher_url",
}

// appPolicyView is a linked policy as an application answers it: the whole
// policy, with the link's precedence.
type appPolicyView struct {
	accessPolicy
	Precedence int `json:"precedence"`
}

func (v appPolicyView) MarshalJSON() ([]byte, error) {
	b, err := v.accessPolicy.MarshalJSON()
	if err != nil {
		return nil, err
	}
	p, _ := json.Marshal(v.Precedence)
	return marshalWith(json.RawMessage(b), extras{"precedence": p})
}

type accessAppView struct {
	*accessApp
	Policies []appPolicyView `json:"policies"`
}

func (v accessAppView) MarshalJSON() ([]byte, error) {
	type plain accessApp
	b, err := marshalWith(plain(*v.accessApp), v.extra)
	if err != nil {
		return nil, err
	}
	p, err := json.Marshal(v.Policies)
	if err != nil {
		return nil, err
	}
	return marshalWith(json.RawMessage(b), extras{"policies": p})
}

func (s *Server) appView(a *accessApp) accessAppView {
	v := accessAppView{accessApp: a, Policies: []appPolicyView{}}
	for _, l := range a.policies {
		if p := s.accessPolicyByID(l.id); p != nil {
			v.Policies = append(v.Policies, appPolicyView{accessPolicy: s.policyView(p), Precedence: l.precedence})
		}
	}
	return v
}

// findAccessApp takes an application's UUID or its aud: the document's
// app_id is either an identifier or a UUID.
func (s *Server) findAccessApp(r *http.Request) (*accessApp, int, *apiError) {
	if err := s.accessEnabled(); err != nil {
		return nil, -1, err
	}
	id := r.PathValue("app_id")
	if !isUUID(id) && !isHex32(id) {
		return nil, -1, badID(r)
	}
	for i, a := range s.access.apps {
		if a.ID == id {
			return a, i, nil
		}
	}
	return nil, -1, accessNotFound("application", id)
}

// splitDestination splits "host/path" as Access reads a self-hosted
// domain or public destination: the host lower-cased, the path as given.
func splitDestination(uri string) (host, path string) {
	host, path, _ = strings.Cut(uri, "/")
	if path != "" {
		path = "/" + path
	}
	return strings.ToLower(host), strings.TrimSuffix(path, "/")
}

func checkDestination(field, uri string) *apiError {
	if strings.Contains(uri, "://") {
		// GUESS: Access takes destinations without a scheme.
		return accessInvalid("%s %q must be a hostname and optional path, without a scheme", field, uri)
	}
	host, _ := splitDestination(uri)
	if host == "" {
		return accessInvalid("%s %q has no hostname", field, uri)
	}
	// Access does not support port numbers in application URLs.
	if strings.Contains(host, ":") {
		return accessInvalid("%s %q: Access does not support ports", field, uri)
	}
	return nil
}

// parseAccessApp validates an application body; PUT replaces the whole
// application. Only self-hosted applications are simulated.
func (s *Server) parseAccessApp(body []byte, self *accessApp) (*accessApp, *apiError) {
	var all map[string]json.RawMessage
	if err := decodeBody(body, &all); err != nil {
		return nil, err
	}
	var in struct {
		Name                   string            `json:"name"`
		Type                   string            `json:"type"`
		Domain                 string            `json:"domain"`
		Destinations           []json.RawMessage `json:"destinations"`
		SelfHostedDomains      []string          `json:"self_hosted_domains"`
		SessionDuration        *string           `json:"session_duration"`
		AllowedIdPs            []string          `json:"allowed_idps"`
		AutoRedirectToIdentity bool              `json:"auto_redirect_to_identity"`
		AppLauncherVisible     *bool             `json:"app_launcher_visible"`
		Policies               []json.RawMessage `json:"policies"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, accessInvalid("malformed application: %v", err)
	}
	switch in.Type {
	case "self_hosted":
	case "":
		return nil, accessInvalid("type is required")
	case "saas", "ssh", "vnc", "app_launcher", "warp", "biso", "bookmark", "dash_sso", "infrastructure", "rdp", "mcp", "mcp_portal", "proxy_endpoint":
		return nil, accessInvalid("the simulator serves only self_hosted applications, not %s", in.Type)
	default:
		return nil, accessInvalid("type %q is not an application type", in.Type)
	}
	if in.Domain == "" {
		return nil, accessInvalid("domain is required for a self_hosted application")
	}
	if err := checkDestination("domain", in.Domain); err != nil {
		return nil, err
	}
	a := &accessApp{
		Name: in.Name, Type: in.Type, Domain: in.Domain, SessionDuration: "24h",
		AllowedIdPs: []string{}, SelfHostedDomains: []string{}, Destinations: []accessDestination{},
		AutoRedirectToIdentity: in.AutoRedirectToIdentity, AppLauncherVisible: true,
		extra: pickExtras(all, appExtraKeys),
	}
	// GUESS: an application without a name is named after its domain, as
	// the dashboard suggests.
	if a.Name == "" {
		a.Name = in.Domain
	}
	if in.AppLauncherVisible != nil {
		a.AppLauncherVisible = *in.AppLauncherVisible
	}
	if in.SessionDuration != nil {
		if err := checkDuration("session_duration", *in.SessionDuration); err != nil {
			return nil, err
		}
		a.SessionDuration = *in.SessionDuration
	}
	if in.AllowedIdPs != nil {
		a.AllowedIdPs = in.AllowedIdPs
	}
	// Documented: auto_redirect_to_identity needs exactly one identity
	// provider in allowed_idps.
	if a.AutoRedirectToIdentity && len(a.AllowedIdPs) != 1 {
		return nil, accessInvalid("auto_redirect_to_identity needs exactly one identity provider in allowed_idps, not %d", len(a.AllowedIdPs))
	}
	for i, d := range in.SelfHostedDomains {
		if err := checkDestination(fmt.Sprintf("self_hosted_domains[%d]", i), d); err != nil {
			return nil, err
		}
	}
	if in.SelfHostedDomains != nil {
		a.SelfHostedDomains = in.SelfHostedDomains
	}
	for i, raw := range in.Destinations {
		var d accessDestination
		if err := json.Unmarshal(raw, &d); err != nil {
			return nil, accessInvalid("destinations[%d] is malformed", i)
		}
		if d.Type != "public" {
			return nil, accessInvalid("destinations[%d]: the simulator serves only public destinations, not %q", i, d.Type)
		}
		if err := checkDestination(fmt.Sprintf("destinations[%d].uri", i), d.URI); err != nil {
			return nil, err
		}
		a.Destinations = append(a.Destinations, d)
	}
	// Documented: destinations supersede self_hosted_domains. Without
	// either, the domain is the one destination (GUESS that Cloudflare
	// answers it as such).
	if len(a.Destinations) == 0 {
		uris := a.SelfHostedDomains
		if len(uris) == 0 {
			uris = []string{a.Domain}
		}
		for _, u := range uris {
			a.Destinations = append(a.Destinations, accessDestination{Type: "public", URI: u})
		}
	}
	links, err := s.parseAppPolicies(in.Policies)
	if err != nil {
		return nil, err
	}
	a.policies = links
	if err := s.appDomainConflict(self, a); err != nil {
		return nil, err
	}
	return a, nil
}

// parseAppPolicies reads the policies array: links to reusable policies,
// as {"id", "precedence"} or a bare policy ID. Precedence defaults to the
// position in the array (the document: "in ascending order of precedence")
// and must be unique within the application (documented). Inline,
// application-scoped policy definitions are not simulated.
func (s *Server) parseAppPolicies(raws []json.RawMessage) ([]appPolicyLink, *apiError) {
	out := []appPolicyLink{}
	seenID, seenPrec := map[string]bool{}, map[int]bool{}
	for i, raw := range raws {
		var link struct {
			ID         string `json:"id"`
			Precedence *int   `json:"precedence"`
		}
		var all map[string]json.RawMessage
		if err := json.Unmarshal(raw, &link.ID); err != nil {
			if err := json.Unmarshal(raw, &link); err != nil {
				return nil, accessInvalid("policies[%d] must be a policy ID or {\"id\", \"precedence\"}", i)
			}
			_ = json.Unmarshal(raw, &all)
		}
		for _, k := range []string{"decision", "include", "exclude", "require", "name"} {
			if _, inline := all[k]; inline {
				return nil, accessInvalid("policies[%d]: the simulator links reusable policies only; create the policy at /access/policies and link its id", i)
			}
		}
		if s.accessPolicyByID(link.ID) == nil {
			return nil, accessInvalid("policies[%d]: policy %q does not exist", i, link.ID)
		}
		prec := i + 1
		if link.Precedence != nil {
			prec = *link.Precedence
		}
		if seenID[link.ID] {
			return nil, accessInvalid("policies[%d]: policy %s is linked twice", i, link.ID)
		}
		if seenPrec[prec] {
			return nil, accessInvalid("policies[%d]: precedence %d is used twice; it must be unique within the application", i, prec)
		}
		seenID[link.ID], seenPrec[prec] = true, true
		out = append(out, appPolicyLink{id: link.ID, precedence: prec})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].precedence < out[j].precedence })
	return out, nil
}

// appDomainConflict refuses a second application on a public destination
// another application already has (see the file comment).
func (s *Server) appDomainConflict(self, a *accessApp) *apiError {
	norm := func(uri string) string {
		h, p := splitDestination(uri)
		return h + p
	}
	mine := map[string]bool{}
	for _, d := range a.Destinations {
		mine[norm(d.URI)] = true
	}
	for _, o := range s.access.apps {
		if o == self {
			continue
		}
		for _, d := range o.Destinations {
			if mine[norm(d.URI)] {
				return errf(http.StatusConflict, 11010, "access.api.error.application_already_exists: application %s (%s) already secures %s", o.ID, o.Name, d.URI)
			}
		}
	}
	return nil
}

func newAUD() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (s *Server) createAccessApp(_ *http.Request, body []byte) (any, any, *apiError) {
	if err := s.accessEnabled(); err != nil {
		return nil, nil, err
	}
	a, err := s.parseAccessApp(body, nil)
	if err != nil {
		return nil, nil, err
	}
	a.ID, a.AUD, a.CreatedAt, a.UpdatedAt = newUUID(), newAUD(), s.now(), s.now()
	s.access.apps = append(s.access.apps, a)
	return s.appView(a), nil, nil
}

// listAccessApps filters by name and domain: substrings, case-insensitive,
// unless exact=true (documented: "true for only exact string matches");
// by aud; and by search, a substring of the name or domain (GUESS).
func (s *Server) listAccessApps(r *http.Request, _ []byte) (any, any, *apiError) {
	if err := s.accessEnabled(); err != nil {
		return nil, nil, err
	}
	q := r.URL.Query()
	exact := q.Get("exact") == "true"
	match := func(have, want string) bool {
		if exact {
			return have == want
		}
		return containsFold(have, want)
	}
	out := []accessAppView{}
	for _, a := range s.access.apps {
		if !s.listable(a.CreatedAt) {
			continue
		}
		if v := q.Get("name"); v != "" && !match(a.Name, v) {
			continue
		}
		if v := q.Get("domain"); v != "" && !match(a.Domain, v) {
			continue
		}
		if v := q.Get("aud"); v != "" && a.AUD != v {
			continue
		}
		if v := q.Get("search"); v != "" && !containsFold(a.Name, v) && !containsFold(a.Domain, v) {
			continue
		}
		out = append(out, s.appView(a))
	}
	return pageOrErr(accessPage(r, out, 1000))
}

func (s *Server) getAccessApp(r *http.Request, _ []byte) (any, any, *apiError) {
	a, _, err := s.findAccessApp(r)
	if err != nil {
		return nil, nil, err
	}
	return s.appView(a), nil, nil
}

// updateAccessApp replaces the application; its id and aud stay.
func (s *Server) updateAccessApp(r *http.Request, body []byte) (any, any, *apiError) {
	old, i, err := s.findAccessApp(r)
	if err != nil {
		return nil, nil, err
	}
	a, err := s.parseAccessApp(body, old)
	if err != nil {
		return nil, nil, err
	}
	a.ID, a.AUD, a.CreatedAt, a.UpdatedAt = old.ID, old.AUD, old.CreatedAt, s.now()
	s.access.apps[i] = a
	return s.appView(a), nil, nil
}

func (s *Server) deleteAccessApp(r *http.Request, _ []byte) (any, any, *apiError) {
	a, i, err := s.findAccessApp(r)
	if err != nil {
		return nil, nil, err
	}
	s.access.apps = slices.Delete(s.access.apps, i, i+1)
	return map[string]string{"id": a.ID}, nil, nil
}

// --- service tokens -------------------------------------------------------------------

// serviceToken is a service token. Its secrets are never answered but by
// create and rotate: Cloudflare shows a secret once.
type serviceToken struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	ClientID   string     `json:"client_id"`
	Duration   string     `json:"duration"`
	Enabled    bool       `json:"enabled"`
	ExpiresAt  *time.Time `json:"expires_at,omitempty"`
	LastSeenAt *time.Time `json:"last_seen_at,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	UpdatedAt  time.Time  `json:"updated_at"`

	secret string
	// previous is the secret a rotation replaced, accepted until
	// previousExpiresAt.
	previous          string
	previousExpiresAt time.Time
	secretVersion     float64
}

// withSecret is a service token as create and rotate answer it.
type withSecret struct {
	serviceToken
	ClientSecret string `json:"client_secret"`
}

func (s *Server) serviceTokenByID(id string) *serviceToken {
	for _, t := range s.access.tokens {
		if t.ID == id {
			return t
		}
	}
	return nil
}

func (s *Server) findServiceToken(r *http.Request) (*serviceToken, int, *apiError) {
	if err := s.accessEnabled(); err != nil {
		return nil, -1, err
	}
	id := r.PathValue("service_token_id")
	if !isUUID(id) {
		return nil, -1, badID(r)
	}
	for i, t := range s.access.tokens {
		if t.ID == id {
			return t, i, nil
		}
	}
	return nil, -1, accessNotFound("service token", id)
}

// newClientSecret is a secret in Cloudflare's current format
// (newScannableSecret); it is recorded as issued.
func (s *Server) newClientSecret() string {
	secret := newScannableSecret()
	s.access.issued = append(s.access.issued, secret)
	return secret
}

// ClientSecrets is every service-token client secret the simulator has
// issued, tokens deleted since included: what a test looks for in logs,
// events and statuses, where none may be.
func (s *Server) ClientSecrets() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.access.issued)
}

// setDuration sets duration and the expiry it gives from now: documented
// as a Go duration or "forever" (no expiry), 8760h (a year) by default.
func (t *serviceToken) setDuration(d string, now time.Time) *apiError {
	t.Duration = d
	if d == "forever" {
		t.ExpiresAt = nil
		return nil
	}
	if err := checkDuration("duration", d); err != nil {
		return err
	}
	dur, _ := time.ParseDuration(d)
	t.ExpiresAt = ptrTime(now.Add(dur))
	return nil
}

type serviceTokenBody struct {
	Name                          *string    `json:"name"`
	Duration                      *string    `json:"duration"`
	Enabled                       *bool      `json:"enabled"`
	ClientSecretVersion           *float64   `json:"client_secret_version"`
	PreviousClientSecretExpiresAt *time.Time `json:"previous_client_secret_expires_at"`
}

func (s *Server) createServiceToken(_ *http.Request, body []byte) (any, any, *apiError) {
	if err := s.accessEnabled(); err != nil {
		return nil, nil, err
	}
	var in serviceTokenBody
	if err := decodeBody(body, &in); err != nil {
		return nil, nil, err
	}
	if in.Name == nil || strings.TrimSpace(*in.Name) == "" {
		return nil, nil, accessInvalid("name is required")
	}
	now := s.now()
	t := &serviceToken{ID: newUUID(), Name: *in.Name, ClientID: newHex32() + ".access", Enabled: true, CreatedAt: now, UpdatedAt: now, secret: s.newClientSecret(), secretVersion: 1}
	d := "8760h"
	if in.Duration != nil {
		d = *in.Duration
	}
	if err := t.setDuration(d, now); err != nil {
		return nil, nil, err
	}
	if in.Enabled != nil {
		t.Enabled = *in.Enabled
	}
	if in.ClientSecretVersion != nil {
		t.secretVersion = *in.ClientSecretVersion
	}
	s.access.tokens = append(s.access.tokens, t)
	return withSecret{serviceToken: *t, ClientSecret: t.secret}, nil, nil
}

// listServiceTokens filters by exact name and by search, a
// case-insensitive substring of the name (both GUESSES).
func (s *Server) listServiceTokens(r *http.Request, _ []byte) (any, any, *apiError) {
	if err := s.accessEnabled(); err != nil {
		return nil, nil, err
	}
	q := r.URL.Query()
	out := []serviceToken{}
	for _, t := range s.access.tokens {
		if !s.listable(t.CreatedAt) {
			continue
		}
		if v := q.Get("name"); v != "" && t.Name != v {
			continue
		}
		if v := q.Get("search"); v != "" && !containsFold(t.Name, v) {
			continue
		}
		out = append(out, *t)
	}
	return pageOrErr(accessPage(r, out, 1000))
}

func (s *Server) getServiceToken(r *http.Request, _ []byte) (any, any, *apiError) {
	t, _, err := s.findServiceToken(r)
	if err != nil {
		return nil, nil, err
	}
	return *t, nil, nil
}

// updateServiceToken changes the fields sent (every one is optional).
// Documented: raising client_secret_version rotates the secret, the old
// one accepted until previous_client_secret_expires_at, which may be moved
// at any time after a rotation. The update's answer carries no secret, so
// a secret rotated this way is never shown (as the document's schema
// says); POST …/rotate is the way to get one. A new duration counts from
// now (GUESS).
func (s *Server) updateServiceToken(r *http.Request, body []byte) (any, any, *apiError) {
	t, _, err := s.findServiceToken(r)
	if err != nil {
		return nil, nil, err
	}
	var in serviceTokenBody
	if err := decodeBody(body, &in); err != nil {
		return nil, nil, err
	}
	next := *t
	now := s.now()
	if in.Name != nil {
		if strings.TrimSpace(*in.Name) == "" {
			return nil, nil, accessInvalid("name must not be empty")
		}
		next.Name = *in.Name
	}
	if in.Duration != nil {
		if err := next.setDuration(*in.Duration, now); err != nil {
			return nil, nil, err
		}
	}
	if in.Enabled != nil {
		next.Enabled = *in.Enabled
	}
	if v := in.ClientSecretVersion; v != nil && *v != t.secretVersion {
		if *v < t.secretVersion {
			// GUESS: a version only goes up.
			return nil, nil, accessInvalid("client_secret_version must not go down (it is %v)", t.secretVersion)
		}
		next.previous, next.secret, next.secretVersion = t.secret, s.newClientSecret(), *v
		next.previousExpiresAt = now
	}
	if in.PreviousClientSecretExpiresAt != nil {
		next.previousExpiresAt = in.PreviousClientSecretExpiresAt.UTC()
	}
	next.UpdatedAt = now
	*t = next
	return *t, nil, nil
}

func (s *Server) deleteServiceToken(r *http.Request, _ []byte) (any, any, *apiError) {
	t, i, err := s.findServiceToken(r)
	if err != nil {
		return nil, nil, err
	}
	// Deleting is how a token is revoked, so policies naming it do not
	// hold it back (GUESS); their rule simply stops matching.
	s.access.tokens = slices.Delete(s.access.tokens, i, i+1)
	return *t, nil, nil
}

// rotateServiceToken makes a new secret and answers it, once. Documented:
// the old secret stays valid until previous_client_secret_expires_at,
// which defaults to now (the old one stops at once).
func (s *Server) rotateServiceToken(r *http.Request, body []byte) (any, any, *apiError) {
	t, _, err := s.findServiceToken(r)
	if err != nil {
		return nil, nil, err
	}
	var in struct {
		PreviousClientSecretExpiresAt *time.Time `json:"previous_client_secret_expires_at"`
	}
	if len(strings.TrimSpace(string(body))) > 0 {
		if err := decodeBody(body, &in); err != nil {
			return nil, nil, err
		}
	}
	now := s.now()
	t.previous, t.secret = t.secret, s.newClientSecret()
	t.previousExpiresAt = now
	if in.PreviousClientSecretExpiresAt != nil {
		t.previousExpiresAt = in.PreviousClientSecretExpiresAt.UTC()
	}
	t.secretVersion++
	t.UpdatedAt = now
	return withSecret{serviceToken: *t, ClientSecret: t.secret}, nil, nil
}

// refreshServiceToken extends the token's expiry by its duration from now
// (documented: "refreshes the expiration of a service token").
func (s *Server) refreshServiceToken(r *http.Request, _ []byte) (any, any, *apiError) {
	t, _, err := s.findServiceToken(r)
	if err != nil {
		return nil, nil, err
	}
	now := s.now()
	_ = t.setDuration(t.Duration, now)
	t.UpdatedAt = now
	return *t, nil, nil
}
