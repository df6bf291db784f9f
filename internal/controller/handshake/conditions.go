package handshake

// Conditions: what a PublicHostname's status says of the tunnel's answer,
// read by the PublicHostname to write them and by the sources to report
// them.

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/common"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
)

// Reasons of a PublicHostname's conditions that these readers decide on
// besides the shared ones of apis/tunnels/v1alpha1.
const (
	// ReasonInvalid (Valid=False): the spec itself is wrong; its author
	// must act.
	ReasonInvalid xpv2.ConditionReason = "InvalidSpec"
	// ReasonWaitingForHostname: a managed Access check waits until the
	// hostname is this PublicHostname's (its tunnel's claim won, its DNS
	// record made); a hostname it does not hold gets no application.
	ReasonWaitingForHostname xpv2.ConditionReason = "WaitingForHostname"
	// ReasonWaitingForAccessApplication (Valid=False): a managed Access
	// check waits for the application made for the hostname; nothing is
	// published meanwhile.
	ReasonWaitingForAccessApplication xpv2.ConditionReason = "WaitingForAccessApplication"
	// ReasonWaitingForAccessPolicy, ReasonWaitingForService and
	// ReasonWaitingForSecret (Valid=False): the spec names an AccessPolicy,
	// a Service or a Secret that does not exist; its author makes it.
	ReasonWaitingForAccessPolicy xpv2.ConditionReason = "WaitingForAccessPolicy"
	ReasonWaitingForService      xpv2.ConditionReason = "WaitingForService"
	ReasonWaitingForSecret       xpv2.ConditionReason = "WaitingForSecret"
	// ReasonPublished (Ready=True): the tunnel's configuration in
	// Cloudflare holds the hostname's rules.
	ReasonPublished xpv2.ConditionReason = "Published"
	// ReasonUnpublished: the tunnel's answer to a hostname being deleted,
	// once Cloudflare holds a configuration without its rules.
	ReasonUnpublished = "Unpublished"
)

// typedRefusals are the reasons a refused DNSRecord's Synced=False may
// give, which DNSReady repeats so that the sources above tell a name taken
// from a guardrail without reading messages.
var typedRefusals = []xpv2.ConditionReason{common.ReasonNameTaken, common.ReasonConflict, common.ReasonNotAllowed, common.ReasonRefused}

// TypedRefusal says whether r is a refused DNSRecord's reason that DNSReady
// repeats as it is.
func TypedRefusal(r xpv2.ConditionReason) bool { return slices.Contains(typedRefusals, r) }

// DNSRefused says whether a DNSReady condition reports a refused record.
func DNSRefused(dns xpv2.Condition) bool {
	return dns.Status == corev1.ConditionFalse && (dns.Reason == v1alpha1.ReasonDNSRefused || TypedRefusal(dns.Reason))
}

// Failure is the condition that keeps a PublicHostname from being published
// for a reason its author must act on: another PublicHostname holds the
// hostname, Cloudflare refused its DNS record, its spec is not valid, or
// its provider config does not allow one of its origins.
func Failure(ph *v1alpha1.PublicHostname) (xpv2.Condition, bool) {
	accepted, dns, valid := ph.GetCondition(v1alpha1.TypeAccepted), ph.GetCondition(v1alpha1.TypeDNSReady), ph.GetCondition(v1alpha1.TypeValid)
	for _, f := range []struct {
		c      xpv2.Condition
		failed bool
	}{
		{accepted, accepted.Reason == v1alpha1.ReasonHostnameConflict},
		{dns, DNSRefused(dns)},
		{valid, valid.Reason == ReasonInvalid || clients.IsOriginRule(string(valid.Reason))},
	} {
		if f.failed && f.c.Status == corev1.ConditionFalse && f.c.Message != "" {
			return f.c, true
		}
	}
	return xpv2.Condition{}, false
}

// AcceptedCondition is the CloudflareTunnel's answer, as it wrote it.
func AcceptedCondition(ph *v1alpha1.PublicHostname) xpv2.Condition {
	t := ph.Status.Tunnel
	switch {
	case t == nil || t.Tunnel != TunnelName(ph):
		return cond(v1alpha1.TypeAccepted, false, v1alpha1.ReasonWaitingForTunnel, fmt.Sprintf("waiting for CloudflareTunnel %s to publish the hostname", TunnelName(ph)))
	case !t.Accepted:
		return cond(v1alpha1.TypeAccepted, false, xpv2.ConditionReason(t.Reason), t.Message)
	}
	return cond(v1alpha1.TypeAccepted, true, xpv2.ConditionReason(t.Reason), t.Message)
}

// ReadyCondition: the hostname is valid, its tunnel publishes its rules, and
// its DNS record (if it has one) is ready.
func ReadyCondition(ph *v1alpha1.PublicHostname) xpv2.Condition {
	order := []xpv2.ConditionType{v1alpha1.TypeValid, v1alpha1.TypeAccepted, v1alpha1.TypeDNSReady}
	if ph.GetCondition(v1alpha1.TypeValid).Reason == ReasonWaitingForHostname {
		// Valid waits on the claim and the record: theirs is the reason.
		order = []xpv2.ConditionType{v1alpha1.TypeAccepted, v1alpha1.TypeDNSReady, v1alpha1.TypeValid}
	}
	for _, t := range order {
		if c := ph.GetCondition(t); c.Status != corev1.ConditionTrue {
			return cond(xpv2.TypeReady, false, c.Reason, c.Message)
		}
	}
	t := ph.Status.Tunnel
	if t.ObservedGeneration != ph.Generation || t.ConfigVersion == 0 {
		return cond(xpv2.TypeReady, false, v1alpha1.ReasonWaitingForTunnel, fmt.Sprintf("waiting for CloudflareTunnel %s to write the hostname's rules to Cloudflare", TunnelName(ph)))
	}
	return cond(xpv2.TypeReady, true, ReasonPublished, fmt.Sprintf("published: %s in version %d of tunnel %s's configuration", publish.RuleCount(t.Rules), t.ConfigVersion, TunnelName(ph)))
}

func cond(t xpv2.ConditionType, ok bool, reason xpv2.ConditionReason, msg string) xpv2.Condition {
	s := corev1.ConditionFalse
	if ok {
		s = corev1.ConditionTrue
	}
	return xpv2.Condition{Type: t, Status: s, Reason: reason, Message: msg, LastTransitionTime: metav1.Now()}
}
