package translate

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/gatewayapi"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
)

// host is one hostname the Gateway's routes serve: the routes' paths
// merged, the oldest route's first (Gateway API gives a path two routes
// name to the oldest), and the Access check of the oldest route, which a
// newer route must ask for too to serve the hostname.
type host struct {
	name  string
	paths []path
	// owner of each path (by pathKey): the oldest route naming it.
	owner  map[string]*route
	access *v1alpha1.Access
	routes []*route
	// lost are the paths newer routes name that an older route holds.
	lost []lostPath
	// refused are newer routes that cannot serve the hostname: they ask
	// for another Access check than the older routes, or their Access
	// annotation cannot be used. The hostname stays as the older routes
	// publish it; a newer route never holds or takes it down.
	refused []refusedRoute
	// http2: its routes are GRPCRoutes, whose backends take HTTP/2.
	http2 bool
	// lb is the load balancing of the oldest route asking for one.
	lb *v1alpha1.LoadBalancing
}

type hosts struct {
	byName map[string]*host
	order  []string
	// holders are, per hostname, the routes whose Access annotation
	// cannot be used: the hostname is held (see Result.Held).
	holders map[string][]*route
}

func newHosts() *hosts { return &hosts{byName: map[string]*host{}, holders: map[string][]*route{}} }

// refusedRoute is a newer route a hostname's older routes keep out, and
// why.
type refusedRoute struct {
	route, holder *route
	why           string
	// reason of the PartiallyInvalid condition; ReasonAccessConflict
	// when empty.
	reason gwv1.RouteConditionReason
}

// add merges an attached route's hostnames and paths. Routes come oldest
// first: a hostname an older route already serves is not held by a newer
// route's unusable Access annotation, nor served by a newer route that
// asks for another Access check.
func (hs *hosts) add(rt *route) {
	for _, name := range rt.held {
		if h, ok := hs.byName[name]; ok {
			h.refused = append(h.refused, refusedRoute{route: rt, holder: h.routes[0], why: "this route's Access annotation cannot be used"})
			continue
		}
		hs.holders[name] = append(hs.holders[name], rt)
	}
	for _, name := range rt.hosts {
		h, ok := hs.byName[name]
		switch {
		case !ok:
			h = &host{name: name, owner: map[string]*route{}, access: rt.access, http2: rt.http2}
			hs.byName[name] = h
			hs.order = append(hs.order, name)
		case len(hs.holders[name]) == 0 && !gatewayapi.SameAccess(h.access, rt.access):
			h.refused = append(h.refused, refusedRoute{route: rt, holder: h.routes[0], why: fmt.Sprintf("this route asks for another Access check (annotation %s and its siblings)", v1alpha1.AnnotationAccessPolicies)})
			continue
		case gatewayapi.OtherLoadBalancing(h.lb, rt.lb):
			h.refused = append(h.refused, refusedRoute{route: rt, holder: h.routes[0], why: fmt.Sprintf("this route asks for other load balancing (annotation %s and its siblings)", v1alpha1.AnnotationLBPool), reason: ReasonLoadBalancingConflict})
			continue
		}
		if h.lb == nil {
			h.lb = rt.lb
		}
		h.routes = append(h.routes, rt)
		for _, p := range rt.paths {
			key := pathKey(p)
			if holder, taken := h.owner[key]; taken {
				if holder != rt {
					h.lost = append(h.lost, lostPath{route: rt, path: p, holder: holder})
				}
				continue
			}
			h.owner[key] = rt
			h.paths = append(h.paths, p)
		}
	}
}

// lostPath is a path a route names that an older route of the hostname
// holds: Gateway API gives it to the oldest route.
type lostPath struct {
	route, holder *route
	path          path
}

// pathKey is what a path matches, as the tunnel's rule will have it: a
// Prefix's trailing slashes do not count ("/api/" is "/api", "/" and ""
// are every path), so two spellings of one path are one path.
func pathKey(p path) string {
	if p.Type == v1alpha1.PathTypePrefix {
		return p.Type + " " + strings.TrimRight(p.Path, "/")
	}
	return p.Type + " " + p.Path
}

// ReasonPathConflict (PartiallyInvalid=True): a path of the route is an
// older route's on the same hostname; the route's rule for it is not
// published.
const ReasonPathConflict gwv1.RouteConditionReason = "PathConflict"

// settlePaths tells each route that lost a path to an older route.
func (h *host) settlePaths(statuses *[]RouteStatus) {
	for _, l := range h.lost {
		msg := fmt.Sprintf("hostname %s: path %s %s is held by %s, older (Gateway API gives a path to the oldest route); this route's rule for it is not published", h.name, l.path.Type, publish.Clip(l.path.Path), l.route.name(l.holder))
		for i := range *statuses {
			st := &(*statuses)[i]
			if st.Kind == l.route.kind && st.Namespace+"/"+st.Name == l.route.id {
				conflicted(st, ReasonPathConflict, msg)
			}
		}
	}
}

// name names route other to rt's namespace: by kind and name when it is of
// rt's namespace; another namespace's route is another tenant's, and not
// named.
func (rt *route) name(other *route) string {
	if other.status.Namespace == rt.status.Namespace {
		return string(other.kind) + " " + other.status.Name
	}
	return "a route of another namespace"
}

// ReasonAccessConflict (PartiallyInvalid=True): an older route serves a
// hostname of the route with another Access check, or the route's Access
// annotation cannot be used while an older route serves it; the route's
// rules for it are not published, and the hostname stays as the older
// route publishes it.
const ReasonAccessConflict gwv1.RouteConditionReason = "AccessConflict"

// ReasonLoadBalancingConflict (PartiallyInvalid=True): an older route
// load-balances a hostname of the route under another pool or load
// balancer; the route's rules for it are not published.
const ReasonLoadBalancingConflict gwv1.RouteConditionReason = "LoadBalancingConflict"

// settle tells the routes of a hostname the paths they lost to older
// routes, that an older route's unusable Access annotation holds it, and
// the newer routes it refused why.
func (hs *hosts) settle(statuses *[]RouteStatus) {
	for _, name := range hs.order {
		h := hs.byName[name]
		h.settlePaths(statuses)
		if holders := hs.holders[name]; len(holders) > 0 {
			for _, rt := range h.routes {
				markRoute(statuses, rt, fmt.Sprintf("hostname %s: the Access annotation of %s, older, cannot be used; it is not published until it is corrected", name, rt.names(holders)))
			}
		}
		for _, r := range h.refused {
			msg := fmt.Sprintf("hostname %s is served by %s, older: %s, and Gateway API gives a hostname to the oldest route; this route's rules for it are not published, and the hostname stays as the older route publishes it", name, r.route.name(r.holder), r.why)
			for i := range *statuses {
				if st := &(*statuses)[i]; st.Kind == r.route.kind && st.Namespace+"/"+st.Name == r.route.id {
					conflicted(st, cmp.Or(r.reason, ReasonAccessConflict), msg)
				}
			}
		}
	}
}

// names names others to rt's namespace (name): another tenant's routes
// are counted, never named.
func (rt *route) names(others []*route) string {
	var out []string
	foreign := 0
	for _, o := range others {
		if o.status.Namespace == rt.status.Namespace {
			out = append(out, rt.name(o))
		} else {
			foreign++
		}
	}
	switch foreign {
	case 0:
	case 1:
		out = append(out, "a route of another namespace")
	default:
		out = append(out, fmt.Sprintf("%d routes of other namespaces", foreign))
	}
	return strings.Join(out, " and ")
}

// markRoute adds msg to the PartiallyInvalid condition of route rt.
func markRoute(statuses *[]RouteStatus, rt *route, msg string) {
	for i := range *statuses {
		st := &(*statuses)[i]
		if st.Kind == rt.kind && st.Namespace+"/"+st.Name == rt.id {
			partiallyInvalid(st, msg)
		}
	}
}

// partiallyInvalid adds msg to every accepted parent entry's
// PartiallyInvalid condition.
func partiallyInvalid(st *RouteStatus, msg string) {
	conflicted(st, gwv1.RouteReasonUnsupportedValue, msg)
}

// conflicted adds msg to every accepted parent entry's PartiallyInvalid
// condition, made with reason when the entry has none yet.
func conflicted(st *RouteStatus, reason gwv1.RouteConditionReason, msg string) {
	for i := range st.Parents {
		p := &st.Parents[i]
		if p.Conditions[0].Status != metav1.ConditionTrue {
			continue
		}
		idx := slices.IndexFunc(p.Conditions, func(c metav1.Condition) bool { return c.Type == string(gwv1.RouteConditionPartiallyInvalid) })
		if idx < 0 {
			p.Conditions = append(p.Conditions, metav1.Condition{Type: string(gwv1.RouteConditionPartiallyInvalid), Status: metav1.ConditionTrue,
				Reason: string(reason), ObservedGeneration: p.Conditions[0].ObservedGeneration, Message: "left out: " + msg})
			continue
		}
		p.Conditions[idx].Message += "; " + msg
	}
}

// publicHostnames are the PublicHostnames of the hostnames: a path "/"
// prefix is the hostname's origin, the others its paths (the
// PublicHostname orders them as cloudflared needs: exact before prefix,
// longer first). A hostname with no path "/" answers 404 elsewhere, the
// tunnel's catch-all.
func (hs *hosts) publicHostnames(gw *gwv1.Gateway, tunnel, dns string) []*v1alpha1.PublicHostname {
	names := slices.Clone(hs.order)
	sort.Strings(names)
	var out []*v1alpha1.PublicHostname
	for _, name := range names {
		h := hs.byName[name]
		if len(h.paths) == 0 || len(hs.holders[name]) > 0 {
			continue
		}
		ph := publicHostname(gw, tunnel, name, h.access, dns)
		ph.Spec.LoadBalancing = h.lb.DeepCopy()
		if h.http2 {
			ph.Spec.OriginRequest = &v1alpha1.OriginOptions{HTTP2Origin: ptr.To(true)}
		}
		for _, p := range h.paths {
			if p.Type == v1alpha1.PathTypePrefix && strings.TrimRight(p.Path, "/") == "" {
				if ph.Spec.Origin == nil {
					ph.Spec.Origin = &v1alpha1.Origin{URL: ptr.To(p.URL)}
				}
				continue
			}
			ph.Spec.Paths = append(ph.Spec.Paths, v1alpha1.PathOrigin{Path: p.Path, PathType: p.Type, Origin: v1alpha1.Origin{URL: ptr.To(p.URL)}})
		}
		out = append(out, ph)
	}
	return out
}

// PublicHostnameName is the name of the PublicHostname a Gateway makes for
// a hostname.
func PublicHostnameName(gw *gwv1.Gateway, host string) string {
	return publish.ObjectName(gw.Name, publish.KindPublicHostname, host)
}

func publicHostname(gw *gwv1.Gateway, tunnel, name string, access *v1alpha1.Access, dns string) *v1alpha1.PublicHostname {
	return &v1alpha1.PublicHostname{
		TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.PublicHostnameKind},
		ObjectMeta: metav1.ObjectMeta{
			Name: PublicHostnameName(gw, name), Namespace: gw.Namespace,
			Labels: map[string]string{
				LabelGateway:        publish.LabelValue(gw.Name),
				publish.LabelTunnel: publish.LabelValue(tunnel),
			},
			OwnerReferences: []metav1.OwnerReference{owner(gw)},
		},
		Spec: v1alpha1.PublicHostnameSpec{
			TunnelRef: v1alpha1.TunnelReference{Name: tunnel},
			Hostname:  name,
			Access:    access,
			DNS:       dns,
		},
	}
}

// held are the hostnames not published because of their Access check: the
// oldest route naming them has an annotation that cannot be used.
func (hs *hosts) held() []string {
	var out []string
	for name := range hs.holders {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// Protected says whether a PublicHostname requires an Access check: held,
// it stays as it is (a protected hostname is never taken down by a typo);
// unprotected, it goes (nothing stays open that asks for a check).
func Protected(ph *v1alpha1.PublicHostname) bool {
	return ph.Spec.Access != nil && ptr.Deref(ph.Spec.Access.Required, true)
}
