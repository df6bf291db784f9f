package cloudflaretunnel

import (
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/handshake"
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
	// (onItsWay) make a large change: more than a single change or a
	// handful of Ingresses applied together.
	LargeChangeHostnames = 10
	// LargeChangeWindows is how many batch windows a tunnel's
	// configuration changes wait while a large change is under way.
	LargeChangeWindows = 6
	// RecentWait is how long a hostname waiting for an object its author
	// makes (an AccessPolicy, a Service, a Secret) counts as on its way:
	// objects applied together (a directory, a GitOps sync) arrive in any
	// order within it; one still missing after it is waited for by its
	// author, and must not slow the tunnel's other changes.
	RecentWait = 2 * time.Minute
)

// configWindow is how long a tunnel's configuration changes wait after its
// last write, given how many of its hostnames are on their way and whether
// the change takes a rule without an Access check off (closes). Hostnames
// that wait for something made one at a time (each its Access
// application) reach the tunnel a few a second while the request budget
// is spent on the rest of the change; at one window each write carried a
// handful of them (142 writes for a thousand protected hostnames,
// docs/benchmarks.md). While many are on their way the tunnel waits six
// windows, so the change goes out in few writes; once fewer are, the short
// window is back, so the last of a change and any single change are
// written promptly. Unlike DNS batching (DNSBatching), which sees only the
// writes that reach it, the tunnel sees what is still coming, so it needs
// no lull to tell that a large change is over. A change that takes an open
// rule off (its hostname now asks for Access, or goes) never waits longer
// than the short window: what it closes must not stay open for a large
// change's sake.
func configWindow(window time.Duration, onTheirWay int, closes bool) time.Duration {
	if onTheirWay >= LargeChangeHostnames && !closes {
		return LargeChangeWindows * window
	}
	return window
}

// onTheirWay counts the hostnames the tunnel holds (d) that have no rules
// yet and are part of a change under way at now (onItsWay).
func onTheirWay(cr *v1alpha1.CloudflareTunnel, phs []v1alpha1.PublicHostname, d publish.Decision, now time.Time) int {
	n := 0
	for i := range phs {
		ph := &phs[i]
		host, _ := publish.Hostname(ph.Spec.Hostname)
		if len(ph.Status.Rules) == 0 && d.Holder[host] == claimName(cr, ph) && onItsWay(ph, now) {
			n++
		}
	}
	return n
}

// onItsWay says whether a hostname without rules is getting them as part
// of a change under way: its PublicHostname is not judged yet (new, or its
// spec changed), or it waits for what the provider is making for it (its
// Access application, its DNS record or its tunnel's acceptance), or, for
// RecentWait, for an object its author makes. A hostname refused as
// invalid, whose DNS record Cloudflare refused, that its source no longer
// wants, or that waits for its author longer, is not: it waits for a
// person, and counting it would hold the tunnel's every change on the long
// window for as long as it waits.
func onItsWay(ph *v1alpha1.PublicHostname, now time.Time) bool {
	if _, unwanted := ph.Annotations[v1alpha1.AnnotationUnwantedSince]; unwanted {
		return false
	}
	valid := ph.GetCondition(v1alpha1.TypeValid)
	switch {
	case valid.Status == corev1.ConditionUnknown || ph.Status.ObservedGeneration != ph.Generation:
		return true
	case valid.Status != corev1.ConditionFalse || handshake.DNSRefused(ph.GetCondition(v1alpha1.TypeDNSReady)):
		return false
	}
	switch valid.Reason {
	case handshake.ReasonWaitingForAccessApplication, handshake.ReasonWaitingForHostname:
		return true
	case handshake.ReasonWaitingForAccessPolicy, handshake.ReasonWaitingForService, handshake.ReasonWaitingForSecret:
		return now.Sub(valid.LastTransitionTime.Time) < RecentWait
	}
	return false
}

// closesARule says whether want, the configuration wanted, lacks a rule
// of current (the one written) that serves a hostname without requiring
// an Access check. Rules are compared within their hostname and path
// only: a tunnel holds a thousand.
func closesARule(current, want *ztv1alpha1.TunnelConfig) bool {
	if current == nil {
		return false
	}
	type match struct{ hostname, path string }
	wanted := map[match][]*ztv1alpha1.IngressRule{}
	if want != nil {
		for i := range want.Ingress {
			w := &want.Ingress[i]
			k := match{ptr.Deref(w.Hostname, ""), ptr.Deref(w.Path, "")}
			wanted[k] = append(wanted[k], w)
		}
	}
	for i := range current.Ingress {
		r := &current.Ingress[i]
		if ptr.Deref(r.Hostname, "") == "" || checksAccess(r) {
			continue
		}
		same := func(w *ztv1alpha1.IngressRule) bool { return equality.Semantic.DeepEqual(w, r) }
		if !slices.ContainsFunc(wanted[match{*r.Hostname, ptr.Deref(r.Path, "")}], same) {
			return true
		}
	}
	return false
}

// checksAccess says whether a rule requires an Access token of some
// audience.
func checksAccess(r *ztv1alpha1.IngressRule) bool {
	o := r.OriginRequest
	return o != nil && o.Access != nil && ptr.Deref(o.Access.Required, false) && len(o.Access.AudTag) > 0
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
