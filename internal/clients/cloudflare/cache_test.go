package cloudflare

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare/budget"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim/contract"
)

func cachedFixture(t *testing.T, ttl time.Duration) (*fixture, *CachedClient) {
	t.Helper()
	f := newFixture(t, sim.Options{}, 0)
	// A fresh endpoint per test means a fresh account cache.
	c := NewCached(clients.Config{Token: testToken, AccountID: testAccount, Endpoint: f.srv.URL + "/client/v4/"}, Options{
		Budgets:        budget.NewRegistry(budget.Options{Limit: 100000}),
		Transport:      contract.NewTransport(t, http.DefaultTransport),
		ObservationTTL: ttl,
	})
	return f, c
}

func TestObservationCacheListsOncePerTTL(t *testing.T) {
	ctx := context.Background()
	f, c := cachedFixture(t, time.Hour)
	var ids []string
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		ids = append(ids, must(f.client.CreateTunnel(ctx, n, "cloudflare")).ID)
	}
	f.sim.ResetStats()

	// Twenty concurrent observers of five tunnels: one list between them.
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			if _, err := c.GetTunnel(ctx, ids[i%len(ids)]); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	st := f.sim.Stats()
	if st["tunnels.list"].Requests != 1 || st["tunnels.get"].Requests != 0 {
		t.Errorf("20 observations cost %d lists and %d gets, want 1 list", st["tunnels.list"].Requests, st["tunnels.get"].Requests)
	}
}

func TestObservationCacheMissesAreConfirmed(t *testing.T) {
	ctx := context.Background()
	f, c := cachedFixture(t, time.Hour)
	first := must(f.client.CreateTunnel(ctx, "first", "cloudflare"))
	must(c.GetTunnel(ctx, first.ID)) // fills the snapshot
	// Made behind the cache's back: not in the snapshot, so confirmed by a get.
	later := must(f.client.CreateTunnel(ctx, "later", "cloudflare"))
	f.sim.ResetStats()
	if got := must(c.GetTunnel(ctx, later.ID)); got.Name != "later" {
		t.Errorf("got %+v", got)
	}
	if n := f.sim.Stats()["tunnels.get"].Requests; n != 1 {
		t.Errorf("a miss cost %d gets, want 1", n)
	}
	// Deleted behind its back: the snapshot still has it until the TTL, a
	// deleted tunnel missing from it is confirmed as deleted.
	must(struct{}{}, f.client.DeleteTunnel(ctx, later.ID))
	if got := must(f.client.GetTunnel(ctx, later.ID)); !got.Deleted() {
		t.Fatal("setup: not deleted")
	}
	if _, err := c.GetTunnel(ctx, "00000000-0000-4000-8000-000000000000"); !IsNotFound(err) {
		t.Errorf("an unknown ID: got %v, want not found", err)
	}
}

func TestObservationCacheRefreshesAfterTTLAndRecordsWrites(t *testing.T) {
	ctx := context.Background()
	f, c := cachedFixture(t, 200*time.Millisecond)
	tun := must(c.CreateTunnel(ctx, "mine", "cloudflare"))
	if tun.Token == "" {
		t.Error("the create result lost its token")
	}
	must(c.GetTunnel(ctx, tun.ID))
	must(c.RenameTunnel(ctx, tun.ID, "renamed"))
	f.sim.ResetStats()
	if got := must(c.GetTunnel(ctx, tun.ID)); got.Name != "renamed" || got.Token != "" {
		t.Errorf("after a rename the snapshot has %+v (and must never hold the token)", got)
	}
	if n := f.sim.TotalRequests(); n != 0 {
		t.Errorf("a write then a read within the TTL cost %d calls, want 0", n)
	}
	// Drift made elsewhere shows up once the TTL has passed.
	must(f.client.RenameTunnel(ctx, tun.ID, "drifted"))
	time.Sleep(250 * time.Millisecond)
	if got := must(c.GetTunnel(ctx, tun.ID)); got.Name != "drifted" {
		t.Errorf("after the TTL: %q, want the drifted name", got.Name)
	}
}

func TestObservationCacheServesLookupsByNaturalKey(t *testing.T) {
	ctx := context.Background()
	f, c := cachedFixture(t, time.Hour)
	edge := must(c.CreateTunnel(ctx, "edge", "cloudflare"))
	must(f.client.CreateTunnel(ctx, "other", "cloudflare"))
	route := must(f.client.CreateHostnameRoute(ctx, HostnameRouteInput{Hostname: "App.example.com", TunnelID: edge.ID, Comment: "c"}))
	zone := sim.ZoneID("example.com")
	rec := must(f.client.CreateDNSRecord(ctx, zone, DNSRecord{Name: "www.example.com", Type: "CNAME", Content: "x.example.net", TTL: 1, Tags: []string{"team:edge"}}))
	must(f.client.CreateDNSRecord(ctx, zone, DNSRecord{Name: "api.example.com", Type: "A", Content: "192.0.2.1", TTL: 1}))
	f.sim.ResetStats()

	// First lookups fill one snapshot per kind; the same lookups again, and
	// gets by ID, cost nothing.
	for range 2 {
		if got := must(c.ListTunnels(ctx, TunnelFilter{Name: "edge"})); len(got) != 1 || got[0].ID != edge.ID {
			t.Errorf("tunnels named edge: %+v", got)
		}
		if got := must(c.ListHostnameRoutes(ctx, HostnameRouteFilter{Hostname: "app.EXAMPLE"})); len(got) != 1 || got[0].ID != route.ID {
			t.Errorf("routes matching app.EXAMPLE (substring, any case): %+v", got)
		}
		if got := must(c.ListHostnameRoutes(ctx, HostnameRouteFilter{TunnelID: "00000000-0000-4000-8000-000000000000"})); len(got) != 0 {
			t.Errorf("routes of another tunnel: %+v", got)
		}
		if got := must(c.ListDNSRecords(ctx, zone, DNSRecordFilter{Name: "WWW.example.com", Tag: "team:edge"})); len(got) != 1 || got[0].ID != rec.ID {
			t.Errorf("records named www: %+v", got)
		}
		if got := must(c.ListDNSRecords(ctx, zone, DNSRecordFilter{Type: "A"})); len(got) != 1 || got[0].Name != "api.example.com" {
			t.Errorf("A records: %+v", got)
		}
		if got := must(c.ListServices(ctx)); len(got) != 0 {
			t.Errorf("services: %+v", got)
		}
		must(c.GetHostnameRoute(ctx, route.ID))
		if r := f.sim.Stats(); r["tunnels.list"].Requests != 1 || r["hostname_routes.list"].Requests != 1 || r["dns_records.list"].Requests != 1 || r["services.list"].Requests != 1 {
			t.Errorf("lookups cost %v, want one list per kind", r)
		}
	}
	// Deleted tunnels are never in the snapshot: that listing goes to Cloudflare.
	if _, err := c.ListTunnels(ctx, TunnelFilter{Deleted: true}); err != nil {
		t.Fatal(err)
	}
	if n := f.sim.Stats()["tunnels.list"].Requests; n != 2 {
		t.Errorf("a deleted-tunnel listing cost %d lists in total, want 2 (served by Cloudflare)", n)
	}
}

func TestObservationCacheFailedCreateRelists(t *testing.T) {
	ctx := context.Background()
	f, c := cachedFixture(t, time.Hour)
	if got := must(c.ListTunnels(ctx, TunnelFilter{Name: "edge"})); len(got) != 0 {
		t.Fatalf("setup: %+v", got)
	}
	// Made elsewhere after the snapshot: the create collides. Whatever the
	// reason a create fails, it may have happened, so the next lookup must
	// ask Cloudflare, and finds the tunnel instead of creating another.
	made := must(f.client.CreateTunnel(ctx, "edge", "cloudflare"))
	if _, err := c.CreateTunnel(ctx, "edge", "cloudflare"); !IsAlreadyExists(err) {
		t.Fatalf("create of a taken name: %v", err)
	}
	if got := must(c.ListTunnels(ctx, TunnelFilter{Name: "edge"})); len(got) != 1 || got[0].ID != made.ID {
		t.Errorf("after a failed create the lookup found %+v, want the tunnel made elsewhere", got)
	}
}

func TestObservationCacheRemembersDeletes(t *testing.T) {
	ctx := context.Background()
	f, c := cachedFixture(t, time.Hour)
	zone := sim.ZoneID("example.com")
	tun := must(c.CreateTunnel(ctx, "edge", "cloudflare"))
	rec := must(c.CreateDNSRecord(ctx, zone, DNSRecord{Name: "www.example.com", Type: "CNAME", Content: "x.example.net", TTL: 1}))
	must(struct{}{}, c.DeleteDNSRecord(ctx, zone, rec.ID))
	must(struct{}{}, c.DeleteTunnel(ctx, tun.ID))
	f.sim.ResetStats()
	// The managed reconciler observes right after a delete: that costs no call.
	if _, err := c.GetTunnel(ctx, tun.ID); !IsNotFound(err) {
		t.Errorf("a deleted tunnel: %v, want not found", err)
	}
	if _, err := c.GetDNSRecord(ctx, zone, rec.ID); !IsNotFound(err) {
		t.Errorf("a deleted record: %v, want not found", err)
	}
	if n := f.sim.TotalRequests(); n != 0 {
		t.Errorf("observing deleted objects cost %d calls, want 0", n)
	}
}

func TestReachedTotal(t *testing.T) {
	cases := map[string]struct {
		info string
		have int
		want bool
	}{
		"NoResultInfo":      {info: "", have: 5, want: false},
		"NoTotalCount":      {info: `{"page":1,"per_page":5}`, have: 5, want: false},
		"Below":             {info: `{"total_count":6}`, have: 5, want: false},
		"Reached":           {info: `{"total_count":6}`, have: 6, want: true},
		"Malformed":         {info: `{"total_count":"six"}`, have: 6, want: false},
		"EmptyAccountAtAll": {info: `{"total_count":0}`, have: 0, want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := reachedTotal(tc.info, tc.have); got != tc.want {
				t.Errorf("reachedTotal(%s, %d) = %v, want %v", tc.info, tc.have, got, tc.want)
			}
		})
	}
}

// TestRefreshKeepsWritesMadeWhileListing: a list that was read before a
// write landed must not undo it when it is stored: a create recorded while
// the list was on its way stays, a delete stays deleted, and a write that
// failed meanwhile still forces the next read to list again.
func TestRefreshKeepsWritesMadeWhileListing(t *testing.T) {
	s := &snapshot[string]{}
	ctx := context.Background()
	listing, release := make(chan struct{}), make(chan struct{})
	done := make(chan map[string]string)
	go func() {
		items, err := s.all(ctx, time.Hour, func(context.Context) (map[string]string, error) {
			close(listing)
			<-release
			// Read before the writes below landed.
			return map[string]string{"old": "v1", "deleted": "v1"}, nil
		})
		if err != nil {
			t.Error(err)
		}
		done <- items
	}()
	<-listing
	s.put("created", "v1")
	s.put("old", "v2")
	s.remove("deleted")
	close(release)
	got := <-done
	want := map[string]string{"old": "v2", "created": "v1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("refreshed snapshot (-want +got):\n%s", diff)
	}
	if v, ok, fresh := s.lookup(time.Hour, "created"); !fresh || !ok || v != "v1" {
		t.Errorf("lookup of the create made while listing: %q %v fresh %v", v, ok, fresh)
	}

	// A write that failed while a list was on its way: the next read lists.
	listing, release = make(chan struct{}), make(chan struct{})
	s.invalidate()
	go func() {
		_, _ = s.all(ctx, time.Hour, func(context.Context) (map[string]string, error) {
			close(listing)
			<-release
			return map[string]string{}, nil
		})
		done <- nil
	}()
	<-listing
	s.invalidate()
	close(release)
	<-done
	if _, _, fresh := s.lookup(time.Hour, "x"); fresh {
		t.Error("a snapshot invalidated while it was being listed is fresh")
	}
}

func TestOneSDKClientPerAccountAndOptions(t *testing.T) {
	budgets := budget.NewRegistry(budget.Options{})
	caches := NewCaches()
	cfg := clients.Config{Token: testToken, AccountID: testAccount, Endpoint: "http://cloudflare.invalid/client/v4/"}
	opts := Options{Budgets: budgets, Caches: caches, ObservationTTL: time.Minute}
	first := NewCached(cfg, opts)

	// Another controller's TTL is not part of the client.
	other := opts
	other.ObservationTTL = time.Second
	if got := NewCached(cfg, other); got.Client != first.Client {
		t.Error("a second connect of the same account and options built a second client")
	}

	// Another token, another budget registry, no registry at all, another
	// timeout, or a transport that cannot be compared: a client of its own.
	rotated := cfg
	rotated.Token = "another-token"
	noBudgets := opts
	noBudgets.Budgets = nil
	otherBudgets := opts
	otherBudgets.Budgets = budget.NewRegistry(budget.Options{})
	timeout := opts
	timeout.Timeout = time.Second
	funcTransport := opts
	funcTransport.Transport = roundTripFunc(http.DefaultTransport.RoundTrip)
	for name, c := range map[string]*CachedClient{
		"token":          NewCached(rotated, opts),
		"no budgets":     NewCached(cfg, noBudgets),
		"other budgets":  NewCached(cfg, otherBudgets),
		"timeout":        NewCached(cfg, timeout),
		"func transport": NewCached(cfg, funcTransport),
	} {
		if c.Client == first.Client {
			t.Errorf("%s: shares the first client", name)
		}
	}
	if a, b := NewCached(cfg, noBudgets), NewCached(cfg, noBudgets); a.Client == b.Client {
		t.Error("clients without a budget registry share one (and so one budget)")
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestTunnelConfigurationServedWithinTTL: the document as last read or
// written is served within the TTL, so the read that comes before each
// write of a changing configuration costs nothing; a failed write and an
// old observation go back to Cloudflare, which always has the last word.
func TestTunnelConfigurationServedWithinTTL(t *testing.T) {
	ctx := context.Background()
	f, c := cachedFixture(t, 200*time.Millisecond)
	id := must(f.client.CreateTunnel(ctx, "edge", "cloudflare")).ID
	doc := func(host string) json.RawMessage {
		return json.RawMessage(`{"ingress":[{"hostname":"` + host + `","service":"http://web:80"},{"service":"http_status:404"}]}`)
	}
	gets := func() int { return f.sim.Stats()["tunnels.configurations.get"].Requests }
	f.sim.ResetStats()

	first := must(c.GetTunnelConfiguration(ctx, id))
	must(c.GetTunnelConfiguration(ctx, id))
	if gets() != 1 {
		t.Fatalf("two reads within the TTL made %d gets, want 1", gets())
	}
	written := must(c.UpdateTunnelConfiguration(ctx, id, doc("a.example.com")))
	got := must(c.GetTunnelConfiguration(ctx, id))
	if gets() != 1 || got.Version != written.Version || got.Version == first.Version || !bytes.Contains(got.Config, []byte("a.example.com")) {
		t.Fatalf("read after a write: %d gets, version %d (written %d); want the written document without a get", gets(), got.Version, written.Version)
	}
	got.Config[0] = 'x' // a caller's copy: the cache is not changed through it
	if again := must(c.GetTunnelConfiguration(ctx, id)); again.Config[0] != '{' {
		t.Fatal("a caller changed the cached document")
	}

	// Changed behind the provider's back: seen once the TTL is over.
	must(f.client.UpdateTunnelConfiguration(ctx, id, doc("drift.example.com")))
	time.Sleep(250 * time.Millisecond)
	if got := must(c.GetTunnelConfiguration(ctx, id)); gets() != 2 || !bytes.Contains(got.Config, []byte("drift.example.com")) {
		t.Fatalf("after the TTL: %d gets, config %s; want a get that sees the drift", gets(), got.Config)
	}

	// A write that fails may have happened: the next read asks Cloudflare.
	f.sim.SetFaults(sim.Faults{ErrorRate: 1})
	if _, err := c.UpdateTunnelConfiguration(ctx, id, doc("b.example.com")); err == nil {
		t.Fatal("write succeeded despite the fault")
	}
	f.sim.SetFaults(sim.Faults{})
	must(c.GetTunnelConfiguration(ctx, id))
	if gets() != 3 {
		t.Fatalf("read after a failed write made %d gets in all, want 3", gets())
	}
}

// While requests queue for the budget, a snapshot serves gets for two TTLs
// instead of one: every list then would delay a write. Once the queue is
// gone, the TTL is one again.
func TestObservationYieldsWhileTheBudgetIsSpent(t *testing.T) {
	ctx := context.Background()
	const ttl = 300 * time.Millisecond
	f := newFixture(t, sim.Options{}, 0)
	budgets := budget.NewRegistry(budget.Options{Limit: 100000, Burst: 1})
	c := NewCached(clients.Config{Token: testToken, AccountID: testAccount, Endpoint: f.srv.URL + "/client/v4/"}, Options{
		Budgets: budgets, Transport: contract.NewTransport(t, http.DefaultTransport), ObservationTTL: ttl,
	})
	spend := func() {
		t.Helper()
		for range 2 {
			must(struct{}{}, budgets.For(testToken).Wait(ctx))
		}
	}
	tun := must(f.client.CreateTunnel(ctx, "mine", "cloudflare"))
	lists := func() int { return f.sim.Stats()["tunnels.list"].Requests }

	must(c.GetTunnel(ctx, tun.ID))
	before := lists()
	time.Sleep(ttl + ttl/3)
	spend()
	must(c.GetTunnel(ctx, tun.ID))
	if n := lists() - before; n != 0 {
		t.Errorf("a snapshot older than the TTL, the budget spent: %d lists, want 0 (served for two TTLs)", n)
	}
	time.Sleep(ttl)
	spend()
	must(c.GetTunnel(ctx, tun.ID))
	if n := lists() - before; n != 1 {
		t.Errorf("a snapshot older than two TTLs, the budget spent: %d lists, want 1", n)
	}
	time.Sleep(ttl + ttl/3)
	must(c.GetTunnel(ctx, tun.ID))
	if n := lists() - before; n != 2 {
		t.Errorf("a snapshot older than the TTL, the budget idle for as long: %d lists, want 2", n)
	}
}

// A create that ended while it waited for the budget never reached
// Cloudflare: the snapshot stays, and the lookup that follows it is served
// without a list. A create whose answer was lost (sent, then failed) still
// forces the next lookup to list.
func TestACreateNeverSentKeepsTheSnapshot(t *testing.T) {
	ctx := context.Background()
	svc := func(f *fixture, name string) Service {
		tun := must(f.client.CreateTunnel(ctx, "t-"+name, "cloudflare"))
		return Service{Name: name, Type: "http", HTTPPort: ptr.To[int64](80), Host: ServiceHost{Hostname: name + ".internal", ResolverNetwork: &ResolverNetwork{TunnelID: tun.ID}}}
	}
	setup := func(t *testing.T) (*fixture, *budget.Registry, *CachedClient, func() int) {
		f := newFixture(t, sim.Options{}, 0)
		budgets := budget.NewRegistry(budget.Options{Limit: 100000})
		c := NewCached(clients.Config{Token: testToken, AccountID: testAccount, Endpoint: f.srv.URL + "/client/v4/"}, Options{
			Budgets: budgets, Transport: contract.NewTransport(t, http.DefaultTransport), ObservationTTL: time.Hour,
		})
		must(c.ListServices(ctx))
		return f, budgets, c, func() int { return f.sim.Stats()["services.list"].Requests }
	}
	t.Run("never sent", func(t *testing.T) {
		f, budgets, c, lists := setup(t)
		in := svc(f, "held")
		before := lists()
		budgets.For(testToken).Pause(time.Minute)
		held, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		if _, err := c.CreateService(held, in); err == nil {
			t.Fatal("a create held by a paused budget past its context's end succeeded")
		}
		must(c.ListServices(ctx))
		if n := lists() - before; n != 0 {
			t.Errorf("after a create that never left: %d lists, want 0 (the snapshot is still true)", n)
		}
	})
	t.Run("sent, answer lost", func(t *testing.T) {
		f, _, c, lists := setup(t)
		in := svc(f, "lost")
		before := lists()
		f.sim.LoseNext("services.create", 1)
		if _, err := c.CreateService(ctx, in); err == nil {
			t.Fatal("a create whose answer was lost succeeded")
		}
		all := must(c.ListServices(ctx))
		if n := lists() - before; n != 1 {
			t.Errorf("after a create that was sent and failed: %d lists, want 1", n)
		}
		if len(all) != 1 || all[0].Name != "lost" {
			t.Errorf("after a lost answer the lookup sees %+v; want the service the create made", all)
		}
	})
}
