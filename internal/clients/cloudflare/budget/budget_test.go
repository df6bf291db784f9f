package budget

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
)

// arrivals records when requests reach a test server.
type arrivals struct {
	mu sync.Mutex
	ts []time.Time
}

func (a *arrivals) add() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.ts = append(a.ts, time.Now())
	return len(a.ts)
}

func (a *arrivals) times() []time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]time.Time(nil), a.ts...)
}

func get(ctx context.Context, c *http.Client, url string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	_ = resp.Body.Close()
	return resp.StatusCode, nil
}

func counterValue(t *testing.T, c interface{ Write(*dto.Metric) error }) float64 {
	t.Helper()
	m := &dto.Metric{}
	if err := c.Write(m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

func TestSharedBudgetRate(t *testing.T) {
	o := Options{Limit: 60, Window: time.Second, Fraction: 0.8, Burst: 5}
	b := NewRegistry(o).For("token")
	var got arrivals
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { got.add() }))
	defer srv.Close()
	c := &http.Client{Transport: &Transport{Next: srv.Client().Transport, Budget: b}}

	const run = 1500 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), run)
	defer cancel()
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			for ctx.Err() == nil {
				if _, err := get(ctx, c, srv.URL+"/accounts/x"); err != nil {
					return
				}
			}
		})
	}
	wg.Wait()

	ts := got.times()
	sort.Slice(ts, func(i, j int) bool { return ts[i].Before(ts[j]) })
	// Arrival times at the server carry scheduling jitter, which can squeeze
	// one more request into a window than the limiter's own clock allows;
	// the slack keeps us well under Cloudflare's real limit (o.Limit).
	allowed := int(float64(o.Limit)*o.Fraction) + o.Burst + 2
	peak := 0
	for i := range ts {
		n := sort.Search(len(ts), func(j int) bool { return !ts[j].Before(ts[i].Add(o.Window)) }) - i
		if n > allowed {
			t.Fatalf("%d requests in the 1s window from arrival %d; budget allows %d", n, i, allowed)
		}
		peak = max(peak, n)
	}
	t.Logf("%d requests in %v, peak %d per 1s window (allowed %d)", len(ts), run, peak, allowed)
	// Lower bound is loose: a loaded machine may lose time, but not most of it.
	if want := int(0.6 * float64(o.Limit) * o.Fraction * run.Seconds()); len(ts) < want {
		t.Errorf("only %d requests in %v; want at least %d (starved)", len(ts), run, want)
	}
}

func TestRateLimitedPausesAllCallers(t *testing.T) {
	b := NewRegistry(Options{Limit: 1000, Window: time.Second}).For("token")
	var got arrivals
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if got.add() == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
		}
	}))
	defer srv.Close()
	c := &http.Client{Transport: &Transport{Next: srv.Client().Transport, Budget: b}}
	limited := counterValue(t, b.metrics.rateLimited)
	ctx := context.Background()

	if code, err := get(ctx, c, srv.URL+"/x"); err != nil || code != http.StatusTooManyRequests {
		t.Fatalf("first request: got %d, %v; want 429 returned to the caller", code, err)
	}
	const callers, each = 10, 3
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			for range each {
				if code, err := get(ctx, c, srv.URL+"/x"); err != nil || code != http.StatusOK {
					t.Errorf("got %d, %v; want 200", code, err)
				}
			}
		})
	}
	wg.Wait()

	all := got.times()
	first, ts := all[0], all[1:]
	if len(ts) != callers*each {
		t.Fatalf("server saw %d requests after the 429; want %d", len(ts), callers*each)
	}
	for _, at := range ts {
		// Strict: the pause starts when the client reads the 429, after the
		// server sent it, so nothing may arrive within a second of it.
		if d := at.Sub(first); d < time.Second {
			t.Errorf("request arrived %v after the 429; want >= 1s", d)
		}
	}
	if d := ts[0].Sub(first); d > 3*time.Second {
		t.Errorf("requests resumed only %v after the 429", d)
	}
	if d := counterValue(t, b.metrics.rateLimited) - limited; d != 1 {
		t.Errorf("cloudflare_rate_limited_total rose by %v; want 1", d)
	}
}

func TestRegistry(t *testing.T) {
	const tokA, tokB = "secret-token-A-123", "secret-token-B-456"
	r := NewRegistry(Options{})
	if r.For(tokA) != r.For(tokA) {
		t.Error("same token gave different budgets")
	}
	if r.For(tokA) == r.For(tokB) {
		t.Error("different tokens share a budget")
	}
	dump := fmt.Sprintf("%#v", r)
	sum := sha256.Sum256([]byte(tokA))
	if strings.Contains(dump, tokA) || strings.Contains(dump, tokB) || !strings.Contains(dump, hex.EncodeToString(sum[:])) {
		t.Errorf("registry should be keyed by sha256, not the token: %s", dump)
	}

	b := r.For(tokA)
	r.SetOptions(Options{Limit: 100, Window: 10 * time.Second, Fraction: 0.5, Burst: 3})
	if got, want := [2]float64{float64(b.lim.Limit()), float64(b.lim.Burst())}, [2]float64{5, 3}; got != want {
		t.Errorf("existing budget after SetOptions: rate, burst = %v; want %v", got, want)
	}
	if got := r.For("new").lim.Burst(); got != 3 {
		t.Errorf("new budget burst = %d; want 3", got)
	}
}

func TestOperationName(t *testing.T) {
	cases := map[string]struct{ method, url, want string }{
		"account tunnel": {"GET", "https://api.cloudflare.com/client/v4/accounts/0123456789abcdef0123456789abcdef/cfd_tunnel/f70ff985-a4ef-4643-bbbc-4a0ed4fc8415", "GET /accounts/{id}/cfd_tunnel/{id}"},
		"query ignored":  {"GET", "https://api.cloudflare.com/client/v4/accounts/0123456789ABCDEF0123456789ABCDEF/cfd_tunnel?name=x", "GET /accounts/{id}/cfd_tunnel"},
		"no prefix":      {"PUT", "http://127.0.0.1:1/zones/0123456789abcdef0123456789abcdef/dns_records/fedcba9876543210fedcba9876543210", "PUT /zones/{id}/dns_records/{id}"},
		"names kept":     {"DELETE", "http://h/client/v4/accounts/abc/teamnet/virtual_networks", "DELETE /accounts/abc/teamnet/virtual_networks"},
		"not quite hex":  {"GET", "http://h/accounts/0123456789abcdef0123456789abcdeg", "GET /accounts/0123456789abcdef0123456789abcdeg"},
		"root":           {"GET", "http://h/client/v4", "GET /"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, tc.url, nil)
			if diff := cmp.Diff(tc.want, OperationName(req)); diff != "" {
				t.Errorf("-want +got:\n%s", diff)
			}
		})
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	const def = 5 * time.Minute
	cases := map[string]struct {
		header string
		want   time.Duration
	}{
		"integer":      {"30", 30 * time.Second},
		"float":        {"2.5", 2500 * time.Millisecond},
		"spaces":       {" 7 ", 7 * time.Second},
		"http date":    {now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		"past date":    {now.Add(-time.Hour).Format(http.TimeFormat), minPause},
		"zero":         {"0", minPause},
		"missing":      {"", def},
		"garbage":      {"soon", def},
		"negative":     {"-5", def},
		"sub-second":   {"0.2", minPause},
		"five minutes": {"300", 5 * time.Minute},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := retryAfter(tc.header, now, def); got != tc.want {
				t.Errorf("retryAfter(%q) = %v; want %v", tc.header, got, tc.want)
			}
		})
	}
}

func TestWaitWhilePaused(t *testing.T) {
	t.Run("context cancelled", func(t *testing.T) {
		b := NewRegistry(Options{}).For("t")
		b.Pause(time.Hour)
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		start := time.Now()
		if err := b.Wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Wait = %v; want context.DeadlineExceeded", err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("Wait took %v to notice cancellation", d)
		}
	})
	t.Run("pause never shortens", func(t *testing.T) {
		b := NewRegistry(Options{}).For("t")
		b.Pause(time.Hour)
		b.Pause(time.Second)
		if d := time.Until(b.PausedUntil()); d < 59*time.Minute {
			t.Errorf("pause shortened to %v", d)
		}
	})
	t.Run("pause while queued on limiter", func(t *testing.T) {
		// One token per 500ms with the only token spent: the waiter queues on
		// the limiter, and a 429 landing meanwhile must still hold it back.
		b := NewRegistry(Options{Limit: 1, Window: 500 * time.Millisecond, Fraction: 1, Burst: 1}).For("t")
		if err := b.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		done := make(chan time.Time)
		go func() {
			_ = b.Wait(context.Background())
			done <- time.Now()
		}()
		b.Pause(time.Second)
		paused := b.PausedUntil()
		if at := <-done; at.Before(paused) {
			t.Errorf("Wait returned %v before the pause ended", paused.Sub(at))
		}
	})
}

// TestAggregateRequestsGoFirst: a request serving many objects (a DNS batch,
// a tunnel configuration) overtakes the queue of single-object requests
// waiting for the budget, and requests of one priority keep their order.
func TestAggregateRequestsGoFirst(t *testing.T) {
	// 20 requests a second, no burst beyond one.
	b := NewRegistry(Options{Limit: 20, Window: time.Second, Fraction: 1, Burst: 1}).For("token")
	ctx := context.Background()
	// A request holds the turn (as one waiting for the limiter does): the
	// others queue behind it.
	if err := b.turns.take(ctx); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var order []string
	var wg sync.WaitGroup
	queued := 0
	send := func(name string, p Priority) {
		wg.Go(func() {
			if err := b.Wait(WithPriority(ctx, p)); err != nil {
				t.Error(err)
			}
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
		})
		queued++ // arrive in this order
		waitQueued(t, b, name, func(w waiters) bool { return len(w) == queued })
	}
	for _, n := range []string{"single-1", "single-2", "single-3"} {
		send(n, Normal)
	}
	send("batch", Aggregate)
	send("single-4", Normal)
	gaveUp, cancel := context.WithCancel(ctx)
	wg.Go(func() {
		if err := b.Wait(WithPriority(gaveUp, Aggregate)); err == nil {
			t.Error("a waiter whose context ended got the budget")
		}
	})
	waitQueued(t, b, "the waiter that gives up", func(w waiters) bool { return len(w) == 6 })
	cancel()
	waitQueued(t, b, "the waiter that gave up gone", func(w waiters) bool { return len(w) == 5 })
	b.turns.pass()
	wg.Wait()
	want := []string{"batch", "single-1", "single-2", "single-3", "single-4"}
	if diff := cmp.Diff(want, order); diff != "" {
		t.Errorf("order served (-want +got):\n%s", diff)
	}
}

// waitQueued waits until the budget's queue of waiters is as queued says.
func waitQueued(t *testing.T, b *Budget, what string, queued func(waiters) bool) {
	t.Helper()
	wait.Eventually(t, 5*time.Second, what+" queued", func() error {
		b.turns.mu.Lock()
		defer b.turns.mu.Unlock()
		if !queued(b.turns.waiting) {
			return fmt.Errorf("%d waiting", len(b.turns.waiting))
		}
		return nil
	})
}

// TestTimeoutStartsWhenTheBudgetLetsGo: a request's timeout counts from the
// moment the budget lets it go, so queueing behind a large change does not
// fail it, while a slow answer still does.
func TestTimeoutStartsWhenTheBudgetLetsGo(t *testing.T) {
	// The handler runs on the server's goroutine while the test reads the
	// count, so it is atomic (go test -race caught the plain int).
	var slow atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			slow.Add(1)
			time.Sleep(300 * time.Millisecond) // a slow answer, past the 150 ms timeout
		}
		_, _ = w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	// 4 requests a second, burst 1: the third request queues ~500ms.
	b := NewRegistry(Options{Limit: 4, Window: time.Second, Fraction: 1, Burst: 1}).For("token")
	hc := &http.Client{Transport: &Transport{Budget: b, Timeout: 150 * time.Millisecond}}
	for i := range 3 {
		res, err := hc.Get(srv.URL + "/fast")
		if err != nil {
			t.Fatalf("request %d, queued for the budget longer than its timeout: %v", i, err)
		}
		_ = res.Body.Close()
	}
	if _, err := hc.Get(srv.URL + "/slow"); err == nil || slow.Load() != 1 {
		t.Errorf("an answer slower than the timeout: err %v, want a timeout", err)
	}
}

// A budget is spent from the moment a request finds its limiter empty:
// requests are then queued at its rate. A request with a token to spare
// does not count.
func TestSpentSince(t *testing.T) {
	b := NewRegistry(Options{Limit: 100000, Burst: 2}).For("token")
	start := time.Now()
	ctx := context.Background()
	for range 2 {
		if err := b.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if b.SpentSince(start) {
		t.Fatal("two requests within a burst of two: spent, want not")
	}
	if err := b.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if !b.SpentSince(start) {
		t.Error("a third request waited for the rate: not spent, want spent")
	}
	if b.SpentSince(time.Now()) {
		t.Error("spent after the last request, want not")
	}
}
