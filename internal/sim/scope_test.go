package sim

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// listedIDs is the IDs a list answered.
func listedIDs(t *testing.T, r reply) []string {
	t.Helper()
	var items []struct{ ID string }
	decodeResult(t, r, &items)
	ids := make([]string, 0, len(items))
	for _, it := range items {
		ids = append(ids, it.ID)
	}
	slices.Sort(ids)
	return ids
}

func postScope(t *testing.T, srv *httptest.Server, body string) int {
	t.Helper()
	res, err := http.Post(srv.URL+"/__sim/scope", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// TestAScopedTokenSeesAndReachesOnlyItsTunnels: lists of tunnels and of CIDR
// routes leave out what lies outside the token's scope (documented); every
// call on such a tunnel, its sub-resources or its routes is refused with
// 403, a create too (guessed); lifting the scope brings it all back.
func TestAScopedTokenSeesAndReachesOnlyItsTunnels(t *testing.T) {
	s := New(Options{Token: token, AccountID: account})
	srv := httptest.NewServer(s)
	defer srv.Close()
	acc := "/accounts/" + account
	ids := map[string]string{}
	routes := map[string]string{}
	for i, name := range []string{"kept", "hidden"} {
		var tun struct{ ID string }
		decodeResult(t, call(t, srv, "POST", acc+"/cfd_tunnel", token, `{"name":"`+name+`","config_src":"cloudflare"}`), &tun)
		ids[name] = tun.ID
		var rt struct{ ID string }
		decodeResult(t, call(t, srv, "POST", acc+"/teamnet/routes", token, `{"network":"10.`+string(rune('1'+i))+`.0.0/16","tunnel_id":"`+tun.ID+`"}`), &rt)
		routes[name] = rt.ID
	}
	hidden := acc + "/cfd_tunnel/" + ids["hidden"]

	if c := postScope(t, srv, `{"token":"`+token+`","tunnel_ids":["`+ids["kept"]+`"]}`); c != http.StatusNoContent {
		t.Fatalf("scoping: %d", c)
	}
	if got := listedIDs(t, call(t, srv, "GET", acc+"/cfd_tunnel", token, "")); !slices.Equal(got, []string{ids["kept"]}) {
		t.Errorf("scoped tunnel list: %v, want only %s", got, ids["kept"])
	}
	if got := listedIDs(t, call(t, srv, "GET", acc+"/cfd_tunnel?name=hidden", token, "")); len(got) != 0 {
		t.Errorf("a scoped lookup by name found %v", got)
	}
	if got := listedIDs(t, call(t, srv, "GET", acc+"/teamnet/routes", token, "")); !slices.Equal(got, []string{routes["kept"]}) {
		t.Errorf("scoped route list: %v, want only %s", got, routes["kept"])
	}
	for _, c := range []struct{ method, path, body string }{
		{"GET", hidden, ""},
		{"PATCH", hidden, `{"name":"renamed"}`},
		{"DELETE", hidden, ""},
		{"GET", hidden + "/token", ""},
		{"GET", hidden + "/connections", ""},
		{"DELETE", hidden + "/connections", ""},
		{"GET", hidden + "/configurations", ""},
		{"PUT", hidden + "/configurations", `{"config":{"ingress":[{"service":"http_status:404"}]}}`},
		// A tunnel that never existed is refused alike: nothing leaks.
		{"GET", acc + "/cfd_tunnel/00000000-0000-4000-8000-000000000000", ""},
		{"POST", acc + "/cfd_tunnel", `{"name":"another","config_src":"cloudflare"}`},
		{"GET", acc + "/teamnet/routes/" + routes["hidden"], ""},
		{"PATCH", acc + "/teamnet/routes/" + routes["hidden"], `{"comment":"x"}`},
		{"DELETE", acc + "/teamnet/routes/" + routes["hidden"], ""},
		{"POST", acc + "/teamnet/routes", `{"network":"10.9.0.0/16","tunnel_id":"` + ids["hidden"] + `"}`},
		{"PATCH", acc + "/teamnet/routes/" + routes["kept"], `{"tunnel_id":"` + ids["hidden"] + `"}`},
	} {
		r := call(t, srv, c.method, c.path, token, c.body)
		if r.Status != http.StatusForbidden || !slices.Equal(codes(r), []int{9109}) {
			t.Errorf("%s %s by a scoped token: %d %v, want 403 [9109]", c.method, c.path, r.Status, codes(r))
		}
	}
	if r := call(t, srv, "GET", acc+"/cfd_tunnel/"+ids["kept"]+"/configurations", token, ""); r.Status != http.StatusOK {
		t.Errorf("a tunnel in scope: %d %v", r.Status, codes(r))
	}
	if got := len(s.Snapshot().Tunnels); got != 2 {
		t.Errorf("the account holds %d tunnels, want 2: a scoped create went through", got)
	}

	if c := postScope(t, srv, `{"token":"`+token+`","tunnel_ids":null}`); c != http.StatusNoContent {
		t.Fatalf("lifting the scope: %d", c)
	}
	if got := listedIDs(t, call(t, srv, "GET", acc+"/cfd_tunnel", token, "")); len(got) != 2 {
		t.Errorf("unscoped tunnel list: %v", got)
	}
	if r := call(t, srv, "GET", hidden, token, ""); r.Status != http.StatusOK {
		t.Errorf("the hidden tunnel after the scope is lifted: %d %v", r.Status, codes(r))
	}
}

// TestScopeAppliesToItsTokenOnly: a scope set for another token changes
// nothing for this one, and an empty scope reaches no tunnel.
func TestScopeAppliesToItsTokenOnly(t *testing.T) {
	s := New(Options{Token: token, AccountID: account})
	srv := httptest.NewServer(s)
	defer srv.Close()
	acc := "/accounts/" + account
	call(t, srv, "POST", acc+"/cfd_tunnel", token, `{"name":"one","config_src":"cloudflare"}`)
	s.ScopeToken("someone-else")
	if got := listedIDs(t, call(t, srv, "GET", acc+"/cfd_tunnel", token, "")); len(got) != 1 {
		t.Errorf("another token's scope hid tunnels from this one: %v", got)
	}
	s.ScopeToken(token)
	if got := listedIDs(t, call(t, srv, "GET", acc+"/cfd_tunnel", token, "")); len(got) != 0 {
		t.Errorf("an empty scope lists %v", got)
	}
	s.UnscopeToken(token)
	if got := listedIDs(t, call(t, srv, "GET", acc+"/cfd_tunnel", token, "")); len(got) != 1 {
		t.Errorf("after UnscopeToken: %v", got)
	}
	if c := postScope(t, srv, `{"tunnel_ids":[]}`); c != http.StatusBadRequest {
		t.Errorf("a scope without a token: %d, want 400", c)
	}
}
