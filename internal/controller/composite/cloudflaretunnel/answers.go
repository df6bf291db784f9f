package cloudflaretunnel

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
)

// publishedRules remembers, per CloudflareTunnel and PublicHostname (by
// UID), a digest of the rules the hostname was last told are published
// (an answer with a configuration version). A configuration write for one
// hostname then leaves every other hostname's answer as it was, instead of
// telling each of them first that its rules are on their way and then
// that they are in the new version: at N = 1,000 that was 2,000 status
// writes, 2,000 PublicHostname reconciles and a CloudflareTunnel reconcile
// of 15 s for every configuration write, and one new hostname waited a
// minute behind them (docs/benchmarks.md, issue 40). It is in memory on
// purpose: after a restart each hostname is answered once more, with the
// version then current.
type publishedRules struct {
	mu     sync.Mutex
	digest map[types.UID]map[types.UID]string
}

// rulesDigest identifies what a PublicHostname asks its tunnel to publish.
func rulesDigest(ph *v1alpha1.PublicHostname) string {
	b, err := json.Marshal(struct {
		Rules   any `json:"rules"`
		CAPools any `json:"caPools"`
	}{ph.Status.Rules, ph.Status.CAPools})
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// stillPublished says whether want, a fresh answer for ph, may be replaced
// by the answer ph already holds: that one said its rules are published
// (with a version), it is about the same tunnel, generation and number of
// rules as want, and the rules are the very ones it was given for. Those
// rules are in Cloudflare whether or not a later configuration is on its
// way: a write for other hostnames carries them unchanged.
func (p *publishedRules) stillPublished(tunnel types.UID, ph *v1alpha1.PublicHostname, want v1alpha1.PublishedStatus) bool {
	prev := ph.Status.Tunnel
	if prev == nil || !prev.Accepted || prev.ConfigVersion == 0 || !want.Accepted || want.Rules == 0 ||
		prev.Tunnel != want.Tunnel || prev.ObservedGeneration != want.ObservedGeneration || prev.Rules != want.Rules {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	d, ok := p.digest[tunnel][ph.UID]
	return ok && d != "" && d == rulesDigest(ph)
}

// answered records the answer each of the tunnel's PublicHostnames now
// holds, and forgets those no longer among them.
func (p *publishedRules) answered(tunnel types.UID, phs []v1alpha1.PublicHostname, answers []v1alpha1.PublishedStatus) {
	next := make(map[types.UID]string, len(phs))
	for i := range phs {
		if a := answers[i]; a.Accepted && a.ConfigVersion > 0 {
			next[phs[i].UID] = rulesDigest(&phs[i])
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.digest == nil {
		p.digest = map[types.UID]map[types.UID]string{}
	}
	p.digest[tunnel] = next
}

// forget drops a deleted CloudflareTunnel.
func (p *publishedRules) forget(tunnel types.UID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.digest, tunnel)
}
