package sim

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const (
	token   = "sim-test-token"
	account = "0123456789abcdef0123456789abcdef"
)

type reply struct {
	Status int
	Body   envelopeReply
	Header http.Header
}

type envelopeReply struct {
	Success bool              `json:"success"`
	Errors  []envelopeMessage `json:"errors"`
	Result  json.RawMessage   `json:"result"`
}

func call(t *testing.T, srv *httptest.Server, method, path, tok, body string) reply {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the reply: %v", method, path, err)
	}
	var e envelopeReply
	if res.Header.Get("Content-Type") == "application/json" {
		if err := json.Unmarshal(b, &e); err != nil {
			t.Fatalf("%s %s: not an envelope: %s", method, path, b)
		}
	}
	return reply{Status: res.StatusCode, Body: e, Header: res.Header}
}

// decodeResult decodes a reply's result into v, failing the test when it
// does not parse: a zero value read back would let later checks pass on
// nothing.
func decodeResult(t *testing.T, r reply, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body.Result, v); err != nil {
		t.Fatalf("status %d, result %s: %v", r.Status, r.Body.Result, err)
	}
}

func codes(r reply) []int {
	var out []int
	for _, e := range r.Body.Errors {
		out = append(out, e.Code)
	}
	return out
}

func TestEnvelopeAuthAndRouting(t *testing.T) {
	srv := httptest.NewServer(New(Options{Token: token, AccountID: account}))
	defer srv.Close()
	tunnels := "/accounts/" + account + "/cfd_tunnel"

	cases := map[string]struct {
		method, path, tok string
		wantStatus        int
		wantCodes         []int
	}{
		"ServedUnderClientV4": {"GET", "/client/v4" + tunnels, token, 200, nil},
		"ServedAtRoot":        {"GET", tunnels, token, 200, nil},
		"NoToken":             {"GET", tunnels, "", 403, []int{10000}},
		"WrongToken":          {"GET", tunnels, "nope", 403, []int{10000}},
		"OtherAccount":        {"GET", "/accounts/ffffffffffffffffffffffffffffffff/cfd_tunnel", token, 403, []int{9109}},
		"MalformedAccount":    {"GET", "/accounts/xyz/cfd_tunnel", token, 400, []int{7003}},
		"MalformedTunnelID":   {"GET", tunnels + "/not-a-uuid", token, 400, []int{7003}},
		"UnknownTunnel":       {"GET", tunnels + "/00000000-0000-4000-8000-000000000000", token, 404, []int{1003}},
		"UnknownRoute":        {"GET", "/client/v4/nowhere", token, 400, []int{7000}},
		"BadPerPage":          {"GET", tunnels + "?per_page=0", token, 400, []int{1001}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := call(t, srv, tc.method, tc.path, tc.tok, "")
			if r.Status != tc.wantStatus || r.Body.Success != (tc.wantStatus == 200) {
				t.Errorf("status %d success %v, want %d", r.Status, r.Body.Success, tc.wantStatus)
			}
			if diff := cmp.Diff(tc.wantCodes, codes(r)); diff != "" {
				t.Errorf("error codes -want +got:\n%s", diff)
			}
		})
	}
}

func TestRateLimitBlocksEveryCallForThePenalty(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	s := New(Options{Token: token, AccountID: account, RateLimit: 3, RateWindow: time.Minute, RatePenalty: 30 * time.Second, Now: func() time.Time { return now }})
	srv := httptest.NewServer(s)
	defer srv.Close()
	path := "/accounts/" + account + "/cfd_tunnel"
	for i := range 3 {
		if r := call(t, srv, "GET", path, token, ""); r.Status != 200 {
			t.Fatalf("request %d: %d", i, r.Status)
		}
	}
	r := call(t, srv, "GET", path, token, "")
	if r.Status != 429 || r.Header.Get("Retry-After") != "30" || !cmp.Equal(codes(r), []int{971}) {
		t.Fatalf("4th request: %d retry-after %q codes %v, want 429, 30, [971]", r.Status, r.Header.Get("Retry-After"), codes(r))
	}
	now = now.Add(20 * time.Second)
	if r := call(t, srv, "GET", path, token, ""); r.Status != 429 || r.Header.Get("Retry-After") != "10" {
		t.Errorf("during the penalty: %d retry-after %q, want 429 and 10", r.Status, r.Header.Get("Retry-After"))
	}
	now = now.Add(11 * time.Second)
	if r := call(t, srv, "GET", path, token, ""); r.Status != 200 {
		t.Errorf("after the penalty: %d, want 200", r.Status)
	}
	if got := s.Stats()["tunnels.list"]; got.Requests != 6 || got.RateLimited != 2 {
		t.Errorf("stats = %+v, want 6 requests and 2 rate limited", got)
	}
}

func TestFaultInjectionAndHooks(t *testing.T) {
	s := New(Options{Token: token, AccountID: account, ErrorRate: 1})
	srv := httptest.NewServer(s)
	defer srv.Close()
	if r := call(t, srv, "GET", "/accounts/"+account+"/cfd_tunnel", token, ""); r.Status != 500 {
		t.Errorf("error rate 1: status %d, want 500", r.Status)
	}

	s.opts.ErrorRate = 0
	r := call(t, srv, "POST", "/accounts/"+account+"/cfd_tunnel", token, `{"name":"hooked","config_src":"cloudflare"}`)
	var tun struct {
		ID    string `json:"id"`
		Token string `json:"token"`
	}
	decodeResult(t, r, &tun)
	if r.Status != 200 || tun.Token == "" {
		t.Fatalf("create: %d %s", r.Status, r.Body.Result)
	}
	res, err := http.Post(srv.URL+"/__sim/tunnels/"+tun.ID+"/connectors", "application/json", strings.NewReader(`{"count":2}`))
	if err != nil || res.StatusCode != http.StatusNoContent {
		t.Fatalf("connectors hook: %v %v", res.StatusCode, err)
	}
	st := s.Snapshot()
	if len(st.Tunnels) != 1 || st.Tunnels[0].Connectors != 2 || st.Tunnels[0].Status != "healthy" {
		t.Errorf("after the hook: %+v", st.Tunnels)
	}
	if r := call(t, srv, "DELETE", "/accounts/"+account+"/cfd_tunnel/"+tun.ID, token, ""); r.Status != 400 || !cmp.Equal(codes(r), []int{1022}) {
		t.Errorf("delete with connectors: %d %v, want 400 [1022]", r.Status, codes(r))
	}
	if r := call(t, srv, "DELETE", "/accounts/"+account+"/cfd_tunnel/"+tun.ID+"?cascade=true", token, ""); r.Status != 200 {
		t.Errorf("delete with cascade: %d", r.Status)
	}

	res, err = http.Get(srv.URL + "/__sim/stats")
	if err != nil {
		t.Fatal(err)
	}
	var stats struct {
		Total int                `json:"total_requests"`
		Ops   map[string]OpStats `json:"operations"`
	}
	defer res.Body.Close()
	if err := json.NewDecoder(res.Body).Decode(&stats); err != nil {
		t.Fatalf("GET /__sim/stats: %v", err)
	}
	if stats.Total != 4 || stats.Ops["tunnels.list"].ByStatus[500] != 1 || stats.Ops["tunnels.delete"].Requests != 2 {
		t.Errorf("stats = %+v", stats)
	}
}

func TestNormalizeHostname(t *testing.T) {
	for in, want := range map[string]string{
		"*.internal.local":        "internal.local",
		".Redis.Example.COM.":     "redis.example.com",
		"plain.svc.cluster.local": "plain.svc.cluster.local",
	} {
		if got := NormalizeHostname(in); got != want {
			t.Errorf("NormalizeHostname(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRuntimeFaults(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	s := New(Options{Token: token, AccountID: account, Now: func() time.Time { return now }})
	srv := httptest.NewServer(s)
	defer srv.Close()

	// A lost response: the write happens, the client is told it failed.
	res, err := http.Post(srv.URL+"/__sim/faults", "application/json", strings.NewReader(`{"lost_response_rate": 1}`))
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("POST /__sim/faults: %v %v", res, err)
	}
	if r := call(t, srv, "POST", "/accounts/"+account+"/cfd_tunnel", token, `{"name":"ghost","config_src":"cloudflare"}`); r.Status != 500 {
		t.Errorf("lost response: status %d, want 500", r.Status)
	}
	if st := s.Snapshot(); len(st.Tunnels) != 1 || st.Tunnels[0].Name != "ghost" {
		t.Errorf("the write behind a lost response did not happen: %+v", st.Tunnels)
	}
	if r := call(t, srv, "GET", "/accounts/"+account+"/cfd_tunnel", token, ""); r.Status != 200 {
		t.Errorf("reads never lose their response: status %d", r.Status)
	}
	if got := s.LostResponses(); !cmp.Equal(got, map[string]int{"tunnels.create": 1}) {
		t.Errorf("LostResponses() = %v", got)
	}

	// A burst of 429s with retry-after, then service resumes.
	s.SetFaults(Faults{})
	s.Throttle(time.Second)
	r := call(t, srv, "GET", "/accounts/"+account+"/cfd_tunnel", token, "")
	if r.Status != 429 || r.Header.Get("Retry-After") != "1" || !cmp.Equal(codes(r), []int{971}) {
		t.Errorf("throttled: %d retry-after %q %v, want 429, 1, [971]", r.Status, r.Header.Get("Retry-After"), codes(r))
	}
	now = now.Add(1100 * time.Millisecond)
	if r := call(t, srv, "GET", "/accounts/"+account+"/cfd_tunnel", token, ""); r.Status != 200 {
		t.Errorf("after the burst: status %d", r.Status)
	}

	// Bad fault settings are refused and change nothing.
	res, err = http.Post(srv.URL+"/__sim/faults", "application/json", strings.NewReader(`{"error_rate": 2}`))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusBadRequest || s.Faults() != (Faults{}) {
		t.Errorf("error_rate 2: status %d, faults %+v", res.StatusCode, s.Faults())
	}
}
