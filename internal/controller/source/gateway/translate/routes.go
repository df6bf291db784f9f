package translate

import (
	"fmt"
	"regexp"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/annotation"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/gatewayapi"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sharing"
)

// path is one path of a route's rule and where it goes: the path as the
// PublicHostname takes it, and the origin URL.
type path struct {
	Type, Path, URL string
}

// route is what the translation learns of one route.
type route struct {
	id     string // "<namespace>/<name>"
	kind   gwv1.Kind
	http2  bool
	status RouteStatus
	// attached: some parent reference attaches it to a listener.
	attached bool
	hosts    []string
	paths    []path
	access   *v1alpha1.Access
	// lb is the load balancing the route's lb-* annotations ask for its
	// one hostname; nil when none.
	lb *v1alpha1.LoadBalancing
	// held are the route's hostnames while its Access annotation cannot
	// be used (see Result.Held).
	held []string
	// dropped says, per rule or hostname left out, why (what cloudflared
	// cannot do): reported as PartiallyInvalid, or Accepted=False when
	// nothing is left.
	dropped []string
	// problem keeps the whole route from being published.
	problem  string
	resolved metav1.Condition
	// keepAll: a backend does not exist; keep are the route's hostnames,
	// whose PublicHostnames stay as they are.
	keepAll bool
	keep    []string
}

// translateRoute decides what one route publishes and its parent entries.
func translateRoute(in Input, ls listeners, r routeObject, address string) *route {
	rt := &route{id: r.meta.Namespace + "/" + r.meta.Name, kind: r.kind, http2: r.http2, status: RouteStatus{Kind: r.kind, Namespace: r.meta.Namespace, Name: r.meta.Name}}
	type verdict struct {
		ref    gwv1.ParentReference
		reason gwv1.RouteConditionReason
		msg    string
	}
	var verdicts []verdict
	for _, ref := range r.parents {
		if !gatewayapi.RefersTo(ref, r.meta.Namespace, in.Gateway) {
			continue
		}
		reason, msg, hosts := attach(in, ls, r, ref, address)
		rt.attached = rt.attached || reason == gwv1.RouteReasonAccepted
		for _, h := range hosts {
			rt.addHost(h)
		}
		verdicts = append(verdicts, verdict{ref: ref, reason: reason, msg: msg})
	}
	rt.rules(in, r)
	accessInvalid := false
	// The Gateway asks for no Access of its own: a route's check stands
	// (annotation.Inherit under no parent).
	c := annotation.ChildAccess(nil, "the Gateway's", r.meta.Annotations)
	a, problem := c.Access, c.Problem
	if problem == "" {
		a, problem = routeAccess(a, r.meta.Namespace, in.Gateway.Namespace)
	}
	if problem != "" {
		rt.problem = problem + "; nothing of the route is published, and its hostnames already published with an Access check stay as they are"
		accessInvalid = true
	} else {
		rt.access = a
	}
	if lb, problem := annotation.RouteLoadBalancing(r.meta.Annotations, rt.hosts); problem != "" && rt.problem == "" {
		// As a missing backend does, a bad lb-* annotation keeps what the
		// route's hostnames publish: never a CNAME instead of the load
		// balancer asked for, nor a working hostname taken down by a typo.
		rt.problem, rt.keepAll = problem, true
	} else {
		rt.lb = lb
	}
	if rt.problem == "" && len(rt.hosts) > 0 && len(rt.paths) == 0 && len(rt.dropped) > 0 {
		rt.problem = "no rule can be published: " + strings.Join(rt.dropped, "; ")
	}
	if rt.problem == "" && len(rt.hosts) == 0 && len(rt.dropped) > 0 {
		rt.problem = "no hostname can be published: " + strings.Join(rt.dropped, "; ")
	}
	if rt.keepAll {
		rt.keep = append(rt.keep, rt.hosts...)
	}
	if accessInvalid {
		rt.held = rt.hosts
	}
	if rt.problem != "" {
		rt.hosts, rt.paths = nil, nil
	}
	for _, v := range verdicts {
		rt.status.Parents = append(rt.status.Parents, rt.parentStatus(v.ref, v.reason, v.msg, r.meta.Generation))
	}
	if !rt.attached {
		rt.hosts, rt.paths, rt.keep, rt.held = nil, nil, nil, nil
	}
	return rt
}

func (rt *route) addHost(h gatewayapi.Hostname) {
	switch {
	case h.Problem != "":
		note := fmt.Sprintf("hostname %s: %s", h.Name, h.Problem)
		for _, d := range rt.dropped {
			if d == note {
				return
			}
		}
		rt.dropped = append(rt.dropped, note)
	case !contains(rt.hosts, h.Name):
		rt.hosts = append(rt.hosts, h.Name)
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// attach is the verdict on one parent reference naming the Gateway, and
// the hostnames the route serves through it.
func attach(in Input, ls listeners, r routeObject, ref gwv1.ParentReference, address string) (gwv1.RouteConditionReason, string, []gatewayapi.Hostname) {
	var selected, refusals []string
	var hosts []gatewayapi.Hostname
	admitted := false
	for _, l := range ls {
		if !gatewayapi.Selects(ref, l.spec) {
			continue
		}
		selected = append(selected, string(l.spec.Name))
		ok, why := l.admits(r.kind, r.meta.Namespace, in.Gateway.Namespace, in.Namespaces[r.meta.Namespace])
		if !ok {
			refusals = append(refusals, why)
			continue
		}
		admitted = true
		if !gatewayapi.Intersects(r.hostnames, l.spec.Hostname) {
			continue
		}
		l.attached++
		hosts = append(hosts, onAddress(gatewayapi.EffectiveHostnames(r.hostnames, l.spec.Hostname), address)...)
	}
	switch {
	case len(selected) == 0:
		return gwv1.RouteReasonNoMatchingParent, fmt.Sprintf("Gateway %s has no listener this parent reference selects (sectionName %q, port %d)", in.Gateway.Name, ptr.Deref(ref.SectionName, ""), ptr.Deref(ref.Port, 0)), nil
	case !admitted:
		return gwv1.RouteReasonNotAllowedByListeners, strings.Join(refusals, "; "), nil
	case len(hosts) == 0:
		return gwv1.RouteReasonNoMatchingListenerHostname, "no hostname of the route matches a listener's hostname", nil
	}
	return gwv1.RouteReasonAccepted, "", hosts
}

// onAddress serves a route that names no hostname, on a listener that
// names none, on the Gateway's own hostname (GatewayParameters'
// addressDomain), when it has one: a request reaches the tunnel only
// through a hostname of the account's zones.
func onAddress(hosts []gatewayapi.Hostname, address string) []gatewayapi.Hostname {
	if address == "" {
		return hosts
	}
	for i, h := range hosts {
		if h.Name == gatewayapi.AnyHostname {
			hosts[i] = gatewayapi.Hostname{Name: address}
		}
	}
	return hosts
}

// rules reads the route's rules: each path of a rule whose every part
// cloudflared can honour goes to the rule's one backend.
func (rt *route) rules(in Input, r routeObject) {
	rt.resolved = metav1.Condition{Type: string(gwv1.RouteConditionResolvedRefs), Status: metav1.ConditionTrue, Reason: string(gwv1.RouteReasonResolvedRefs), Message: "every backend resolves", ObservedGeneration: r.meta.Generation}
	for _, rule := range r.rules {
		if rule.why != "" {
			rt.dropped = append(rt.dropped, rule.name+": "+rule.why)
			continue
		}
		url, reason, why := backend(in, r, rule.refs)
		if reason != "" {
			// Gateway API: a request a rule with an invalid backend
			// would have taken is answered 500, never passed on to
			// another rule.
			rt.unresolved(reason, rule.name+": "+why)
			url = invalidBackend
		}
		for _, p := range rule.paths {
			p.URL = url
			rt.paths = append(rt.paths, p)
		}
	}
}

// invalidBackend answers the requests of a rule whose backend does not
// resolve, as Gateway API prescribes.
const invalidBackend = "http_status:500"

// unresolved records a backend that does not resolve. A Service that does
// not exist (a typo) keeps what the route's hostnames already publish (see
// Result.Keep); a refused reference does not.
func (rt *route) unresolved(reason gwv1.RouteConditionReason, msg string) {
	if rt.resolved.Status == metav1.ConditionTrue {
		rt.resolved.Status, rt.resolved.Reason, rt.resolved.Message = metav1.ConditionFalse, string(reason), msg
	} else {
		rt.resolved.Message += "; " + msg
	}
	rt.keepAll = rt.keepAll || reason == gwv1.RouteReasonBackendNotFound
}

// unsupported says what of a rule cloudflared cannot do: filters, timeouts,
// retries, session persistence, and splitting traffic by weight.
func unsupported(rule *gwv1.HTTPRouteRule) string {
	var what []string
	if len(rule.Filters) > 0 {
		what = append(what, "filters")
	}
	for _, b := range rule.BackendRefs {
		if len(b.Filters) > 0 {
			what = append(what, "backendRefs[].filters")
			break
		}
	}
	if rule.Timeouts != nil {
		what = append(what, "timeouts")
	}
	if rule.Retry != nil {
		what = append(what, "retry")
	}
	if rule.SessionPersistence != nil {
		what = append(what, "sessionPersistence")
	}
	if weighted(rule.BackendRefs) > 1 {
		what = append(what, "more than one backend with a weight (cloudflared sends a path to one origin)")
	}
	if len(what) == 0 {
		return ""
	}
	return strings.Join(what, ", ") + " not supported; the rule is not published"
}

func weighted(refs []gwv1.HTTPBackendRef) int {
	n := 0
	for _, b := range refs {
		if ptr.Deref(b.Weight, 1) > 0 {
			n++
		}
	}
	return n
}

// matches turns a rule's matches into paths: no match is every path.
// Header, query parameter and method matches cannot be honoured.
func matches(ms []gwv1.HTTPRouteMatch) ([]path, string) {
	if len(ms) == 0 {
		return []path{{Type: v1alpha1.PathTypePrefix, Path: "/"}}, ""
	}
	var out []path
	for _, m := range ms {
		var what []string
		if len(m.Headers) > 0 {
			what = append(what, "header matches")
		}
		if len(m.QueryParams) > 0 {
			what = append(what, "query parameter matches")
		}
		if m.Method != nil {
			what = append(what, "method matches")
		}
		if len(what) > 0 {
			return nil, strings.Join(what, ", ") + " not supported (cloudflared matches hostname and path only); the rule is not published"
		}
		p, why := matchPath(m.Path)
		if why != "" {
			return nil, why
		}
		out = append(out, p)
	}
	return out, ""
}

func matchPath(m *gwv1.HTTPPathMatch) (path, string) {
	if m == nil {
		return path{Type: v1alpha1.PathTypePrefix, Path: "/"}, ""
	}
	value := ptr.Deref(m.Value, "/")
	switch ptr.Deref(m.Type, gwv1.PathMatchPathPrefix) {
	case gwv1.PathMatchPathPrefix:
		return path{Type: v1alpha1.PathTypePrefix, Path: value}, ""
	case gwv1.PathMatchExact:
		return path{Type: v1alpha1.PathTypeExact, Path: value}, ""
	case gwv1.PathMatchRegularExpression:
		// cloudflared matches a path's expression unanchored; Gateway API
		// implementations match the whole path, so it is anchored here.
		re := "^(?:" + value + ")$"
		if _, err := regexp.Compile(re); err != nil {
			return path{}, fmt.Sprintf("path %q is not a regular expression cloudflared can use (Go RE2): %v; the rule is not published", value, err)
		}
		return path{Type: v1alpha1.PathTypeRegularExpression, Path: re}, ""
	}
	return path{}, fmt.Sprintf("path match type %q is not supported; the rule is not published", ptr.Deref(m.Type, ""))
}

// backend resolves a rule's one weighted backend to an origin URL, or says
// why it does not resolve (a Gateway API ResolvedRefs reason). A rule with
// no backend answers 500, as Gateway API prescribes.
func backend(in Input, r routeObject, refs []gwv1.BackendRef) (string, gwv1.RouteConditionReason, string) {
	var ref *gwv1.BackendRef
	for i := range refs {
		if ptr.Deref(refs[i].Weight, 1) > 0 {
			ref = &refs[i]
		}
	}
	if ref == nil {
		return "http_status:500", "", ""
	}
	group, kind := string(ptr.Deref(ref.Group, "")), string(ptr.Deref(ref.Kind, "Service"))
	if group != "" || kind != "Service" {
		return "", gwv1.RouteReasonInvalidKind, fmt.Sprintf("backend %s of kind %s/%s: only Services are supported", ref.Name, group, kind)
	}
	ns := string(ptr.Deref(ref.Namespace, gwv1.Namespace(r.meta.Namespace)))
	if ns != r.meta.Namespace && !sharing.ServiceGrantedTo(in.Grants[ns], sharing.From{Group: gatewayapi.Group, Kind: string(r.kind), Namespace: r.meta.Namespace}, string(ref.Name)) {
		return "", gwv1.RouteReasonRefNotPermitted, fmt.Sprintf("Service %s/%s is in another namespace, and no ReferenceGrant there allows %ss of namespace %s to use it", ns, ref.Name, r.kind, r.meta.Namespace)
	}
	svc := in.Services[types.NamespacedName{Namespace: ns, Name: string(ref.Name)}]
	if svc == nil {
		return "", gwv1.RouteReasonBackendNotFound, fmt.Sprintf("Service %s/%s does not exist", ns, ref.Name)
	}
	port := int32(ptr.Deref(ref.Port, 0))
	for _, p := range svc.Spec.Ports {
		if p.Port != port {
			continue
		}
		dial, why := publish.DialPort(svc, port, in.EndpointSlices[types.NamespacedName{Namespace: ns, Name: string(ref.Name)}])
		if why != "" {
			return "", gwv1.RouteReasonBackendNotFound, fmt.Sprintf("Service %s/%s %s", ns, ref.Name, why)
		}
		if !r.http2 {
			return originURL(scheme(ptr.Deref(p.AppProtocol, "")), string(ref.Name), ns, in.ClusterDomain, dial), "", ""
		}
		if why := http2Port(p); why != "" {
			return "", gwv1.RouteReasonUnsupportedProtocol, fmt.Sprintf("Service %s/%s port %d: %s", ns, ref.Name, port, why)
		}
		return originURL("https", string(ref.Name), ns, in.ClusterDomain, dial), "", ""
	}
	return "", gwv1.RouteReasonBackendNotFound, fmt.Sprintf("Service %s/%s has no port %d", ns, ref.Name, port)
}

// scheme of a Service port's appProtocol: https for "https", else http.
func scheme(appProtocol string) string {
	if appProtocol == "https" {
		return "https"
	}
	return "http"
}

func originURL(scheme, name, ns, clusterDomain string, port int32) string {
	if clusterDomain == "" {
		clusterDomain = "cluster.local"
	}
	return fmt.Sprintf("%s://%s.%s.svc.%s:%d", scheme, name, ns, clusterDomain, port)
}

// parentStatus is the route's entry for one parent reference.
func (rt *route) parentStatus(ref gwv1.ParentReference, reason gwv1.RouteConditionReason, msg string, generation int64) gwv1.RouteParentStatus {
	accepted := metav1.Condition{Type: string(gwv1.RouteConditionAccepted), Status: metav1.ConditionTrue, Reason: string(gwv1.RouteReasonAccepted), ObservedGeneration: generation,
		Message: fmt.Sprintf("attached; hostnames %s", strings.Join(rt.hosts, ", "))}
	conds := []metav1.Condition{}
	switch {
	case reason != gwv1.RouteReasonAccepted:
		accepted.Status, accepted.Reason, accepted.Message = metav1.ConditionFalse, string(reason), msg
	case rt.problem != "":
		accepted.Status, accepted.Reason, accepted.Message = metav1.ConditionFalse, string(gwv1.RouteReasonUnsupportedValue), rt.problem
	case len(rt.dropped) > 0:
		conds = append(conds, metav1.Condition{Type: string(gwv1.RouteConditionPartiallyInvalid), Status: metav1.ConditionTrue, Reason: string(gwv1.RouteReasonUnsupportedValue), ObservedGeneration: generation,
			Message: "left out: " + strings.Join(rt.dropped, "; ")})
	}
	conds = append([]metav1.Condition{accepted, rt.resolved}, conds...)
	return gwv1.RouteParentStatus{ParentRef: ref, ControllerName: ControllerName, Conditions: conds}
}
