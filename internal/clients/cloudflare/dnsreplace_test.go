package cloudflare

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim"
)

// TestReplaceDNSRecord: Cloudflare refuses an update that changes a
// record's type; ReplaceDNSRecord deletes the record and creates its
// successor in one batch request, sent at once even with batching on. The
// observation cache then serves the new record and not the old one without
// listing; after a replacement whose answer was lost it lists again, and
// finds that both happened.
func TestReplaceDNSRecord(t *testing.T) {
	ctx := context.Background()
	f, c := batchingFixture(t, time.Hour)
	zone := sim.ZoneID("example.com")
	old := must(f.client.CreateDNSRecord(ctx, zone, DNSRecord{Name: "app.example.com", Type: "A", Content: "192.0.2.1", Comment: "mine"}))

	_, err := c.UpdateDNSRecord(ctx, zone, old.ID, DNSRecord{Name: "app.example.com", Type: "CNAME", Content: "t.cfargotunnel.com", Comment: "mine"})
	if ae, ok := asAPIError(err); !ok || ae.Status != http.StatusBadRequest {
		t.Fatalf("an update changing the type: %v, want Cloudflare's refusal", err)
	}

	must(c.ListDNSRecords(ctx, zone, DNSRecordFilter{}))
	f.sim.ResetStats()
	rec := must(c.ReplaceDNSRecord(ctx, zone, old.ID, DNSRecord{Name: "app.example.com", Type: "CNAME", Content: "t.cfargotunnel.com", Comment: "mine"}))
	if rec.ID == "" || rec.ID == old.ID || rec.Type != "CNAME" {
		t.Fatalf("replacement %+v", rec)
	}
	if _, err := c.GetDNSRecord(ctx, zone, old.ID); !IsNotFound(err) {
		t.Errorf("the replaced record: %v, want not found", err)
	}
	if got := must(c.GetDNSRecord(ctx, zone, rec.ID)); got.Type != "CNAME" {
		t.Errorf("the replacement is served as %+v", got)
	}
	st := f.sim.Stats()
	if st["dns_records.batch"].Requests != 1 || f.sim.TotalRequests() != 1 {
		t.Errorf("requests %v, want the one batch: the cache serves the outcome", st)
	}

	f.sim.LoseNext("dns_records.batch", 1)
	if _, err := c.ReplaceDNSRecord(ctx, zone, rec.ID, DNSRecord{Name: "app.example.com", Type: "A", Content: "192.0.2.2", Comment: "mine"}); err == nil {
		t.Fatal("a replacement whose answer was lost succeeded")
	}
	lists := f.sim.Stats()["dns_records.list"].Requests
	rs := must(c.ListDNSRecords(ctx, zone, DNSRecordFilter{Name: "app.example.com"}))
	if len(rs) != 1 || rs[0].Type != "A" || rs[0].Content != "192.0.2.2" {
		t.Errorf("after the lost answer the name holds %+v, want only the new A record", rs)
	}
	if n := f.sim.Stats()["dns_records.list"].Requests - lists; n != 1 {
		t.Errorf("%d lists after the lost answer, want 1: the snapshot cannot know the outcome", n)
	}
}
