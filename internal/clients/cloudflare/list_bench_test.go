package cloudflare

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare/budget"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim"
)

// BenchmarkListDNSRecords lists a zone of 1,000 proxied CNAMEs, what a DNS
// snapshot refresh reads every half poll at N = 1,000 (the simulator answers
// in-process; the figure is the client's decoding, plus the simulator's
// encoding).
func BenchmarkListDNSRecords(b *testing.B) {
	s := sim.New(sim.Options{Token: testToken, AccountID: testAccount, Zones: []string{"example.com"}})
	srv := httptest.NewServer(s)
	defer srv.Close()
	c := New(clients.Config{Token: testToken, AccountID: testAccount, Endpoint: srv.URL + "/client/v4/"}, Options{Budgets: budget.NewRegistry(budget.Options{Limit: 1 << 30})})
	ctx := context.Background()
	zone := sim.ZoneID("example.com")
	const n = 1000
	for i := range n {
		r := DNSRecord{Name: fmt.Sprintf("app-%d.example.com", i), Type: "CNAME", Content: "t.cfargotunnel.com", Proxied: true, Comment: fmt.Sprintf("made by cluster-a DNSRecord bench/app-%d", i)}
		if _, err := c.CreateDNSRecord(ctx, zone, r); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		rs, err := c.ListDNSRecords(ctx, zone, DNSRecordFilter{})
		if err != nil || len(rs) != n {
			b.Fatalf("listed %d records, %v; want %d", len(rs), err, n)
		}
	}
}

// BenchmarkCachedLookups serves what a managed resource's observation asks
// of a fresh snapshot of 1,000 records: a get by ID and a lookup by name
// (no request reaches the simulator; the figure is the cache's own work,
// most of it copying and sorting the snapshot for the lookup).
func BenchmarkCachedLookups(b *testing.B) {
	s := sim.New(sim.Options{Token: testToken, AccountID: testAccount, Zones: []string{"example.com"}})
	srv := httptest.NewServer(s)
	defer srv.Close()
	c := NewCached(clients.Config{Token: testToken, AccountID: testAccount, Endpoint: srv.URL + "/client/v4/"}, Options{Budgets: budget.NewRegistry(budget.Options{Limit: 1 << 30}), ObservationTTL: time.Hour})
	ctx := context.Background()
	zone := sim.ZoneID("example.com")
	const n = 1000
	var ids []string
	for i := range n {
		r := DNSRecord{Name: fmt.Sprintf("app-%d.example.com", i), Type: "CNAME", Content: "t.cfargotunnel.com", Proxied: true}
		made, err := c.Client.CreateDNSRecord(ctx, zone, r)
		if err != nil {
			b.Fatal(err)
		}
		ids = append(ids, made.ID)
	}
	if _, err := c.ListDNSRecords(ctx, zone, DNSRecordFilter{}); err != nil {
		b.Fatal(err)
	}
	s.ResetStats()
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		i = (i + 1) % n
		if _, err := c.GetDNSRecord(ctx, zone, ids[i]); err != nil {
			b.Fatal(err)
		}
		rs, err := c.ListDNSRecords(ctx, zone, DNSRecordFilter{Name: fmt.Sprintf("app-%d.example.com", i)})
		if err != nil || len(rs) != 1 {
			b.Fatalf("found %d records, %v; want 1", len(rs), err)
		}
	}
	b.StopTimer()
	if got := s.TotalRequests(); got != 0 {
		b.Fatalf("lookups of a fresh snapshot sent %d requests, want 0", got)
	}
}
