package cloudflare

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare/budget"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim"
)

// arrivals records when requests reach the simulator and what it answered.
type arrivals struct {
	mu    sync.Mutex
	times []time.Time
	codes []int
}

type codeRecorder struct {
	http.ResponseWriter
	code int
}

func (c *codeRecorder) WriteHeader(code int) { c.code = code; c.ResponseWriter.WriteHeader(code) }

func (a *arrivals) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		at := time.Now()
		rec := &codeRecorder{ResponseWriter: w, code: http.StatusOK}
		h.ServeHTTP(rec, r)
		a.mu.Lock()
		a.times = append(a.times, at)
		a.codes = append(a.codes, rec.code)
		a.mu.Unlock()
	})
}

func (a *arrivals) snapshot() ([]time.Time, []int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]time.Time{}, a.times...), append([]int{}, a.codes...)
}

// hammer runs workers that call the API through clients sharing one token
// (each worker its own client, as separate controllers would) until the
// deadline.
func hammer(t *testing.T, url string, reg *budget.Registry, workers int, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var wg sync.WaitGroup
	for range workers {
		c := New(clients.Config{Token: testToken, AccountID: testAccount, Endpoint: url + "/client/v4/"}, Options{Budgets: reg})
		wg.Go(func() {
			for ctx.Err() == nil {
				_, err := c.ListZones(ctx, "example.com")
				// The budget refuses to start a wait that would outlast the
				// caller's deadline; near the end of the run that is expected.
				endOfRun := errors.Is(err, context.DeadlineExceeded) || strings.Contains(fmt.Sprint(err), "would exceed context deadline")
				if err != nil && !IsRateLimited(err) && !endOfRun && ctx.Err() == nil {
					t.Errorf("ListZones: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestSharedBudgetStaysUnderTheRateLimit(t *testing.T) {
	// Cloudflare's limit scaled down: 40 requests per 2s. Our budget is 80%
	// of it with a burst of 3.
	const limit, window = 40, 2 * time.Second
	s := sim.New(sim.Options{Token: testToken, AccountID: testAccount, Zones: []string{"example.com"}, RateLimit: limit, RateWindow: window})
	var a arrivals
	srv := httptest.NewServer(a.wrap(s))
	t.Cleanup(srv.Close)
	reg := budget.NewRegistry(budget.Options{Limit: limit, Window: window, Fraction: 0.8, Burst: 3})

	hammer(t, srv.URL, reg, 12, 3*time.Second)

	times, codes := a.snapshot()
	for _, c := range codes {
		if c == http.StatusTooManyRequests {
			t.Fatalf("the simulator answered 429: the shared budget let the token exceed the limit")
		}
	}
	sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
	allowed := int(0.8*limit) + 3 + 2 // budget + burst + scheduling jitter
	peak := 0
	for i := range times {
		n := sort.Search(len(times), func(j int) bool { return !times[j].Before(times[i].Add(window)) }) - i
		peak = max(peak, n)
	}
	t.Logf("%d requests from 12 workers in 3s; peak %d per %s window (budget %d, limit %d)", len(times), peak, window, allowed, limit)
	if peak > allowed {
		t.Errorf("peak %d requests per window exceeds the budget %d", peak, allowed)
	}
	if len(times) < 20 {
		t.Errorf("only %d requests in 3s: the budget starved its callers", len(times))
	}
}

func TestRateLimitResponsePausesEveryCaller(t *testing.T) {
	// The simulator allows 15 requests per minute and then blocks for 1s;
	// our budget is (wrongly) far more generous, so the workers run into
	// the limit and the 429's retry-after must hold all of them back.
	const penalty = time.Second
	s := sim.New(sim.Options{Token: testToken, AccountID: testAccount, Zones: []string{"example.com"}, RateLimit: 15, RateWindow: time.Minute, RatePenalty: penalty})
	var a arrivals
	srv := httptest.NewServer(a.wrap(s))
	t.Cleanup(srv.Close)
	reg := budget.NewRegistry(budget.Options{Limit: 100000, Window: time.Minute, Burst: 100})

	hammer(t, srv.URL, reg, 8, 2500*time.Millisecond)

	times, codes := a.snapshot()
	// Group the 429s into rounds: each time the limit is hit, the requests
	// already in flight may also get a 429, then nothing may reach
	// Cloudflare until retry-after has passed.
	var rounds []time.Time
	perRound := map[int]int{}
	for i, c := range codes {
		if c != http.StatusTooManyRequests {
			continue
		}
		if len(rounds) == 0 || times[i].Sub(rounds[len(rounds)-1]) > 200*time.Millisecond {
			rounds = append(rounds, times[i])
		}
		perRound[len(rounds)-1]++
	}
	if len(rounds) == 0 {
		t.Fatal("the workers never hit the simulator's rate limit")
	}
	for r, t429 := range rounds {
		quietFrom, quietTo := t429.Add(100*time.Millisecond), t429.Add(penalty-50*time.Millisecond)
		during, after := 0, 0
		for _, at := range times {
			if at.After(quietFrom) && at.Before(quietTo) {
				during++
			}
			if at.After(t429.Add(penalty)) {
				after++
			}
		}
		t.Logf("round %d: %d answered 429, %d requests inside the penalty, %d after it", r, perRound[r], during, after)
		if during != 0 {
			t.Errorf("round %d: %d requests reached Cloudflare during the retry-after pause", r, during)
		}
		if perRound[r] > 8 {
			t.Errorf("round %d: %d requests answered 429; at most one per worker (8) can be in flight", r, perRound[r])
		}
		if r == 0 && after == 0 {
			t.Error("no requests resumed after the pause")
		}
	}
}
