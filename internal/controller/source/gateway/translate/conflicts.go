package translate

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// markConflicts marks the listeners that are not distinct: the same
// protocol and hostname. Cloudflare's edge listens on its own ports, so a
// listener's port tells two of them apart for no request: two HTTP
// listeners of hostname a.example.com on ports 80 and 8080 would both take
// every request for it. Gateway API forbids picking a winner: every one of
// them is Conflicted and takes no route; the others work as before.
func (ls listeners) markConflicts() {
	byKey := map[string][]*listener{}
	var keys []string
	for _, l := range ls {
		if l.problem != "" {
			continue // takes no route anyway (an unsupported protocol)
		}
		k := string(l.spec.Protocol) + " " + string(ptr.Deref(l.spec.Hostname, ""))
		if _, seen := byKey[k]; !seen {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], l)
	}
	for _, k := range keys {
		group := byKey[k]
		if len(group) < 2 {
			continue
		}
		names := make([]string, 0, len(group))
		for _, l := range group {
			names = append(names, string(l.spec.Name))
		}
		host := string(ptr.Deref(group[0].spec.Hostname, ""))
		if host == "" {
			host = "(any)"
		}
		for _, l := range group {
			l.conflicted = true
			l.problem = fmt.Sprintf("listeners %s have the same protocol %s and hostname %s (their ports do not tell them apart: Cloudflare's edge listens on its own); none of them takes routes until their hostnames differ",
				strings.Join(names, ", "), l.spec.Protocol, host)
			l.reason = string(gwv1.ListenerReasonHostnameConflict)
		}
	}
}

// conflictedCondition is a conflicted listener's Conflicted condition.
func (l *listener) conflictedCondition(generation int64) metav1.Condition {
	return condition(string(gwv1.ListenerConditionConflicted), true, string(gwv1.ListenerReasonHostnameConflict), l.problem, generation)
}

// acceptedWithListeners is the Gateway's Accepted condition once its
// listeners are known: Gateway API requires ListenersNotValid when some
// are not valid (conflicted, or not accepted: an unsupported protocol),
// True while another listener still works, False when none does.
func (ls listeners) acceptedWithListeners(accepted metav1.Condition) metav1.Condition {
	if accepted.Status != metav1.ConditionTrue {
		return accepted
	}
	var invalid, working []string
	for _, l := range ls {
		switch {
		case l.conflicted || l.problem != "":
			invalid = append(invalid, string(l.spec.Name))
		default:
			working = append(working, string(l.spec.Name))
		}
	}
	if len(invalid) == 0 {
		return accepted
	}
	accepted.Reason = string(gwv1.GatewayReasonListenersNotValid)
	if len(working) == 0 {
		accepted.Status = metav1.ConditionFalse
		accepted.Message = fmt.Sprintf("no listener is valid (%s): each is conflicted with another or not accepted (status.listeners says why); nothing new is published, and what is published stays", strings.Join(invalid, ", "))
		return accepted
	}
	accepted.Message += fmt.Sprintf("; listeners %s are not valid and take no routes (status.listeners says why); listeners %s work", strings.Join(invalid, ", "), strings.Join(working, ", "))
	return accepted
}
