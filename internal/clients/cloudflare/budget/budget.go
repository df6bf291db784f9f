// Package budget shares one Cloudflare API request budget per API token across
// every controller in the process. Cloudflare allows 1,200 requests per 5
// minutes per token and answers an overrun with 429 plus a five-minute block,
// so callers must both stay under the rate and all stop once a 429 arrives;
// each retrying on its own would only extend the block.
package budget

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

// Options for a token's budget.
type Options struct {
	Limit    int           // requests Cloudflare allows per Window (default 1200)
	Window   time.Duration // default 5m
	Fraction float64       // share of Limit we allow ourselves (default 0.8)
	Burst    int           // default 10
}

func (o Options) withDefaults() Options {
	if o.Limit <= 0 {
		o.Limit = 1200
	}
	if o.Window <= 0 {
		o.Window = 5 * time.Minute
	}
	// The token is shared with humans and other tools, so never claim it all.
	if o.Fraction <= 0 || o.Fraction > 1 {
		o.Fraction = 0.8
	}
	if o.Burst <= 0 {
		o.Burst = 10
	}
	return o
}

func (o Options) rate() rate.Limit {
	return rate.Limit(float64(o.Limit) * o.Fraction / o.Window.Seconds())
}

// Budget is the request budget of one token.
type Budget struct {
	lim     *rate.Limiter
	metrics *metrics
	waiting atomic.Int64 // requests in Wait
	// spentAt is when a request last found the limiter empty (unix
	// nanoseconds): requests are then queued at the budget's rate.
	spentAt atomic.Int64
	// turns orders the waiting requests by priority before the limiter.
	turns turns

	mu          sync.Mutex
	pausedUntil time.Time
	window      time.Duration // pause used when a 429 carries no usable Retry-After
	// Cloudflare's own count for the token (its Ratelimit headers), which
	// includes every other tool using it; remaining < 0 until seen. It
	// holds until the window resets: a token that goes quiet after a busy
	// spell must not read as nearly spent for ever.
	remaining, quota int
	resetAt          time.Time
}

func newBudget(o Options, m *metrics) *Budget {
	return &Budget{lim: rate.NewLimiter(o.rate(), o.Burst), metrics: m, window: o.Window, remaining: -1}
}

func (b *Budget) setOptions(o Options) {
	b.lim.SetLimit(o.rate())
	b.lim.SetBurst(o.Burst)
	b.mu.Lock()
	b.window = o.Window
	b.mu.Unlock()
}

func (b *Budget) defaultPause() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.window
}

// Wait blocks until a request may be sent: first for its turn (by the
// context's Priority, then arrival), then until any pause ends, then for a
// limiter token. The wait time is always observed, so the histogram's
// count is the number of requests and its lowest bucket shows how many did not
// have to wait at all.
func (b *Budget) Wait(ctx context.Context) error {
	start := time.Now()
	b.waiting.Add(1)
	defer func() {
		b.waiting.Add(-1)
		b.metrics.wait.Observe(time.Since(start).Seconds())
	}()
	if err := b.turns.take(ctx); err != nil {
		return err
	}
	defer b.turns.pass()
	for {
		if err := b.waitPause(ctx); err != nil {
			return err
		}
		if b.lim.Tokens() < 1 {
			b.spentAt.Store(time.Now().UnixNano())
		}
		if err := b.lim.Wait(ctx); err != nil {
			return err
		}
		// A 429 may have landed while we queued on the limiter. The token is
		// spent, but sending now would walk straight into Cloudflare's block.
		if !time.Now().Before(b.PausedUntil()) {
			return nil
		}
	}
}

func (b *Budget) waitPause(ctx context.Context) error {
	// Loop because another 429 may extend the pause while we sleep.
	for {
		d := time.Until(b.PausedUntil())
		if d <= 0 {
			return nil
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// Pause stops every caller of this budget for d. It never shortens an
// existing pause, because a late 429 with a small Retry-After must not lift
// the block an earlier one announced.
func (b *Budget) Pause(d time.Duration) {
	now := time.Now()
	until := now.Add(d)
	b.mu.Lock()
	if until.After(b.pausedUntil) {
		// Only the extension counts as penalty: a pause that overlaps the
		// current one is not served twice.
		b.metrics.pauseSeconds.Add(until.Sub(later(now, b.pausedUntil)).Seconds())
		b.pausedUntil = until
	}
	b.mu.Unlock()
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// observeCloudflare records Cloudflare's own count of what is left of the
// token's window, from a response's Ratelimit headers, seen at now.
func (b *Budget) observeCloudflare(v rateLimitView, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.remaining = v.Remaining
	if v.Quota > 0 { // a response without the policy keeps the quota known
		b.quota = v.Quota
	}
	reset := v.Reset
	if reset <= 0 {
		reset = b.window
	}
	b.resetAt = now.Add(reset)
}

// cloudflareView is Cloudflare's last count for the token, while its
// window has not reset.
func (b *Budget) cloudflareView(now time.Time) (remaining, quota int, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.remaining, b.quota, b.remaining >= 0 && now.Before(b.resetAt)
}

// SpentSince reports whether a request found the budget spent (it had to
// wait for the rate) at or after t: requests are then being sent as fast
// as the budget allows, and every request that need not be made lets one
// that must go sooner.
func (b *Budget) SpentSince(t time.Time) bool {
	return b.spentAt.Load() >= t.UnixNano()
}

// PausedUntil is when the current pause ends; in the past when not paused.
func (b *Budget) PausedUntil() time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.pausedUntil
}

// Registry hands out one Budget per token. Budgets are keyed by the token's
// SHA-256 so the secret never sits in a map that could be dumped or logged.
//
// A Registry is also the Prometheus collector of its budgets' metrics: the
// provider makes one registry at start and registers it once.
type Registry struct {
	mu      sync.Mutex
	opts    Options
	budgets map[string]*Budget
	metrics *metrics
}

// NewRegistry returns a registry whose budgets use o (defaults filled in).
// A process must spend one budget per token, whichever controller asks: the
// provider makes one registry at start and passes it to every client.
func NewRegistry(o Options) *Registry {
	return &Registry{opts: o.withDefaults(), budgets: map[string]*Budget{}, metrics: newMetrics()}
}

// For returns the budget of token, creating it on first use.
func (r *Registry) For(token string) *Budget {
	sum := sha256.Sum256([]byte(token))
	key := hex.EncodeToString(sum[:])
	r.mu.Lock()
	defer r.mu.Unlock()
	b, ok := r.budgets[key]
	if !ok {
		b = newBudget(r.opts, r.metrics)
		r.budgets[key] = b
	}
	return b
}

// SetOptions changes the options of future budgets and of existing ones, so
// flags parsed after a budget was created still take effect.
func (r *Registry) SetOptions(o Options) {
	o = o.withDefaults()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.opts = o
	for _, b := range r.budgets {
		b.setOptions(o)
	}
}
