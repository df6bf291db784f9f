// Package sim is a stateful, in-memory Cloudflare API simulator for tests and
// the local sandbox. It speaks the real API contract for every operation the
// provider uses: the v4 envelope, real status and error codes, pagination
// ending in an empty page, list filters, soft delete, bearer-token auth and
// the per-token rate limit. It is test equipment: the provider binary never
// imports it.
package sim

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	mrand "math/rand/v2"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Options configure a simulator.
type Options struct {
	// Token is the only API token accepted (Authorization: Bearer <Token>).
	Token string
	// AccountID is the one account the simulator serves (32 hex).
	AccountID string
	// Zones are the DNS zones that exist in the account, e.g. "example.com".
	Zones []string

	// RateLimit is the number of requests a token may make per RateWindow;
	// 0 turns rate limiting off. Cloudflare's is 1,200 per 5 minutes.
	RateLimit int
	// RateWindow defaults to 5 minutes.
	RateWindow time.Duration
	// RatePenalty is how long every call is refused once the limit is
	// exceeded; defaults to RateWindow.
	RatePenalty time.Duration

	// ErrorRate is the fraction (0–1) of API calls answered with an injected
	// 500 error.
	ErrorRate float64
	// Latency is added to every API call.
	Latency time.Duration
	// LostResponseRate is the fraction (0–1) of successful writes (POST,
	// PUT, PATCH, DELETE) whose response is replaced by a 500 after the
	// write has happened: the ambiguous failure a timeout or a dropped
	// connection produces, which a client must not answer with a duplicate.
	LostResponseRate float64

	// DNSBatchLimit is the number of operations one DNS batch may hold:
	// Cloudflare allows 200 on a free zone and 3,500 on paid plans; 0 means
	// DefaultDNSBatchLimit.
	DNSBatchLimit int

	// ListLag hides an object from list responses until it is this old;
	// a GET by its ID finds it at once. Cloudflare documents no such lag,
	// but its lists are served from replicas that are not promised to hold
	// a write that just returned, and the provider's creation grace period
	// (30 s) exists for exactly that; the simulator's shape of the lag
	// (creates only, a fixed delay, GETs by ID exempt) is a GUESS. 0 (the
	// default) lists every write at once.
	ListLag time.Duration

	// ConnectorLinger keeps a connector listed, and its tunnel serving, for
	// this long after it stops (SetConnectors, SetConnectorStates): the
	// edge notices a cloudflared that went away only when its connections
	// time out (one project measured about 30 s), and meanwhile refuses to
	// delete the tunnel (400, code 1022). The length is a GUESS from that
	// measurement. 0 (the default) drops a stopped connector at once.
	// Deleting the tunnel's connections (DELETE …/connections) or a
	// cascade delete still removes lingering connectors at once.
	ConnectorLinger time.Duration

	// LegacyTunnelConnections puts the deprecated "connections" array in
	// tunnel responses (always empty, as the OpenAPI document announced),
	// as Cloudflare did before 2026-10-05. Off (the default), tunnels come
	// without it, as Cloudflare's do now; clients read
	// GET …/cfd_tunnel/{id}/connections instead.
	LegacyTunnelConnections bool

	// RejectTunnelDeleteWithCIDRRoutes restores Cloudflare's pre-2025
	// behaviour of refusing (1023) to delete a tunnel that still has CIDR
	// routes; by default they are deleted with it.
	RejectTunnelDeleteWithCIDRRoutes bool

	// AccessTeam is the account's Zero Trust team name: its organization's
	// auth_domain is <AccessTeam>.cloudflareaccess.com. Defaults to
	// "sim-team".
	AccessTeam string
	// NoAccessOrganization models an account that never set up Zero Trust:
	// it has no Access organization, and every Access endpoint refuses
	// (403, code 9999; see accessEnabled).
	NoAccessOrganization bool
	// AccessOrganizationCreated is when the account's Zero Trust
	// organization was made (zero: when the simulator starts). One made
	// on or after 2026-10-05 has strict service token authentication on,
	// for good (SetStrictServiceTokenAuth).
	AccessOrganizationCreated time.Time

	// Now is the clock; defaults to time.Now.
	Now func() time.Time
}

// Cloudflare's documented API rate limit: 1,200 requests per five minutes
// per user, after which every call is refused with 429 for five minutes
// (developers.cloudflare.com/fundamentals/api/reference/limits).
const (
	CloudflareRateLimit  = 1200
	CloudflareRateWindow = 5 * time.Minute
)

// DefaultDNSBatchLimit is a free zone's limit of operations per DNS batch.
const DefaultDNSBatchLimit = 200

// Server is the simulator. It is an http.Handler serving the API under both
// "/" and "/client/v4/", plus test hooks under "/__sim/".
type Server struct {
	opts Options
	mux  *http.ServeMux

	mu       sync.Mutex
	tunnels  []*tunnel
	routes   []*hostnameRoute
	services []*service
	zones    []*zone
	records  []*dnsRecord
	cidr     []*cidrRoute
	vnets    []*vnet
	access   accessState
	lb       loadBalancingState
	stats    map[string]*OpStats
	// served counts API calls by method and path ("GET /accounts/…"),
	// whatever their answer: the evidence a test waits for that the
	// provider looked at an object (Served).
	served  map[string]int
	limiter map[string]*tokenWindow
	// throttledUntil: every call is answered 429 until then (Throttle).
	throttledUntil time.Time
	lostResponses  map[string]int
	// failNext: the next n calls of an operation are answered 500 before
	// anything happens (FailNext).
	failNext map[string]int
	// loseNext: the next n successful writes of an operation happen, but
	// are answered 500 (LoseNext).
	loseNext map[string]int
	rng      *mrand.Rand
	// watches check hostnames for exposure after every write
	// (WatchExposure).
	watches []*ExposureWatch
	// edgeOrigins maps the origins the edge dials ("host:port") to
	// addresses ("ip:port"): SetEdgeOrigins, PUT /__sim/edge/origins.
	edgeOrigins map[string]string
	// scopes limit tokens to some tunnels (ScopeToken): token → the
	// tunnel IDs it reaches. A token without an entry reaches all.
	scopes map[string]map[string]bool
	// dnsWatches record watched names' records after every DNS write
	// (WatchDNS).
	dnsWatches []*DNSWatch
}

// OpStats counts the requests one API operation received.
type OpStats struct {
	Requests    int         `json:"requests"`
	RateLimited int         `json:"rate_limited"`
	ByStatus    map[int]int `json:"by_status"`
}

// New returns a simulator.
func New(o Options) *Server {
	if o.RateWindow == 0 {
		o.RateWindow = 5 * time.Minute
	}
	if o.RatePenalty == 0 {
		o.RatePenalty = o.RateWindow
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.AccessTeam == "" {
		o.AccessTeam = "sim-team"
	}
	s := &Server{
		opts:    o,
		stats:   map[string]*OpStats{},
		served:  map[string]int{},
		limiter: map[string]*tokenWindow{},

		lostResponses: map[string]int{},
		failNext:      map[string]int{},
		loseNext:      map[string]int{},
		rng:           mrand.New(mrand.NewPCG(1, 2)),
	}
	for _, z := range o.Zones {
		s.zones = append(s.zones, newZone(z, o.AccountID, o.Now()))
	}
	// The account's default network predates the simulator: no list lag.
	s.vnets = append(s.vnets, &vnet{ID: newUUID(), Name: "default", IsDefaultNetwork: true, Comment: "", CreatedAt: o.Now().UTC().Add(-o.ListLag)})
	if !o.NoAccessOrganization {
		created := o.AccessOrganizationCreated
		if created.IsZero() {
			created = o.Now()
		}
		s.access.org = newAccessOrganization(o.AccessTeam, created.UTC())
	}
	s.routesTable()
	return s
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// apiError is a Cloudflare failure: an HTTP status and an error code.
type apiError struct {
	status int
	code   int
	msg    string
}

func errf(status, code int, format string, args ...any) *apiError {
	return &apiError{status: status, code: code, msg: fmt.Sprintf(format, args...)}
}

// handlerFn runs with the simulator's lock held and returns the envelope's
// result (and result_info for lists).
type handlerFn func(r *http.Request, body []byte) (result any, info any, err *apiError)

func (s *Server) routesTable() {
	api := http.NewServeMux()
	for _, rt := range []struct {
		pattern, op string
		fn          handlerFn
	}{
		{"POST /accounts/{account_id}/cfd_tunnel", "tunnels.create", s.createTunnel},
		{"GET /accounts/{account_id}/cfd_tunnel", "tunnels.list", s.listTunnels},
		{"GET /accounts/{account_id}/cfd_tunnel/{tunnel_id}", "tunnels.get", s.getTunnel},
		{"PATCH /accounts/{account_id}/cfd_tunnel/{tunnel_id}", "tunnels.edit", s.editTunnel},
		{"DELETE /accounts/{account_id}/cfd_tunnel/{tunnel_id}", "tunnels.delete", s.deleteTunnel},
		{"GET /accounts/{account_id}/cfd_tunnel/{tunnel_id}/token", "tunnels.token", s.tunnelToken},
		{"GET /accounts/{account_id}/cfd_tunnel/{tunnel_id}/connections", "tunnels.connections.get", s.tunnelConnections},
		{"DELETE /accounts/{account_id}/cfd_tunnel/{tunnel_id}/connections", "tunnels.connections.delete", s.deleteTunnelConnections},
		{"GET /accounts/{account_id}/cfd_tunnel/{tunnel_id}/configurations", "tunnels.configurations.get", s.getConfiguration},
		{"PUT /accounts/{account_id}/cfd_tunnel/{tunnel_id}/configurations", "tunnels.configurations.update", s.putConfiguration},
		{"POST /accounts/{account_id}/zerotrust/routes/hostname", "hostname_routes.create", s.createRoute},
		{"GET /accounts/{account_id}/zerotrust/routes/hostname", "hostname_routes.list", s.listRoutes},
		{"GET /accounts/{account_id}/zerotrust/routes/hostname/{hostname_route_id}", "hostname_routes.get", s.getRoute},
		{"PATCH /accounts/{account_id}/zerotrust/routes/hostname/{hostname_route_id}", "hostname_routes.edit", s.editRoute},
		{"DELETE /accounts/{account_id}/zerotrust/routes/hostname/{hostname_route_id}", "hostname_routes.delete", s.deleteRoute},
		{"POST /accounts/{account_id}/connectivity/directory/services", "services.create", s.createService},
		{"GET /accounts/{account_id}/connectivity/directory/services", "services.list", s.listServices},
		{"GET /accounts/{account_id}/connectivity/directory/services/{service_id}", "services.get", s.getService},
		{"PUT /accounts/{account_id}/connectivity/directory/services/{service_id}", "services.update", s.updateService},
		{"DELETE /accounts/{account_id}/connectivity/directory/services/{service_id}", "services.delete", s.deleteService},
		{"GET /zones", "zones.list", s.listZones},
		{"POST /zones/{zone_id}/dns_records", "dns_records.create", s.createRecord},
		{"GET /zones/{zone_id}/dns_records", "dns_records.list", s.listRecords},
		{"GET /zones/{zone_id}/dns_records/{dns_record_id}", "dns_records.get", s.getRecord},
		{"PATCH /zones/{zone_id}/dns_records/{dns_record_id}", "dns_records.edit", s.editRecord},
		{"PUT /zones/{zone_id}/dns_records/{dns_record_id}", "dns_records.update", s.updateRecord},
		{"DELETE /zones/{zone_id}/dns_records/{dns_record_id}", "dns_records.delete", s.deleteRecord},
		{"POST /zones/{zone_id}/dns_records/batch", "dns_records.batch", s.batchRecords},
		{"POST /accounts/{account_id}/teamnet/routes", "teamnet_routes.create", s.createCIDRRoute},
		{"GET /accounts/{account_id}/teamnet/routes", "teamnet_routes.list", s.listCIDRRoutes},
		{"GET /accounts/{account_id}/teamnet/routes/{route_id}", "teamnet_routes.get", s.getCIDRRoute},
		{"PATCH /accounts/{account_id}/teamnet/routes/{route_id}", "teamnet_routes.edit", s.editCIDRRoute},
		{"DELETE /accounts/{account_id}/teamnet/routes/{route_id}", "teamnet_routes.delete", s.deleteCIDRRoute},
		{"GET /accounts/{account_id}/teamnet/virtual_networks", "virtual_networks.list", s.listVNets},
		{"POST /accounts/{account_id}/teamnet/virtual_networks", "virtual_networks.create", s.createVNet},
		{"GET /accounts/{account_id}/teamnet/virtual_networks/{virtual_network_id}", "virtual_networks.get", s.getVNet},
		{"PATCH /accounts/{account_id}/teamnet/virtual_networks/{virtual_network_id}", "virtual_networks.edit", s.editVNet},
		{"DELETE /accounts/{account_id}/teamnet/virtual_networks/{virtual_network_id}", "virtual_networks.delete", s.deleteVNet},
		{"GET /accounts/{account_id}/teamnet/routes/ip/{ip}", "teamnet_routes.ip", s.routeForIP},
	} {
		api.Handle(rt.pattern, s.wrap(rt.op, rt.fn))
	}
	for _, rt := range s.accessRoutes() {
		api.Handle(rt.pattern, s.wrapStatus(rt.op, rt.status, rt.fn))
	}
	for _, rt := range s.loadBalancingRoutes() {
		api.Handle(rt.pattern, s.wrap(rt.op, rt.fn))
	}
	api.Handle("/", s.wrap("unknown", func(r *http.Request, _ []byte) (any, any, *apiError) {
		return nil, nil, errf(http.StatusBadRequest, 7000, "No route for that URI")
	}))

	root := http.NewServeMux()
	root.Handle("/client/v4/", http.StripPrefix("/client/v4", api))
	root.Handle("/", api)
	root.HandleFunc("GET /__sim/stats", s.handleStats)
	root.HandleFunc("POST /__sim/stats/reset", s.handleStatsReset)
	root.HandleFunc("GET /__sim/state", s.handleState)
	root.HandleFunc("GET /__sim/faults", s.handleFaults)
	root.HandleFunc("POST /__sim/faults", s.handleFaults)
	root.HandleFunc("POST /__sim/tunnels/{tunnel_id}/connectors", s.handleConnectors)
	root.HandleFunc("POST /__sim/connect", s.handleConnect)
	root.HandleFunc("POST /__sim/scope", s.handleScope)
	root.HandleFunc("POST /__sim/access/decision", s.handleAccessDecision)
	root.HandleFunc("GET /__sim/edge/origins", s.handleEdgeOrigins)
	root.HandleFunc("PUT /__sim/edge/origins", s.handleEdgeOrigins)
	root.HandleFunc("GET /__sim/load_balancers/decision", s.handleDecision)
	root.HandleFunc("GET /__sim/load_balancers/pools/{pool_id}/health", s.handlePoolHealth)
	s.mux = root
}

type envelope struct {
	Success    bool              `json:"success"`
	Errors     []envelopeMessage `json:"errors"`
	Messages   []envelopeMessage `json:"messages"`
	Result     any               `json:"result"`
	ResultInfo any               `json:"result_info,omitempty"`
}

type envelopeMessage struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, e *apiError) {
	writeJSON(w, e.status, envelope{Success: false, Errors: []envelopeMessage{{Code: e.code, Message: e.msg}}, Messages: []envelopeMessage{}})
}

// wrap applies what every API call goes through, in Cloudflare's order:
// latency, authentication, the rate limit, injected faults, then the
// operation itself under the simulator's lock.
func (s *Server) wrap(op string, fn handlerFn) http.Handler {
	return s.wrapStatus(op, http.StatusOK, fn)
}

// wrapStatus is wrap for an operation whose success is not 200: Access
// answers its creates 201 and most of its deletes 202, as its OpenAPI
// document declares.
func (s *Server) wrapStatus(op string, okStatus int, fn handlerFn) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f := s.Faults(); f.Latency > 0 {
			time.Sleep(f.Latency)
		}
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		defer func() { s.count(op, rec.status, r.Method+" "+r.URL.Path) }()

		token, ok := bearer(r)
		if !ok || token != s.opts.Token {
			writeError(rec, errf(http.StatusForbidden, 10000, "Authentication error"))
			return
		}
		if wait, ok := s.admit(token, rec.Header()); !ok {
			rec.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
			writeError(rec, errf(http.StatusTooManyRequests, 971, "Please wait and consider throttling your request speed"))
			return
		}
		if s.injectFault() || s.takeFailNext(op) {
			writeError(rec, errf(http.StatusInternalServerError, 10001, "Internal server error (injected by the simulator)"))
			return
		}
		if acc := r.PathValue("account_id"); acc != "" {
			if !isHex32(acc) {
				writeError(rec, errf(http.StatusBadRequest, 7003, "Could not route to %s, perhaps your object identifier is invalid?", r.URL.Path))
				return
			}
			if acc != s.opts.AccountID {
				writeError(rec, errf(http.StatusForbidden, 9109, "Unauthorized to access requested resource"))
				return
			}
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, 10<<20))
		if err != nil {
			writeError(rec, errf(http.StatusBadRequest, 1001, "cannot read request body"))
			return
		}
		s.mu.Lock()
		s.expireConnectors()
		result, info, aerr := fn(r, body)
		if aerr == nil && r.Method != http.MethodGet {
			s.checkExposure(op)
		}
		lost := aerr == nil && r.Method != http.MethodGet && s.opts.LostResponseRate > 0 && s.rng.Float64() < s.opts.LostResponseRate
		if !lost && aerr == nil && r.Method != http.MethodGet && s.loseNext[op] > 0 {
			s.loseNext[op]--
			lost = true
		}
		s.mu.Unlock()
		if aerr != nil {
			writeError(rec, aerr)
			return
		}
		if lost {
			s.countLost(op)
			writeError(rec, errf(http.StatusInternalServerError, 10001, "Internal server error (injected by the simulator after the write was done)"))
			return
		}
		writeJSON(rec, okStatus, envelope{Success: true, Errors: []envelopeMessage{}, Messages: []envelopeMessage{}, Result: result, ResultInfo: info})
	})
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	t, ok := strings.CutPrefix(h, "Bearer ")
	return strings.TrimSpace(t), ok && strings.TrimSpace(t) != ""
}

func (s *Server) injectFault() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.opts.ErrorRate <= 0 {
		return false
	}
	return s.rng.Float64() < s.opts.ErrorRate
}

// FailNext answers the next n calls of operation op (e.g. "tunnels.token")
// with a 500 before anything happens: a failure at one chosen step, for
// tests of what a client does when a sequence of calls breaks midway.
func (s *Server) FailNext(op string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failNext[op] = n
}

// LoseNext makes the next n successful writes of operation op (e.g.
// "tunnels.edit") happen but answers them 500: a response lost at one
// chosen step.
func (s *Server) LoseNext(op string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.loseNext[op] = n
}

func (s *Server) takeFailNext(op string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failNext[op] <= 0 {
		return false
	}
	s.failNext[op]--
	return true
}

// Faults are the failures the simulator injects; they can be changed while
// it serves (SetFaults, POST /__sim/faults).
type Faults struct {
	// ErrorRate is the fraction of calls answered 500 before anything happens.
	ErrorRate float64 `json:"error_rate"`
	// LostResponseRate is the fraction of successful writes answered 500
	// after the write happened.
	LostResponseRate float64 `json:"lost_response_rate"`
	// Latency is added to every call.
	Latency time.Duration `json:"latency"`
}

// Faults returns the failures currently injected.
func (s *Server) Faults() Faults {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Faults{ErrorRate: s.opts.ErrorRate, LostResponseRate: s.opts.LostResponseRate, Latency: s.opts.Latency}
}

// SetFaults changes the failures injected from now on.
func (s *Server) SetFaults(f Faults) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opts.ErrorRate, s.opts.LostResponseRate, s.opts.Latency = f.ErrorRate, f.LostResponseRate, f.Latency
}

// Throttle answers every call with 429 and a retry-after for d, as
// Cloudflare does once a token's budget is spent (by this client or by any
// other tool using the same token). It works with the rate limit off too.
func (s *Server) Throttle(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.throttledUntil = s.opts.Now().Add(d)
}

func (s *Server) countLost(op string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lostResponses[op]++
}

// LostResponses counts, per operation, the writes that happened although
// the simulator answered 500.
func (s *Server) LostResponses() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.lostResponses))
	for k, v := range s.lostResponses {
		out[k] = v
	}
	return out
}

func (s *Server) count(op string, status int, call string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.served[call]++
	st := s.stats[op]
	if st == nil {
		st = &OpStats{ByStatus: map[int]int{}}
		s.stats[op] = st
	}
	st.Requests++
	st.ByStatus[status]++
	if status == http.StatusTooManyRequests {
		st.RateLimited++
	}
}

// Stats returns a copy of the per-operation request counts.
func (s *Server) Stats() map[string]OpStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]OpStats, len(s.stats))
	for k, v := range s.stats {
		c := OpStats{Requests: v.Requests, RateLimited: v.RateLimited, ByStatus: map[int]int{}}
		for code, n := range v.ByStatus {
			c.ByStatus[code] = n
		}
		out[k] = c
	}
	return out
}

// Served counts the API calls received with method (any when "") whose path
// (under /client/v4) contains part, or ends with it when part ends in "$":
// the calls about one object (its ID) or one collection
// ("/cfd_tunnel$": lists of tunnels only), whatever their answer. A test
// that must show nothing happens waits for this to grow, evidence that the
// provider looked again, instead of sleeping. ResetStats does not reset it.
func (s *Server) Served(method, part string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	suffix, anchored := strings.CutSuffix(part, "$")
	n := 0
	for call, c := range s.served {
		m, path, _ := strings.Cut(call, " ")
		match := strings.Contains(path, part)
		if anchored {
			match = strings.HasSuffix(path, suffix)
		}
		if (method == "" || m == method) && match {
			n += c
		}
	}
	return n
}

// RateWindowPeak is, over every token, the most requests one rate-limit
// window ever held and the times a token exceeded the limit (each followed
// by the penalty). Both are 0 without a RateLimit.
func (s *Server) RateWindowPeak() (peak, blocks int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, tw := range s.limiter {
		peak = max(peak, tw.peak)
		blocks += tw.blocks
	}
	return peak, blocks
}

// TotalRequests is the number of API calls received, all operations together.
func (s *Server) TotalRequests() int {
	n := 0
	for _, v := range s.Stats() {
		n += v.Requests
	}
	return n
}

// ResetStats forgets the request counts.
func (s *Server) ResetStats() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats = map[string]*OpStats{}
}

func (s *Server) handleStats(w http.ResponseWriter, _ *http.Request) {
	st := s.Stats()
	total := 0
	for _, v := range st {
		total += v.Requests
	}
	writeJSON(w, http.StatusOK, map[string]any{"total_requests": total, "operations": st})
}

func (s *Server) handleStatsReset(w http.ResponseWriter, _ *http.Request) {
	s.ResetStats()
	w.WriteHeader(http.StatusNoContent)
}

// --- rate limit -------------------------------------------------------------

// tokenWindow is a sliding-window log of one token's requests.
type tokenWindow struct {
	times        []time.Time
	blockedUntil time.Time
	// peak is the most requests the window ever held; blocks counts the
	// times the limit was exceeded.
	peak, blocks int
}

// admit counts a request against token's limit. Once the limit is exceeded,
// every call is refused until the penalty passes, as Cloudflare does.
func (s *Server) admit(token string, h http.Header) (time.Duration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.opts.Now()
	if now.Before(s.throttledUntil) {
		return s.throttledUntil.Sub(now), false
	}
	if s.opts.RateLimit <= 0 {
		return 0, true
	}
	tw := s.limiter[token]
	if tw == nil {
		tw = &tokenWindow{}
		s.limiter[token] = tw
	}
	if now.Before(tw.blockedUntil) {
		return tw.blockedUntil.Sub(now), false
	}
	cut := now.Add(-s.opts.RateWindow)
	i := sort.Search(len(tw.times), func(i int) bool { return tw.times[i].After(cut) })
	tw.times = tw.times[i:]
	if len(tw.times) >= s.opts.RateLimit {
		tw.blockedUntil = now.Add(s.opts.RatePenalty)
		tw.times = nil
		tw.blocks++
		return s.opts.RatePenalty, false
	}
	tw.times = append(tw.times, now)
	tw.peak = max(tw.peak, len(tw.times))
	h.Set("Ratelimit", fmt.Sprintf("\"default\";r=%d;t=%d", s.opts.RateLimit-len(tw.times), int(s.opts.RateWindow.Seconds())))
	h.Set("Ratelimit-Policy", fmt.Sprintf("\"burst\";q=%d;w=%d", s.opts.RateLimit, int(s.opts.RateWindow.Seconds())))
	return 0, true
}

// --- shared helpers -----------------------------------------------------------

// listable says whether a list may show an object created at created yet:
// with Options.ListLag, only once it is that old.
func (s *Server) listable(created time.Time) bool {
	return s.opts.ListLag <= 0 || !s.opts.Now().Before(created.Add(s.opts.ListLag))
}

var (
	hex32Re = regexp.MustCompile(`^[0-9a-f]{32}$`)
	uuidRe  = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
)

func isHex32(s string) bool { return hex32Re.MatchString(s) }
func isUUID(s string) bool  { return uuidRe.MatchString(s) }

func newUUID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = (b[6] & 0x0f) | 0x40
	b[8] = (b[8] & 0x3f) | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func newHex32() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func badID(r *http.Request) *apiError {
	return errf(http.StatusBadRequest, 7003, "Could not route to %s, perhaps your object identifier is invalid?", r.URL.Path)
}

func decodeBody(body []byte, v any) *apiError {
	if len(strings.TrimSpace(string(body))) == 0 {
		return errf(http.StatusBadRequest, 1001, "request body is required")
	}
	if err := json.Unmarshal(body, v); err != nil {
		return errf(http.StatusBadRequest, 1001, "malformed request body: %v", err)
	}
	return nil
}

// resultInfo is the v4 pagination block.
type resultInfo struct {
	Count      int  `json:"count"`
	Page       int  `json:"page"`
	PerPage    int  `json:"per_page"`
	TotalCount int  `json:"total_count"`
	TotalPages *int `json:"total_pages,omitempty"`
}

// paginate slices items by the request's page/per_page. A page past the end
// is an empty array, never an error: the SDK pages until it sees one.
func paginate[T any](r *http.Request, items []T, minPer, maxPer, defPer int, withTotalPages bool) ([]T, *resultInfo, *apiError) {
	q := r.URL.Query()
	page, per := 1, defPer
	if v := q.Get("page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return nil, nil, errf(http.StatusBadRequest, 1001, "page must be an integer >= 1")
		}
		page = n
	}
	if v := q.Get("per_page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < minPer || n > maxPer {
			return nil, nil, errf(http.StatusBadRequest, 1001, "per_page must be an integer between %d and %d", minPer, maxPer)
		}
		per = n
	}
	start := (page - 1) * per
	out := []T{}
	if start < len(items) {
		out = items[start:min(start+per, len(items))]
	}
	info := &resultInfo{Count: len(out), Page: page, PerPage: per, TotalCount: len(items)}
	if withTotalPages {
		tp := (len(items) + per - 1) / per
		info.TotalPages = &tp
	}
	return out, info, nil
}

// liveFilter applies the is_deleted filter, which defaults to false (live
// objects only) since December 2025.
func liveFilter(r *http.Request, deletedAt *time.Time) (bool, *apiError) {
	switch v := r.URL.Query().Get("is_deleted"); v {
	case "", "false":
		return deletedAt == nil, nil
	case "true":
		return deletedAt != nil, nil
	default:
		return false, errf(http.StatusBadRequest, 1001, "is_deleted must be true or false")
	}
}

// existedAt applies the existed_at filter: created before t and not deleted
// before it.
func existedAt(r *http.Request, created time.Time, deleted *time.Time) (bool, *apiError) {
	v := r.URL.Query().Get("existed_at")
	if v == "" {
		return true, nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return false, errf(http.StatusBadRequest, 1001, "existed_at must be an RFC 3339 time")
	}
	return !created.After(t) && (deleted == nil || deleted.After(t)), nil
}

func (s *Server) now() time.Time { return s.opts.Now().UTC() }

func ptrTime(t time.Time) *time.Time { return &t }

// handleFaults reads (GET) or replaces (POST) the injected faults. A POST
// body may also hold "throttle_seconds": every call is then answered 429 for
// that long. Latency is in nanoseconds, as time.Duration marshals.
func (s *Server) handleFaults(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		var in struct {
			Faults
			ThrottleSeconds float64        `json:"throttle_seconds"`
			FailNext        map[string]int `json:"fail_next"`
			LoseNext        map[string]int `json:"lose_next"`
		}
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.ErrorRate < 0 || in.ErrorRate > 1 || in.LostResponseRate < 0 || in.LostResponseRate > 1 || in.Latency < 0 || in.ThrottleSeconds < 0 {
			http.Error(w, `body must be {"error_rate": 0-1, "lost_response_rate": 0-1, "latency": ns >= 0, "throttle_seconds": s >= 0, "fail_next": {"<operation>": n}, "lose_next": {"<operation>": n}}`, http.StatusBadRequest)
			return
		}
		s.SetFaults(in.Faults)
		for op, n := range in.FailNext {
			s.FailNext(op, n)
		}
		for op, n := range in.LoseNext {
			s.LoseNext(op, n)
		}
		if in.ThrottleSeconds > 0 {
			s.Throttle(time.Duration(in.ThrottleSeconds * float64(time.Second)))
		}
	}
	writeJSON(w, http.StatusOK, s.Faults())
}
