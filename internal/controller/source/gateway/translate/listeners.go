package translate

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/gatewayapi"
)

// KindHTTPRoute is a route kind a listener of this provider's Gateways
// supports (KindGRPCRoute the other).
const KindHTTPRoute gwv1.Kind = "HTTPRoute"

// listener is one listener and what the translation learns of it.
type listener struct {
	spec     *gwv1.Listener
	kinds    []gwv1.RouteGroupKind
	badKinds []string
	// problem keeps the listener from taking routes (Accepted=False).
	problem, reason string
	// conflicted: another listener has its protocol and hostname.
	conflicted bool
	// certProblem says why its certificate references do not resolve,
	// with the ResolvedRefs reason certReason.
	certProblem, certReason string
	attached                int32
}

type listeners []*listener

func newListeners(gw *gwv1.Gateway) listeners {
	var out listeners
	for i := range gw.Spec.Listeners {
		out = append(out, newListener(&gw.Spec.Listeners[i]))
	}
	out.markConflicts()
	return out
}

func newListener(l *gwv1.Listener) *listener {
	out := &listener{spec: l}
	if l.Protocol != gwv1.HTTPProtocolType && l.Protocol != gwv1.HTTPSProtocolType {
		out.problem, out.reason = fmt.Sprintf("protocol %s is not supported: a tunnel's public hostnames take HTTP and HTTPS", l.Protocol), string(gwv1.ListenerReasonUnsupportedProtocol)
		return out
	}
	if l.AllowedRoutes == nil || len(l.AllowedRoutes.Kinds) == 0 {
		out.kinds = []gwv1.RouteGroupKind{routeKind(KindHTTPRoute), routeKind(KindGRPCRoute)}
		return out
	}
	for _, k := range l.AllowedRoutes.Kinds {
		supported := string(ptr.Deref(k.Group, gatewayapi.Group)) == gatewayapi.Group && (k.Kind == KindHTTPRoute || k.Kind == KindGRPCRoute)
		switch {
		case supported && !kindIn(k.Kind, out.kinds):
			out.kinds = append(out.kinds, routeKind(k.Kind))
		case !supported:
			out.badKinds = append(out.badKinds, string(ptr.Deref(k.Group, gatewayapi.Group))+"/"+string(k.Kind))
		}
	}
	return out
}

// checkCertificates reads whether each listener's certificate references
// resolve.
func (ls listeners) checkCertificates(in Input) {
	for _, l := range ls {
		l.certProblem, l.certReason = certificateProblem(in, l.spec)
	}
}

func routeKind(k gwv1.Kind) gwv1.RouteGroupKind {
	return gwv1.RouteGroupKind{Group: ptr.To(gwv1.Group(gatewayapi.Group)), Kind: k}
}

func kindIn(k gwv1.Kind, kinds []gwv1.RouteGroupKind) bool {
	return slices.ContainsFunc(kinds, func(rk gwv1.RouteGroupKind) bool { return rk.Kind == k })
}

// admits says whether the listener takes routes of the kind and of
// namespace ns of a Gateway of namespace gwNS, or why not.
func (l *listener) admits(kind gwv1.Kind, ns, gwNS string, nsLabels map[string]string) (bool, string) {
	if l.problem != "" {
		return false, fmt.Sprintf("listener %s is not accepted: %s", l.spec.Name, l.problem)
	}
	if !kindIn(kind, l.kinds) {
		return false, fmt.Sprintf("listener %s does not allow %ss (allowedRoutes.kinds)", l.spec.Name, kind)
	}
	from := gwv1.NamespacesFromSame
	var sel *metav1.LabelSelector
	if l.spec.AllowedRoutes != nil && l.spec.AllowedRoutes.Namespaces != nil {
		from = ptr.Deref(l.spec.AllowedRoutes.Namespaces.From, gwv1.NamespacesFromSame)
		sel = l.spec.AllowedRoutes.Namespaces.Selector
	}
	switch from {
	case gwv1.NamespacesFromAll:
		return true, ""
	case gwv1.NamespacesFromSelector:
		s, err := metav1.LabelSelectorAsSelector(sel)
		if err != nil || sel == nil {
			return false, fmt.Sprintf("listener %s selects namespaces with a selector that is not valid", l.spec.Name)
		}
		if s.Matches(labels.Set(nsLabels)) {
			return true, ""
		}
		return false, fmt.Sprintf("listener %s allows routes of the namespaces its selector %s matches; %s is not one", l.spec.Name, s, ns)
	case gwv1.NamespacesFromSame:
		if ns == gwNS {
			return true, ""
		}
		return false, fmt.Sprintf("listener %s allows routes of the Gateway's namespace %s only", l.spec.Name, gwNS)
	}
	return false, fmt.Sprintf("listener %s allows routes from %q, which is not supported", l.spec.Name, from)
}

func (ls listeners) status(gw *gwv1.Gateway) []gwv1.ListenerStatus {
	out := make([]gwv1.ListenerStatus, 0, len(ls))
	for _, l := range ls {
		st := gwv1.ListenerStatus{Name: l.spec.Name, SupportedKinds: slices.Clone(l.kinds), AttachedRoutes: l.attached}
		if st.SupportedKinds == nil {
			st.SupportedKinds = []gwv1.RouteGroupKind{}
		}
		accepted := condition(string(gwv1.ListenerConditionAccepted), true, string(gwv1.ListenerReasonAccepted), acceptedMessage(l.spec), gw.Generation)
		if l.problem != "" {
			accepted = condition(string(gwv1.ListenerConditionAccepted), false, l.reason, l.problem, gw.Generation)
		}
		resolved := condition(string(gwv1.ListenerConditionResolvedRefs), true, string(gwv1.ListenerReasonResolvedRefs), "no references to resolve", gw.Generation)
		switch {
		case len(l.badKinds) > 0:
			resolved = condition(string(gwv1.ListenerConditionResolvedRefs), false, string(gwv1.ListenerReasonInvalidRouteKinds),
				fmt.Sprintf("allowedRoutes.kinds names %s: only HTTPRoute and GRPCRoute (gateway.networking.k8s.io) are supported", strings.Join(l.badKinds, ", ")), gw.Generation)
		case l.certProblem != "":
			resolved = condition(string(gwv1.ListenerConditionResolvedRefs), false, l.certReason, l.certProblem, gw.Generation)
		}
		st.Conditions = []metav1.Condition{accepted, resolved}
		if l.conflicted {
			st.Conditions = append(st.Conditions, l.conflictedCondition(gw.Generation))
		}
		out = append(out, st)
	}
	return out
}

// acceptedMessage says what an accepted listener does, and that its tls is
// not used: Cloudflare terminates TLS at its edge with its own
// certificates.
func acceptedMessage(l *gwv1.Listener) string {
	msg := fmt.Sprintf("%s on port %d: its routes' hostnames are published on the tunnel (Cloudflare's edge listens on its own ports; the port is not used)", l.Protocol, l.Port)
	if l.TLS != nil {
		msg += "; tls is not used: Cloudflare terminates TLS at its edge with the zone's edge certificates, so the listener's certificateRefs are checked (ResolvedRefs) but not used, and its options are ignored"
	}
	return msg
}
