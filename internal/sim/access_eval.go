package sim

import (
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"time"
)

// AccessIdentity is who makes a request to a host Access may protect: what
// Cloudflare's edge would know of them. Email and IdPGroups come from an
// identity provider login (empty: the visitor has not logged in); IP and
// Country from the connection; ClientID and ClientSecret from the
// CF-Access-Client-Id and CF-Access-Client-Secret headers.
type AccessIdentity struct {
	Email        string   `json:"email"`
	IdPGroups    []string `json:"idp_groups"`
	IP           string   `json:"ip"`
	Country      string   `json:"country"`
	ClientID     string   `json:"client_id"`
	ClientSecret string   `json:"client_secret"`
}

// AccessDecision says whether Access lets who reach host and path, and why:
// the question a test or the demo asks of the simulated edge. It is not
// part of Cloudflare's API.
//
// The application is the one whose public destinations match host and
// path; with none, Access is not involved and the request passes. Its
// policies then run as Cloudflare documents
// (developers.cloudflare.com/cloudflare-one/policies/access/ and the Zero
// Trust policies FAQ: policies trigger top to bottom, "exceptions include
// Bypass and Service Auth policies, which Access evaluates first"): Bypass
// and Service Auth (non_identity) policies first, in precedence order, and
// either lets the request through; then Allow and Block (deny) policies in
// precedence order, the first that matches deciding (an Allow above a
// Block wins; Block is not evaluated before every Allow); if none matches,
// Access denies. Within a policy, Include rules are ORed, Require rules
// ANDed, and any Exclude rule that matches keeps the policy from matching.
//
// Modelling choices, each a GUESS where Cloudflare does not say:
//   - Bypass and Service Auth run before any login, so the identity
//     selectors (email, email domain, identity provider groups) never
//     match in them; Allow and Block policies need a login, so a visitor
//     without an Email is denied (Access would send them to log in).
//   - A service token counts only when its client ID and a current secret
//     are presented, it is enabled and has not expired; the secret a
//     rotation replaced counts until its overlap ends. An authenticated
//     token records last_seen_at.
//   - Identity provider group selectors (azureAD id, gsuite email, okta
//     and GitHub organization name, SAML attribute value, OIDC claim
//     value) match a value in IdPGroups, whatever the identity provider.
//   - Selectors the simulator cannot know (device posture, lists, mTLS
//     certificates, external evaluation, …) never match.
//   - With the organization's strict service token authentication on, a
//     request that presents service token headers (a client ID) is let
//     in only by a Service Auth policy: Allow policies, and a login, are
//     ignored for it (documented). That Bypass policies still apply, and
//     that Block policies are not evaluated for it either, is a GUESS.
//   - When several applications match, the one with the longest path
//     wins (Access documents that a path app is not covered by its
//     parent's), then an exact host over a wildcard one.
func (s *Server) AccessDecision(host, path string, who AccessIdentity) (allowed bool, why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.decideAccess(host, path, who)
	return v.allowed, v.why
}

// accessVerdict is AccessDecision's answer with what the edge needs
// besides: the application that decided (nil when none covers the
// request) and whether a Bypass policy let the request in.
type accessVerdict struct {
	allowed bool
	why     string
	app     *accessApp
	bypass  bool
}

// decideAccess is AccessDecision; callers hold s.mu.
func (s *Server) decideAccess(host, path string, who AccessIdentity) accessVerdict {
	app := s.accessAppFor(host, path)
	if app == nil {
		return accessVerdict{allowed: true, why: "no Access application"}
	}
	allowed, bypass, why := s.evaluateApp(app, who)
	return accessVerdict{allowed: allowed, why: why, app: app, bypass: bypass}
}

// evaluateApp runs app's policies for who, as AccessDecision describes.
func (s *Server) evaluateApp(app *accessApp, who AccessIdentity) (allowed, bypass bool, why string) {
	now := s.now()
	tok, tokNote := s.authenticateServiceToken(who, now)
	ev := evaluation{s: s, who: who, token: tok}
	name := fmt.Sprintf("application %q", app.Name)

	policies := make([]*accessPolicy, 0, len(app.policies))
	precedence := map[*accessPolicy]int{}
	for _, l := range app.policies { // sorted by precedence when stored
		if p := s.accessPolicyByID(l.id); p != nil {
			policies = append(policies, p)
			precedence[p] = l.precedence
		}
	}
	for _, p := range policies {
		if p.Decision != "bypass" && p.Decision != "non_identity" {
			continue
		}
		if ev.matches(p.ruleSets, false) {
			if p.Decision == "bypass" {
				return true, true, fmt.Sprintf("%s: bypass policy %q (precedence %d)", name, p.Name, precedence[p])
			}
			via := ""
			if tok != nil {
				via = fmt.Sprintf(" with service token %q", tok.Name)
			}
			return true, false, fmt.Sprintf("%s: service auth policy %q (precedence %d)%s", name, p.Name, precedence[p], via)
		}
	}
	if who.ClientID != "" && s.access.org != nil && s.access.org.StrictServiceTokenAuth {
		why := fmt.Sprintf("%s: no service auth policy matched, and strict service token authentication lets no other policy decide for a request with service token headers", name)
		if tokNote != "" {
			why += " (" + tokNote + ")"
		}
		return false, false, why
	}
	if who.Email == "" {
		why := fmt.Sprintf("%s: no bypass or service auth policy matched, and the visitor has not logged in", name)
		if tokNote != "" {
			why += " (" + tokNote + ")"
		}
		return false, false, why
	}
	for _, p := range policies {
		if p.Decision != "allow" && p.Decision != "deny" {
			continue
		}
		if ev.matches(p.ruleSets, true) {
			if p.Decision == "allow" {
				return true, false, fmt.Sprintf("%s: allow policy %q (precedence %d)", name, p.Name, precedence[p])
			}
			return false, false, fmt.Sprintf("%s: block policy %q (precedence %d)", name, p.Name, precedence[p])
		}
	}
	return false, false, fmt.Sprintf("%s: no policy matched %s; Access denies by default", name, who.Email)
}

// authenticateServiceToken finds the service token the identity presents,
// or says why it does not count.
func (s *Server) authenticateServiceToken(who AccessIdentity, now time.Time) (*serviceToken, string) {
	if who.ClientID == "" {
		return nil, ""
	}
	for _, t := range s.access.tokens {
		if t.ClientID != who.ClientID {
			continue
		}
		switch {
		case !t.Enabled:
			return nil, fmt.Sprintf("service token %q is disabled", t.Name)
		case t.ExpiresAt != nil && !now.Before(*t.ExpiresAt):
			return nil, fmt.Sprintf("service token %q expired at %s", t.Name, t.ExpiresAt.Format(time.RFC3339))
		case equalSecret(who.ClientSecret, t.secret):
		case t.previous != "" && equalSecret(who.ClientSecret, t.previous) && now.Before(t.previousExpiresAt):
		case t.previous != "" && equalSecret(who.ClientSecret, t.previous):
			return nil, fmt.Sprintf("service token %q: the rotated-out secret stopped working at %s", t.Name, t.previousExpiresAt.Format(time.RFC3339))
		default:
			return nil, fmt.Sprintf("service token %q: wrong client secret", t.Name)
		}
		t.LastSeenAt = ptrTime(now)
		return t, ""
	}
	return nil, "no service token has that client ID"
}

func equalSecret(a, b string) bool {
	return a != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

type evaluation struct {
	s     *Server
	who   AccessIdentity
	token *serviceToken
	// inGroups guards against groups that name each other.
	inGroups map[string]bool
}

// matches applies a policy's or group's rules: include ORed, require
// ANDed, exclude NOT. loggedIn says whether identity selectors can match.
func (e *evaluation) matches(rs ruleSets, loggedIn bool) bool {
	included := false
	for _, r := range rs.Include {
		if e.rule(r, loggedIn) {
			included = true
			break
		}
	}
	if !included {
		return false
	}
	for _, r := range rs.Require {
		if !e.rule(r, loggedIn) {
			return false
		}
	}
	for _, r := range rs.Exclude {
		if e.rule(r, loggedIn) {
			return false
		}
	}
	return true
}

func (e *evaluation) rule(r accessRule, loggedIn bool) bool {
	b := r.body
	switch r.kind {
	case "everyone":
		return true
	case "ip":
		p, ok := parseIPRule(b.IP)
		a, err := netip.ParseAddr(e.who.IP)
		return ok && err == nil && p.Contains(a.Unmap())
	case "geo":
		return e.who.Country != "" && strings.EqualFold(b.CountryCode, e.who.Country)
	case "service_token":
		return e.token != nil && e.token.ID == b.TokenID
	case "any_valid_service_token":
		return e.token != nil
	case "group":
		g := e.s.accessGroupByID(b.ID)
		if g == nil || e.inGroups[g.ID] {
			return false
		}
		if e.inGroups == nil {
			e.inGroups = map[string]bool{}
		}
		e.inGroups[g.ID] = true
		defer delete(e.inGroups, g.ID)
		return e.matches(g.ruleSets, loggedIn)
	}
	if !loggedIn {
		return false
	}
	switch r.kind {
	case "email":
		return e.who.Email != "" && strings.EqualFold(b.Email, e.who.Email)
	case "email_domain":
		at := strings.LastIndexByte(e.who.Email, '@')
		return at >= 0 && strings.EqualFold(e.who.Email[at+1:], strings.TrimPrefix(b.Domain, "@"))
	case "azureAD":
		return e.inIdPGroup(b.ID, false)
	case "gsuite":
		return e.inIdPGroup(b.Email, true)
	case "okta", "github-organization":
		return e.inIdPGroup(b.Name, false)
	case "saml":
		return e.inIdPGroup(b.AttributeValue, false)
	case "oidc":
		return e.inIdPGroup(b.ClaimValue, false)
	}
	return false
}

func (e *evaluation) inIdPGroup(v string, fold bool) bool {
	for _, g := range e.who.IdPGroups {
		if g == v || (fold && strings.EqualFold(g, v)) {
			return true
		}
	}
	return false
}

// accessAppFor finds the application protecting host and path.
func (s *Server) accessAppFor(host, path string) *accessApp {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if h, _, ok := strings.Cut(host, ":"); ok {
		host = h
	}
	if path == "" {
		path = "/"
	}
	var best *accessApp
	bestPath, bestExact := -1, false
	for _, a := range s.access.apps {
		for _, d := range a.Destinations {
			dh, dp := splitDestination(d.URI)
			exact, ok := hostMatches(dh, host)
			if !ok || !pathMatches(dp, path) {
				continue
			}
			if len(dp) > bestPath || (len(dp) == bestPath && exact && !bestExact) {
				best, bestPath, bestExact = a, len(dp), exact
			}
		}
	}
	return best
}

// hostMatches compares a destination's host with a request's, label by
// label: a "*" in a label stands for any characters within that one label
// (documented: a wildcard covers only the level where it is applied).
func hostMatches(pattern, host string) (exact, ok bool) {
	if pattern == host {
		return true, true
	}
	pl, hl := strings.Split(pattern, "."), strings.Split(host, ".")
	if len(pl) != len(hl) {
		return false, false
	}
	for i := range pl {
		if !globMatch(pl[i], hl[i]) {
			return false, false
		}
	}
	return false, true
}

// pathMatches: a destination's path covers itself and everything below it,
// segment by segment ("/admin" covers "/admin/users", not "/administer");
// "*" stands for any characters within one segment, a trailing "/*" for
// anything below.
func pathMatches(pattern, path string) bool {
	if pattern == "" || pattern == "/" || pattern == "/*" {
		return true
	}
	ps := strings.Split(strings.Trim(pattern, "/"), "/")
	xs := strings.Split(strings.Trim(path, "/"), "/")
	if len(xs) < len(ps) {
		return false
	}
	for i := range ps {
		if !globMatch(ps[i], xs[i]) {
			return false
		}
	}
	return true
}

// globMatch matches s against a pattern whose only special character is
// "*", any run of characters.
func globMatch(pattern, s string) bool {
	if !strings.Contains(pattern, "*") {
		return pattern == s
	}
	parts := strings.Split(pattern, "*")
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return strings.HasSuffix(s, parts[len(parts)-1])
}

// handleAccessDecision is AccessDecision over HTTP, for the demo and the
// end-to-end tests: POST /__sim/access/decision with {"host", "path",
// "email", "idp_groups", "ip", "country", "client_id", "client_secret"}
// answers {"allowed", "why"}.
func (s *Server) handleAccessDecision(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Host string `json:"host"`
		Path string `json:"path"`
		AccessIdentity
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Host == "" {
		http.Error(w, `body must be {"host": "...", "path": "/...", "email": "...", "idp_groups": [...], "ip": "...", "country": "..", "client_id": "...", "client_secret": "..."}`, http.StatusBadRequest)
		return
	}
	allowed, why := s.AccessDecision(in.Host, in.Path, in.AccessIdentity)
	writeJSON(w, http.StatusOK, map[string]any{"allowed": allowed, "why": why})
}
