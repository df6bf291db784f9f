package budget

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Metric labels carry only the operation and outcome, never the token.
var (
	requestsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "cloudflare_requests_total",
		Help: "Cloudflare API requests by operation and outcome.",
	}, []string{"operation", "outcome"})
	rateLimitedTotal = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "cloudflare_rate_limited_total",
		Help: "HTTP 429 responses received from the Cloudflare API.",
	})
	waitSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "cloudflare_budget_wait_seconds",
		Help:    "Time each request spent waiting for the token's request budget, including zero waits.",
		Buckets: prometheus.ExponentialBuckets(0.001, 4, 10), // 1ms .. ~4.4m, to cover a 5m pause
	})
	pausedBudgets = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "cloudflare_budget_paused",
		Help: "Number of API tokens whose requests are paused after a 429.",
	}, func() float64 { return float64(registries.paused()) })
)

func init() {
	metrics.Registry.MustRegister(requestsTotal, rateLimitedTotal, waitSeconds, pausedBudgets)
}

// Transport is an http.RoundTripper that spends a Budget on every request and
// pauses the whole budget when Cloudflare answers 429. The 429 response is
// still returned, so the caller's error handling sees it.
type Transport struct {
	Next      http.RoundTripper          // http.DefaultTransport if nil
	Budget    *Budget                    // required
	Operation func(*http.Request) string // metrics label; OperationName if nil
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := t.Budget.Wait(req.Context()); err != nil {
		// RoundTrippers must close the body even when they fail early.
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, err
	}
	next := t.Next
	if next == nil {
		next = http.DefaultTransport
	}
	opName := t.Operation
	if opName == nil {
		opName = OperationName
	}
	op := opName(req)

	resp, err := next.RoundTrip(req)
	if err != nil {
		requestsTotal.WithLabelValues(op, "transport_error").Inc()
		return nil, err
	}
	requestsTotal.WithLabelValues(op, outcome(resp.StatusCode)).Inc()
	if resp.StatusCode == http.StatusTooManyRequests {
		rateLimitedTotal.Inc()
		t.Budget.Pause(retryAfter(resp.Header.Get("Retry-After"), time.Now(), t.Budget.defaultPause()))
	}
	return resp, nil
}

func outcome(code int) string {
	switch {
	case code == http.StatusTooManyRequests:
		return "rate_limited"
	case code >= 200 && code < 300:
		return "success"
	case code >= 400 && code < 500:
		return "client_error"
	case code >= 500:
		return "server_error"
	default:
		return "other"
	}
}

// minPause is the shortest pause after a 429: a zero, past or sub-second
// Retry-After (or clock skew on an HTTP-date) must not let callers hammer on.
const minPause = time.Second

// retryAfter parses Retry-After as seconds (integer or fractional) or an
// HTTP-date relative to now. Absent or unparsable values fall back to def,
// the budget window, since Cloudflare's block lasts that long.
func retryAfter(v string, now time.Time, def time.Duration) time.Duration {
	v = strings.TrimSpace(v)
	d := def
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		d = time.Duration(s * float64(time.Second))
	} else if at, err := http.ParseTime(v); err == nil {
		d = at.Sub(now)
	}
	return max(d, minPause)
}

// idSegment matches Cloudflare's 32-hex IDs (accounts, zones, records) and
// UUIDs (tunnels, virtual networks, routes), which would explode label
// cardinality.
var idSegment = regexp.MustCompile(`^(?i:[0-9a-f]{32}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$`)

// OperationName derives a low-cardinality operation label such as
// "GET /accounts/{id}/cfd_tunnel/{id}" from a Cloudflare API request.
func OperationName(r *http.Request) string {
	p := strings.TrimPrefix(r.URL.Path, "/client/v4")
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if idSegment.MatchString(s) {
			segs[i] = "{id}"
		}
	}
	p = strings.Join(segs, "/")
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return r.Method + " " + p
}
