package sim

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"strconv"
	"strings"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim/cloudflared"
)

// EdgeOptions configure the simulated edge (Server.Edge).
type EdgeOptions struct {
	// ResolveOrigin maps a rule's origin, "host:port" as the service names
	// it (the port filled in from the scheme), to the address to dial,
	// "ip:port", for origins the /__sim/edge/origins map does not name.
	// nil resolves nothing; an IP literal origin is dialled as it is.
	ResolveOrigin func(hostport string) (addr string, ok bool)
	// OriginRootCAs verify https origins' certificates, standing in for
	// the pool cloudflared's machine trusts; nil is this machine's.
	OriginRootCAs *x509.CertPool
}

// Edge is Cloudflare's edge and cloudflared together, as far as a request
// for one of the account's proxied hostnames goes: the request's Host →
// the proxied DNS record that answers for it (the name's own, or a
// wildcard's) → the tunnel its CNAME names (<id>.cfargotunnel.com) →
// Access → the tunnel's connectors → the rule cloudflared picks from the
// tunnel's current configuration (package cloudflared) → the origin, with
// the headers Cloudflare and cloudflared add. It serves plain HTTP (the
// visitor's scheme is then "http"); every answer carries a Cf-Ray.
//
// What it does that Cloudflare does not document is a GUESS, marked where
// it is decided and listed in docs/reliability.md.
func (s *Server) Edge(o EdgeOptions) http.Handler {
	return &edge{s: s, opts: o}
}

type edge struct {
	s    *Server
	opts EdgeOptions
}

// edgeRefusal is an answer the edge gives itself, without the origin.
type edgeRefusal struct {
	status int
	// code is Cloudflare's 1xxx error code, 0 for none.
	code int
	msg  string
}

// Cloudflare's errors the edge answers with. A 1xxx error comes with HTTP
// 530 ("the body of the response contains a 1XXX error code",
// developers.cloudflare.com/support/troubleshooting/http-status-codes/
// cloudflare-5xx-errors/error-530/).
var (
	// 1001: "a web request was sent to a Cloudflare IP address for a
	// non-existent Cloudflare domain" (…/cloudflare-1xxx-errors/error-1001/).
	// GUESS: a name whose records are all DNS-only gets it too, since its
	// visitors never reach Cloudflare.
	errNoSuchHost = edgeRefusal{status: 530, code: 1001, msg: "DNS resolution error"}
	// 1033: "Argo Tunnel error … Cloudflare is currently unable to resolve
	// it; ensure that cloudflared is running" (…/error-1033/).
	errTunnelDown = edgeRefusal{status: 530, code: 1033, msg: "Argo Tunnel error"}
)

func (e *edge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ray := newRayID()
	w.Header().Set("Cf-Ray", ray)
	name := edgeHostname(r.Host)
	tunnelID, refusal := e.s.edgeTunnelFor(name)
	if refusal != nil {
		writeRefusal(w, *refusal)
		return
	}
	verdict := e.s.edgeAccess(name, r)
	if verdict.app != nil && !verdict.allowed {
		// GUESS: Access sends a browser to the team's login page, and
		// answers a refused service token 401 only with
		// service_auth_401_redirect; the edge answers every refusal 403,
		// so nothing gets through either way.
		writeRefusal(w, edgeRefusal{status: http.StatusForbidden, msg: "Forbidden: " + verdict.why})
		return
	}
	ing, refusal := e.s.edgeIngress(tunnelID)
	if refusal != nil {
		writeRefusal(w, *refusal)
		return
	}
	rule, _ := ing.Match(r.Host, r.URL.Path)
	if refusal := e.s.cloudflaredAccess(rule.Access, verdict); refusal != nil {
		writeRefusal(w, *refusal)
		return
	}
	e.serve(w, r, rule, ray)
}

// edgeHostname is the name the edge looks the request up by: the Host
// without port or trailing dot, lower-cased (DNS names compare without
// case).
func edgeHostname(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return strings.ToLower(strings.TrimSuffix(host, "."))
}

// edgeTunnelFor finds the tunnel the proxied DNS record for name sends
// requests to.
func (s *Server) edgeTunnelFor(name string) (string, *edgeRefusal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	z := s.zoneFor(name)
	if z == nil {
		return "", &errNoSuchHost
	}
	var proxied *dnsRecord
	for _, rec := range s.answeringRecords(z, name) {
		if rec.Proxied && (rec.Type == "CNAME" || rec.Type == "A" || rec.Type == "AAAA") {
			proxied = rec
		}
	}
	if proxied == nil {
		return "", &errNoSuchHost
	}
	id, ok := strings.CutSuffix(strings.ToLower(strings.TrimSuffix(proxied.Content, ".")), ".cfargotunnel.com")
	if proxied.Type != "CNAME" || !ok || !isUUID(id) {
		// Not Cloudflare's behaviour: Cloudflare would proxy to that
		// origin. The simulator serves tunnels only, and says so.
		return "", &edgeRefusal{status: http.StatusNotImplemented, msg: "cloudflare-sim: the edge serves only proxied CNAMEs to <tunnel id>.cfargotunnel.com; " + name + " is a proxied " + proxied.Type + " to " + proxied.Content}
	}
	return id, nil
}

// zoneFor is the account's zone holding name: the longest zone name that is
// name or a suffix of it. Callers hold s.mu.
func (s *Server) zoneFor(name string) *zone {
	var best *zone
	for _, z := range s.zones {
		if (name == z.Name || strings.HasSuffix(name, "."+z.Name)) && (best == nil || len(z.Name) > len(best.Name)) {
			best = z
		}
	}
	return best
}

// answeringRecords are the zone's records that answer for name, as
// Cloudflare documents wildcards
// (developers.cloudflare.com/dns/manage-dns-records/reference/wildcard-dns-records/):
// a name's own records if it has any; otherwise the wildcard "*.<p>" of its
// closest existing ancestor p ("wildcards will be applied for multiple
// levels, but a specific record on any equal or lower level will terminate
// anything on or below this specific record"); never the zone's apex.
// GUESS: a name with no records of its own but names below it (an empty
// non-terminal, such as "sub" when only "*.sub" exists) ends a wildcard's
// reach, for itself and below, as RFC 4592 has it. Callers hold s.mu.
func (s *Server) answeringRecords(z *zone, name string) []*dnsRecord {
	var inZone []*dnsRecord
	for _, rec := range s.records {
		if rec.zoneID == z.ID {
			inZone = append(inZone, rec)
		}
	}
	if own := recordsNamed(inZone, name); len(own) > 0 || name == z.Name || nameExists(inZone, name) {
		return own
	}
	for p := parentName(name); ; p = parentName(p) {
		if p == z.Name || nameExists(inZone, p) {
			return recordsNamed(inZone, "*."+p)
		}
	}
}

func recordsNamed(recs []*dnsRecord, name string) []*dnsRecord {
	var out []*dnsRecord
	for _, rec := range recs {
		if strings.EqualFold(rec.Name, name) {
			out = append(out, rec)
		}
	}
	return out
}

// nameExists: name has records, or names below it do.
func nameExists(recs []*dnsRecord, name string) bool {
	for _, rec := range recs {
		n := strings.ToLower(rec.Name)
		if n == name || strings.HasSuffix(n, "."+name) {
			return true
		}
	}
	return false
}

func parentName(name string) string {
	_, parent, _ := strings.Cut(name, ".")
	return parent
}

// edgeAccess is what Access decides for the request, from what the edge
// knows of the visitor: the connection's address and the service token
// headers. No visitor ever logs in to the simulator, so only Bypass and
// Service Auth policies can let one in.
func (s *Server) edgeAccess(name string, r *http.Request) accessVerdict {
	who := AccessIdentity{
		IP:           remoteIP(r),
		ClientID:     r.Header.Get("CF-Access-Client-Id"),
		ClientSecret: r.Header.Get("CF-Access-Client-Secret"),
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.decideAccess(name, r.URL.Path, who)
}

// edgeIngress is the configuration the tunnel's cloudflared serves, if the
// tunnel is there to serve it: live, with a connector holding an edge
// connection. GUESS: a stopped connector the edge still lists
// (Options.ConnectorLinger) serves nothing. GUESS: every connector serves
// the newest configuration cloudflared accepts, even one held back with
// config_lag.
func (s *Server) edgeIngress(tunnelID string) (cloudflared.Ingress, *edgeRefusal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireConnectors()
	t := s.tunnelByID(tunnelID)
	if t == nil || !t.serving() {
		return cloudflared.Ingress{}, &errTunnelDown
	}
	if t.ingress == nil {
		return cloudflared.Default(), nil
	}
	return *t.ingress, nil
}

// serving: a connector holds at least one connection to the edge.
func (t *tunnel) serving() bool {
	for _, c := range t.connectors {
		if len(c.Conns) > 0 {
			return true
		}
	}
	return false
}

// cloudflaredAccess is cloudflared's own Access check of a rule that
// requires it (ingress/middleware/jwtvalidator.go): the request must carry
// an Access token (Cf-Access-Jwt-Assertion), else 403; a token its
// verifier cannot check (another team's issuer) fails the request, which
// cloudflared answers 502; a token for none of the rule's audiences is 403.
// The simulator has no tokens: a request carries one when an Access
// application let it in by an Allow or Service Auth policy. GUESS: a
// Bypass policy issues none.
func (s *Server) cloudflaredAccess(a cloudflared.Access, v accessVerdict) *edgeRefusal {
	if !a.Required {
		return nil
	}
	if v.app == nil || !v.allowed || v.bypass {
		return &edgeRefusal{status: http.StatusForbidden, msg: "Forbidden: no access token in request"}
	}
	s.mu.Lock()
	team := ""
	if s.access.org != nil {
		team = s.opts.AccessTeam
	}
	s.mu.Unlock()
	if team == "" || a.TeamName != team || a.Environment == "fed" {
		return &edgeRefusal{status: http.StatusBadGateway, msg: "Bad gateway: cloudflared could not verify the Access token against team " + strconv.Quote(a.TeamName)}
	}
	for _, aud := range a.AudTags {
		if aud == v.app.AUD {
			return nil
		}
	}
	return &edgeRefusal{status: http.StatusForbidden, msg: "Forbidden: the Access token's audience is not the rule's"}
}

// serve answers with the rule's service.
func (e *edge) serve(w http.ResponseWriter, r *http.Request, rule cloudflared.Rule, ray string) {
	switch rule.Service.Kind {
	case cloudflared.ServiceStatus:
		// cloudflared's statusCode origin: the status, no body.
		w.WriteHeader(rule.Service.Status)
	case cloudflared.ServiceHelloWorld:
		// GUESS (simplified): cloudflared runs its own hello-world
		// server; the edge answers its greeting only.
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = fmt.Fprintln(w, "Hello Cloudflare Tunnel (cloudflare-sim's stand-in for cloudflared's hello_world)")
	case cloudflared.ServiceHTTP:
		e.proxy(w, r, rule, ray)
	default:
		// GUESS: stream services (ssh, rdp, smb, tcp, unix sockets, the
		// bastion, the SOCKS proxy) serve `cloudflared access` clients
		// over websockets, which the simulator does not model.
		writeRefusal(w, edgeRefusal{status: http.StatusBadGateway, msg: "Bad gateway: cloudflare-sim does not model " + rule.Service.Raw})
	}
}

// proxy sends the request to the rule's HTTP origin as cloudflared does
// (ingress/origin_proxy.go, ingress/origin_service.go newHTTPTransport),
// with the headers Cloudflare documents
// (developers.cloudflare.com/fundamentals/reference/http-headers/).
func (e *edge) proxy(w http.ResponseWriter, r *http.Request, rule cloudflared.Rule, ray string) {
	addr, ok := e.resolve(rule.Service.Host)
	if !ok {
		// cloudflared answers 502 when its origin cannot be reached
		// (connection/http2.go WriteErrorResponse).
		writeRefusal(w, edgeRefusal{status: http.StatusBadGateway, msg: "Bad gateway: cannot resolve origin " + rule.Service.Host})
		return
	}
	rp := &httputil.ReverseProxy{
		Rewrite:   func(pr *httputil.ProxyRequest) { rewriteToOrigin(pr, rule, ray) },
		Transport: originTransport(rule.Origin, addr, originServerName(rule.Origin, r.Host), e.opts.OriginRootCAs),
		ModifyResponse: func(resp *http.Response) error {
			// Cloudflare removes these and sends the visitor the Ray ID
			// it sent the origin.
			for _, h := range []string{"X-Accel-Buffering", "X-Accel-Charset", "X-Accel-Limit-Rate", "X-Accel-Redirect"} {
				resp.Header.Del(h)
			}
			resp.Header.Del("Cf-Ray")
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			writeRefusal(w, edgeRefusal{status: http.StatusBadGateway, msg: "Bad gateway: " + err.Error()})
		},
	}
	rp.ServeHTTP(w, r)
}

// rewriteToOrigin shapes the request the origin gets.
func rewriteToOrigin(pr *httputil.ProxyRequest, rule cloudflared.Rule, ray string) {
	in, out := pr.In, pr.Out
	out.URL.Scheme, out.URL.Host = rule.Service.Scheme, rule.Service.Host
	out.Host = in.Host
	// ReverseProxy drops the visitor's forwarding headers; Cloudflare
	// passes every request header on, so put back what it does not set.
	for _, h := range []string{"Forwarded", "X-Forwarded-Host"} {
		if v, ok := in.Header[h]; ok {
			out.Header[h] = v
		}
	}
	if hh := rule.Origin.HTTPHostHeader; hh != "" {
		// cloudflared: the original Host goes in X-Forwarded-Host.
		out.Header.Set("X-Forwarded-Host", in.Host)
		out.Host = hh
	}
	ip := remoteIP(in)
	out.Header.Set("Cf-Connecting-Ip", ip)
	xff := ip
	if prior := in.Header.Values("X-Forwarded-For"); len(prior) > 0 {
		xff = strings.Join(prior, ",") + "," + ip
	}
	out.Header.Set("X-Forwarded-For", xff)
	scheme := "http"
	if in.TLS != nil {
		scheme = "https"
	}
	out.Header.Set("X-Forwarded-Proto", scheme)
	out.Header.Set("Cf-Visitor", `{"scheme":"`+scheme+`"}`)
	out.Header.Set("Cf-Ray", ray)
	out.Header.Add("Cdn-Loop", "cloudflare")
	// Without a Worker, Cloudflare strips X-Real-IP.
	out.Header.Del("X-Real-Ip")
}

// originTransport dials addr whatever the URL's host, with the rule's
// origin options; one connection per request, so nothing outlives it.
// serverName is the name the origin's certificate must have ("": the
// service's host).
func originTransport(o cloudflared.Origin, addr, serverName string, roots *x509.CertPool) *http.Transport {
	dialer := &net.Dialer{Timeout: o.ConnectTimeout}
	return &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, network, addr)
		},
		TLSClientConfig:     &tls.Config{RootCAs: roots, InsecureSkipVerify: o.NoTLSVerify, ServerName: serverName}, //nolint:gosec // noTLSVerify is the rule's choice, as in cloudflared.
		TLSHandshakeTimeout: o.TLSTimeout,
		ForceAttemptHTTP2:   o.HTTP2Origin,
		DisableKeepAlives:   true,
	}
}

// originServerName is the name cloudflared expects on the origin's
// certificate: with matchSNItoHost the Host it sends (after
// httpHostHeader), whatever originServerName says; else originServerName;
// else ("") the service's host.
func originServerName(o cloudflared.Origin, host string) string {
	if o.MatchSNIToHost {
		if o.HTTPHostHeader != "" {
			return o.HTTPHostHeader
		}
		return host
	}
	return o.OriginServerName
}

// resolve maps an origin to the address to dial: the /__sim/edge/origins
// map, then EdgeOptions.ResolveOrigin, then an IP literal as it is. This
// machine's DNS is never asked: the names a rule holds are the ones
// cloudflared resolves inside its cluster, which mean nothing here.
func (e *edge) resolve(hostport string) (string, bool) {
	key := strings.ToLower(hostport)
	if addr, ok := e.s.EdgeOrigins()[key]; ok {
		return addr, true
	}
	if e.opts.ResolveOrigin != nil {
		if addr, ok := e.opts.ResolveOrigin(key); ok {
			return addr, true
		}
	}
	if ap, err := netip.ParseAddrPort(hostport); err == nil {
		return ap.String(), true
	}
	return "", false
}

// SetEdgeOrigins replaces the edge's origin map: "host:port" (as a rule's
// service names it, the port filled in) → "ip:port" to dial.
func (s *Server) SetEdgeOrigins(m map[string]string) error {
	clean := make(map[string]string, len(m))
	for k, v := range m {
		host, port, err := net.SplitHostPort(k)
		if p, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || p < 1 || p > 65535 {
			return fmt.Errorf("origin %q is not host:port", k)
		}
		if _, err := netip.ParseAddrPort(v); err != nil {
			return fmt.Errorf("address %q for %q is not ip:port", v, k)
		}
		clean[strings.ToLower(k)] = v
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.edgeOrigins = clean
	return nil
}

// EdgeOrigins returns a copy of the edge's origin map.
func (s *Server) EdgeOrigins() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]string, len(s.edgeOrigins))
	for k, v := range s.edgeOrigins {
		out[k] = v
	}
	return out
}

// handleEdgeOrigins is the test hook behind SetEdgeOrigins and EdgeOrigins:
// PUT /__sim/edge/origins {"web.ns.svc.cluster.local:80": "127.0.0.1:8080"}
// replaces the map (204); GET answers it.
func (s *Server) handleEdgeOrigins(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPut {
		var m map[string]string
		if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
			http.Error(w, `body must be {"<host>:<port>": "<ip>:<port>", ...}`, http.StatusBadRequest)
			return
		}
		if err := s.SetEdgeOrigins(m); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusNoContent)
		return
	}
	writeJSON(w, http.StatusOK, s.EdgeOrigins())
}

// writeRefusal answers without the origin. GUESS: the body; Cloudflare
// answers a browser with an HTML page, and others with "error code: N".
// The Cf-Error-Type header is documented for Cloudflare's own error pages
// (…/http-status-codes/cloudflare-error-headers/).
func writeRefusal(w http.ResponseWriter, e edgeRefusal) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if e.code != 0 {
		w.Header().Set("Cf-Error-Type", strconv.Itoa(e.code))
		w.WriteHeader(e.status)
		_, _ = fmt.Fprintf(w, "error code: %d (%s)\n", e.code, e.msg)
		return
	}
	w.WriteHeader(e.status)
	_, _ = fmt.Fprintln(w, e.msg)
}

// newRayID is a Ray ID shaped as Cloudflare documents it
// (230b030023ae2822-SJC: 16 hex digits and a data centre). GUESS: the
// data centre, "SIM".
func newRayID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b) + "-SIM"
}

func remoteIP(r *http.Request) string {
	if h, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return h
	}
	return r.RemoteAddr
}
