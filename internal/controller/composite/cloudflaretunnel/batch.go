package cloudflaretunnel

import (
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"k8s.io/apimachinery/pkg/types"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
)

// DefaultConfigBatchWindow is the shortest time between two writes of a
// tunnel's remote configuration unless Options say otherwise. Hostname
// changes that arrive within it go out in one write: a thousand Ingresses
// applied together cost a handful of configuration writes (each a
// Cloudflare GET and PUT by the Tunnel), not a thousand. The first
// configuration is written at once.
const DefaultConfigBatchWindow = 5 * time.Second

const (
	// LargeChangeHostnames is how many of a tunnel's hostnames on their way
	// (onTheirWay) make a large change: more than a single change or a
	// handful of Ingresses applied together.
	LargeChangeHostnames = 10
	// LargeChangeWindows is how many batch windows a tunnel's
	// configuration changes wait while a large change is under way.
	LargeChangeWindows = 6
)

// configWindow is how long a tunnel's configuration changes wait after its
// last write, given how many of its hostnames are on their way. Hostnames
// that wait for something made one at a time (each its Access
// application) reach the tunnel a few a second while the request budget
// is spent on the rest of the change; at one window each write carried a
// handful of them (142 writes for a thousand protected hostnames,
// docs/benchmarks.md). While many are on their way the tunnel waits six
// windows, so the change goes out in few writes; once fewer are, the short
// window is back, so the last of a change and any single change are
// written promptly. Unlike DNS batching (DNSBatching), which sees only the
// writes that reach it, the tunnel sees what is still coming, so it needs
// no lull to tell that a large change is over.
func configWindow(window time.Duration, onTheirWay int) time.Duration {
	if onTheirWay >= LargeChangeHostnames {
		return LargeChangeWindows * window
	}
	return window
}

// onTheirWay counts the hostnames the tunnel holds (d) that have no rules
// yet but are getting them: their PublicHostname is not judged yet, or it
// waits for something that is being made or can appear by itself (its
// Access application or policy, a Service, a Secret; every such reason is
// WaitingFor…). One refused as invalid waits for its user instead and
// does not count, so it cannot slow the tunnel's other changes.
func onTheirWay(cr *v1alpha1.CloudflareTunnel, phs []v1alpha1.PublicHostname, d publish.Decision) int {
	n := 0
	for i := range phs {
		ph := &phs[i]
		host, _ := publish.Hostname(ph.Spec.Hostname)
		if len(ph.Status.Rules) > 0 || d.Holder[host] != claimName(cr, ph) {
			continue
		}
		if c := ph.GetCondition(v1alpha1.TypeValid); c.Status == corev1.ConditionUnknown || strings.HasPrefix(string(c.Reason), "WaitingFor") {
			n++
		}
	}
	return n
}

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
