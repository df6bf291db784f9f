package cloudflare

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare/budget"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim/contract"
)

// priorities records the budget priority each operation's request waited with.
type priorities struct {
	next http.RoundTripper
	mu   sync.Mutex
	seen map[string]budget.Priority
}

func (p *priorities) RoundTrip(r *http.Request) (*http.Response, error) {
	p.mu.Lock()
	p.seen[budget.OperationName(r)] = budget.PriorityOf(r.Context())
	p.mu.Unlock()
	return p.next.RoundTrip(r)
}

// TestManyObjectRequestsGoFirst: the requests whose answer many resources
// wait for (the zone lookup every record needs, a batch of records) wait for
// the budget at Aggregate priority, ahead of single-object writes; a single
// record's create does not.
func TestManyObjectRequestsGoFirst(t *testing.T) {
	f := newFixture(t, sim.Options{}, 0)
	p := &priorities{next: contract.NewTransport(t, http.DefaultTransport), seen: map[string]budget.Priority{}}
	c := New(clients.Config{Token: testToken, AccountID: testAccount, Endpoint: f.srv.URL + "/client/v4/"}, Options{
		Budgets: budget.NewRegistry(budget.Options{Limit: 100000}), Transport: p,
	})
	ctx := context.Background()
	zone := sim.ZoneID("example.com")
	must(c.ListZones(ctx, "example.com"))
	must(c.BatchDNSRecords(ctx, zone, DNSBatch{Posts: []DNSRecord{{Name: "a.example.com", Type: "CNAME", Content: "t.cfargotunnel.com"}, {Name: "b.example.com", Type: "CNAME", Content: "t.cfargotunnel.com"}}}))
	must(c.CreateDNSRecord(ctx, zone, DNSRecord{Name: "c.example.com", Type: "CNAME", Content: "t.cfargotunnel.com"}))
	want := map[string]budget.Priority{
		"GET /zones":                         budget.Aggregate,
		"POST /zones/{id}/dns_records/batch": budget.Aggregate,
		"POST /zones/{id}/dns_records":       budget.Normal,
	}
	if diff := cmp.Diff(want, p.seen); diff != "" {
		t.Errorf("priority by request (-want +got):\n%s", diff)
	}
}
