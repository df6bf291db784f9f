package source

import (
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/handshake"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/hostname"
)

// Yielded are the private route hostnames (hostname.Normalize's form) a
// source gives up because its public claim on them lost: whoever holds a
// hostname holds its public rule, its DNS record and its private route. A
// hostname is yielded when every PublicHostname the source made for it (a
// wildcard and its apex share one route) is told by its tunnel that an
// older claim holds it (v1alpha1.ReasonHostnameConflict); one still
// held, or not answered yet, keeps the route. Each maps to the holder the
// tunnel named. phs are the source's own PublicHostnames; one being deleted
// is no claim.
func Yielded(phs []*v1alpha1.PublicHostname) map[string]string {
	lost, held := map[string]string{}, map[string]bool{}
	for _, ph := range phs {
		if meta.WasDeleted(ph) {
			continue
		}
		h := hostname.Normalize(ph.Spec.Hostname)
		c := ph.GetCondition(v1alpha1.TypeAccepted)
		if c.Status != corev1.ConditionFalse || c.Reason != v1alpha1.ReasonHostnameConflict {
			held[h] = true
			continue
		}
		// Named only when of the source's namespace: another's is
		// another tenant's.
		holder := handshake.HolderName(ph)
		if lost[h] == "" {
			lost[h] = holder
		}
	}
	for h := range held {
		delete(lost, h)
	}
	return lost
}

// Undecided are the hostnames (hostname.Normalize's form) of public, the
// source's public claims, that its tunnel has not answered yet: no
// PublicHostname of the source's for it yet, or one whose Accepted
// condition is missing or still waits for the tunnel. A private route is
// made for such a hostname only once the claim is answered, so a claim
// that loses never routes privately, not even for a moment, into the
// loser's tunnel; a route already made is kept meanwhile.
func Undecided(phs []*v1alpha1.PublicHostname, public []string) map[string]bool {
	out := map[string]bool{}
	for _, h := range public {
		out[hostname.Normalize(h)] = true
	}
	for _, ph := range phs {
		if !meta.WasDeleted(ph) && answered(ph) {
			delete(out, hostname.Normalize(ph.Spec.Hostname))
		}
	}
	return out
}

// YieldedRoute says whether m is a private route whose hostname is in
// yielded: it goes even when a problem keeps the source's other objects.
func YieldedRoute(yielded map[string]string, m Owned) bool {
	rt, ok := m.(*ztv1alpha1.HostnameRoute)
	if !ok {
		return false
	}
	_, y := yielded[hostname.Normalize(rt.Spec.ForProvider.Hostname)]
	return y
}

// AwaitedRoute says whether m is a private route whose hostname is in
// undecided and not yielded: it is not made yet, and kept if made.
func AwaitedRoute(undecided map[string]bool, yielded map[string]string, m Owned) bool {
	rt, ok := m.(*ztv1alpha1.HostnameRoute)
	return ok && undecided[hostname.Normalize(rt.Spec.ForProvider.Hostname)] && !YieldedRoute(yielded, m)
}

// ClaimedHostnames are the hostnames of a source's public claims.
func ClaimedHostnames(phs []*v1alpha1.PublicHostname) []string {
	out := make([]string, 0, len(phs))
	for _, ph := range phs {
		out = append(out, ph.Spec.Hostname)
	}
	return out
}

// answered says whether ph's tunnel has said whether it holds its hostname.
func answered(ph *v1alpha1.PublicHostname) bool {
	c := ph.GetCondition(v1alpha1.TypeAccepted)
	switch {
	case c.Status != corev1.ConditionTrue && c.Status != corev1.ConditionFalse:
		return false
	default:
		return c.Reason != v1alpha1.ReasonWaitingForTunnel
	}
}

// YieldMessage says why a source does not route a hostname privately.
func YieldMessage(kind, host, holder string) string {
	by := "an older claim"
	if holder != "" {
		by = "PublicHostname " + holder
	}
	return fmt.Sprintf("hostname %s is published by %s, which holds it: its private route is the holder's too, so this %s does not route it privately (it does once its own public claim holds)", host, by, kind)
}

// ReportYielded tells the source src (of kind), once per hostname, that it
// does not route a hostname of hosts privately because another holds its
// public claim; reported holds what was said, as for ReportFailures.
func ReportYielded(reported *sync.Map, src client.Object, kind string, hosts []string, yielded map[string]string, warn func(reason, msg string)) {
	for _, h := range hosts {
		key := string(src.GetUID()) + "/yielded/" + h
		holder, y := yielded[h]
		if !y {
			reported.Delete(key)
			continue
		}
		msg := YieldMessage(kind, h, holder)
		if last, ok := reported.Load(key); ok && last == msg {
			continue
		}
		reported.Store(key, msg)
		warn(string(v1alpha1.ReasonHostnameConflict), msg)
	}
}
