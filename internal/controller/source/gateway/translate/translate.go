// Package translate turns a Gateway of this provider's GatewayClass and the
// HTTPRoutes and GRPCRoutes attached to it into what the Gateway is: one CloudflareTunnel
// (made for it, or named by its tunnels.cloudflare.com/tunnel annotation),
// one PublicHostname per concrete hostname its routes serve, each with the
// routes' paths sent straight to their backend Services, and the status of
// the Gateway, its listeners and every route's parent entry. It is pure: the
// controller reads the world, this package decides.
package translate

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
)

// ControllerName is the controller name of this provider's GatewayClasses.
const ControllerName gwv1.GatewayController = "tunnels.cloudflare.com/gateway-controller"

// LabelGateway names the Gateway on what is made for it.
const LabelGateway = "tunnels.cloudflare.com/gateway"

// Input is what one translation needs.
type Input struct {
	Gateway *gwv1.Gateway
	// HTTPRoutes naming the Gateway among their parents, of any namespace.
	HTTPRoutes []gwv1.HTTPRoute
	// GRPCRoutes naming the Gateway among their parents, of any namespace.
	GRPCRoutes []gwv1.GRPCRoute
	// Namespaces are the labels of the routes' namespaces, for listeners
	// that select namespaces by label.
	Namespaces map[string]map[string]string
	// Services are the backends the routes name that exist.
	Services map[types.NamespacedName]*corev1.Service
	// EndpointSlices of the headless ones: the ports their Pods listen on.
	EndpointSlices map[types.NamespacedName][]discoveryv1.EndpointSlice
	// Grants are the ReferenceGrants of the backends' namespaces.
	Grants map[string][]gwv1beta1.ReferenceGrant
	// ClusterDomain of Service DNS names; "" is cluster.local.
	ClusterDomain string
	// Class is the Gateway's GatewayClass, whose parametersRef applies
	// when the Gateway names no parameters of its own.
	Class *gwv1.GatewayClass
	// Certificates are the Secrets the listeners' certificateRefs name
	// that exist (see CertificateRefs).
	Certificates map[types.NamespacedName]*corev1.Secret
	// Parameters are the GatewayParameters the Gateway or its class names
	// (see ParametersOf); nil when they name none, or none that exist.
	Parameters *v1alpha1.GatewayParameters
}

// RouteStatus is this controller's parent entries of one route.
type RouteStatus struct {
	// Kind of the route: HTTPRoute or GRPCRoute.
	Kind            gwv1.Kind
	Namespace, Name string
	// Hostnames the route publishes through the Gateway.
	Hostnames []string
	Parents   []gwv1.RouteParentStatus
}

// Result is what a Gateway should be.
type Result struct {
	// Tunnel is the CloudflareTunnel of the Gateway's namespace that the
	// Gateway is.
	Tunnel string
	// MakeTunnel is the CloudflareTunnel made for the Gateway; nil when
	// the Gateway names an existing one.
	MakeTunnel *v1alpha1.CloudflareTunnel
	// Accepted is the Gateway's Accepted condition.
	Accepted metav1.Condition
	// Listeners are the listeners' status, without Programmed (which
	// waits on the tunnel: see Status).
	Listeners []gwv1.ListenerStatus
	// Published are the PublicHostnames wanted.
	Published []*v1alpha1.PublicHostname
	// KeepAll: the Gateway is not accepted; nothing new is published and
	// nothing published goes.
	KeepAll bool
	// Keep are hostnames whose PublicHostname, if it exists, stays as it
	// is: a route serving them names a backend that does not exist (a typo
	// loses nothing). One that does not exist yet is made as Published
	// says, its rule for the missing backend answering 500.
	Keep []string
	// Routes are the parent entries this controller writes of the
	// HTTPRoutes.
	Routes []RouteStatus
	// GRPCRoutes are the parent entries of the GRPCRoutes.
	GRPCRoutes []RouteStatus
	// DNS says who writes the hostnames' DNS records.
	DNS DNS
	// Address is the Gateway's own hostname (GatewayParameters'
	// addressDomain); "" when it has none.
	Address string
	// Held are hostnames whose PublicHostname stays as it is if it has a
	// required Access check (see Protected), and goes otherwise: a route
	// naming them has an Access annotation that cannot be used, or their
	// routes ask for different checks. Security fails closed: nothing is
	// published without the check asked for, and a protected hostname is
	// not taken down by a typo.
	Held []string
}

// Translate decides what a Gateway is.
func Translate(in Input) Result {
	gw := in.Gateway
	ls := newListeners(gw)
	ls.checkCertificates(in)
	s := settingsOf(in, ls)
	res := Result{Tunnel: TunnelName(gw), MakeTunnel: tunnelFor(gw, s), DNS: s.dns, Address: s.address}
	res.Accepted = ls.acceptedWithListeners(gatewayAccepted(gw, s))
	hosts, claims := newHosts(), kindClaims{}
	var statuses []RouteStatus
	served := map[string]bool{}
	for _, r := range routeObjects(in) { // oldest first
		rt := translateRoute(in, ls, r, s.address)
		claims.settleKinds(rt)
		hosts.add(rt)
		rt.status.Hostnames = rt.hosts
		statuses = append(statuses, rt.status)
		res.Keep = append(res.Keep, keptBy(rt, served)...)
	}
	hosts.settle(&statuses)
	res.Routes, res.GRPCRoutes = byKind(statuses)
	res.Published = hosts.publicHostnames(gw, res.Tunnel, s.dns.publicHostnameDNS())
	res.Held = hosts.held()
	res.Listeners = ls.status(gw)
	if res.Accepted.Status != metav1.ConditionTrue {
		res.KeepAll, res.Published = true, nil
	}
	slices.Sort(res.Keep)
	res.Keep = slices.Compact(res.Keep)
	return res
}

// keptBy are the hostnames a route's missing backend keeps as they are
// published: only those no older route serves, since a newer route never
// freezes a hostname an older one holds. It marks the route's hostnames
// served.
func keptBy(rt *route, served map[string]bool) []string {
	var out []string
	for _, h := range rt.keep {
		if !served[h] {
			out = append(out, h)
		}
	}
	for _, h := range rt.hosts {
		served[h] = true
	}
	return out
}

// TunnelName is the CloudflareTunnel a Gateway is: the one its
// tunnels.cloudflare.com/tunnel annotation names, else the one made for it,
// named after it.
func TunnelName(gw *gwv1.Gateway) string {
	if n := gw.Annotations[v1alpha1.AnnotationTunnel]; n != "" {
		return n
	}
	return gw.Name
}

func condition(t string, ok bool, reason, msg string, generation int64) metav1.Condition {
	s := metav1.ConditionTrue
	if !ok {
		s = metav1.ConditionFalse
	}
	return metav1.Condition{Type: t, Status: s, Reason: reason, Message: msg, ObservedGeneration: generation}
}

// byKind splits the routes' entries into the HTTPRoutes' and the
// GRPCRoutes'; a route naming the Gateway in none of its parent
// references has none.
func byKind(sts []RouteStatus) (http, grpc []RouteStatus) {
	for _, st := range sts {
		switch {
		case len(st.Parents) == 0:
		case st.Kind == KindGRPCRoute:
			grpc = append(grpc, st)
		default:
			http = append(http, st)
		}
	}
	return http, grpc
}
