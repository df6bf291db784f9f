package cloudflare

import (
	"context"
	"slices"
	"strings"
	"time"
)

// recordKind is the records of one zone, which has a snapshot of its own.
func recordKind(zoneID string) kind[DNSRecord] {
	return kind[DNSRecord]{
		getOp: "cannot get DNS record",
		id:    func(r *DNSRecord) string { return r.ID },
		list: func(c *Client, ctx context.Context) ([]DNSRecord, error) {
			return c.ListDNSRecords(ctx, zoneID, DNSRecordFilter{})
		},
		get: func(c *Client, ctx context.Context, id string) (*DNSRecord, error) {
			return c.GetDNSRecord(ctx, zoneID, id)
		},
		// What a refused get names (AccessLostError).
		noun:       "DNS record",
		permission: "Zone › DNS: Edit for the record's zone",
	}
}

func (c *CachedClient) cachedRecords(zoneID string) cached[DNSRecord] {
	return cached[DNSRecord]{c: c, s: c.cache.zoneRecords(zoneID), k: recordKind(zoneID)}
}

// GetDNSRecord serves a record from its zone's snapshot.
func (c *CachedClient) GetDNSRecord(ctx context.Context, zoneID, id string) (*DNSRecord, error) {
	return c.cachedRecords(zoneID).get(ctx, id)
}

// ListDNSRecords serves a zone's records from its snapshot with Cloudflare's
// exact-match filter semantics (names and contents case-insensitively).
func (c *CachedClient) ListDNSRecords(ctx context.Context, zoneID string, f DNSRecordFilter) ([]DNSRecord, error) {
	return c.cachedRecords(zoneID).list(ctx, c.observeTTL(), f.keep)
}

// ListDNSRecordsSince serves ListDNSRecords from a list of the zone sent no
// earlier than t, listing again when the snapshot's is older.
func (c *CachedClient) ListDNSRecordsSince(ctx context.Context, zoneID string, f DNSRecordFilter, t time.Time) ([]DNSRecord, error) {
	return c.cachedRecords(zoneID).listSince(ctx, t, f.keep)
}

// keep applies Cloudflare's exact-match filter semantics (names and
// contents case-insensitively).
func (f DNSRecordFilter) keep(r DNSRecord) bool {
	return (f.Name == "" || strings.EqualFold(r.Name, f.Name)) &&
		(f.Type == "" || strings.EqualFold(r.Type, f.Type)) &&
		(f.Content == "" || strings.EqualFold(r.Content, f.Content)) &&
		(f.Tag == "" || slices.Contains(r.Tags, f.Tag))
}

// CreateDNSRecord creates and records the record, in the zone's next batch
// when batching is on.
func (c *CachedClient) CreateDNSRecord(ctx context.Context, zoneID string, r DNSRecord) (*DNSRecord, error) {
	return c.writeRecord(ctx, zoneID, &dnsOp{kind: opPost, rec: r})
}

// UpdateDNSRecord updates and records the record, in the zone's next batch
// when batching is on.
func (c *CachedClient) UpdateDNSRecord(ctx context.Context, zoneID, id string, r DNSRecord) (*DNSRecord, error) {
	return c.writeRecord(ctx, zoneID, &dnsOp{kind: opPut, id: id, rec: r})
}

// ReplaceDNSRecord replaces the record and records the outcome. It is sent
// at once, never joining the zone's next batch: that batch may be split
// when Cloudflare refuses one of its operations, and the delete and the
// create must stay in one transaction.
func (c *CachedClient) ReplaceDNSRecord(ctx context.Context, zoneID, id string, r DNSRecord) (*DNSRecord, error) {
	rec, err := c.Client.ReplaceDNSRecord(ctx, zoneID, id, r)
	records := c.cache.zoneRecords(zoneID)
	if err != nil {
		// Refused, or of unknown outcome: the next read lists the zone.
		records.invalidate()
		return nil, err
	}
	records.remove(id)
	records.put(rec.ID, *rec)
	return rec, nil
}

// DeleteDNSRecord deletes and forgets the record, in the zone's next batch
// when batching is on.
func (c *CachedClient) DeleteDNSRecord(ctx context.Context, zoneID, id string) error {
	_, err := c.writeRecord(ctx, zoneID, &dnsOp{kind: opDelete, id: id})
	return err
}

// writeRecord sends one record write, alone or batched, and records its
// outcome in the zone's snapshot.
func (c *CachedClient) writeRecord(ctx context.Context, zoneID string, op *dnsOp) (*DNSRecord, error) {
	records := c.cache.zoneRecords(zoneID)
	op.settle = func(op *dnsOp) { settleRecord(records, op) }
	if c.batcher == nil {
		op.done = make(chan struct{})
		sendOne(ctx, c.Client, zoneID, op)
		return op.result, op.err
	}
	return c.batcher.do(ctx, c.Client, zoneID, op)
}

// settleRecord records a write's outcome in the zone's snapshot.
func settleRecord(s *snapshot[DNSRecord], op *dnsOp) {
	if op.kind == opDelete {
		if op.err == nil || IsNotFound(op.err) {
			s.remove(op.id)
			return
		}
		s.invalidate()
		return
	}
	id := op.id
	if op.kind == opPost {
		id = idOf(op.result, func(r *DNSRecord) string { return r.ID })
	}
	afterWrite(s, op.err, nil, id, op.result)
}
