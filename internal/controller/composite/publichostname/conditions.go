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
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/handshake"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/metrics"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
)

// ProblemReason is Valid's reason for problems: InvalidSpec if any is the
// spec's own, else what the first one waits for (a Service, a Secret), so
// its author knows which object to make.
func ProblemReason(problems []publish.Problem) xpv2.ConditionReason {
	for _, p := range problems {
		if !p.Waiting {
			return handshake.ReasonInvalid
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
		return handshake.ReasonWaitingForHostname
	}
	return ReasonWaitingForService
}

// ValidCondition is Valid for a spec that resolved (valid) once its DNS
// record's fate is known: while Cloudflare refuses the record the rules are
// withheld from the tunnel (they would claim a name that does not reach
// it), so Valid says they are not published and why, rather than count
// rules the tunnel answers it does not have.
func ValidCondition(valid, dns xpv2.Condition) xpv2.Condition {
	if !handshake.DNSRefused(dns) {
		return valid
	}
	return cond(v1alpha1.TypeValid, false, v1alpha1.ReasonDNSRefused, fmt.Sprintf("%s, not published while the hostname's DNS record is refused: %s", valid.Message, dns.Message))
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
	case valid.Status == corev1.ConditionTrue && handshake.AcceptedCondition(ph).Status == corev1.ConditionTrue:
		return metrics.HostnameProtected
	}
	return metrics.HostnameOther
}
