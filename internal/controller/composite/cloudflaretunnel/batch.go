package cloudflaretunnel

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// DefaultConfigBatchWindow is the shortest time between two writes of a
// tunnel's remote configuration unless Options say otherwise. Hostname
// changes that arrive within it go out in one write: a thousand Ingresses
// applied together cost a handful of configuration writes (each a
// Cloudflare GET and PUT by the Tunnel), not a thousand. The first
// configuration is written at once.
const DefaultConfigBatchWindow = 5 * time.Second

// configBatcher remembers when each CloudflareTunnel's configuration was
// last changed. It is in memory on purpose: after a restart the first change
// goes out at once, which costs at most one extra write.
type configBatcher struct {
	mu   sync.Mutex
	last map[types.UID]time.Time
	held map[types.UID]bool // a change waits for the window, not yet written
	now  func() time.Time
}

// hold says how long a changed configuration must wait; zero means write it
// now, and the write is recorded.
func (b *configBatcher) hold(uid types.UID, window time.Duration) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now
	if b.now != nil {
		now = b.now
	}
	t := now()
	if since := t.Sub(b.last[uid]); since < window {
		return window - since
	}
	if b.last == nil {
		b.last = map[types.UID]time.Time{}
	}
	b.last[uid] = t
	delete(b.held, uid)
	return 0
}

// newlyHeld records that uid's changed configuration is held back, and
// says whether it is the first change held since the last write: the
// changes that arrive meanwhile go out in that same write, which is what
// the coalescing metric counts (once, however often the tunnel is
// reconciled while it waits).
func (b *configBatcher) newlyHeld(uid types.UID) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.held[uid] {
		return false
	}
	if b.held == nil {
		b.held = map[types.UID]bool{}
	}
	b.held[uid] = true
	return true
}

// forget drops a deleted CloudflareTunnel.
func (b *configBatcher) forget(uid types.UID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.last, uid)
	delete(b.held, uid)
}
