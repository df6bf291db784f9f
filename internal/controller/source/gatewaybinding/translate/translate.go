// Package translate turns a GatewayBinding, the Gateway listener it names
// and the HTTPRoutes attached to that listener into published hostnames: one
// PublicHostname per concrete hostname that the Gateway's own controller has
// accepted, each sending every request to the Gateway implementation's
// Service, which does the path and header routing. It is pure: the
// controller reads the world, this package decides.
package translate

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/gatewayapi"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sharing"
)

// Labels on the PublicHostnames a binding makes.
const (
	LabelBinding = "tunnels.cloudflare.com/gateway-binding"
	LabelRoute   = "tunnels.cloudflare.com/httproute"
)

// Reasons of the ResolvedRefs and Accepted conditions, as Gateway API names
// them where it has a name.
const (
	ReasonResolved             = "ResolvedRefs"
	ReasonGatewayNotFound      = "GatewayNotFound"
	ReasonGatewayClassNotFound = "GatewayClassNotFound"
	ReasonListenerNotFound     = "ListenerNotFound"
	ReasonRefNotPermitted      = "RefNotPermitted"
	ReasonBackendNotFound      = "BackendNotFound"
	ReasonAccepted             = "Accepted"
	ReasonUnsupportedProtocol  = "UnsupportedProtocol"
)

// HostnameNotAccepted is the state of a hostname whose route the Gateway's
// controller has not accepted (or not yet accepted as it is now).
const HostnameNotAccepted = "NotAccepted"

// Input is what one translation needs.
type Input struct {
	Binding *v1alpha1.GatewayBinding
	// Gateway named by the binding; nil when there is none.
	Gateway *gwv1.Gateway
	// Class of the Gateway; nil when there is none.
	Class *gwv1.GatewayClass
	// HTTPRoutes of the binding's namespace.
	HTTPRoutes []gwv1.HTTPRoute
	// GRPCRoutes of the binding's namespace, reported as not supported
	// when attached to the listener.
	GRPCRoutes []gwv1.GRPCRoute
	// OriginService named by the binding; nil when there is none.
	OriginService *corev1.Service
	// Grants of the origin Service's namespace.
	Grants []gwv1beta1.ReferenceGrant
	// ClusterDomain of Service DNS names; "" is cluster.local.
	ClusterDomain string
}

// Condition is one condition's verdict.
type Condition struct {
	OK      bool
	Reason  string
	Message string
}

// Result is what a binding should publish.
type Result struct {
	Accepted     Condition
	ResolvedRefs Condition
	// Hostnames seen on the listener's routes, each with its state before
	// publishing (Pending for the ones published).
	Hostnames []v1alpha1.BoundHostname
	// Published are the PublicHostnames wanted.
	Published []*v1alpha1.PublicHostname
	// KeepExisting: a reference does not resolve in a way a typo could
	// cause; nothing already published is removed (bad input never takes
	// a working site down). A refused ReferenceGrant is not such a case:
	// revoking a grant unpublishes.
	KeepExisting bool
	// KeepRoutes are routes whose acceptance is out of date (the Gateway's
	// controller has not answered their latest generation): what they
	// publish stays until it does.
	KeepRoutes []string
	// Held are kept only while they carry an Access check.
	Held Held
	// Kept are PublicHostnames, by name, that stay as they are: those of
	// the hostnames whose oldest route's lb-* annotations cannot be used.
	Kept []string
	// Refused are the routes whose access annotations ask for a weaker
	// check than the binding's spec.access, and why: their hostnames are
	// published with the binding's check (annotation.Inherit).
	Refused []string
}

// Translate decides what a binding publishes.
func Translate(in Input) Result {
	res := Result{Accepted: Condition{OK: true, Reason: ReasonAccepted, Message: "the listener's HTTPRoutes are published through CloudflareTunnel " + in.Binding.Spec.TunnelRef.Name}}
	listener, origin, ok := resolve(in, &res)
	if !ok {
		return res
	}
	routes := slices.Clone(in.HTTPRoutes)
	slices.SortFunc(routes, func(a, b gwv1.HTTPRoute) int { return gatewayapi.OlderFirst(&a.ObjectMeta, &b.ObjectMeta) })
	p := publisher{binding: in.Binding, origin: origin, res: &res, claims: map[string]*claim{}}
	for i := range routes {
		route := &routes[i]
		ref, attached := gatewayapi.Attachment(route.Spec.ParentRefs, route.Namespace, in.Gateway, listener)
		if !attached {
			continue
		}
		hosts := gatewayapi.EffectiveHostnames(route.Spec.Hostnames, listener.Hostname)
		accepted, stale, why := acceptance(route.Status.Parents, ref, route.Namespace, route.Generation, in.Class.Spec.ControllerName)
		if !accepted {
			if stale {
				res.KeepRoutes = append(res.KeepRoutes, route.Name)
			}
			for _, h := range hosts {
				res.Hostnames = append(res.Hostnames, v1alpha1.BoundHostname{Hostname: h.Name, Route: "HTTPRoute/" + route.Name, State: HostnameNotAccepted, Message: why})
			}
			continue
		}
		p.route(route, hosts)
	}
	p.publish()
	for _, r := range in.GRPCRoutes {
		if _, attached := gatewayapi.Attachment(r.Spec.ParentRefs, r.Namespace, in.Gateway, listener); !attached {
			continue
		}
		for _, h := range gatewayapi.EffectiveHostnames(r.Spec.Hostnames, listener.Hostname) {
			res.Hostnames = append(res.Hostnames, v1alpha1.BoundHostname{Hostname: h.Name, Route: "GRPCRoute/" + r.Name, State: v1alpha1.HostnameNotSupported,
				Message: "GRPCRoutes are not published: a GatewayBinding publishes HTTPRoutes"})
		}
	}
	return res
}

// resolve checks the binding's references: the Gateway and its class, the
// listener, and the origin Service (with the grant another namespace's
// Service needs). It returns the listener and the origin URL.
func resolve(in Input, res *Result) (*gwv1.Listener, string, bool) {
	b := in.Binding
	fail := func(reason, keep string, format string, args ...any) (*gwv1.Listener, string, bool) {
		res.ResolvedRefs = Condition{Reason: reason, Message: fmt.Sprintf(format, args...) + keep}
		res.KeepExisting = keep != ""
		return nil, "", false
	}
	const kept = "; whatever the binding already publishes stays as it is until the reference resolves"
	if in.Gateway == nil {
		return fail(ReasonGatewayNotFound, kept, "no Gateway %q in namespace %s", b.Spec.GatewayRef.Name, b.Namespace)
	}
	if in.Class == nil {
		return fail(ReasonGatewayClassNotFound, kept, "Gateway %s names GatewayClass %q, which does not exist: the binding cannot tell which controller accepts its routes", in.Gateway.Name, in.Gateway.Spec.GatewayClassName)
	}
	var listener *gwv1.Listener
	for i := range in.Gateway.Spec.Listeners {
		if string(in.Gateway.Spec.Listeners[i].Name) == b.Spec.GatewayRef.SectionName {
			listener = &in.Gateway.Spec.Listeners[i]
		}
	}
	if listener == nil {
		return fail(ReasonListenerNotFound, kept, "Gateway %s has no listener %q (it has %s)", in.Gateway.Name, b.Spec.GatewayRef.SectionName, listenerNames(in.Gateway))
	}
	if listener.Protocol != gwv1.HTTPProtocolType && listener.Protocol != gwv1.HTTPSProtocolType {
		res.Accepted = Condition{Reason: ReasonUnsupportedProtocol, Message: fmt.Sprintf("listener %s speaks %s: a GatewayBinding publishes HTTP and HTTPS listeners%s", listener.Name, listener.Protocol, kept)}
		res.ResolvedRefs = Condition{OK: true, Reason: ReasonResolved, Message: "the Gateway and its listener exist"}
		res.KeepExisting = true
		return nil, "", false
	}
	o := b.Spec.Origin.Service
	ns := originNamespace(b)
	if ns != b.Namespace && !sharing.ServiceGranted(in.Grants, b.Namespace, o.Name) {
		return fail(ReasonRefNotPermitted, "", "Service %s/%s is in another namespace, and no ReferenceGrant there allows GatewayBindings of namespace %s to use it (from: group %s, kind %s, namespace %s; to: kind Service); nothing is published", ns, o.Name, b.Namespace, v1alpha1.Group, v1alpha1.GatewayBindingKind, b.Namespace)
	}
	if in.OriginService == nil {
		return fail(ReasonBackendNotFound, kept, "origin Service %s/%s does not exist", ns, o.Name)
	}
	port, ok := servicePort(in.OriginService, o.Port.String())
	if !ok {
		return fail(ReasonBackendNotFound, kept, "origin Service %s/%s has no port %s", ns, o.Name, o.Port.String())
	}
	res.ResolvedRefs = Condition{OK: true, Reason: ReasonResolved, Message: fmt.Sprintf("Gateway %s listener %s; origin %s/%s port %d", in.Gateway.Name, listener.Name, ns, o.Name, port)}
	return listener, OriginURL(b, port, in.ClusterDomain), true
}

func listenerNames(gw *gwv1.Gateway) string {
	var names []string
	for _, l := range gw.Spec.Listeners {
		names = append(names, string(l.Name))
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

func originNamespace(b *v1alpha1.GatewayBinding) string {
	if b.Spec.Origin.Service.Namespace != "" {
		return b.Spec.Origin.Service.Namespace
	}
	return b.Namespace
}

// OriginURL is where cloudflared sends the binding's requests: the origin
// Service's cluster DNS name and port number.
func OriginURL(b *v1alpha1.GatewayBinding, port int32, clusterDomain string) string {
	if clusterDomain == "" {
		clusterDomain = "cluster.local"
	}
	proto := b.Spec.Origin.Service.Protocol
	if proto == "" {
		proto = v1alpha1.ProtocolHTTP
	}
	return fmt.Sprintf("%s://%s.%s.svc.%s:%d", proto, b.Spec.Origin.Service.Name, originNamespace(b), clusterDomain, port)
}

// servicePort finds a Service's port by number or name.
func servicePort(svc *corev1.Service, port string) (int32, bool) {
	n, err := strconv.Atoi(port)
	for _, p := range svc.Spec.Ports {
		if (err == nil && int(p.Port) == n) || (err != nil && p.Name == port) {
			return p.Port, true
		}
	}
	return 0, false
}

// acceptance reads the Gateway's controller's answer about a route's
// attachment: accepted (for the route's current generation), or stale (it
// accepted an older generation and has not answered the current one), and
// why not in the user's words.
func acceptance(parents []gwv1.RouteParentStatus, ref gwv1.ParentReference, ns string, generation int64, controller gwv1.GatewayController) (accepted, stale bool, why string) {
	for _, p := range parents {
		if p.ControllerName != controller || !gatewayapi.SameParent(p.ParentRef, ref, ns) {
			continue
		}
		for _, c := range p.Conditions {
			if c.Type != string(gwv1.RouteConditionAccepted) {
				continue
			}
			current := c.ObservedGeneration == 0 || c.ObservedGeneration >= generation
			switch {
			case c.Status == metav1.ConditionTrue && current:
				return true, false, ""
			case c.Status == metav1.ConditionTrue:
				return false, true, fmt.Sprintf("waiting for %s to accept the route's generation %d (it accepted generation %d); what the route published stays until then", controller, generation, c.ObservedGeneration)
			default:
				return false, false, fmt.Sprintf("%s did not accept the route: %s: %s", controller, c.Reason, c.Message)
			}
		}
	}
	return false, false, fmt.Sprintf("waiting for %s to accept the route (no Accepted condition in its status for this Gateway)", controller)
}

// DNSFor is the PublicHostname DNS mode of a binding's DNS mode: only
// DNSRecord mode has the PublicHostnames make their records.
func DNSFor(mode string) string {
	if mode == "" || mode == v1alpha1.DNSModeDNSRecord {
		return v1alpha1.DNSManaged
	}
	return v1alpha1.DNSNone
}

func publicHostname(b *v1alpha1.GatewayBinding, route, host, origin string, access *v1alpha1.Access) *v1alpha1.PublicHostname {
	labels := map[string]string{
		LabelBinding:        publish.LabelValue(b.Name),
		LabelRoute:          publish.LabelValue(route),
		publish.LabelTunnel: publish.LabelValue(b.Spec.TunnelRef.Name),
	}
	ref := v1alpha1.TunnelReference{Name: b.Spec.TunnelRef.Name}
	if ns := b.Spec.TunnelRef.Namespace; ns != "" && ns != b.Namespace {
		// A tunnel shared with the binding's namespace.
		labels[publish.LabelTunnelNamespace] = ns
		ref.Namespace = ns
	}
	return &v1alpha1.PublicHostname{
		TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.PublicHostnameKind},
		ObjectMeta: metav1.ObjectMeta{
			Name:      publish.ObjectName(b.Name, publish.KindPublicHostname, host),
			Namespace: b.Namespace,
			Labels:    labels,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.GatewayBindingKind,
				Name: b.Name, UID: b.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: v1alpha1.PublicHostnameSpec{
			TunnelRef:     ref,
			Hostname:      host,
			Origin:        &v1alpha1.Origin{URL: ptr.To(origin)},
			OriginRequest: b.Spec.OriginRequest.DeepCopy(),
			Access:        access,
			DNS:           DNSFor(b.Spec.DNS.Mode),
		},
	}
}
