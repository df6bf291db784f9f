package budget

import (
	"math"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are one Registry's Prometheus metrics. Labels carry only the
// operation and outcome, never a token or anything derived from one: the
// gauges report the token nearest to running out instead.
type metrics struct {
	requests     *prometheus.CounterVec
	rateLimited  prometheus.Counter
	pauseSeconds prometheus.Counter
	wait         prometheus.Histogram
}

func newMetrics() *metrics {
	return &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cloudflare_requests_total",
			Help: "Cloudflare API requests sent, by operation (method and path, IDs elided) and outcome (success, client_error, server_error, rate_limited, transport_error).",
		}, []string{"operation", "outcome"}),
		rateLimited: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "cloudflare_rate_limited_total",
			Help: "HTTP 429 responses received from the Cloudflare API.",
		}),
		pauseSeconds: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "cloudflare_rate_limit_pause_seconds_total",
			Help: "Seconds every request of an API token was held back after Cloudflare answered 429 (the penalty).",
		}),
		wait: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "cloudflare_budget_wait_seconds",
			Help:    "Time each request spent waiting for its API token's request budget, including zero waits.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 10), // 1ms .. ~4.4m, to cover a 5m pause
		}),
	}
}

// The gauges are computed when scraped, from the budgets themselves.
var (
	descTokens = prometheus.NewDesc("cloudflare_api_tokens",
		"API tokens the provider has sent requests with (each has its own budget).", nil, nil)
	descPaused = prometheus.NewDesc("cloudflare_budget_paused",
		"API tokens whose requests are paused after a 429.", nil, nil)
	descAvailable = prometheus.NewDesc("cloudflare_budget_available_requests",
		"Requests the provider may send at once before it has to wait, for the API token with the fewest (the budget's token bucket).", nil, nil)
	descWaiting = prometheus.NewDesc("cloudflare_budget_waiting_requests",
		"Requests waiting for their API token's budget right now.", nil, nil)
	descAllowedRate = prometheus.NewDesc("cloudflare_budget_allowed_requests_per_second",
		"The pace the provider allows itself per API token: --cloudflare-rate-limit × --cloudflare-budget-fraction / --cloudflare-rate-window.", nil, nil)
	descRemaining = prometheus.NewDesc("cloudflare_rate_limit_remaining_requests",
		"Requests Cloudflare says are left in the current rate-limit window (its Ratelimit header, counting every tool that uses the token), for the API token with the fewest; a reading holds until its window resets.", nil, nil)
	descQuota = prometheus.NewDesc("cloudflare_rate_limit_quota_requests",
		"The rate-limit window's quota Cloudflare announces (its Ratelimit-Policy header), for the same API token.", nil, nil)
)

// Describe implements prometheus.Collector.
func (r *Registry) Describe(ch chan<- *prometheus.Desc) {
	r.metrics.requests.Describe(ch)
	r.metrics.rateLimited.Describe(ch)
	r.metrics.pauseSeconds.Describe(ch)
	r.metrics.wait.Describe(ch)
	for _, d := range []*prometheus.Desc{descTokens, descPaused, descAvailable, descWaiting, descAllowedRate, descRemaining, descQuota} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (r *Registry) Collect(ch chan<- prometheus.Metric) {
	r.metrics.requests.Collect(ch)
	r.metrics.rateLimited.Collect(ch)
	r.metrics.pauseSeconds.Collect(ch)
	r.metrics.wait.Collect(ch)

	s := r.snapshot(time.Now())
	gauge := func(d *prometheus.Desc, v float64) { ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v) }
	gauge(descTokens, float64(s.tokens))
	gauge(descPaused, float64(s.paused))
	gauge(descWaiting, float64(s.waiting))
	gauge(descAllowedRate, s.allowedRate)
	if s.tokens > 0 {
		gauge(descAvailable, s.available)
	}
	if s.remaining >= 0 {
		gauge(descRemaining, float64(s.remaining))
	}
	if s.quota > 0 {
		gauge(descQuota, float64(s.quota))
	}
}

// registrySnapshot is what the gauges report at one moment.
type registrySnapshot struct {
	tokens, paused, waiting int
	allowedRate             float64
	available               float64 // of the token with the fewest
	remaining, quota        int     // Cloudflare's view; remaining < 0 until a response said
}

func (r *Registry) snapshot(now time.Time) registrySnapshot {
	r.mu.Lock()
	budgets := make([]*Budget, 0, len(r.budgets))
	for _, b := range r.budgets {
		budgets = append(budgets, b)
	}
	s := registrySnapshot{tokens: len(budgets), allowedRate: float64(r.opts.rate()), available: math.Inf(1), remaining: -1}
	r.mu.Unlock()
	for _, b := range budgets {
		if now.Before(b.PausedUntil()) {
			s.paused++
		}
		s.waiting += int(b.waiting.Load())
		s.available = min(s.available, max(b.lim.TokensAt(now), 0))
		if rem, quota, ok := b.cloudflareView(now); ok && (s.remaining < 0 || rem < s.remaining) {
			s.remaining, s.quota = rem, quota
		}
	}
	return s
}
