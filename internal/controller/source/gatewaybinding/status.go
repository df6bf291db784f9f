package gatewaybinding

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/handshake"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/gatewaybinding/translate"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/metrics"
)

// Condition types of a GatewayBinding.
const (
	TypeAccepted     xpv2.ConditionType = "Accepted"
	TypeResolvedRefs xpv2.ConditionType = "ResolvedRefs"
	TypeProgrammed   xpv2.ConditionType = "Programmed"
	TypeDNSReady     xpv2.ConditionType = "DNSReady"
)

// Reasons of the Programmed and DNSReady conditions.
const (
	ReasonProgrammed       = "Programmed"
	ReasonPending          = "Pending"
	ReasonHostnameConflict = "HostnameConflict"
	ReasonNoHostnames      = "NoHostnames"
	ReasonRecordsReady     = "RecordsReady"
	ReasonRecordNotReady   = "RecordNotReady"
	ReasonNotManaged       = "NotManaged"
	// ReasonInvalidAnnotation: a route's annotation cannot be used (an
	// Access annotation, say); the route publishes nothing new.
	ReasonInvalidAnnotation = "InvalidAnnotation"
	// ReasonAccessWeakeningRefused: a route's access annotations ask for a
	// weaker check than the binding's spec.access; its hostnames are
	// published with the binding's check.
	ReasonAccessWeakeningRefused = "AccessWeakeningRefused"
)

// Observation is what became of a binding's hostnames.
type Observation struct {
	Hostnames  []v1alpha1.BoundHostname
	Programmed translate.Condition
	// DNSReady in DNSRecord and None modes (ExternalDNS mode's is the
	// DNSEndpoint's).
	DNSReady translate.Condition
	// Accepted are the hostnames their tunnel accepted.
	Accepted []string
	// Records are the accepted hostnames whose DNS points at the tunnel:
	// the records the DNS needs. A load-balanced hostname has none: the
	// load balancer holds the name.
	Records []string
}

// Observe reads the binding's PublicHostnames into each hostname's state
// and the Programmed and DNS conditions. A hostname is Published once its
// rules are in the tunnel's configuration at Cloudflare and, in DNSRecord
// mode, its record is ready.
func Observe(hosts []v1alpha1.BoundHostname, phs []v1alpha1.PublicHostname, mode, tunnelID string) Observation {
	byName := map[string]*v1alpha1.PublicHostname{}
	for i := range phs {
		byName[phs[i].Name] = &phs[i]
	}
	target := ""
	if tunnelID != "" {
		target = tunnelID + ".cfargotunnel.com"
	}
	cname := cnames(phs, target)
	var obs Observation
	var pending, conflicts, invalid, dnsWaiting []string
	for _, h := range hosts {
		if h.State != v1alpha1.HostnamePending {
			// Decided by the translation: an Access or load-balancing
			// disagreement between routes is a conflict, a route's bad
			// annotation is invalid. Either may still be published as it
			// was (translate.Result.Keeps).
			switch h.State {
			case v1alpha1.HostnameConflict:
				h.CNAME = cname(h.Hostname)
				conflicts = append(conflicts, h.Hostname)
			case v1alpha1.HostnameInvalid:
				h.CNAME = cname(h.Hostname)
				invalid = append(invalid, h.Route+" ("+h.Hostname+"): "+h.Message)
			}
			obs.Hostnames = append(obs.Hostnames, h)
			continue
		}
		h.CNAME = cname(h.Hostname)
		ph := byName[h.PublicHostname]
		accepted := xpv2.Condition{}
		if ph != nil {
			accepted = handshake.AcceptedCondition(ph)
		}
		switch {
		case ph == nil || ph.DeletionTimestamp != nil:
			h.Message = fmt.Sprintf("PublicHostname %s is being made", h.PublicHostname)
			pending = append(pending, h.Hostname)
		case accepted.Status != corev1.ConditionTrue && accepted.Reason == ReasonHostnameConflict:
			h.State, h.Message = v1alpha1.HostnameConflict, accepted.Message
			conflicts = append(conflicts, h.Hostname)
		case accepted.Status != corev1.ConditionTrue || !inConfiguration(ph):
			h.Message = handshake.ReadyCondition(ph).Message
			pending = append(pending, h.Hostname)
		default:
			obs.Accepted = append(obs.Accepted, h.Hostname)
			if ph.Spec.LoadBalancing == nil {
				obs.Records = append(obs.Records, h.Hostname)
			}
			dns := ph.GetCondition(v1alpha1.TypeDNSReady)
			if mode == v1alpha1.DNSModeDNSRecord || mode == "" {
				if dns.Status != corev1.ConditionTrue {
					h.Message = dns.Message
					dnsWaiting = append(dnsWaiting, h.Hostname)
					break
				}
			}
			h.State, h.Message = v1alpha1.HostnamePublished, ""
		}
		obs.Hostnames = append(obs.Hostnames, h)
	}
	obs.Programmed = programmed(len(obs.Accepted), pending, conflicts, invalid)
	obs.DNSReady = dnsReady(mode, len(obs.Records), len(obs.Accepted)-len(obs.Records), dnsWaiting, target)
	return obs
}

// cnames is the CNAME each hostname's record needs: a proxied CNAME to
// target, the tunnel ("" until it has an ID), and none for a hostname the
// binding load-balances, whose load balancer holds the name.
func cnames(phs []v1alpha1.PublicHostname, target string) func(host string) string {
	balanced := map[string]bool{}
	for i := range phs {
		if phs[i].Spec.LoadBalancing != nil && phs[i].DeletionTimestamp == nil {
			balanced[phs[i].Spec.Hostname] = true
		}
	}
	return func(host string) string {
		if balanced[host] {
			return ""
		}
		return target
	}
}

// inConfiguration says whether the tunnel wrote the PublicHostname's
// current rules to Cloudflare.
func inConfiguration(ph *v1alpha1.PublicHostname) bool {
	t := ph.Status.Tunnel
	return t != nil && t.Accepted && t.ObservedGeneration == ph.Generation && t.ConfigVersion > 0
}

// withRefused says on Programmed that routes asked for a weaker Access
// check than the binding's (translate.Result.Refused), unless an annotation
// that cannot be used says more.
func withRefused(c translate.Condition, refused []string) translate.Condition {
	if len(refused) == 0 || c.Reason == ReasonInvalidAnnotation {
		return c
	}
	return translate.Condition{Reason: ReasonAccessWeakeningRefused, Message: "a route may add to the binding's Access check, never lower it: " + strings.Join(refused, "; ")}
}

func programmed(n int, pending, conflicts, invalid []string) translate.Condition {
	switch {
	case len(invalid) > 0:
		return translate.Condition{Reason: ReasonInvalidAnnotation, Message: "a route's annotation cannot be used: " + strings.Join(invalid, "; ")}
	case len(conflicts) > 0:
		return translate.Condition{Reason: ReasonHostnameConflict, Message: fmt.Sprintf("published by another source first, or asked with different Access checks or load balancing by two routes, so not by this binding: %s (status.hostnames says why)", strings.Join(conflicts, ", "))}
	case len(pending) > 0:
		return translate.Condition{Reason: ReasonPending, Message: "waiting for the tunnel's configuration to hold " + strings.Join(pending, ", ")}
	case n == 0:
		return translate.Condition{Reason: ReasonNoHostnames, Message: "no accepted HTTPRoute attached to the listener names a concrete hostname (status.hostnames lists what was seen)"}
	}
	return translate.Condition{OK: true, Reason: ReasonProgrammed, Message: fmt.Sprintf("%d hostnames are in the tunnel's configuration", n)}
}

func dnsReady(mode string, records, balanced int, waiting []string, cname string) translate.Condition {
	switch mode {
	case v1alpha1.DNSModeNone:
		if cname == "" {
			cname = "<tunnel ID>.cfargotunnel.com"
		}
		return translate.Condition{OK: true, Reason: ReasonNotManaged, Message: fmt.Sprintf("spec.dns.mode is None: nothing is written; each hostname needs a proxied CNAME to %s (status.hostnames[].cname)", cname)}
	case v1alpha1.DNSModeExternalDNS:
		return translate.Condition{OK: true}
	}
	if len(waiting) > 0 {
		return translate.Condition{Reason: ReasonRecordNotReady, Message: "waiting for the DNS records of " + strings.Join(waiting, ", ")}
	}
	msg := fmt.Sprintf("%d DNSRecords point at the tunnel", records)
	if balanced > 0 {
		msg += fmt.Sprintf("; %d load-balanced hostnames have none, their load balancers holding the names", balanced)
	}
	return translate.Condition{OK: true, Reason: ReasonRecordsReady, Message: msg}
}

// setStatus writes the conditions and hostnames; Ready needs every one of
// them.
func setStatus(b *v1alpha1.GatewayBinding, res translate.Result, obs Observation, dns translate.Condition) {
	conds := []xpv2.Condition{
		condition(TypeAccepted, res.Accepted),
		condition(TypeResolvedRefs, res.ResolvedRefs),
		condition(TypeProgrammed, obs.Programmed),
		condition(TypeDNSReady, dns),
	}
	if res.KeepExisting {
		// What was published stays, and so does what was said about it.
		for i, t := range []xpv2.ConditionType{TypeProgrammed, TypeDNSReady} {
			if cur := b.GetCondition(t); cur.Status != corev1.ConditionUnknown {
				conds[2+i] = cur
			}
		}
	}
	ready := xpv2.Condition{Type: xpv2.TypeReady, Status: corev1.ConditionTrue, Reason: "Available", Message: obs.Programmed.Message, LastTransitionTime: metav1.Now()}
	for _, c := range conds {
		if c.Status != corev1.ConditionTrue {
			ready.Status, ready.Reason, ready.Message = corev1.ConditionFalse, c.Reason, c.Message
			break
		}
	}
	for _, c := range append(conds, ready) {
		c.ObservedGeneration = b.Generation
		if cur := b.GetCondition(c.Type); cur.Equal(c) {
			continue
		}
		b.SetConditions(c)
	}
	if res.KeepExisting {
		// The references do not resolve: what was reported stays, as what
		// was published does.
		b.Status.ObservedGeneration = b.Generation
		return
	}
	slices.SortStableFunc(obs.Hostnames, func(a, c v1alpha1.BoundHostname) int { return strings.Compare(a.Hostname, c.Hostname) })
	b.Status.Hostnames = obs.Hostnames
	b.Status.ObservedGeneration = b.Generation
}

func condition(t xpv2.ConditionType, c translate.Condition) xpv2.Condition {
	s := corev1.ConditionFalse
	if c.OK {
		s = corev1.ConditionTrue
	}
	return xpv2.Condition{Type: t, Status: s, Reason: xpv2.ConditionReason(c.Reason), Message: c.Message, LastTransitionTime: metav1.Now()}
}

// sourceKind labels GatewayBindings in the provider's source metrics.
const sourceKind = "GatewayBinding"

// sourceState is what the source metrics say of a binding: a reference or
// hostname that needs fixing outweighs a hostname another source holds (or
// a PublicHostname name another object took, nameTaken).
func sourceState(res translate.Result, obs Observation, nameTaken bool) metrics.SourceState {
	if !res.Accepted.OK || !res.ResolvedRefs.OK {
		return metrics.SourceProblem
	}
	conflict := nameTaken
	for _, h := range obs.Hostnames {
		switch h.State {
		case v1alpha1.HostnameNotSupported, v1alpha1.HostnameInvalid:
			return metrics.SourceProblem
		case v1alpha1.HostnameConflict:
			conflict = true
		}
	}
	if conflict {
		return metrics.SourceConflict
	}
	return metrics.SourceTranslated
}
