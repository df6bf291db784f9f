package budget

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// FuzzRateLimitHeaders: whatever Cloudflare (or a proxy in front of it)
// sends in the Ratelimit headers, reading them never panics, never yields a
// negative count, and a count is read only from an r= parameter that is all
// digits.
func FuzzRateLimitHeaders(f *testing.F) {
	f.Add(`"default";r=1187;t=283`, `"burst";q=1200;w=300`)
	f.Add(`"default"; r=0; t=300`, ``)
	f.Add(`r=99999999999999999999999`, `q=-1`)
	f.Add(`t=5;r=`, `q=;r=3`)
	f.Fuzz(func(t *testing.T, ratelimit, policy string) {
		h := http.Header{}
		h.Set("Ratelimit", ratelimit)
		h.Set("Ratelimit-Policy", policy)
		v, ok := rateLimitHeaders(h)
		if !ok {
			if v != (rateLimitView{}) {
				t.Errorf("not ok, but %+v", v)
			}
			return
		}
		if v.Remaining < 0 || v.Quota < 0 || v.Reset < 0 {
			t.Errorf("negative: %+v from %q, %q", v, ratelimit, policy)
		}
		if !hasParam(h.Get("Ratelimit"), "r", v.Remaining) {
			t.Errorf("remaining %d is not an r= parameter of %q", v.Remaining, h.Get("Ratelimit"))
		}
	})
}

// hasParam says whether the ;-separated field holds key=<digits> with that
// value.
func hasParam(field, key string, value int) bool {
	for _, p := range strings.Split(field, ";") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(p), key+"="); ok {
			if n, err := strconv.Atoi(v); err == nil && n == value && strings.Trim(v, "0123456789") == "" {
				return true
			}
		}
	}
	return false
}
