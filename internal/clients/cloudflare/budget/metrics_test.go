package budget

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
)

func TestRateLimitHeaders(t *testing.T) {
	type want struct {
		View rateLimitView
		OK   bool
	}
	cases := map[string]struct {
		ratelimit, policy string
		want              want
	}{
		"CloudflareFormat":      {ratelimit: `"default";r=1187;t=283`, policy: `"burst";q=1200;w=300`, want: want{rateLimitView{1187, 1200, 283 * time.Second}, true}},
		"SpacesAfterSemicolons": {ratelimit: `"default"; r=5; t=3`, policy: `"burst"; q=20; w=30`, want: want{rateLimitView{5, 20, 3 * time.Second}, true}},
		"NoPolicyNoReset":       {ratelimit: `"default";r=0`, want: want{rateLimitView{}, true}},
		"NoHeader":              {policy: `"burst";q=1200;w=300`, want: want{}},
		// t= or w= must not be read as the remaining count.
		"NoRemaining": {ratelimit: `"default";t=300`, want: want{}},
		"Garbage":     {ratelimit: `r=lots`, want: want{}},
		// Found by FuzzRateLimitHeaders: a number followed by junk is no number.
		"TrailingJunk": {ratelimit: `"default";r=5A;t=3`, want: want{}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := http.Header{}
			if tc.ratelimit != "" {
				h.Set("Ratelimit", tc.ratelimit)
			}
			if tc.policy != "" {
				h.Set("Ratelimit-Policy", tc.policy)
			}
			var got want
			got.View, got.OK = rateLimitHeaders(h)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("rateLimitHeaders(-want +got):\n%s", diff)
			}
		})
	}
}

// TestCloudflareViewHoldsUntilItsWindowResets: a token that went quiet after
// a busy spell must not read as nearly spent for ever; a response without
// the policy header keeps the quota known.
func TestCloudflareViewHoldsUntilItsWindowResets(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	r := NewRegistry(Options{Window: 5 * time.Minute})
	busy, quiet := r.For("busy"), r.For("quiet")
	quiet.observeCloudflare(rateLimitView{Remaining: 3, Quota: 1200, Reset: 30 * time.Second}, now)
	busy.observeCloudflare(rateLimitView{Remaining: 900, Quota: 1200, Reset: 200 * time.Second}, now)
	busy.observeCloudflare(rateLimitView{Remaining: 899}, now.Add(time.Second)) // no policy, no reset: the window's length

	for _, c := range []struct {
		at                   time.Duration
		remaining, wantQuota int
	}{
		{at: 10 * time.Second, remaining: 3, wantQuota: 1200},            // the quiet token is the one nearest to running out
		{at: time.Minute, remaining: 899, wantQuota: 1200},               // its window reset: the busy one's count is what is known
		{at: 5*time.Minute + 2*time.Second, remaining: -1, wantQuota: 0}, // every window reset: nothing is known
	} {
		s := r.snapshot(now.Add(c.at))
		if s.remaining != c.remaining || (c.remaining >= 0 && s.quota != c.wantQuota) {
			t.Errorf("at +%v: remaining %d quota %d, want %d of %d", c.at, s.remaining, s.quota, c.remaining, c.wantQuota)
		}
	}
}

// gathered scrapes one registry of budgets as Prometheus would.
func gathered(t *testing.T, r *Registry) map[string][]*dto.Metric {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(r); err != nil {
		t.Fatal(err)
	}
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]*dto.Metric{}
	for _, f := range fams {
		out[f.GetName()] = f.GetMetric()
	}
	return out
}

func TestRegistryMetrics(t *testing.T) {
	const tokA, tokB = "secret-token-A-metrics", "secret-token-B-metrics"
	var remaining atomic.Int64
	remaining.Store(1200)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		left := remaining.Add(-1)
		if r.Header.Get("Authorization") == "Bearer "+tokB {
			left -= 500 // another tool spends the second token
		}
		w.Header().Set("Ratelimit", `"default";r=`+itoa(left)+`;t=300`)
		w.Header().Set("Ratelimit-Policy", `"burst";q=1200;w=300`)
		if r.URL.Path == "/limited" {
			w.Header().Set("Retry-After", "0.2") // raised to the 1s floor
			w.WriteHeader(http.StatusTooManyRequests)
		}
	}))
	defer srv.Close()
	r := NewRegistry(Options{Limit: 1200, Window: 5 * time.Minute, Fraction: 0.5, Burst: 4})

	if m := gathered(t, r); len(m["cloudflare_rate_limit_remaining_requests"]) != 0 || len(m["cloudflare_budget_available_requests"]) != 0 {
		t.Errorf("before any request: remaining %v, available %v; want neither reported", m["cloudflare_rate_limit_remaining_requests"], m["cloudflare_budget_available_requests"])
	}
	send := func(token, path string) {
		t.Helper()
		c := &http.Client{Transport: &Transport{Next: srv.Client().Transport, Budget: r.For(token)}}
		req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
	}
	send(tokA, "/accounts/0123456789abcdef0123456789abcdef/cfd_tunnel")
	send(tokA, "/accounts/0123456789abcdef0123456789abcdef/cfd_tunnel")
	send(tokB, "/limited")

	m := gathered(t, r)
	gauge := func(name string) float64 {
		t.Helper()
		if len(m[name]) != 1 {
			t.Fatalf("%s: %d series, want 1", name, len(m[name]))
		}
		return m[name][0].GetGauge().GetValue()
	}
	counter := func(name string) float64 {
		t.Helper()
		var sum float64
		for _, s := range m[name] {
			sum += s.GetCounter().GetValue()
		}
		return sum
	}
	for name, want := range map[string]float64{
		"cloudflare_api_tokens":                         2,
		"cloudflare_budget_paused":                      1,
		"cloudflare_budget_waiting_requests":            0,
		"cloudflare_budget_allowed_requests_per_second": 2, // 1200 × 0.5 / 300 s
		// Cloudflare's view of the token nearest to running out: the second,
		// which another tool also spends.
		"cloudflare_rate_limit_remaining_requests": 1200 - 3 - 500,
		"cloudflare_rate_limit_quota_requests":     1200,
	} {
		if got := gauge(name); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	// Token A spent two of its four at once; B one (and is paused).
	if got := gauge("cloudflare_budget_available_requests"); got < 1.9 || got > 2.1 {
		t.Errorf("cloudflare_budget_available_requests = %v, want about 2 (token A's bucket of 4, less 2)", got)
	}
	if got := counter("cloudflare_requests_total"); got != 3 {
		t.Errorf("cloudflare_requests_total = %v, want 3", got)
	}
	if got := counter("cloudflare_rate_limited_total"); got != 1 {
		t.Errorf("cloudflare_rate_limited_total = %v, want 1", got)
	}
	if got := counter("cloudflare_rate_limit_pause_seconds_total"); got < 0.99 || got > 1.01 {
		t.Errorf("cloudflare_rate_limit_pause_seconds_total = %v, want 1 (the minimum pause)", got)
	}
	// A second 429 inside the first pause counts only its extension.
	r.For(tokB).Pause(500 * time.Millisecond)
	if got := counter("cloudflare_rate_limit_pause_seconds_total"); got > 1.01 {
		t.Errorf("an overlapping pause added to the penalty: %v", got)
	}
	for _, s := range m["cloudflare_requests_total"] {
		for _, l := range s.GetLabel() {
			if l.GetName() == "operation" && l.GetValue() != "GET /accounts/{id}/cfd_tunnel" && l.GetValue() != "GET /limited" {
				t.Errorf("operation label %q, want IDs elided", l.GetValue())
			}
		}
	}
}

// TestMetricsFollowPrometheusConventions lints the budget's metrics the way
// promtool does (units in names, _total on counters, help text) and checks
// that no token reaches the exposition.
func TestMetricsFollowPrometheusConventions(t *testing.T) {
	const token = "secret-token-lint"
	r := NewRegistry(Options{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Ratelimit", `"default";r=10;t=300`)
	}))
	defer srv.Close()
	c := &http.Client{Transport: &Transport{Next: srv.Client().Transport, Budget: r.For(token)}}
	resp, err := c.Get(srv.URL + "/zones")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	problems, err := testutil.CollectAndLint(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(r)
	if n, err := testutil.GatherAndCount(reg); err != nil || n < 10 {
		t.Errorf("gathered %d series (%v), want every metric", n, err)
	}
	var text strings.Builder
	// Gather returns what it could with an error; a partial gather could
	// hide the token, so it fails the test.
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		text.WriteString(f.String())
	}
	if strings.Contains(text.String(), token) {
		t.Error("the token appears in the metrics")
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
