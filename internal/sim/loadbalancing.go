package sim

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim/cloudflared"
)

// Cloudflare Load Balancing: monitors and pools (account-scoped), load
// balancers (zone-scoped), and pool health, as the OpenAPI document in
// cloudflare-go v7 describes them. Whatever Cloudflare does not document is
// marked GUESS here and listed in docs/reliability.md ("Load Balancing in the
// simulator").

// lbRoute is one load-balancing operation the simulator serves.
type lbRoute struct {
	pattern, op string
	fn          handlerFn
}

func (s *Server) loadBalancingRoutes() []lbRoute {
	return []lbRoute{
		{"POST /accounts/{account_id}/load_balancers/monitors", "lb_monitors.create", s.createMonitor},
		{"GET /accounts/{account_id}/load_balancers/monitors", "lb_monitors.list", s.listMonitors},
		{"GET /accounts/{account_id}/load_balancers/monitors/{monitor_id}", "lb_monitors.get", s.getMonitor},
		{"PUT /accounts/{account_id}/load_balancers/monitors/{monitor_id}", "lb_monitors.update", s.updateMonitor},
		{"DELETE /accounts/{account_id}/load_balancers/monitors/{monitor_id}", "lb_monitors.delete", s.deleteMonitor},
		{"POST /accounts/{account_id}/load_balancers/pools", "lb_pools.create", s.createPool},
		{"GET /accounts/{account_id}/load_balancers/pools", "lb_pools.list", s.listPools},
		{"GET /accounts/{account_id}/load_balancers/pools/{pool_id}", "lb_pools.get", s.getPool},
		{"PUT /accounts/{account_id}/load_balancers/pools/{pool_id}", "lb_pools.update", s.updatePool},
		{"DELETE /accounts/{account_id}/load_balancers/pools/{pool_id}", "lb_pools.delete", s.deletePool},
		{"GET /accounts/{account_id}/load_balancers/pools/{pool_id}/health", "lb_pools.health.get", s.poolHealth},
		{"POST /zones/{zone_id}/load_balancers", "load_balancers.create", s.createLoadBalancer},
		{"GET /zones/{zone_id}/load_balancers", "load_balancers.list", s.listLoadBalancers},
		{"GET /zones/{zone_id}/load_balancers/{load_balancer_id}", "load_balancers.get", s.getLoadBalancer},
		{"PUT /zones/{zone_id}/load_balancers/{load_balancer_id}", "load_balancers.update", s.updateLoadBalancer},
		{"DELETE /zones/{zone_id}/load_balancers/{load_balancer_id}", "load_balancers.delete", s.deleteLoadBalancer},
	}
}

// loadBalancingState is the account's load-balancing objects.
type loadBalancingState struct {
	monitors []*lbMonitor
	pools    []*lbPool
	lbs      []*loadBalancer
	// probes are the monitored pools' last probes, by pool ID.
	probes map[string]*poolProbes
}

// Error codes. Cloudflare documents 1005 ("This object is referenced by
// other objects, delete them first", load-balancing/troubleshooting/
// common-error-codes, cloudflare-docs#3686); the HTTP status 400 with it,
// and the other codes, are GUESSes (1003 "value not unique" is what
// Cloudflare answered a duplicate in terraform-provider-cloudflare#6275).
const (
	lbCodeInvalid     = 1002 // GUESS
	lbCodeNotUnique   = 1003
	lbCodeReferenced  = 1005
	lbCodeNotFound    = 1000 // GUESS
	lbMaxDescription  = 1024 // GUESS
	lbDefaultInterval = 60
	lbDefaultTimeout  = 5
	lbDefaultRetries  = 2
)

func lbTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// --- monitors ----------------------------------------------------------------

type lbMonitor struct {
	ID              string              `json:"id"`
	Type            string              `json:"type"`
	Description     string              `json:"description"`
	Method          string              `json:"method"`
	Path            string              `json:"path,omitempty"`
	Header          map[string][]string `json:"header,omitempty"`
	Port            *int                `json:"port,omitempty"`
	Timeout         int                 `json:"timeout"`
	Retries         int                 `json:"retries"`
	Interval        int                 `json:"interval"`
	ConsecutiveUp   int                 `json:"consecutive_up"`
	ConsecutiveDown int                 `json:"consecutive_down"`
	ExpectedBody    string              `json:"expected_body"`
	ExpectedCodes   string              `json:"expected_codes"`
	FollowRedirects bool                `json:"follow_redirects"`
	AllowInsecure   bool                `json:"allow_insecure"`
	ProbeZone       string              `json:"probe_zone"`
	CreatedOn       string              `json:"created_on"`
	ModifiedOn      string              `json:"modified_on"`
	created         time.Time
}

type monitorInput struct {
	Type            *string             `json:"type"`
	Description     *string             `json:"description"`
	Method          *string             `json:"method"`
	Path            *string             `json:"path"`
	Header          map[string][]string `json:"header"`
	Port            *int                `json:"port"`
	Timeout         *int                `json:"timeout"`
	Retries         *int                `json:"retries"`
	Interval        *int                `json:"interval"`
	ConsecutiveUp   *int                `json:"consecutive_up"`
	ConsecutiveDown *int                `json:"consecutive_down"`
	ExpectedBody    *string             `json:"expected_body"`
	ExpectedCodes   *string             `json:"expected_codes"`
	FollowRedirects *bool               `json:"follow_redirects"`
	AllowInsecure   *bool               `json:"allow_insecure"`
	ProbeZone       *string             `json:"probe_zone"`
}

var expectedCodesRe = regexp.MustCompile(`^[1-5]([0-9]{2}|xx)$`)

// monitorFrom is the monitor a create or a PUT (which replaces it whole)
// asks for, with the documented defaults, or why it is refused.
func monitorFrom(in monitorInput) (*lbMonitor, *apiError) {
	m := &lbMonitor{
		Type: deref(in.Type, "http"), Description: deref(in.Description, ""), Path: deref(in.Path, ""),
		Header: in.Header, Port: in.Port, Timeout: deref(in.Timeout, lbDefaultTimeout), Retries: deref(in.Retries, lbDefaultRetries),
		Interval: deref(in.Interval, lbDefaultInterval), ConsecutiveUp: deref(in.ConsecutiveUp, 1), ConsecutiveDown: deref(in.ConsecutiveDown, 1),
		ExpectedBody: deref(in.ExpectedBody, ""), ExpectedCodes: deref(in.ExpectedCodes, ""), FollowRedirects: deref(in.FollowRedirects, false),
		AllowInsecure: deref(in.AllowInsecure, false), ProbeZone: deref(in.ProbeZone, ""),
	}
	switch m.Type {
	case "http", "https":
		m.Method = deref(in.Method, "GET")
		if m.Path == "" {
			m.Path = "/"
		}
		// GUESS: the document calls expected_codes "only valid for HTTP
		// and HTTPS monitors" and defaults it to ""; Cloudflare's
		// dashboard requires it, and the simulator refuses an HTTP monitor
		// without it rather than guess what "" would accept.
		if !expectedCodesRe.MatchString(m.ExpectedCodes) {
			return nil, errf(http.StatusBadRequest, lbCodeInvalid, "expected_codes must be an HTTP status code or a range such as 2xx for %s monitors", m.Type)
		}
	case "tcp":
		m.Method = deref(in.Method, "connection_established")
		// Documented: the port is "Required for TCP, UDP, and SMTP checks".
		if m.Port == nil {
			return nil, errf(http.StatusBadRequest, lbCodeInvalid, "port is required for tcp monitors")
		}
	case "udp_icmp", "icmp_ping", "smtp":
		m.Method = deref(in.Method, "")
	default:
		return nil, errf(http.StatusBadRequest, lbCodeInvalid, "type must be one of http, https, tcp, udp_icmp, icmp_ping, smtp")
	}
	// GUESS: the bounds (Cloudflare's dashboard offers an interval of 10 s
	// to an hour on paid plans, a timeout of 1–10 s, 0–5 retries).
	switch {
	case m.Interval < 5 || m.Interval > 3600:
		return nil, errf(http.StatusBadRequest, lbCodeInvalid, "interval must be between 5 and 3600 seconds")
	case m.Timeout < 1 || m.Timeout > 10:
		return nil, errf(http.StatusBadRequest, lbCodeInvalid, "timeout must be between 1 and 10 seconds")
	case m.Retries < 0 || m.Retries > 5:
		return nil, errf(http.StatusBadRequest, lbCodeInvalid, "retries must be between 0 and 5")
	case m.Timeout >= m.Interval:
		return nil, errf(http.StatusBadRequest, lbCodeInvalid, "interval must be longer than timeout")
	case len(m.Description) > lbMaxDescription:
		return nil, errf(http.StatusBadRequest, lbCodeInvalid, "description is too long")
	}
	return m, nil
}

func deref[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

func (s *Server) createMonitor(_ *http.Request, body []byte) (any, any, *apiError) {
	var in monitorInput
	if err := decodeBody(body, &in); err != nil {
		return nil, nil, err
	}
	m, err := monitorFrom(in)
	if err != nil {
		return nil, nil, err
	}
	now := s.now()
	m.ID, m.created, m.CreatedOn, m.ModifiedOn = newHex32(), now, lbTime(now), lbTime(now)
	s.lb.monitors = append(s.lb.monitors, m)
	return m, nil, nil
}

func (s *Server) listMonitors(_ *http.Request, _ []byte) (any, any, *apiError) {
	out := []*lbMonitor{}
	for _, m := range s.lb.monitors {
		if s.listable(m.created) {
			out = append(out, m)
		}
	}
	return out, nil, nil
}

func (s *Server) findMonitor(r *http.Request) (*lbMonitor, int, *apiError) {
	id := r.PathValue("monitor_id")
	if !isHex32(id) {
		return nil, -1, badID(r)
	}
	for i, m := range s.lb.monitors {
		if m.ID == id {
			return m, i, nil
		}
	}
	return nil, -1, errf(http.StatusNotFound, lbCodeNotFound, "monitor %s not found", id)
}

func (s *Server) getMonitor(r *http.Request, _ []byte) (any, any, *apiError) {
	m, _, err := s.findMonitor(r)
	return m, nil, err
}

func (s *Server) updateMonitor(r *http.Request, body []byte) (any, any, *apiError) {
	old, i, err := s.findMonitor(r)
	if err != nil {
		return nil, nil, err
	}
	var in monitorInput
	if err := decodeBody(body, &in); err != nil {
		return nil, nil, err
	}
	m, err := monitorFrom(in)
	if err != nil {
		return nil, nil, err
	}
	m.ID, m.created, m.CreatedOn, m.ModifiedOn = old.ID, old.created, old.CreatedOn, lbTime(s.now())
	s.lb.monitors[i] = m
	s.forgetProbes("", m.ID)
	return m, nil, nil
}

func (s *Server) deleteMonitor(r *http.Request, _ []byte) (any, any, *apiError) {
	m, i, err := s.findMonitor(r)
	if err != nil {
		return nil, nil, err
	}
	for _, p := range s.lb.pools {
		if p.Monitor == m.ID {
			return nil, nil, errf(http.StatusBadRequest, lbCodeReferenced, "This object is referenced by other objects, delete them first. (pool %s)", p.ID)
		}
	}
	s.lb.monitors = slices.Delete(s.lb.monitors, i, i+1)
	return map[string]string{"id": m.ID}, nil, nil
}

func (s *Server) monitorByID(id string) *lbMonitor {
	for _, m := range s.lb.monitors {
		if m.ID == id {
			return m
		}
	}
	return nil
}

// --- pools -----------------------------------------------------------------------

type lbOrigin struct {
	Name    string              `json:"name"`
	Address string              `json:"address"`
	Enabled bool                `json:"enabled"`
	Weight  float64             `json:"weight"`
	Header  map[string][]string `json:"header,omitempty"`
}

type lbPool struct {
	ID                string         `json:"id"`
	Name              string         `json:"name"`
	Description       string         `json:"description"`
	Enabled           bool           `json:"enabled"`
	MinimumOrigins    int            `json:"minimum_origins"`
	Monitor           string         `json:"monitor,omitempty"`
	Origins           []lbOrigin     `json:"origins"`
	NotificationEmail string         `json:"notification_email"`
	OriginSteering    map[string]any `json:"origin_steering"`
	CheckRegions      []string       `json:"check_regions"`
	CreatedOn         string         `json:"created_on"`
	ModifiedOn        string         `json:"modified_on"`
	created           time.Time
}

type originInput struct {
	Name    *string             `json:"name"`
	Address *string             `json:"address"`
	Enabled *bool               `json:"enabled"`
	Weight  *float64            `json:"weight"`
	Header  map[string][]string `json:"header"`
}

type poolInput struct {
	Name              *string        `json:"name"`
	Description       *string        `json:"description"`
	Enabled           *bool          `json:"enabled"`
	MinimumOrigins    *int           `json:"minimum_origins"`
	Monitor           *string        `json:"monitor"`
	Origins           *[]originInput `json:"origins"`
	NotificationEmail *string        `json:"notification_email"`
	OriginSteering    map[string]any `json:"origin_steering"`
}

// poolFrom is the pool a create or a PUT asks for, or why it is refused.
func (s *Server) poolFrom(in poolInput, self string) (*lbPool, *apiError) {
	// Documented: name and origins are required.
	if in.Name == nil || strings.TrimSpace(*in.Name) == "" {
		return nil, errf(http.StatusBadRequest, lbCodeInvalid, "name is required")
	}
	if in.Origins == nil || len(*in.Origins) == 0 {
		// GUESS: an empty list of origins is refused like a missing one.
		return nil, errf(http.StatusBadRequest, lbCodeInvalid, "origins is required: at least one origin")
	}
	p := &lbPool{
		Name: *in.Name, Description: deref(in.Description, ""), Enabled: deref(in.Enabled, true),
		MinimumOrigins: deref(in.MinimumOrigins, 1), Monitor: deref(in.Monitor, ""), NotificationEmail: deref(in.NotificationEmail, ""),
		OriginSteering: in.OriginSteering, CheckRegions: nil,
	}
	if p.OriginSteering == nil {
		p.OriginSteering = map[string]any{"policy": "random"}
	}
	for _, o := range s.lb.pools {
		// Documented in the dashboard ("A name (must be unique)"); the
		// answer is a GUESS (see the codes above).
		if o.ID != self && o.Name == p.Name {
			return nil, errf(http.StatusBadRequest, lbCodeNotUnique, "value not unique: a pool named %q already exists", p.Name)
		}
	}
	if p.Monitor != "" && s.monitorByID(p.Monitor) == nil {
		// GUESS: the answer for a monitor that does not exist.
		return nil, errf(http.StatusBadRequest, lbCodeInvalid, "monitor %s does not exist", p.Monitor)
	}
	if p.MinimumOrigins < 1 || p.MinimumOrigins > len(*in.Origins) {
		// GUESS: the bounds of minimum_origins.
		return nil, errf(http.StatusBadRequest, lbCodeInvalid, "minimum_origins must be between 1 and the number of origins")
	}
	origins, err := originsFrom(*in.Origins)
	if err != nil {
		return nil, err
	}
	p.Origins = origins
	if len(p.Description) > lbMaxDescription {
		return nil, errf(http.StatusBadRequest, lbCodeInvalid, "description is too long")
	}
	return p, nil
}

func originsFrom(in []originInput) ([]lbOrigin, *apiError) {
	out := make([]lbOrigin, 0, len(in))
	names := map[string]bool{}
	for _, o := range in {
		name, addr := deref(o.Name, ""), deref(o.Address, "")
		if name == "" || addr == "" {
			// GUESS: each origin needs a name and an address.
			return nil, errf(http.StatusBadRequest, lbCodeInvalid, "every origin needs a name and an address")
		}
		if names[name] {
			// GUESS: origin names are unique within a pool.
			return nil, errf(http.StatusBadRequest, lbCodeNotUnique, "value not unique: two origins named %q", name)
		}
		names[name] = true
		w := deref(o.Weight, 1)
		if w < 0 || w > 1 {
			return nil, errf(http.StatusBadRequest, lbCodeInvalid, "weight must be between 0 and 1")
		}
		for k := range o.Header {
			// Documented: the only header an origin may set is Host.
			if k != "Host" {
				return nil, errf(http.StatusBadRequest, lbCodeInvalid, "origin header may only be Host")
			}
		}
		out = append(out, lbOrigin{Name: name, Address: strings.ToLower(addr), Enabled: deref(o.Enabled, true), Weight: w, Header: o.Header})
	}
	return out, nil
}

func (s *Server) createPool(_ *http.Request, body []byte) (any, any, *apiError) {
	var in poolInput
	if err := decodeBody(body, &in); err != nil {
		return nil, nil, err
	}
	p, err := s.poolFrom(in, "")
	if err != nil {
		return nil, nil, err
	}
	now := s.now()
	p.ID, p.created, p.CreatedOn, p.ModifiedOn = newHex32(), now, lbTime(now), lbTime(now)
	s.lb.pools = append(s.lb.pools, p)
	return p, nil, nil
}

func (s *Server) listPools(r *http.Request, _ []byte) (any, any, *apiError) {
	monitor := r.URL.Query().Get("monitor")
	out := []*lbPool{}
	for _, p := range s.lb.pools {
		if s.listable(p.created) && (monitor == "" || p.Monitor == monitor) {
			out = append(out, p)
		}
	}
	return out, nil, nil
}

func (s *Server) findPool(r *http.Request) (*lbPool, int, *apiError) {
	id := r.PathValue("pool_id")
	if !isHex32(id) {
		return nil, -1, badID(r)
	}
	for i, p := range s.lb.pools {
		if p.ID == id {
			return p, i, nil
		}
	}
	return nil, -1, errf(http.StatusNotFound, lbCodeNotFound, "pool %s not found", id)
}

func (s *Server) getPool(r *http.Request, _ []byte) (any, any, *apiError) {
	p, _, err := s.findPool(r)
	return p, nil, err
}

func (s *Server) updatePool(r *http.Request, body []byte) (any, any, *apiError) {
	old, i, err := s.findPool(r)
	if err != nil {
		return nil, nil, err
	}
	var in poolInput
	if err := decodeBody(body, &in); err != nil {
		return nil, nil, err
	}
	p, err := s.poolFrom(in, old.ID)
	if err != nil {
		return nil, nil, err
	}
	p.ID, p.created, p.CreatedOn, p.ModifiedOn = old.ID, old.created, old.CreatedOn, lbTime(s.now())
	s.lb.pools[i] = p
	s.forgetProbes(p.ID, "")
	return p, nil, nil
}

func (s *Server) deletePool(r *http.Request, _ []byte) (any, any, *apiError) {
	p, i, err := s.findPool(r)
	if err != nil {
		return nil, nil, err
	}
	for _, lb := range s.lb.lbs {
		if lb.uses(p.ID) {
			return nil, nil, errf(http.StatusBadRequest, lbCodeReferenced, "This object is referenced by other objects, delete them first. (load balancer %s)", lb.ID)
		}
	}
	s.lb.pools = slices.Delete(s.lb.pools, i, i+1)
	delete(s.lb.probes, p.ID)
	return map[string]string{"id": p.ID}, nil, nil
}

func (s *Server) poolByID(id string) *lbPool {
	for _, p := range s.lb.pools {
		if p.ID == id {
			return p
		}
	}
	return nil
}

// --- health ------------------------------------------------------------------------

// tunnelOriginRe is a tunnel's origin address, <tunnel ID>.cfargotunnel.com.
var tunnelOriginRe = regexp.MustCompile(`^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.cfargotunnel\.com$`)

// OriginHealth is what the simulator concludes of one origin.
type OriginHealth struct {
	Name    string `json:"name"`
	Address string `json:"address"`
	Healthy bool   `json:"healthy"`
	// FailureReason says why an unhealthy origin is.
	FailureReason string `json:"failure_reason,omitempty"`
	// ResponseCode is the HTTP status the probe got; 0 when it got none.
	ResponseCode int `json:"response_code,omitempty"`
}

// PoolHealth is the simulator's view of one pool's health.
type PoolHealth struct {
	PoolID  string         `json:"pool_id"`
	Healthy bool           `json:"healthy"`
	Origins []OriginHealth `json:"origins"`
}

// poolProbes are a monitored pool's last probe: when, and each enabled
// origin's standing (by origin name).
type poolProbes struct {
	at      time.Time
	origins map[string]*originStanding
}

// originStanding is an origin's health with the run of probe results
// that agree with the newest (monitors' consecutive_up/consecutive_down).
type originStanding struct {
	health OriginHealth
	streak int
}

// poolHealthOf: a pool is healthy when it is enabled and at least
// minimum_origins of its enabled origins are (documented: "The minimum
// number of origins that must be healthy for this pool to serve traffic").
// A monitored pool's origins are as its last probe found them: a probe is
// due once the monitor's interval has passed since the last one, and
// happens at the next read of the pool's health (the health endpoint, the
// decision, PoolHealth). So a change shows no earlier than Cloudflare,
// probing at those moments, would show it. GUESS: a new pool, or one whose
// pool or monitor was just written, is probed at its first read; an
// origin's first probe decides its health at once, later ones only after
// consecutive_down failures (consecutive_up successes) in a row; every
// region Cloudflare probes from agrees (one region).
func (s *Server) poolHealthOf(p *lbPool) PoolHealth {
	out := PoolHealth{PoolID: p.ID, Origins: []OriginHealth{}}
	probes := s.probesOf(p)
	healthy := 0
	for _, o := range p.Origins {
		if !o.Enabled {
			continue
		}
		h := probes.origins[o.Name].health
		if h.Healthy {
			healthy++
		}
		out.Origins = append(out.Origins, h)
	}
	out.Healthy = p.Enabled && healthy >= p.MinimumOrigins
	return out
}

// probesOf is the pool's last probe, probing now if one is due.
func (s *Server) probesOf(p *lbPool) *poolProbes {
	m := s.monitorByID(p.Monitor)
	last := s.lb.probes[p.ID]
	now := s.now()
	if m != nil && last != nil && now.Before(last.at.Add(time.Duration(m.Interval)*time.Second)) {
		return last
	}
	next := &poolProbes{at: now, origins: map[string]*originStanding{}}
	for _, o := range p.Origins {
		result := s.probe(p, m, o)
		prev := (*originStanding)(nil)
		if last != nil {
			prev = last.origins[o.Name]
		}
		next.origins[o.Name] = standing(prev, result, m)
	}
	if m != nil {
		if s.lb.probes == nil {
			s.lb.probes = map[string]*poolProbes{}
		}
		s.lb.probes[p.ID] = next
	}
	return next
}

// standing is an origin's health after a probe found result.
func standing(prev *originStanding, result OriginHealth, m *lbMonitor) *originStanding {
	if prev == nil || m == nil {
		return &originStanding{health: result}
	}
	if result.Healthy != prev.health.Healthy {
		needed := m.ConsecutiveDown
		if result.Healthy {
			needed = m.ConsecutiveUp
		}
		streak := prev.streak + 1
		if streak < needed {
			return &originStanding{health: prev.health, streak: streak}
		}
		return &originStanding{health: result, streak: 0}
	}
	// The same verdict again: the run of contrary results is broken.
	return &originStanding{health: result, streak: 0}
}

// forgetProbes makes the pools m monitors (or the pool id) be probed
// afresh at their next read.
func (s *Server) forgetProbes(pool, monitor string) {
	for _, p := range s.lb.pools {
		if p.ID == pool || monitor != "" && p.Monitor == monitor {
			delete(s.lb.probes, p.ID)
		}
	}
}

// probe is what one probe of origin o by monitor m finds. A tunnel origin
// (<tunnel ID>.cfargotunnel.com) is probed as Cloudflare's edge reaches it:
// the tunnel must have connections, and the rule cloudflared picks for the
// probe's Host and the monitor's path must answer one of the expected
// codes. Documented: TCP monitors do not work on tunnel origins, and an
// origin's Host header takes precedence over the monitor's. GUESS: any
// other address is healthy (the simulator cannot probe it), a pool without
// a monitor counts every enabled origin healthy, as Cloudflare does for
// pools it does not check, and a rule whose service is an HTTP origin
// answers 200 (the simulator does not dial origins to probe them).
func (s *Server) probe(p *lbPool, m *lbMonitor, o lbOrigin) OriginHealth {
	h := OriginHealth{Name: o.Name, Address: o.Address, Healthy: true}
	id, tunnelOrigin := tunnelOriginID(o.Address)
	switch {
	case !tunnelOrigin || m == nil && p.Monitor == "":
		return h
	case m == nil:
		h.Healthy, h.FailureReason = false, "the pool's monitor does not exist"
	case m.Type == "tcp":
		h.Healthy, h.FailureReason = false, "TCP monitors do not work on Cloudflare Tunnel origins"
	case m.Type != "http" && m.Type != "https":
		h.Healthy, h.FailureReason = false, m.Type+" monitors do not reach Cloudflare Tunnel origins"
	default:
		return s.probeTunnel(id, m, o, h)
	}
	return h
}

// probeTunnel probes a tunnel origin over HTTP(S). GUESS: the failure
// reasons' wording.
func (s *Server) probeTunnel(id string, m *lbMonitor, o lbOrigin, h OriginHealth) OriginHealth {
	t := s.tunnelByID(id)
	switch {
	case t == nil:
		h.Healthy, h.FailureReason = false, "no such tunnel"
		return h
	case t.Status != "healthy" && t.Status != "degraded":
		h.Healthy, h.FailureReason = false, "the tunnel has no connections to Cloudflare"
		return h
	}
	h.ResponseCode = tunnelAnswer(t, probeHost(m, o), m.Path)
	if !expectedCode(m.ExpectedCodes, h.ResponseCode) {
		h.Healthy = false
		h.FailureReason = fmt.Sprintf("HTTP response code %d is not the expected %s", h.ResponseCode, m.ExpectedCodes)
	}
	return h
}

// probeHost is the Host a probe of o carries: the origin's own Host
// header, else the monitor's, else the origin's address.
func probeHost(m *lbMonitor, o lbOrigin) string {
	for _, hdr := range []map[string][]string{o.Header, m.Header} {
		if v := hdr["Host"]; len(v) > 0 && v[0] != "" {
			return v[0]
		}
	}
	return o.Address
}

// tunnelAnswer is the status the tunnel's configuration gives a request
// for host and path: cloudflared's rule (its catch-all when none
// matches; 503 with no configuration), as the edge serves it. A rule
// requiring Access answers 403: a probe carries no Access token.
func tunnelAnswer(t *tunnel, host, path string) int {
	ing := cloudflared.Default()
	if t.ingress != nil {
		ing = *t.ingress
	}
	rule, _ := ing.Match(host, path)
	switch {
	case rule.Access.Required:
		return http.StatusForbidden
	case rule.Service.Kind == cloudflared.ServiceStatus:
		return rule.Service.Status
	case rule.Service.Kind == cloudflared.ServiceHTTP || rule.Service.Kind == cloudflared.ServiceHelloWorld:
		return http.StatusOK
	}
	return http.StatusBadGateway
}

// expectedCode: codes is a status ("200") or a class ("2xx").
func expectedCode(codes string, code int) bool {
	got := strconv.Itoa(code)
	if strings.HasSuffix(codes, "xx") {
		return len(got) == 3 && got[0] == codes[0]
	}
	return got == codes
}

func tunnelOriginID(address string) (string, bool) {
	m := tunnelOriginRe.FindStringSubmatch(address)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// poolHealth answers GET …/pools/{id}/health in the document's shape:
// pop_health.healthy and pop_health.origins, each origin an object keyed
// by its address. GUESS: Cloudflare keys pop_health by data centre; the
// simulator has one.
func (s *Server) poolHealth(r *http.Request, _ []byte) (any, any, *apiError) {
	p, _, err := s.findPool(r)
	if err != nil {
		return nil, nil, err
	}
	h := s.poolHealthOf(p)
	origins := make([]map[string]any, 0, len(h.Origins))
	for _, o := range h.Origins {
		entry := map[string]any{"healthy": o.Healthy, "rtt": "1ms"}
		if !o.Healthy {
			entry["failure_reason"] = o.FailureReason
		}
		if o.ResponseCode != 0 {
			entry["response_code"] = o.ResponseCode
		} else if o.Healthy {
			// GUESS: an origin the simulator does not probe answers 200.
			entry["response_code"] = http.StatusOK
		}
		origins = append(origins, map[string]any{o.Address: entry})
	}
	return map[string]any{"pool_id": p.ID, "pop_health": map[string]any{"healthy": h.Healthy, "origins": origins}}, nil, nil
}

// PoolHealth is the health the simulator computes for pool id now.
func (s *Server) PoolHealth(id string) (PoolHealth, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireConnectors()
	p := s.poolByID(id)
	if p == nil {
		return PoolHealth{}, false
	}
	return s.poolHealthOf(p), true
}

// --- load balancers -----------------------------------------------------------------

type loadBalancer struct {
	ID                 string         `json:"id"`
	Name               string         `json:"name"`
	Description        string         `json:"description"`
	Enabled            bool           `json:"enabled"`
	Proxied            bool           `json:"proxied"`
	TTL                int            `json:"ttl,omitempty"`
	DefaultPools       []string       `json:"default_pools"`
	FallbackPool       string         `json:"fallback_pool"`
	SteeringPolicy     string         `json:"steering_policy"`
	SessionAffinity    string         `json:"session_affinity"`
	SessionAffinityTTL *float64       `json:"session_affinity_ttl,omitempty"`
	RegionPools        map[string]any `json:"region_pools"`
	PopPools           map[string]any `json:"pop_pools"`
	CountryPools       map[string]any `json:"country_pools"`
	ZoneName           string         `json:"zone_name"`
	CreatedOn          string         `json:"created_on"`
	ModifiedOn         string         `json:"modified_on"`
	zoneID             string
	created            time.Time
}

func (lb *loadBalancer) uses(pool string) bool {
	return lb.FallbackPool == pool || slices.Contains(lb.DefaultPools, pool)
}

type loadBalancerInput struct {
	Name               *string   `json:"name"`
	Description        *string   `json:"description"`
	Enabled            *bool     `json:"enabled"`
	Proxied            *bool     `json:"proxied"`
	TTL                *int      `json:"ttl"`
	DefaultPools       *[]string `json:"default_pools"`
	FallbackPool       *string   `json:"fallback_pool"`
	SteeringPolicy     *string   `json:"steering_policy"`
	SessionAffinity    *string   `json:"session_affinity"`
	SessionAffinityTTL *float64  `json:"session_affinity_ttl"`
}

var (
	steeringPolicies  = []string{"off", "geo", "random", "dynamic_latency", "proximity", "least_outstanding_requests", "least_connections", ""}
	sessionAffinities = []string{"none", "cookie", "ip_cookie", "header"}
)

// loadBalancerFrom is the load balancer a create or PUT asks for in zone z,
// or why it is refused.
func (s *Server) loadBalancerFrom(in loadBalancerInput, z *zone, self string) (*loadBalancer, *apiError) {
	// The SDK marks name, default_pools and fallback_pool required.
	if in.Name == nil || in.DefaultPools == nil || len(*in.DefaultPools) == 0 || in.FallbackPool == nil || *in.FallbackPool == "" {
		return nil, errf(http.StatusBadRequest, lbCodeInvalid, "name, default_pools and fallback_pool are required")
	}
	lb := &loadBalancer{
		Name: strings.TrimSuffix(strings.ToLower(*in.Name), "."), Description: deref(in.Description, ""), Enabled: deref(in.Enabled, true),
		Proxied: deref(in.Proxied, false), DefaultPools: *in.DefaultPools, FallbackPool: *in.FallbackPool,
		SteeringPolicy: deref(in.SteeringPolicy, ""), SessionAffinity: deref(in.SessionAffinity, "none"), SessionAffinityTTL: in.SessionAffinityTTL,
		RegionPools: map[string]any{}, PopPools: map[string]any{}, CountryPools: map[string]any{}, ZoneName: z.Name, zoneID: z.ID,
	}
	if !lb.Proxied {
		// Documented: ttl "Only applicable to unproxied load balancers";
		// the default of 30 is a GUESS.
		lb.TTL = deref(in.TTL, 30)
	}
	if err := s.checkLoadBalancer(lb, z, self); err != nil {
		return nil, err
	}
	return lb, nil
}

func (s *Server) checkLoadBalancer(lb *loadBalancer, z *zone, self string) *apiError {
	switch {
	case lb.Name != z.Name && !strings.HasSuffix(lb.Name, "."+z.Name):
		// GUESS: a name outside the zone is refused.
		return errf(http.StatusBadRequest, lbCodeInvalid, "name %q is not in zone %s", lb.Name, z.Name)
	case !slices.Contains(steeringPolicies, lb.SteeringPolicy):
		return errf(http.StatusBadRequest, lbCodeInvalid, "steering_policy %q is not supported", lb.SteeringPolicy)
	case !slices.Contains(sessionAffinities, lb.SessionAffinity):
		return errf(http.StatusBadRequest, lbCodeInvalid, "session_affinity %q is not supported", lb.SessionAffinity)
	case lb.SessionAffinity != "none" && lb.SessionAffinity != "ip_cookie" && !lb.Proxied:
		// Documented: cookie and header affinity need a proxied load
		// balancer; the answer is a GUESS.
		return errf(http.StatusBadRequest, lbCodeInvalid, "session_affinity %q requires a proxied load balancer", lb.SessionAffinity)
	case len(lb.Description) > lbMaxDescription:
		return errf(http.StatusBadRequest, lbCodeInvalid, "description is too long")
	}
	for _, id := range append(slices.Clone(lb.DefaultPools), lb.FallbackPool) {
		if s.poolByID(id) == nil {
			// GUESS: the answer for a pool that does not exist.
			return errf(http.StatusBadRequest, lbCodeInvalid, "pool %s does not exist", id)
		}
	}
	for _, o := range s.lb.lbs {
		if o.ID != self && o.zoneID == z.ID && o.Name == lb.Name {
			return errf(http.StatusBadRequest, lbCodeNotUnique, "value not unique: a load balancer named %q already exists", lb.Name)
		}
	}
	// Documented (the SDK, on name): "If this hostname already exists as a
	// DNS record in Cloudflare's DNS, the Load Balancer will take
	// precedence and the DNS record will not be used." So Cloudflare does
	// not refuse a name a record holds: a client must look first.
	return nil
}

func (s *Server) createLoadBalancer(r *http.Request, body []byte) (any, any, *apiError) {
	z, err := s.findZone(r)
	if err != nil {
		return nil, nil, err
	}
	var in loadBalancerInput
	if err := decodeBody(body, &in); err != nil {
		return nil, nil, err
	}
	lb, err := s.loadBalancerFrom(in, z, "")
	if err != nil {
		return nil, nil, err
	}
	now := s.now()
	lb.ID, lb.created, lb.CreatedOn, lb.ModifiedOn = newHex32(), now, lbTime(now), lbTime(now)
	s.lb.lbs = append(s.lb.lbs, lb)
	return lb, nil, nil
}

func (s *Server) listLoadBalancers(r *http.Request, _ []byte) (any, any, *apiError) {
	z, err := s.findZone(r)
	if err != nil {
		return nil, nil, err
	}
	out := []*loadBalancer{}
	for _, lb := range s.lb.lbs {
		if lb.zoneID == z.ID && s.listable(lb.created) {
			out = append(out, lb)
		}
	}
	return out, nil, nil
}

func (s *Server) findLoadBalancer(r *http.Request) (*loadBalancer, *zone, int, *apiError) {
	z, err := s.findZone(r)
	if err != nil {
		return nil, nil, -1, err
	}
	id := r.PathValue("load_balancer_id")
	if !isHex32(id) {
		return nil, nil, -1, badID(r)
	}
	for i, lb := range s.lb.lbs {
		if lb.ID == id && lb.zoneID == z.ID {
			return lb, z, i, nil
		}
	}
	return nil, nil, -1, errf(http.StatusNotFound, lbCodeNotFound, "load balancer %s not found", id)
}

func (s *Server) getLoadBalancer(r *http.Request, _ []byte) (any, any, *apiError) {
	lb, _, _, err := s.findLoadBalancer(r)
	return lb, nil, err
}

func (s *Server) updateLoadBalancer(r *http.Request, body []byte) (any, any, *apiError) {
	old, z, i, err := s.findLoadBalancer(r)
	if err != nil {
		return nil, nil, err
	}
	var in loadBalancerInput
	if err := decodeBody(body, &in); err != nil {
		return nil, nil, err
	}
	lb, err := s.loadBalancerFrom(in, z, old.ID)
	if err != nil {
		return nil, nil, err
	}
	lb.ID, lb.created, lb.CreatedOn, lb.ModifiedOn = old.ID, old.created, old.CreatedOn, lbTime(s.now())
	s.lb.lbs[i] = lb
	return lb, nil, nil
}

func (s *Server) deleteLoadBalancer(r *http.Request, _ []byte) (any, any, *apiError) {
	lb, _, i, err := s.findLoadBalancer(r)
	if err != nil {
		return nil, nil, err
	}
	s.lb.lbs = slices.Delete(s.lb.lbs, i, i+1)
	return map[string]string{"id": lb.ID}, nil, nil
}

// --- the decision ---------------------------------------------------------------------

// LoadBalancerDecision is which pool and origin would serve a hostname now.
type LoadBalancerDecision struct {
	LoadBalancerID string `json:"load_balancer_id"`
	PoolID         string `json:"pool_id"`
	PoolName       string `json:"pool_name"`
	// Origin is the origin chosen in that pool; "" when none is healthy
	// (only the fallback pool is then used, healthy or not).
	Origin        string `json:"origin"`
	OriginAddress string `json:"origin_address"`
	// Fallback: no default pool was healthy.
	Fallback bool `json:"fallback"`
	// Candidates are every pool the steering policy may pick from; with
	// steering off (failover) only the first healthy one.
	Candidates []string `json:"candidates"`
}

// Decide answers which pool and origin of the enabled load balancer named
// hostname would serve it now: with steering off (Cloudflare's failover)
// the first healthy default pool in order, else the fallback pool
// (documented: "The pool ID to use when all other pools are detected as
// unhealthy"). Any other policy may pick any healthy default pool
// (Candidates); the simulator reports the first in order as its choice
// (GUESS: random and latency-based steering are not modelled). In the pool,
// the first healthy enabled origin of the highest weight.
func (s *Server) Decide(hostname string) (LoadBalancerDecision, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireConnectors()
	name := strings.TrimSuffix(strings.ToLower(hostname), ".")
	for _, lb := range s.lb.lbs {
		if lb.Name == name && lb.Enabled {
			return s.decide(lb), true
		}
	}
	return LoadBalancerDecision{}, false
}

func (s *Server) decide(lb *loadBalancer) LoadBalancerDecision {
	d := LoadBalancerDecision{LoadBalancerID: lb.ID, Candidates: []string{}}
	for _, id := range lb.DefaultPools {
		if p := s.poolByID(id); p != nil && s.poolHealthOf(p).Healthy {
			d.Candidates = append(d.Candidates, id)
			if lb.SteeringPolicy == "off" || lb.SteeringPolicy == "" {
				break
			}
		}
	}
	chosen := lb.FallbackPool
	if len(d.Candidates) > 0 {
		chosen = d.Candidates[0]
	} else {
		d.Fallback = true
		d.Candidates = append(d.Candidates, chosen)
	}
	p := s.poolByID(chosen)
	if p == nil {
		return d
	}
	d.PoolID, d.PoolName = p.ID, p.Name
	if o, ok := s.chooseOrigin(p); ok {
		d.Origin, d.OriginAddress = o.Name, o.Address
	}
	return d
}

func (s *Server) chooseOrigin(p *lbPool) (lbOrigin, bool) {
	var best lbOrigin
	found := false
	probes := s.probesOf(p)
	for _, o := range p.Origins {
		if !o.Enabled || o.Weight == 0 || !probes.origins[o.Name].health.Healthy {
			continue
		}
		if !found || o.Weight > best.Weight {
			best, found = o, true
		}
	}
	return best, found
}

// handleDecision answers GET /__sim/load_balancers/decision?hostname=….
func (s *Server) handleDecision(w http.ResponseWriter, r *http.Request) {
	host := r.URL.Query().Get("hostname")
	d, ok := s.Decide(host)
	if !ok {
		http.Error(w, fmt.Sprintf("no enabled load balancer named %q", host), http.StatusNotFound)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

// handlePoolHealth answers GET /__sim/load_balancers/pools/{pool_id}/health.
func (s *Server) handlePoolHealth(w http.ResponseWriter, r *http.Request) {
	h, ok := s.PoolHealth(r.PathValue("pool_id"))
	if !ok {
		http.Error(w, "no such pool", http.StatusNotFound)
		return
	}
	writeJSON(w, http.StatusOK, h)
}

// loadBalancingState copies the account's Load Balancing objects for a
// snapshot; the caller holds s.mu.
func (s *Server) loadBalancingState() LoadBalancingState {
	st := LoadBalancingState{Monitors: []lbMonitor{}, Pools: []lbPool{}, LoadBalancers: []loadBalancer{}}
	for _, m := range s.lb.monitors {
		st.Monitors = append(st.Monitors, *m)
	}
	for _, p := range s.lb.pools {
		st.Pools = append(st.Pools, *p)
	}
	for _, lb := range s.lb.lbs {
		st.LoadBalancers = append(st.LoadBalancers, *lb)
	}
	return st
}

// LoadBalancingObjects counts the account's monitors, pools and load
// balancers, for tests that check what is left.
func (s *Server) LoadBalancingObjects() (monitors, pools, loadBalancers int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.lb.monitors), len(s.lb.pools), len(s.lb.lbs)
}
