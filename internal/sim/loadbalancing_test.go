package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Load Balancing through Cloudflare's OpenAPI document: every request and
// answer below is checked against it (checkedCall).

type lbFixture struct {
	s   *Server
	srv *httptest.Server
	t   *testing.T
}

func newLBFixture(t *testing.T) *lbFixture {
	t.Helper()
	s := New(Options{Token: token, AccountID: account, Zones: []string{zoneName}})
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return &lbFixture{s: s, srv: srv, t: t}
}

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
	return tun.ID
}

func httpMonitor(desc string) string {
	return fmt.Sprintf(`{"type":"https","path":"/healthz","expected_codes":"200","interval":60,"timeout":5,"retries":2,"header":{"Host":["app.example.com"]},"description":%q}`, desc)
}

func tunnelPool(name, monitor string, tunnels ...string) string {
	origins := []map[string]any{}
	for i, id := range tunnels {
		origins = append(origins, map[string]any{"name": fmt.Sprintf("o%d", i), "address": id + ".cfargotunnel.com", "header": map[string][]string{"Host": {"app.example.com"}}})
	}
	b, _ := json.Marshal(map[string]any{"name": name, "monitor": monitor, "origins": origins})
	return string(b)
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
	for name, c := range map[string]struct {
		body        string
		wantHealthy bool
	}{
		"connected tunnel":              {tunnelPool("p1", mon, up), true},
		"tunnel without connectors":     {tunnelPool("p2", mon, down), false},
		"one of two, minimum one":       {tunnelPool("p3", mon, up, down), true},
		"tcp monitor on a tunnel":       {tunnelPool("p4", tcp, up), false},
		"missing tunnel":                {tunnelPool("p5", mon, "00000000-0000-4000-8000-000000000000"), false},
		"no monitor: assumed healthy":   {tunnelPool("p6", "", down), true},
		"disabled pool":                 {`{"name":"p7","enabled":false,"origins":[{"name":"o","address":"` + up + `.cfargotunnel.com"}]}`, false},
		"two of two needed, one is up":  {`{"name":"p8","monitor":"` + mon + `","minimum_origins":2,"origins":[{"name":"a","address":"` + up + `.cfargotunnel.com"},{"name":"b","address":"` + down + `.cfargotunnel.com"}]}`, false},
		"only origin disabled, none up": {`{"name":"p9","monitor":"` + mon + `","origins":[{"name":"a","enabled":false,"address":"` + up + `.cfargotunnel.com"}]}`, false},
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
	decide(LoadBalancerDecision{LoadBalancerID: lbID, PoolID: pb, PoolName: "b", Origin: "o0", OriginAddress: b + ".cfargotunnel.com", Candidates: []string{pb}})
	f.s.SetConnectors(b, 0)
	decide(LoadBalancerDecision{LoadBalancerID: lbID, PoolID: fb, PoolName: "fallback", Origin: "o0", OriginAddress: c + ".cfargotunnel.com", Fallback: true, Candidates: []string{fb}})
	f.s.SetConnectors(c, 0)
	decide(LoadBalancerDecision{LoadBalancerID: lbID, PoolID: fb, PoolName: "fallback", Fallback: true, Candidates: []string{fb}})
	f.s.SetConnectors(a, 1)
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
	d, _ = f.s.Decide("app.example.com")
	if diff := cmp.Diff([]string{pb}, d.Candidates); diff != "" || d.Fallback {
		t.Errorf("candidates with a down (-want +got):\n%s (fallback %t)", diff, d.Fallback)
	}
}
