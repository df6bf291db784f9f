package translate

import (
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/gatewayapi"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/metrics"
)

// Warning is a Warning event to raise: something the user must act on.
type Warning struct {
	Reason, Message string
}

// bad says whether a condition asks the user to act: a refusal, a
// reference that does not resolve, a part left out, a conflict. Waiting
// for the tunnel (Pending) is the normal path and says nothing.
func bad(c metav1.Condition) bool {
	switch c.Type {
	case string(gwv1.RouteConditionPartiallyInvalid), string(gwv1.ListenerConditionConflicted):
		return c.Status == metav1.ConditionTrue
	case string(gwv1.GatewayConditionProgrammed):
		return c.Status == metav1.ConditionFalse && c.Reason == string(gwv1.GatewayReasonInvalid)
	}
	return c.Status == metav1.ConditionFalse
}

// changed are want's bad conditions that old did not already say, word
// for word: a Warning is raised once per change, not on every reconcile
// (the status keeps saying it; client-go drops an object's events past a
// burst of 25, and repeats would crowd out the ones that matter).
func changed(old, want []metav1.Condition, prefix string) []Warning {
	var out []Warning
	for _, c := range want {
		if !bad(c) {
			continue
		}
		seen := false
		for _, o := range old {
			seen = seen || o.Type == c.Type && o.Status == c.Status && o.Reason == c.Reason && o.Message == c.Message
		}
		if !seen {
			out = append(out, Warning{Reason: c.Reason, Message: prefix + c.Message})
		}
	}
	return out
}

// GatewayWarnings are what a Gateway's new status says that needs acting
// on and its old one did not: the Gateway refused (parameters, addresses),
// its tunnel unusable, a listener refused, conflicted or naming kinds it
// cannot take. Listener problems are said once, by the listener's Accepted
// (or Conflicted), not again by its Programmed.
func GatewayWarnings(old, want gwv1.GatewayStatus) []Warning {
	conds := want.Conditions
	if slices.ContainsFunc(conds, func(c metav1.Condition) bool {
		return c.Type == string(gwv1.GatewayConditionAccepted) && c.Status == metav1.ConditionFalse
	}) {
		// Not Programmed because not accepted: said once, by Accepted.
		conds = slices.DeleteFunc(slices.Clone(conds), func(c metav1.Condition) bool { return c.Type == string(gwv1.GatewayConditionProgrammed) })
	}
	out := changed(old.Conditions, conds, "")
	for _, l := range want.Listeners {
		var prev []metav1.Condition
		for _, o := range old.Listeners {
			if o.Name == l.Name {
				prev = o.Conditions
			}
		}
		var conds []metav1.Condition
		for _, c := range l.Conditions {
			if c.Type != string(gwv1.ListenerConditionProgrammed) {
				conds = append(conds, c)
			}
		}
		out = append(out, changed(prev, conds, fmt.Sprintf("listener %s: ", l.Name))...)
	}
	return out
}

// ClassWarnings are what a GatewayClass's new Accepted condition says
// that needs acting on and its old conditions did not (a parametersRef
// it cannot take).
func ClassWarnings(old []metav1.Condition, accepted metav1.Condition) []Warning {
	return changed(old, []metav1.Condition{accepted}, "")
}

// RouteWarnings are what this controller's new parent entries of a route
// of namespace ns say that needs acting on and the old ones did not.
func RouteWarnings(ns string, old, want []gwv1.RouteParentStatus) []Warning {
	var out []Warning
	for _, p := range want {
		var prev []metav1.Condition
		for _, o := range old {
			if o.ControllerName == ControllerName && gatewayapi.SameParent(o.ParentRef, p.ParentRef, ns) {
				prev = o.Conditions
			}
		}
		out = append(out, changed(prev, p.Conditions, fmt.Sprintf("Gateway %s: ", p.ParentRef.Name))...)
	}
	return out
}

// RouteState is what the provider's source metrics say of a route, from
// this controller's entries: a hostname another source holds, or a path
// an older route holds, is a conflict; anything else refused, unresolved or left out is a problem,
// which outweighs it.
func RouteState(parents []gwv1.RouteParentStatus) metrics.SourceState {
	problem, conflict := false, false
	for _, p := range parents {
		for _, c := range p.Conditions {
			if !bad(c) {
				continue
			}
			if c.Reason == string(v1alpha1.ReasonHostnameConflict) || c.Reason == string(ReasonPathConflict) {
				conflict = true
			} else {
				problem = true
			}
		}
	}
	return metrics.StateOf(problem, conflict)
}
