package cloudflare

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

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
