package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The switches that make the simulator as strict as Cloudflare where
// Cloudflare lags, lingers or limits (docs/reliability.md lists them with
// their sources).

// listed are the IDs a list call returns (idKey names the ID field).
func listed(t *testing.T, srv *httptest.Server, path, idKey string) []string {
	t.Helper()
	r := call(t, srv, "GET", path, token, "")
	if r.Status != http.StatusOK {
		t.Fatalf("GET %s: %d %v", path, r.Status, codes(r))
	}
	var items []map[string]any
	decodeResult(t, r, &items)
	out := []string{}
	for _, it := range items {
		out = append(out, fmt.Sprint(it[idKey]))
	}
	return out
}

// TestListLagHidesNewObjectsFromListsNotFromGets: with ListLag, an object
// of every listed kind is missing from its list until it is that old, while
// a GET by its ID finds it at once; the account's own default network is
// never hidden; without the switch every list shows every write at once.
func TestListLagHidesNewObjectsFromListsNotFromGets(t *testing.T) {
	for _, lag := range []time.Duration{0, 5 * time.Second} {
		t.Run("lag="+lag.String(), func(t *testing.T) {
			clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			s := New(Options{Token: token, AccountID: account, Zones: []string{zoneName}, ListLag: lag, Now: func() time.Time { return clock }})
			srv := httptest.NewServer(s)
			defer srv.Close()
			acc := "/accounts/" + account
			vnets := listed(t, srv, acc+"/teamnet/virtual_networks", "id")
			if len(vnets) != 1 {
				t.Fatalf("the account's default network is not listed: %v", vnets)
			}

			create := func(path, body, idKey string) string {
				t.Helper()
				r := call(t, srv, "POST", path, token, body)
				var got map[string]any
				decodeResult(t, r, &got)
				if r.Status != http.StatusOK {
					t.Fatalf("POST %s: %d %v", path, r.Status, codes(r))
				}
				return fmt.Sprint(got[idKey])
			}
			tun := create(acc+"/cfd_tunnel", `{"name":"lagging","config_src":"cloudflare"}`, "id")
			kinds := []struct{ list, get, id, idKey string }{
				{acc + "/cfd_tunnel", acc + "/cfd_tunnel/" + tun, tun, "id"},
			}
			add := func(list, body, idKey string) {
				id := create(list, body, idKey)
				kinds = append(kinds, struct{ list, get, id, idKey string }{list, list + "/" + id, id, idKey})
			}
			add(acc+"/zerotrust/routes/hostname", `{"hostname":"db.lag.internal","tunnel_id":"`+tun+`"}`, "id")
			add(acc+"/connectivity/directory/services", `{"name":"db","type":"tcp","tcp_port":5432,"host":{"hostname":"db.lag.internal","resolver_network":{"tunnel_id":"`+tun+`"}}}`, "service_id")
			add("/zones/"+ZoneID(zoneName)+"/dns_records", cname("lag."+zoneName), "id")
			add(acc+"/teamnet/routes", `{"network":"10.1.0.0/16","tunnel_id":"`+tun+`"}`, "id")
			add(acc+"/teamnet/virtual_networks", `{"name":"staging"}`, "id")

			check := func(when string, wantListed bool) {
				t.Helper()
				for _, k := range kinds {
					if r := call(t, srv, "GET", k.get, token, ""); r.Status != http.StatusOK {
						t.Errorf("%s: GET %s: %d, want 200 (a GET by ID never lags)", when, k.get, r.Status)
					}
					ids := listed(t, srv, k.list, k.idKey)
					if got := contains(ids, k.id); got != wantListed {
						t.Errorf("%s: %s lists %s: %v, want %v", when, k.list, k.id, got, wantListed)
					}
				}
				if ids := listed(t, srv, acc+"/teamnet/virtual_networks", "id"); !contains(ids, vnets[0]) {
					t.Errorf("%s: the default network is hidden", when)
				}
			}
			check("just created", lag == 0)
			clock = clock.Add(lag - time.Millisecond)
			check("a moment before the lag is over", lag == 0)
			clock = clock.Add(time.Millisecond)
			check("once the lag is over", true)
		})
	}
}

func contains(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// TestStoppedConnectorsLingerAndBlockTunnelDelete: with ConnectorLinger, a
// connector that stops stays listed and the tunnel keeps serving until the
// edge notices, and deleting the tunnel meanwhile is refused with 400/1022;
// then it expires, the tunnel is down and the delete succeeds. Deleting the
// connections still removes lingering connectors at once. Without the
// switch a stopped connector goes at once.
func TestStoppedConnectorsLingerAndBlockTunnelDelete(t *testing.T) {
	const linger = 30 * time.Second
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := New(Options{Token: token, AccountID: account, ConnectorLinger: linger, Now: func() time.Time { return clock }})
	srv := httptest.NewServer(s)
	defer srv.Close()
	newTunnel := func(name string) string {
		t.Helper()
		var tun struct{ ID string }
		decodeResult(t, call(t, srv, "POST", "/accounts/"+account+"/cfd_tunnel", token, `{"name":"`+name+`","config_src":"cloudflare"}`), &tun)
		return tun.ID
	}
	id := newTunnel("lingering")
	setConnectors(t, srv, id, `{"count": 2}`)
	up := viewTunnel(t, srv, id)

	clock = clock.Add(time.Minute)
	setConnectors(t, srv, id, `{"count": 0}`) // cloudflared scaled to zero
	if v := viewTunnel(t, srv, id); v.Status != "healthy" || !cmp.Equal(v.IDs, up.IDs) {
		t.Errorf("just stopped: %+v, want both connectors still listed and the tunnel healthy", v)
	}
	if st := s.Snapshot().Tunnels[0]; st.Connectors != 0 || st.Lingering != 2 {
		t.Errorf("snapshot: %d connectors, %d lingering, want 0 and 2", st.Connectors, st.Lingering)
	}
	del := "/accounts/" + account + "/cfd_tunnel/" + id
	if r := call(t, srv, "DELETE", del, token, ""); r.Status != http.StatusBadRequest || !cmp.Equal(codes(r), []int{1022}) {
		t.Errorf("delete while they linger: %d %v, want 400 [1022]", r.Status, codes(r))
	}

	clock = clock.Add(linger - time.Second)
	if v := viewTunnel(t, srv, id); len(v.IDs) != 2 {
		t.Errorf("a second before the linger is over: %+v", v)
	}
	clock = clock.Add(time.Second)
	if v := viewTunnel(t, srv, id); v.Status != "down" || len(v.IDs) != 0 || !v.ConnsInactiveAt.Equal(clock) {
		t.Errorf("linger over: %+v, want down since %s with no connector", v, clock)
	}
	if r := call(t, srv, "DELETE", del, token, ""); r.Status != http.StatusOK {
		t.Errorf("delete once they expired: %d %v", r.Status, codes(r))
	}

	// An explicit connections delete does not wait for the edge.
	other := newTunnel("cleaned")
	setConnectors(t, srv, other, `{"count": 1}`)
	setConnectors(t, srv, other, `{"count": 0}`)
	if r := call(t, srv, "DELETE", "/accounts/"+account+"/cfd_tunnel/"+other+"/connections", token, ""); r.Status != http.StatusOK {
		t.Fatalf("delete connections: %d", r.Status)
	}
	if v := viewTunnel(t, srv, other); len(v.IDs) != 0 || v.Status != "down" {
		t.Errorf("after deleting the connections: %+v", v)
	}

	// Off: gone at once.
	plain := New(Options{Token: token, AccountID: account})
	psrv := httptest.NewServer(plain)
	defer psrv.Close()
	var tun struct{ ID string }
	decodeResult(t, call(t, psrv, "POST", "/accounts/"+account+"/cfd_tunnel", token, `{"name":"plain"}`), &tun)
	plain.SetConnectors(tun.ID, 2)
	plain.SetConnectors(tun.ID, 0)
	if r := call(t, psrv, "DELETE", "/accounts/"+account+"/cfd_tunnel/"+tun.ID, token, ""); r.Status != http.StatusOK {
		t.Errorf("without linger, delete right after the connectors stop: %d %v", r.Status, codes(r))
	}
}

// TestTunnelResponsesWithoutConnectionsArray: since 2026-10-05 Cloudflare's
// tunnel create, get and list responses carry no connections array; the
// legacy switch brings back the (empty) deprecated one.
func TestTunnelResponsesWithoutConnectionsArray(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		t.Run("legacy="+strconv.FormatBool(legacy), func(t *testing.T) {
			srv := httptest.NewServer(New(Options{Token: token, AccountID: account, LegacyTunnelConnections: legacy}))
			defer srv.Close()
			base := "/accounts/" + account + "/cfd_tunnel"
			var created map[string]json.RawMessage
			decodeResult(t, call(t, srv, "POST", base, token, `{"name":"shape"}`), &created)
			var id string
			if err := json.Unmarshal(created["id"], &id); err != nil {
				t.Fatal(err)
			}
			var got map[string]json.RawMessage
			decodeResult(t, call(t, srv, "GET", base+"/"+id, token, ""), &got)
			var list []map[string]json.RawMessage
			decodeResult(t, call(t, srv, "GET", base, token, ""), &list)
			if len(list) != 1 {
				t.Fatalf("list: %d tunnels", len(list))
			}
			for what, obj := range map[string]map[string]json.RawMessage{"create": created, "get": got, "list": list[0]} {
				raw, has := obj["connections"]
				if has != legacy || (legacy && string(raw) != "[]") {
					t.Errorf("%s: connections present %v (%s), want %v", what, has, raw, legacy)
				}
			}
		})
	}
}

// TestCloudflaresRateLimit: Cloudflare's own figures, 1,200 calls per five
// minutes: the 1,201st is answered 429 with code 971 and a retry-after of
// the five-minute penalty, during which every call is refused.
func TestCloudflaresRateLimit(t *testing.T) {
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := New(Options{Token: token, AccountID: account, RateLimit: CloudflareRateLimit, RateWindow: CloudflareRateWindow, Now: func() time.Time { return clock }})
	get := func() *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", "/client/v4/accounts/"+account+"/cfd_tunnel", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		return rec
	}
	for i := range CloudflareRateLimit {
		if rec := get(); rec.Code != http.StatusOK {
			t.Fatalf("call %d of %d: %d", i+1, CloudflareRateLimit, rec.Code)
		}
		clock = clock.Add(200 * time.Millisecond) // 1,200 calls in four minutes
	}
	if peak, blocks := s.RateWindowPeak(); peak != CloudflareRateLimit || blocks != 0 {
		t.Errorf("before the limit: peak %d, blocks %d; want %d, 0", peak, blocks, CloudflareRateLimit)
	}
	rec := get()
	var e envelopeReply
	if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil {
		t.Fatal(err)
	}
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "300" || len(e.Errors) != 1 || e.Errors[0].Code != 971 {
		t.Fatalf("call 1,201: %d retry-after %q errors %v, want 429, 300, [971]", rec.Code, rec.Header().Get("Retry-After"), e.Errors)
	}
	clock = clock.Add(CloudflareRateWindow - time.Second)
	if rec := get(); rec.Code != http.StatusTooManyRequests {
		t.Errorf("within the penalty: %d, want 429", rec.Code)
	}
	clock = clock.Add(time.Second)
	if rec := get(); rec.Code != http.StatusOK {
		t.Errorf("after the penalty: %d, want 200", rec.Code)
	}
	if peak, blocks := s.RateWindowPeak(); peak != CloudflareRateLimit || blocks != 1 {
		t.Errorf("after the penalty: peak %d, blocks %d; want %d, 1", peak, blocks, CloudflareRateLimit)
	}
}

// TestServedCountsCallsByPath: Served counts the calls about one object or
// one collection, by method, whatever their answer, and survives
// ResetStats.
func TestServedCountsCallsByPath(t *testing.T) {
	s := New(Options{Token: token, AccountID: account})
	srv := httptest.NewServer(s)
	defer srv.Close()
	base := "/accounts/" + account + "/cfd_tunnel"
	var tun struct{ ID string }
	decodeResult(t, call(t, srv, "POST", "/client/v4"+base, token, `{"name":"counted"}`), &tun)
	call(t, srv, "GET", base+"/"+tun.ID, token, "")
	call(t, srv, "GET", "/client/v4"+base+"/"+tun.ID+"/connections", token, "")
	call(t, srv, "GET", base, token, "")
	call(t, srv, "GET", base+"/00000000-0000-4000-8000-000000000000", token, "") // 404, still served
	s.ResetStats()
	for _, tc := range []struct {
		method, part string
		want         int
	}{
		{"GET", tun.ID, 2},
		{"", tun.ID, 2},
		{"POST", base, 1},
		{"GET", base, 4},
		{"", base, 5},
		{"DELETE", base, 0},
		{"GET", "/cfd_tunnel$", 1},
		{"", "/connections$", 1},
	} {
		if got := s.Served(tc.method, tc.part); got != tc.want {
			t.Errorf("Served(%q, %q) = %d, want %d", tc.method, tc.part, got, tc.want)
		}
	}
}
