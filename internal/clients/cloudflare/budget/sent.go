package budget

import (
	"context"
	"sync/atomic"
)

// SendRecord says whether a request made under a context left the process.
// A request that ended while it waited for the budget never reached
// Cloudflare, but the SDK answers such a request with the context's error
// alone: this record is how a caller tells "never sent" from "answer lost".
type SendRecord struct{ queued, sent atomic.Bool }

// Sent reports whether the budget let a request made under the record's
// context go to Cloudflare.
func (r *SendRecord) Sent() bool { return r != nil && r.sent.Load() }

// NeverSent reports whether requests made under the record's context
// reached the budget and none of them left it. A record no budget saw (a
// client without the budget's transport) says nothing: it is not never sent.
func (r *SendRecord) NeverSent() bool { return r != nil && r.queued.Load() && !r.sent.Load() }

type sendRecordKey struct{}

// WithSendRecord returns a context whose requests mark the returned record
// once the budget lets them go.
func WithSendRecord(ctx context.Context) (context.Context, *SendRecord) {
	r := &SendRecord{}
	return context.WithValue(ctx, sendRecordKey{}, r), r
}

// markQueued records that a request made under ctx reached the budget.
func markQueued(ctx context.Context) {
	if r, ok := ctx.Value(sendRecordKey{}).(*SendRecord); ok {
		r.queued.Store(true)
	}
}

// markSent records that a request made under ctx left the budget.
func markSent(ctx context.Context) {
	if r, ok := ctx.Value(sendRecordKey{}).(*SendRecord); ok {
		r.sent.Store(true)
	}
}
