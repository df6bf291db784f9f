package sim

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"
)

type tunnel struct {
	ID              string         `json:"id"`
	AccountTag      string         `json:"account_tag"`
	Name            string         `json:"name"`
	ConfigSrc       string         `json:"config_src"`
	RemoteConfig    bool           `json:"remote_config"`
	Status          string         `json:"status"`
	TunType         string         `json:"tun_type"`
	CreatedAt       time.Time      `json:"created_at"`
	DeletedAt       *time.Time     `json:"deleted_at"`
	ConnsActiveAt   *time.Time     `json:"conns_active_at"`
	ConnsInactiveAt *time.Time     `json:"conns_inactive_at"`
	Metadata        map[string]any `json:"metadata"`
	Connections     []any          `json:"connections"`

	secret     []byte
	connectors []connector
	config     *tunnelConfiguration
}

type connector struct {
	ID            string       `json:"id"`
	Arch          string       `json:"arch"`
	Version       string       `json:"version"`
	Features      []string     `json:"features"`
	ConfigVersion int          `json:"config_version"`
	RunAt         time.Time    `json:"run_at"`
	Conns         []connection `json:"conns"`
}

type connection struct {
	ID                 string    `json:"id"`
	UUID               string    `json:"uuid"`
	ClientID           string    `json:"client_id"`
	ClientVersion      string    `json:"client_version"`
	ColoName           string    `json:"colo_name"`
	IsPendingReconnect bool      `json:"is_pending_reconnect"`
	OpenedAt           time.Time `json:"opened_at"`
	OriginIP           string    `json:"origin_ip"`
}

type tunnelConfiguration struct {
	AccountID string          `json:"account_id"`
	TunnelID  string          `json:"tunnel_id"`
	Version   int             `json:"version"`
	Source    string          `json:"source"`
	CreatedAt time.Time       `json:"created_at"`
	Config    json.RawMessage `json:"config"`
}

// token is the run token cloudflared takes: base64 of {"a","t","s"}.
func (t *tunnel) token() string {
	b, _ := json.Marshal(map[string]string{"a": t.AccountTag, "t": t.ID, "s": base64.StdEncoding.EncodeToString(t.secret)})
	return base64.StdEncoding.EncodeToString(b)
}

func (s *Server) findTunnel(r *http.Request) (*tunnel, *apiError) {
	id := r.PathValue("tunnel_id")
	if !isUUID(id) {
		return nil, badID(r)
	}
	for _, t := range s.tunnels {
		if t.ID == id {
			return t, nil
		}
	}
	return nil, errf(http.StatusNotFound, 1003, "Tunnel not found")
}

// liveTunnel finds a tunnel that has not been deleted; calls on a deleted
// tunnel other than GET fail.
func (s *Server) liveTunnel(r *http.Request) (*tunnel, *apiError) {
	t, err := s.findTunnel(r)
	if err != nil {
		return nil, err
	}
	if t.DeletedAt != nil {
		return nil, errf(http.StatusBadRequest, 1002, "Tunnel %s has been deleted", t.ID)
	}
	return t, nil
}

func (s *Server) tunnelByID(id string) *tunnel {
	for _, t := range s.tunnels {
		if t.ID == id && t.DeletedAt == nil {
			return t
		}
	}
	return nil
}

func (s *Server) createTunnel(r *http.Request, body []byte) (any, any, *apiError) {
	var in struct {
		Name         string `json:"name"`
		ConfigSrc    string `json:"config_src"`
		TunnelSecret string `json:"tunnel_secret"`
	}
	if err := decodeBody(body, &in); err != nil {
		return nil, nil, err
	}
	if strings.TrimSpace(in.Name) == "" {
		return nil, nil, errf(http.StatusBadRequest, 1001, "name is required")
	}
	switch in.ConfigSrc {
	case "":
		in.ConfigSrc = "local"
	case "local", "cloudflare":
	default:
		return nil, nil, errf(http.StatusBadRequest, 1001, "config_src must be local or cloudflare")
	}
	for _, t := range s.tunnels {
		if t.DeletedAt == nil && t.Name == in.Name {
			return nil, nil, errf(http.StatusConflict, 1013, "You already have a tunnel with this name. Delete the existing tunnel, or choose a different name for your new tunnel")
		}
	}
	secret := make([]byte, 32)
	if in.TunnelSecret != "" {
		b, err := base64.StdEncoding.DecodeString(in.TunnelSecret)
		if err != nil || len(b) < 32 {
			return nil, nil, errf(http.StatusBadRequest, 1001, "tunnel_secret must be base64 of at least 32 bytes")
		}
		secret = b
	} else {
		_, _ = rand.Read(secret)
	}
	t := &tunnel{
		ID: newUUID(), AccountTag: s.opts.AccountID, Name: in.Name, ConfigSrc: in.ConfigSrc,
		RemoteConfig: in.ConfigSrc == "cloudflare", Status: "inactive", TunType: "cfd_tunnel",
		CreatedAt: s.now(), Metadata: map[string]any{}, Connections: []any{}, secret: secret,
	}
	s.tunnels = append(s.tunnels, t)
	// The real API includes the run token in the create result.
	return struct {
		*tunnel
		Token string `json:"token"`
	}{t, t.token()}, nil, nil
}

func (s *Server) listTunnels(r *http.Request, _ []byte) (any, any, *apiError) {
	q := r.URL.Query()
	var out []*tunnel
	for _, t := range s.tunnels {
		ok, err := liveFilter(r, t.DeletedAt)
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			continue
		}
		if ok, err = existedAt(r, t.CreatedAt, t.DeletedAt); err != nil || !ok {
			if err != nil {
				return nil, nil, err
			}
			continue
		}
		if v := q.Get("name"); v != "" && t.Name != v {
			continue
		}
		if v := q.Get("uuid"); v != "" && t.ID != v {
			continue
		}
		if v := q.Get("status"); v != "" && t.Status != v {
			continue
		}
		if v := q.Get("include_prefix"); v != "" && !strings.HasPrefix(t.Name, v) {
			continue
		}
		if v := q.Get("exclude_prefix"); v != "" && strings.HasPrefix(t.Name, v) {
			continue
		}
		out = append(out, t)
	}
	page, info, err := paginate(r, out, 1, 1000, 20, false)
	if err != nil {
		return nil, nil, err
	}
	return page, info, nil
}

func (s *Server) getTunnel(r *http.Request, _ []byte) (any, any, *apiError) {
	t, err := s.findTunnel(r)
	return t, nil, err
}

func (s *Server) editTunnel(r *http.Request, body []byte) (any, any, *apiError) {
	t, err := s.liveTunnel(r)
	if err != nil {
		return nil, nil, err
	}
	var in struct {
		Name         *string `json:"name"`
		TunnelSecret *string `json:"tunnel_secret"`
	}
	if err := decodeBody(body, &in); err != nil {
		return nil, nil, err
	}
	if in.Name != nil {
		if strings.TrimSpace(*in.Name) == "" {
			return nil, nil, errf(http.StatusBadRequest, 1001, "name must not be empty")
		}
		for _, o := range s.tunnels {
			if o != t && o.DeletedAt == nil && o.Name == *in.Name {
				return nil, nil, errf(http.StatusConflict, 1013, "You already have a tunnel with this name. Delete the existing tunnel, or choose a different name for your new tunnel")
			}
		}
		t.Name = *in.Name
		for _, rt := range s.routes {
			if rt.TunnelID == t.ID {
				rt.TunnelName = t.Name
			}
		}
	}
	if in.TunnelSecret != nil {
		b, derr := base64.StdEncoding.DecodeString(*in.TunnelSecret)
		if derr != nil || len(b) < 32 {
			return nil, nil, errf(http.StatusBadRequest, 1001, "tunnel_secret must be base64 of at least 32 bytes")
		}
		t.secret = b
	}
	return t, nil, nil
}

// deleteTunnel soft-deletes. Like Cloudflare it refuses while connectors are
// connected (unless cascade=true) or hostname routes still point at the
// tunnel; CIDR routes go with it unless the pre-2025 behaviour is on.
func (s *Server) deleteTunnel(r *http.Request, _ []byte) (any, any, *apiError) {
	t, err := s.findTunnel(r)
	if err != nil {
		return nil, nil, err
	}
	if t.DeletedAt != nil {
		return nil, nil, errf(http.StatusNotFound, 1003, "Tunnel not found")
	}
	cascade := r.URL.Query().Get("cascade") == "true"
	if len(t.connectors) > 0 && !cascade {
		return nil, nil, errf(http.StatusBadRequest, 1022, "Cannot delete tunnel because it has active connections")
	}
	for _, rt := range s.routes {
		if rt.TunnelID == t.ID && rt.DeletedAt == nil {
			return nil, nil, errf(http.StatusBadRequest, 1023, "Cannot delete tunnel because it has hostname routes configured. Delete the routes first")
		}
	}
	now := s.now()
	for _, cr := range s.cidr {
		if cr.TunnelID == t.ID && cr.DeletedAt == nil {
			if s.opts.RejectTunnelDeleteWithCIDRRoutes {
				return nil, nil, errf(http.StatusBadRequest, 1023, "Cannot delete tunnel because it has Warp routing configured. You can delete the route with `cloudflared tunnel route ip delete`.")
			}
		}
	}
	for _, cr := range s.cidr {
		if cr.TunnelID == t.ID && cr.DeletedAt == nil {
			cr.DeletedAt = ptrTime(now)
		}
	}
	if len(t.connectors) > 0 {
		t.connectors = nil
		t.Status = "down"
		t.ConnsInactiveAt = ptrTime(now)
	}
	t.DeletedAt = ptrTime(now)
	return t, nil, nil
}

func (s *Server) tunnelToken(r *http.Request, _ []byte) (any, any, *apiError) {
	t, err := s.liveTunnel(r)
	if err != nil {
		return nil, nil, err
	}
	return t.token(), nil, nil
}

func (s *Server) tunnelConnections(r *http.Request, _ []byte) (any, any, *apiError) {
	t, err := s.findTunnel(r)
	if err != nil {
		return nil, nil, err
	}
	out := slices.Clone(t.connectors)
	if out == nil {
		out = []connector{}
	}
	return out, nil, nil
}

func (s *Server) deleteTunnelConnections(r *http.Request, _ []byte) (any, any, *apiError) {
	t, err := s.liveTunnel(r)
	if err != nil {
		return nil, nil, err
	}
	id := r.URL.Query().Get("client_id")
	t.connectors = slices.DeleteFunc(t.connectors, func(c connector) bool { return id == "" || c.ID == id })
	s.updateTunnelStatus(t)
	return nil, nil, nil
}

func (s *Server) updateTunnelStatus(t *tunnel) {
	now := s.now()
	switch {
	case len(t.connectors) > 0:
		if t.Status != "healthy" {
			t.ConnsActiveAt = ptrTime(now)
		}
		t.Status = "healthy"
	case t.Status == "healthy" || t.Status == "degraded":
		t.Status = "down"
		t.ConnsInactiveAt = ptrTime(now)
	}
}

// SetConnectors makes n connectors (each with 4 edge connections, like a
// cloudflared replica) connected to the tunnel; 0 disconnects them all. No
// cloudflared runs against the simulator, so tests and the sandbox use this.
func (s *Server) SetConnectors(tunnelID string, n int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.tunnelByID(tunnelID)
	if t == nil {
		return false
	}
	now := s.now()
	t.connectors = nil
	for range n {
		c := connector{ID: newUUID(), Arch: "linux_amd64", Version: "2025.8.0", Features: []string{"serialized_headers"}, RunAt: now}
		for i, colo := range []string{"ams01", "ams02", "fra01", "fra02"} {
			c.Conns = append(c.Conns, connection{ID: newUUID(), UUID: newUUID(), ClientID: c.ID, ClientVersion: c.Version, ColoName: colo, OpenedAt: now, OriginIP: "10.0.0." + string(rune('1'+i))})
		}
		t.connectors = append(t.connectors, c)
	}
	s.updateTunnelStatus(t)
	return true
}

func (s *Server) handleConnectors(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Count int `json:"count"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Count < 0 {
		http.Error(w, `body must be {"count": n} with n >= 0`, http.StatusBadRequest)
		return
	}
	if !s.SetConnectors(r.PathValue("tunnel_id"), in.Count) {
		http.Error(w, "no such live tunnel", http.StatusNotFound)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) getConfiguration(r *http.Request, _ []byte) (any, any, *apiError) {
	t, err := s.liveTunnel(r)
	if err != nil {
		return nil, nil, err
	}
	if t.config == nil {
		// Never configured: version 0 and an empty document (the schema
		// does not allow null).
		return &tunnelConfiguration{AccountID: t.AccountTag, TunnelID: t.ID, Source: t.ConfigSrc, CreatedAt: t.CreatedAt, Config: json.RawMessage("{}")}, nil, nil
	}
	return t.config, nil, nil
}

func (s *Server) putConfiguration(r *http.Request, body []byte) (any, any, *apiError) {
	t, err := s.liveTunnel(r)
	if err != nil {
		return nil, nil, err
	}
	var in struct {
		Config json.RawMessage `json:"config"`
	}
	if err := decodeBody(body, &in); err != nil {
		return nil, nil, err
	}
	var cfg struct {
		Ingress []struct {
			Hostname string `json:"hostname"`
			Service  string `json:"service"`
		} `json:"ingress"`
	}
	if len(in.Config) == 0 || json.Unmarshal(in.Config, &cfg) != nil {
		return nil, nil, errf(http.StatusBadRequest, 1001, "config is required")
	}
	if len(cfg.Ingress) == 0 {
		return nil, nil, errf(http.StatusBadRequest, 1055, "At least one ingress rule needs to be defined for the tunnel")
	}
	for i, rule := range cfg.Ingress {
		if rule.Service == "" {
			return nil, nil, errf(http.StatusBadRequest, 1055, "ingress rule %d has no service", i)
		}
	}
	if last := cfg.Ingress[len(cfg.Ingress)-1]; last.Hostname != "" {
		return nil, nil, errf(http.StatusBadRequest, 1055, "The last ingress rule must be a catch-all rule without a hostname")
	}
	version := 1
	if t.config != nil {
		version = t.config.Version + 1
	}
	t.config = &tunnelConfiguration{AccountID: t.AccountTag, TunnelID: t.ID, Version: version, Source: "cloudflare", CreatedAt: s.now(), Config: in.Config}
	return t.config, nil, nil
}

// RunTokens returns the run token of every tunnel the account has held,
// deleted ones included: what a secret-hygiene check must never find in
// logs, events or status.
func (s *Server) RunTokens() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.tunnels))
	for _, t := range s.tunnels {
		out = append(out, t.token())
	}
	return out
}
