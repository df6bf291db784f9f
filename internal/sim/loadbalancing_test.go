package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Load Balancing through Cloudflare's OpenAPI document: every request and
// answer below is checked against it (checkedCall).

type lbFixture struct {
	s   *Server
	srv *httptest.Server
	t   *testing.T
	// now is the simulator's clock: monitors probe once per interval.
	now time.Time
}

func newLBFixture(t *testing.T) *lbFixture {
	t.Helper()
	f := &lbFixture{t: t, now: time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)}
	f.s = New(Options{Token: token, AccountID: account, Zones: []string{zoneName}, Now: func() time.Time { return f.now }})
	f.srv = httptest.NewServer(f.s)
	t.Cleanup(f.srv.Close)
	return f
}

// probeInterval is httpMonitor's interval: after it, the next read
// probes again.
const probeInterval = 60 * time.Second

// nextProbe moves the clock to when the monitors probe again.
func (f *lbFixture) nextProbe() { f.now = f.now.Add(probeInterval) }

// appRules is the tunnels' configuration: app.example.com's /healthz is
// served by the app (the simulator counts an HTTP origin's answer 200),
// /down by a 503, anything else by the catch-all 404.
const appRules = `{"config":{"ingress":[{"hostname":"app.example.com","path":"^/down","service":"http_status:503"},{"hostname":"app.example.com","service":"http://app.default:8080"},{"service":"http_status:404"}]}}`

const (
	monitorsPath = "/accounts/" + account + "/load_balancers/monitors"
	poolsPath    = "/accounts/" + account + "/load_balancers/pools"
)

func lbsPath() string { return "/zones/" + ZoneID(zoneName) + "/load_balancers" }

// create posts body to path, expects success and returns the new ID.
func (f *lbFixture) create(path, body string) string {
	f.t.Helper()
	r := checkedCall(f.t, f.srv, "POST", path, body)
	var obj struct{ ID string }
	if r.Status != http.StatusOK || json.Unmarshal(r.Body.Result, &obj) != nil || obj.ID == "" {
		f.t.Fatalf("POST %s %s: %d %v", path, body, r.Status, r.Body.Errors)
	}
	return obj.ID
}

func (f *lbFixture) tunnel(connectors int) string {
	f.t.Helper()
	r := checkedCall(f.t, f.srv, "POST", "/accounts/"+account+"/cfd_tunnel", `{"name":"t-`+fmt.Sprint(len(f.s.tunnels))+`","config_src":"cloudflare"}`)
	var tun struct{ ID string }
	if r.Status != http.StatusOK || json.Unmarshal(r.Body.Result, &tun) != nil {
		f.t.Fatalf("creating a tunnel: %d %v", r.Status, r.Body.Errors)
	}
	if !f.s.SetConnectors(tun.ID, connectors) {
		f.t.Fatalf("SetConnectors(%s)", tun.ID)
	}
	if r := checkedCall(f.t, f.srv, "PUT", "/accounts/"+account+"/cfd_tunnel/"+tun.ID+"/configurations", appRules); r.Status != http.StatusOK {
		f.t.Fatalf("configuring the tunnel: %d %v", r.Status, r.Body.Errors)
	}
	return tun.ID
}

func httpMonitor(desc string) string {
	return monitorOf("app.example.com", "/healthz", "200", desc)
}

func monitorOf(host, path, codes, desc string) string {
	return fmt.Sprintf(`{"type":"https","path":%q,"expected_codes":%q,"interval":60,"timeout":5,"retries":2,"header":{"Host":[%q]},"description":%q}`, path, codes, host, desc)
}

func tunnelPool(name, monitor string, tunnels ...string) string {
	origins := []map[string]any{}
	for i, id := range tunnels {
		origins = append(origins, map[string]any{"name": fmt.Sprintf("o%d", i), "address": id + ".cfargotunnel.com", "header": map[string][]string{"Host": {"app.example.com"}}})
	}
	b, _ := json.Marshal(map[string]any{"name": name, "monitor": monitor, "origins": origins})
	return string(b)
}

// hostlessPool is a pool of one tunnel origin without a Host header: the
// monitor's Host is sent.
func hostlessPool(name, monitor, tunnel string) string {
	return `{"name":"` + name + `","monitor":"` + monitor + `","origins":[{"name":"o","address":"` + tunnel + `.cfargotunnel.com"}]}`
}

func lbBody(name string, pools []string, fallback, steering string) string {
	b, _ := json.Marshal(map[string]any{"name": name, "default_pools": pools, "fallback_pool": fallback, "steering_policy": steering, "proxied": true})
	return string(b)
}

func TestLoadBalancingObjectsRoundTrip(t *testing.T) {
	f := newLBFixture(t)
	mon := f.create(monitorsPath, httpMonitor("mine"))
	r := checkedCall(t, f.srv, "GET", monitorsPath+"/"+mon, "")
	var m lbMonitor
	if r.Status != 200 || json.Unmarshal(r.Body.Result, &m) != nil {
		t.Fatalf("get monitor: %d %v", r.Status, r.Body.Errors)
	}
	if m.Method != "GET" || m.Interval != 60 || m.Description != "mine" || m.Header["Host"][0] != "app.example.com" {
		t.Errorf("monitor as stored: %+v", m)
	}
	pool := f.create(poolsPath, tunnelPool("a", mon, f.tunnel(2)))
	if r := checkedCall(t, f.srv, "GET", poolsPath+"?monitor="+mon, ""); r.Status != 200 || !json.Valid(r.Body.Result) {
		t.Fatalf("list pools by monitor: %d", r.Status)
	}
	lb := f.create(lbsPath(), lbBody("App.Example.com.", []string{pool}, pool, "off"))
	r = checkedCall(t, f.srv, "GET", lbsPath()+"/"+lb, "")
	var got loadBalancer
	if r.Status != 200 || json.Unmarshal(r.Body.Result, &got) != nil {
		t.Fatalf("get load balancer: %d %v", r.Status, r.Body.Errors)
	}
	if got.Name != "app.example.com" || got.ZoneName != zoneName || !got.Enabled {
		t.Errorf("load balancer as stored: %+v", got)
	}
	if r := checkedCall(t, f.srv, "PUT", lbsPath()+"/"+lb, lbBody("app.example.com", []string{pool}, pool, "random")); r.Status != 200 {
		t.Fatalf("PUT load balancer: %d %v", r.Status, r.Body.Errors)
	}
	for _, p := range []string{lbsPath() + "/" + lb, poolsPath + "/" + pool, monitorsPath + "/" + mon} {
		if r := checkedCall(t, f.srv, "DELETE", p, ""); r.Status != 200 {
			t.Fatalf("DELETE %s: %d %v", p, r.Status, r.Body.Errors)
		}
	}
	if m, p, l := f.s.LoadBalancingObjects(); m+p+l != 0 {
		t.Errorf("left: %d monitors, %d pools, %d load balancers", m, p, l)
	}
}

func TestLoadBalancingRefusals(t *testing.T) {
	f := newLBFixture(t)
	mon := f.create(monitorsPath, httpMonitor(""))
	pool := f.create(poolsPath, tunnelPool("a", mon, f.tunnel(1)))
	f.create(lbsPath(), lbBody("app.example.com", []string{pool}, pool, ""))
	missing := "0123456789abcdef0123456789abcdef"
	for name, c := range map[string]struct {
		method, path, body string
		status, code       int
		// outsideTheDocument: a request the document itself forbids,
		// sent unchecked to show the simulator refuses it too.
		outsideTheDocument bool
	}{
		"monitor in use by a pool":          {"DELETE", monitorsPath + "/" + mon, "", 400, lbCodeReferenced, false},
		"pool in use by a load balancer":    {"DELETE", poolsPath + "/" + pool, "", 400, lbCodeReferenced, false},
		"http monitor without codes":        {"POST", monitorsPath, `{"type":"http","path":"/"}`, 400, lbCodeInvalid, false},
		"tcp monitor without a port":        {"POST", monitorsPath, `{"type":"tcp"}`, 400, lbCodeInvalid, false},
		"unknown monitor type":              {"POST", monitorsPath, `{"type":"gopher","expected_codes":"200"}`, 400, lbCodeInvalid, true},
		"timeout not below the interval":    {"POST", monitorsPath, `{"type":"http","expected_codes":"200","interval":5,"timeout":5}`, 400, lbCodeInvalid, false},
		"pool without a name":               {"POST", poolsPath, `{"origins":[{"name":"o","address":"a.example.net"}]}`, 400, lbCodeInvalid, true},
		"pool without origins":              {"POST", poolsPath, `{"name":"b","origins":[]}`, 400, lbCodeInvalid, false},
		"pool of a taken name":              {"POST", poolsPath, `{"name":"a","origins":[{"name":"o","address":"a.example.net"}]}`, 400, lbCodeNotUnique, false},
		"pool with a missing monitor":       {"POST", poolsPath, `{"name":"b","monitor":"` + missing + `","origins":[{"name":"o","address":"a.example.net"}]}`, 400, lbCodeInvalid, false},
		"origin header other than Host":     {"POST", poolsPath, `{"name":"b","origins":[{"name":"o","address":"a.example.net","header":{"X":["y"]}}]}`, 400, lbCodeInvalid, false},
		"more minimum origins than origins": {"POST", poolsPath, `{"name":"b","minimum_origins":2,"origins":[{"name":"o","address":"a.example.net"}]}`, 400, lbCodeInvalid, false},
		"load balancer without pools":       {"POST", lbsPath(), `{"name":"b.example.com","fallback_pool":"` + pool + `"}`, 400, lbCodeInvalid, false},
		"load balancer with a missing pool": {"POST", lbsPath(), lbBody("b.example.com", []string{missing}, pool, ""), 400, lbCodeInvalid, false},
		"load balancer name taken":          {"POST", lbsPath(), lbBody("app.example.com", []string{pool}, pool, ""), 400, lbCodeNotUnique, false},
		"load balancer outside the zone":    {"POST", lbsPath(), lbBody("app.example.org", []string{pool}, pool, ""), 400, lbCodeInvalid, false},
		"unknown steering policy":           {"POST", lbsPath(), lbBody("b.example.com", []string{pool}, pool, "fastest"), 400, lbCodeInvalid, true},
		"cookie affinity unproxied":         {"POST", lbsPath(), `{"name":"b.example.com","default_pools":["` + pool + `"],"fallback_pool":"` + pool + `","session_affinity":"cookie"}`, 400, lbCodeInvalid, false},
		"missing monitor":                   {"GET", monitorsPath + "/" + missing, "", 404, lbCodeNotFound, false},
		"malformed pool ID":                 {"GET", poolsPath + "/nope", "", 400, 7003, false},
	} {
		t.Run(name, func(t *testing.T) {
			var r reply
			if c.outsideTheDocument {
				r = call(t, f.srv, c.method, "/client/v4"+c.path, token, c.body)
			} else {
				r = checkedCall(t, f.srv, c.method, c.path, c.body)
			}
			if r.Status != c.status || !slices.Contains(codes(r), c.code) {
				t.Errorf("%s %s: %d %v, want %d with code %d", c.method, c.path, r.Status, codes(r), c.status, c.code)
			}
		})
	}
	if m, p, l := f.s.LoadBalancingObjects(); m != 1 || p != 1 || l != 1 {
		t.Errorf("a refusal changed the account: %d monitors, %d pools, %d load balancers", m, p, l)
	}
}

// A load balancer may take a name a DNS record holds: Cloudflare documents
// that the load balancer then takes precedence.
func TestLoadBalancerNameOfADNSRecordIsAccepted(t *testing.T) {
	f := newLBFixture(t)
	f.create("/zones/"+ZoneID(zoneName)+"/dns_records", cname("app.example.com"))
	pool := f.create(poolsPath, `{"name":"a","origins":[{"name":"o","address":"a.example.net"}]}`)
	f.create(lbsPath(), lbBody("app.example.com", []string{pool}, pool, "off"))
}

func TestPoolHealthFollowsTheTunnelsConnectors(t *testing.T) {
	f := newLBFixture(t)
	up, down := f.tunnel(2), f.tunnel(0)
	mon := f.create(monitorsPath, httpMonitor(""))
	tcp := f.create(monitorsPath, `{"type":"tcp","port":443}`)
	downPath := f.create(monitorsPath, monitorOf("app.example.com", "/down", "200", ""))
	elsewhere := f.create(monitorsPath, monitorOf("other.example.com", "/healthz", "200", ""))
	connectorUp := f.create(monitorsPath, monitorOf("other.example.com", "/healthz", "404", ""))
	class := f.create(monitorsPath, monitorOf("app.example.com", "/healthz", "2xx", ""))
	bare := f.tunnel(2)
	f.s.mu.Lock()
	f.s.tunnelByID(bare).ingress = nil // as if never configured
	f.s.mu.Unlock()
	for name, c := range map[string]struct {
		body        string
		wantHealthy bool
	}{
		"connected tunnel":               {tunnelPool("p1", mon, up), true},
		"tunnel without connectors":      {tunnelPool("p2", mon, down), false},
		"one of two, minimum one":        {tunnelPool("p3", mon, up, down), true},
		"tcp monitor on a tunnel":        {tunnelPool("p4", tcp, up), false},
		"missing tunnel":                 {tunnelPool("p5", mon, "00000000-0000-4000-8000-000000000000"), false},
		"no monitor: assumed healthy":    {tunnelPool("p6", "", down), true},
		"disabled pool":                  {`{"name":"p7","enabled":false,"origins":[{"name":"o","address":"` + up + `.cfargotunnel.com"}]}`, false},
		"two of two needed, one is up":   {`{"name":"p8","monitor":"` + mon + `","minimum_origins":2,"origins":[{"name":"a","address":"` + up + `.cfargotunnel.com"},{"name":"b","address":"` + down + `.cfargotunnel.com"}]}`, false},
		"only origin disabled, none up":  {`{"name":"p9","monitor":"` + mon + `","origins":[{"name":"a","enabled":false,"address":"` + up + `.cfargotunnel.com"}]}`, false},
		"the path's rule answers 503":    {tunnelPool("p10", downPath, up), false},
		"the catch-all's 404":            {hostlessPool("p11", elsewhere, up), false},
		"the catch-all's 404 expected":   {hostlessPool("p12", connectorUp, up), true},
		"a 2xx class":                    {tunnelPool("p13", class, up), true},
		"the origin's Host first":        {`{"name":"p14","monitor":"` + mon + `","origins":[{"name":"a","address":"` + up + `.cfargotunnel.com","header":{"Host":["other.example.com"]}}]}`, false},
		"a tunnel without configuration": {tunnelPool("p15", mon, bare), false},
	} {
		t.Run(name, func(t *testing.T) {
			id := f.create(poolsPath, c.body)
			r := checkedCall(t, f.srv, "GET", poolsPath+"/"+id+"/health", "")
			var h struct {
				PopHealth struct{ Healthy bool } `json:"pop_health"`
			}
			if r.Status != 200 || json.Unmarshal(r.Body.Result, &h) != nil {
				t.Fatalf("health: %d %v", r.Status, r.Body.Errors)
			}
			if h.PopHealth.Healthy != c.wantHealthy {
				t.Errorf("healthy = %t, want %t", h.PopHealth.Healthy, c.wantHealthy)
			}
			if got, _ := f.s.PoolHealth(id); got.Healthy != c.wantHealthy {
				t.Errorf("PoolHealth().Healthy = %t, want %t", got.Healthy, c.wantHealthy)
			}
		})
	}
}

// The decision follows the pools' order, their health and the fallback,
// and moves back when the first pool's tunnel reconnects.
func TestDecisionFailsOverAndBack(t *testing.T) {
	f := newLBFixture(t)
	a, b, c := f.tunnel(2), f.tunnel(2), f.tunnel(2)
	mon := f.create(monitorsPath, httpMonitor(""))
	pa := f.create(poolsPath, tunnelPool("a", mon, a))
	pb := f.create(poolsPath, tunnelPool("b", mon, b))
	fb := f.create(poolsPath, tunnelPool("fallback", mon, c))
	f.create(lbsPath(), lbBody("app.example.com", []string{pa, pb}, fb, "off"))

	decide := func(want LoadBalancerDecision) {
		t.Helper()
		got, ok := f.s.Decide("APP.example.com")
		if !ok {
			t.Fatal("no decision")
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("decision (-want +got):\n%s", diff)
		}
		r, err := http.Get(f.srv.URL + "/__sim/load_balancers/decision?hostname=app.example.com")
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		var hook LoadBalancerDecision
		if err := json.NewDecoder(r.Body).Decode(&hook); err != nil || hook.PoolID != want.PoolID {
			t.Errorf("the hook answers %+v (%v), want pool %s", hook, err, want.PoolID)
		}
	}
	lbID := f.s.lb.lbs[0].ID
	decide(LoadBalancerDecision{LoadBalancerID: lbID, PoolID: pa, PoolName: "a", Origin: "o0", OriginAddress: a + ".cfargotunnel.com", Candidates: []string{pa}})
	f.s.SetConnectors(a, 0)
	// Nothing moves until the monitors probe again.
	decide(LoadBalancerDecision{LoadBalancerID: lbID, PoolID: pa, PoolName: "a", Origin: "o0", OriginAddress: a + ".cfargotunnel.com", Candidates: []string{pa}})
	f.nextProbe()
	decide(LoadBalancerDecision{LoadBalancerID: lbID, PoolID: pb, PoolName: "b", Origin: "o0", OriginAddress: b + ".cfargotunnel.com", Candidates: []string{pb}})
	f.s.SetConnectors(b, 0)
	f.nextProbe()
	decide(LoadBalancerDecision{LoadBalancerID: lbID, PoolID: fb, PoolName: "fallback", Origin: "o0", OriginAddress: c + ".cfargotunnel.com", Fallback: true, Candidates: []string{fb}})
	f.s.SetConnectors(c, 0)
	f.nextProbe()
	decide(LoadBalancerDecision{LoadBalancerID: lbID, PoolID: fb, PoolName: "fallback", Fallback: true, Candidates: []string{fb}})
	f.s.SetConnectors(a, 1)
	f.nextProbe()
	decide(LoadBalancerDecision{LoadBalancerID: lbID, PoolID: pa, PoolName: "a", Origin: "o0", OriginAddress: a + ".cfargotunnel.com", Candidates: []string{pa}})

	if _, ok := f.s.Decide("other.example.com"); ok {
		t.Error("a decision for a hostname no load balancer holds")
	}
}

// With a steering policy other than off, every healthy default pool is a
// candidate, in order.
func TestDecisionCandidatesUnderRandomSteering(t *testing.T) {
	f := newLBFixture(t)
	a, b := f.tunnel(2), f.tunnel(2)
	mon := f.create(monitorsPath, httpMonitor(""))
	pa := f.create(poolsPath, tunnelPool("a", mon, a))
	pb := f.create(poolsPath, tunnelPool("b", mon, b))
	f.create(lbsPath(), lbBody("app.example.com", []string{pa, pb}, pb, "random"))
	d, _ := f.s.Decide("app.example.com")
	if diff := cmp.Diff([]string{pa, pb}, d.Candidates); diff != "" {
		t.Errorf("candidates (-want +got):\n%s", diff)
	}
	f.s.SetConnectors(a, 0)
	f.nextProbe()
	d, _ = f.s.Decide("app.example.com")
	if diff := cmp.Diff([]string{pb}, d.Candidates); diff != "" || d.Fallback {
		t.Errorf("candidates with a down (-want +got):\n%s (fallback %t)", diff, d.Fallback)
	}
}

// Health changes only when the monitor probes again (once per interval,
// at the first read after it), and only after consecutive_down failures
// in a row; one success brings it back (consecutive_up 1).
func TestHealthChangesOnlyAtTheNextProbe(t *testing.T) {
	f := newLBFixture(t)
	tun := f.tunnel(2)
	mon := f.create(monitorsPath, `{"type":"https","path":"/healthz","expected_codes":"200","interval":60,"timeout":5,"consecutive_down":2,"header":{"Host":["app.example.com"]}}`)
	pool := f.create(poolsPath, tunnelPool("a", mon, tun))
	healthy := func(want bool, when string) {
		t.Helper()
		if h, _ := f.s.PoolHealth(pool); h.Healthy != want {
			t.Errorf("%s: healthy = %t, want %t", when, h.Healthy, want)
		}
	}
	healthy(true, "first probe")
	f.s.SetConnectors(tun, 0)
	f.now = f.now.Add(probeInterval - time.Second)
	healthy(true, "before the interval")
	f.now = f.now.Add(time.Second)
	healthy(true, "one failed probe of the two consecutive_down needs")
	f.nextProbe()
	healthy(false, "the second failed probe")
	f.s.SetConnectors(tun, 2)
	healthy(false, "reconnected, before the next probe")
	f.nextProbe()
	healthy(true, "the next probe")
}

// The health endpoint gives the failing probe's response code and reason.
func TestPoolHealthAnswerNamesTheFailure(t *testing.T) {
	f := newLBFixture(t)
	mon := f.create(monitorsPath, monitorOf("app.example.com", "/down", "200", ""))
	tun := f.tunnel(2)
	pool := f.create(poolsPath, tunnelPool("a", mon, tun))
	r := checkedCall(t, f.srv, "GET", poolsPath+"/"+pool+"/health", "")
	var h struct {
		PopHealth struct {
			Healthy bool
			Origins []map[string]struct {
				Healthy       bool
				FailureReason string `json:"failure_reason"`
				ResponseCode  int    `json:"response_code"`
			}
		} `json:"pop_health"`
	}
	if r.Status != 200 || json.Unmarshal(r.Body.Result, &h) != nil {
		t.Fatalf("health: %d %v", r.Status, r.Body.Errors)
	}
	o := h.PopHealth.Origins[0][tun+".cfargotunnel.com"]
	if h.PopHealth.Healthy || o.Healthy || o.ResponseCode != 503 || o.FailureReason == "" {
		t.Errorf("health answer %+v", h)
	}
}

// The state hook shows the account's monitors, pools and load balancers,
// and reading it probes nothing.
func TestStateShowsLoadBalancing(t *testing.T) {
	f := newLBFixture(t)
	a := f.tunnel(2)
	mon := f.create(monitorsPath, httpMonitor(""))
	pa := f.create(poolsPath, tunnelPool("a", mon, a))
	f.create(lbsPath(), lbBody("app.example.com", []string{pa}, pa, "off"))
	st := f.s.Snapshot().LoadBalancing
	if len(st.Monitors) != 1 || st.Monitors[0].ID != mon || len(st.Pools) != 1 || st.Pools[0].Name != "a" ||
		len(st.LoadBalancers) != 1 || st.LoadBalancers[0].Name != "app.example.com" || !slices.Equal(st.LoadBalancers[0].DefaultPools, []string{pa}) {
		t.Errorf("state = %+v", st)
	}
	if _, probed := f.s.lb.probes[pa]; probed {
		t.Error("reading the state probed the pool")
	}
}
