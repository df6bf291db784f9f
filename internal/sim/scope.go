package sim

import (
	"encoding/json"
	"net/http"
)

// Tokens scoped to some tunnels. Since 2026-05-21 a Cloudflare principal may
// hold a role on individual tunnels instead of the account-wide one
// ("Granular permissions", developers.cloudflare.com/tunnel/advanced/
// granular-permissions/): a request on a specific tunnel is allowed with
// either, and the listing endpoints GET …/cfd_tunnel and GET
// …/teamnet/routes return only the tunnels, and the routes of the tunnels,
// the principal may read. That much is documented. What a scoped token
// meets otherwise is a GUESS, each marked where it is decided: a call on a
// tunnel outside its scope (or on a route of one) is refused with 403,
// code 9109, whether or not the tunnel exists; creating a tunnel needs the
// account-wide role, so a scoped token's create is refused the same way.
// Kinds the documentation does not name (hostname routes, VPC services,
// virtual networks, DNS, Access) are served as to any token.

// errNotPermitted is the refusal of a call on a tunnel outside the token's
// scope. GUESS: the status and code are those Cloudflare answers for an
// account the token may not reach (SEMANTICS.md §1); the documentation
// gives none for a single tunnel.
func errNotPermitted() *apiError {
	return errf(http.StatusForbidden, 9109, "Unauthorized to access requested resource")
}

// ScopeToken limits token to the tunnels tunnelIDs (none: to no tunnel),
// as a principal that holds roles on those tunnels only: lists of tunnels
// and of CIDR routes leave the others out, and calls on them are refused.
// It replaces any scope the token had.
func (s *Server) ScopeToken(token string, tunnelIDs ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	scope := make(map[string]bool, len(tunnelIDs))
	for _, id := range tunnelIDs {
		scope[id] = true
	}
	if s.scopes == nil {
		s.scopes = map[string]map[string]bool{}
	}
	s.scopes[token] = scope
}

// UnscopeToken gives token back the account-wide role: it reaches every
// tunnel again.
func (s *Server) UnscopeToken(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.scopes, token)
}

// scoped says whether the request's token is limited to some tunnels.
// Callers hold s.mu.
func (s *Server) scoped(r *http.Request) bool {
	token, _ := bearer(r)
	_, ok := s.scopes[token]
	return ok
}

// reachesTunnel says whether the request's token may read and manage the
// tunnel id: any tunnel without a scope, else those in it. Callers hold
// s.mu.
func (s *Server) reachesTunnel(r *http.Request, id string) bool {
	token, _ := bearer(r)
	scope, ok := s.scopes[token]
	return !ok || scope[id]
}

// handleScope is the test-only hook behind ScopeToken and UnscopeToken:
// POST {"token": "<API token>", "tunnel_ids": ["<id>", ...]} scopes the
// token to those tunnels; {"token": "…", "tunnel_ids": null} (or without
// the key) lifts its scope. The token travels in the body, never in the
// URL.
func (s *Server) handleScope(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Token     string    `json:"token"`
		TunnelIDs *[]string `json:"tunnel_ids"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Token == "" {
		http.Error(w, `body must be {"token": "<API token>", "tunnel_ids": ["<tunnel id>", ...]} (tunnel_ids null lifts the scope)`, http.StatusBadRequest)
		return
	}
	if in.TunnelIDs == nil {
		s.UnscopeToken(in.Token)
	} else {
		s.ScopeToken(in.Token, *in.TunnelIDs...)
	}
	w.WriteHeader(http.StatusNoContent)
}
