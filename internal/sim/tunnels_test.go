package sim

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// tunnelView is what a test reads back of a tunnel and its connectors.
type tunnelView struct {
	Status          string
	ConnsActiveAt   *time.Time
	ConnsInactiveAt *time.Time
	Conns           []int // edge connections per connector
	Versions        []int // configuration version per connector
	IDs             []string
}

func viewTunnel(t *testing.T, srv *httptest.Server, id string) tunnelView {
	t.Helper()
	var tun struct {
		Status          string     `json:"status"`
		ConnsActiveAt   *time.Time `json:"conns_active_at"`
		ConnsInactiveAt *time.Time `json:"conns_inactive_at"`
	}
	r := call(t, srv, "GET", "/accounts/"+account+"/cfd_tunnel/"+id, token, "")
	decodeResult(t, r, &tun)
	var cs []connector
	r = call(t, srv, "GET", "/accounts/"+account+"/cfd_tunnel/"+id+"/connections", token, "")
	if err := json.Unmarshal(r.Body.Result, &cs); err != nil {
		t.Fatal(err)
	}
	v := tunnelView{Status: tun.Status, ConnsActiveAt: tun.ConnsActiveAt, ConnsInactiveAt: tun.ConnsInactiveAt}
	for _, c := range cs {
		v.Conns, v.Versions, v.IDs = append(v.Conns, len(c.Conns)), append(v.Versions, c.ConfigVersion), append(v.IDs, c.ID)
	}
	return v
}

func setConnectors(t *testing.T, srv *httptest.Server, id, body string) int {
	t.Helper()
	res, err := http.Post(srv.URL+"/__sim/tunnels/"+id+"/connectors", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// TestTunnelStatusFollowsConnectors: healthy with every connector on its
// four connections, degraded when one has failed, down when none is left
// after it served; the active/inactive times move only when it starts or
// stops serving.
func TestTunnelStatusFollowsConnectors(t *testing.T) {
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := New(Options{Token: token, AccountID: account, Now: func() time.Time { return clock }})
	srv := httptest.NewServer(s)
	defer srv.Close()
	r := call(t, srv, "POST", "/accounts/"+account+"/cfd_tunnel", token, `{"name":"health","config_src":"cloudflare"}`)
	var tun struct{ ID string }
	decodeResult(t, r, &tun)
	if v := viewTunnel(t, srv, tun.ID); v.Status != "inactive" || v.ConnsActiveAt != nil {
		t.Fatalf("new tunnel: %+v", v)
	}

	if c := setConnectors(t, srv, tun.ID, `{"count": 2}`); c != http.StatusNoContent {
		t.Fatalf("count form: %d", c)
	}
	up := viewTunnel(t, srv, tun.ID)
	if up.Status != "healthy" || up.ConnsActiveAt == nil || !cmp.Equal(up.Conns, []int{4, 4}) {
		t.Fatalf("two connectors: %+v", up)
	}

	clock = clock.Add(time.Minute)
	if c := setConnectors(t, srv, tun.ID, `{"connectors": [{"connections": 4}, {"connections": 1}]}`); c != http.StatusNoContent {
		t.Fatalf("list form: %d", c)
	}
	deg := viewTunnel(t, srv, tun.ID)
	if deg.Status != "degraded" || !cmp.Equal(deg.Conns, []int{4, 1}) || !deg.ConnsActiveAt.Equal(*up.ConnsActiveAt) {
		t.Errorf("a failed connection: %+v, want degraded, conns [4 1], conns_active_at unchanged", deg)
	}
	if !cmp.Equal(deg.IDs, up.IDs) {
		t.Errorf("connectors were replaced (%v, were %v): positions keep their connector", deg.IDs, up.IDs)
	}

	setConnectors(t, srv, tun.ID, `{"count": 1}`)
	if v := viewTunnel(t, srv, tun.ID); v.Status != "healthy" || !cmp.Equal(v.IDs, up.IDs[:1]) {
		t.Errorf("one full connector left: %+v, want healthy with the first connector", v)
	}

	// A connector still listed without connections: degraded, not down.
	setConnectors(t, srv, tun.ID, `{"connectors": [{"connections": 4}, {"connections": 0}]}`)
	if v := viewTunnel(t, srv, tun.ID); v.Status != "degraded" {
		t.Errorf("a listed connector without connections: %+v, want degraded", v)
	}

	clock = clock.Add(time.Minute)
	setConnectors(t, srv, tun.ID, `{"connectors": [{"connections": 0}]}`)
	down := viewTunnel(t, srv, tun.ID)
	if down.Status != "down" || down.ConnsInactiveAt == nil || !down.ConnsInactiveAt.Equal(clock) {
		t.Errorf("no connection left: %+v, want down since %s", down, clock)
	}

	for _, bad := range []string{`{}`, `{"count": -1}`, `{"connectors": [{"connections": 5}]}`, `{"count": 1, "connectors": []}`, `nope`} {
		if c := setConnectors(t, srv, tun.ID, bad); c != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", bad, c)
		}
	}
}

// TestConnectorsApplyConfigurationVersions: connectors apply a new remote
// configuration at once, unless a test holds one back; a new connector
// starts on the current version.
func TestConnectorsApplyConfigurationVersions(t *testing.T) {
	s := New(Options{Token: token, AccountID: account})
	srv := httptest.NewServer(s)
	defer srv.Close()
	r := call(t, srv, "POST", "/accounts/"+account+"/cfd_tunnel", token, `{"name":"versions","config_src":"cloudflare"}`)
	var tun struct{ ID string }
	decodeResult(t, r, &tun)
	put := func() {
		t.Helper()
		if r := call(t, srv, "PUT", "/accounts/"+account+"/cfd_tunnel/"+tun.ID+"/configurations", token, `{"config":{"ingress":[{"service":"http_status:404"}]}}`); r.Status != 200 {
			t.Fatalf("put: %d", r.Status)
		}
	}
	put() // version 1
	setConnectors(t, srv, tun.ID, `{"connectors": [{"connections": 4, "config_lag": true}, {"connections": 4}]}`)
	if v := viewTunnel(t, srv, tun.ID); !cmp.Equal(v.Versions, []int{1, 1}) {
		t.Errorf("new connectors on versions %v, want the current [1 1]", v.Versions)
	}
	put() // version 2
	if v := viewTunnel(t, srv, tun.ID); !cmp.Equal(v.Versions, []int{1, 2}) {
		t.Errorf("after a put: versions %v, want [1 2] (the first lags)", v.Versions)
	}
	setConnectors(t, srv, tun.ID, `{"connectors": [{"connections": 4}, {"connections": 4}, {"connections": 4}]}`)
	if v := viewTunnel(t, srv, tun.ID); !cmp.Equal(v.Versions, []int{2, 2, 2}) {
		t.Errorf("released and a new one: versions %v, want [2 2 2]", v.Versions)
	}
}

// TestRotatedSecretRefusesTheOldToken: after a PATCH of tunnel_secret,
// Cloudflare accepts only the new token from connectors that connect,
// connectors already connected stay until their connections are deleted,
// and the replaced token stays known to RunTokens.
func TestRotatedSecretRefusesTheOldToken(t *testing.T) {
	s := New(Options{Token: token, AccountID: account})
	srv := httptest.NewServer(s)
	defer srv.Close()
	r := call(t, srv, "POST", "/accounts/"+account+"/cfd_tunnel", token, `{"name":"rotating","config_src":"cloudflare"}`)
	var tun struct{ ID, Token string }
	decodeResult(t, r, &tun)
	connect := func(tok string) (int, string) {
		t.Helper()
		b, err := json.Marshal(map[string]string{"token": tok})
		if err != nil {
			t.Fatal(err)
		}
		res, err := http.Post(srv.URL+"/__sim/connect", "application/json", strings.NewReader(string(b)))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out struct {
			ConnectorID string `json:"connector_id"`
		}
		// A refusal has no connector to decode; an acceptance must.
		if err := json.NewDecoder(res.Body).Decode(&out); err != nil && res.StatusCode == http.StatusCreated {
			t.Fatalf("connect: %d, reply: %v", res.StatusCode, err)
		}
		return res.StatusCode, out.ConnectorID
	}
	code, old := connect(tun.Token)
	if code != http.StatusCreated || old == "" {
		t.Fatalf("connect with the current token: %d %q", code, old)
	}

	if r := call(t, srv, "PATCH", "/accounts/"+account+"/cfd_tunnel/"+tun.ID, token, `{"tunnel_secret":"AQIDBAUGBwgBAgMEBQYHCAECAwQFBgcIAQIDBAUGBwg="}`); r.Status != 200 {
		t.Fatalf("rotate: %d", r.Status)
	}
	r = call(t, srv, "GET", "/accounts/"+account+"/cfd_tunnel/"+tun.ID+"/token", token, "")
	var newToken string
	decodeResult(t, r, &newToken)
	if newToken == tun.Token {
		t.Fatal("the token did not change with the secret")
	}
	if code, _ := connect(tun.Token); code != http.StatusUnauthorized {
		t.Errorf("connect with the replaced token: %d, want 401", code)
	}
	for _, bad := range []string{"not-base64!", "e30=", ""} {
		if code, _ := connect(bad); code != http.StatusUnauthorized && code != http.StatusBadRequest {
			t.Errorf("connect with %q: %d, want refused", bad, code)
		}
	}
	code, fresh := connect(newToken)
	if code != http.StatusCreated {
		t.Fatalf("connect with the new token: %d", code)
	}
	if v := viewTunnel(t, srv, tun.ID); !cmp.Equal(v.IDs, []string{old, fresh}) || v.Status != "healthy" {
		t.Errorf("connectors %v (%s), want the old one still connected beside the new one", v.IDs, v.Status)
	}
	if r := call(t, srv, "DELETE", "/accounts/"+account+"/cfd_tunnel/"+tun.ID+"/connections?client_id="+old, token, ""); r.Status != 200 || string(r.Body.Result) != "null" {
		t.Fatalf("delete the stale connector: %d %s", r.Status, r.Body.Result)
	}
	if v := viewTunnel(t, srv, tun.ID); !cmp.Equal(v.IDs, []string{fresh}) {
		t.Errorf("connectors %v after the clean-up, want only %s", v.IDs, fresh)
	}
	if toks := s.RunTokens(); !cmp.Equal(toks, []string{newToken, tun.Token}) {
		t.Errorf("RunTokens holds %d tokens, want the current and the replaced one", len(toks))
	}
}

func TestFailNext(t *testing.T) {
	s := New(Options{Token: token, AccountID: account})
	srv := httptest.NewServer(s)
	defer srv.Close()
	res, err := http.Post(srv.URL+"/__sim/faults", "application/json", strings.NewReader(`{"fail_next": {"tunnels.list": 2}}`))
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("POST /__sim/faults: %v %v", res, err)
	}
	var got []int
	for range 3 {
		got = append(got, call(t, srv, "GET", "/accounts/"+account+"/cfd_tunnel", token, "").Status)
	}
	if !cmp.Equal(got, []int{500, 500, 200}) {
		t.Errorf("statuses %v, want the next two calls failed, then served", got)
	}
	if r := call(t, srv, "GET", "/zones", token, ""); r.Status != 200 {
		t.Errorf("another operation: %d, want 200", r.Status)
	}
}

func TestLoseNext(t *testing.T) {
	s := New(Options{Token: token, AccountID: account})
	srv := httptest.NewServer(s)
	defer srv.Close()
	s.LoseNext("tunnels.create", 1)
	if r := call(t, srv, "POST", "/accounts/"+account+"/cfd_tunnel", token, `{"name":"lost","config_src":"cloudflare"}`); r.Status != 500 {
		t.Errorf("the chosen write: %d, want 500", r.Status)
	}
	if st := s.Snapshot(); len(st.Tunnels) != 1 {
		t.Errorf("the write behind the lost response did not happen: %+v", st.Tunnels)
	}
	if r := call(t, srv, "POST", "/accounts/"+account+"/cfd_tunnel", token, `{"name":"kept","config_src":"cloudflare"}`); r.Status != 200 {
		t.Errorf("the next write: %d, want 200", r.Status)
	}
}
