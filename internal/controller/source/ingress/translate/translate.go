// Package translate turns an Ingress on a Cloudflare tunnel into the managed
// resources (HostnameRoute, VPCService, DNSRecord) and public ingress rules it
// needs. It is pure — no clients, no I/O — so the Ingress controller only
// applies what it returns, and every translation decision is table-tested and
// fuzzed here.
package translate

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	connv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/connectivity/v1alpha1"
	tv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/hostname"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sharing"
)

// Labels on every object made from an Ingress, so the controller can list
// what an Ingress (or a tunnel) owns. Values go through LabelValue.
const (
	LabelIngress = publish.LabelIngress
	LabelTunnel  = publish.LabelTunnel
)

// Kind abbreviations used in the names of objects made from an Ingress.
const (
	KindHostnameRoute  = publish.KindHostnameRoute
	KindVPCService     = publish.KindVPCService
	KindDNSRecord      = publish.KindDNSRecord
	KindPublicHostname = publish.KindPublicHostname
)

// CatchAllService ends every remote configuration.
const CatchAllService = publish.CatchAllService

// serviceDomain is the in-cluster DNS suffix of Services; cloudflared runs
// in the cluster and resolves it through the cluster's DNS.
func (t *translator) serviceDomain() string {
	d := t.in.ClusterDomain
	if d == "" {
		d = publish.DefaultClusterDomain
	}
	return "svc." + d
}

// Tunnel is the CloudflareTunnel an Ingress is exposed through.
type Tunnel struct {
	// Name of the CloudflareTunnel, which is also its Tunnel MR's name.
	// Defaults to the tunnel annotation's value.
	Name string
	// Namespace of the CloudflareTunnel and its Tunnel MR; "" is the
	// Ingress's.
	Namespace string
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
	// ClusterDomain of Service DNS names; "" is cluster.local.
	ClusterDomain string
	// Owner is the source the objects are made for when it is not the
	// Ingress itself: a Service, translated through an Ingress built from
	// its annotations so both sources give the same answers. nil is the
	// Ingress.
	Owner *Owner
	// NamesPublicHost: the hostname annotation names a public hostname even
	// where the annotations given no longer ask to publish it (a Service
	// whose public hostname a Problem withholds), so no VPC service reaches
	// it.
	NamesPublicHost bool
}

// Owner is the source objects are made for: their controller reference,
// the label that lists them, and what distinguishes their names from those
// of an Ingress of the same name.
type Owner struct {
	APIVersion, Kind, Name string
	UID                    types.UID
	// Label is the label key holding the owner's name (publish.LabelService).
	Label string
	// KindPrefix goes before each kind in the objects' names, so a Service
	// and an Ingress of one name never make objects of the same name.
	KindPrefix string
	// BlockOwnerDeletion in the objects' controller reference: it needs
	// the right to set the owner's finalizers, which the provider has for
	// Ingresses (it sets its own) and not for Services.
	BlockOwnerDeletion bool
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
	// Published are the public hostnames of a public Ingress, one per
	// hostname: each makes its DNS record and its tunnel rules.
	Published []*tv1alpha1.PublicHostname
	// Rules the published hostnames ask of the tunnel, ordered as the
	// tunnel's configuration orders them, without the catch-all.
	Rules  []ztv1alpha1.IngressRule
	Public bool
	// DNSMode of the published hostnames (tv1alpha1.DNSModeDNSRecord,
	// DNSModeExternalDNS or DNSModeNone), and the provider-specific key that
	// marks the records of an ExternalDNS DNSEndpoint proxied.
	DNSMode               string
	ExternalDNSProxiedKey string
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
	route  string // hostname.Normalize: what Cloudflare stores for routes
	// internal: the default hostname of an Ingress that names none, a
	// cluster-internal name no public zone holds.
	internal bool
}

type translator struct {
	in     Input
	ing    *networkingv1.Ingress
	tunnel string
	// tunnelNamespace is the tunnel's namespace: the Ingress's, or that of
	// a tunnel shared with it.
	tunnelNamespace string
	problems        []Problem
	notes           []Note
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
	raw := strings.TrimSpace(ann[tv1alpha1.AnnotationTunnel])
	if raw == "" {
		t.problem(tv1alpha1.AnnotationTunnel, "required: the name of a CloudflareTunnel in this namespace")
		return Result{}
	}
	ref, bad := sharing.Parse(raw, ing.Namespace)
	if t.in.Tunnel.Name != "" {
		// The caller's lookup is authoritative.
		ref, bad = sharing.Ref{Namespace: t.in.Tunnel.Namespace, Name: t.in.Tunnel.Name}, ""
		if ref.Namespace == "" {
			ref.Namespace = ing.Namespace
		}
	}
	if bad != "" {
		t.problem(tv1alpha1.AnnotationTunnel, "%s", bad)
		return Result{}
	}
	t.tunnel, t.tunnelNamespace = ref.Name, ref.Namespace
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
		if host, hostOK := t.vpcHost(hosts); ok && hostOK {
			r.Services = append(r.Services, t.vpcServiceMR(vpcName, int64(port), host))
		}
	}

	if !public {
		return r
	}
	before := len(t.problems)
	r.DNSMode, r.ExternalDNSProxiedKey = t.dns()
	opts, access := t.originOptions(), t.access()
	t.protocol()
	if len(t.problems) > before {
		// A bad origin option or Access annotation publishes nothing: the
		// hostnames keep the rules they had (with their Access check, if
		// they had one), never a guess and never without the check.
		return r
	}
	r.Published = t.published(hosts, opts, access)
	if r.DNSMode != tv1alpha1.DNSModeDNSRecord {
		// The PublicHostnames publish the rules; the records are
		// external-dns's (the controller writes its DNSEndpoint) or the
		// user's.
		for _, ph := range r.Published {
			ph.Spec.DNS = tv1alpha1.DNSNone
		}
	}
	for _, ph := range r.Published {
		res := publish.Rules(ph.Spec, publish.Env{Namespace: t.ing.Namespace, ClusterDomain: t.in.ClusterDomain, TunnelNamespace: t.tunnelNamespace})
		for _, p := range res.Problems {
			t.problem("PublicHostname "+ph.Name+" "+p.Field, "%s", p.Message)
		}
		r.Rules = append(r.Rules, res.Rules...)
	}
	cfg := publish.TunnelConfig(r.Rules)
	r.Rules = cfg.Ingress[:len(cfg.Ingress)-1]
	return r
}

// dns parses the DNS mode annotation (DNSRecord by default) and the
// ExternalDNS proxied key. A bad value is a Problem, which publishes
// nothing new: the hostnames keep the DNS they have.
func (t *translator) dns() (string, string) {
	mode := tv1alpha1.DNSModeDNSRecord
	if v, ok := t.ing.Annotations[tv1alpha1.AnnotationDNS]; ok {
		switch {
		case strings.EqualFold(v, tv1alpha1.DNSModeDNSRecord):
		case strings.EqualFold(v, tv1alpha1.DNSModeExternalDNS):
			mode = tv1alpha1.DNSModeExternalDNS
		case strings.EqualFold(v, tv1alpha1.DNSModeNone):
			mode = tv1alpha1.DNSModeNone
		default:
			t.problem(tv1alpha1.AnnotationDNS, "must be %s, %s or %s, not %s", tv1alpha1.DNSModeDNSRecord, tv1alpha1.DNSModeExternalDNS, tv1alpha1.DNSModeNone, clip(v))
		}
	}
	key := tv1alpha1.DefaultExternalDNSProxiedKey
	if v, ok := t.ing.Annotations[tv1alpha1.AnnotationExternalDNSProxiedKey]; ok {
		if v == "" || len(v) > 253 || strings.ContainsFunc(v, func(r rune) bool { return r <= ' ' || r > '~' }) {
			t.problem(tv1alpha1.AnnotationExternalDNSProxiedKey, "must be a provider-specific property name (1-253 printable characters, no spaces), not %s", clip(v))
		} else {
			key = v
		}
	}
	return mode, key
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
	return b.Service.Name + "." + t.ing.Namespace + "." + t.serviceDomain()
}

// vpcHost is the host a VPC service reaches, and false when there is none
// (a Problem). A Worker's traffic leaves the tunnel at cloudflared, inside
// the cluster, so the host must be a name cloudflared resolves to the
// backend: the backend Service's cluster DNS name, unless the hostname
// annotation names a private host explicitly. Never a public rule host: a
// public hostname resolves to Cloudflare's edge, not to the backend.
func (t *translator) vpcHost(hosts []host) (string, bool) {
	public := t.namesPublicHost()
	if _, override := t.ing.Annotations[tv1alpha1.AnnotationHostname]; override && !public {
		return hosts[0].route, true
	}
	if h := t.serviceHost(); h != "" {
		return h, true
	}
	if !public || hosts[0].internal {
		return hosts[0].route, true
	}
	t.problem(tv1alpha1.AnnotationVPCService, "not created: the Ingress's hostnames are public, and inside the cluster a public hostname resolves to Cloudflare's edge, not to a backend; give the Ingress a backend Service for the VPC service to reach")
	return "", false
}

// namesPublicHost says whether the Ingress's hostnames are public ones: it
// asks to be published (a public annotation that is not "false", even one
// that is not valid: what it published stays), or the caller says so.
func (t *translator) namesPublicHost() bool {
	v, ok := t.ing.Annotations[tv1alpha1.AnnotationPublic]
	return ok && !strings.EqualFold(strings.TrimSpace(v), "false") || t.in.NamesPublicHost
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
			if port == 443 && t.ing.Annotations[tv1alpha1.AnnotationOriginProtocol] == "" {
				t.note(NotePlainHTTPToTLSPort, field, "Service %s port 443 is reached as http://; if it serves TLS, requests fail: set %s: https", clip(name), tv1alpha1.AnnotationOriginProtocol)
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
		d = t.ing.Name + "." + t.ing.Namespace + "." + t.serviceDomain()
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
	return host{public: h, route: hostname.Normalize(h)}, ""
}

// published builds one PublicHostname per public host: a path per
// Ingress path, the path-less rule as the hostname's origin. A rule without
// host applies, as in Kubernetes, to every host of the Ingress (never to
// every host of the tunnel: a hostless rule would swallow other Ingresses'
// traffic). The default backend is the origin of each host that has no
// path-less rule yet, since explicit rules win over it in Kubernetes.
func (t *translator) published(hosts []host, opts *tv1alpha1.OriginOptions, access *tv1alpha1.Access) []*tv1alpha1.PublicHostname {
	_, override := t.ing.Annotations[tv1alpha1.AnnotationHostname]
	var all []string
	for _, h := range hosts {
		if !slices.Contains(all, h.public) {
			all = append(all, h.public)
		}
	}
	type key struct{ host, path string }
	routed := map[key]string{}
	specs := map[string]*tv1alpha1.PublicHostnameSpec{}
	add := func(field, h string, p networkingv1.HTTPIngressPath, path *string, origin tv1alpha1.Origin) {
		k := key{h, ptr.Deref(path, "")}
		desc := origin.Service.Name + ":" + strconv.Itoa(int(origin.Service.Port.IntVal))
		if prev, ok := routed[k]; ok {
			if prev != desc && field != "" {
				t.problem(field, "host %s path %s is already routed to %s; ignored", clip(h), clip(k.path), clip(prev))
			}
			return
		}
		routed[k] = desc
		spec := specs[h]
		if spec == nil {
			spec = &tv1alpha1.PublicHostnameSpec{TunnelRef: tv1alpha1.TunnelReference{Name: t.tunnel, Namespace: t.otherNamespace()}, Hostname: h, OriginRequest: opts, Access: access, DNS: tv1alpha1.DNSManaged}
			specs[h] = spec
		}
		if path == nil {
			spec.Origin = &origin
			return
		}
		pt := tv1alpha1.PathTypePrefix
		if p.PathType != nil && *p.PathType == networkingv1.PathTypeExact {
			pt = tv1alpha1.PathTypeExact
		}
		spec.Paths = append(spec.Paths, tv1alpha1.PathOrigin{Path: p.Path, PathType: pt, Origin: origin})
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
			origin, ok := t.origin(field+".backend", &p.Backend)
			if !ok {
				continue
			}
			for _, h := range targets {
				add(field, h, p, path, origin)
			}
		}
	}
	if b := t.ing.Spec.DefaultBackend; b != nil {
		if origin, ok := t.origin("spec.defaultBackend", b); ok {
			for _, h := range all {
				add("", h, networkingv1.HTTPIngressPath{}, nil, origin)
			}
		}
	}
	var out []*tv1alpha1.PublicHostname
	slices.Sort(all)
	for _, h := range all {
		spec := specs[h]
		if spec == nil {
			continue // no backend reached it
		}
		out = append(out, &tv1alpha1.PublicHostname{
			TypeMeta:   metav1.TypeMeta{APIVersion: tv1alpha1.SchemeGroupVersion.String(), Kind: tv1alpha1.PublicHostnameKind},
			ObjectMeta: t.meta(KindPublicHostname, h),
			Spec:       *spec,
		})
	}
	return out
}

// origin is a backend as a PublicHostname's Service origin, its port
// resolved to a number (a named port is the Service port of that name).
func (t *translator) origin(field string, b *networkingv1.IngressBackend) (tv1alpha1.Origin, bool) {
	name, port, ok := t.backend(field, b)
	if !ok {
		return tv1alpha1.Origin{}, false
	}
	return tv1alpha1.Origin{Service: &tv1alpha1.ServiceOrigin{Name: name, Port: intstr.FromInt32(port), Protocol: t.protocol()}}, true
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
	if !utf8.ValidString(p.Path) { // cloudflared's regular expressions are UTF-8
		t.problem(field, "%s is not valid UTF-8", clip(p.Path))
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
	o := t.owner()
	return metav1.ObjectMeta{
		Name:      MRName(o.Name, o.KindPrefix+kind, key),
		Namespace: t.ing.Namespace,
		Labels:    t.labels(o),
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion:         o.APIVersion,
			Kind:               o.Kind,
			Name:               o.Name,
			UID:                o.UID,
			Controller:         ptr.To(true),
			BlockOwnerDeletion: ptr.To(o.BlockOwnerDeletion),
		}},
	}
}

// otherNamespace is the tunnel's namespace when it is not the source's
// (a shared tunnel), else "".
func (t *translator) otherNamespace() string {
	if t.tunnelNamespace == t.ing.Namespace {
		return ""
	}
	return t.tunnelNamespace
}

// labels of an object made for the source: its owner and its tunnel (with
// the tunnel's namespace when it is another's, so that tunnel finds it).
func (t *translator) labels(o Owner) map[string]string {
	l := map[string]string{o.Label: LabelValue(o.Name), LabelTunnel: LabelValue(t.tunnel)}
	if ns := t.otherNamespace(); ns != "" {
		l[publish.LabelTunnelNamespace] = ns
	}
	return l
}

// owner is what the objects are made for: Input.Owner, or the Ingress.
func (t *translator) owner() Owner {
	if t.in.Owner != nil {
		return *t.in.Owner
	}
	return Owner{APIVersion: networkingv1.SchemeGroupVersion.String(), Kind: "Ingress", Name: t.ing.Name, UID: t.ing.UID, Label: LabelIngress, BlockOwnerDeletion: true}
}

func (t *translator) spec() xpv2.ManagedResourceSpec {
	return xpv2.ManagedResourceSpec{ProviderConfigReference: t.in.Tunnel.ProviderConfigRef.DeepCopy()}
}

// tunnelRef resolves Always so a recreated Tunnel's new ID propagates.
func (t *translator) tunnelRef() *xpv2.NamespacedReference {
	return &xpv2.NamespacedReference{Name: t.tunnel, Namespace: t.otherNamespace(), Policy: &xpv2.Policy{Resolve: ptr.To(xpv2.ResolvePolicyAlways)}}
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

// TunnelConfig aggregates the public rules of Ingresses on one tunnel into
// its whole remote configuration, as the CloudflareTunnel does with the
// published hostnames they make (publish.TunnelConfig).
func TunnelConfig(rules ...[]ztv1alpha1.IngressRule) *ztv1alpha1.TunnelConfig {
	return publish.TunnelConfig(rules...)
}

// MRName names an object made from an Ingress: "<ingress>-<kind>-<hash>"
// (publish.ObjectName).
func MRName(ingress, kind, key string) string { return publish.ObjectName(ingress, kind, key) }

// LabelValue is v when it is a valid label value, else a sanitised,
// truncated form with a hash suffix (publish.LabelValue).
func LabelValue(v string) string { return publish.LabelValue(v) }

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
