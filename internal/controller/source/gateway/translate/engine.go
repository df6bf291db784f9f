package translate

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/common"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/handshake"
)

// Lost are the hostnames of the Gateway's PublicHostnames that another
// source holds, each with why: their tunnel refused them because an older
// claim holds them (Accepted=False, HostnameConflict: the engine's one
// verdict on conflicts on a tunnel), or their DNS record is another's
// (DNSReady=False, NameTaken or Conflict: another source, on another
// tunnel or none, holds the name; the rules are withheld). The holder is
// named when it is of the Gateway's namespace (the tunnel names it by name
// alone); one of another namespace is another tenant's, and not named, and
// neither is the holder of a DNS record.
func Lost(phs []*v1alpha1.PublicHostname, tunnel string) map[string]string {
	out := map[string]string{}
	for _, ph := range phs {
		if ph.DeletionTimestamp != nil {
			continue
		}
		if dns := ph.GetCondition(v1alpha1.TypeDNSReady); dns.Status == corev1.ConditionFalse && common.Taken(dns.Reason) {
			out[ph.Spec.Hostname] = fmt.Sprintf("hostname %s is held by another source: its DNS record is not this Gateway's to make (%s), so CloudflareTunnel %s does not publish this route's rules for it", ph.Spec.Hostname, dns.Reason, tunnel)
			continue
		}
		c := ph.GetCondition(v1alpha1.TypeAccepted)
		if c.Status != corev1.ConditionFalse || c.Reason != v1alpha1.ReasonHostnameConflict {
			continue
		}
		// The tunnel names a holder of the PublicHostname's own namespace
		// only (status.tunnel.claimedBy); any other is another tenant's.
		holder := "a PublicHostname of another namespace, the older claim"
		if n := handshake.HolderName(ph); n != "" {
			holder = "PublicHostname " + n + ", the older claim"
		}
		out[ph.Spec.Hostname] = fmt.Sprintf("hostname %s is already published through CloudflareTunnel %s by %s; this route's rules for it are not published", ph.Spec.Hostname, tunnel, holder)
	}
	return out
}

// ShowLost tells every route serving a lost hostname, on each parent
// entry that accepted it: with other hostnames still published, it stays
// Accepted and is PartiallyInvalid (reason HostnameConflict); with none,
// it is not Accepted (reason HostnameConflict).
func ShowLost(sts []RouteStatus, lost map[string]string) {
	if len(lost) == 0 {
		return
	}
	for i := range sts {
		st := &sts[i]
		var msgs []string
		for _, h := range st.Hostnames {
			if m, ok := lost[h]; ok {
				msgs = append(msgs, m)
			}
		}
		if len(msgs) == 0 {
			continue
		}
		all := len(msgs) == len(st.Hostnames)
		for j := range st.Parents {
			lostOn(&st.Parents[j], strings.Join(msgs, "; "), all)
		}
	}
}

func lostOn(p *gwv1.RouteParentStatus, msg string, all bool) {
	accepted := &p.Conditions[0]
	if accepted.Status != metav1.ConditionTrue {
		return
	}
	reason := string(v1alpha1.ReasonHostnameConflict)
	if all {
		accepted.Status, accepted.Reason, accepted.Message = metav1.ConditionFalse, reason, msg
		p.Conditions = slices.DeleteFunc(p.Conditions, func(c metav1.Condition) bool { return c.Type == string(gwv1.RouteConditionPartiallyInvalid) })
		return
	}
	if i := slices.IndexFunc(p.Conditions, func(c metav1.Condition) bool { return c.Type == string(gwv1.RouteConditionPartiallyInvalid) }); i >= 0 {
		p.Conditions[i].Message += "; " + msg
		return
	}
	p.Conditions = append(p.Conditions, metav1.Condition{Type: string(gwv1.RouteConditionPartiallyInvalid), Status: metav1.ConditionTrue,
		Reason: reason, Message: msg, ObservedGeneration: accepted.ObservedGeneration})
}
