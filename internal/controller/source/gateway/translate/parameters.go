package translate

// Parameters: the GatewayParameters a Gateway's tunnel is made with, who
// writes the DNS of its hostnames, and with which namespaces its tunnel is
// shared.

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
)

// Where a reference to GatewayParameters is written.
const (
	FieldGatewayParameters = "spec.infrastructure.parametersRef"
	FieldClassParameters   = "the GatewayClass's spec.parametersRef"
)

// ParametersRef is a reference to GatewayParameters as a Gateway or its
// GatewayClass writes it.
type ParametersRef struct {
	// Field is where it is written.
	Field                        string
	Group, Kind, Namespace, Name string
}

// ParametersOf is the reference a Gateway's settings come from: its own
// spec.infrastructure.parametersRef, else its class's spec.parametersRef;
// nil when neither names any. The Gateway's wins whole, the two are never
// merged: what a Gateway gets is always one object a reader can look at.
func ParametersOf(gw *gwv1.Gateway, class *gwv1.GatewayClass) *ParametersRef {
	if i := gw.Spec.Infrastructure; i != nil && i.ParametersRef != nil {
		p := i.ParametersRef
		return &ParametersRef{Field: FieldGatewayParameters, Group: string(p.Group), Kind: string(p.Kind), Namespace: gw.Namespace, Name: p.Name}
	}
	if class == nil {
		return nil
	}
	return ClassParametersOf(class)
}

// ClassParametersOf is the reference of a GatewayClass's spec.parametersRef;
// nil when it has none.
func ClassParametersOf(gc *gwv1.GatewayClass) *ParametersRef {
	p := gc.Spec.ParametersRef
	if p == nil {
		return nil
	}
	return &ParametersRef{Field: FieldClassParameters, Group: string(p.Group), Kind: string(p.Kind), Namespace: string(ptr.Deref(p.Namespace, "")), Name: p.Name}
}

// Problem says why the reference cannot be used, "" when it can: it must
// name GatewayParameters of tunnels.cloudflare.com, and a class's must say
// their namespace (the class has none of its own).
func (r *ParametersRef) Problem() string {
	if r.Group != v1alpha1.Group || r.Kind != v1alpha1.GatewayParametersKind {
		return fmt.Sprintf("%s names %s of group %s, which this provider does not read: name %s of group %s, or remove the reference",
			r.Field, publish.Clip(r.Kind), publish.Clip(r.Group), v1alpha1.GatewayParametersKind, v1alpha1.Group)
	}
	if r.Namespace == "" {
		return fmt.Sprintf("%s names GatewayParameters %s without a namespace: GatewayParameters are namespaced; set parametersRef.namespace", r.Field, publish.Clip(r.Name))
	}
	return ""
}

// Names says whether the reference names p.
func (r *ParametersRef) Names(p *v1alpha1.GatewayParameters) bool {
	return p != nil && r.Problem() == "" && p.Namespace == r.Namespace && p.Name == r.Name
}

// ClassAccepted is the Accepted condition of a GatewayClass of this
// provider's controller name: its parametersRef, if any, must name
// GatewayParameters that exist (params, as read; nil when missing).
func ClassAccepted(gc *gwv1.GatewayClass, params *v1alpha1.GatewayParameters) metav1.Condition {
	if ref := ClassParametersOf(gc); ref != nil {
		problem := ref.Problem()
		if problem == "" && !ref.Names(params) {
			problem = missing(ref)
		}
		if problem != "" {
			return condition(string(gwv1.GatewayClassConditionStatusAccepted), false, string(gwv1.GatewayClassReasonInvalidParameters),
				problem+"; its Gateways that name no parameters of their own are not accepted, and what they publish stays", gc.Generation)
		}
	}
	return condition(string(gwv1.GatewayClassConditionStatusAccepted), true, string(gwv1.GatewayClassReasonAccepted),
		"its Gateways are CloudflareTunnels and their HTTPRoutes and GRPCRoutes are published through them", gc.Generation)
}

func missing(ref *ParametersRef) string {
	return fmt.Sprintf("%s names GatewayParameters %s, which do not exist: create them, or correct the name", ref.Field, publish.Clip(ref.Namespace+"/"+ref.Name))
}

// DNS says who writes the DNS records of a Gateway's hostnames.
type DNS struct {
	// Mode: DNSRecord (this provider's DNSRecords), ExternalDNS (one
	// DNSEndpoint for external-dns) or None.
	Mode string
	// ExternalDNS options, in ExternalDNS mode.
	ExternalDNS *v1alpha1.ExternalDNSOptions
}

// publicHostnameDNS is the DNS mode of the Gateway's PublicHostnames: they
// make their DNSRecord in DNSRecord mode only.
func (d DNS) publicHostnameDNS() string {
	if d.Mode == v1alpha1.DNSModeDNSRecord {
		return v1alpha1.DNSManaged
	}
	return v1alpha1.DNSNone
}

// settings are what a Gateway's parameters, annotations and listeners make
// of its tunnel and DNS.
type settings struct {
	// ref is the reference the parameters come from; nil when none.
	ref *ParametersRef
	// spec of the parameters; nil when none.
	spec *v1alpha1.GatewayParametersSpec
	dns  DNS
	// shared is the made tunnel's allowedNamespaces; nil is its own
	// namespace only. sharedNote says why it is not shared although a
	// listener admits other namespaces.
	shared     *v1alpha1.AllowedNamespaces
	sharedNote string
	// address is the Gateway's own hostname; "" when it has none.
	address string
	// problem keeps the Gateway from being accepted (InvalidParameters).
	problem string
}

func settingsOf(in Input, ls listeners) settings {
	s := settings{ref: ParametersOf(in.Gateway, in.Class)}
	s.shared, s.sharedNote = sharingOf(ls)
	if s.ref != nil {
		if s.problem = s.ref.Problem(); s.problem != "" {
			return s
		}
		if !s.ref.Names(in.Parameters) {
			s.problem = missing(s.ref)
			return s
		}
		s.spec = &in.Parameters.Spec
	}
	if s.dns, s.problem = dnsOf(in.Gateway, s.spec); s.problem != "" {
		return s
	}
	if s.address, s.problem = addressOf(in.Gateway, s.spec); s.problem != "" {
		return s
	}
	s.problem = s.tunnelProblem(in.Gateway)
	return s
}

// tunnelProblem says why the parameters cannot make the Gateway's tunnel:
// a tunnel named by annotation keeps its own settings, and a shared tunnel
// takes its credentials from a ClusterProviderConfig (the CloudflareTunnel
// CRD refuses anything else).
func (s settings) tunnelProblem(gw *gwv1.Gateway) string {
	if s.spec == nil {
		return ""
	}
	name := s.ref.Namespace + "/" + s.ref.Name
	if named := gw.Annotations[v1alpha1.AnnotationTunnel]; named != "" {
		if s.spec.ConnectorSet() {
			return fmt.Sprintf("GatewayParameters %s set connector settings, but the Gateway names CloudflareTunnel %s with the annotation %s, whose settings are its own: set only dns in the parameters, or remove the annotation to have a tunnel made for the Gateway",
				name, publish.Clip(named), v1alpha1.AnnotationTunnel)
		}
		return ""
	}
	if pc := s.spec.ProviderConfigRef; pc != nil && pc.Kind != "ClusterProviderConfig" && s.shared != nil {
		return fmt.Sprintf("GatewayParameters %s name %s %s, but the Gateway's listeners admit routes of other namespaces (allowedRoutes.namespaces.from %s), so its tunnel is shared, and a shared tunnel takes its credentials from a ClusterProviderConfig: name a ClusterProviderConfig, or admit routes of the Gateway's namespace only (from: Same)",
			name, pc.Kind, publish.Clip(pc.Name), s.shared.From)
	}
	return ""
}

// dnsOf is the DNS of a Gateway's hostnames: the annotation
// tunnels.cloudflare.com/dns, or the parameters' dns, or DNSRecord. Both
// set must agree: neither silently wins.
func dnsOf(gw *gwv1.Gateway, spec *v1alpha1.GatewayParametersSpec) (DNS, string) {
	d := DNS{Mode: v1alpha1.DNSModeDNSRecord}
	fromParams := spec != nil && spec.DNS != nil
	if fromParams {
		d.Mode = modeOr(spec.DNS.Mode)
		d.ExternalDNS = spec.DNS.ExternalDNS.DeepCopy()
	}
	v, annotated := gw.Annotations[v1alpha1.AnnotationDNS]
	if !annotated {
		return d, ""
	}
	switch v {
	case v1alpha1.DNSModeDNSRecord, v1alpha1.DNSModeExternalDNS, v1alpha1.DNSModeNone:
	default:
		return DNS{}, fmt.Sprintf("annotation %s must be %s, %s or %s, not %s", v1alpha1.AnnotationDNS, v1alpha1.DNSModeDNSRecord, v1alpha1.DNSModeExternalDNS, v1alpha1.DNSModeNone, publish.Clip(v))
	}
	if fromParams && v != d.Mode {
		return DNS{}, fmt.Sprintf("annotation %s says %s and the GatewayParameters' dns.mode says %s: remove one, or make them agree", v1alpha1.AnnotationDNS, v, d.Mode)
	}
	d.Mode = v
	return d, ""
}

func modeOr(m string) string {
	if m == "" {
		return v1alpha1.DNSModeDNSRecord
	}
	return m
}

// sharingOf is the allowedNamespaces of the tunnel made for a Gateway,
// following its listeners' allowedRoutes.namespaces: All when any listener
// admits all namespaces, a listener's selector when every listener that
// selects uses that one, else the Gateway's namespace only. Listeners with
// different selectors cannot be held by one tunnel's single selector, and
// the union of both is not a selector: the tunnel is then shared with none
// rather than with more than asked (routes those listeners admit still
// publish through the Gateway; only other sources cannot name the tunnel).
func sharingOf(ls listeners) (*v1alpha1.AllowedNamespaces, string) {
	var sel *metav1.LabelSelector
	differ := false
	for _, l := range ls {
		if l.problem != "" || l.conflicted || len(l.kinds) == 0 {
			continue // admits no route
		}
		from, s := namespacesOf(l.spec)
		switch {
		case from == gwv1.NamespacesFromAll:
			return &v1alpha1.AllowedNamespaces{From: v1alpha1.NamespacesFromAll}, ""
		case from != gwv1.NamespacesFromSelector || s == nil:
		case sel == nil:
			sel = s
		case !equality.Semantic.DeepEqual(sel, s):
			differ = true
		}
	}
	switch {
	case differ:
		return nil, "listeners select namespaces with different selectors, which one tunnel's allowedNamespaces cannot hold: the tunnel is not shared with other namespaces (routes the listeners admit still publish through the Gateway)"
	case sel != nil:
		return &v1alpha1.AllowedNamespaces{From: v1alpha1.NamespacesFromSelector, Selector: sel.DeepCopy()}, ""
	}
	return nil, ""
}

func namespacesOf(l *gwv1.Listener) (gwv1.FromNamespaces, *metav1.LabelSelector) {
	if l.AllowedRoutes == nil || l.AllowedRoutes.Namespaces == nil {
		return gwv1.NamespacesFromSame, nil
	}
	n := l.AllowedRoutes.Namespaces
	return ptr.Deref(n.From, gwv1.NamespacesFromSame), n.Selector
}

// applyParameters sets the made tunnel's settings from the parameters;
// those they leave unset get the CloudflareTunnel's defaults, written out
// so that the tunnel made is compared with what the API server stores.
func applyParameters(spec *v1alpha1.CloudflareTunnelSpec, p *v1alpha1.GatewayParametersSpec) {
	spec.Replicas, spec.DeleteTunnelOnRemove = ptr.To(int32(2)), ptr.To(true)
	if p == nil {
		return
	}
	p = p.DeepCopy()
	if p.Replicas != nil {
		spec.Replicas = p.Replicas
	}
	if p.DeleteTunnelOnRemove != nil {
		spec.DeleteTunnelOnRemove = p.DeleteTunnelOnRemove
	}
	spec.Image, spec.NodeSelector, spec.Tolerations, spec.Affinity = p.Image, p.NodeSelector, p.Tolerations, p.Affinity
	spec.Resources, spec.Connector, spec.ProviderConfigRef = p.Resources, p.Connector, p.ProviderConfigRef
}

// CopyTunnel sets a made tunnel to want in what the Gateway decides, and
// says whether anything changed. What a user may ask of the tunnel itself
// (a token rotation) and its immutable name are left as they are.
func CopyTunnel(cur, want *v1alpha1.CloudflareTunnel) bool {
	before := cur.Spec.DeepCopy()
	w := want.Spec.DeepCopy()
	c := &cur.Spec
	c.Replicas, c.DeleteTunnelOnRemove, c.AllowedNamespaces = w.Replicas, w.DeleteTunnelOnRemove, w.AllowedNamespaces
	c.Image, c.NodeSelector, c.Tolerations, c.Affinity = w.Image, w.NodeSelector, w.Tolerations, w.Affinity
	c.Resources, c.Connector, c.ProviderConfigRef = w.Resources, w.Connector, w.ProviderConfigRef
	return !equality.Semantic.DeepEqual(before, c)
}

// addressOf is a Gateway's own hostname, <name>.<namespace>.<addressDomain>,
// when its parameters give one.
func addressOf(gw *gwv1.Gateway, spec *v1alpha1.GatewayParametersSpec) (string, string) {
	if spec == nil || ptr.Deref(spec.AddressDomain, "") == "" {
		return "", ""
	}
	raw := gw.Name + "." + gw.Namespace + "." + *spec.AddressDomain
	name, problem := publish.Hostname(raw)
	if problem != "" {
		return "", fmt.Sprintf("the Gateway's hostname %s (<name>.<namespace>.<addressDomain>) is not a hostname (%s): use a shorter addressDomain or Gateway name",
			publish.Clip(raw), problem)
	}
	return name, ""
}
