// Package expose is the translation core of the annotation sources (an
// Ingress, a Service): what a source asks of its tunnel by name, read from
// its annotations and its routing (hosts, paths, backends) — hostname
// routes, a Workers VPC service, public hostnames and their rules. Each
// source turns its object into an Input; the annotations, the hostnames,
// the objects and the problems are decided here once, so an annotation
// means the same on either. It is pure — no clients, no I/O — and fails
// closed: a bad value is a Problem, never a guess.
package expose

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	connv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/connectivity/v1alpha1"
	tv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sharing"
)

// serviceDomain is the in-cluster DNS suffix of Services; cloudflared runs
// in the cluster and resolves it through the cluster's DNS.
func (t *translator) serviceDomain() string {
	d := t.in.ClusterDomain
	if d == "" {
		d = publish.DefaultClusterDomain
	}
	return "svc." + d
}

// Tunnel is the CloudflareTunnel a source is exposed through.
type Tunnel struct {
	// Name of the CloudflareTunnel, which is also its Tunnel MR's name.
	// Defaults to the tunnel annotation's value.
	Name string `json:"name"`
	// Namespace of the CloudflareTunnel and its Tunnel MR; "" is the
	// source's.
	Namespace string `json:"namespace,omitempty"`
	// TunnelID is the Cloudflare tunnel ID (the Tunnel MR's external-name);
	// "" while not known yet.
	TunnelID string `json:"tunnelID,omitempty"`
	// ProviderConfigRef is the credentials every MR made for this tunnel
	// uses; nil leaves the MR's default (ClusterProviderConfig "default").
	ProviderConfigRef *xpv2.ProviderConfigReference `json:"providerConfigRef,omitempty"`
	// AdoptByName is the CloudflareTunnel's spec.adoptByName, which its
	// sources' VPC services follow: after a rebuild they take over the
	// services of their names as the tunnel does its own.
	AdoptByName bool `json:"adoptByName,omitempty"`
}

// Input is everything a translation depends on: the source as the core
// reads it.
type Input struct {
	// Namespace of the source, where its objects are made.
	Namespace string
	// Annotations the source is read from.
	Annotations map[string]string
	// Owner is the source the objects are made for; its Name is the
	// source's.
	Owner  Owner
	Tunnel Tunnel
	// Routing is where the source sends traffic.
	Routing Routing
	// Services of the source's namespace by name, to resolve named ports
	// and check numbered ones; nil checks nothing.
	Services map[string]*corev1.Service
	// ClusterDomain of Service DNS names; "" is cluster.local.
	ClusterDomain string
	// NamesPublicHost: the hostname annotation names a public hostname even
	// where the annotations given no longer ask to publish it (a Service
	// whose public hostname a Problem withholds), so no VPC service reaches
	// it.
	NamesPublicHost bool
}

// Routing is where a source sends traffic: rules by host and path, and a
// default backend for what no rule takes.
type Routing struct {
	Rules []Rule
	// HostsField names the rules' hosts together, for a message about
	// all of them ("spec.rules[].host").
	HostsField string
	Default    *Backend
}

// Rule routes the paths of one host ("" is every host of the source).
type Rule struct {
	Host string
	// HostField is where Host is written, for messages.
	HostField string
	Paths     []Path
}

// Path sends the requests of a path to a backend.
type Path struct {
	// Field is where the path is written, for messages.
	Field string
	// Path is "" for every path; else it starts with '/'.
	Path string
	// Exact matches Path only; otherwise it is a prefix, by whole
	// segments.
	Exact   bool
	Backend Backend
}

// Backend is what a path's traffic goes to: a Service port, or a resource
// the sources do not support.
type Backend struct {
	// Field is where the backend is written, for messages.
	Field    string
	Service  *ServicePort
	Resource *Resource
}

// ServicePort is a Service's port by number, or by name (Number 0).
type ServicePort struct {
	Name     string
	Number   int32
	PortName string
}

// Resource is a backend that is not a Service.
type Resource struct{ Kind, Name string }

// Owner is the source objects are made for: their controller reference,
// the label that lists them, and what distinguishes their names from those
// of an Ingress of the same name.
type Owner struct {
	APIVersion, Kind, Name string
	UID                    types.UID
	// Label is the label key holding the owner's name (publish.LabelIngress,
	// publish.LabelService).
	Label string
	// KindPrefix goes before each kind in the objects' names, so a Service
	// and an Ingress of one name never make objects of the same name.
	KindPrefix string
	// BlockOwnerDeletion in the objects' controller reference: it needs
	// the right to set the owner's finalizers, which the provider has for
	// Ingresses (it sets its own) and not for Services.
	BlockOwnerDeletion bool
}

// Result is what one source asks of its tunnel by name. Its JSON names
// are those the translators' golden corpora (testdata/golden) write.
type Result struct {
	// Hostnames routed privately: normalised, sorted, distinct.
	Hostnames []string                    `json:"hostnames,omitempty"`
	Routes    []*ztv1alpha1.HostnameRoute `json:"routes,omitempty"`
	Services  []*connv1alpha1.VPCService  `json:"vpcServices,omitempty"`
	// Published are the public hostnames of a public source, one per
	// hostname: each makes its DNS record and its tunnel rules.
	Published []*tv1alpha1.PublicHostname `json:"publicHostnames,omitempty"`
	// Rules the published hostnames ask of the tunnel, ordered as the
	// tunnel's configuration orders them, without the catch-all.
	Rules  []ztv1alpha1.IngressRule `json:"rules,omitempty"`
	Public bool                     `json:"public,omitempty"`
	// DNSMode of the published hostnames (tv1alpha1.DNSModeDNSRecord,
	// DNSModeExternalDNS or DNSModeNone), and the provider-specific key that
	// marks the records of an ExternalDNS DNSEndpoint proxied.
	DNSMode               string `json:"dnsMode,omitempty"`
	ExternalDNSProxiedKey string `json:"externalDNSProxiedKey,omitempty"`
	// Problems in the input; what depends on a bad part is not produced.
	// Field is an annotation key or a field path such as
	// "spec.rules[0].http.paths[1].backend".
	Problems []publish.Problem `json:"problems,omitempty"`
	// Notes are things the user should know that change nothing in the
	// result (a backend Service not there yet, TLS settings Cloudflare's
	// edge replaces).
	Notes []Note `json:"notes,omitempty"`
	// Written maps each routed hostname (Hostnames) to the forms the
	// source wrote it in (lower case, wildcard kept), so a message can
	// name what the user wrote.
	Written map[string][]string `json:"written,omitempty"`
}

// A Note is a Warning about input that is accepted as it is.
type Note struct {
	Reason  string `json:"reason"`
	Field   string `json:"field"`
	Message string `json:"message"`
}

func (n Note) String() string { return n.Field + ": " + n.Message }

// Reasons of Notes.
const (
	NoteBackendServiceNotFound = "BackendServiceNotFound"
	NoteBackendPortNotFound    = "BackendPortNotFound"
	NoteTLSIgnored             = "TLSIgnored"
	NotePlainHTTPToTLSPort     = "PlainHTTPToPort443"
	// NoteWildcardPrivateRoute: a wildcard host's private route covers
	// every name below it.
	NoteWildcardPrivateRoute = "WildcardPrivateRoute"
)

// host is one hostname in its two forms.
type host struct {
	public string // lower case, wildcard kept: DNS record names and rule hostnames
	route  string // hostname.Normalize: what Cloudflare stores for routes
	// internal: the default hostname of a source that names none, a
	// cluster-internal name no public zone holds.
	internal bool
}

type translator struct {
	in     Input
	ann    map[string]string
	tunnel string
	// tunnelNamespace is the tunnel's namespace: the source's, or that of
	// a tunnel shared with it.
	tunnelNamespace string
	problems        []publish.Problem
	notes           []Note
}

func (t *translator) note(reason, field, format string, args ...any) {
	t.notes = append(t.notes, Note{Reason: reason, Field: field, Message: fmt.Sprintf(format, args...)})
}

func (t *translator) problem(field, format string, args ...any) {
	t.problems = append(t.problems, publish.Problem{Field: field, Message: fmt.Sprintf(format, args...)})
}

// Translate computes the objects and public rules a source on a tunnel
// needs.
func Translate(in Input) Result {
	t := &translator{in: in, ann: in.Annotations}
	r := t.translate()
	// The same backend may be looked at for several purposes; report it once.
	seen := map[publish.Problem]bool{}
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
	ann := t.ann
	raw := strings.TrimSpace(ann[tv1alpha1.AnnotationTunnel])
	if raw == "" {
		t.problem(tv1alpha1.AnnotationTunnel, "required: the name of a CloudflareTunnel in this namespace")
		return Result{}
	}
	ref, bad := sharing.Parse(raw, t.in.Namespace)
	if t.in.Tunnel.Name != "" {
		// The caller's lookup is authoritative.
		ref, bad = sharing.Ref{Namespace: t.in.Tunnel.Namespace, Name: t.in.Tunnel.Name}, ""
		if ref.Namespace == "" {
			ref.Namespace = t.in.Namespace
		}
	}
	if bad != "" {
		t.problem(tv1alpha1.AnnotationTunnel, "%s", bad)
		return Result{}
	}
	t.tunnel, t.tunnelNamespace = ref.Name, ref.Namespace
	if t.in.Owner.Name == "" || t.in.Namespace == "" {
		t.problem("metadata", "the %s needs a name and a namespace", t.kind())
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
		t.problem(tv1alpha1.AnnotationPublic, "the %s names no hostname (%s), so it is reached privately as %s; set a public hostname to publish it; no DNS record or public rule is made",
			t.kind(), t.whereHostnamesAre(), hosts[0].public)
		public = false
	}
	r := Result{Public: public, Written: map[string][]string{}}
	for _, h := range hosts {
		if _, seen := r.Written[h.route]; !seen {
			r.Hostnames = append(r.Hostnames, h.route)
		}
		if strings.HasPrefix(h.public, "*.") {
			field := t.in.Routing.HostsField
			if _, ok := ann[tv1alpha1.AnnotationHostname]; ok {
				field = tv1alpha1.AnnotationHostname
			}
			t.note(NoteWildcardPrivateRoute, field, "host %s is routed privately as %s (Cloudflare stores a wildcard route without its \"*.\"), which sends WARP clients' requests for every name under %s to this tunnel, names other Ingresses or teams serve included; list the hosts one by one to route only those", publish.Clip(h.public), publish.Clip(h.route), publish.Clip(h.route))
		}
		if !slices.Contains(r.Written[h.route], h.public) {
			r.Written[h.route] = append(r.Written[h.route], h.public)
		}
	}
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
		t.unpublishedLoadBalancing()
		return r
	}
	before := len(t.problems)
	r.DNSMode, r.ExternalDNSProxiedKey = t.dns()
	opts, access := t.originOptions(), t.access()
	lb := t.loadBalancing(hosts, r.DNSMode)
	t.protocol()
	if len(t.problems) > before {
		// A bad origin option, Access or load-balancing annotation
		// publishes nothing: the hostnames keep the rules they had (with
		// their Access check, if they had one), never a guess and never
		// without the check.
		return r
	}
	r.Published = t.published(hosts, opts, access)
	for _, ph := range r.Published {
		ph.Spec.LoadBalancing = lb.DeepCopy()
	}
	if r.DNSMode != tv1alpha1.DNSModeDNSRecord {
		// The PublicHostnames publish the rules; the records are
		// external-dns's (the controller writes its DNSEndpoint) or the
		// user's.
		for _, ph := range r.Published {
			ph.Spec.DNS = tv1alpha1.DNSNone
		}
	}
	for _, ph := range r.Published {
		spec, managed := ph.Spec, access != nil && len(access.Policies) > 0
		if managed {
			// The audience tag is known once the PublicHostname's Access
			// application exists: the rest of the spec is checked here,
			// and its rules are the PublicHostname's to publish then.
			spec.Access = nil
		}
		res := publish.Rules(spec, publish.Env{Namespace: t.in.Namespace, ClusterDomain: t.in.ClusterDomain, TunnelNamespace: t.tunnelNamespace})
		for _, p := range res.Problems {
			t.problem("PublicHostname "+ph.Name+" "+p.Field, "%s", p.Message)
		}
		if !managed {
			r.Rules = append(r.Rules, res.Rules...)
		}
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
	if v, ok := t.ann[tv1alpha1.AnnotationDNS]; ok {
		switch {
		case strings.EqualFold(v, tv1alpha1.DNSModeDNSRecord):
		case strings.EqualFold(v, tv1alpha1.DNSModeExternalDNS):
			mode = tv1alpha1.DNSModeExternalDNS
		case strings.EqualFold(v, tv1alpha1.DNSModeNone):
			mode = tv1alpha1.DNSModeNone
		default:
			t.problem(tv1alpha1.AnnotationDNS, "must be %s, %s or %s, not %s", tv1alpha1.DNSModeDNSRecord, tv1alpha1.DNSModeExternalDNS, tv1alpha1.DNSModeNone, publish.Clip(v))
		}
	}
	key := tv1alpha1.DefaultExternalDNSProxiedKey
	if v, ok := t.ann[tv1alpha1.AnnotationExternalDNSProxiedKey]; ok {
		if v == "" || len(v) > 253 || strings.ContainsFunc(v, func(r rune) bool { return r <= ' ' || r > '~' }) {
			t.problem(tv1alpha1.AnnotationExternalDNSProxiedKey, "must be a provider-specific property name (1-253 printable characters, no spaces), not %s", publish.Clip(v))
		} else {
			key = v
		}
	}
	return mode, key
}

// public parses the public annotation; anything but true/false is a Problem
// and means private, the safe side.
func (t *translator) public() bool {
	v, ok := t.ann[tv1alpha1.AnnotationPublic]
	switch {
	case !ok || strings.EqualFold(v, "false"):
		return false
	case strings.EqualFold(v, "true"):
		return true
	}
	t.problem(tv1alpha1.AnnotationPublic, `must be "true" or "false", not %s; treated as "false"`, publish.Clip(v))
	return false
}

// vpcService returns the VPC service name, and whether one is wanted and valid.
// "true"/"false" are rejected even though they are valid names: they betray
// an annotation meant as a switch, and would create a service literally named
// "true".
func (t *translator) vpcService() (string, bool) {
	v, ok := t.ann[tv1alpha1.AnnotationVPCService]
	if !ok {
		return "", false
	}
	if v == "true" || v == "false" || len(validation.IsDNS1123Label(v)) > 0 {
		t.problem(tv1alpha1.AnnotationVPCService,
			"must name the VPC service (1-63 lower-case letters, digits and '-', starting and ending with a letter or digit), not %s; no VPC service is created", publish.Clip(v))
		return "", false
	}
	return v, true
}

// vpcPort returns the vpc-port annotation: its value, whether it is set, and
// whether it is valid (unset is valid).
func (t *translator) vpcPort() (int32, bool, bool) {
	v, ok := t.ann[tv1alpha1.AnnotationVPCPort]
	if !ok {
		return 0, false, true
	}
	n, err := strconv.ParseUint(v, 10, 16)
	if err != nil || n == 0 {
		t.problem(tv1alpha1.AnnotationVPCPort, "must be a port number 1-65535, not %s; no VPC service is created", publish.Clip(v))
		return 0, true, false
	}
	return int32(n), true, true
}

// kind is the source's kind, as its messages name it.
func (t *translator) kind() string {
	if t.in.Owner.Kind == "" {
		return "source"
	}
	return t.in.Owner.Kind
}

// whereHostnamesAre says where the source could have named a hostname.
func (t *translator) whereHostnamesAre() string {
	if t.in.Owner.Kind == "Ingress" {
		return fmt.Sprintf("no spec.rules[].host and no %s annotation", tv1alpha1.AnnotationHostname)
	}
	return fmt.Sprintf("no %s annotation", tv1alpha1.AnnotationHostname)
}
