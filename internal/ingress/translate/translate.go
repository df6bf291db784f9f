// Package translate turns an Ingress on a Cloudflare tunnel into the managed
// resources (HostnameRoute, VPCService, DNSRecord) and public ingress rules it
// needs. It is pure — no clients, no I/O — so the Ingress controller only
// applies what it returns, and every translation decision is table-tested and
// fuzzed here.
package translate

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	connv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/connectivity/v1alpha1"
	dnsv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/dns/v1alpha1"
	tv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
)

// Labels on every MR made from an Ingress, so the controller can list what an
// Ingress (or a tunnel) owns. Values go through LabelValue.
const (
	LabelIngress = "tunnels.cloudflare.com/ingress"
	LabelTunnel  = "tunnels.cloudflare.com/tunnel"
)

// Kind abbreviations used in MR names.
const (
	KindHostnameRoute = "route"
	KindVPCService    = "vpc"
	KindDNSRecord     = "dns"
)

// CatchAllService ends every remote configuration: cloudflared requires a
// last rule without hostname or path, and anything unmatched gets a 404.
const CatchAllService = "http_status:404"

// ServiceDomain is the in-cluster DNS suffix of Services; cloudflared runs in
// the cluster and resolves it through CoreDNS.
const ServiceDomain = "svc.cluster.local"

// Tunnel is the CloudflareTunnel an Ingress is exposed through.
type Tunnel struct {
	// Name of the CloudflareTunnel, which is also its Tunnel MR's name, in the
	// Ingress's namespace. Defaults to the tunnel annotation's value.
	Name string
	// TunnelID is the Cloudflare tunnel ID (the Tunnel MR's external-name);
	// "" while not known yet.
	TunnelID string
	// ProviderConfigRef is the credentials every MR made for this tunnel
	// uses; nil leaves the MR's default (ClusterProviderConfig "default").
	ProviderConfigRef *xpv2.ProviderConfigReference
	// AdoptByName is the CloudflareTunnel's spec.adoptByName, which its
	// Ingresses' VPC services follow: after a rebuild they take over the
	// services of their names as the tunnel does its own.
	AdoptByName bool
}

// Input is everything a translation depends on.
type Input struct {
	Ingress *networkingv1.Ingress
	Tunnel  Tunnel
	// Services of the Ingress's namespace by name, to resolve named ports.
	Services map[string]*corev1.Service
}

// A Problem is bad input. Field is an annotation key or a field path such as
// "spec.rules[0].http.paths[1].backend".
type Problem struct {
	Field   string
	Message string
}

func (p Problem) String() string { return p.Field + ": " + p.Message }

// Result is the desired state for one Ingress.
type Result struct {
	// Hostnames routed privately: normalised, sorted, distinct.
	Hostnames []string
	Routes    []*ztv1alpha1.HostnameRoute
	Services  []*connv1alpha1.VPCService
	Records   []*dnsv1alpha1.DNSRecord
	// Rules for the tunnel's remote configuration, ordered as TunnelConfig
	// orders them, without the catch-all.
	Rules  []ztv1alpha1.IngressRule
	Public bool
	// AwaitingTunnelID: the Ingress is public but the tunnel ID is not known
	// yet, so Records are withheld; requeue.
	AwaitingTunnelID bool
	// Problems in the input; what depends on a bad part is not produced.
	Problems []Problem
	// Notes are things the user should know that change nothing in the
	// result (a backend Service not there yet, TLS settings Cloudflare's
	// edge replaces).
	Notes []Note
	// Written maps each routed hostname (Hostnames) to the forms the
	// Ingress wrote it in (lower case, wildcard kept), so a message can
	// name what the user wrote.
	Written map[string][]string
}

// A Note is a Warning about input that is accepted as it is.
type Note struct {
	Reason  string
	Field   string
	Message string
}

func (n Note) String() string { return n.Field + ": " + n.Message }

// Reasons of Notes.
const (
	NoteBackendServiceNotFound = "BackendServiceNotFound"
	NoteBackendPortNotFound    = "BackendPortNotFound"
	NoteTLSIgnored             = "TLSIgnored"
	NotePlainHTTPToTLSPort     = "PlainHTTPToPort443"
)

// host is one hostname in its two forms.
type host struct {
	public string // lower case, wildcard kept: DNS record names and rule hostnames
	route  string // cloudflare.NormalizeHostname: what Cloudflare stores for routes
	// internal: the default hostname of an Ingress that names none, a
	// cluster-internal name no public zone holds.
	internal bool
}

type translator struct {
	in       Input
	ing      *networkingv1.Ingress
	tunnel   string
	problems []Problem
	notes    []Note
}

func (t *translator) note(reason, field, format string, args ...any) {
	t.notes = append(t.notes, Note{Reason: reason, Field: field, Message: fmt.Sprintf(format, args...)})
}

func (t *translator) problem(field, format string, args ...any) {
	t.problems = append(t.problems, Problem{Field: field, Message: fmt.Sprintf(format, args...)})
}

// Translate computes the MRs and public rules an Ingress on a tunnel needs.
func Translate(in Input) Result {
	t := &translator{in: in, ing: in.Ingress}
	r := t.translate()
	// The same backend may be looked at for several purposes; report it once.
	seen := map[Problem]bool{}
	for _, p := range t.problems {
		if !seen[p] {
			seen[p] = true
			r.Problems = append(r.Problems, p)
		}
	}
	seenNote := map[Note]bool{}
	for _, n := range t.notes {
		if !seenNote[n] {
			seenNote[n] = true
			r.Notes = append(r.Notes, n)
		}
	}
	return r
}

func (t *translator) translate() Result {
	ing := t.ing
	if ing == nil {
		t.problem("ingress", "no Ingress")
		return Result{}
	}
	ann := ing.Annotations
	t.tunnel = strings.TrimSpace(ann[tv1alpha1.AnnotationTunnel])
	if t.tunnel == "" {
		t.problem(tv1alpha1.AnnotationTunnel, "required: the name of a CloudflareTunnel in this namespace")
		return Result{}
	}
	if t.in.Tunnel.Name != "" {
		t.tunnel = t.in.Tunnel.Name // the caller's lookup is authoritative
	}
	if errs := validation.IsDNS1123Subdomain(t.tunnel); len(errs) > 0 {
		t.problem(tv1alpha1.AnnotationTunnel, "%s is not a valid CloudflareTunnel name", clip(t.tunnel))
		return Result{}
	}
	if ing.Name == "" || ing.Namespace == "" {
		t.problem("metadata", "the Ingress needs a name and a namespace")
		return Result{}
	}

	// Annotations independent of the hostnames are checked first, so that one
	// bad annotation is reported even when another one stops translation.
	public := t.public()
	vpcName, vpc := t.vpcService()
	vpcPort, vpcPortSet, vpcPortOK := t.vpcPort()
	t.checkBackendKinds()

	hosts, ok := t.hostnames()
	if !ok || len(hosts) == 0 {
		return Result{}
	}
	if public && hosts[0].internal {
		t.problem(tv1alpha1.AnnotationPublic, "the Ingress names no hostname (no spec.rules[].host and no %s annotation), so it is reached privately as %s; set a public hostname to publish it; no DNS record or public rule is made",
			tv1alpha1.AnnotationHostname, hosts[0].public)
		public = false
	}
	r := Result{Public: public, Written: map[string][]string{}}
	for _, h := range hosts {
		if _, seen := r.Written[h.route]; !seen {
			r.Hostnames = append(r.Hostnames, h.route)
		}
		if !slices.Contains(r.Written[h.route], h.public) {
			r.Written[h.route] = append(r.Written[h.route], h.public)
		}
	}
	t.checkTLS()
	slices.Sort(r.Hostnames)
	for _, h := range r.Hostnames {
		r.Routes = append(r.Routes, t.route(h))
	}

	if vpc && vpcPortOK {
		port := vpcPort
		ok := vpcPortSet
		if !vpcPortSet {
			port, ok = t.vpcBackendPort()
		}
		if ok {
			r.Services = append(r.Services, t.vpcServiceMR(vpcName, int64(port), t.vpcHost(hosts)))
		}
	}

	if !public {
		return r
	}
	r.Rules = t.rules(hosts)
	if t.in.Tunnel.TunnelID == "" {
		r.AwaitingTunnelID = true
		return r
	}
	var names []string
	for _, h := range hosts {
		if !slices.Contains(names, h.public) {
			names = append(names, h.public)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		r.Records = append(r.Records, t.record(n))
	}
	return r
}

// public parses the public annotation; anything but true/false is a Problem
// and means private, the safe side.
func (t *translator) public() bool {
	v, ok := t.ing.Annotations[tv1alpha1.AnnotationPublic]
	switch {
	case !ok || strings.EqualFold(v, "false"):
		return false
	case strings.EqualFold(v, "true"):
		return true
	}
	t.problem(tv1alpha1.AnnotationPublic, `must be "true" or "false", not %s; treated as "false"`, clip(v))
	return false
}

// vpcService returns the VPC service name, and whether one is wanted and valid.
// "true"/"false" are rejected even though they are valid names: they betray
// an annotation meant as a switch, and would create a service literally named
// "true".
func (t *translator) vpcService() (string, bool) {
	v, ok := t.ing.Annotations[tv1alpha1.AnnotationVPCService]
	if !ok {
		return "", false
	}
	if v == "true" || v == "false" || len(validation.IsDNS1123Label(v)) > 0 {
		t.problem(tv1alpha1.AnnotationVPCService,
			"must name the VPC service (1-63 lower-case letters, digits and '-', starting and ending with a letter or digit), not %s; no VPC service is created", clip(v))
		return "", false
	}
	return v, true
}

// vpcPort returns the vpc-port annotation: its value, whether it is set, and
// whether it is valid (unset is valid).
func (t *translator) vpcPort() (int32, bool, bool) {
	v, ok := t.ing.Annotations[tv1alpha1.AnnotationVPCPort]
	if !ok {
		return 0, false, true
	}
	n, err := strconv.ParseUint(v, 10, 16)
	if err != nil || n == 0 {
		t.problem(tv1alpha1.AnnotationVPCPort, "must be a port number 1-65535, not %s; no VPC service is created", clip(v))
		return 0, true, false
	}
	return int32(n), true, true
}

// mainBackend is the Ingress's one backend when it must pick one (the VPC
// service's, the default hostname's): the default backend, else the first
// path's. field is its path for messages; b is nil without any backend.
func (t *translator) mainBackend() (field string, b *networkingv1.IngressBackend) {
	field, b = "spec.defaultBackend", t.ing.Spec.DefaultBackend
	for i := 0; b == nil && i < len(t.ing.Spec.Rules); i++ {
		if h := t.ing.Spec.Rules[i].HTTP; h != nil && len(h.Paths) > 0 {
			field, b = fmt.Sprintf("spec.rules[%d].http.paths[0].backend", i), &h.Paths[0].Backend
		}
	}
	return field, b
}

// serviceHost is the cluster DNS name of the main backend's Service, or ""
// when there is no usable one.
func (t *translator) serviceHost() string {
	_, b := t.mainBackend()
	if b == nil || b.Service == nil || len(validation.IsDNS1123Label(b.Service.Name)) > 0 {
		return ""
	}
	return b.Service.Name + "." + t.ing.Namespace + "." + ServiceDomain
}

// vpcHost is the host a VPC service reaches. A Worker's traffic leaves the
// tunnel at cloudflared, inside the cluster, so the host must be a name
// cloudflared resolves to the backend: the backend Service's cluster DNS
// name, unless the hostname annotation names the host explicitly. (A public
// hostname resolves to Cloudflare's edge, not to the backend.)
func (t *translator) vpcHost(hosts []host) string {
	if _, override := t.ing.Annotations[tv1alpha1.AnnotationHostname]; override {
		return hosts[0].route
	}
	if h := t.serviceHost(); h != "" {
		return h
	}
	return hosts[0].route
}

// vpcBackendPort is the port of the main backend.
func (t *translator) vpcBackendPort() (int32, bool) {
	field, b := t.mainBackend()
	if b == nil {
		t.problem(tv1alpha1.AnnotationVPCPort, "required: the Ingress has no backend to take the VPC service's port from")
		return 0, false
	}
	_, port, ok := t.backend(field, b)
	if !ok {
		t.problem(tv1alpha1.AnnotationVPCService, "not created: cannot determine its port from %s; set %s", field, tv1alpha1.AnnotationVPCPort)
	}
	return port, ok
}

// checkBackendKinds reports unsupported backends even when no rule needs
// them yet, so the user learns about them before making the Ingress public.
func (t *translator) checkBackendKinds() {
	if b := t.ing.Spec.DefaultBackend; b != nil {
		t.checkBackend("spec.defaultBackend", b)
	}
	for i, r := range t.ing.Spec.Rules {
		if r.HTTP == nil {
			continue
		}
		for j := range r.HTTP.Paths {
			t.checkBackend(fmt.Sprintf("spec.rules[%d].http.paths[%d].backend", i, j), &r.HTTP.Paths[j].Backend)
		}
	}
}

func (t *translator) checkBackend(field string, b *networkingv1.IngressBackend) {
	name, ok := t.serviceName(field, b)
	if ok && b.Service.Port.Number > 0 && b.Service.Port.Number <= 65535 {
		t.checkNumberedPort(field, name, t.in.Services[name], b.Service.Port.Number)
	}
}

func (t *translator) serviceName(field string, b *networkingv1.IngressBackend) (string, bool) {
	switch {
	case b.Resource != nil:
		t.problem(field, "a resource backend (%s %s) is not supported; use a Service", clip(b.Resource.Kind), clip(b.Resource.Name))
	case b.Service == nil:
		t.problem(field, "names no Service")
	case len(validation.IsDNS1123Label(b.Service.Name)) > 0:
		t.problem(field, "%s is not a valid Service name", clip(b.Service.Name))
	default:
		return b.Service.Name, true
	}
	return "", false
}

// backend resolves a backend to its Service name and port number; a named
// port is the Service port of that name (not the target port), as for any
// Ingress controller.
func (t *translator) backend(field string, b *networkingv1.IngressBackend) (string, int32, bool) {
	name, ok := t.serviceName(field, b)
	if !ok {
		return "", 0, false
	}
	p := b.Service.Port
	switch {
	case p.Number > 0 && p.Number <= 65535:
		return name, p.Number, true
	case p.Number != 0:
		t.problem(field, "port %d is not a port number 1-65535", p.Number)
		return "", 0, false
	case p.Name == "":
		t.problem(field, "Service %s has no port", clip(name))
		return "", 0, false
	}
	svc := t.in.Services[name]
	if svc == nil {
		t.problem(field, "Service %s not found, so its port %s cannot be resolved", clip(name), clip(p.Name))
		return "", 0, false
	}
	for _, sp := range svc.Spec.Ports {
		if sp.Name == p.Name && sp.Port > 0 && sp.Port <= 65535 {
			return name, sp.Port, true
		}
	}
	t.problem(field, "Service %s has no port named %s", clip(name), clip(p.Name))
	return "", 0, false
}

// checkNumberedPort notes a numbered backend port that cannot work yet: its
// Service is missing, or has no such port. The rule is made all the same —
// it needs nothing from the Service, and starts working when the Service
// does. Without Services to look at (the caller passed none) nothing is said.
func (t *translator) checkNumberedPort(field, name string, svc *corev1.Service, port int32) {
	if t.in.Services == nil {
		return
	}
	if svc == nil {
		t.note(NoteBackendServiceNotFound, field, "Service %s not found in namespace %s: traffic for it fails until it exists", clip(name), t.ing.Namespace)
		return
	}
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return // no ports to check
	}
	for _, sp := range svc.Spec.Ports {
		if sp.Port == port {
			if port == 443 {
				t.note(NotePlainHTTPToTLSPort, field, "Service %s port 443 is reached as http://; if it serves TLS, requests fail (cloudflared speaks plain HTTP to Ingress backends)", clip(name))
			}
			return
		}
	}
	t.note(NoteBackendPortNotFound, field, "Service %s has no port %d: traffic for it fails until it does", clip(name), port)
}

// checkTLS notes a tls section: Cloudflare terminates TLS at its edge with
// its own certificate for the hostname, so the Secrets it names are not used.
func (t *translator) checkTLS() {
	if len(t.ing.Spec.TLS) > 0 {
		t.note(NoteTLSIgnored, "spec.tls", "ignored: Cloudflare terminates TLS at its edge with a certificate of its own for each public hostname, so the Secrets named here are not used")
	}
}

// hostnames returns the Ingress's hostnames in Ingress order (so hosts[0] is
// "the first hostname"), possibly with duplicates, and false when the
// hostname annotation is bad: then nothing depending on hostnames is made,
// rather than falling back to hosts the user chose to override.
func (t *translator) hostnames() ([]host, bool) {
	if v, ok := t.ing.Annotations[tv1alpha1.AnnotationHostname]; ok {
		if strings.Contains(v, ",") {
			t.problem(tv1alpha1.AnnotationHostname, "takes one hostname, not a list: %s", clip(v))
			return nil, false
		}
		h, err := parseHost(v)
		if err != "" {
			t.problem(tv1alpha1.AnnotationHostname, "%s: %s", clip(v), err)
			return nil, false
		}
		return []host{h}, true
	}
	var hosts []host
	hasHost := false
	for i, r := range t.ing.Spec.Rules {
		if r.Host == "" {
			continue
		}
		hasHost = true
		h, err := parseHost(r.Host)
		if err != "" {
			t.problem(fmt.Sprintf("spec.rules[%d].host", i), "%s: %s", clip(r.Host), err)
			continue
		}
		hosts = append(hosts, h)
	}
	if hasHost {
		return hosts, true
	}
	// No hostname given: the backend Service's cluster DNS name, which
	// cloudflared resolves to it (the Ingress's own name resolves to
	// nothing unless a Service shares it).
	d := t.serviceHost()
	if d == "" {
		d = t.ing.Name + "." + t.ing.Namespace + "." + ServiceDomain
	}
	h, err := parseHost(d)
	if err != "" {
		t.problem("metadata.name", "default hostname %s: %s", clip(d), err)
		return nil, true
	}
	h.internal = true
	return []host{h}, true
}

// parseHost validates a hostname: ASCII letters (case-folded), digits and '-'
// per label, 1-63 characters a label, starting and ending with a letter or
// digit (as Kubernetes validates Ingress hosts), an optional leading "*."
// wildcard, at most 253 characters; one trailing dot is allowed.
func parseHost(raw string) (host, string) {
	h := strings.TrimSuffix(strings.TrimSpace(raw), ".")
	if len(h) > 253 {
		return host{}, "longer than 253 characters"
	}
	h = strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, h)
	name := strings.TrimPrefix(h, "*.")
	if name == "" {
		return host{}, "not a hostname"
	}
	for _, l := range strings.Split(name, ".") {
		if len(validation.IsDNS1123Label(l)) > 0 {
			return host{}, "each label must be 1-63 letters, digits or '-', starting and ending with a letter or digit; only a leading \"*.\" wildcard is allowed"
		}
	}
	return host{public: h, route: cloudflare.NormalizeHostname(h)}, ""
}

// rules builds the public rules: one per host and path. A rule without host
// applies, as in Kubernetes, to every host of the Ingress (never to every
// host of the tunnel: a hostless rule would swallow other Ingresses'
// traffic). The default backend gets a path-less rule on each host that has
// none yet, since explicit rules win over it in Kubernetes.
func (t *translator) rules(hosts []host) []ztv1alpha1.IngressRule {
	_, override := t.ing.Annotations[tv1alpha1.AnnotationHostname]
	var all []string
	for _, h := range hosts {
		if !slices.Contains(all, h.public) {
			all = append(all, h.public)
		}
	}
	type key struct{ host, path string }
	services := map[key]string{}
	var out []ztv1alpha1.IngressRule
	add := func(field, h string, path *string, svc string) {
		k := key{h, ptr.Deref(path, "")}
		if prev, ok := services[k]; ok {
			if prev != svc && field != "" {
				t.problem(field, "host %s path %s is already routed to %s; ignored", clip(h), clip(k.path), clip(prev))
			}
			return
		}
		services[k] = svc
		out = append(out, ztv1alpha1.IngressRule{Hostname: ptr.To(h), Path: path, Service: svc})
	}
	for i, r := range t.ing.Spec.Rules {
		targets := all
		if !override && r.Host != "" {
			h, err := parseHost(r.Host)
			if err != "" {
				continue // reported by hostnames
			}
			targets = []string{h.public}
		}
		if r.HTTP == nil {
			continue
		}
		for j, p := range r.HTTP.Paths {
			field := fmt.Sprintf("spec.rules[%d].http.paths[%d]", i, j)
			path, ok := t.path(field+".path", p)
			if !ok {
				continue
			}
			svc, ok := t.serviceURL(field+".backend", &p.Backend)
			if !ok {
				continue
			}
			for _, h := range targets {
				add(field, h, path, svc)
			}
		}
	}
	if b := t.ing.Spec.DefaultBackend; b != nil {
		if svc, ok := t.serviceURL("spec.defaultBackend", b); ok {
			for _, h := range all {
				add("", h, nil, svc)
			}
		}
	}
	sortRules(out)
	return out
}

func (t *translator) serviceURL(field string, b *networkingv1.IngressBackend) (string, bool) {
	name, port, ok := t.backend(field, b)
	if !ok {
		return "", false
	}
	return fmt.Sprintf("http://%s.%s.%s:%d", name, t.ing.Namespace, ServiceDomain, port), true
}

// path turns an Ingress path into cloudflared's path, a Go regular
// expression matched UNANCHORED against the request path. So the literal is
// quoted and anchored: Exact "/foo" is "^/foo$"; Prefix "/foo" is
// "^/foo(/|$)", Kubernetes' element-wise prefix (it matches "/foo/bar" but not
// "/foobar"); ImplementationSpecific is treated as Prefix. A prefix of "/" (or
// an empty path) matches everything and is left out.
func (t *translator) path(field string, p networkingv1.HTTPIngressPath) (*string, bool) {
	if p.Path == "" {
		return nil, true
	}
	if !strings.HasPrefix(p.Path, "/") {
		t.problem(field, "%s must start with '/'", clip(p.Path))
		return nil, false
	}
	if p.PathType != nil && *p.PathType == networkingv1.PathTypeExact {
		return ptr.To("^" + regexp.QuoteMeta(p.Path) + "$"), true
	}
	prefix := strings.TrimRight(p.Path, "/")
	if prefix == "" {
		return nil, true
	}
	return ptr.To("^" + regexp.QuoteMeta(prefix) + prefixSuffix), true
}

const prefixSuffix = "(/|$)"

func (t *translator) meta(kind, key string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:      MRName(t.ing.Name, kind, key),
		Namespace: t.ing.Namespace,
		Labels:    map[string]string{LabelIngress: LabelValue(t.ing.Name), LabelTunnel: LabelValue(t.tunnel)},
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion:         networkingv1.SchemeGroupVersion.String(),
			Kind:               "Ingress",
			Name:               t.ing.Name,
			UID:                t.ing.UID,
			Controller:         ptr.To(true),
			BlockOwnerDeletion: ptr.To(true),
		}},
	}
}

func (t *translator) spec() xpv2.ManagedResourceSpec {
	return xpv2.ManagedResourceSpec{ProviderConfigReference: t.in.Tunnel.ProviderConfigRef.DeepCopy()}
}

// tunnelRef resolves Always so a recreated Tunnel's new ID propagates.
func (t *translator) tunnelRef() *xpv2.NamespacedReference {
	return &xpv2.NamespacedReference{Name: t.tunnel, Policy: &xpv2.Policy{Resolve: ptr.To(xpv2.ResolvePolicyAlways)}}
}

func (t *translator) route(hostname string) *ztv1alpha1.HostnameRoute {
	return &ztv1alpha1.HostnameRoute{
		TypeMeta:   metav1.TypeMeta{APIVersion: ztv1alpha1.SchemeGroupVersion.String(), Kind: ztv1alpha1.HostnameRouteKind},
		ObjectMeta: t.meta(KindHostnameRoute, hostname),
		Spec: ztv1alpha1.HostnameRouteSpec{
			ManagedResourceSpec: t.spec(),
			ForProvider:         ztv1alpha1.HostnameRouteParameters{Hostname: hostname, TunnelIDRef: t.tunnelRef()},
		},
	}
}

func (t *translator) vpcServiceMR(name string, port int64, hostname string) *connv1alpha1.VPCService {
	return &connv1alpha1.VPCService{
		TypeMeta:   metav1.TypeMeta{APIVersion: connv1alpha1.SchemeGroupVersion.String(), Kind: connv1alpha1.VPCServiceKind},
		ObjectMeta: t.meta(KindVPCService, name),
		Spec: connv1alpha1.VPCServiceSpec{
			ManagedResourceSpec: t.spec(),
			ForProvider: connv1alpha1.VPCServiceParameters{
				Name:    name,
				Type:    "tcp",
				TCPPort: ptr.To(port),
				Host: connv1alpha1.ServiceHost{
					Hostname:        ptr.To(hostname),
					ResolverNetwork: &connv1alpha1.ResolverNetwork{TunnelIDRef: t.tunnelRef()},
				},
			},
			AdoptByName: t.in.Tunnel.AdoptByName,
		},
	}
}

func (t *translator) record(name string) *dnsv1alpha1.DNSRecord {
	return &dnsv1alpha1.DNSRecord{
		TypeMeta:   metav1.TypeMeta{APIVersion: dnsv1alpha1.SchemeGroupVersion.String(), Kind: dnsv1alpha1.DNSRecordKind},
		ObjectMeta: t.meta(KindDNSRecord, name),
		Spec: dnsv1alpha1.DNSRecordSpec{
			ManagedResourceSpec: t.spec(),
			ForProvider: dnsv1alpha1.DNSRecordParameters{
				Name:    name,
				Type:    "CNAME",
				Content: t.in.Tunnel.TunnelID + ".cfargotunnel.com",
				Proxied: ptr.To(true),
			},
		},
	}
}

// TunnelConfig aggregates the public rules of the Ingresses on one tunnel
// into its whole remote configuration: ordered deterministically and so that
// the most specific rule matches first, de-duplicated by hostname and path
// (a later rule for the same hostname and path could never match), ending in
// the catch-all. Rules without hostname or service are dropped: the only
// hostless rule of the document is the catch-all.
func TunnelConfig(rules ...[]ztv1alpha1.IngressRule) *ztv1alpha1.TunnelConfig {
	var all []ztv1alpha1.IngressRule
	for _, rs := range rules {
		for i := range rs {
			if ptr.Deref(rs[i].Hostname, "") != "" && rs[i].Service != "" {
				all = append(all, *rs[i].DeepCopy())
			}
		}
	}
	sortRules(all)
	out := make([]ztv1alpha1.IngressRule, 0, len(all)+1)
	for _, r := range all {
		if n := len(out); n > 0 && *out[n-1].Hostname == *r.Hostname && ptr.Deref(out[n-1].Path, "") == ptr.Deref(r.Path, "") {
			continue
		}
		if r.Path != nil && *r.Path == "" {
			r.Path = nil
		}
		out = append(out, r)
	}
	return &ztv1alpha1.TunnelConfig{Ingress: append(out, ztv1alpha1.IngressRule{Service: CatchAllService})}
}

// sortRules orders rules as cloudflared should try them (first match wins):
// exact hosts before wildcards, longer (more specific) wildcards first, then
// by host; within a host longer path literals first, Exact before Prefix of
// the same literal, path-less last; then by path and service for determinism.
func sortRules(rs []ztv1alpha1.IngressRule) {
	slices.SortStableFunc(rs, func(a, b ztv1alpha1.IngressRule) int {
		ha, hb := ptr.Deref(a.Hostname, ""), ptr.Deref(b.Hostname, "")
		wa, wb := strings.HasPrefix(ha, "*"), strings.HasPrefix(hb, "*")
		if wa != wb {
			return boolCmp(wa, wb)
		}
		if wa && len(ha) != len(hb) {
			return len(hb) - len(ha)
		}
		if c := strings.Compare(ha, hb); c != 0 {
			return c
		}
		pa, pb := ptr.Deref(a.Path, ""), ptr.Deref(b.Path, "")
		la, ea := pathRank(pa)
		lb, eb := pathRank(pb)
		if la != lb {
			return lb - la
		}
		if ea != eb {
			return boolCmp(eb, ea)
		}
		if c := strings.Compare(pa, pb); c != 0 {
			return c
		}
		return strings.Compare(a.Service, b.Service)
	})
}

func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// pathRank is the length of the literal a path regex matches (as made by
// path: quoted, anchored) and whether it is exact; a missing path ranks -1.
func pathRank(p string) (int, bool) {
	if p == "" {
		return -1, false
	}
	lit, prefix := strings.CutSuffix(strings.TrimPrefix(p, "^"), prefixSuffix)
	n := 0
	for i := 0; i < len(lit); i++ {
		switch {
		case lit[i] == '\\':
			i++ // an escaped character is one literal character
		case lit[i] == '$' && i == len(lit)-1 && !prefix:
			return n, true
		}
		n++
	}
	return n, false
}

// MRName names an MR made from an Ingress: "<ingress>-<kind>-<hash>", a
// DNS-1123 label of at most 63 characters. The hash covers the unmodified
// ingress name, kind and key (e.g. the hostname), so names stay distinct when
// the readable part is sanitised or truncated, and never change for the same
// inputs.
func MRName(ingress, kind, key string) string {
	sum := sha256.Sum256([]byte(ingress + "\x00" + kind + "\x00" + key))
	parts := []string{hex.EncodeToString(sum[:])[:10]}
	if k := sanitize(kind, 20); k != "" {
		parts = append([]string{k}, parts...)
	}
	used := len(strings.Join(parts, "-")) + 1
	if i := sanitize(ingress, validation.DNS1123LabelMaxLength-used); i != "" {
		parts = append([]string{i}, parts...)
	}
	return strings.Join(parts, "-")
}

// LabelValue is v when it is a valid label value, else a sanitised, truncated
// form with a hash suffix (names of up to 253 characters exceed a label's
// 63). Select by LabelValue(name), not name.
func LabelValue(v string) string {
	if len(validation.IsValidLabelValue(v)) == 0 {
		return v
	}
	sum := sha256.Sum256([]byte(v))
	h := hex.EncodeToString(sum[:])[:10]
	if s := sanitize(v, validation.LabelValueMaxLength-len(h)-1); s != "" {
		return s + "-" + h
	}
	return h
}

// sanitize keeps lower-cased ASCII letters and digits, turns every other run
// of characters into one '-', trims '-' at both ends, and stops at max bytes.
func sanitize(s string, max int) string {
	var b strings.Builder
	dash := false
	for i := 0; i < len(s) && b.Len() < max; i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') {
			b.WriteByte(c)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimRight(b.String(), "-")
}

// clip quotes user input for a message, shortened so that huge annotation
// values cannot blow up events and conditions.
func clip(s string) string {
	const max = 64
	if len(s) > max {
		s = s[:max] + "..."
	}
	return strconv.Quote(s)
}

// ServicesByName indexes a namespace's Services for Input.Services.
func ServicesByName(l *corev1.ServiceList) map[string]*corev1.Service {
	m := make(map[string]*corev1.Service, len(l.Items))
	for i := range l.Items {
		m[l.Items[i].Name] = &l.Items[i]
	}
	return m
}

// BackendServices names the Services an Ingress's backends refer to, each
// once: the only Services Translate looks at.
func BackendServices(ing *networkingv1.Ingress) []string {
	seen := map[string]bool{}
	var out []string
	add := func(b *networkingv1.IngressBackend) {
		if b != nil && b.Service != nil && b.Service.Name != "" && !seen[b.Service.Name] {
			seen[b.Service.Name] = true
			out = append(out, b.Service.Name)
		}
	}
	add(ing.Spec.DefaultBackend)
	for _, r := range ing.Spec.Rules {
		if r.HTTP == nil {
			continue
		}
		for i := range r.HTTP.Paths {
			add(&r.HTTP.Paths[i].Backend)
		}
	}
	return out
}
