package translate

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/expose"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
)

// ExposeInput is what translating a Service's hostname route, VPC service
// and public hostname needs.
type ExposeInput struct {
	Service *corev1.Service
	// Tunnel the Service names.
	Tunnel expose.Tunnel
	// ClusterDomain of Service DNS names; "" is cluster.local.
	ClusterDomain string
}

// Exposure is what a Service asks of its tunnel by name: a private hostname
// route, optionally a Workers VPC service and a public hostname. It is the
// annotation sources' core answer (expose) for a source whose one backend
// is the Service, so an Ingress and a Service take the same annotations and
// give the same answers; objects are named, labelled and owned for the
// Service.
type Exposure struct {
	// Wanted: the Service names a tunnel for a hostname.
	Wanted bool `json:"wanted,omitempty"`
	expose.Result
}

// KindPrefix goes before the kind in the names of objects made for a
// Service, so they never collide with those of an Ingress of its name.
const KindPrefix = "svc-"

// WantsExposure says whether a Service asks for a hostname: it names a
// tunnel, and either does not ask for a private route of its cluster IPs
// (the private-route annotation, which alone keeps its IP-only meaning) or
// names a hostname, VPC service or public hostname too.
func WantsExposure(svc *corev1.Service) bool {
	a := svc.Annotations
	if strings.TrimSpace(a[v1alpha1.AnnotationTunnel]) == "" {
		return false
	}
	if _, ipOnly := a[v1alpha1.AnnotationPrivateRoute]; !ipOnly {
		return true
	}
	for _, k := range []string{v1alpha1.AnnotationHostname, v1alpha1.AnnotationVPCService, v1alpha1.AnnotationPublic} {
		if _, ok := a[k]; ok {
			return true
		}
	}
	return false
}

type exposer struct {
	in       ExposeInput
	svc      *corev1.Service
	problems []publish.Problem
}

func (e *exposer) problem(field, format string, args ...any) {
	e.problems = append(e.problems, publish.Problem{Field: field, Message: fmt.Sprintf(format, args...)})
}

// Expose is the hostname route, VPC service and public hostname in.Service
// asks for.
func Expose(in ExposeInput) Exposure {
	svc := in.Service
	if svc == nil || !WantsExposure(svc) {
		return Exposure{}
	}
	e := &exposer{in: in, svc: svc}
	ann := maps.Clone(svc.Annotations)
	_, vpc := ann[v1alpha1.AnnotationVPCService]
	_, vpcPort := ann[v1alpha1.AnnotationVPCPort]
	public := strings.EqualFold(strings.TrimSpace(ann[v1alpha1.AnnotationPublic]), "true")
	if _, named := ann[v1alpha1.AnnotationHostname]; public && !named {
		e.problem(v1alpha1.AnnotationPublic, "a Service is published under the name its %s annotation gives, and it has none: set it to the public hostname; the Service is reached privately only", v1alpha1.AnnotationHostname)
		delete(ann, v1alpha1.AnnotationPublic)
		public = false
	}
	port, ok := e.port(public || (vpc && !vpcPort))
	if !ok {
		// Without a port, neither can be made; the route can (it names a
		// host, not a port), and what the Service had stays (a Problem).
		delete(ann, v1alpha1.AnnotationPublic)
		if !vpcPort {
			delete(ann, v1alpha1.AnnotationVPCService)
		}
	}
	switch proto, set, ok := e.protocol(port); {
	case !ok:
		delete(ann, v1alpha1.AnnotationPublic) // a Problem: what is published stays
	case set:
		ann[v1alpha1.AnnotationOriginProtocol] = proto
	}
	res := expose.Translate(expose.Input{
		Namespace:   svc.Namespace,
		Annotations: ann,
		Owner: expose.Owner{
			APIVersion: "v1", Kind: "Service", Name: svc.Name, UID: svc.UID,
			Label: publish.LabelService, KindPrefix: KindPrefix,
		},
		Tunnel:        in.Tunnel,
		Routing:       e.routing(port),
		Services:      map[string]*corev1.Service{svc.Name: svc},
		ClusterDomain: in.ClusterDomain,
		// The hostname stays public while a Problem withholds its
		// publishing: the VPC service reaches the Service's cluster name.
		NamesPublicHost: public,
	})
	if res.Public && res.DNSMode == v1alpha1.DNSModeExternalDNS {
		e.problem(v1alpha1.AnnotationDNS, "%s is for Ingresses (their DNSEndpoint); a Service's public hostname gets a DNSRecord or, with %s, none: nothing new is published", v1alpha1.DNSModeExternalDNS, v1alpha1.DNSModeNone)
		res.Published, res.Rules = nil, nil
	}
	res.Problems = append(e.problems, res.Problems...)
	return Exposure{Wanted: true, Result: res}
}

// routing sends every request to the Service at port: its one backend.
func (e *exposer) routing(port *corev1.ServicePort) expose.Routing {
	var number int32
	field := "spec.ports"
	switch {
	case port != nil:
		number, field = port.Port, fmt.Sprintf("spec.ports[port %d]", port.Port)
	case len(e.svc.Spec.Ports) > 0:
		// Only the default hostname reads it: the route names a host.
		number = e.svc.Spec.Ports[0].Port
	default:
		number = 80
	}
	return expose.Routing{Default: &expose.Backend{Field: field, Service: &expose.ServicePort{Name: e.svc.Name, Number: number}}}
}

// port is the Service port traffic goes to: the port annotation's (a name
// or a number of one of the Service's ports), else the only one. A port
// annotation that names none is a Problem; so is a Service whose port is
// needed (needed) but ambiguous.
func (e *exposer) port(needed bool) (*corev1.ServicePort, bool) {
	ports := e.svc.Spec.Ports
	v, set := e.svc.Annotations[v1alpha1.AnnotationPort]
	if set {
		v = strings.TrimSpace(v)
		for i := range ports {
			if ports[i].Name == v && v != "" || strconv.Itoa(int(ports[i].Port)) == v {
				return &ports[i], true
			}
		}
		e.problem(v1alpha1.AnnotationPort, "%s is not a port of Service %s (its ports: %s): name or number one; no VPC service or public hostname is made or changed until it does", publish.Clip(v), e.svc.Name, describePorts(ports))
		return nil, false
	}
	if len(ports) == 1 {
		return &ports[0], true
	}
	if !needed {
		return nil, true
	}
	if len(ports) == 0 {
		e.problem(v1alpha1.AnnotationPort, "required: Service %s lists no ports, so the VPC service or public hostname has none to reach; set %s (or %s for the VPC service)", e.svc.Name, v1alpha1.AnnotationPort, v1alpha1.AnnotationVPCPort)
		return nil, false
	}
	e.problem(v1alpha1.AnnotationPort, "required: Service %s has %d ports (%s); set %s to the name or number of the one to expose", e.svc.Name, len(ports), describePorts(ports), v1alpha1.AnnotationPort)
	return nil, false
}

// protocol is how cloudflared speaks to the Service: the protocol
// annotation, else the origin-protocol annotation (left to the core),
// else the port's appProtocol or its name (its prefix before a
// '-': "https-web" is https), else http. set is false when the core's
// default or the origin-protocol annotation decides; ok is
// false for a protocol annotation that names none.
func (e *exposer) protocol(port *corev1.ServicePort) (proto string, set, ok bool) {
	if v, ok := e.svc.Annotations[v1alpha1.AnnotationProtocol]; ok {
		p := strings.ToLower(strings.TrimSpace(v))
		if known(p) {
			return p, true, true
		}
		e.problem(v1alpha1.AnnotationProtocol, "must be one of %s, not %s; nothing new is published until it is", strings.Join(expose.Protocols, ", "), publish.Clip(v))
		return "", false, false
	}
	if _, ok := e.svc.Annotations[v1alpha1.AnnotationOriginProtocol]; ok || port == nil {
		return "", false, true
	}
	if port.AppProtocol != nil {
		if p := strings.ToLower(*port.AppProtocol); known(p) {
			return p, true, true
		}
	}
	if p, _, _ := strings.Cut(strings.ToLower(port.Name), "-"); known(p) {
		return p, true, true
	}
	return "", false, true
}

func known(p string) bool { return slices.Contains(expose.Protocols, p) }

func describePorts(ports []corev1.ServicePort) string {
	if len(ports) == 0 {
		return "none"
	}
	var out []string
	for _, p := range ports {
		d := strconv.Itoa(int(p.Port))
		if p.Name != "" {
			d = p.Name + " " + d
		}
		out = append(out, d)
	}
	return strings.Join(out, ", ")
}
