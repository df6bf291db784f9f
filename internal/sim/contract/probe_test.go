package contract

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestProbe(t *testing.T) {
	start := time.Now()
	v, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("load: %v", time.Since(start))
	start = time.Now()
	Load()
	t.Logf("second load: %v", time.Since(start))
	h := http.Header{"Content-Type": {"application/json"}}
	cases := []struct{ method, path, body string; status int; resp string }{
		{"GET", "/client/v4/accounts/699d98642c564d2e855e9661899b7252/teamnet/routes/f70ff985-a4ef-4643-bbbc-4a0ed4fc8415", "", 404, `{"success":false,"errors":[{"code":1015,"message":"x"}],"messages":[],"result":null}`},
		{"GET", "/client/v4/accounts/699d98642c564d2e855e9661899b7252/cfd_tunnel/f70ff985-a4ef-4643-bbbc-4a0ed4fc8415", "", 404, `{"success":false,"errors":[{"code":1015,"message":"x"}],"messages":[],"result":null}`},
		{"GET", "/client/v4/accounts/699d98642c564d2e855e9661899b7252/cfd_tunnel/f70ff985-a4ef-4643-bbbc-4a0ed4fc8415", "", 200, `{"success":true,"errors":[],"messages":[],"result":{"id":"f70ff985-a4ef-4643-bbbc-4a0ed4fc8415","account_tag":"699d98642c564d2e855e9661899b7252","name":"x","status":"inactive","created_at":"2024-01-01T00:00:00Z","deleted_at":null,"conns_active_at":null,"conns_inactive_at":null,"connections":[],"metadata":{},"config_src":"cloudflare","remote_config":true,"tun_type":"cfd_tunnel","token":"abc"}}`},
		{"GET", "/zones?type=full&type=partial&per_page=20", "", 0, ""},
		{"GET", "/zones?type=full,partial", "", 0, ""},
		{"GET", "/accounts/699d98642c564d2e855e9661899b7252/teamnet/routes?tun_types=cfd_tunnel&tun_types=warp", "", 0, ""},
		{"GET", "/zones/023e105f4ecef8ad9ca31a8372d0c353/dns_records?name.exact=a.example.com&per_page=100", "", 0, ""},
		{"PUT", "/accounts/699d98642c564d2e855e9661899b7252/cfd_tunnel/f70ff985-a4ef-4643-bbbc-4a0ed4fc8415/configurations", `{"config":{"ingress":[{"hostname":"a.example.com","service":"http://x:80"},{"service":"http_status:404"}]}}`, 0, ""},
		{"DELETE", "/accounts/699d98642c564d2e855e9661899b7252/connectivity/directory/services/550e8400-e29b-41d4-a716-446655440000", "", 200, ""},
		{"DELETE", "/accounts/699d98642c564d2e855e9661899b7252/cfd_tunnel/f70ff985-a4ef-4643-bbbc-4a0ed4fc8415/connections", "", 200, `{"success":true,"errors":[],"messages":[],"result":null}`},
		{"GET", "/accounts/699d98642c564d2e855e9661899b7252/cfd_tunnel/f70ff985-a4ef-4643-bbbc-4a0ed4fc8415/token", "", 200, `{"success":true,"errors":[],"messages":[],"result":"abc"}`},
	}
	for _, c := range cases {
		req, _ := http.NewRequest(c.method, "http://127.0.0.1:1"+c.path, strings.NewReader(c.body))
		if c.body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		t.Logf("%s %s req: %v", c.method, c.path, v.ValidateRequest(req, []byte(c.body)))
		if c.status != 0 {
			hh := h
			if c.resp == "" {
				hh = http.Header{}
			}
			t.Logf("   resp: %v", v.ValidateResponse(req, []byte(c.body), c.status, hh, []byte(c.resp)))
		}
	}
}
