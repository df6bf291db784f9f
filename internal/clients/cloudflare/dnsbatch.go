package cloudflare

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"
)

// DNSBatching coalesces the DNS record writes of one account and zone made
// within a short window into batches: one request for up to Size
// operations instead of one each. A zone that sent a batch in the last
// five windows waits five windows for the next, and one in a large change
// (a batch of a tenth of Size went out, and no lull of twenty windows
// since) waits sixty: a lone write goes out after Window, a large change in
// few batches.
type DNSBatching struct {
	// Window is how long the first write of a batch waits for others to
	// join it; 0 turns batching off.
	Window time.Duration
	// Size is the most operations one batch holds; 0 means
	// DefaultDNSBatchSize. Cloudflare allows 200 on a free zone and 3,500
	// on paid plans.
	Size int
	// Writers is how many DNS record writes of the process can wait for
	// their batches at once: the DNSRecord controller's workers, each
	// waiting for its own. When that many wait, no write is left to join
	// any batch, so every pending batch goes out at once rather than
	// holding the controller still until its window closes. 0 means
	// unknown: batches wait for their windows.
	Writers int
}

const (
	// DefaultDNSBatchWindow is --dns-batch-window's default: short against
	// a reconcile and against the seconds a large change takes to reach
	// the DNSRecords (at 100 reconciles a second), long enough for much of
	// it to meet in one batch.
	DefaultDNSBatchWindow = time.Second
	// DefaultDNSBatchSize is a free zone's limit, so batches are accepted
	// on every plan.
	DefaultDNSBatchSize = 200
)

// DefaultDNSBatching is what the provider's flags default to.
func DefaultDNSBatching() DNSBatching {
	return DNSBatching{Window: DefaultDNSBatchWindow, Size: DefaultDNSBatchSize}
}

// Enabled says whether DNS writes are batched at all.
func (o DNSBatching) Enabled() bool { return o.Window > 0 }

// busyWindow is the window of a zone that sent a batch within it: five
// windows.
func (o DNSBatching) busyWindow() time.Duration { return 5 * o.Window }

// lull is how long a zone must have sent nothing for a large change in it
// to be over: twenty windows. A write after a longer lull is a new change.
func (o DNSBatching) lull() time.Duration { return 20 * o.Window }

// largeWindow is the window of a zone while a large change is under way:
// sixty windows, or until the batch is full.
func (o DNSBatching) largeWindow() time.Duration { return 60 * o.Window }

// isLarge says whether a batch of n operations means a large change is
// under way: a tenth of the batch size or more.
func (o DNSBatching) isLarge(n int) bool { return n >= max(2, o.BatchSize()/10) }

// windowFor is how long a zone's next batch stays open, given how long ago
// its last batch went out and whether a large change is under way in it (a
// large batch went out with no lull since). An idle zone waits one window,
// so a lone write goes out promptly. A zone that sent a batch within five
// windows waits five. One in a large change waits sixty, unless the batch
// fills first: the records of a large change reach their zone over
// minutes, a few a second, while the routes and services ahead of them
// spend the request budget. At five windows a thousand records went out in
// about forty batches, at twenty in about twenty (N = 1,000,
// docs/benchmarks.md), where the batch size allows five; each extra batch
// is a request the budget takes from the change.
func (o DNSBatching) windowFor(sinceLast time.Duration, largeChange bool) time.Duration {
	switch {
	case largeChange && sinceLast < o.lull():
		return o.largeWindow()
	case sinceLast < o.busyWindow():
		return o.busyWindow()
	default:
		return o.Window
	}
}

// BatchSize is the most operations one batch holds: Size, or
// DefaultDNSBatchSize when unset.
func (o DNSBatching) BatchSize() int {
	if o.Size <= 0 {
		return DefaultDNSBatchSize
	}
	return o.Size
}

type dnsOpKind int

const (
	opDelete dnsOpKind = iota
	opPut
	opPost
)

// dnsOp is one record write waiting for its batch. settle runs once the
// outcome is known, whether or not the caller still waits, so the
// observation cache always learns what happened.
type dnsOp struct {
	kind   dnsOpKind
	id     string // deletes and puts
	rec    DNSRecord
	settle func(*dnsOp)

	done   chan struct{}
	result *DNSRecord
	err    error
}

func (op *dnsOp) finish(r *DNSRecord, err error) {
	op.result, op.err = r, err
	if op.settle != nil {
		op.settle(op)
	}
	close(op.done)
}

// identity is what a created record is recognised by in a batch's answer:
// its name, type and comment. The comment holds the creator's ownership
// marker, unique per managed resource, so two posts never share an
// identity unless they are the same write. Results are never matched by
// position.
func identity(r DNSRecord) string {
	name := strings.ToLower(strings.TrimSuffix(strings.TrimSpace(r.Name), "."))
	return name + "\x00" + strings.ToUpper(r.Type) + "\x00" + r.Comment
}

// sender writes one batch, or one operation when a batch holds only one.
type sender interface {
	BatchDNSRecords(ctx context.Context, zoneID string, b DNSBatch) (*DNSBatchResult, error)
	CreateDNSRecord(ctx context.Context, zoneID string, r DNSRecord) (*DNSRecord, error)
	UpdateDNSRecord(ctx context.Context, zoneID, id string, r DNSRecord) (*DNSRecord, error)
	DeleteDNSRecord(ctx context.Context, zoneID, id string) error
}

// dnsBatcher holds an account's pending batches, one per zone.
type dnsBatcher struct {
	opts    DNSBatching
	waiters *dnsWaiters
	mu      sync.Mutex
	zones   map[string]*zoneBatch
}

func newDNSBatcher(o DNSBatching, w *dnsWaiters) *dnsBatcher {
	if w == nil {
		w = &dnsWaiters{}
	}
	b := &dnsBatcher{opts: o, waiters: w, zones: map[string]*zoneBatch{}}
	w.register(b)
	return b
}

// dnsWaiters counts the process's DNS writes waiting in batches not yet
// sent, across accounts and zones, because the writers (the DNSRecord
// controller's workers) are shared by all of them. A write whose batch is
// on its way is not counted: its worker will soon be free to bring another.
type dnsWaiters struct {
	mu       sync.Mutex
	waiting  int
	batchers []*dnsBatcher
}

func (w *dnsWaiters) register(b *dnsBatcher) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.batchers = append(w.batchers, b)
}

// add counts n more writes waiting in unsent batches and returns how many
// wait now.
func (w *dnsWaiters) add(n int) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.waiting += n
	return w.waiting
}

// flushAll sends every pending batch of every batcher now.
func (w *dnsWaiters) flushAll() {
	w.mu.Lock()
	batchers := slices.Clone(w.batchers)
	w.mu.Unlock()
	for _, b := range batchers {
		b.flushPending()
	}
}

// flushPending sends each zone's pending batch now, its window cut short,
// with the client and context its first write brought.
func (b *dnsBatcher) flushPending() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for zoneID, z := range b.zones {
		if len(z.pending) == 0 {
			continue
		}
		if z.timer != nil {
			z.timer.Stop()
		}
		go b.flush(z.ctx, z.sender, zoneID, b.take(z))
	}
}

// zoneBatch collects one zone's writes until the window closes or the
// batch is full.
type zoneBatch struct {
	pending []*dnsOp
	// sent is when the zone's last batch went out, and largeChange
	// whether a large batch went out with no lull since: a zone that is
	// busy waits longer for its next batch (windowFor), so a large change
	// meets in few batches while a lone write waits only Window.
	sent        time.Time
	largeChange bool
	// posts are the creates pending or in flight, by identity: a second
	// create of the same record (a retried reconcile whose first attempt
	// gave up waiting) joins the first instead of duplicating it.
	posts map[string]*dnsOp
	timer *time.Timer
	// sender and ctx send the pending batch: its first write's client
	// (the account's) and a context that outlives that write's reconcile.
	sender sender
	ctx    context.Context
}

// do queues op for zoneID's next batch and waits for its outcome.
func (b *dnsBatcher) do(ctx context.Context, s sender, zoneID string, op *dnsOp) (*DNSRecord, error) {
	op.done = make(chan struct{})
	if first := b.enqueue(ctx, s, zoneID, op); first != op {
		op = first
	}
	if b.opts.Writers > 0 && b.waiters.add(0) >= b.opts.Writers {
		// Every writer waits in a batch not yet sent: nothing more can
		// join, so waiting longer would only stall them.
		b.waiters.flushAll()
	}
	select {
	case <-op.done:
		return op.result, op.err
	case <-ctx.Done():
		// The write goes ahead; settle records its outcome for the next
		// reconcile, and a create retried before then joins this one.
		return nil, ctx.Err()
	}
}

// enqueue adds op to its zone's batch and returns the op to wait for: op
// itself, or an identical create already on its way.
func (b *dnsBatcher) enqueue(ctx context.Context, s sender, zoneID string, op *dnsOp) *dnsOp {
	b.mu.Lock()
	defer b.mu.Unlock()
	z := b.zones[zoneID]
	if z == nil {
		z = &zoneBatch{posts: map[string]*dnsOp{}}
		b.zones[zoneID] = z
	}
	if op.kind == opPost {
		key := identity(op.rec)
		if prev, ok := z.posts[key]; ok {
			return prev
		}
		z.posts[key] = op
	}
	z.pending = append(z.pending, op)
	b.waiters.add(1)
	// The batch is sent on its own context: it serves many callers, and
	// abandoning it when the first caller's reconcile ends would make
	// every other caller's outcome unknown.
	bctx := context.WithoutCancel(ctx)
	switch {
	case len(z.pending) >= b.opts.BatchSize():
		if z.timer != nil {
			z.timer.Stop()
		}
		go b.flush(bctx, s, zoneID, b.take(z))
	case len(z.pending) == 1:
		z.sender, z.ctx = s, bctx
		window := z.open(b.opts, time.Now())
		z.timer = time.AfterFunc(window, func() {
			b.mu.Lock()
			ops := b.take(z)
			b.mu.Unlock()
			b.flush(bctx, s, zoneID, ops)
		})
	}
	return op
}

// take empties a zone's pending batch; b.mu is held.
func (b *dnsBatcher) take(z *zoneBatch) []*dnsOp {
	ops := z.pending
	z.pending = nil
	if len(ops) > 0 {
		b.waiters.add(-len(ops))
		z.sentBatch(b.opts, len(ops), time.Now())
	}
	return ops
}

// open is the window of a batch the zone opens at now. A lull since its
// last batch ends any large change.
func (z *zoneBatch) open(o DNSBatching, now time.Time) time.Duration {
	since := now.Sub(z.sent)
	if since >= o.lull() {
		z.largeChange = false
	}
	return o.windowFor(since, z.largeChange)
}

// sentBatch records a batch of n operations sent at now. A large batch
// starts (or continues) a large change, and a small one does not end it:
// a batch cut short by a full set of waiting writers, or the tail of a
// wave of records, is still part of the change.
func (z *zoneBatch) sentBatch(o DNSBatching, n int, now time.Time) {
	z.sent = now
	if o.isLarge(n) {
		z.largeChange = true
	}
}

// flush sends ops and settles each. A batch Cloudflare refuses for one bad
// operation is split in halves until the error lands on the operation that
// caused it, so the others go through; a failure that says nothing about
// any one operation (a rate limit, a server error, a lost response) is
// every operation's.
func (b *dnsBatcher) flush(ctx context.Context, s sender, zoneID string, ops []*dnsOp) {
	if len(ops) == 0 {
		return
	}
	defer b.forget(zoneID, ops)
	b.send(ctx, s, zoneID, ops)
}

func (b *dnsBatcher) send(ctx context.Context, s sender, zoneID string, ops []*dnsOp) {
	if len(ops) == 1 {
		// A batch of one is the plain call: same cost, and its error is
		// exactly the record's.
		sendOne(ctx, s, zoneID, ops[0])
		return
	}
	res, err := s.BatchDNSRecords(ctx, zoneID, batchOf(ops))
	switch {
	case err == nil:
		settleAll(ops, res)
	case blamesOneOperation(err):
		half := len(ops) / 2
		b.send(ctx, s, zoneID, ops[:half])
		b.send(ctx, s, zoneID, ops[half:])
	default:
		for _, op := range ops {
			op.finish(nil, err)
		}
	}
}

func sendOne(ctx context.Context, s sender, zoneID string, op *dnsOp) {
	switch op.kind {
	case opDelete:
		op.finish(nil, s.DeleteDNSRecord(ctx, zoneID, op.id))
	case opPut:
		op.finish(s.UpdateDNSRecord(ctx, zoneID, op.id, op.rec))
	default:
		op.finish(s.CreateDNSRecord(ctx, zoneID, op.rec))
	}
}

// forget drops settled creates from the zone's identity index.
func (b *dnsBatcher) forget(zoneID string, ops []*dnsOp) {
	b.mu.Lock()
	defer b.mu.Unlock()
	z := b.zones[zoneID]
	for _, op := range ops {
		if key := identity(op.rec); op.kind == opPost && z.posts[key] == op {
			delete(z.posts, key)
		}
	}
}

func batchOf(ops []*dnsOp) DNSBatch {
	var out DNSBatch
	for _, op := range ops {
		switch op.kind {
		case opDelete:
			out.Deletes = append(out.Deletes, op.id)
		case opPut:
			r := op.rec
			r.ID = op.id
			out.Puts = append(out.Puts, r)
		default:
			out.Posts = append(out.Posts, op.rec)
		}
	}
	return out
}

// settleAll hands each operation its record from a successful batch:
// deletes and puts by ID, creates by identity.
func settleAll(ops []*dnsOp, res *DNSBatchResult) {
	byID := map[string]DNSRecord{}
	for _, r := range append(append([]DNSRecord{}, res.Deletes...), res.Puts...) {
		byID[r.ID] = r
	}
	created := map[string]DNSRecord{}
	for _, r := range res.Posts {
		created[identity(r)] = r
	}
	for _, op := range ops {
		var r DNSRecord
		var ok bool
		switch op.kind {
		case opPost:
			r, ok = created[identity(op.rec)]
		default:
			r, ok = byID[op.id]
		}
		if !ok {
			// The batch succeeded but its answer does not account for this
			// write: its outcome is unknown, as after a lost response.
			op.finish(nil, errNotInBatchAnswer)
			continue
		}
		if op.kind == opDelete {
			op.finish(nil, nil)
			continue
		}
		op.finish(ptrCopy(r), nil)
	}
}

// errNotInBatchAnswer is the outcome of a write a successful batch's answer
// does not account for: unknown, so the zone's snapshot is listed again.
var errNotInBatchAnswer = errors.New("cannot write a batch of DNS records: Cloudflare's answer to the batch did not include this record, so its outcome is unknown")

// blamesOneOperation reports whether Cloudflare refused a batch for what an
// operation in it holds (a conflict, a missing record, an invalid record):
// a client error other than authentication or the rate limit.
func blamesOneOperation(err error) bool {
	ae, ok := asAPIError(err)
	if !ok || ae.Status < 400 || ae.Status >= 500 {
		return false
	}
	// A zone that is not there (or not ours) fails every half alike.
	zoneLevel := ae.HasCode(codeInvalidZone) || ae.HasCode(codeBadIdentifier)
	return !IsRateLimited(err) && !IsAuthentication(err) && !zoneLevel
}

// Cloudflare's codes for a zone ID it does not know and for a malformed
// identifier in the path.
const (
	codeInvalidZone   = 1001
	codeBadIdentifier = 7003
)
