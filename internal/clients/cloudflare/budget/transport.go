package budget

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Transport is an http.RoundTripper that spends a Budget on every request and
// pauses the whole budget when Cloudflare answers 429. The 429 response is
// still returned, so the caller's error handling sees it.
type Transport struct {
	Next      http.RoundTripper          // http.DefaultTransport if nil
	Budget    *Budget                    // required
	Operation func(*http.Request) string // metrics label; OperationName if nil
	// Timeout bounds one request once the budget let it go, response
	// body included; 0 means none. It is not an http.Client timeout on
	// purpose: that would count the time queued for the budget, and a
	// large change queues for longer than any one request should take.
	Timeout time.Duration
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	markQueued(req.Context())
	if err := t.Budget.Wait(req.Context()); err != nil {
		// RoundTrippers must close the body even when they fail early.
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, err
	}
	markSent(req.Context())
	next := t.Next
	if next == nil {
		next = http.DefaultTransport
	}
	opName := t.Operation
	if opName == nil {
		opName = OperationName
	}
	op := opName(req)

	cancel := context.CancelFunc(func() {})
	if t.Timeout > 0 {
		var ctx context.Context
		ctx, cancel = context.WithTimeout(req.Context(), t.Timeout)
		req = req.WithContext(ctx)
	}
	resp, err := next.RoundTrip(req)
	if err != nil {
		cancel()
		t.Budget.metrics.requests.WithLabelValues(op, "transport_error").Inc()
		return nil, err
	}
	t.Budget.metrics.requests.WithLabelValues(op, outcome(resp.StatusCode)).Inc()
	if v, ok := rateLimitHeaders(resp.Header); ok {
		t.Budget.observeCloudflare(v, time.Now())
	}
	if resp.StatusCode == http.StatusTooManyRequests {
		t.Budget.metrics.rateLimited.Inc()
		t.Budget.Pause(retryAfter(resp.Header.Get("Retry-After"), time.Now(), t.Budget.defaultPause()))
	}
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// cancelOnClose ends a request's timeout once its body is read and closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
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

// rateLimitView is what Cloudflare says of a token's current rate-limit
// window: the requests left, the window's quota (0 when not said) and the
// time until it resets (0 when not said).
type rateLimitView struct {
	Remaining, Quota int
	Reset            time.Duration
}

// rateLimitHeaders reads Cloudflare's rate-limit headers (the IETF
// RateLimit fields draft), `Ratelimit: "default";r=<remaining>;t=<reset>`
// and `Ratelimit-Policy: "burst";q=<quota>;w=<window>`, when the response
// has them.
func rateLimitHeaders(h http.Header) (rateLimitView, bool) {
	remaining, ok := param(h.Get("Ratelimit"), "r")
	if !ok {
		return rateLimitView{}, false
	}
	v := rateLimitView{Remaining: remaining}
	v.Quota, _ = param(h.Get("Ratelimit-Policy"), "q")
	if reset, ok := param(h.Get("Ratelimit"), "t"); ok {
		// A day at most: Cloudflare's windows are minutes, and a larger
		// number would overflow the duration.
		v.Reset = time.Duration(min(reset, 86400)) * time.Second
	}
	return v, true
}

// param reads the non-negative integer parameter key of a ;-separated
// structured field; anything but digits is no value.
func param(field, key string) (int, bool) {
	for _, p := range strings.Split(field, ";") {
		v, found := strings.CutPrefix(strings.TrimSpace(p), key+"=")
		if !found || v == "" || strings.Trim(v, "0123456789") != "" {
			continue
		}
		if n, err := strconv.Atoi(v); err == nil {
			return n, true
		}
	}
	return 0, false
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
