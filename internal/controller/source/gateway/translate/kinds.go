package translate

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/gatewayapi"
)

// Route kinds a listener of this provider's Gateways supports.
const (
	KindGRPCRoute gwv1.Kind = "GRPCRoute"
)

// routeObject is what the translation reads of a route of either kind:
// the rules already read into paths, or why cloudflared cannot honour them.
type routeObject struct {
	kind      gwv1.Kind
	meta      *metav1.ObjectMeta
	parents   []gwv1.ParentReference
	hostnames []gwv1.Hostname
	rules     []ruleSpec
	// http2: cloudflared speaks HTTP/2 to the backends (gRPC), which it
	// does only over TLS.
	http2 bool
}

// ruleSpec is one rule: its paths and its backends, or why it is left out.
type ruleSpec struct {
	name  string
	why   string
	paths []path
	refs  []gwv1.BackendRef
}

func ruleName(i int, name *gwv1.SectionName) string {
	if name != nil {
		return fmt.Sprintf("rule %d (%s)", i, *name)
	}
	return fmt.Sprintf("rule %d", i)
}

func fromHTTP(r *gwv1.HTTPRoute) routeObject {
	o := routeObject{kind: KindHTTPRoute, meta: &r.ObjectMeta, parents: r.Spec.ParentRefs, hostnames: r.Spec.Hostnames}
	for i := range r.Spec.Rules {
		rule := &r.Spec.Rules[i]
		rs := ruleSpec{name: ruleName(i, rule.Name), why: unsupported(rule)}
		if rs.why == "" {
			rs.paths, rs.why = matches(rule.Matches)
		}
		for _, b := range rule.BackendRefs {
			rs.refs = append(rs.refs, b.BackendRef)
		}
		o.rules = append(o.rules, rs)
	}
	return o
}

// fromGRPC reads a GRPCRoute: a rule that matches every call (no match,
// or matches that name nothing) sends the hostname to its one backend.
// cloudflared matches a request by hostname and path only: header matches
// cannot be honoured, and method matches are not translated into paths.
func fromGRPC(r *gwv1.GRPCRoute) routeObject {
	o := routeObject{kind: KindGRPCRoute, meta: &r.ObjectMeta, parents: r.Spec.ParentRefs, hostnames: r.Spec.Hostnames, http2: true}
	for i := range r.Spec.Rules {
		rule := &r.Spec.Rules[i]
		rs := ruleSpec{name: ruleName(i, rule.Name), why: grpcUnsupported(rule)}
		if rs.why == "" {
			rs.paths = []path{{Type: v1alpha1.PathTypePrefix, Path: "/"}}
		}
		for _, b := range rule.BackendRefs {
			rs.refs = append(rs.refs, b.BackendRef)
		}
		o.rules = append(o.rules, rs)
	}
	return o
}

// grpcUnsupported says what of a GRPCRoute rule cloudflared cannot do.
func grpcUnsupported(rule *gwv1.GRPCRouteRule) string {
	var what []string
	for _, m := range rule.Matches {
		if m.Method != nil && !slices.Contains(what, "method matches") {
			what = append(what, "method matches")
		}
		if len(m.Headers) > 0 && !slices.Contains(what, "header matches") {
			what = append(what, "header matches")
		}
	}
	if len(rule.Filters) > 0 {
		what = append(what, "filters")
	}
	if slices.ContainsFunc(rule.BackendRefs, func(b gwv1.GRPCBackendRef) bool { return len(b.Filters) > 0 }) {
		what = append(what, "backendRefs[].filters")
	}
	if rule.SessionPersistence != nil {
		what = append(what, "sessionPersistence")
	}
	n := 0
	for _, b := range rule.BackendRefs {
		if ptr.Deref(b.Weight, 1) > 0 {
			n++
		}
	}
	if n > 1 {
		what = append(what, "more than one backend with a weight (cloudflared sends a hostname to one origin)")
	}
	if len(what) == 0 {
		return ""
	}
	return strings.Join(what, ", ") + " not supported (cloudflared matches a gRPC call by hostname only); the rule is not published"
}

// routeObjects are the routes of both kinds, oldest first: the order
// Gateway API settles every conflict between routes in.
func routeObjects(in Input) []routeObject {
	var out []routeObject
	for i := range in.HTTPRoutes {
		out = append(out, fromHTTP(&in.HTTPRoutes[i]))
	}
	for i := range in.GRPCRoutes {
		out = append(out, fromGRPC(&in.GRPCRoutes[i]))
	}
	slices.SortStableFunc(out, func(a, b routeObject) int { return gatewayapi.OlderFirst(a.meta, b.meta) })
	return out
}

// kindClaims are the hostnames an accepted route of each kind serves.
// Gateway API accepts only one of an HTTPRoute and a GRPCRoute whose
// hostnames meet, the older; and a hostname of this provider's is one
// origin protocol, HTTP/2 or not, for all its paths.
type kindClaims map[string]*route

// settleKinds refuses rt when a route of the other kind, older, already
// serves one of its hostnames; otherwise rt claims its hostnames.
func (c kindClaims) settleKinds(rt *route) {
	for _, h := range rt.hosts {
		if other, ok := c[h]; ok && other.kind != rt.kind {
			rt.refuse(gwv1.RouteConditionReason(v1alpha1.ReasonHostnameConflict), fmt.Sprintf("hostname %s is served by %s, older: Gateway API accepts only one of an HTTPRoute and a GRPCRoute whose hostnames meet; nothing of this route is published", h, rt.name(other)))
			return
		}
	}
	for _, h := range rt.hosts {
		if _, ok := c[h]; !ok {
			c[h] = rt
		}
	}
}

// refuse takes back what the route would publish, and says why on every
// parent entry that accepted it.
func (rt *route) refuse(reason gwv1.RouteConditionReason, msg string) {
	rt.hosts, rt.paths, rt.keep = nil, nil, nil
	for i := range rt.status.Parents {
		p := &rt.status.Parents[i]
		if p.Conditions[0].Status != metav1.ConditionTrue {
			continue
		}
		p.Conditions[0].Status, p.Conditions[0].Reason, p.Conditions[0].Message = metav1.ConditionFalse, string(reason), msg
		p.Conditions = slices.DeleteFunc(p.Conditions, func(c metav1.Condition) bool { return c.Type == string(gwv1.RouteConditionPartiallyInvalid) })
	}
}

// http2Port says why a Service port cannot be a gRPC origin: cloudflared
// speaks HTTP/2 to an origin only over TLS, so a port that declares
// cleartext HTTP/2 (appProtocol kubernetes.io/h2c) cannot be reached.
func http2Port(p corev1.ServicePort) string {
	if ptr.Deref(p.AppProtocol, "") == "kubernetes.io/h2c" {
		return "appProtocol kubernetes.io/h2c is cleartext HTTP/2, which cloudflared does not speak to an origin (HTTP/2 only over TLS); serve gRPC over TLS on the port"
	}
	return ""
}
