package contract

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const (
	account = "699d98642c564d2e855e9661899b7252"
	tunnel  = "f70ff985-a4ef-4643-bbbc-4a0ed4fc8415"
	tunPath = "/accounts/" + account + "/cfd_tunnel/" + tunnel
)

// tunnelJSON's null timestamps also exercise the nullable exception.
func tunnelJSON(status string) string {
	return `{"success":true,"errors":[],"messages":[],"result":{` +
		`"id":"` + tunnel + `","account_tag":"` + account + `","name":"blog",` +
		`"status":"` + status + `","created_at":"2024-01-02T03:04:05Z","deleted_at":null,` +
		`"conns_active_at":null,"conns_inactive_at":null,"connections":[],"metadata":{},` +
		`"config_src":"cloudflare","remote_config":true,"tun_type":"cfd_tunnel"}}`
}

const notFound = `{"success":false,"errors":[{"code":1003,"message":"not found"}],"messages":[],"result":null}`

var jsonHeader = http.Header{"Content-Type": {"application/json"}}

func mustLoad(t *testing.T) *Validator {
	t.Helper()
	start := time.Now()
	v, err := Load()
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	t.Logf("Load took %v (only the first call in a process parses the document)", time.Since(start))
	return v
}

func TestLoadIsCached(t *testing.T) {
	a := mustLoad(t)
	b := mustLoad(t)
	if a != b {
		t.Error("Load returned different validators")
	}
}

func TestValidateRequest(t *testing.T) {
	v := mustLoad(t)
	cases := []struct {
		name, method, target, body string
		wantErr                    string // substring; "" means valid
	}{
		{name: "list", method: "GET", target: "/accounts/" + account + "/cfd_tunnel?per_page=20&is_deleted=false"},
		{name: "client/v4 prefix", method: "GET", target: "/client/v4" + tunPath},
		{name: "per_page below minimum", method: "GET", target: "/accounts/" + account + "/cfd_tunnel?per_page=0", wantErr: "per_page"},
		{name: "prefix does not hide errors", method: "GET", target: "/client/v4/accounts/" + account + "/cfd_tunnel?per_page=0", wantErr: "per_page"},
		{name: "create", method: "POST", target: "/accounts/" + account + "/cfd_tunnel", body: `{"name":"blog","config_src":"cloudflare"}`},
		{name: "create with numeric name", method: "POST", target: "/accounts/" + account + "/cfd_tunnel", body: `{"name":42}`, wantErr: "name"},
		{name: "create without name", method: "POST", target: "/accounts/" + account + "/cfd_tunnel", body: `{}`, wantErr: "name"},
		{
			name: "config with catch-all rule", method: "PUT", target: tunPath + "/configurations",
			body: `{"config":{"ingress":[{"hostname":"a.example.com","service":"http://web:80"},{"service":"http_status:404"}]}}`,
		},
		{
			name: "config rule without service", method: "PUT", target: tunPath + "/configurations",
			body: `{"config":{"ingress":[{"hostname":"a.example.com"}]}}`, wantErr: "service",
		},
		{name: "zones with repeated type keys", method: "GET", target: "/zones?type=full&type=partial"},
		{name: "unknown path", method: "GET", target: "/accounts/" + account + "/nonsense", wantErr: "unknown route"},
		{name: "unknown method", method: "POST", target: tunPath + "/token", wantErr: "unknown route"},
		{name: "bare /client/v4 is unknown", method: "GET", target: "/client/v4", wantErr: "unknown route"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, "http://127.0.0.1:8080"+tc.target, strings.NewReader(tc.body))
			if tc.body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			checkErr(t, v.ValidateRequest(req, []byte(tc.body)), tc.wantErr)
		})
	}
}

func TestValidateResponse(t *testing.T) {
	v := mustLoad(t)
	svcPath := "/accounts/" + account + "/connectivity/directory/services/550e8400-e29b-41d4-a716-446655440000"
	cases := []struct {
		name, method, target string
		status               int
		header               http.Header
		body                 string
		wantErr              string
	}{
		{name: "valid tunnel", method: "GET", target: tunPath, status: 200, header: jsonHeader, body: tunnelJSON("inactive")},
		{name: "status not in enum", method: "GET", target: tunPath, status: 200, header: jsonHeader, body: tunnelJSON("bogus"), wantErr: "status"},
		{
			name: "success as a string", method: "GET", target: tunPath, status: 200, header: jsonHeader,
			body: strings.Replace(tunnelJSON("inactive"), `"success":true`, `"success":"true"`, 1), wantErr: "success",
		},
		{name: "404 failure envelope", method: "GET", target: "/client/v4" + tunPath, status: 404, header: jsonHeader, body: notFound},
		{
			name: "failure without errors", method: "GET", target: tunPath, status: 404, header: jsonHeader,
			body: `{"success":false,"messages":[],"result":null}`, wantErr: "errors",
		},
		{name: "undocumented status", method: "GET", target: tunPath, status: 201, header: jsonHeader, body: tunnelJSON("inactive"), wantErr: "status"},
		{name: "server errors are not checked", method: "GET", target: tunPath, status: 503, header: http.Header{}, body: "oops"},
		{name: "token is a string", method: "GET", target: tunPath + "/token", status: 200, header: jsonHeader, body: `{"success":true,"errors":[],"messages":[],"result":"ZXlK"}`},
		{name: "token as object", method: "GET", target: tunPath + "/token", status: 200, header: jsonHeader, body: `{"success":true,"errors":[],"messages":[],"result":{}}`, wantErr: "result"},
		{name: "service delete without body", method: "DELETE", target: svcPath, status: 200, header: http.Header{}},
		{name: "empty body where JSON is due", method: "GET", target: tunPath, status: 200, header: http.Header{}, wantErr: "Content-Type"},
		{name: "unknown path", method: "GET", target: "/nope", status: 200, header: jsonHeader, body: `{}`, wantErr: "unknown route"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, "http://127.0.0.1:8080"+tc.target, nil)
			checkErr(t, v.ValidateResponse(req, nil, tc.status, tc.header, []byte(tc.body)), tc.wantErr)
		})
	}
}

func checkErr(t *testing.T, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Errorf("unexpected violation: %v", err)
	case want != "" && err == nil:
		t.Errorf("want a violation mentioning %q, got none", want)
	case want != "" && !strings.Contains(err.Error(), want):
		t.Errorf("violation does not mention %q: %v", want, err)
	}
}

// fakeTB captures what NewTransport's cleanup reports, so that a recorded
// violation can be asserted on without failing this test.
type fakeTB struct {
	testing.TB
	cleanups []func()
	errors   []string
}

func (f *fakeTB) Helper()                   {}
func (f *fakeTB) Cleanup(fn func())         { f.cleanups = append(f.cleanups, fn) }
func (f *fakeTB) Errorf(s string, a ...any) { f.errors = append(f.errors, fmt.Sprintf(s, a...)) }
func (f *fakeTB) Fatalf(s string, a ...any) { panic(fmt.Sprintf(s, a...)) }

func TestTransport(t *testing.T) {
	mux := http.NewServeMux()
	serve := func(pattern, body string) {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, body)
		})
	}
	serve("GET /client/v4"+tunPath, tunnelJSON("healthy"))
	serve("GET /bogus"+tunPath, tunnelJSON("bogus"))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	cases := []struct {
		name, path     string
		wantViolations int
	}{
		{name: "valid", path: "/client/v4" + tunPath},
		// An unknown route is reported once, not again for its response.
		{name: "unknown route", path: "/bogus" + tunPath, wantViolations: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tb := &fakeTB{}
			tr := NewTransport(tb, srv.Client().Transport)
			resp, err := (&http.Client{Transport: tr}).Get(srv.URL + tc.path)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if len(got) == 0 {
				t.Error("response body was not restored")
			}
			if n := len(tr.Violations()); n != tc.wantViolations {
				t.Errorf("got %d violations, want %d: %q", n, tc.wantViolations, tr.Violations())
			}
			for _, fn := range tb.cleanups {
				fn()
			}
			if len(tb.errors) != tc.wantViolations {
				t.Errorf("cleanup reported %q, want %d errors", tb.errors, tc.wantViolations)
			}
		})
	}
}

// The fake answers a real Cloudflare path with a body the schema rejects; the
// caller still gets the body byte for byte and the violation is recorded.
func TestTransportRecordsBadResponse(t *testing.T) {
	body := tunnelJSON("bogus")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, body)
	}))
	defer srv.Close()

	tb := &fakeTB{}
	tr := NewTransport(tb, nil)
	resp, err := (&http.Client{Transport: tr}).Get(srv.URL + "/client/v4" + tunPath)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if diff := cmp.Diff(body, string(got)); diff != "" {
		t.Errorf("body changed by the transport (-want +got):\n%s", diff)
	}
	vs := tr.Violations()
	if len(vs) != 1 || !strings.Contains(vs[0], "status") || !strings.Contains(vs[0], "response 200") {
		t.Fatalf("want one response violation about status, got %q", vs)
	}
	for _, fn := range tb.cleanups {
		fn()
	}
	if len(tb.errors) != 1 || !strings.Contains(tb.errors[0], "contract violation") {
		t.Errorf("cleanup reported %q", tb.errors)
	}
}

// Request bodies must reach the server intact after being validated.
func TestTransportForwardsRequestBody(t *testing.T) {
	const sent = `{"name":42}`
	var received string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		received = string(b)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, tunnelJSON("inactive"))
	}))
	defer srv.Close()

	tr := &Transport{V: mustLoad(t)}
	resp, err := (&http.Client{Transport: tr}).Post(srv.URL+"/accounts/"+account+"/cfd_tunnel", "application/json", strings.NewReader(sent))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if received != sent {
		t.Errorf("server received %q, want %q", received, sent)
	}
	vs := tr.Violations()
	if len(vs) != 1 || !strings.Contains(vs[0], "request") {
		t.Errorf("want one request violation, got %q", vs)
	}
}

// One Transport is shared by parallel clients in the simulator's tests.
func TestTransportConcurrent(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, tunnelJSON("down"))
	}))
	defer srv.Close()
	tr := NewTransport(t, srv.Client().Transport)
	client := &http.Client{Transport: tr}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			resp, err := client.Get(srv.URL + "/client/v4" + tunPath)
			if err != nil {
				t.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		})
	}
	wg.Wait()
}
