package sim

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim/cloudflared"
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
	// Connections is the deprecated array Cloudflare dropped from tunnel
	// responses on 2026-10-05; nil (omitted) unless
	// Options.LegacyTunnelConnections.
	Connections *[]any `json:"connections,omitempty"`

	secret []byte
	// replacedSecrets are the secrets a PATCH replaced: their tokens are
	// refused, and must never show anywhere either (RunTokens).
	replacedSecrets [][]byte
	connectors      []connector
	// lingering are connectors that stopped but that the edge still lists
	// (Options.ConnectorLinger).
	lingering []lingeringConnector
	config    *tunnelConfiguration
	// ingress is the newest configuration cloudflared would accept, which
	// the edge serves: cloudflared keeps its previous configuration when a
	// new one fails its validation. nil: none yet.
	ingress *cloudflared.Ingress
}

type connector struct {
	ID       string   `json:"id"`
	Arch     string   `json:"arch"`
	Version  string   `json:"version"`
	Features []string `json:"features"`
	// ConfigVersion is the version of the remote configuration this
	// connector last applied.
	ConfigVersion int          `json:"config_version"`
	RunAt         time.Time    `json:"run_at"`
	Conns         []connection `json:"conns"`

	// configLag keeps the connector on its configuration version when a
	// new one is put (a test's way to model a cloudflared that has not
	// picked it up yet); otherwise it applies a new version at once.
	configLag bool
}

// lingeringConnector is a stopped connector the edge has not noticed yet:
// listed, and serving as far as the tunnel's status goes, until until.
type lingeringConnector struct {
	connector
	until time.Time
}

// connectionsPerConnector is how many edge connections a cloudflared
// replica keeps; fewer is a failed connection, which Cloudflare reports as
// a degraded tunnel.
const connectionsPerConnector = 4

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
func (t *tunnel) token() string { return t.tokenWith(t.secret) }

func (t *tunnel) tokenWith(secret []byte) string {
	b, _ := json.Marshal(map[string]string{"a": t.AccountTag, "t": t.ID, "s": base64.StdEncoding.EncodeToString(secret)})
	return base64.StdEncoding.EncodeToString(b)
}

func (s *Server) findTunnel(r *http.Request) (*tunnel, *apiError) {
	id := r.PathValue("tunnel_id")
	if !isUUID(id) {
		return nil, badID(r)
	}
	// GUESS: the permission is checked before the tunnel is looked up, so
	// a scoped token learns nothing of tunnels outside its scope, not
	// even whether they exist (scope.go).
	if !s.reachesTunnel(r, id) {
		return nil, errNotPermitted()
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
	// GUESS: creating a tunnel takes the account-wide role (scope.go).
	if s.scoped(r) {
		return nil, nil, errNotPermitted()
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
		CreatedAt: s.now(), Metadata: map[string]any{}, Connections: s.legacyConnections(), secret: secret,
	}
	s.tunnels = append(s.tunnels, t)
	// The real API includes the run token in the create result.
	return struct {
		*tunnel
		Token string `json:"token"`
	}{t, t.token()}, nil, nil
}

// legacyConnections is the deprecated connections array of a tunnel
// response: absent, as Cloudflare serves it since 2026-10-05, unless the
// legacy shape is asked for.
func (s *Server) legacyConnections() *[]any {
	if !s.opts.LegacyTunnelConnections {
		return nil
	}
	return &[]any{}
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
		// Documented: a list shows only the tunnels the token may read.
		if !s.listable(t.CreatedAt) || !s.reachesTunnel(r, t.ID) {
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
		t.replacedSecrets = append(t.replacedSecrets, t.secret)
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
	if len(t.connectors)+len(t.lingering) > 0 && !cascade {
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
	if len(t.connectors)+len(t.lingering) > 0 {
		t.connectors, t.lingering = nil, nil
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
	for _, l := range t.lingering {
		out = append(out, l.connector)
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
	t.lingering = slices.DeleteFunc(t.lingering, func(c lingeringConnector) bool { return id == "" || c.ID == id })
	s.updateTunnelStatus(t)
	return nil, nil, nil
}

// updateTunnelStatus derives the tunnel's status from its connectors, as
// Cloudflare documents it: healthy when every connector holds its four edge
// connections, degraded when it serves but at least one connection has
// failed, down when it had connections and has none, inactive when it never
// ran. conns_active_at and conns_inactive_at move only when the tunnel
// starts or stops serving, not between healthy and degraded.
func (s *Server) updateTunnelStatus(t *tunnel) {
	now := s.now()
	serving, full := false, true
	for _, c := range t.connectors {
		serving = serving || len(c.Conns) > 0
		full = full && len(c.Conns) >= connectionsPerConnector
	}
	for _, c := range t.lingering {
		serving = serving || len(c.Conns) > 0
		full = full && len(c.Conns) >= connectionsPerConnector
	}
	wasServing := t.Status == "healthy" || t.Status == "degraded"
	switch {
	case serving:
		if !wasServing {
			t.ConnsActiveAt = ptrTime(now)
		}
		t.Status = "degraded"
		if full {
			t.Status = "healthy"
		}
	case wasServing:
		t.Status = "down"
		t.ConnsInactiveAt = ptrTime(now)
	}
}

// ConnectorState is what a test sets of one connector.
type ConnectorState struct {
	// Connections to the edge, 0–4 (a cloudflared replica keeps 4; fewer
	// is a failed connection; 0 is a connector that lost them all but is
	// still listed).
	Connections int `json:"connections"`
	// ConfigLag keeps the connector on the configuration version it has
	// when a new one is put, until it is set false again (then it applies
	// the current version).
	ConfigLag bool `json:"config_lag"`
}

// SetConnectors makes n connectors (each with 4 edge connections, like a
// cloudflared replica) connected to the tunnel; 0 disconnects them all. No
// cloudflared runs against the simulator, so tests and the sandbox use this.
func (s *Server) SetConnectors(tunnelID string, n int) bool {
	states := make([]ConnectorState, n)
	for i := range states {
		states[i].Connections = connectionsPerConnector
	}
	return s.SetConnectorStates(tunnelID, states)
}

// SetConnectorStates sets the tunnel's connectors one by one: the connector
// at each position keeps its ID and start time (only its connections and
// configuration lag change), new positions are new connectors (which apply
// the current configuration version), and connectors past the end
// disconnect and go.
func (s *Server) SetConnectorStates(tunnelID string, states []ConnectorState) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.tunnelByID(tunnelID)
	if t == nil {
		return false
	}
	now := s.now()
	s.expireConnectors()
	if len(t.connectors) > len(states) {
		s.stopConnectors(t, t.connectors[len(states):], now)
		t.connectors = t.connectors[:len(states)]
	}
	for i, st := range states {
		if i == len(t.connectors) {
			t.connectors = append(t.connectors, s.newConnector(t, now))
		}
		c := &t.connectors[i]
		c.configLag = st.ConfigLag
		if !c.configLag {
			c.ConfigVersion = t.configVersion()
		}
		c.Conns = connectionsOf(c, st.Connections, now)
	}
	s.updateTunnelStatus(t)
	return true
}

// stopConnectors takes connectors that stopped off the tunnel: at once, or
// after Options.ConnectorLinger, as the edge notices them gone.
func (s *Server) stopConnectors(t *tunnel, stopped []connector, now time.Time) {
	if s.opts.ConnectorLinger <= 0 {
		return
	}
	for _, c := range stopped {
		t.lingering = append(t.lingering, lingeringConnector{connector: c, until: now.Add(s.opts.ConnectorLinger)})
	}
}

// expireConnectors drops the lingering connectors whose time is up, and
// updates their tunnels' status. Callers hold s.mu.
func (s *Server) expireConnectors() {
	if s.opts.ConnectorLinger <= 0 {
		return
	}
	now := s.now()
	for _, t := range s.tunnels {
		n := len(t.lingering)
		t.lingering = slices.DeleteFunc(t.lingering, func(c lingeringConnector) bool { return !now.Before(c.until) })
		if len(t.lingering) != n {
			s.updateTunnelStatus(t)
		}
	}
}

// newConnector is a cloudflared that just connected: it runs the current
// configuration version.
func (s *Server) newConnector(t *tunnel, now time.Time) connector {
	return connector{ID: newUUID(), Arch: "linux_amd64", Version: "2025.8.0", Features: []string{"serialized_headers"}, RunAt: now, ConfigVersion: t.configVersion()}
}

// connectionsOf resizes a connector's edge connections to n, keeping the
// ones it has.
func connectionsOf(c *connector, n int, now time.Time) []connection {
	colos := []string{"ams01", "ams02", "fra01", "fra02"}
	out := slices.Clone(c.Conns)
	if len(out) > n {
		return out[:n]
	}
	for i := len(out); i < n; i++ {
		out = append(out, connection{ID: newUUID(), UUID: newUUID(), ClientID: c.ID, ClientVersion: c.Version, ColoName: colos[i%len(colos)], OpenedAt: now, OriginIP: "10.0.0." + string(rune('1'+i))})
	}
	return out
}

func (t *tunnel) configVersion() int {
	if t.config == nil {
		return 0
	}
	return t.config.Version
}

// handleConnectors is the test-only hook behind SetConnectors and
// SetConnectorStates: {"count": n} or {"connectors": [{"connections": 0-4,
// "config_lag": bool}, ...]}.
func (s *Server) handleConnectors(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Count      *int             `json:"count"`
		Connectors []ConnectorState `json:"connectors"`
	}
	const usage = `body must be {"count": n} with n >= 0, or {"connectors": [{"connections": 0-4, "config_lag": bool}, ...]}`
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || (in.Count == nil) == (in.Connectors == nil) || (in.Count != nil && *in.Count < 0) {
		http.Error(w, usage, http.StatusBadRequest)
		return
	}
	for _, c := range in.Connectors {
		if c.Connections < 0 || c.Connections > connectionsPerConnector {
			http.Error(w, usage, http.StatusBadRequest)
			return
		}
	}
	ok := false
	if in.Count != nil {
		ok = s.SetConnectors(r.PathValue("tunnel_id"), *in.Count)
	} else {
		ok = s.SetConnectorStates(r.PathValue("tunnel_id"), in.Connectors)
	}
	if !ok {
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
	if ing, err := cloudflared.Parse(in.Config); err == nil {
		t.ingress = &ing
	}
	// cloudflared pulls a new remote configuration within moments; a test
	// holds a connector back with config_lag.
	for i := range t.connectors {
		if !t.connectors[i].configLag {
			t.connectors[i].ConfigVersion = version
		}
	}
	return t.config, nil, nil
}

// ErrTokenRefused is Connect's answer to a run token whose tunnel is gone
// or whose secret is not the tunnel's current one.
var ErrTokenRefused = errors.New("run token refused: unknown tunnel, or not its current secret")

// Connect plays a cloudflared starting with a run token: Cloudflare accepts
// only the tunnel's current secret, so after a rotation the old token is
// refused, while connectors already connected stay connected until they
// disconnect or their connections are deleted. An accepted token registers
// a new connector with four edge connections on the current configuration
// version; its ID is returned.
func (s *Server) Connect(token string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	raw, err := base64.StdEncoding.DecodeString(token)
	var tok struct{ A, T, S string }
	if err != nil || json.Unmarshal(raw, &tok) != nil {
		return "", ErrTokenRefused
	}
	s.expireConnectors()
	t := s.tunnelByID(tok.T)
	if t == nil || tok.A != t.AccountTag || subtle.ConstantTimeCompare([]byte(tok.S), []byte(base64.StdEncoding.EncodeToString(t.secret))) != 1 {
		return "", ErrTokenRefused
	}
	now := s.now()
	c := s.newConnector(t, now)
	c.Conns = connectionsOf(&c, connectionsPerConnector, now)
	t.connectors = append(t.connectors, c)
	s.updateTunnelStatus(t)
	return c.ID, nil
}

// handleConnect is the test-only hook behind Connect: POST
// {"token": "<run token>"} answers 201 {"connector_id": ...}, or 401 when
// Cloudflare would refuse the token. The token travels in the body, never
// in the URL.
func (s *Server) handleConnect(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Token string `json:"token"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Token == "" {
		http.Error(w, `body must be {"token": "<run token>"}`, http.StatusBadRequest)
		return
	}
	id, err := s.Connect(in.Token)
	if err != nil {
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]string{"connector_id": id})
}

// RunTokens returns the run token of every tunnel the account has held,
// deleted ones included, and the tokens of secrets a rotation replaced:
// what a secret-hygiene check must never find in logs, events or status.
func (s *Server) RunTokens() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.tunnels))
	for _, t := range s.tunnels {
		out = append(out, t.token())
		for _, old := range t.replacedSecrets {
			out = append(out, t.tokenWith(old))
		}
	}
	return out
}
