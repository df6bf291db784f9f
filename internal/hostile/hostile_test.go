package hostile

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/common"
	connv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/connectivity/v1alpha1"
	dnsv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/dns/v1alpha1"
	tv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/providertest"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

var p *providertest.Provider

func TestMain(m *testing.M) { os.Exit(providertest.Run(m, &p)) }

// How an entry is answered.
type answer int

const (
	// rejected: the API server refuses the create (or, with patch, the
	// update) and its error contains every want substring.
	rejected answer = iota
	// warned: the object is accepted and the controller answers with a
	// Warning event of the given reason whose message contains every want.
	warned
	// notSynced: the managed resource is accepted and refused at runtime
	// with Synced=False whose message contains every want.
	notSynced
	// notReady: the ProviderConfig is accepted and reported Ready=False.
	notReady
	// valid: unusual but legitimate input (wildcards, underscores, trailing
	// dots, the longest allowed name) that a server-side dry-run create must
	// accept: the schema's rules must not refuse what Cloudflare takes.
	valid
	// custom: run decides and returns the answer.
	custom
)

// An entry is one hostile input and the answer it must get.
type entry struct {
	name   string
	answer answer
	// obj builds the object to create.
	obj func(c *corpus) client.Object
	// patch, for rejected: obj is created (it must be accepted), then this
	// change to it must be refused.
	patch func(o client.Object)
	// reason of the Warning event, for warned.
	reason string
	// want are substrings of the error, event or condition message.
	want []string
	// run, for custom.
	run func(t *testing.T, c *corpus) string
	// check runs on the account's final state.
	check func(t *testing.T, c *corpus, st sim.State)
}

// healthy is the Ingress that already works before the corpus runs: a
// CloudflareTunnel and a public Ingress with a VPC service, in its own
// namespace.
type healthy struct {
	ns, tunnelName, tunnelID, host, vpc string
	// print is the fingerprint of its Cloudflare objects once Ready.
	print map[string]string
}

// corpus is where the entries run.
type corpus struct {
	h *healthy
	// ns has a CloudflareTunnel "edge" and Services web (port "http" 80) and
	// redis (port "redis" 6379); most entries run here.
	ns               string
	edgeName, edgeID string
	bare             string // a namespace without any tunnel
	creds            string // a working ProviderConfig that exists only in h.ns
	endpoint         string // the simulator's API endpoint
	// bugs are the known bugs the corpus ran into.
	bugs []string
	// made are IDs of Cloudflare objects entries made on purpose.
	made map[string]bool
}

// knownBug reports a way hostile input gets through (the corpus found three:
// tunnels and VPC services adopted across namespaces, and a hostname
// conflict's loser still routed by its tunnel; all fixed). It fails the
// test and returns the entry's answer for the table.
func (c *corpus) knownBug(t *testing.T, format string, args ...any) string {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	c.bugs = append(c.bugs, msg)
	t.Error("BUG: " + msg)
	return "BUG: " + msg
}

func backend(svc string, port networkingv1.ServiceBackendPort) *networkingv1.IngressBackend {
	return &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: svc, Port: port}}
}

func number(n int32) networkingv1.ServiceBackendPort {
	return networkingv1.ServiceBackendPort{Number: n}
}

func named(n string) networkingv1.ServiceBackendPort { return networkingv1.ServiceBackendPort{Name: n} }

func service(ns, name, portName string, port int32) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: portName, Port: port, TargetPort: intstr.FromInt32(port)}}},
	}
}

func hostRule(host, path string, pt networkingv1.PathType, b *networkingv1.IngressBackend) networkingv1.IngressRule {
	return networkingv1.IngressRule{Host: host, IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
		Paths: []networkingv1.HTTPIngressPath{{Path: path, PathType: ptr.To(pt), Backend: *b}},
	}}}
}

// ingress is an Ingress of class cloudflare in the corpus namespace on
// tunnel "edge", with web:80 as default backend. ann adds annotations, or
// removes them with the value "-".
func (c *corpus) ingress(name string, ann map[string]string, mutate ...func(*networkingv1.Ingress)) *networkingv1.Ingress {
	a := map[string]string{tv1alpha1.AnnotationTunnel: "edge"}
	for k, v := range ann {
		if v == "-" {
			delete(a, k)
		} else {
			a[k] = v
		}
	}
	ing := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Namespace: c.ns, Name: name, Annotations: a},
		Spec:       networkingv1.IngressSpec{IngressClassName: ptr.To("cloudflare"), DefaultBackend: backend("web", number(80))},
	}
	for _, m := range mutate {
		m(ing)
	}
	return ing
}

// binding is a GatewayBinding of listener public/web on tunnel "edge" to
// the Service traefik:80.
func (c *corpus) binding(name string, mutate ...func(*tv1alpha1.GatewayBinding)) *tv1alpha1.GatewayBinding {
	b := &tv1alpha1.GatewayBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: c.ns, Name: name},
		Spec: tv1alpha1.GatewayBindingSpec{
			TunnelRef:  tv1alpha1.TunnelReference{Name: "edge"},
			GatewayRef: tv1alpha1.GatewayListenerReference{Name: "public", SectionName: "web"},
			Origin:     tv1alpha1.GatewayOrigin{Service: tv1alpha1.GatewayServiceOrigin{Name: "traefik", Port: intstr.FromInt32(80)}},
		},
	}
	for _, m := range mutate {
		m(b)
	}
	return b
}

func (c *corpus) route(name, hostname string, mutate ...func(*ztv1alpha1.HostnameRoute)) *ztv1alpha1.HostnameRoute {
	r := &ztv1alpha1.HostnameRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: c.ns, Name: name},
		Spec: ztv1alpha1.HostnameRouteSpec{ForProvider: ztv1alpha1.HostnameRouteParameters{
			Hostname: hostname, TunnelIDRef: &xpv2.NamespacedReference{Name: "edge"},
		}},
	}
	for _, m := range mutate {
		m(r)
	}
	return r
}

func (c *corpus) network(name, network string, mutate ...func(*ztv1alpha1.NetworkRoute)) *ztv1alpha1.NetworkRoute {
	r := &ztv1alpha1.NetworkRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: c.ns, Name: name},
		Spec: ztv1alpha1.NetworkRouteSpec{ForProvider: ztv1alpha1.NetworkRouteParameters{
			Network: network, TunnelIDRef: &xpv2.NamespacedReference{Name: "edge"},
		}},
	}
	for _, m := range mutate {
		m(r)
	}
	return r
}

func (c *corpus) vnet(name, cfName string) *ztv1alpha1.VirtualNetwork {
	return &ztv1alpha1.VirtualNetwork{
		ObjectMeta: metav1.ObjectMeta{Namespace: c.ns, Name: name},
		Spec:       ztv1alpha1.VirtualNetworkSpec{ForProvider: ztv1alpha1.VirtualNetworkParameters{Name: cfName}},
	}
}

// routedService is a Service in the corpus namespace asking for a private
// route through "edge"; ann adds annotations, or removes them with "-".
func (c *corpus) routedService(name string, ann map[string]string, mutate ...func(*corev1.Service)) *corev1.Service {
	s := service(c.ns, name, "tcp", 5432)
	s.Annotations = map[string]string{tv1alpha1.AnnotationTunnel: "edge", tv1alpha1.AnnotationPrivateRoute: "true"}
	for k, v := range ann {
		if v == "-" {
			delete(s.Annotations, k)
		} else {
			s.Annotations[k] = v
		}
	}
	for _, m := range mutate {
		m(s)
	}
	return s
}

func (c *corpus) tunnel(name, cfName string, mutate ...func(*ztv1alpha1.Tunnel)) *ztv1alpha1.Tunnel {
	tun := &ztv1alpha1.Tunnel{
		ObjectMeta: metav1.ObjectMeta{Namespace: c.ns, Name: name},
		Spec: ztv1alpha1.TunnelSpec{
			// Observe only: entries about a Tunnel's schema must never
			// create one in Cloudflare should the API server accept them.
			ManagedResourceSpec: xpv2.ManagedResourceSpec{ManagementPolicies: xpv2.ManagementPolicies{xpv2.ManagementActionObserve}},
			ForProvider:         ztv1alpha1.TunnelParameters{Name: cfName},
		},
	}
	for _, m := range mutate {
		m(tun)
	}
	return tun
}

func catchAll() ztv1alpha1.IngressRule { return ztv1alpha1.IngressRule{Service: "http_status:404"} }

func (c *corpus) vpc(name, svcName string, mutate ...func(*connv1alpha1.VPCService)) *connv1alpha1.VPCService {
	s := &connv1alpha1.VPCService{
		ObjectMeta: metav1.ObjectMeta{Namespace: c.ns, Name: name},
		Spec: connv1alpha1.VPCServiceSpec{ForProvider: connv1alpha1.VPCServiceParameters{
			Name: svcName, Type: "tcp", TCPPort: ptr.To[int64](6379),
			Host: connv1alpha1.ServiceHost{
				Hostname:        ptr.To("redis." + c.ns + ".svc.cluster.local"),
				ResolverNetwork: &connv1alpha1.ResolverNetwork{TunnelIDRef: &xpv2.NamespacedReference{Name: "edge"}},
			},
		}},
	}
	for _, m := range mutate {
		m(s)
	}
	return s
}

func (c *corpus) record(name, recordName string, mutate ...func(*dnsv1alpha1.DNSRecord)) *dnsv1alpha1.DNSRecord {
	r := &dnsv1alpha1.DNSRecord{
		ObjectMeta: metav1.ObjectMeta{Namespace: c.ns, Name: name},
		Spec: dnsv1alpha1.DNSRecordSpec{ForProvider: dnsv1alpha1.DNSRecordParameters{
			Name: recordName, Type: "CNAME", Content: "elsewhere.example.net",
		}},
	}
	for _, m := range mutate {
		m(r)
	}
	return r
}

func (c *corpus) cft(name string, mutate ...func(*tv1alpha1.CloudflareTunnel)) *tv1alpha1.CloudflareTunnel {
	cr := &tv1alpha1.CloudflareTunnel{ObjectMeta: metav1.ObjectMeta{Namespace: c.ns, Name: name}}
	for _, m := range mutate {
		m(cr)
	}
	return cr
}

// hostname is a PublicHostname in the corpus namespace on tunnel "edge",
// with web:80 as origin.
func (c *corpus) hostname(name, host string, mutate ...func(*tv1alpha1.PublicHostname)) *tv1alpha1.PublicHostname {
	ph := &tv1alpha1.PublicHostname{
		ObjectMeta: metav1.ObjectMeta{Namespace: c.ns, Name: name},
		Spec: tv1alpha1.PublicHostnameSpec{TunnelRef: tv1alpha1.TunnelReference{Name: "edge"}, Hostname: host,
			Origin: &tv1alpha1.Origin{Service: &tv1alpha1.ServiceOrigin{Name: "web", Port: intstr.FromInt32(80)}}},
	}
	for _, m := range mutate {
		m(ph)
	}
	return ph
}

func (c *corpus) pc(name string, mutate ...func(*tv1alpha1.ProviderConfig)) *tv1alpha1.ProviderConfig {
	pc := &tv1alpha1.ProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Namespace: c.ns, Name: name},
		Spec: tv1alpha1.ProviderConfigSpec{
			AccountID: providertest.AccountID,
			Endpoint:  ptr.To(c.endpoint),
			Credentials: tv1alpha1.ProviderCredentials{
				Source:    tv1alpha1.CredentialsSourceSecret,
				SecretRef: &tv1alpha1.SecretKeySelector{Name: "creds"},
			},
		},
	}
	for _, m := range mutate {
		m(pc)
	}
	return pc
}

// raw is an object as a user's YAML may have it, for values the Go types
// cannot express.
func raw(apiVersion, kind, ns, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

func ann(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// entries is the corpus.
// entries is the whole corpus: the first inputs, then those of issue 48
// (who may put an edge object on a hostname), one file a topic.
func entries() []entry {
	return slices.Concat(coreEntries(), accessOwnershipEntries(), accessWeakeningEntries(), gapsEntries(), wildcardEntries(), pathPrecedenceEntries(), originEntries(), guardrailEntries())
}

func coreEntries() []entry {
	const (
		tunnelA   = tv1alpha1.AnnotationTunnel
		publicA   = tv1alpha1.AnnotationPublic
		vpcA      = tv1alpha1.AnnotationVPCService
		portA     = tv1alpha1.AnnotationVPCPort
		hostnameA = tv1alpha1.AnnotationHostname
	)
	long := func(n int) string { return strings.Repeat("a", n) }
	label64 := strings.Repeat("x", 64)
	return []entry{
		// ---- Tunnel ---------------------------------------------------
		{name: "Tunnel/EmptyName", answer: rejected, want: []string{"spec.forProvider.name", "at least 1 chars long"},
			obj: func(c *corpus) client.Object { return c.tunnel("empty-name", "") }},
		{name: "Tunnel/NameOf256", answer: rejected, want: []string{"spec.forProvider.name", "255"},
			obj: func(c *corpus) client.Object { return c.tunnel("long-name", long(256)) }},
		{name: "Tunnel/ConfigSrcNotInEnum", answer: rejected, want: []string{"spec.forProvider.configSrc", `Unsupported value: "remote"`, `"cloudflare", "local"`},
			obj: func(c *corpus) client.Object {
				return c.tunnel("configsrc", "configsrc-x", func(t *ztv1alpha1.Tunnel) { t.Spec.ForProvider.ConfigSrc = ptr.To("remote") })
			}},
		{name: "Tunnel/ConfigSrcChanged", answer: rejected, want: []string{"configSrc is immutable"},
			obj: func(c *corpus) client.Object {
				return c.tunnel("immutable-src", "immutable-src-"+c.ns, func(t *ztv1alpha1.Tunnel) { t.Spec.ForProvider.ConfigSrc = ptr.To("cloudflare") })
			},
			patch: func(o client.Object) { o.(*ztv1alpha1.Tunnel).Spec.ForProvider.ConfigSrc = ptr.To("local") }},
		{name: "Tunnel/ConfigWithoutCatchAll", answer: rejected, want: []string{"the last ingress rule must be a catch-all"},
			obj: func(c *corpus) client.Object {
				return c.tunnel("no-catch-all", "no-catch-all-x", func(t *ztv1alpha1.Tunnel) {
					t.Spec.ForProvider.Config = &ztv1alpha1.TunnelConfig{Ingress: []ztv1alpha1.IngressRule{
						{Hostname: ptr.To("a.example.com"), Service: "http://a:80"},
					}}
				})
			}},
		{name: "Tunnel/ConfigWithEmptyIngress", answer: rejected, want: []string{"spec.forProvider.config.ingress", "at least 1 items"},
			obj: func(c *corpus) client.Object {
				return c.tunnel("empty-ingress", "empty-ingress-x", func(t *ztv1alpha1.Tunnel) {
					t.Spec.ForProvider.Config = &ztv1alpha1.TunnelConfig{Ingress: []ztv1alpha1.IngressRule{}}
				})
			}},
		{name: "Tunnel/ConfigRuleWithoutService", answer: rejected, want: []string{"spec.forProvider.config.ingress[0].service", "at least 1 chars long"},
			obj: func(c *corpus) client.Object {
				return c.tunnel("no-service", "no-service-x", func(t *ztv1alpha1.Tunnel) {
					t.Spec.ForProvider.Config = &ztv1alpha1.TunnelConfig{Ingress: []ztv1alpha1.IngressRule{
						{Hostname: ptr.To("a.example.com")}, catchAll(),
					}}
				})
			}},
		{name: "Tunnel/ManagementPolicyNotInEnum", answer: rejected, want: []string{"spec.managementPolicies[0]", `Unsupported value: "Destroy"`},
			obj: func(c *corpus) client.Object {
				return c.tunnel("destroy", "destroy-x", func(t *ztv1alpha1.Tunnel) {
					t.Spec.ManagementPolicies = xpv2.ManagementPolicies{"Destroy"}
				})
			}},

		// ---- HostnameRoute -------------------------------------------
		{name: "HostnameRoute/EmptyHostname", answer: rejected, want: []string{"spec.forProvider.hostname", "at least 1 chars long"},
			obj: func(c *corpus) client.Object { return c.route("empty-host", "") }},
		{name: "HostnameRoute/HostnameOf254", answer: rejected, want: []string{"spec.forProvider.hostname", "253"},
			obj: func(c *corpus) client.Object { return c.route("long-host", long(250)+".com") }},
		{name: "HostnameRoute/NoTunnel", answer: rejected, want: []string{"one of forProvider.tunnelId, tunnelIdRef or tunnelIdSelector is required"},
			obj: func(c *corpus) client.Object {
				return c.route("no-tunnel", "no-tunnel.internal", func(r *ztv1alpha1.HostnameRoute) { r.Spec.ForProvider.TunnelIDRef = nil })
			}},
		{name: "HostnameRoute/SelectorIntoAnotherNamespace", answer: rejected, want: []string{"tunnelIdSelector may only select Tunnels in the route's own namespace"},
			obj: func(c *corpus) client.Object {
				return c.route("selector-ns", "selector-ns.internal", func(r *ztv1alpha1.HostnameRoute) {
					r.Spec.ForProvider.TunnelIDRef = nil
					r.Spec.ForProvider.TunnelIDSelector = &xpv2.NamespacedSelector{MatchLabels: map[string]string{"a": "b"}, Namespace: c.h.ns}
				})
			}},
		{name: "HostnameRoute/CommentOf101", answer: rejected, want: []string{"spec.forProvider.comment", "100"},
			obj: func(c *corpus) client.Object {
				return c.route("long-comment", "long-comment.internal", func(r *ztv1alpha1.HostnameRoute) { r.Spec.ForProvider.Comment = ptr.To(long(101)) })
			}},
		{name: "HostnameRoute/HostnameNotAHostname", answer: rejected, want: []string{"spec.forProvider.hostname", "should match"},
			obj: func(c *corpus) client.Object { return c.route("not-a-host", "not a host!") }},
		{name: "HostnameRoute/ProviderConfigKindNotInEnum", answer: rejected, want: []string{"providerConfigRef.kind is ProviderConfig or ClusterProviderConfig"},
			obj: func(c *corpus) client.Object {
				return c.route("kind-enum", "kind-enum.internal", func(r *ztv1alpha1.HostnameRoute) {
					r.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: "Secret", Name: "cloudflare"}
				})
			}},
		{name: "HostnameRoute/HostnameWithTwoWildcards", answer: rejected, want: []string{"spec.forProvider.hostname", "should match"},
			obj: func(c *corpus) client.Object { return c.route("two-wildcards", "*.*.wild.internal") }},

		// ---- VPCService ----------------------------------------------
		{name: "VPCService/TypeNotInEnum", answer: rejected, want: []string{"spec.forProvider.type", `Unsupported value: "udp"`},
			obj: func(c *corpus) client.Object {
				return c.vpc("udp", "udp-x", func(s *connv1alpha1.VPCService) { s.Spec.ForProvider.Type = "udp" })
			}},
		{name: "VPCService/PortZero", answer: rejected, want: []string{"spec.forProvider.tcpPort", "should be greater than or equal to 1"},
			obj: func(c *corpus) client.Object {
				return c.vpc("port-zero", "port-zero-x", func(s *connv1alpha1.VPCService) { s.Spec.ForProvider.TCPPort = ptr.To[int64](0) })
			}},
		{name: "VPCService/Port65536", answer: rejected, want: []string{"spec.forProvider.tcpPort", "should be less than or equal to 65535"},
			obj: func(c *corpus) client.Object {
				return c.vpc("port-big", "port-big-x", func(s *connv1alpha1.VPCService) { s.Spec.ForProvider.TCPPort = ptr.To[int64](65536) })
			}},
		{name: "VPCService/PortAsString", answer: rejected, want: []string{"spec.forProvider.tcpPort", "must be of type integer"},
			obj: func(c *corpus) client.Object {
				return raw(connv1alpha1.SchemeGroupVersion.String(), connv1alpha1.VPCServiceKind, c.ns, "port-string", map[string]any{"forProvider": map[string]any{
					"name": "port-string-x", "type": "tcp", "tcpPort": "6379",
					"host": map[string]any{"hostname": "redis.internal", "resolverNetwork": map[string]any{"tunnelIdRef": map[string]any{"name": "edge"}}},
				}})
			}},
		{name: "VPCService/HostnameAndIPv4", answer: rejected, want: []string{"host is either {hostname, resolverNetwork} or {ipv4 and/or ipv6, network}"},
			obj: func(c *corpus) client.Object {
				return c.vpc("host-both", "host-both-x", func(s *connv1alpha1.VPCService) {
					s.Spec.ForProvider.Host.IPv4 = ptr.To("10.0.0.1")
					s.Spec.ForProvider.Host.Network = &connv1alpha1.ServiceNetwork{TunnelIDRef: &xpv2.NamespacedReference{Name: "edge"}}
				})
			}},
		{name: "VPCService/NoHostAtAll", answer: rejected, want: []string{"host is either {hostname, resolverNetwork} or {ipv4 and/or ipv6, network}"},
			obj: func(c *corpus) client.Object {
				return c.vpc("host-none", "host-none-x", func(s *connv1alpha1.VPCService) { s.Spec.ForProvider.Host = connv1alpha1.ServiceHost{} })
			}},
		{name: "VPCService/TCPWithHTTPPort", answer: rejected, want: []string{"a tcp service takes tcpPort, not httpPort or httpsPort"},
			obj: func(c *corpus) client.Object {
				return c.vpc("tcp-http", "tcp-http-x", func(s *connv1alpha1.VPCService) { s.Spec.ForProvider.HTTPPort = ptr.To[int64](80) })
			}},
		{name: "VPCService/HTTPWithoutPorts", answer: rejected, want: []string{"an http service needs httpPort or httpsPort"},
			obj: func(c *corpus) client.Object {
				return c.vpc("http-noport", "http-noport-x", func(s *connv1alpha1.VPCService) {
					s.Spec.ForProvider.Type, s.Spec.ForProvider.TCPPort = "http", nil
				})
			}},
		{name: "VPCService/AppProtocolNotInEnum", answer: rejected, want: []string{"spec.forProvider.appProtocol", `Unsupported value: "redis"`},
			obj: func(c *corpus) client.Object {
				return c.vpc("app-proto", "app-proto-x", func(s *connv1alpha1.VPCService) { s.Spec.ForProvider.AppProtocol = ptr.To("redis") })
			}},
		{name: "VPCService/SelectorIntoAnotherNamespace", answer: rejected, want: []string{"tunnelIdSelector may only select Tunnels in the service's own namespace"},
			obj: func(c *corpus) client.Object {
				return c.vpc("selector-ns", "selector-ns-x", func(s *connv1alpha1.VPCService) {
					s.Spec.ForProvider.Host.ResolverNetwork = &connv1alpha1.ResolverNetwork{TunnelIDSelector: &xpv2.NamespacedSelector{MatchLabels: map[string]string{"a": "b"}, Namespace: c.h.ns}}
				})
			}},
		{name: "VPCService/HostnameNotAHostname", answer: rejected, want: []string{"spec.forProvider.host.hostname", "should match"},
			obj: func(c *corpus) client.Object {
				return c.vpc("bad-hostname", "bad-hostname-x", func(s *connv1alpha1.VPCService) { s.Spec.ForProvider.Host.Hostname = ptr.To("redis; rm -rf /") })
			}},
		{name: "VPCService/IPv4NotAnAddress", answer: rejected, want: []string{"spec.forProvider.host.ipv4", "must be of type ipv4"},
			obj: func(c *corpus) client.Object {
				return c.vpc("bad-ipv4", "bad-ipv4-x", func(s *connv1alpha1.VPCService) {
					s.Spec.ForProvider.Host = connv1alpha1.ServiceHost{IPv4: ptr.To("999.1.1.1"), Network: &connv1alpha1.ServiceNetwork{TunnelIDRef: &xpv2.NamespacedReference{Name: "edge"}}}
				})
			}},

		// ---- DNSRecord -----------------------------------------------
		{name: "DNSRecord/TypeLowerCase", answer: rejected, want: []string{"spec.forProvider.type", `Unsupported value: "cname"`},
			obj: func(c *corpus) client.Object {
				return c.record("lower-type", "lower-type.example.com", func(r *dnsv1alpha1.DNSRecord) { r.Spec.ForProvider.Type = "cname" })
			}},
		{name: "DNSRecord/TTLZero", answer: rejected, want: []string{"spec.forProvider.ttl", "should be greater than or equal to 1"},
			obj: func(c *corpus) client.Object {
				return c.record("ttl-zero", "ttl-zero.example.com", func(r *dnsv1alpha1.DNSRecord) { r.Spec.ForProvider.TTL = ptr.To[int64](0) })
			}},
		{name: "DNSRecord/TTLOver86400", answer: rejected, want: []string{"spec.forProvider.ttl", "should be less than or equal to 86400"},
			obj: func(c *corpus) client.Object {
				return c.record("ttl-big", "ttl-big.example.com", func(r *dnsv1alpha1.DNSRecord) { r.Spec.ForProvider.TTL = ptr.To[int64](86401) })
			}},
		{name: "DNSRecord/ProxiedTXT", answer: rejected, want: []string{"only A, AAAA and CNAME records can be proxied"},
			obj: func(c *corpus) client.Object {
				return c.record("proxied-txt", "proxied-txt.example.com", func(r *dnsv1alpha1.DNSRecord) {
					r.Spec.ForProvider.Type, r.Spec.ForProvider.Content, r.Spec.ForProvider.Proxied = "TXT", "hello", ptr.To(true)
				})
			}},
		{name: "DNSRecord/ZoneIDAndZoneName", answer: rejected, want: []string{"set zoneId or zoneName, not both"},
			obj: func(c *corpus) client.Object {
				return c.record("both-zones", "both-zones.example.com", func(r *dnsv1alpha1.DNSRecord) {
					r.Spec.ForProvider.ZoneID, r.Spec.ForProvider.ZoneName = ptr.To(sim.ZoneID("example.com")), ptr.To("example.com")
				})
			}},
		{name: "DNSRecord/ZoneIDNotAnID", answer: rejected, want: []string{"spec.forProvider.zoneId", "should match"},
			obj: func(c *corpus) client.Object {
				return c.record("zoneid-name", "zoneid-name.example.com", func(r *dnsv1alpha1.DNSRecord) { r.Spec.ForProvider.ZoneID = ptr.To("example.com") })
			}},
		{name: "DNSRecord/CommentOf51", answer: rejected, want: []string{"spec.forProvider.comment", "50"},
			obj: func(c *corpus) client.Object {
				return c.record("long-comment", "long-comment.example.com", func(r *dnsv1alpha1.DNSRecord) { r.Spec.ForProvider.Comment = ptr.To(long(51)) })
			}},
		{name: "DNSRecord/EmptyContent", answer: rejected, want: []string{"spec.forProvider.content", "at least 1 chars long"},
			obj: func(c *corpus) client.Object {
				return c.record("no-content", "no-content.example.com", func(r *dnsv1alpha1.DNSRecord) { r.Spec.ForProvider.Content = "" })
			}},
		{name: "DNSRecord/NameNotAHostname", answer: rejected, want: []string{"spec.forProvider.name", "should match"},
			obj: func(c *corpus) client.Object { return c.record("bad-name", "not a name!.example.com") }},
		{name: "DNSRecord/NameOutsideZoneName", answer: rejected, want: []string{"name must be zoneName or a name below it"},
			obj: func(c *corpus) client.Object {
				return c.record("outside-zone-name", "app.example.org", func(r *dnsv1alpha1.DNSRecord) { r.Spec.ForProvider.ZoneName = ptr.To("example.com") })
			}},
		{name: "DNSRecord/CNAMEContentNotAHostname", answer: rejected, want: []string{"a CNAME's content is a hostname"},
			obj: func(c *corpus) client.Object {
				return c.record("cname-content", "cname-content.example.com", func(r *dnsv1alpha1.DNSRecord) { r.Spec.ForProvider.Content = "not a hostname!" })
			}},
		{name: "DNSRecord/ProxiedWithTTL", answer: rejected, want: []string{"a proxied record's ttl is 1 (automatic)"},
			obj: func(c *corpus) client.Object {
				return c.record("proxied-ttl", "proxied-ttl.example.com", func(r *dnsv1alpha1.DNSRecord) {
					r.Spec.ForProvider.Proxied, r.Spec.ForProvider.TTL = ptr.To(true), ptr.To[int64](300)
				})
			}},

		// ---- CloudflareTunnel ----------------------------------------
		{name: "CloudflareTunnel/ExtraArgExpandsTheToken", answer: rejected, want: []string{"extraArgs may not contain $("},
			obj: func(c *corpus) client.Object {
				return c.cft("leak", func(cr *tv1alpha1.CloudflareTunnel) {
					cr.Spec.Connector = &tv1alpha1.ConnectorSpec{ExtraArgs: []string{"--tag=leak=$(TUNNEL_TOKEN)"}}
				})
			}},
		{name: "CloudflareTunnel/NegativeReplicas", answer: rejected, want: []string{"spec.replicas", "should be greater than or equal to 0"},
			obj: func(c *corpus) client.Object {
				return c.cft("negative", func(cr *tv1alpha1.CloudflareTunnel) { cr.Spec.Replicas = ptr.To[int32](-1) })
			}},
		{name: "CloudflareTunnel/Replicas33", answer: rejected, want: []string{"spec.replicas", "should be less than or equal to 32"},
			obj: func(c *corpus) client.Object {
				return c.cft("many", func(cr *tv1alpha1.CloudflareTunnel) { cr.Spec.Replicas = ptr.To[int32](33) })
			}},
		{name: "CloudflareTunnel/EmptyTunnelName", answer: rejected, want: []string{"spec.tunnelName", "at least 1 chars long"},
			obj: func(c *corpus) client.Object {
				return c.cft("empty-name", func(cr *tv1alpha1.CloudflareTunnel) { cr.Spec.TunnelName = ptr.To("") })
			}},
		{name: "CloudflareTunnel/ProviderConfigAndCredentials", answer: rejected, want: []string{"set providerConfigRef or credentialsSecretRef, not both"},
			obj: func(c *corpus) client.Object {
				return c.cft("both-creds", func(cr *tv1alpha1.CloudflareTunnel) {
					cr.Spec.ProviderConfigRef = &xpv2.ProviderConfigReference{Kind: "ClusterProviderConfig", Name: "default"}
					cr.Spec.CredentialsSecretRef = &xpv2.LocalSecretReference{Name: "creds"}
				})
			}},
		{name: "CloudflareTunnel/TunnelNameChanged", answer: rejected, want: []string{"tunnelName is immutable", "create a new one"},
			// The corpus's own running tunnel: the refused update must not
			// reach it.
			obj: func(c *corpus) client.Object {
				return &tv1alpha1.CloudflareTunnel{ObjectMeta: metav1.ObjectMeta{Namespace: c.ns, Name: "edge"}}
			},
			patch: func(o client.Object) { o.(*tv1alpha1.CloudflareTunnel).Spec.TunnelName = ptr.To("renamed") }},
		{name: "CloudflareTunnel/EmptyImage", answer: rejected, want: []string{"spec.image", "at least 1 chars long"},
			obj: func(c *corpus) client.Object {
				return c.cft("empty-image", func(cr *tv1alpha1.CloudflareTunnel) { cr.Spec.Image = ptr.To("") })
			}},
		{name: "CloudflareTunnel/NameOf64", answer: rejected, want: []string{"metadata.name is at most 63 characters"},
			obj: func(c *corpus) client.Object { return c.cft(long(64)) }},

		// ---- NetworkRoute and VirtualNetwork ------------------------
		{name: "NetworkRoute/AddressWithoutPrefix", answer: rejected, want: []string{"network must be a CIDR"},
			obj: func(c *corpus) client.Object { return c.network("no-prefix", "10.0.0.1") }},
		{name: "NetworkRoute/NotAnAddress", answer: rejected, want: []string{"network must be a CIDR"},
			obj: func(c *corpus) client.Object { return c.network("not-an-address", "ten.0.0.0/8") }},
		{name: "NetworkRoute/PrefixTooLong", answer: rejected, want: []string{"network must be a CIDR"},
			obj: func(c *corpus) client.Object { return c.network("prefix-33", "10.0.0.0/33") }},
		{name: "NetworkRoute/NoTunnel", answer: rejected, want: []string{"one of forProvider.tunnelId, tunnelIdRef or tunnelIdSelector is required"},
			obj: func(c *corpus) client.Object {
				return c.network("net-no-tunnel", "10.0.0.0/8", func(r *ztv1alpha1.NetworkRoute) { r.Spec.ForProvider.TunnelIDRef = nil })
			}},
		{name: "NetworkRoute/CommentOf51", answer: rejected, want: []string{"spec.forProvider.comment", "50"},
			obj: func(c *corpus) client.Object {
				return c.network("net-long-comment", "10.0.0.0/8", func(r *ztv1alpha1.NetworkRoute) { r.Spec.ForProvider.Comment = ptr.To(long(51)) })
			}},
		{name: "NetworkRoute/VirtualNetworkSelectorIntoAnotherNamespace", answer: rejected, want: []string{"virtualNetworkIdSelector may only select VirtualNetworks in the route's own namespace"},
			obj: func(c *corpus) client.Object {
				return c.network("net-vnet-selector", "10.0.0.0/8", func(r *ztv1alpha1.NetworkRoute) {
					r.Spec.ForProvider.VirtualNetworkIDSelector = &xpv2.NamespacedSelector{Namespace: c.h.ns, MatchLabels: map[string]string{"a": "b"}}
				})
			}},
		{name: "VirtualNetwork/EmptyName", answer: rejected, want: []string{"spec.forProvider.name", "at least 1 chars long"},
			obj: func(c *corpus) client.Object { return c.vnet("vnet-empty", "") }},
		{name: "VirtualNetwork/NameOf257", answer: rejected, want: []string{"spec.forProvider.name", "256"},
			obj: func(c *corpus) client.Object { return c.vnet("vnet-long", long(257)) }},

		// ---- valid input the rules above must not refuse ------------
		{name: "Valid/NetworkRouteIPv6", answer: valid,
			obj: func(c *corpus) client.Object { return c.network("valid-net-v6", "fd00:10:96::/112") }},
		{name: "Valid/NetworkRouteUnmaskedHostBits", answer: valid,
			obj: func(c *corpus) client.Object { return c.network("valid-net-unmasked", "10.1.2.3/16") }},
		{name: "Valid/HostnameRouteWildcardUpperCaseTrailingDot", answer: valid,
			obj: func(c *corpus) client.Object { return c.route("valid-wildcard", "*.Apps.Team-A.internal.") }},
		{name: "Valid/VPCServiceIPv6", answer: valid,
			obj: func(c *corpus) client.Object {
				return c.vpc("valid-ipv6", "valid-ipv6-x", func(s *connv1alpha1.VPCService) {
					s.Spec.ForProvider.Host = connv1alpha1.ServiceHost{IPv4: ptr.To("10.0.0.7"), IPv6: ptr.To("fd00::7"), Network: &connv1alpha1.ServiceNetwork{TunnelIDRef: &xpv2.NamespacedReference{Name: "edge"}}}
				})
			}},
		{name: "Valid/DNSRecordUnderscoreTXT", answer: valid,
			obj: func(c *corpus) client.Object {
				return c.record("valid-dmarc", "_dmarc.example.com", func(r *dnsv1alpha1.DNSRecord) {
					r.Spec.ForProvider.Type, r.Spec.ForProvider.Content = "TXT", "v=DMARC1; p=none"
				})
			}},
		{name: "Valid/DNSRecordWildcardCNAMEWithDots", answer: valid,
			obj: func(c *corpus) client.Object {
				return c.record("valid-wildcard", "*.Example.com.", func(r *dnsv1alpha1.DNSRecord) {
					r.Spec.ForProvider.ZoneName, r.Spec.ForProvider.Content = ptr.To("example.com"), "s1._domainkey.elsewhere.example.net."
				})
			}},
		{name: "Valid/DNSRecordApexOfZoneName", answer: valid,
			obj: func(c *corpus) client.Object {
				return c.record("valid-apex", "example.com", func(r *dnsv1alpha1.DNSRecord) {
					r.Spec.ForProvider.ZoneName, r.Spec.ForProvider.Type, r.Spec.ForProvider.Content = ptr.To("Example.com."), "A", "192.0.2.1"
				})
			}},
		{name: "Valid/DNSRecordProxiedTTLAuto", answer: valid,
			obj: func(c *corpus) client.Object {
				return c.record("valid-proxied", "proxied.example.com", func(r *dnsv1alpha1.DNSRecord) {
					r.Spec.ForProvider.Proxied, r.Spec.ForProvider.TTL = ptr.To(true), ptr.To[int64](1)
				})
			}},
		{name: "Valid/CloudflareTunnelNameOf63", answer: valid,
			obj: func(c *corpus) client.Object { return c.cft(long(63)) }},
		{name: "Valid/ProviderConfigKindProviderConfig", answer: valid,
			obj: func(c *corpus) client.Object {
				return c.route("valid-kind", "valid-kind.internal", func(r *ztv1alpha1.HostnameRoute) {
					r.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: "ProviderConfig", Name: "cloudflare"}
				})
			}},

		// ---- ProviderConfig / ClusterProviderConfig ------------------
		{name: "ProviderConfig/SourceNotInEnum", answer: rejected, want: []string{"spec.credentials.source", `Unsupported value: "Vault"`},
			obj: func(c *corpus) client.Object {
				return c.pc("vault", func(pc *tv1alpha1.ProviderConfig) { pc.Spec.Credentials.Source = "Vault" })
			}},
		{name: "ProviderConfig/SecretSourceWithoutSecretRef", answer: rejected, want: []string{"secretRef is required when source is Secret"},
			obj: func(c *corpus) client.Object {
				return c.pc("no-ref", func(pc *tv1alpha1.ProviderConfig) { pc.Spec.Credentials.SecretRef = nil })
			}},
		{name: "ProviderConfig/AccountIDNotHex", answer: rejected, want: []string{"spec.accountID", "should match"},
			obj: func(c *corpus) client.Object {
				return c.pc("account", func(pc *tv1alpha1.ProviderConfig) { pc.Spec.AccountID = "my-account" })
			}},
		{name: "ProviderConfig/EndpointNotHTTP", answer: rejected, want: []string{"spec.endpoint", "should match"},
			obj: func(c *corpus) client.Object {
				return c.pc("endpoint", func(pc *tv1alpha1.ProviderConfig) { pc.Spec.Endpoint = ptr.To("file:///etc/passwd") })
			}},
		{name: "ProviderConfig/EmptySecretName", answer: rejected, want: []string{"spec.credentials.secretRef.name", "at least 1 chars long"},
			obj: func(c *corpus) client.Object {
				return c.pc("empty-secret", func(pc *tv1alpha1.ProviderConfig) { pc.Spec.Credentials.SecretRef.Name = "" })
			}},
		{name: "ClusterProviderConfig/SecretWithoutNamespace", answer: rejected, want: []string{"spec.credentials.secretRef.namespace is required for a ClusterProviderConfig"},
			obj: func(c *corpus) client.Object {
				pc := c.pc("x")
				return &tv1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "hostile-no-namespace"}, Spec: pc.Spec}
			}},

		// ---- Ingress: refused by Kubernetes' own validation ----------
		{name: "Ingress/RuleHostUpperCase", answer: rejected, want: []string{"spec.rules[0].host", "lowercase RFC 1123 subdomain"},
			obj: func(c *corpus) client.Object {
				return c.ingress("upper-host", nil, func(i *networkingv1.Ingress) {
					i.Spec.Rules = []networkingv1.IngressRule{hostRule("WWW.Example.com", "/", networkingv1.PathTypePrefix, backend("web", number(80)))}
				})
			}},
		{name: "Ingress/RuleHostTrailingDot", answer: rejected, want: []string{"spec.rules[0].host", "lowercase RFC 1123 subdomain"},
			obj: func(c *corpus) client.Object {
				return c.ingress("dot-host", nil, func(i *networkingv1.Ingress) {
					i.Spec.Rules = []networkingv1.IngressRule{hostRule("www.example.com.", "/", networkingv1.PathTypePrefix, backend("web", number(80)))}
				})
			}},
		{name: "Ingress/RuleHostIDN", answer: rejected, want: []string{"spec.rules[0].host", "lowercase RFC 1123 subdomain"},
			obj: func(c *corpus) client.Object {
				return c.ingress("idn-host", nil, func(i *networkingv1.Ingress) {
					i.Spec.Rules = []networkingv1.IngressRule{hostRule("bücher.example.com", "/", networkingv1.PathTypePrefix, backend("web", number(80)))}
				})
			}},
		{name: "Ingress/RelativePath", answer: rejected, want: []string{"spec.rules[0].http.paths[0].path", "must be an absolute path"},
			obj: func(c *corpus) client.Object {
				return c.ingress("relative-path", nil, func(i *networkingv1.Ingress) {
					i.Spec.Rules = []networkingv1.IngressRule{hostRule("rel."+c.ns+".internal", "api", networkingv1.PathTypePrefix, backend("web", number(80)))}
				})
			}},
		{name: "Ingress/PathTypeRegex", answer: rejected, want: []string{"pathType", `Unsupported value: "Regex"`},
			obj: func(c *corpus) client.Object {
				return c.ingress("regex-path", nil, func(i *networkingv1.Ingress) {
					i.Spec.Rules = []networkingv1.IngressRule{hostRule("regex."+c.ns+".internal", "/api/(.*)", "Regex", backend("web", number(80)))}
				})
			}},
		{name: "Ingress/AnnotationsOver256KiB", answer: rejected, want: []string{"metadata.annotations", "Too long"},
			obj: func(c *corpus) client.Object { return c.ingress("huge-annotation", ann(vpcA, long(300<<10))) }},

		{name: "Ingress/DNSModeUnknown", answer: warned, reason: "InvalidIngress", want: []string{tv1alpha1.AnnotationDNS, "Route53"},
			obj: func(c *corpus) client.Object {
				return c.ingress("dns-mode", ann(publicA, "true", hostnameA, "dns-mode."+c.ns+".svc.cluster.local", tv1alpha1.AnnotationDNS, "Route53"))
			}},
		{name: "Ingress/ExternalDNSProxiedKeyWithSpaces", answer: warned, reason: "InvalidIngress", want: []string{tv1alpha1.AnnotationExternalDNSProxiedKey, "no spaces"},
			obj: func(c *corpus) client.Object {
				return c.ingress("dns-key", ann(publicA, "true", hostnameA, "dns-key."+c.ns+".svc.cluster.local", tv1alpha1.AnnotationDNS, "ExternalDNS", tv1alpha1.AnnotationExternalDNSProxiedKey, "cloudflare proxied"))
			}},

		// ---- GatewayBinding: refused by the schema --------------------
		{name: "GatewayBinding/DNSModeUnknown", answer: rejected, want: []string{"spec.dns.mode", `Unsupported value: "Route53"`},
			obj: func(c *corpus) client.Object {
				return c.binding("dns-mode", func(b *tv1alpha1.GatewayBinding) { b.Spec.DNS.Mode = "Route53" })
			}},
		{name: "GatewayBinding/OriginProtocolTCP", answer: rejected, want: []string{"spec.origin.service.protocol", `Unsupported value: "tcp"`},
			obj: func(c *corpus) client.Object {
				return c.binding("tcp", func(b *tv1alpha1.GatewayBinding) { b.Spec.Origin.Service.Protocol = "tcp" })
			}},
		{name: "GatewayBinding/ListenerUpperCase", answer: rejected, want: []string{"spec.gatewayRef.sectionName", "should match"},
			obj: func(c *corpus) client.Object {
				return c.binding("upper", func(b *tv1alpha1.GatewayBinding) { b.Spec.GatewayRef.SectionName = "Web" })
			}},
		{name: "GatewayBinding/OriginNamespaceNotAName", answer: rejected, want: []string{"spec.origin.service.namespace", "should match"},
			obj: func(c *corpus) client.Object {
				return c.binding("bad-ns", func(b *tv1alpha1.GatewayBinding) { b.Spec.Origin.Service.Namespace = "../kube-system" })
			}},
		{name: "GatewayBinding/NoOriginService", answer: rejected, want: []string{"spec.origin.service"},
			obj: func(c *corpus) client.Object {
				return c.binding("no-origin", func(b *tv1alpha1.GatewayBinding) { b.Spec.Origin = tv1alpha1.GatewayOrigin{} })
			}},

		// ---- PublicHostname: refused by the schema --------------------
		{name: "PublicHostname/LoadBalancedConnectorOnlyWithoutAPath", answer: rejected, want: []string{"connectorOnly needs monitor.path"},
			obj: func(c *corpus) client.Object {
				return c.hostname("lb-connector-only", "lb-connector-only.example.com", func(p *tv1alpha1.PublicHostname) {
					p.Spec.LoadBalancing = &tv1alpha1.LoadBalancing{Pool: "pool-a", Monitor: &tv1alpha1.HostnameMonitor{ConnectorOnly: true}}
				})
			}},
		{name: "Valid/PublicHostnameLoadBalancedMonitorWithoutConnectorOnly", answer: valid,
			obj: func(c *corpus) client.Object {
				return c.hostname("valid-lb-monitor", "valid-lb-monitor.example.com", func(p *tv1alpha1.PublicHostname) {
					p.Spec.LoadBalancing = &tv1alpha1.LoadBalancing{Pool: "pool-b", Monitor: &tv1alpha1.HostnameMonitor{Interval: ptr.To[int64](60)}}
				})
			}},
		{name: "PublicHostname/AccessAudTagNotHex", answer: rejected, want: []string{"spec.access.audTags[0]", "should match"},
			obj: func(c *corpus) client.Object {
				return c.hostname("bad-aud", "bad-aud.example.com", func(p *tv1alpha1.PublicHostname) {
					p.Spec.Access = &tv1alpha1.Access{TeamName: "acme", AudTags: []string{"my-app"}}
				})
			}},
		{name: "PublicHostname/AccessPoliciesAndTeam", answer: rejected, want: []string{"spec.access", "not both"},
			obj: func(c *corpus) client.Object {
				return c.hostname("both-access", "both-access.example.com", func(p *tv1alpha1.PublicHostname) {
					p.Spec.Access = &tv1alpha1.Access{Policies: []tv1alpha1.AccessPolicyName{{Name: "staff"}}, TeamName: "acme", AudTags: []string{strings.Repeat("a", 64)}}
				})
			}},
		{name: "AccessPolicy/RuleWithTwoKinds", answer: rejected, want: []string{"spec.forProvider.include[0]", "exactly one"},
			obj: func(c *corpus) client.Object {
				return &ztv1alpha1.AccessPolicy{
					ObjectMeta: metav1.ObjectMeta{Namespace: c.ns, Name: "two-kinds"},
					Spec: ztv1alpha1.AccessPolicySpec{ForProvider: ztv1alpha1.AccessPolicyParameters{Name: "x", Decision: "allow",
						Include: []ztv1alpha1.AccessRule{{Email: ptr.To("a@example.com"), Everyone: ptr.To(true)}}}},
				}
			}},
		{name: "AccessPolicy/EveryoneFalse", answer: rejected, want: []string{"everyone can only be true"},
			obj: func(c *corpus) client.Object {
				return &ztv1alpha1.AccessPolicy{
					ObjectMeta: metav1.ObjectMeta{Namespace: c.ns, Name: "everyone-false"},
					Spec: ztv1alpha1.AccessPolicySpec{ForProvider: ztv1alpha1.AccessPolicyParameters{Name: "x", Decision: "allow",
						Include: []ztv1alpha1.AccessRule{{Everyone: ptr.To(false)}}}},
				}
			}},
		{name: "AccessPolicy/NoInclude", answer: rejected, want: []string{"spec.forProvider.include"},
			obj: func(c *corpus) client.Object {
				return &ztv1alpha1.AccessPolicy{
					ObjectMeta: metav1.ObjectMeta{Namespace: c.ns, Name: "no-include"},
					Spec:       ztv1alpha1.AccessPolicySpec{ForProvider: ztv1alpha1.AccessPolicyParameters{Name: "x", Decision: "allow"}},
				}
			}},
		{name: "AccessApplication/DestinationOutsideItsDomain", answer: rejected, want: []string{"destinations must be the domain's hostname or below it"},
			obj: func(c *corpus) client.Object {
				return &ztv1alpha1.AccessApplication{
					ObjectMeta: metav1.ObjectMeta{Namespace: c.ns, Name: "elsewhere"},
					Spec: ztv1alpha1.AccessApplicationSpec{ForProvider: ztv1alpha1.AccessApplicationParameters{Name: "x", Domain: "app.example.com",
						Destinations: []string{"bank.example.net"}}},
				}
			}},
		{name: "PublicHostname/AccessWithoutAudTags", answer: rejected, want: []string{"spec.access.audTags"},
			obj: func(c *corpus) client.Object {
				return c.hostname("no-aud", "no-aud.example.com", func(p *tv1alpha1.PublicHostname) { p.Spec.Access = &tv1alpha1.Access{TeamName: "acme"} })
			}},
		{name: "PublicHostname/AccessTeamWithSpaces", answer: rejected, want: []string{"spec.access.teamName", "should match"},
			obj: func(c *corpus) client.Object {
				return c.hostname("bad-team", "bad-team.example.com", func(p *tv1alpha1.PublicHostname) {
					p.Spec.Access = &tv1alpha1.Access{TeamName: "Acme Corp", AudTags: []string{strings.Repeat("a", 64)}}
				})
			}},
		{name: "PublicHostname/ServiceAndURL", answer: rejected, want: []string{"set exactly one of service and url"},
			obj: func(c *corpus) client.Object {
				return c.hostname("both-origins", "both.example.com", func(p *tv1alpha1.PublicHostname) { p.Spec.Origin.URL = ptr.To("hello_world") })
			}},
		{name: "PublicHostname/NoOrigin", answer: rejected, want: []string{"set origin, paths, or both"},
			obj: func(c *corpus) client.Object {
				return c.hostname("no-origin", "no-origin.example.com", func(p *tv1alpha1.PublicHostname) { p.Spec.Origin = nil })
			}},
		{name: "PublicHostname/HostnameUpperCase", answer: rejected, want: []string{"spec.hostname", "should match"},
			obj: func(c *corpus) client.Object { return c.hostname("upper", "App.Example.com") }},
		{name: "PublicHostname/ProtocolH2C", answer: rejected, want: []string{"spec.origin.service.protocol", `Unsupported value: "h2c"`},
			obj: func(c *corpus) client.Object {
				return c.hostname("h2c", "h2c.example.com", func(p *tv1alpha1.PublicHostname) { p.Spec.Origin.Service.Protocol = "h2c" })
			}},
		{name: "PublicHostname/TimeoutOfAnHour", answer: rejected, want: []string{"spec.originRequest.connectTimeoutSeconds", "less than or equal to 300"},
			obj: func(c *corpus) client.Object {
				return c.hostname("slow", "slow.example.com", func(p *tv1alpha1.PublicHostname) {
					p.Spec.OriginRequest = &tv1alpha1.OriginOptions{ConnectTimeoutSeconds: ptr.To[int64](3600)}
				})
			}},
		{name: "PublicHostname/OriginURLFTP", answer: warned, reason: "InvalidSpec", want: []string{"spec.origin.url", `"ftp://files.example.com"`, "nothing is published"},
			obj: func(c *corpus) client.Object {
				return c.hostname("ftp", "ftp-"+c.ns+".example.com", func(p *tv1alpha1.PublicHostname) {
					p.Spec.Origin = &tv1alpha1.Origin{URL: ptr.To("ftp://files.example.com")}
				})
			}},
		{name: "PublicHostname/OriginMetadataAddress", answer: warned, reason: "OriginMetadataAddress", want: []string{"169.254.169.254"},
			obj: func(c *corpus) client.Object {
				return c.hostname("metadata", "metadata-"+c.ns+".example.com", func(p *tv1alpha1.PublicHostname) {
					p.Spec.Origin = &tv1alpha1.Origin{URL: ptr.To("http://169.254.169.254:80")}
				})
			}},
		{name: "PublicHostname/OriginMetadataDecimal", answer: warned, reason: "OriginUnreadable", want: []string{"2852039166"},
			obj: func(c *corpus) client.Object {
				return c.hostname("metadata-decimal", "metadata-decimal-"+c.ns+".example.com", func(p *tv1alpha1.PublicHostname) {
					p.Spec.Origin = &tv1alpha1.Origin{URL: ptr.To("http://2852039166/")}
				})
			}},
		{name: "PublicHostname/OriginAPIServer", answer: warned, reason: "OriginNotListed", want: []string{"kubernetes.default.svc"},
			obj: func(c *corpus) client.Object {
				return c.hostname("apiserver", "apiserver-"+c.ns+".example.com", func(p *tv1alpha1.PublicHostname) {
					p.Spec.Origin = &tv1alpha1.Origin{URL: ptr.To("https://kubernetes.default.svc:443")}
				})
			}},
		{name: "PublicHostname/TunnelOfAnotherNamespace", answer: warned, reason: "TunnelNotFound", want: []string{`no CloudflareTunnel "healthy"`},
			obj: func(c *corpus) client.Object {
				p := c.hostname("borrow", "borrow-"+c.bare+".example.com", func(p *tv1alpha1.PublicHostname) { p.Spec.TunnelRef.Name = "healthy" })
				p.Namespace = c.bare
				return p
			}},

		// ---- Ingress: answered by the translator ---------------------
		{name: "Ingress/AccessAudTagMalformed", answer: warned, reason: "InvalidIngress", want: []string{tv1alpha1.AnnotationAccessAudTags, `"my-app"`, "not published without their Access check"},
			obj: func(c *corpus) client.Object {
				return c.ingress("access-bad", ann(publicA, "true", hostnameA, "access-bad."+c.ns+".svc.cluster.local", tv1alpha1.AnnotationAccessTeam, "acme", tv1alpha1.AnnotationAccessAudTags, "my-app"))
			},
			check: noRecord("access-bad.")},
		{name: "Ingress/AccessRequiredWithoutTeam", answer: warned, reason: "InvalidIngress", want: []string{tv1alpha1.AnnotationAccessTeam, "required"},
			obj: func(c *corpus) client.Object {
				return c.ingress("access-noteam", ann(publicA, "true", hostnameA, "access-noteam."+c.ns+".svc.cluster.local", tv1alpha1.AnnotationAccessRequired, "true"))
			},
			check: noRecord("access-noteam.")},
		{name: "Ingress/OriginProtocolH2C", answer: warned, reason: "InvalidIngress", want: []string{tv1alpha1.AnnotationOriginProtocol, "only over TLS", "http2"},
			obj: func(c *corpus) client.Object {
				return c.ingress("h2c", ann(publicA, "true", hostnameA, "h2c."+c.ns+".svc.cluster.local", tv1alpha1.AnnotationOriginProtocol, "h2c"))
			},
			check: noRecord("h2c.")},
		{name: "Ingress/OriginNoTLSVerifyYes", answer: warned, reason: "InvalidIngress", want: []string{tv1alpha1.AnnotationOriginNoTLSVerify, `not "yes"`},
			obj: func(c *corpus) client.Object {
				return c.ingress("noverify-yes", ann(publicA, "true", hostnameA, "noverify."+c.ns+".svc.cluster.local", tv1alpha1.AnnotationOriginNoTLSVerify, "yes"))
			},
			check: noRecord("noverify.")},
		{name: "Ingress/OriginCASecretPath", answer: warned, reason: "InvalidIngress", want: []string{tv1alpha1.AnnotationOriginCASecret, `"../../etc/passwd"`},
			obj: func(c *corpus) client.Object {
				return c.ingress("ca-path", ann(publicA, "true", hostnameA, "ca-path."+c.ns+".svc.cluster.local", tv1alpha1.AnnotationOriginCASecret, "../../etc/passwd"))
			},
			check: noRecord("ca-path.")},
		{name: "Ingress/OriginTimeoutFraction", answer: warned, reason: "InvalidIngress", want: []string{tv1alpha1.AnnotationOriginConnectTimeout, "whole number of seconds"},
			obj: func(c *corpus) client.Object {
				return c.ingress("timeout-frac", ann(publicA, "true", hostnameA, "timeout."+c.ns+".svc.cluster.local", tv1alpha1.AnnotationOriginConnectTimeout, "1.5s"))
			},
			check: noRecord("timeout.")},
		{name: "Ingress/NoTunnelAnnotation", answer: warned, reason: "MissingTunnelAnnotation", want: []string{tunnelA, "is required"},
			obj: func(c *corpus) client.Object { return c.ingress("no-tunnel", ann(tunnelA, "-")) }},
		// ---- Services routed privately ------------------------------
		{name: "Service/PrivateRouteNotABoolean", answer: warned, reason: "InvalidAnnotation", want: []string{tv1alpha1.AnnotationPrivateRoute, `"yes"`},
			obj: func(c *corpus) client.Object {
				return c.routedService("route-yes", ann(tv1alpha1.AnnotationPrivateRoute, "yes"))
			}},
		{name: "Service/PrivateRouteWithoutTunnel", answer: warned, reason: "InvalidAnnotation", want: []string{tunnelA, "is required"},
			obj: func(c *corpus) client.Object { return c.routedService("route-no-tunnel", ann(tunnelA, "-")) }},
		{name: "Service/PrivateRouteVirtualNetworkNotAName", answer: warned, reason: "InvalidAnnotation", want: []string{tv1alpha1.AnnotationVirtualNetwork, "must name a VirtualNetwork"},
			obj: func(c *corpus) client.Object {
				return c.routedService("route-bad-vnet", ann(tv1alpha1.AnnotationVirtualNetwork, "Blue Net"))
			}},
		{name: "Service/PrivateRouteHeadless", answer: warned, reason: "NoClusterIP", want: []string{"headless"},
			obj: func(c *corpus) client.Object {
				return c.routedService("route-headless", nil, func(s *corev1.Service) { s.Spec.ClusterIP = corev1.ClusterIPNone })
			}},
		{name: "Service/PrivateRouteExternalName", answer: warned, reason: "NoClusterIP", want: []string{"ExternalName"},
			obj: func(c *corpus) client.Object {
				return c.routedService("route-external", nil, func(s *corev1.Service) {
					s.Spec.Type, s.Spec.ExternalName, s.Spec.Ports = corev1.ServiceTypeExternalName, "db.example.com", nil
				})
			}},
		{name: "Service/PrivateRouteTunnelOfAnotherNamespace", answer: warned, reason: "TunnelNotFound", want: []string{`no CloudflareTunnel "healthy"`},
			obj: func(c *corpus) client.Object { return c.routedService("route-borrow", ann(tunnelA, "healthy")) }},
		{name: "Ingress/BlankTunnelAnnotation", answer: warned, reason: "MissingTunnelAnnotation", want: []string{tunnelA, "is required"},
			obj: func(c *corpus) client.Object { return c.ingress("blank-tunnel", ann(tunnelA, " \t ")) }},
		{name: "Ingress/TunnelOfAnotherNamespace", answer: warned, reason: "TunnelNotFound", want: []string{`no CloudflareTunnel "healthy"`, "name a tunnel of another namespace as <namespace>/<name>"},
			// In a namespace without any tunnel, naming the healthy one.
			obj: func(c *corpus) client.Object {
				i := c.ingress("borrow-tunnel", ann(tunnelA, "healthy", hostnameA, "borrow."+c.bare+".internal"))
				i.Namespace = c.bare
				return i
			}},
		// Named by namespace, the healthy tunnel is found, and it is not
		// shared: refused (and nothing published).
		{name: "Ingress/NamespaceQualifiedTunnel", answer: warned, reason: "TunnelNotShared", want: []string{"/healthy does not allow namespace"},
			obj: func(c *corpus) client.Object { return c.ingress("qualified-tunnel", ann(tunnelA, c.h.ns+"/healthy")) }},
		{name: "Ingress/VPCPortNotANumber", answer: warned, reason: "InvalidIngress", want: []string{portA, `must be a port number 1-65535, not "http"`},
			obj: func(c *corpus) client.Object {
				return c.ingress("port-name", ann(vpcA, "port-name-"+c.ns, portA, "http"))
			},
			check: noService("port-name-")},
		{name: "Ingress/VPCPortZero", answer: warned, reason: "InvalidIngress", want: []string{portA, `not "0"`},
			obj:   func(c *corpus) client.Object { return c.ingress("port-zero", ann(vpcA, "port-zero-"+c.ns, portA, "0")) },
			check: noService("port-zero-")},
		{name: "Ingress/VPCPort70000", answer: warned, reason: "InvalidIngress", want: []string{portA, `not "70000"`},
			obj: func(c *corpus) client.Object {
				return c.ingress("port-big", ann(vpcA, "port-big-"+c.ns, portA, "70000"))
			},
			check: noService("port-big-")},
		{name: "Ingress/VPCPortWithInjectedLine", answer: warned, reason: "InvalidIngress", want: []string{portA, `not "6379\npublic: true"`},
			obj: func(c *corpus) client.Object {
				return c.ingress("port-newline", ann(vpcA, "port-newline-"+c.ns, portA, "6379\npublic: true"))
			},
			check: noService("port-newline-")},
		{name: "Ingress/PublicMaybe", answer: warned, reason: "InvalidIngress", want: []string{publicA, `must be "true" or "false", not "maybe"; treated as "false"`},
			obj: func(c *corpus) client.Object { return c.ingress("public-maybe", ann(publicA, "maybe")) }},
		{name: "Ingress/PublicWithInjectedAnnotation", answer: warned, reason: "InvalidIngress", want: []string{publicA, `not "true\"\ntunnels.cloudflare.com/hostname: evil.example.com"`},
			obj: func(c *corpus) client.Object {
				return c.ingress("public-inject", ann(publicA, "true\"\ntunnels.cloudflare.com/hostname: evil.example.com"))
			}},
		{name: "Ingress/VPCServiceTrue", answer: warned, reason: "InvalidIngress", want: []string{vpcA, `not "true"`},
			obj:   func(c *corpus) client.Object { return c.ingress("vpc-true", ann(vpcA, "true")) },
			check: noService("true")},
		{name: "Ingress/VPCServiceWithQuotes", answer: warned, reason: "InvalidIngress", want: []string{vpcA, `not "svc\"; drop"`},
			obj: func(c *corpus) client.Object { return c.ingress("vpc-quotes", ann(vpcA, `svc"; drop`)) }},
		{name: "Ingress/VPCServiceOf10KiB", answer: warned, reason: "InvalidIngress", want: []string{vpcA, `..."`},
			obj: func(c *corpus) client.Object { return c.ingress("vpc-huge", ann(vpcA, long(10<<10))) }},
		{name: "Ingress/HostnameNotAHostname", answer: warned, reason: "InvalidIngress", want: []string{hostnameA, `"not a host!"`},
			obj: func(c *corpus) client.Object { return c.ingress("host-garbage", ann(hostnameA, "not a host!")) }},
		{name: "Ingress/HostnameList", answer: warned, reason: "InvalidIngress", want: []string{hostnameA, "takes one hostname, not a list"},
			obj: func(c *corpus) client.Object {
				return c.ingress("host-list", ann(hostnameA, "a."+c.ns+".internal,b."+c.ns+".internal"))
			}},
		{name: "Ingress/HostnameOf300", answer: warned, reason: "InvalidIngress", want: []string{hostnameA, "longer than 253 characters"},
			obj: func(c *corpus) client.Object {
				return c.ingress("host-long", ann(hostnameA, strings.Repeat(strings.Repeat("a", 59)+".", 5)+"example.com"))
			}},
		{name: "Ingress/HostnameLabelOf64", answer: warned, reason: "InvalidIngress", want: []string{hostnameA, "each label must be 1-63"},
			obj: func(c *corpus) client.Object { return c.ingress("host-label", ann(hostnameA, label64+".example.com")) }},
		{name: "Ingress/HostnameIDN", answer: warned, reason: "InvalidIngress", want: []string{hostnameA, `"bücher.example.com"`},
			obj: func(c *corpus) client.Object { return c.ingress("host-idn", ann(hostnameA, "bücher.example.com")) }},
		{name: "Ingress/HostnameTwoWildcards", answer: warned, reason: "InvalidIngress", want: []string{hostnameA, "only a leading"},
			obj: func(c *corpus) client.Object { return c.ingress("host-wild2", ann(hostnameA, "*.*.example.com")) }},
		{name: "Ingress/HostnameBareWildcard", answer: warned, reason: "InvalidIngress", want: []string{hostnameA, `"*"`},
			obj: func(c *corpus) client.Object { return c.ingress("host-wild", ann(hostnameA, "*")) }},
		{name: "Ingress/HostnameWithInjectedLine", answer: warned, reason: "InvalidIngress", want: []string{hostnameA, `"ok.example.com\nevil.example.com"`},
			obj: func(c *corpus) client.Object {
				return c.ingress("host-newline", ann(hostnameA, "ok.example.com\nevil.example.com", publicA, "true"))
			}},
		{name: "Ingress/ResourceBackend", answer: warned, reason: "InvalidIngress", want: []string{"spec.defaultBackend", "a resource backend", "is not supported"},
			obj: func(c *corpus) client.Object {
				return c.ingress("resource-backend", nil, func(i *networkingv1.Ingress) {
					i.Spec.DefaultBackend = &networkingv1.IngressBackend{Resource: &corev1.TypedLocalObjectReference{APIGroup: ptr.To("storage.k8s.io"), Kind: "Bucket", Name: "b"}}
				})
			}},
		{name: "Ingress/NamedPortOfMissingService", answer: warned, reason: "InvalidIngress", want: []string{"spec.defaultBackend", `Service "ghost" not found, so its port "http" cannot be resolved`},
			obj: func(c *corpus) client.Object {
				return c.ingress("ghost-port", ann(vpcA, "ghost-"+c.ns), func(i *networkingv1.Ingress) { i.Spec.DefaultBackend = backend("ghost", named("http")) })
			},
			check: noService("ghost-")},
		{name: "Ingress/NamedPortMissingOnService", answer: warned, reason: "InvalidIngress", want: []string{`Service "web" has no port named "grpc"`},
			obj: func(c *corpus) client.Object {
				return c.ingress("grpc-port", ann(vpcA, "grpc-"+c.ns), func(i *networkingv1.Ingress) { i.Spec.DefaultBackend = backend("web", named("grpc")) })
			},
			check: noService("grpc-")},
		{name: "Ingress/HostOfAnotherIngress", answer: warned, reason: "HostnameConflict", want: []string{"is already claimed by an Ingress of another namespace"},
			obj: func(c *corpus) client.Object {
				return c.ingress("steal-host", ann(publicA, "true"), func(i *networkingv1.Ingress) {
					i.Spec.Rules = []networkingv1.IngressRule{hostRule(c.h.host, "/", networkingv1.PathTypePrefix, backend("web", number(80)))}
				})
			}},
		{name: "Ingress/HostOfAnotherIngressUpperCaseTrailingDot", answer: warned, reason: "HostnameConflict", want: []string{"is already claimed by an Ingress of another namespace"},
			obj: func(c *corpus) client.Object {
				return c.ingress("steal-upper", ann(publicA, "true", hostnameA, strings.ToUpper(c.h.host)+"."))
			}},
		{name: "Ingress/WildcardOverAnotherIngressHost", answer: warned, reason: "HostnameConflict", want: []string{"is routed privately as", "already claims", "put both in one Ingress"},
			obj: func(c *corpus) client.Object { return c.ingress("steal-wild", ann(hostnameA, "*."+c.h.host)) }},
		{name: "Ingress/TLSSection", answer: warned, reason: "TLSIgnored", want: []string{"spec.tls", "Cloudflare terminates TLS at its edge"},
			obj: func(c *corpus) client.Object {
				return c.ingress("tls-section", nil, func(i *networkingv1.Ingress) {
					i.Spec.TLS = []networkingv1.IngressTLS{{SecretName: "tls"}}
				})
			}},
		{name: "Ingress/NumberedPortOfMissingService", answer: warned, reason: "BackendServiceNotFound", want: []string{"spec.defaultBackend", `Service "phantom" not found`},
			obj: func(c *corpus) client.Object {
				return c.ingress("phantom-port", nil, func(i *networkingv1.Ingress) { i.Spec.DefaultBackend = backend("phantom", number(80)) })
			}},
		{name: "Ingress/NumberedPortMissingOnService", answer: warned, reason: "BackendPortNotFound", want: []string{`Service "web" has no port 8443`},
			obj: func(c *corpus) client.Object {
				return c.ingress("missing-port", nil, func(i *networkingv1.Ingress) { i.Spec.DefaultBackend = backend("web", number(8443)) })
			}},
		{name: "Ingress/PublicWithoutHostname", answer: warned, reason: "InvalidIngress", want: []string{publicA, "names no hostname", "no DNS record or public rule is made"},
			obj: func(c *corpus) client.Object {
				return c.ingress("public-nohost", ann(publicA, "true"), func(i *networkingv1.Ingress) { i.Spec.DefaultBackend = backend("nohost", number(80)) })
			},
			check: noRecord("nohost.")},

		// ---- Managed resources refused at runtime --------------------
		{name: "NetworkRoute/TunnelRefIntoAnotherNamespace", answer: notSynced, want: []string{"references to other namespaces are not allowed"},
			obj: func(c *corpus) client.Object {
				return c.network("sneaky-net", "10.99.0.0/16", func(r *ztv1alpha1.NetworkRoute) {
					r.Spec.ForProvider.TunnelIDRef = &xpv2.NamespacedReference{Name: "healthy", Namespace: c.h.ns}
				})
			}},
		{name: "NetworkRoute/VirtualNetworkRefIntoAnotherNamespace", answer: notSynced, want: []string{"references to other namespaces are not allowed"},
			obj: func(c *corpus) client.Object {
				return c.network("sneaky-vnet", "10.98.0.0/16", func(r *ztv1alpha1.NetworkRoute) {
					r.Spec.ForProvider.VirtualNetworkIDRef = &xpv2.NamespacedReference{Name: "theirs", Namespace: c.h.ns}
				})
			}},
		{name: "NetworkRoute/EveryIPv4Address", answer: notSynced, want: []string{"spec.allow.networks", "0.0.0.0/0"},
			obj: func(c *corpus) client.Object { return c.network("everything", "0.0.0.0/0") }},
		{name: "NetworkRoute/EveryIPv6Address", answer: notSynced, want: []string{"spec.allow.networks", "::/0"},
			obj: func(c *corpus) client.Object { return c.network("everything-v6", "::/0") }},
		{name: "VirtualNetwork/DefaultThroughANamespacedConfig", answer: custom, run: takesTheDefault},
		{name: "HostnameRoute/TunnelOnlyARefusedDecoyNames", answer: custom, run: decoysTunnel,
			check: noRoute("decoyed.")},
		{name: "HostnameRoute/TunnelRefIntoAnotherNamespace", answer: notSynced, want: []string{"references to other namespaces are not allowed"},
			obj: func(c *corpus) client.Object {
				return c.route("sneaky-ref", "sneaky-ref."+c.ns+".internal", func(r *ztv1alpha1.HostnameRoute) {
					r.Spec.ForProvider.TunnelIDRef = &xpv2.NamespacedReference{Name: "healthy", Namespace: c.h.ns}
				})
			},
			check: noRoute("sneaky-ref.")},
		{name: "VPCService/ResolverTunnelRefIntoAnotherNamespace", answer: notSynced, want: []string{"references to other namespaces are not allowed"},
			obj: func(c *corpus) client.Object {
				return c.vpc("sneaky-resolver", "sneaky-resolver-"+c.ns, func(s *connv1alpha1.VPCService) {
					s.Spec.ForProvider.Host.ResolverNetwork.TunnelIDRef = &xpv2.NamespacedReference{Name: "healthy", Namespace: c.h.ns}
				})
			},
			check: noService("sneaky-resolver-")},
		{name: "VPCService/NetworkTunnelRefIntoAnotherNamespace", answer: notSynced, want: []string{"references to other namespaces are not allowed"},
			obj: func(c *corpus) client.Object {
				return c.vpc("sneaky-network", "sneaky-network-"+c.ns, func(s *connv1alpha1.VPCService) {
					s.Spec.ForProvider.Host = connv1alpha1.ServiceHost{IPv4: ptr.To("10.0.0.7"), Network: &connv1alpha1.ServiceNetwork{
						TunnelIDRef: &xpv2.NamespacedReference{Name: "healthy", Namespace: c.h.ns},
					}}
				})
			},
			check: noService("sneaky-network-")},
		{name: "HostnameRoute/ProviderConfigOfAnotherNamespace", answer: notSynced, want: []string{"does not exist"},
			obj: func(c *corpus) client.Object {
				return c.route("borrow-creds", "borrow-creds."+c.ns+".internal", func(r *ztv1alpha1.HostnameRoute) {
					r.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: tv1alpha1.ProviderConfigKind, Name: c.creds}
				})
			},
			check: noRoute("borrow-creds.")},
		{name: "HostnameRoute/HostOfAnotherTunnel", answer: notSynced, want: []string{"conflict: hostname", "is already routed to tunnel"},
			obj: func(c *corpus) client.Object { return c.route("steal-route", c.h.host) }},
		{name: "DNSRecord/RecordOfAnotherIngress", answer: notSynced, want: []string{"conflict: a CNAME record for", "was not created by this resource"},
			obj: func(c *corpus) client.Object {
				return c.record("steal-record", c.h.host, func(r *dnsv1alpha1.DNSRecord) { r.Spec.ForProvider.Proxied = ptr.To(true) })
			}},
		// With zoneName the schema refuses it (DNSRecord/NameOutsideZoneName);
		// a zoneId is resolved only at run time.
		{name: "DNSRecord/NameOutsideItsZone", answer: notSynced, want: []string{"is not in zone example.com"},
			obj: func(c *corpus) client.Object {
				return c.record("outside-zone", "outside-"+c.ns+".example.org", func(r *dnsv1alpha1.DNSRecord) { r.Spec.ForProvider.ZoneID = ptr.To(sim.ZoneID("example.com")) })
			}},
		{name: "DNSRecord/NoZoneMatches", answer: notSynced, want: []string{"no zone in the account matches"},
			obj: func(c *corpus) client.Object { return c.record("no-zone", "app-"+c.ns+".nozone.test") }},
		{name: "ProviderConfig/SecretOfAnotherNamespace", answer: notReady, want: []string{"may only read Secrets in its own namespace"},
			// The provider's own token Secret.
			obj: func(c *corpus) client.Object {
				return c.pc("borrow-secret", func(pc *tv1alpha1.ProviderConfig) {
					pc.Spec.Credentials.SecretRef = &tv1alpha1.SecretKeySelector{Name: "cloudflare", Namespace: "crossplane-system"}
				})
			}},

		// ---- Natural-key adoption across namespaces ------------------
		{name: "Tunnel/CloudflareNameOfAnotherNamespacesTunnel", answer: custom, run: adoptsTunnel},
		{name: "VPCService/NameOfAnotherNamespacesService", answer: custom, run: adoptsService},

		// ---- Ownership and tenant guardrails --------------------------
		{name: "ProviderConfig/AllowNamespacesOnANamespacedConfig", answer: rejected, want: []string{"spec.allow.namespaces is for a ClusterProviderConfig"},
			obj: func(c *corpus) client.Object {
				return c.pc("fence-namespaces", func(pc *tv1alpha1.ProviderConfig) {
					pc.Spec.Allow = &tv1alpha1.Allowances{Namespaces: []string{"team-b"}}
				})
			}},
		{name: "ProviderConfig/OwnerIDNotALabel", answer: rejected, want: []string{"spec.ownerID"},
			obj: func(c *corpus) client.Object {
				return c.pc("odd-owner", func(pc *tv1alpha1.ProviderConfig) { pc.Spec.OwnerID = "Prod/EU" })
			}},
		{name: "ProviderConfig/OwnerIDTooLong", answer: rejected, want: []string{"spec.ownerID"},
			obj: func(c *corpus) client.Object {
				return c.pc("long-owner", func(pc *tv1alpha1.ProviderConfig) { pc.Spec.OwnerID = strings.Repeat("a", 21) })
			}},
		{name: "Tunnel/NameOfATunnelMadeElsewhere", answer: custom, run: takesForeignTunnel},
		{name: "HostnameRoute/HostnameOutsideTheConfigsSuffixes", answer: custom, run: crossesGuardrail,
			check: noRoute("fenced.")},
		{name: "NetworkRoute/OverlapsARouteMadeAMomentAgo", answer: custom, run: overlapsAFreshRoute},
		{name: "CloudflareTunnel/RotationRequestedForTheYear2099", answer: custom, run: rotatesInTheYear2099},
		{name: "CloudflareTunnel/SharedWithEveryNamespace", answer: custom, run: sharesWithEveryone},
		{name: "Ingress/HostnameHeldByAPublicHostname", answer: custom, run: takesAHeldHostname,
			check: noRoute("held-")},
		{name: "Service/PublicWithAVPCService", answer: custom, run: publishesAVPCServiceByItsPublicName},
	}
}

// takesForeignTunnel: a tunnel of the desired name made elsewhere (another
// cluster, Terraform, the dashboard) is found by its name and refused, not
// adopted: no run token, no configuration written.
func takesForeignTunnel(t *testing.T, c *corpus) string {
	name := "elsewhere-" + c.ns
	foreign, err := p.Cloudflare.CreateTunnel(context.Background(), name, "cloudflare")
	if err != nil {
		t.Fatal(err)
	}
	tun := c.tunnel("elsewhere", name, func(tun *ztv1alpha1.Tunnel) { tun.Spec.ManagementPolicies = nil })
	p.Create(t, tun)
	synced := p.WaitSynced(t, tun, "the name refused", func(c xpv2.Condition) bool {
		return c.Status == corev1.ConditionFalse && c.Reason == common.ReasonNameTaken
	})
	p.WaitServed(t, 2, "GET", "/cfd_tunnel$") // looked again twice (backoff): it must stay refused
	if err := p.Get(tun); err != nil {
		t.Fatal(err)
	}
	if id := meta.GetExternalName(tun); id != "" {
		return c.knownBug(t, "a Tunnel naming a tunnel made elsewhere (%s) adopts it (external-name %s)", foreign.ID, id)
	}
	if synced.Status != corev1.ConditionFalse || synced.Reason != common.ReasonNameTaken {
		t.Errorf("Synced=%s %s %q: want the name reported as taken", synced.Status, synced.Reason, synced.Message)
	}
	return "Synced=False: " + oneLine(synced.Message)
}

// crossesGuardrail: a ClusterProviderConfig that allows only hostnames under
// one suffix refuses a route outside it before any write.
func crossesGuardrail(t *testing.T, c *corpus) string {
	cpc := p.ClusterConfig(t, "fenced-"+c.ns, func(s *tv1alpha1.ProviderConfigSpec) {
		s.Allow = &tv1alpha1.Allowances{HostnameSuffixes: []string{"allowed.internal"}}
	})
	r := c.route("fenced", "fenced."+c.ns+".internal", func(r *ztv1alpha1.HostnameRoute) {
		r.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: tv1alpha1.ClusterProviderConfigKind, Name: cpc.Name}
	})
	p.Create(t, r)
	synced := waitObserved(t, r)
	if synced.Status != corev1.ConditionFalse || !strings.Contains(synced.Message, "spec.allow.hostnameSuffixes") {
		t.Errorf("Synced=%s %q: want the hostname refused by spec.allow.hostnameSuffixes", synced.Status, synced.Message)
	}
	return "Synced=False: " + oneLine(synced.Message)
}

// takesTheDefault: a VirtualNetwork asking to be the account's default
// through a namespace's ProviderConfig is made without the flag, and the
// refusal names the rule; the account's default stays where it was.
func takesTheDefault(t *testing.T, c *corpus) string {
	ctx := context.Background()
	before, err := p.Cloudflare.ListVirtualNetworks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	v := c.vnet("takeover", "takeover-"+c.ns)
	v.Namespace = c.h.ns
	v.Spec.ForProvider.IsDefaultNetwork = ptr.To(true)
	v.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: tv1alpha1.ProviderConfigKind, Name: c.creds}
	p.Create(t, v)
	synced := p.WaitSynced(t, v, "the default refused", func(s xpv2.Condition) bool {
		return s.Status == corev1.ConditionFalse && strings.Contains(s.Message, "spec.allow.defaultVirtualNetwork")
	})
	after, err := p.Cloudflare.ListVirtualNetworks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defaultOf := func(vs []cloudflare.VirtualNetwork) string {
		for _, x := range vs {
			if x.IsDefaultNetwork {
				return x.ID
			}
		}
		return ""
	}
	if defaultOf(after) != defaultOf(before) {
		return c.knownBug(t, "a namespace's ProviderConfig moved the account's default virtual network from %s to %s", defaultOf(before), defaultOf(after))
	}
	p.DeleteAndWait(t, v)
	return "Synced=False: " + oneLine(synced.Message)
}

// decoysTunnel: an Observe-only Tunnel naming the healthy namespace's tunnel
// by ID is refused, and being there does not make that tunnel the corpus
// namespace's own: a HostnameRoute with the raw tunnel ID stays refused.
func decoysTunnel(t *testing.T, c *corpus) string {
	decoy := c.tunnel("decoy", "decoy-"+c.ns)
	meta.SetExternalName(decoy, c.h.tunnelID)
	p.Create(t, decoy)
	if synced := waitObserved(t, decoy); synced.Status != corev1.ConditionFalse || !strings.Contains(synced.Message, "already managed by") {
		return c.knownBug(t, "an Observe-only Tunnel naming another namespace's tunnel %s is not refused: Synced=%s %q", c.h.tunnelID, synced.Status, synced.Message)
	}
	r := c.route("decoyed", "decoyed."+c.ns+".internal", func(r *ztv1alpha1.HostnameRoute) {
		r.Spec.ForProvider.TunnelIDRef = nil
		r.Spec.ForProvider.TunnelID = ptr.To(c.h.tunnelID)
	})
	p.Create(t, r)
	synced := waitObserved(t, r)
	if synced.Status != corev1.ConditionFalse || !strings.Contains(synced.Message, "in another namespace") {
		return c.knownBug(t, "a HostnameRoute with the raw ID of another namespace's tunnel, beside a refused decoy Tunnel naming it, is not refused: Synced=%s %q", synced.Status, synced.Message)
	}
	return "Synced=False: " + oneLine(synced.Message)
}

// noService: no VPC service whose name starts with prefix and ends with the
// corpus namespace was created.
func noService(prefix string) func(*testing.T, *corpus, sim.State) {
	return func(t *testing.T, c *corpus, st sim.State) {
		t.Helper()
		for _, s := range st.Services {
			if strings.HasPrefix(s.Name, prefix) && (s.Name == prefix || strings.HasSuffix(s.Name, c.ns)) {
				t.Errorf("VPC service %q (%s) was created", s.Name, s.ServiceID)
			}
		}
	}
}

// noRecord: no DNS record whose name starts with prefix was created.
func noRecord(prefix string) func(*testing.T, *corpus, sim.State) {
	return func(t *testing.T, c *corpus, st sim.State) {
		t.Helper()
		for _, r := range st.DNSRecords {
			if strings.HasPrefix(r.Name, prefix) {
				t.Errorf("DNS record %q (%s) was created", r.Name, r.ID)
			}
		}
	}
}

// noRoute: no hostname route whose hostname starts with prefix was created.
func noRoute(prefix string) func(*testing.T, *corpus, sim.State) {
	return func(t *testing.T, c *corpus, st sim.State) {
		t.Helper()
		for _, r := range st.HostnameRoutes {
			if strings.HasPrefix(r.Hostname, prefix) {
				t.Errorf("hostname route %q (%s) was created", r.Hostname, r.ID)
			}
		}
	}
}

// adoptsTunnel: a Tunnel in the corpus namespace giving the healthy
// tunnel's Cloudflare name, observe only, asking for its connection Secret.
// Names are the natural key tunnels are adopted by, so this must not hand
// another namespace's tunnel (and its run token) over.
func adoptsTunnel(t *testing.T, c *corpus) string {
	tun := c.tunnel("borrowed", c.h.tunnelName, func(tun *ztv1alpha1.Tunnel) {
		tun.Spec.WriteConnectionSecretToReference = &xpv2.LocalSecretReference{Name: "borrowed-token"}
	})
	p.Create(t, tun)
	synced := waitObserved(t, tun)
	sec := &corev1.Secret{}
	wait.Eventually(t, 10*time.Second, "the connection Secret", func() error {
		if tun.GetCondition(xpv2.TypeReady).Status != corev1.ConditionTrue {
			return nil // refused: nothing to publish
		}
		return p.Client.Get(context.Background(), client.ObjectKey{Namespace: c.ns, Name: "borrowed-token"}, sec)
	})
	if leaked := len(sec.Data["token"]) > 0; leaked || tun.Status.AtProvider.ID == c.h.tunnelID {
		return c.knownBug(t, "a Tunnel in %s naming another namespace's Cloudflare tunnel adopts it (status id %s) and its run token is copied into Secret %s/borrowed-token (%t): adoption by name ignores namespaces",
			c.ns, tun.Status.AtProvider.ID, c.ns, leaked)
	}
	if synced.Status != corev1.ConditionFalse {
		t.Errorf("Synced=%s: want the adoption refused", synced.Status)
	}
	return "Synced=False: " + oneLine(synced.Message)
}

// waitObserved waits until the managed resource is either Ready (observed
// an external object) or Synced=False (refused), and returns Synced.
func waitObserved(t *testing.T, mg resource.Managed) xpv2.Condition {
	t.Helper()
	var synced xpv2.Condition
	wait.Eventually(t, 30*time.Second, mg.GetName()+" observed", func() error {
		if err := p.Get(mg); err != nil {
			return err
		}
		synced = mg.GetCondition(xpv2.TypeSynced)
		if mg.GetCondition(xpv2.TypeReady).Status != corev1.ConditionTrue && synced.Status != corev1.ConditionFalse {
			return fmt.Errorf("neither Ready nor Synced=False yet")
		}
		return nil
	})
	return synced
}

// adoptsService: a VPCService in the corpus namespace giving the healthy
// VPC service's name, observe only (a full policy would also rewrite it to
// point at this namespace's host and tunnel).
func adoptsService(t *testing.T, c *corpus) string {
	s := c.vpc("borrowed", c.h.vpc, func(s *connv1alpha1.VPCService) {
		s.Spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionObserve}
	})
	p.Create(t, s)
	synced := waitObserved(t, s)
	if id := s.Status.AtProvider.ServiceID; id != "" {
		return c.knownBug(t, "a VPCService in %s naming another namespace's VPC service %q adopts it (id %s); with Update allowed (an Ingress's vpc-service annotation) the two namespaces rewrite its host and tunnel on every poll",
			c.ns, c.h.vpc, id)
	}
	if synced.Status != corev1.ConditionFalse {
		t.Errorf("Synced=%s: want the adoption refused", synced.Status)
	}
	return "Synced=False: " + oneLine(synced.Message)
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", `\n`)
	if len(s) > 400 {
		s = s[:400] + "..."
	}
	return s
}

// fingerprint is the healthy Ingress's Cloudflare objects as JSON: what must
// not change.
func (h *healthy) fingerprint(st sim.State) map[string]string {
	out := map[string]string{}
	add := func(k string, v any) {
		b, _ := json.Marshal(v)
		out[k] += string(b)
	}
	for _, tun := range st.Tunnels {
		if tun.ID == h.tunnelID {
			// Status and connectors are cloudflared's, not configuration.
			add("tunnel", []any{tun.ID, tun.Name, tun.DeletedAt, tun.ConfigVersion, tun.Config})
		}
	}
	for _, r := range st.HostnameRoutes {
		if r.Hostname == h.host || r.TunnelID == h.tunnelID {
			add("route "+r.ID, r)
		}
	}
	for _, s := range st.Services {
		if s.Name == h.vpc || strings.Contains(s.Host.Hostname, h.ns) {
			add("service "+s.ServiceID, s)
		}
	}
	for _, r := range st.DNSRecords {
		if r.Name == h.host || strings.Contains(r.Content, h.tunnelID) {
			add("record "+r.ID, r)
		}
	}
	return out
}

func diffPrints(want, got map[string]string) string {
	var d []string
	for k, w := range want {
		if g, ok := got[k]; !ok {
			d = append(d, "gone: "+k+" "+w)
		} else if g != w {
			d = append(d, "changed: "+k+"\n  was "+w+"\n  now "+g)
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			d = append(d, "new: "+k+" "+g)
		}
	}
	slices.Sort(d)
	return strings.Join(d, "\n")
}

// setupHealthy starts the Ingress that works before the corpus runs and
// returns once its objects exist in Cloudflare and are Ready.
func setupHealthy(t *testing.T) *healthy {
	ns := p.Namespace(t)
	h := &healthy{ns: ns, tunnelName: "healthy-" + ns, host: "healthy-" + ns + ".example.com", vpc: "healthy-" + ns}
	p.Create(t, &tv1alpha1.CloudflareTunnel{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "healthy"},
		Spec:       tv1alpha1.CloudflareTunnelSpec{TunnelName: ptr.To(h.tunnelName), Replicas: ptr.To[int32](1)},
	})
	p.Create(t, service(ns, "web", "http", 80))
	p.Create(t, &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web", Annotations: map[string]string{
			tv1alpha1.AnnotationTunnel: "healthy", tv1alpha1.AnnotationPublic: "true", tv1alpha1.AnnotationVPCService: h.vpc,
		}},
		Spec: networkingv1.IngressSpec{
			IngressClassName: ptr.To("cloudflare"),
			Rules:            []networkingv1.IngressRule{hostRule(h.host, "/", networkingv1.PathTypePrefix, backend("web", named("http")))},
		},
	})
	return h
}

// waitHealthy waits until the healthy Ingress's managed resources are Ready
// and its Cloudflare objects have settled, and records their fingerprint.
func waitHealthy(t *testing.T, h *healthy) {
	wait.Eventually(t, 60*time.Second, "the healthy Ingress's managed resources Ready", func() error {
		for _, l := range []client.ObjectList{&ztv1alpha1.HostnameRouteList{}, &connv1alpha1.VPCServiceList{}, &dnsv1alpha1.DNSRecordList{}} {
			if err := p.Client.List(context.Background(), l, client.InNamespace(h.ns)); err != nil {
				return err
			}
			items := l.(resource.ManagedList).GetItems()
			if len(items) != 1 {
				return fmt.Errorf("%d %T items", len(items), l)
			}
			for _, m := range items {
				if m.GetCondition(xpv2.TypeReady).Status != corev1.ConditionTrue || m.GetCondition(xpv2.TypeSynced).Status != corev1.ConditionTrue {
					return fmt.Errorf("%s not Ready and Synced", m.GetName())
				}
			}
		}
		cft := &tv1alpha1.CloudflareTunnel{ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: "healthy"}}
		if err := p.Get(cft); err != nil {
			return err
		}
		h.tunnelID = cft.Status.TunnelID
		print := h.fingerprint(p.Sim.Snapshot())
		if !strings.Contains(print["tunnel"], h.host) {
			return fmt.Errorf("the tunnel configuration does not route %s yet: %s", h.host, print["tunnel"])
		}
		if len(print) != 4 {
			return fmt.Errorf("want a tunnel, a route, a service and a record: %v", print)
		}
		return nil
	})
	// Settled: two snapshots a poll apart (three tunnel lists, a list at
	// most every half poll) agree.
	prev := h.fingerprint(p.Sim.Snapshot())
	wait.Eventually(t, 60*time.Second, "the healthy Ingress's Cloudflare objects settled", func() error {
		p.WaitServed(t, 3, http.MethodGet, "/cfd_tunnel$")
		cur := h.fingerprint(p.Sim.Snapshot())
		if d := diffPrints(prev, cur); d != "" {
			prev = cur
			return fmt.Errorf("still changing:\n%s", d)
		}
		return nil
	})
	h.print = prev
}

// setupCorpus makes the namespaces the entries run in.
func setupCorpus(t *testing.T, h *healthy) *corpus {
	ctx := context.Background()
	c := &corpus{h: h, ns: p.Namespace(t), bare: p.Namespace(t), creds: "team-credentials", made: map[string]bool{}}
	c.edgeName = "corpus-" + c.ns
	p.Create(t, &tv1alpha1.CloudflareTunnel{
		ObjectMeta: metav1.ObjectMeta{Namespace: c.ns, Name: "edge"},
		Spec:       tv1alpha1.CloudflareTunnelSpec{TunnelName: ptr.To(c.edgeName), Replicas: ptr.To[int32](1)},
	})
	p.Create(t, service(c.ns, "web", "http", 80))
	p.Create(t, service(c.ns, "redis", "redis", 6379))

	cpc := &tv1alpha1.ClusterProviderConfig{}
	if err := p.Client.Get(ctx, client.ObjectKey{Name: "default"}, cpc); err != nil {
		t.Fatal(err)
	}
	c.endpoint = ptr.Deref(cpc.Spec.Endpoint, "")
	// A working ProviderConfig that exists only in the healthy namespace.
	p.Create(t, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: "creds"},
		StringData: map[string]string{tv1alpha1.DefaultTokenKey: providertest.Token},
	})
	pc := c.pc(c.creds)
	pc.Namespace = h.ns
	p.Create(t, pc)

	wait.Eventually(t, 60*time.Second, "the corpus tunnel's ID and the healthy namespace's ProviderConfig Ready", func() error {
		cft := &tv1alpha1.CloudflareTunnel{ObjectMeta: metav1.ObjectMeta{Namespace: c.ns, Name: "edge"}}
		if err := p.Get(cft); err != nil {
			return err
		}
		if c.edgeID = cft.Status.TunnelID; c.edgeID == "" {
			return fmt.Errorf("no tunnel ID yet")
		}
		tun := &ztv1alpha1.Tunnel{ObjectMeta: metav1.ObjectMeta{Namespace: c.ns, Name: "edge"}}
		if err := p.Get(tun); err != nil {
			return err
		}
		if tun.GetCondition(xpv2.TypeReady).Status != corev1.ConditionTrue {
			return fmt.Errorf("Tunnel edge not Ready")
		}
		if err := p.Get(pc); err != nil {
			return err
		}
		if r := pc.Status.GetCondition(xpv2.TypeReady); r.Status != corev1.ConditionTrue {
			return fmt.Errorf("ProviderConfig %s/%s: Ready=%s %s", pc.Namespace, pc.Name, r.Status, r.Message)
		}
		return nil
	})
	return c
}

// checkAccount asserts that the healthy Ingress's Cloudflare objects are
// as they were, and that everything the account holds beyond base is
// something a corpus entry may make: the corpus's own tunnel, and private
// routes of its Ingresses' default hostnames (the valid part of an Ingress
// with a bad annotation is still served) on it.
func (c *corpus) checkAccount(t *testing.T, base sim.State, when string) sim.State {
	t.Helper()
	st := p.Sim.Snapshot()
	if d := diffPrints(c.h.print, c.h.fingerprint(st)); d != "" {
		t.Errorf("%s: the healthy Ingress's Cloudflare objects changed:\n%s", when, d)
	}
	old := map[string]bool{}
	for id := range c.made {
		old[id] = true
	}
	for _, x := range base.Tunnels {
		old[x.ID] = true
	}
	for _, x := range base.HostnameRoutes {
		old[x.ID] = true
	}
	for _, x := range base.Services {
		old[x.ServiceID] = true
	}
	for _, x := range base.DNSRecords {
		old[x.ID] = true
	}
	for _, x := range st.Tunnels {
		if x.ID == c.edgeID {
			c.checkEdgeConfig(t, x.Config, when)
		}
		// "elsewhere-…" is the tunnel takesForeignTunnel makes behind the
		// provider's back, as another cluster would.
		if !old[x.ID] && !strings.HasPrefix(x.Name, "elsewhere-") {
			t.Errorf("%s: a tunnel %q (%s) was created", when, x.Name, x.ID)
		}
	}
	for _, x := range st.HostnameRoutes {
		if !old[x.ID] && !(x.TunnelID == c.edgeID && strings.HasSuffix(x.Hostname, "."+c.ns+".svc.cluster.local") && x.DeletedAt == nil) {
			t.Errorf("%s: a hostname route %q → %s (%s) was created", when, x.Hostname, x.TunnelName, x.ID)
		}
	}
	for _, x := range st.Services {
		if !old[x.ServiceID] {
			t.Errorf("%s: a VPC service %q (%s) was created", when, x.Name, x.ServiceID)
		}
	}
	for _, x := range st.DNSRecords {
		if !old[x.ID] {
			t.Errorf("%s: a DNS record %s %s (%s) was created", when, x.Type, x.Name, x.ID)
		}
	}
	for _, x := range base.CIDRRoutes {
		old[x.ID] = true
	}
	for _, x := range st.CIDRRoutes {
		if !old[x.ID] {
			t.Errorf("%s: a network route %s (%s) was created", when, x.Network, x.ID)
		}
	}
	return st
}

// checkEdgeConfig: no corpus Ingress is validly public, so the corpus
// tunnel's configuration routes no hostname.
func (c *corpus) checkEdgeConfig(t *testing.T, config, when string) {
	t.Helper()
	if config == "" {
		return
	}
	var doc ztv1alpha1.TunnelConfig
	if err := json.Unmarshal([]byte(config), &doc); err != nil {
		t.Errorf("%s: the corpus tunnel's configuration %q: %v", when, config, err)
		return
	}
	for _, r := range doc.Ingress {
		switch h := ptr.Deref(r.Hostname, ""); {
		case h == "":
		case h == c.h.host:
			if !slices.ContainsFunc(c.bugs, func(b string) bool { return strings.Contains(b, "publicRules") }) {
				c.knownBug(t, "the public rule of an Ingress that lost hostname %s to an older Ingress (HostnameConflict: \"this Ingress does not route it\") is in its tunnel's remote configuration anyway: %s → %s (cloudflaretunnel publicRules ignores hostname conflicts)",
					h, h, r.Service)
			}
		default:
			t.Errorf("%s: the corpus tunnel's configuration routes %s to %s", when, h, r.Service)
		}
	}
}

// waitWarning waits for a Warning event on the object and returns its
// message.
func waitWarning(t *testing.T, o client.Object, reason string, want []string) string {
	t.Helper()
	var got []string
	var msg string
	wait.Eventually(t, 30*time.Second, fmt.Sprintf("Warning %s on %s", reason, o.GetName()), func() error {
		evs := &corev1.EventList{}
		if err := p.Client.List(context.Background(), evs, client.InNamespace(o.GetNamespace())); err != nil {
			return err
		}
		got = got[:0]
		for _, e := range evs.Items {
			if e.InvolvedObject.Name != o.GetName() || e.Type != corev1.EventTypeWarning {
				continue
			}
			got = append(got, e.Reason+": "+e.Message)
			if e.Reason == reason && containsAll(e.Message, want) {
				msg = e.Message
				return nil
			}
		}
		return fmt.Errorf("Warning events so far: %q", got)
	})
	return msg
}

func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// TestHostileInputCorpus throws every entry at the provider and checks each
// answer, then that nothing already running was disturbed and nothing that
// should not exist was created in Cloudflare.
func TestHostileInputCorpus(t *testing.T) {
	start := time.Now()
	ctx := context.Background()
	h := setupHealthy(t)
	c := setupCorpus(t, h)
	waitHealthy(t, h)
	base := p.Sim.Snapshot()
	t.Logf("healthy Ingress %s/web Ready (tunnel %s) and corpus namespace %s ready after %s", h.ns, h.tunnelID, c.ns, time.Since(start).Round(time.Millisecond))

	es := entries()
	answers := make([]string, len(es))
	seen := map[string]bool{}
	for _, e := range es {
		if seen[e.name] {
			t.Fatalf("two entries named %s", e.name)
		}
		seen[e.name] = true
	}

	// The API server answers at once: refused creates and updates, and
	// dry runs of valid input.
	for i, e := range es {
		if e.answer != rejected && e.answer != valid {
			continue
		}
		t.Run(e.name, func(t *testing.T) {
			o := e.obj(c)
			var err error
			switch {
			case e.answer == valid:
				err = p.Client.Create(ctx, o, client.DryRunAll)
			case e.patch != nil:
				if err := p.Get(o); err != nil {
					p.Create(t, o)
				}
				orig := o.DeepCopyObject().(client.Object)
				e.patch(o)
				err = p.Client.Patch(ctx, o, client.MergeFrom(orig))
			default:
				err = p.Client.Create(ctx, o)
			}
			switch {
			case e.answer == valid && err == nil:
				answers[i] = "accepted by API server (dry run)"
			case e.answer == valid:
				answers[i] = "REFUSED: " + oneLine(err.Error())
				t.Errorf("the API server refused valid input: %v", err)
			case err == nil:
				answers[i] = "ACCEPTED"
				t.Errorf("the API server accepted it; want an error containing %q", e.want)
			default:
				answers[i] = "rejected by API server: " + oneLine(err.Error())
				if !containsAll(err.Error(), e.want) {
					t.Errorf("error %q does not contain %q", err, e.want)
				}
			}
		})
	}
	c.checkAccount(t, base, "after the API server's answers")

	// The controllers answer: create everything, then wait for each answer.
	objs := make([]client.Object, len(es))
	for i, e := range es {
		if e.answer == warned || e.answer == notSynced || e.answer == notReady {
			objs[i] = e.obj(c)
			p.Create(t, objs[i])
		}
	}
	for i, e := range es {
		switch e.answer {
		case warned:
			t.Run(e.name, func(t *testing.T) {
				msg := waitWarning(t, objs[i], e.reason, e.want)
				answers[i] = "Warning " + e.reason + ": " + oneLine(msg)
				if len(msg) > 512 {
					t.Errorf("message of %d bytes: user input is not clipped", len(msg))
				}
			})
		case notSynced:
			t.Run(e.name, func(t *testing.T) {
				mg := objs[i].(resource.Managed)
				cond := p.WaitSynced(t, mg, "Synced=False "+strings.Join(e.want, ", "), func(c xpv2.Condition) bool {
					return c.Status == corev1.ConditionFalse && containsAll(c.Message, e.want)
				})
				answers[i] = "Synced=False " + string(cond.Reason) + ": " + oneLine(cond.Message)
				if n := meta.GetExternalName(mg); n != "" {
					t.Errorf("external-name %q: it got hold of a Cloudflare object", n)
				}
			})
		case notReady:
			t.Run(e.name, func(t *testing.T) {
				pc := objs[i].(*tv1alpha1.ProviderConfig)
				var cond xpv2.Condition
				wait.Eventually(t, 30*time.Second, "Ready=False", func() error {
					if err := p.Get(pc); err != nil {
						return err
					}
					if cond = pc.Status.GetCondition(xpv2.TypeReady); cond.Status != corev1.ConditionFalse || !containsAll(cond.Message, e.want) {
						return fmt.Errorf("Ready=%s: %s", cond.Status, cond.Message)
					}
					return nil
				})
				answers[i] = "Ready=False " + string(cond.Reason) + ": " + oneLine(cond.Message)
			})
		case custom:
			t.Run(e.name, func(t *testing.T) { answers[i] = e.run(t, c) })
		}
	}

	// Give retries and drift polls (2s) a chance to do damage, then check
	// the account.
	for _, kind := range []string{"/cfd_tunnel$", "/zerotrust/routes/hostname$"} {
		p.WaitServed(t, 6, "GET", kind) // evidence of polls, not a timer
	}
	st := c.checkAccount(t, base, "after the corpus")
	for _, e := range es {
		if e.check != nil {
			t.Run(e.name+"/Footprint", func(t *testing.T) { e.check(t, c, st) })
		}
	}

	t.Logf("%d entries in %s:", len(es), time.Since(start).Round(time.Millisecond))
	for i, e := range es {
		t.Logf("  %-55s → %s", e.name, answers[i])
	}
	for _, b := range c.bugs {
		t.Logf("known bug: %s", b)
	}
}
