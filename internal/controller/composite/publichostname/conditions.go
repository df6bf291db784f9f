package publichostname

// Conditions: what a PublicHostname says of its spec, its claim, its DNS
// record and its deletion.

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/metrics"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
)

// ProblemReason is Valid's reason for problems: InvalidSpec if any is the
// spec's own, else what the first one waits for (a Service, a Secret), so
// its author knows which object to make.
func ProblemReason(problems []publish.Problem) xpv2.ConditionReason {
	for _, p := range problems {
		if !p.Waiting {
			return ReasonInvalid
		}
	}
	if len(problems) == 0 {
		return ReasonWaitingForService
	}
	switch problems[0].WaitingFor {
	case publish.WaitingForSecret:
		return ReasonWaitingForSecret
	case publish.WaitingForAccessPolicy:
		return ReasonWaitingForAccessPolicy
	case publish.WaitingForAccessApplication:
		return ReasonWaitingForAccessApplication
	case publish.WaitingForHostname:
		return ReasonWaitingForHostname
	}
	return ReasonWaitingForService
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

// ValidCondition is Valid for a spec that resolved (valid) once its DNS
// record's fate is known: while Cloudflare refuses the record the rules are
// withheld from the tunnel (they would claim a name that does not reach
// it), so Valid says they are not published and why, rather than count
// rules the tunnel answers it does not have.
func ValidCondition(valid, dns xpv2.Condition) xpv2.Condition {
	if !DNSRefused(dns) {
		return valid
	}
	return cond(v1alpha1.TypeValid, false, v1alpha1.ReasonDNSRefused, fmt.Sprintf("%s, not published while the hostname's DNS record is refused: %s", valid.Message, dns.Message))
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

// DeletingCondition is Ready while a PublicHostname being deleted waits for
// its DNSRecords to leave Cloudflare: its rules have left the tunnel's
// configuration (the tunnel skips a hostname being deleted), so it is not
// published, and the message names what the finalizer waits on.
func DeletingCondition(tunnel string, records []string) xpv2.Condition {
	what := "DNSRecord " + records[0]
	if len(records) > 1 {
		what = "DNSRecords " + strings.Join(records, ", ")
	}
	return cond(xpv2.TypeReady, false, ReasonDeleting, fmt.Sprintf("being deleted: its rules leave CloudflareTunnel %s's configuration; waiting for %s to be deleted from Cloudflare", tunnel, what))
}

func cond(t xpv2.ConditionType, ok bool, reason xpv2.ConditionReason, msg string) xpv2.Condition {
	s := corev1.ConditionFalse
	if ok {
		s = corev1.ConditionTrue
	}
	return xpv2.Condition{Type: t, Status: s, Reason: reason, Message: msg, LastTransitionTime: metav1.Now()}
}

// AccessState is what guards the PublicHostname, read from its spec and the
// typed reasons of its conditions: protected once its tunnel holds its
// rules with a required Access check; waiting while the AccessPolicy or the
// Access application that check needs does not exist (nothing published:
// it fails closed); neither otherwise (no required check asked for, or not
// published for another reason, which Valid or Accepted tells).
func AccessState(ph *v1alpha1.PublicHostname) metrics.HostnameAccess {
	a := ph.Spec.Access
	if a == nil || !ptr.Deref(a.Required, true) {
		return metrics.HostnameOther
	}
	valid := ph.GetCondition(v1alpha1.TypeValid)
	switch {
	case valid.Status == corev1.ConditionFalse && (valid.Reason == ReasonWaitingForAccessPolicy || valid.Reason == ReasonWaitingForAccessApplication):
		return metrics.HostnameWaitingForAccess
	case valid.Status == corev1.ConditionTrue && AcceptedCondition(ph).Status == corev1.ConditionTrue:
		return metrics.HostnameProtected
	}
	return metrics.HostnameOther
}
