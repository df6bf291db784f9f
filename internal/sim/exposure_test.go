package sim

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
)

// The watch reports every moment a watched hostname's DNS record sends it
// to rules without an Access check, and nothing while its rules all carry
// one (a stale audience included: closed, not open).
func TestExposureWatch(t *testing.T) {
	s := New(Options{Token: token, AccountID: account, Zones: []string{zoneName}})
	srv := httptest.NewServer(s)
	defer srv.Close()
	var tun struct{ ID string }
	decodeResult(t, call(t, srv, "POST", "/accounts/"+account+"/cfd_tunnel", token, `{"name":"exposure","config_src":"cloudflare"}`), &tun)
	const host = "app.example.com"
	protected := `{"hostname":"app.example.com","service":"http://web:80","originRequest":{"access":{"required":true,"teamName":"t","audTag":["stale"]}}}`
	put := func(rules ...string) {
		t.Helper()
		body := fmt.Sprintf(`{"config":{"ingress":[%s]}}`, strings.Join(append(rules, `{"service":"http_status:404"}`), ","))
		if r := call(t, srv, "PUT", "/accounts/"+account+"/cfd_tunnel/"+tun.ID+"/configurations", token, body); r.Status != 200 {
			t.Fatalf("put: %d %v", r.Status, codes(r))
		}
	}
	record := func() string {
		t.Helper()
		var rec struct{ ID string }
		decodeResult(t, call(t, srv, "POST", "/zones/"+ZoneID(zoneName)+"/dns_records", token, fmt.Sprintf(`{"name":%q,"type":"CNAME","content":"%s.cfargotunnel.com","proxied":true,"ttl":1}`, host, tun.ID)), &rec)
		return rec.ID
	}

	t.Run("ProtectedRulesThenDNS", func(t *testing.T) {
		w := s.WatchExposure(host)
		put(protected)
		id := record()
		put(protected, `{"hostname":"*.example.com","path":"^/api","service":"http://api:80","originRequest":{"access":{"required":true,"audTag":["a"]}}}`)
		call(t, srv, "DELETE", "/zones/"+ZoneID(zoneName)+"/dns_records/"+id, token, "")
		if writes, v := s.StopWatch(w); writes != 5 || len(v) != 0 {
			t.Errorf("checked %d writes (want the start and 4), violations %v", writes, v)
		}
		// The audience "stale" is no application's: closed, but recorded.
		if st := w.Stale(); len(st) != 6 || !strings.Contains(st[0], "requires audience stale") {
			t.Errorf("stale audiences %q: want the app rule after each of the 4 writes from the first configuration on, and the wildcard after its 2", st)
		}
	})
	t.Run("DNSBeforeTheCheck", func(t *testing.T) {
		w := s.WatchExposure(host, "other.example.com")
		put(`{"hostname":"app.example.com","service":"http://web:80"}`)
		id := record()
		put(protected, `{"hostname":"*.example.com","service":"http://web:80"}`)
		put(protected, `{"service":"http://fallback:80"}`)
		call(t, srv, "DELETE", "/zones/"+ZoneID(zoneName)+"/dns_records/"+id, token, "")
		put(`{"hostname":"app.example.com","service":"http://web:80"}`)
		_, v := s.StopWatch(w)
		if len(v) != 3 || !strings.Contains(v[0], "dns_records.create") || !strings.Contains(v[1], `"*.example.com"`) || !strings.Contains(v[2], `"" path "" -> http://fallback:80`) {
			t.Errorf("violations %q: want the record made over an unprotected rule, the wildcard, and the catch-all to an origin", v)
		}
	})
}
