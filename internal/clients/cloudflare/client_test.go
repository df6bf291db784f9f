package cloudflare

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/utils/ptr"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare/budget"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim/contract"
)

const (
	testToken   = "sim-token-0123456789"
	testAccount = "0123456789abcdef0123456789abcdef"
)

// fixture is a simulator behind an HTTP server and a client whose every
// request and response is checked against Cloudflare's OpenAPI document.
type fixture struct {
	sim    *sim.Server
	srv    *httptest.Server
	client *Client
}

func newFixture(t *testing.T, o sim.Options, pageSize int) *fixture {
	t.Helper()
	if o.Token == "" {
		o.Token = testToken
	}
	if o.AccountID == "" {
		o.AccountID = testAccount
	}
	if o.Zones == nil {
		o.Zones = []string{"example.com", "example.org"}
	}
	s := sim.New(o)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	f := &fixture{sim: s, srv: srv}
	f.client = f.clientWith(t, testToken, pageSize)
	return f
}

func (f *fixture) clientWith(t *testing.T, token string, pageSize int) *Client {
	return New(clients.Config{Token: token, AccountID: testAccount, Endpoint: f.srv.URL + "/client/v4/"}, Options{
		Budgets:   budget.NewRegistry(budget.Options{Limit: 100000}),
		Transport: contract.NewTransport(t, http.DefaultTransport),
		PageSize:  pageSize,
	})
}

// must keeps call sites short; a failing call panics, which fails the test
// with the error and its stack.
func must[T any](v T, err error) T {
	if err != nil {
		panic(fmt.Sprintf("unexpected error: %v", err))
	}
	return v
}

func TestTunnels(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, sim.Options{}, 2)
	c := f.client

	tun := must(c.CreateTunnel(ctx, "edge-1", "cloudflare"))
	if tun.ID == "" || tun.Name != "edge-1" || tun.ConfigSrc != "cloudflare" || tun.Status != "inactive" || tun.Deleted() {
		t.Fatalf("CreateTunnel: unexpected %+v", tun)
	}
	for i := range 4 {
		must(c.CreateTunnel(ctx, fmt.Sprintf("other-%d", i), "cloudflare"))
	}

	t.Run("DuplicateNameIsAlreadyExists", func(t *testing.T) {
		_, err := c.CreateTunnel(ctx, "edge-1", "cloudflare")
		if !IsAlreadyExists(err) {
			t.Fatalf("CreateTunnel(duplicate): got %v, want already exists", err)
		}
		if ae, _ := asAPIError(err); !ae.HasCode(CodeTunnelNameExists) || ae.Status != http.StatusConflict {
			t.Errorf("want 409/1013, got %+v", ae)
		}
	})

	t.Run("GetAndListWithFiltersAndPagination", func(t *testing.T) {
		got := must(c.GetTunnel(ctx, tun.ID))
		// Only a create result carries the run token.
		if diff := cmp.Diff(tun, got, cmpopts.IgnoreFields(Tunnel{}, "Token")); diff != "" {
			t.Errorf("GetTunnel: -created +got:\n%s", diff)
		}
		// Page size 2: five tunnels take three pages, the last one short,
		// so no empty page is asked for.
		f.sim.ResetStats()
		all := must(c.ListTunnels(ctx, TunnelFilter{}))
		if len(all) != 5 {
			t.Errorf("ListTunnels: %d tunnels, want 5", len(all))
		}
		if n := f.sim.Stats()["tunnels.list"].Requests; n != 3 {
			t.Errorf("ListTunnels paged with %d requests, want 3", n)
		}
		// Six tunnels fill three pages exactly; the third reaches the
		// reported total_count, so no empty fourth page is asked for.
		extra := must(c.CreateTunnel(ctx, "sixth", "cloudflare"))
		f.sim.ResetStats()
		if all := must(c.ListTunnels(ctx, TunnelFilter{})); len(all) != 6 {
			t.Errorf("ListTunnels: %d tunnels, want 6", len(all))
		}
		if n := f.sim.Stats()["tunnels.list"].Requests; n != 3 {
			t.Errorf("ListTunnels paged with %d requests, want 3 (the last reaches total_count)", n)
		}
		must(struct{}{}, c.DeleteTunnel(ctx, extra.ID))
		byName := must(c.ListTunnels(ctx, TunnelFilter{Name: "edge-1"}))
		if len(byName) != 1 || byName[0].ID != tun.ID {
			t.Errorf("ListTunnels(name=edge-1) = %+v", byName)
		}
	})

	t.Run("TokenFormat", func(t *testing.T) {
		tok := must(c.TunnelToken(ctx, tun.ID))
		raw, err := base64.StdEncoding.DecodeString(tok)
		if err != nil {
			t.Fatal(err)
		}
		var parts struct{ A, T, S string }
		if err := json.Unmarshal(raw, &parts); err != nil {
			t.Fatal(err)
		}
		if parts.A != testAccount || parts.T != tun.ID || parts.S == "" {
			t.Errorf("token decodes to %+v", parts)
		}
	})

	t.Run("Rename", func(t *testing.T) {
		got := must(c.RenameTunnel(ctx, tun.ID, "edge-one"))
		if got.Name != "edge-one" {
			t.Errorf("RenameTunnel: name %q", got.Name)
		}
		if _, err := c.RenameTunnel(ctx, tun.ID, "other-0"); !IsAlreadyExists(err) {
			t.Errorf("rename onto a taken name: got %v, want already exists", err)
		}
	})

	t.Run("Configuration", func(t *testing.T) {
		cfg := must(c.GetTunnelConfiguration(ctx, tun.ID))
		if cfg.Version != 0 || string(cfg.Config) != "{}" {
			t.Errorf("unconfigured tunnel: version %d config %s", cfg.Version, cfg.Config)
		}
		doc := json.RawMessage(`{"ingress":[{"hostname":"app.example.com","service":"http://app.default.svc.cluster.local:80"},{"service":"http_status:404"}]}`)
		put := must(c.UpdateTunnelConfiguration(ctx, tun.ID, doc))
		if put.Version != 1 {
			t.Errorf("first PUT: version %d, want 1", put.Version)
		}
		got := must(c.GetTunnelConfiguration(ctx, tun.ID))
		var a, b any
		// Two documents that fail to parse would both be nil and equal.
		if err := json.Unmarshal(doc, &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(got.Config, &b); err != nil {
			t.Fatalf("stored configuration %s: %v", got.Config, err)
		}
		if diff := cmp.Diff(a, b); diff != "" {
			t.Errorf("configuration round trip -put +got:\n%s", diff)
		}
		if _, err := c.UpdateTunnelConfiguration(ctx, tun.ID, json.RawMessage(`{"ingress":[{"hostname":"a.example.com","service":"http://a"}]}`)); err == nil {
			t.Error("a configuration without a catch-all rule was accepted")
		}
	})

	t.Run("ConnectorsBlockDelete", func(t *testing.T) {
		if !f.sim.SetConnectors(tun.ID, 2) {
			t.Fatal("SetConnectors failed")
		}
		conns := must(c.TunnelConnectors(ctx, tun.ID))
		if len(conns) != 2 || len(conns[0].Conns) != 4 {
			t.Errorf("TunnelConnectors: %+v", conns)
		}
		if got := must(c.GetTunnel(ctx, tun.ID)); got.Status != "healthy" {
			t.Errorf("status with connectors = %q, want healthy", got.Status)
		}
		err := c.DeleteTunnel(ctx, tun.ID)
		if ae, ok := asAPIError(err); !ok || !ae.HasCode(CodeTunnelHasConnections) {
			t.Fatalf("DeleteTunnel with connectors: got %v, want code 1022", err)
		}
		f.sim.SetConnectors(tun.ID, 0)
	})

	t.Run("SoftDelete", func(t *testing.T) {
		if err := c.DeleteTunnel(ctx, tun.ID); err != nil {
			t.Fatal(err)
		}
		got := must(c.GetTunnel(ctx, tun.ID))
		if !got.Deleted() {
			t.Error("a deleted tunnel is not marked deleted")
		}
		if l := must(c.ListTunnels(ctx, TunnelFilter{Name: "edge-one"})); len(l) != 0 {
			t.Errorf("live listing shows the deleted tunnel: %+v", l)
		}
		if l := must(c.ListTunnels(ctx, TunnelFilter{Name: "edge-one", Deleted: true})); len(l) != 1 {
			t.Errorf("deleted listing: %+v", l)
		}
		// The name is free again.
		must(c.CreateTunnel(ctx, "edge-one", "cloudflare"))
	})

	t.Run("NotFoundAndBadID", func(t *testing.T) {
		if _, err := c.GetTunnel(ctx, "00000000-0000-4000-8000-000000000000"); !IsNotFound(err) {
			t.Errorf("unknown tunnel: got %v, want not found", err)
		}
		_, err := c.GetTunnel(ctx, "not-a-uuid")
		if ae, ok := asAPIError(err); !ok || ae.Status != http.StatusBadRequest || !ae.HasCode(7003) {
			t.Errorf("malformed ID: got %v, want 400/7003", err)
		}
	})
}

func TestAuthenticationFailure(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, sim.Options{}, 0)
	bad := f.clientWith(t, "wrong-token", 0)
	zone := sim.ZoneID("example.com")
	for area, call := range map[string]func() error{
		"Tunnels":        func() error { _, err := bad.ListTunnels(ctx, TunnelFilter{}); return err },
		"HostnameRoutes": func() error { _, err := bad.ListHostnameRoutes(ctx, HostnameRouteFilter{}); return err },
		"Services":       func() error { _, err := bad.ListServices(ctx); return err },
		"Zones":          func() error { _, err := bad.ListZones(ctx, ""); return err },
		"DNSRecords":     func() error { _, err := bad.ListDNSRecords(ctx, zone, DNSRecordFilter{}); return err },
		"Teamnet":        func() error { _, err := bad.ListCIDRRoutes(ctx, CIDRRouteFilter{}); return err },
	} {
		t.Run(area, func(t *testing.T) {
			err := call()
			if !IsAuthentication(err) {
				t.Fatalf("wrong token: got %v, want an authentication error", err)
			}
			if strings.Contains(err.Error(), "wrong-token") {
				t.Errorf("the error message contains the token: %v", err)
			}
		})
	}
}

func TestHostnameRoutes(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, sim.Options{}, 2)
	c := f.client
	tun := must(c.CreateTunnel(ctx, "routes", "cloudflare"))
	other := must(c.CreateTunnel(ctx, "routes-2", "cloudflare"))

	r := must(c.CreateHostnameRoute(ctx, HostnameRouteInput{Hostname: "Redis.Team-A.svc.cluster.local.", TunnelID: tun.ID, Comment: "owner=a"}))
	if r.Hostname != "redis.team-a.svc.cluster.local" || r.TunnelID != tun.ID || r.TunnelName != "routes" {
		t.Errorf("CreateHostnameRoute: %+v (hostnames are stored normalised)", r)
	}
	for i := range 3 {
		must(c.CreateHostnameRoute(ctx, HostnameRouteInput{Hostname: fmt.Sprintf("svc-%d.internal", i), TunnelID: other.ID}))
	}
	if _, err := c.CreateHostnameRoute(ctx, HostnameRouteInput{Hostname: "redis.team-a.svc.cluster.local", TunnelID: other.ID}); !IsAlreadyExists(err) {
		t.Errorf("duplicate hostname: got %v, want already exists", err)
	}
	if got := must(c.GetHostnameRoute(ctx, r.ID)); got.Comment != "owner=a" {
		t.Errorf("GetHostnameRoute: %+v", got)
	}

	names := func(rs []HostnameRoute) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.Hostname)
		}
		sort.Strings(out)
		return out
	}
	for name, tc := range map[string]struct {
		f    HostnameRouteFilter
		want []string
	}{
		"All":               {HostnameRouteFilter{}, []string{"redis.team-a.svc.cluster.local", "svc-0.internal", "svc-1.internal", "svc-2.internal"}},
		"HostnameSubstring": {HostnameRouteFilter{Hostname: "SVC-"}, []string{"svc-0.internal", "svc-1.internal", "svc-2.internal"}},
		"Tunnel":            {HostnameRouteFilter{TunnelID: tun.ID}, []string{"redis.team-a.svc.cluster.local"}},
		"Comment":           {HostnameRouteFilter{Comment: "owner=a"}, []string{"redis.team-a.svc.cluster.local"}},
	} {
		t.Run("List"+name, func(t *testing.T) {
			got := names(must(c.ListHostnameRoutes(ctx, tc.f)))
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("-want +got:\n%s", diff)
			}
		})
	}

	if err := c.DeleteTunnel(ctx, tun.ID); err == nil {
		t.Error("deleting a tunnel that still has a hostname route succeeded")
	}
	up := must(c.UpdateHostnameRoute(ctx, r.ID, HostnameRouteInput{Hostname: r.Hostname, TunnelID: other.ID, Comment: "moved"}))
	if up.TunnelID != other.ID || up.Comment != "moved" {
		t.Errorf("UpdateHostnameRoute: %+v", up)
	}
	if err := c.DeleteHostnameRoute(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	if got := must(c.GetHostnameRoute(ctx, r.ID)); !got.Deleted() {
		t.Error("a deleted route is not marked deleted")
	}
	if err := c.DeleteHostnameRoute(ctx, r.ID); !IsNotFound(err) {
		t.Errorf("deleting twice: got %v, want not found", err)
	}
	if _, err := c.GetHostnameRoute(ctx, "00000000-0000-4000-8000-000000000000"); !IsNotFound(err) {
		t.Errorf("unknown route: got %v, want not found", err)
	}
	if _, err := c.CreateHostnameRoute(ctx, HostnameRouteInput{Hostname: "x.internal", TunnelID: "00000000-0000-4000-8000-000000000000"}); err == nil {
		t.Error("a route to a tunnel that does not exist was accepted")
	}
}

func TestServices(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, sim.Options{}, 2)
	c := f.client
	tun := must(c.CreateTunnel(ctx, "vpc", "cloudflare"))
	port := int64(6379)
	in := Service{Name: "redis-cache-dev", Type: "tcp", TCPPort: &port, Host: ServiceHost{Hostname: "redis.team-a.svc.cluster.local", ResolverNetwork: &ResolverNetwork{TunnelID: tun.ID}}}
	s := must(c.CreateService(ctx, in))
	if s.ServiceID == "" || s.Host.ResolverNetwork == nil || s.Host.ResolverNetwork.TunnelID != tun.ID || *s.TCPPort != 6379 {
		t.Fatalf("CreateService: %+v", s)
	}
	if _, err := c.CreateService(ctx, in); !IsAlreadyExists(err) {
		t.Errorf("duplicate name: got %v, want already exists", err)
	}
	for i := range 3 {
		x := in
		x.Name = fmt.Sprintf("svc-%d", i)
		must(c.CreateService(ctx, x))
	}
	if l := must(c.ListServices(ctx)); len(l) != 4 {
		t.Errorf("ListServices (paged by 2): %d services, want 4", len(l))
	}
	if got := must(c.GetService(ctx, s.ServiceID)); got.Name != "redis-cache-dev" {
		t.Errorf("GetService: %+v", got)
	}
	newPort := int64(6380)
	in.TCPPort = &newPort
	up := must(c.UpdateService(ctx, s.ServiceID, in))
	if *up.TCPPort != 6380 || up.ServiceID != s.ServiceID {
		t.Errorf("UpdateService: %+v", up)
	}
	if err := c.DeleteService(ctx, s.ServiceID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetService(ctx, s.ServiceID); !IsNotFound(err) {
		t.Errorf("deleted service: got %v, want not found", err)
	}
	bad := in
	bad.Name = "nowhere"
	bad.Host.ResolverNetwork = &ResolverNetwork{TunnelID: "00000000-0000-4000-8000-000000000000"}
	if _, err := c.CreateService(ctx, bad); err == nil {
		t.Error("a service on a tunnel that does not exist was accepted")
	}
}

func TestZonesAndDNSRecords(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, sim.Options{}, 2)
	c := f.client

	zs := must(c.ListZones(ctx, "example.com"))
	if len(zs) != 1 || zs[0].Name != "example.com" || zs[0].ID != sim.ZoneID("example.com") {
		t.Fatalf("ListZones(example.com) = %+v", zs)
	}
	if all := must(c.ListZones(ctx, "")); len(all) != 2 {
		t.Errorf("ListZones() = %d zones, want 2", len(all))
	}
	zone := zs[0].ID
	target := "0b7dc4c5-8a62-4c3e-9e2f-111111111111.cfargotunnel.com"
	rec := must(c.CreateDNSRecord(ctx, zone, DNSRecord{Name: "app.example.com", Type: "CNAME", Content: target, Proxied: true, Comment: "managed", Tags: []string{"owner:uid-1"}}))
	if rec.ID == "" || !rec.Proxied || rec.TTL != 1 || rec.Content != target {
		t.Fatalf("CreateDNSRecord: %+v", rec)
	}
	must(c.CreateDNSRecord(ctx, zone, DNSRecord{Name: "www", Type: "A", Content: "192.0.2.1"}))
	must(c.CreateDNSRecord(ctx, zone, DNSRecord{Name: "www", Type: "A", Content: "192.0.2.2"}))

	if _, err := c.CreateDNSRecord(ctx, zone, DNSRecord{Name: "app.example.com", Type: "A", Content: "192.0.2.9"}); !IsConflict(err) {
		t.Errorf("A on a CNAME's name: got %v, want conflict (81053)", err)
	}
	if _, err := c.CreateDNSRecord(ctx, zone, DNSRecord{Name: "www.example.com", Type: "A", Content: "192.0.2.1"}); !IsAlreadyExists(err) {
		t.Errorf("identical record: got %v, want already exists (81057)", err)
	}

	for name, tc := range map[string]struct {
		f    DNSRecordFilter
		want int
	}{
		"All":         {DNSRecordFilter{}, 3},
		"NameAndType": {DNSRecordFilter{Name: "WWW.example.com", Type: "A"}, 2},
		"Content":     {DNSRecordFilter{Content: "192.0.2.2"}, 1},
		"Tag":         {DNSRecordFilter{Tag: "owner:uid-1"}, 1},
		"NoMatch":     {DNSRecordFilter{Name: "nope.example.com"}, 0},
	} {
		t.Run("List"+name, func(t *testing.T) {
			if got := must(c.ListDNSRecords(ctx, zone, tc.f)); len(got) != tc.want {
				t.Errorf("%d records, want %d: %+v", len(got), tc.want, got)
			}
		})
	}

	up := must(c.UpdateDNSRecord(ctx, zone, rec.ID, DNSRecord{Name: "app.example.com", Type: "CNAME", Content: target, Proxied: false, TTL: 300, Comment: "changed"}))
	if up.Proxied || up.TTL != 300 || up.Comment != "changed" || len(up.Tags) != 0 {
		t.Errorf("UpdateDNSRecord (PUT overwrites): %+v", up)
	}
	if got := must(c.GetDNSRecord(ctx, zone, rec.ID)); got.Comment != "changed" {
		t.Errorf("GetDNSRecord: %+v", got)
	}
	if err := c.DeleteDNSRecord(ctx, zone, rec.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetDNSRecord(ctx, zone, rec.ID); !IsNotFound(err) {
		t.Errorf("deleted record: got %v, want not found (81044)", err)
	}
	if err := c.DeleteDNSRecord(ctx, zone, rec.ID); !IsNotFound(err) {
		t.Errorf("deleting twice: got %v, want not found", err)
	}
}

func TestTeamnet(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, sim.Options{}, 2)
	c := f.client
	tun := must(c.CreateTunnel(ctx, "net", "cloudflare"))

	vnets := must(c.ListVirtualNetworks(ctx))
	if len(vnets) != 1 || !vnets[0].IsDefaultNetwork {
		t.Fatalf("a new account has one default virtual network, got %+v", vnets)
	}
	vn := must(c.CreateVirtualNetwork(ctx, VirtualNetworkInput{Name: "staging", Comment: "for staging"}))
	r := must(c.CreateCIDRRoute(ctx, CIDRRouteInput{Network: "10.1.0.0/16", TunnelID: tun.ID}))
	if r.VirtualNetworkID != vnets[0].ID {
		t.Errorf("a route without a virtual network goes to the default, got %q", r.VirtualNetworkID)
	}
	must(c.CreateCIDRRoute(ctx, CIDRRouteInput{Network: "10.1.0.0/16", TunnelID: tun.ID, VirtualNetworkID: vn.ID}))
	if _, err := c.CreateCIDRRoute(ctx, CIDRRouteInput{Network: "10.1.0.0/16", TunnelID: tun.ID}); !IsAlreadyExists(err) {
		t.Errorf("same network in the same virtual network: got %v, want already exists", err)
	}
	if l := must(c.ListCIDRRoutes(ctx, CIDRRouteFilter{TunnelID: tun.ID})); len(l) != 2 {
		t.Errorf("ListCIDRRoutes: %d, want 2", len(l))
	}
	testTeamnetFilters(t, c, tun.ID, vnets[0].ID, vn.ID)
	testVirtualNetworks(t, c, tun.ID, vnets[0].ID, vn.ID)
	if got := must(c.GetCIDRRoute(ctx, r.ID)); got.Network != "10.1.0.0/16" {
		t.Errorf("GetCIDRRoute: %+v", got)
	}
	if err := c.DeleteCIDRRoute(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetCIDRRoute(ctx, r.ID); !IsNotFound(err) {
		t.Errorf("deleted CIDR route: got %v, want not found (1015)", err)
	}
	// Since 2025 a tunnel's CIDR routes go with it.
	if err := c.DeleteTunnel(ctx, tun.ID); err != nil {
		t.Fatalf("DeleteTunnel with a CIDR route: %v", err)
	}
	if l := must(c.ListCIDRRoutes(ctx, CIDRRouteFilter{TunnelID: tun.ID})); len(l) != 0 {
		t.Errorf("CIDR routes outlived their tunnel: %+v", l)
	}
}

// testTeamnetFilters checks the list filters, the update and the IP lookup
// the NetworkRoute controller relies on, through the API contract.
func testTeamnetFilters(t *testing.T, c *Client, tunnelID, defaultVNet, otherVNet string) {
	t.Helper()
	ctx := context.Background()
	host := must(c.CreateCIDRRoute(ctx, CIDRRouteInput{Network: "10.1.2.3/32", TunnelID: tunnelID}))
	v6 := must(c.CreateCIDRRoute(ctx, CIDRRouteInput{Network: "fd00:10:96::12/128", TunnelID: tunnelID}))
	networks := func(f CIDRRouteFilter) []string {
		var out []string
		for _, r := range must(c.ListCIDRRoutes(ctx, f)) {
			out = append(out, r.Network+"@"+map[bool]string{true: "default", false: "other"}[r.VirtualNetworkID == defaultVNet])
		}
		slices.Sort(out)
		return out
	}
	for name, tc := range map[string]struct {
		f    CIDRRouteFilter
		want []string
	}{
		"SubsetOfSlash8":      {f: CIDRRouteFilter{NetworkSubset: "10.0.0.0/8"}, want: []string{"10.1.0.0/16@default", "10.1.0.0/16@other", "10.1.2.3/32@default"}},
		"SupersetOfTheHost":   {f: CIDRRouteFilter{NetworkSuperset: "10.1.2.3/32", VirtualNetworkID: defaultVNet}, want: []string{"10.1.0.0/16@default", "10.1.2.3/32@default"}},
		"SupersetOfElsewhere": {f: CIDRRouteFilter{NetworkSuperset: "192.168.0.0/24"}},
		"OtherVirtualNetwork": {f: CIDRRouteFilter{VirtualNetworkID: otherVNet}, want: []string{"10.1.0.0/16@other"}},
		"IPv6":                {f: CIDRRouteFilter{NetworkSubset: "fd00::/8"}, want: []string{"fd00:10:96::12/128@default"}},
	} {
		got := networks(tc.f)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s: ListCIDRRoutes(%+v) -want +got:\n%s", name, tc.f, diff)
		}
		// The cached client answers the same filters from its snapshot.
		var local []string
		all := must(c.ListCIDRRoutes(ctx, CIDRRouteFilter{}))
		for _, r := range all {
			if tc.f.Keep(r) {
				local = append(local, r.Network+"@"+map[bool]string{true: "default", false: "other"}[r.VirtualNetworkID == defaultVNet])
			}
		}
		slices.Sort(local)
		if diff := cmp.Diff(tc.want, local); diff != "" {
			t.Errorf("%s: CIDRRouteFilter.Keep disagrees with Cloudflare -want +got:\n%s", name, diff)
		}
	}
	if got := must(c.RouteForIP(ctx, "10.1.2.3", "")); got.ID != host.ID {
		t.Errorf("RouteForIP(10.1.2.3) = %s %s, want the most specific route %s", got.ID, got.Network, host.ID)
	}
	if got := must(c.RouteForIP(ctx, "10.1.9.9", otherVNet)); got.Network != "10.1.0.0/16" || got.VirtualNetworkID != otherVNet {
		t.Errorf("RouteForIP(10.1.9.9, other) = %+v", got)
	}
	if _, err := c.RouteForIP(ctx, "192.168.1.1", ""); !IsNotFound(err) {
		t.Errorf("RouteForIP of an unrouted IP: %v, want not found", err)
	}
	moved := must(c.UpdateCIDRRoute(ctx, host.ID, CIDRRouteInput{Network: "10.1.2.4/32", TunnelID: tunnelID, Comment: "moved"}))
	if moved.Network != "10.1.2.4/32" || moved.Comment != "moved" || moved.VirtualNetworkID != defaultVNet {
		t.Errorf("UpdateCIDRRoute: %+v", moved)
	}
	for _, id := range []string{host.ID, v6.ID} {
		if err := c.DeleteCIDRRoute(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
}

// testVirtualNetworks checks get, update, the default flag, and deletes
// Cloudflare refuses.
func testVirtualNetworks(t *testing.T, c *Client, tunnelID, defaultVNet, staging string) {
	t.Helper()
	ctx := context.Background()
	if got := must(c.GetVirtualNetwork(ctx, staging)); got.Name != "staging" || got.Comment != "for staging" || got.IsDefaultNetwork {
		t.Errorf("GetVirtualNetwork: %+v", got)
	}
	if err := c.DeleteVirtualNetwork(ctx, staging); err == nil || IsNotFound(err) {
		t.Errorf("deleting a virtual network a route uses: %v, want refused", err)
	}
	if err := c.DeleteVirtualNetwork(ctx, defaultVNet); err == nil || IsNotFound(err) {
		t.Errorf("deleting the default virtual network: %v, want refused", err)
	}
	spare := must(c.CreateVirtualNetwork(ctx, VirtualNetworkInput{Name: "spare"}))
	up := must(c.UpdateVirtualNetwork(ctx, spare.ID, VirtualNetworkInput{Name: "spare-2", Comment: "c", IsDefaultNetwork: ptr.To(true)}))
	if up.Name != "spare-2" || up.Comment != "c" || !up.IsDefaultNetwork {
		t.Errorf("UpdateVirtualNetwork: %+v", up)
	}
	if got := must(c.GetVirtualNetwork(ctx, defaultVNet)); got.IsDefaultNetwork {
		t.Errorf("the old default kept its flag when another became the default")
	}
	must(c.UpdateVirtualNetwork(ctx, defaultVNet, VirtualNetworkInput{Name: "default", IsDefaultNetwork: ptr.To(true)}))
	if err := c.DeleteVirtualNetwork(ctx, spare.ID); err != nil {
		t.Errorf("deleting an unused virtual network: %v", err)
	}
	if _, err := c.GetVirtualNetwork(ctx, spare.ID); !IsNotFound(err) {
		t.Errorf("deleted virtual network: %v, want not found", err)
	}
}

// recordingTB stands in for a test so a violation can be observed without
// failing this one.
type recordingTB struct {
	testing.TB
	errors []string
}

func (r *recordingTB) Cleanup(func())            {}
func (r *recordingTB) Helper()                   {}
func (r *recordingTB) Errorf(f string, a ...any) { r.errors = append(r.errors, fmt.Sprintf(f, a...)) }

// TestContractCatchesADeliberateMismatch proves the schema check has teeth:
// a simulator whose tunnel status is outside the API's enum is caught.
func TestContractCatchesADeliberateMismatch(t *testing.T) {
	s := sim.New(sim.Options{Token: testToken, AccountID: testAccount})
	broken := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, r)
		body := strings.Replace(rec.Body.String(), `"status":"inactive"`, `"status":"sleeping"`, 1)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write([]byte(body))
	})
	srv := httptest.NewServer(broken)
	defer srv.Close()
	tb := &recordingTB{TB: t}
	ct := contract.NewTransport(tb, http.DefaultTransport)
	c := New(clients.Config{Token: testToken, AccountID: testAccount, Endpoint: srv.URL + "/client/v4/"}, Options{Budgets: budget.NewRegistry(budget.Options{}), Transport: ct})
	if _, err := c.CreateTunnel(context.Background(), "x", "cloudflare"); err != nil {
		t.Fatal(err)
	}
	v := ct.Violations()
	if len(v) != 1 || !strings.Contains(v[0], "status") {
		t.Fatalf("violations = %q, want one about the status enum", v)
	}
	t.Logf("caught: %s", v[0])
}
