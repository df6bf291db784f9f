package providertest

import (
	"net/http"
	"testing"
	"time"
)

// Rest is what the provider called while at rest: the calls the simulator
// served over a span of observations, by operation (sim.Server.Stats), and
// how many observation TTLs (half a poll, cloudflare.CachedClient's) the
// span took, rounded up.
type Rest struct {
	Calls map[string]int
	TTLs  int
}

// AtRest waits until the simulator has served k more lists of collection
// (an anchored path, as for WaitServed) and returns what the provider
// called meanwhile. A steady-state test bounds the calls by r.TTLs, measured,
// instead of counting them over a slept window: the provider lists each
// kind at most once a TTL, whatever the number of its objects.
func (p *Provider) AtRest(t *testing.T, k int, collection string) Rest {
	t.Helper()
	before, start := p.Sim.Stats(), time.Now()
	p.WaitServed(t, k, http.MethodGet, collection)
	took, after := time.Since(start), p.Sim.Stats()
	ttl := p.Poll / 2
	r := Rest{Calls: map[string]int{}, TTLs: int((took + ttl - 1) / ttl)}
	for op, st := range after {
		if d := st.Requests - before[op].Requests; d > 0 {
			r.Calls[op] = d
		}
	}
	return r
}

// Writes counts the write calls (anything but a read) in r.
func (r Rest) Writes() int {
	n := 0
	for op, c := range r.Calls {
		if !isRead(op) {
			n += c
		}
	}
	return n
}
