package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The simulator's edge end to end: an account set up through its API, real
// origins (httptest servers), requests through the edge's own listener.

type edgeFixture struct {
	s    *Server
	api  *httptest.Server
	edge *httptest.Server
	zone string
}

func newEdgeFixture(t *testing.T, eo EdgeOptions) *edgeFixture {
	t.Helper()
	s := New(Options{Token: token, AccountID: account, Zones: []string{"example.com"}})
	api := httptest.NewServer(s)
	t.Cleanup(api.Close)
	edge := httptest.NewServer(s.Edge(eo))
	t.Cleanup(edge.Close)
	return &edgeFixture{s: s, api: api, edge: edge, zone: ZoneID("example.com")}
}

// do makes an API call that must succeed and returns its result.
func (f *edgeFixture) do(t *testing.T, method, path, body string) json.RawMessage {
	t.Helper()
	r := call(t, f.api, method, path, token, body)
	if !r.Body.Success {
		t.Fatalf("%s %s %s: status %d, errors %v", method, path, body, r.Status, r.Body.Errors)
	}
	return r.Body.Result
}

// tunnel creates a tunnel with n connectors.
func (f *edgeFixture) tunnel(t *testing.T, name string, connectors int) string {
	t.Helper()
	var tun struct{ ID string }
	if err := json.Unmarshal(f.do(t, "POST", "/accounts/"+account+"/cfd_tunnel", `{"name":"`+name+`","config_src":"cloudflare"}`), &tun); err != nil {
		t.Fatal(err)
	}
	if !f.s.SetConnectors(tun.ID, connectors) {
		t.Fatalf("no tunnel %s", tun.ID)
	}
	return tun.ID
}

func (f *edgeFixture) record(t *testing.T, typ, name, content string, proxied bool) {
	t.Helper()
	f.do(t, "POST", "/zones/"+f.zone+"/dns_records", fmt.Sprintf(`{"type":%q,"name":%q,"content":%q,"proxied":%t,"ttl":1}`, typ, name, content, proxied))
}

func (f *edgeFixture) cname(t *testing.T, name, tunnelID string) {
	t.Helper()
	f.record(t, "CNAME", name, tunnelID+".cfargotunnel.com", true)
}

func (f *edgeFixture) configure(t *testing.T, tunnelID, config string) {
	t.Helper()
	f.do(t, "PUT", "/accounts/"+account+"/cfd_tunnel/"+tunnelID+"/configurations", `{"config":`+config+`}`)
}

// answer is what the visitor gets from the edge.
type answer struct {
	status int
	body   string
	header http.Header
	// seen is what the origin saw, when an echo origin answered.
	seen echoed
}

// get sends a request for host and path to the edge, with extra headers
// as "Name: value" pairs.
func (f *edgeFixture) get(t *testing.T, host, path string, headers ...string) answer {
	t.Helper()
	req, err := http.NewRequest("GET", f.edge.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Add(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	a := answer{status: res.StatusCode, body: string(b), header: res.Header}
	if res.Header.Get("Content-Type") == "application/x-echo" {
		if err := json.Unmarshal(b, &a.seen); err != nil {
			t.Fatalf("echo origin answered %s: %v", b, err)
		}
	}
	return a
}

// echoed is what an echo origin saw of a request.
type echoed struct {
	Origin string      `json:"origin"`
	Host   string      `json:"host"`
	Path   string      `json:"path"`
	Header http.Header `json:"header"`
	TLS    bool        `json:"tls"`
}

func echoHandler(name string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-echo")
		w.Header().Set("X-Accel-Redirect", "/internal")
		_ = json.NewEncoder(w).Encode(echoed{Origin: name, Host: r.Host, Path: r.URL.Path, Header: r.Header, TLS: r.TLS != nil})
	})
}

// echoOrigin starts an echo origin and returns its "ip:port".
func echoOrigin(t *testing.T, name string) string {
	t.Helper()
	srv := httptest.NewServer(echoHandler(name))
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

func originsOf(m map[string]string) func(string) (string, bool) {
	return func(hp string) (string, bool) { a, ok := m[hp]; return a, ok }
}

// TestEdgeServesRulesAsCloudflared: DNS → tunnel → the rule cloudflared
// picks → the origin, with the Host and headers Cloudflare and cloudflared
// send.
func TestEdgeServesRulesAsCloudflared(t *testing.T) {
	origins := map[string]string{
		"api.ns.svc.cluster.local:8080": echoOrigin(t, "api"),
		"web.ns.svc.cluster.local:80":   echoOrigin(t, "web"),
		"wild.ns.svc.cluster.local:80":  echoOrigin(t, "wild"),
	}
	f := newEdgeFixture(t, EdgeOptions{ResolveOrigin: originsOf(origins)})
	id := f.tunnel(t, "edge", 2)
	f.cname(t, "app.example.com", id)
	f.cname(t, "*.apps.example.com", id)
	f.record(t, "CNAME", "dns-only.example.com", id+".cfargotunnel.com", false)
	f.configure(t, id, `{"ingress": [
		{"hostname": "app.example.com", "path": "^/api", "service": "http://api.ns.svc.cluster.local:8080"},
		{"hostname": "app.example.com", "path": "teapot", "service": "http_status:418"},
		{"hostname": "app.example.com", "service": "http://web.ns.svc.cluster.local", "originRequest": {"httpHostHeader": "web.internal"}},
		{"hostname": "*.apps.example.com", "service": "http://wild.ns.svc.cluster.local:80"},
		{"hostname": "ghost.apps.example.com", "service": "http://never.reached:80"},
		{"hostname": "app.example.com", "path": "^/ghost", "service": "http://ghost.ns.svc.cluster.local:80"},
		{"service": "http_status:404"}]}`)

	for _, tc := range []struct {
		name, host, path string
		status           int
		origin, seenHost string
	}{
		{"a path rule, first match", "app.example.com", "/api/v1", 200, "api", "app.example.com"},
		{"the port is dropped for DNS and for the rule", "app.example.com:8443", "/api", 200, "api", "app.example.com:8443"},
		{"unanchored path regex", "app.example.com", "/x/teapot/y", 418, "", ""},
		{"httpHostHeader replaces the Host", "app.example.com", "/", 200, "web", "web.internal"},
		{"a later rule shadowed by an earlier one never matches", "app.example.com", "/ghost", 200, "web", "web.internal"},
		{"a wildcard DNS record and a wildcard rule", "a.b.apps.example.com", "/", 200, "wild", "a.b.apps.example.com"},
		{"an earlier wildcard rule wins over a later exact one", "ghost.apps.example.com", "/", 200, "wild", "ghost.apps.example.com"},
		{"DNS ignores case, cloudflared's rules do not", "APP.example.com", "/api", 404, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := f.get(t, tc.host, tc.path)
			if a.status != tc.status || a.seen.Origin != tc.origin || a.seen.Host != tc.seenHost {
				t.Fatalf("GET %s%s: %d from %q with Host %q (%s), want %d from %q with Host %q", tc.host, tc.path, a.status, a.seen.Origin, a.seen.Host, a.body, tc.status, tc.origin, tc.seenHost)
			}
			if tc.origin == "" && a.body != "" {
				t.Errorf("http_status answered a body: %q", a.body)
			}
		})
	}

	t.Run("headers", func(t *testing.T) {
		a := f.get(t, "app.example.com", "/", "X-Forwarded-For: 203.0.113.1", "X-Real-Ip: 10.9.9.9")
		h := a.seen.Header
		ray := a.header.Get("Cf-Ray")
		for name, want := range map[string]string{
			"Cf-Connecting-Ip":  "127.0.0.1",
			"X-Forwarded-For":   "203.0.113.1,127.0.0.1",
			"X-Forwarded-Proto": "http",
			"Cf-Visitor":        `{"scheme":"http"}`,
			"Cdn-Loop":          "cloudflare",
			"X-Forwarded-Host":  "app.example.com",
			"Cf-Ray":            ray,
			"X-Real-Ip":         "",
		} {
			if got := h.Get(name); got != want {
				t.Errorf("origin got %s %q, want %q", name, got, want)
			}
		}
		if !strings.HasSuffix(ray, "-SIM") || len(ray) != 20 {
			t.Errorf("Cf-Ray %q is not a Ray ID", ray)
		}
		if a.header.Get("X-Accel-Redirect") != "" {
			t.Errorf("the edge passed X-Accel-Redirect on to the visitor")
		}
		if b := f.get(t, "app.example.com", "/api"); b.seen.Header.Get("X-Forwarded-Host") != "" || b.seen.Header.Get("X-Forwarded-For") != "127.0.0.1" {
			t.Errorf("without httpHostHeader or a prior X-Forwarded-For: X-Forwarded-Host %q, X-Forwarded-For %q", b.seen.Header.Get("X-Forwarded-Host"), b.seen.Header.Get("X-Forwarded-For"))
		}
	})

	for _, tc := range []struct {
		name, host string
		status     int
		code       string
	}{
		{"a DNS-only record is not served", "dns-only.example.com", 530, "1001"},
		{"a name no record answers", "nothing.example.com", 530, "1001"},
		{"the apex with no record", "example.com", 530, "1001"},
		{"a host in no zone of the account", "app.example.org", 530, "1001"},
		{"an origin nobody resolves", "app.example.com", 502, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := "/"
			if tc.status == 502 {
				path = "/ghost-not-shadowed"
				f.configure(t, id, `{"ingress": [{"hostname": "app.example.com", "service": "http://ghost.ns.svc.cluster.local:80"}, {"service": "http_status:404"}]}`)
			}
			a := f.get(t, tc.host, path)
			if a.status != tc.status || a.header.Get("Cf-Error-Type") != tc.code || a.header.Get("Cf-Ray") == "" {
				t.Fatalf("GET %s: %d, Cf-Error-Type %q, Cf-Ray %q (%s); want %d, %q", tc.host, a.status, a.header.Get("Cf-Error-Type"), a.header.Get("Cf-Ray"), a.body, tc.status, tc.code)
			}
		})
	}
}

// TestEdgeWildcardDNS: which records answer a name, as Cloudflare documents
// wildcards: any depth below, unless a specific name on the way ends it.
func TestEdgeWildcardDNS(t *testing.T) {
	f := newEdgeFixture(t, EdgeOptions{ResolveOrigin: originsOf(map[string]string{"web:80": echoOrigin(t, "web")})})
	id := f.tunnel(t, "wild", 1)
	f.cname(t, "*.example.com", id)
	f.record(t, "TXT", "txt.example.com", "only text", false)
	f.record(t, "A", "dns-only.example.com", "192.0.2.1", false)
	f.cname(t, "*.deep.dns-only.example.com", id)
	f.record(t, "TXT", "deep.ent.example.com", "below an empty non-terminal", false)
	f.cname(t, "*.sub.example.com", id)
	f.configure(t, id, `{"ingress": [{"service": "http://web"}]}`)
	for host, served := range map[string]bool{
		"a.example.com":                     true,
		"a.b.c.example.com":                 true, // wildcards apply at every level below
		"txt.example.com":                   false,
		"a.txt.example.com":                 false, // a specific name ends the wildcard below it
		"dns-only.example.com":              false,
		"x.dns-only.example.com":            false,
		"x.deep.dns-only.example.com":       true, // a deeper wildcard
		"y.x.deep.dns-only.example.com":     true,
		"example.com":                       false, // the wildcard is not the apex
		"deep.dns-only.example.com":         false, // dns-only's own record ends *.example.com
		"m.ent.example.com":                 false, // ent exists only as a name above a record: GUESS, as RFC 4592
		"ent.example.com":                   false, // and so does ent itself
		"deep.dns-only.example.com.":        false,
		"sub.example.com":                   false, // only *.sub.example.com is below it: GUESS, as RFC 4592
		"x.sub.example.com":                 true,  // *.sub.example.com
		"x.y.sub.example.com":               true,
		"a.example.com.":                    true, // a trailing dot
		"A.EXAMPLE.COM":                     true,
		"a.example.com.evil.org":            false,
		"xample.com":                        false,
		"a-example.com":                     false,
		"dns-only.example.com.example.com":  true,
		"*.example.com":                     true,
		"app.deep.dns-only.example.com:443": true,
	} {
		a := f.get(t, host, "/")
		if got := a.status == 200 && a.seen.Origin == "web"; got != served {
			t.Errorf("GET %s: %d %q; served %t, want %t", host, a.status, a.body, got, served)
		}
	}
}

// TestEdgeNeedsConnectors: a tunnel without a connected cloudflared, or one
// that no longer exists, is Cloudflare's error 1033.
func TestEdgeNeedsConnectors(t *testing.T) {
	f := newEdgeFixture(t, EdgeOptions{ResolveOrigin: originsOf(map[string]string{"web:80": echoOrigin(t, "web")})})
	id := f.tunnel(t, "idle", 0)
	f.cname(t, "app.example.com", id)
	f.configure(t, id, `{"ingress": [{"service": "http://web:80"}]}`)
	want1033 := func(when string) {
		t.Helper()
		a := f.get(t, "app.example.com", "/")
		if a.status != 530 || a.header.Get("Cf-Error-Type") != "1033" || !strings.Contains(a.body, "1033") {
			t.Fatalf("%s: %d %q %q, want 530 with error 1033", when, a.status, a.header.Get("Cf-Error-Type"), a.body)
		}
	}
	want1033("no connector")
	f.s.SetConnectorStates(id, []ConnectorState{{Connections: 0}})
	want1033("a connector without edge connections")
	f.s.SetConnectors(id, 1)
	if a := f.get(t, "app.example.com", "/"); a.status != 200 || a.seen.Origin != "web" {
		t.Fatalf("connected: %d %q", a.status, a.body)
	}
	f.s.SetConnectors(id, 0)
	want1033("disconnected again")

	f.cname(t, "gone.example.com", "6b1c1b2e-1f9a-4a57-9d3c-000000000000")
	if a := f.get(t, "gone.example.com", "/"); a.status != 530 || a.header.Get("Cf-Error-Type") != "1033" {
		t.Fatalf("a CNAME to no tunnel: %d %q", a.status, a.body)
	}
	f.record(t, "A", "plain.example.com", "192.0.2.7", true)
	if a := f.get(t, "plain.example.com", "/"); a.status != http.StatusNotImplemented {
		t.Fatalf("a proxied A record: %d %q, want the simulator's 501", a.status, a.body)
	}
}

// TestEdgeFollowsConfiguration: each request sees the tunnel's current
// configuration; one cloudflared would refuse leaves the previous one
// serving; none at all answers 503.
func TestEdgeFollowsConfiguration(t *testing.T) {
	f := newEdgeFixture(t, EdgeOptions{ResolveOrigin: originsOf(map[string]string{
		"blue:80":  echoOrigin(t, "blue"),
		"green:80": echoOrigin(t, "green"),
	})})
	id := f.tunnel(t, "deploy", 1)
	f.cname(t, "app.example.com", id)
	origin := func() (int, string) {
		a := f.get(t, "app.example.com", "/")
		return a.status, a.seen.Origin
	}
	if st, _ := origin(); st != http.StatusServiceUnavailable {
		t.Fatalf("no configuration yet: %d, want cloudflared's 503", st)
	}
	f.configure(t, id, `{"ingress": [{"hostname": "app.example.com", "service": "http://blue"}, {"service": "http_status:404"}]}`)
	if st, o := origin(); st != 200 || o != "blue" {
		t.Fatalf("first configuration: %d %q", st, o)
	}
	f.configure(t, id, `{"ingress": [{"hostname": "app.example.com", "service": "http://green"}, {"service": "http_status:404"}]}`)
	if st, o := origin(); st != 200 || o != "green" {
		t.Fatalf("after the change: %d %q, want green", st, o)
	}
	// The API takes it; cloudflared refuses it (an invalid regex) and keeps
	// serving green.
	f.configure(t, id, `{"ingress": [{"hostname": "app.example.com", "path": "(", "service": "http://blue"}, {"service": "http_status:404"}]}`)
	if st, o := origin(); st != 200 || o != "green" {
		t.Fatalf("after a configuration cloudflared refuses: %d %q, want green still", st, o)
	}
}

// TestEdgeOriginsEndpoint: an out-of-process harness points cluster names
// at local processes through /__sim/edge/origins; the map wins over
// EdgeOptions.ResolveOrigin.
func TestEdgeOriginsEndpoint(t *testing.T) {
	f := newEdgeFixture(t, EdgeOptions{ResolveOrigin: originsOf(map[string]string{"web.ns.svc.cluster.local:80": echoOrigin(t, "from-options")})})
	id := f.tunnel(t, "harness", 1)
	f.cname(t, "app.example.com", id)
	f.configure(t, id, `{"ingress": [{"service": "http://web.ns.svc.cluster.local"}]}`)
	put := func(body string) int {
		req, _ := http.NewRequest("PUT", f.api.URL+"/__sim/edge/origins", strings.NewReader(body))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if a := f.get(t, "app.example.com", "/"); a.seen.Origin != "from-options" {
		t.Fatalf("before the map: %d %q", a.status, a.body)
	}
	if c := put(`{"WEB.ns.svc.cluster.local:80": "` + echoOrigin(t, "from-map") + `"}`); c != http.StatusNoContent {
		t.Fatalf("PUT: %d", c)
	}
	if a := f.get(t, "app.example.com", "/"); a.seen.Origin != "from-map" {
		t.Fatalf("after the map: %d %q", a.status, a.body)
	}
	for _, bad := range []string{`[]`, `{"web.ns.svc.cluster.local": "127.0.0.1:1"}`, `{"web:0": "127.0.0.1:1"}`, `{"web:80": "localhost:80"}`, `{":80": "127.0.0.1:80"}`} {
		if c := put(bad); c != http.StatusBadRequest {
			t.Errorf("PUT %s: %d, want 400", bad, c)
		}
	}
	res, err := http.Get(f.api.URL + "/__sim/edge/origins")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var m map[string]string
	if err := json.NewDecoder(res.Body).Decode(&m); err != nil || len(m) != 1 || m["web.ns.svc.cluster.local:80"] == "" {
		t.Fatalf("GET: %v %v (refused PUTs must leave the map alone)", m, err)
	}
	if c := put(`{}`); c != http.StatusNoContent {
		t.Fatalf("PUT {}: %d", c)
	}
	if a := f.get(t, "app.example.com", "/"); a.seen.Origin != "from-options" {
		t.Fatalf("after emptying the map: %d %q", a.status, a.body)
	}
}

// TestEdgeHTTPSOrigins: cloudflared verifies an https origin's certificate
// against the service's name unless told another (originServerName,
// matchSNItoHost) or told not to (noTLSVerify).
func TestEdgeHTTPSOrigins(t *testing.T) {
	tlsOrigin := httptest.NewUnstartedServer(echoHandler("tls")) // certificate for example.com, *.example.com and 127.0.0.1
	tlsOrigin.Config.ErrorLog = log.New(io.Discard, "", 0)       // refused handshakes are the point
	tlsOrigin.StartTLS()
	t.Cleanup(tlsOrigin.Close)
	roots := tlsOrigin.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	addr := tlsOrigin.Listener.Addr().String()
	f := newEdgeFixture(t, EdgeOptions{OriginRootCAs: roots, ResolveOrigin: originsOf(map[string]string{"tls.ns.svc.cluster.local:443": addr})})
	id := f.tunnel(t, "tls", 1)
	for _, tc := range []struct {
		name, originRequest string
		status              int
	}{
		{"the service's name is not on the certificate", `{}`, 502},
		{"originServerName names one that is", `{"originServerName": "example.com"}`, 200},
		{"originServerName names one that is not", `{"originServerName": "other.example"}`, 502},
		{"noTLSVerify", `{"noTLSVerify": true}`, 200},
		{"matchSNItoHost with the Host cloudflared sends", `{"matchSNItoHost": true, "httpHostHeader": "example.com"}`, 200},
		{"matchSNItoHost with the visitor's Host (the certificate has *.example.com)", `{"matchSNItoHost": true}`, 200},
		{"matchSNItoHost wins over originServerName", `{"matchSNItoHost": true, "httpHostHeader": "other.test", "originServerName": "example.com"}`, 502},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.configure(t, id, `{"ingress": [{"service": "https://tls.ns.svc.cluster.local", "originRequest": `+tc.originRequest+`}]}`)
			f.cname(t, fmt.Sprintf("h%d.example.com", len(tc.name)), id)
			a := f.get(t, fmt.Sprintf("h%d.example.com", len(tc.name)), "/")
			if a.status != tc.status || (tc.status == 200 && !a.seen.TLS) {
				t.Fatalf("%s: %d %q, want %d", tc.originRequest, a.status, a.body, tc.status)
			}
		})
	}
	f2 := newEdgeFixture(t, EdgeOptions{ResolveOrigin: originsOf(map[string]string{"tls.ns.svc.cluster.local:443": addr})})
	id2 := f2.tunnel(t, "tls", 1)
	f2.cname(t, "app.example.com", id2)
	f2.configure(t, id2, `{"ingress": [{"service": "https://tls.ns.svc.cluster.local", "originRequest": {"originServerName": "example.com"}}]}`)
	if a := f2.get(t, "app.example.com", "/"); a.status != 502 {
		t.Fatalf("a certificate from a CA this machine does not trust: %d, want 502", a.status)
	}
}

// TestEdgeStreamServicesAndHelloWorld: what the edge answers for services
// it does not proxy as HTTP.
func TestEdgeStreamServicesAndHelloWorld(t *testing.T) {
	f := newEdgeFixture(t, EdgeOptions{})
	id := f.tunnel(t, "misc", 1)
	f.cname(t, "*.example.com", id)
	f.configure(t, id, `{"ingress": [
		{"hostname": "hello.example.com", "service": "hello_world"},
		{"hostname": "ssh.example.com", "service": "ssh://db:22"},
		{"hostname": "sock.example.com", "service": "unix:/run/app.sock"},
		{"hostname": "ip.example.com", "service": "http://127.0.0.1:1"},
		{"service": "http_status:404"}]}`)
	for host, want := range map[string]int{"hello.example.com": 200, "ssh.example.com": 502, "sock.example.com": 502, "ip.example.com": 502, "x.example.com": 404} {
		if a := f.get(t, host, "/"); a.status != want {
			t.Errorf("GET %s: %d %q, want %d", host, a.status, a.body, want)
		}
	}
}

// TestEdgeAccessFailsClosed: a host an Access application covers, or a
// rule that requires Access, lets in only what Access lets in — here, no
// one ever logs in, so a valid service token under a Service Auth policy —
// and cloudflared's own check wants the rule's team and audience.
func TestEdgeAccessFailsClosed(t *testing.T) {
	f := newEdgeFixture(t, EdgeOptions{ResolveOrigin: originsOf(map[string]string{"web:80": echoOrigin(t, "web")})})
	acc := "/accounts/" + account + "/access"
	var tok struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
	}
	if err := json.Unmarshal(f.do(t, "POST", acc+"/service_tokens", `{"name":"ci"}`), &tok); err != nil {
		t.Fatal(err)
	}
	var pol, bypass struct{ ID string }
	_ = json.Unmarshal(f.do(t, "POST", acc+"/policies", `{"name":"tokens","decision":"non_identity","include":[{"any_valid_service_token":{}}]}`), &pol)
	_ = json.Unmarshal(f.do(t, "POST", acc+"/policies", `{"name":"public","decision":"bypass","include":[{"everyone":{}}]}`), &bypass)
	var app, open struct{ AUD string }
	_ = json.Unmarshal(f.do(t, "POST", acc+"/apps", `{"name":"secure","type":"self_hosted","domain":"secure.example.com","policies":[{"id":"`+pol.ID+`","precedence":1}]}`), &app)
	_ = json.Unmarshal(f.do(t, "POST", acc+"/apps", `{"name":"open","type":"self_hosted","domain":"open.example.com","policies":[{"id":"`+bypass.ID+`","precedence":1}]}`), &open)
	if app.AUD == "" || open.AUD == "" {
		t.Fatal("applications without an audience")
	}
	id := f.tunnel(t, "guarded", 1)
	f.cname(t, "*.example.com", id)
	access := func(team, aud string) string {
		return `{"access": {"required": true, "teamName": "` + team + `", "audTag": ["` + aud + `"]}}`
	}
	f.configure(t, id, `{"ingress": [
		{"hostname": "secure.example.com", "path": "^/wrong-aud", "service": "http://web", "originRequest": `+access("sim-team", open.AUD)+`},
		{"hostname": "secure.example.com", "path": "^/wrong-team", "service": "http://web", "originRequest": `+access("other-team", app.AUD)+`},
		{"hostname": "secure.example.com", "path": "^/edge-only", "service": "http://web"},
		{"hostname": "secure.example.com", "service": "http://web", "originRequest": `+access("sim-team", app.AUD)+`},
		{"hostname": "open.example.com", "path": "^/required", "service": "http://web", "originRequest": `+access("sim-team", open.AUD)+`},
		{"hostname": "open.example.com", "service": "http://web"},
		{"hostname": "unguarded.example.com", "service": "http://web", "originRequest": `+access("sim-team", app.AUD)+`},
		{"service": "http://web"}]}`)
	valid := []string{"CF-Access-Client-Id: " + tok.ClientID, "CF-Access-Client-Secret: " + tok.ClientSecret}
	wrong := []string{"CF-Access-Client-Id: " + tok.ClientID, "CF-Access-Client-Secret: not-the-secret"}
	for _, tc := range []struct {
		name, host, path string
		headers          []string
		status           int
	}{
		{"a valid service token", "secure.example.com", "/", valid, 200},
		{"no token", "secure.example.com", "/", nil, 403},
		{"a wrong secret", "secure.example.com", "/", wrong, 403},
		{"the application alone, no token", "secure.example.com", "/edge-only", nil, 403},
		{"the application alone, a token", "secure.example.com", "/edge-only", valid, 200},
		{"cloudflared: another application's audience", "secure.example.com", "/wrong-aud", valid, 403},
		{"cloudflared: another team's token cannot be verified", "secure.example.com", "/wrong-team", valid, 502},
		{"a rule requiring Access on a host no application covers", "unguarded.example.com", "/", valid, 403},
		{"a Bypass application lets anyone in", "open.example.com", "/", nil, 200},
		{"but issues no token for cloudflared's check (GUESS)", "open.example.com", "/required", valid, 403},
		{"no Access anywhere", "plain.example.com", "/", nil, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := f.get(t, tc.host, tc.path, tc.headers...)
			if a.status != tc.status || (tc.status == 200) != (a.seen.Origin == "web") {
				t.Fatalf("GET %s%s: %d %q, want %d", tc.host, tc.path, a.status, a.body, tc.status)
			}
		})
	}
}
