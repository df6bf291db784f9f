package translate

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	connv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/connectivity/v1alpha1"
	tv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/expose"
)

const (
	ns       = "team-a"
	tunnelID = "de5136fc-0000-4000-8000-000000000001"
)

var pc = &xpv2.ProviderConfigReference{Kind: "ProviderConfig", Name: "team-a"}

func backend(svc string, port any) networkingv1.IngressBackend {
	p := networkingv1.ServiceBackendPort{}
	switch v := port.(type) {
	case int:
		p.Number = int32(v)
	case string:
		p.Name = v
	}
	return networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: svc, Port: p}}
}

func prefix(path, svc string, port any) networkingv1.HTTPIngressPath {
	return networkingv1.HTTPIngressPath{Path: path, PathType: ptr.To(networkingv1.PathTypePrefix), Backend: backend(svc, port)}
}

func rule(h string, paths ...networkingv1.HTTPIngressPath) networkingv1.IngressRule {
	r := networkingv1.IngressRule{Host: h}
	if len(paths) > 0 {
		r.HTTP = &networkingv1.HTTPIngressRuleValue{Paths: paths}
	}
	return r
}

// ingress builds an Ingress on tunnel "edge"; ann adds or, with value "-",
// removes annotations.
func ingress(name string, ann map[string]string, def *networkingv1.IngressBackend, rules ...networkingv1.IngressRule) *networkingv1.Ingress {
	a := map[string]string{tv1alpha1.AnnotationTunnel: "edge"}
	for k, v := range ann {
		if v == "-" {
			delete(a, k)
		} else {
			a[k] = v
		}
	}
	return &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: "uid-1", Annotations: a},
		Spec:       networkingv1.IngressSpec{IngressClassName: ptr.To("cloudflare"), DefaultBackend: def, Rules: rules},
	}
}

func input(i *networkingv1.Ingress, svcs ...*corev1.Service) Input {
	m := map[string]*corev1.Service{}
	for _, s := range svcs {
		m[s.Name] = s
	}
	return Input{Ingress: i, Tunnel: expose.Tunnel{Name: "edge", TunnelID: tunnelID, ProviderConfigRef: pc}, Services: m}
}

func service(name string, ports map[string]int32) *corev1.Service {
	s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	for n, p := range ports {
		s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: n, Port: p})
	}
	return s
}

// summary is a Result reduced to what a reader checks at a glance.
type summary struct {
	Hostnames, Routes, Services, Published, Rules, Problems []string
	Public                                                  bool
}

func summarize(r expose.Result) summary {
	s := summary{Hostnames: r.Hostnames, Public: r.Public}
	for _, x := range r.Routes {
		s.Routes = append(s.Routes, x.Spec.ForProvider.Hostname)
	}
	for _, x := range r.Services {
		p := x.Spec.ForProvider
		s.Services = append(s.Services, fmt.Sprintf("%s %s:%d %s", p.Name, p.Type, *p.TCPPort, *p.Host.Hostname))
	}
	for _, x := range r.Published {
		s.Published = append(s.Published, x.Spec.Hostname)
	}
	s.Rules = ruleStrings(r.Rules)
	for _, p := range r.Problems {
		s.Problems = append(s.Problems, p.Field)
	}
	return s
}

func ruleStrings(rs []ztv1alpha1.IngressRule) []string {
	var out []string
	for _, r := range rs {
		out = append(out, strings.Join(slices.DeleteFunc([]string{ptr.Deref(r.Hostname, ""), ptr.Deref(r.Path, ""), r.Service}, func(s string) bool { return s == "" }), " "))
	}
	return out
}

// TestRedisExample is the design's private route + VPC service example, in
// full: every field of every object is checked once here.
func TestRedisExample(t *testing.T) {
	ing := ingress("redis-cache", map[string]string{
		tv1alpha1.AnnotationTunnel:     "redis-cache-azure-development",
		tv1alpha1.AnnotationVPCService: "redis-cache-dev",
		tv1alpha1.AnnotationVPCPort:    "6379",
		tv1alpha1.AnnotationPublic:     "false",
		tv1alpha1.AnnotationHostname:   "redis-cache-azure-dev.redis-cf-tunnel.svc.cluster.local",
	}, ptr.To(backend("redis", 6379)))
	ing.Namespace = "redis-cf-tunnel"
	in := input(ing)
	in.Tunnel.Name = "redis-cache-azure-development"

	const host = "redis-cache-azure-dev.redis-cf-tunnel.svc.cluster.local"
	meta := func(kind, key string) metav1.ObjectMeta {
		return metav1.ObjectMeta{
			Name: MRName("redis-cache", kind, key), Namespace: "redis-cf-tunnel",
			Labels: map[string]string{LabelIngress: "redis-cache", LabelTunnel: "redis-cache-azure-development"},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "networking.k8s.io/v1", Kind: "Ingress", Name: "redis-cache", UID: "uid-1",
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		}
	}
	ref := &xpv2.NamespacedReference{Name: "redis-cache-azure-development", Policy: &xpv2.Policy{Resolve: ptr.To(xpv2.ResolvePolicyAlways)}}
	want := expose.Result{
		Hostnames: []string{host},
		Written:   map[string][]string{host: {host}},
		Notes:     []expose.Note{{Reason: expose.NoteBackendServiceNotFound, Field: "spec.defaultBackend", Message: `Service "redis" not found in namespace redis-cf-tunnel: traffic for it fails until it exists`}},
		Routes: []*ztv1alpha1.HostnameRoute{{
			TypeMeta:   metav1.TypeMeta{APIVersion: "zerotrust.tunnels.cloudflare.com/v1alpha1", Kind: "HostnameRoute"},
			ObjectMeta: meta(KindHostnameRoute, host),
			Spec: ztv1alpha1.HostnameRouteSpec{
				ManagedResourceSpec: xpv2.ManagedResourceSpec{ProviderConfigReference: pc},
				ForProvider:         ztv1alpha1.HostnameRouteParameters{Hostname: host, TunnelIDRef: ref},
			},
		}},
		Services: []*connv1alpha1.VPCService{{
			TypeMeta:   metav1.TypeMeta{APIVersion: "connectivity.tunnels.cloudflare.com/v1alpha1", Kind: "VPCService"},
			ObjectMeta: meta(KindVPCService, "redis-cache-dev"),
			Spec: connv1alpha1.VPCServiceSpec{
				ManagedResourceSpec: xpv2.ManagedResourceSpec{ProviderConfigReference: pc},
				ForProvider: connv1alpha1.VPCServiceParameters{
					Name: "redis-cache-dev", Type: "tcp", TCPPort: ptr.To[int64](6379),
					Host: connv1alpha1.ServiceHost{Hostname: ptr.To(host), ResolverNetwork: &connv1alpha1.ResolverNetwork{TunnelIDRef: ref}},
				},
			},
		}},
	}
	got := Translate(in)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Translate(): -want +got:\n%s", diff)
	}
	if got.Routes[0].Spec.ProviderConfigReference == pc {
		t.Error("providerConfigRef aliases the input; MRs must own their copy")
	}
}

// TestNotes: input that works as it is, but not as its author may think,
// gets a Note and changes nothing in the result.
func TestNotes(t *testing.T) {
	web := service("web", map[string]int32{"http": 80, "https": 443})
	pub := map[string]string{tv1alpha1.AnnotationPublic: "true"}
	withTLS := ingress("tls", pub, nil, rule("app.example.com", prefix("/", "web", 80)))
	withTLS.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{"app.example.com"}, SecretName: "app-tls"}}
	cases := map[string]struct {
		in   Input
		want []string // reason field
	}{
		"Clean":               {in: input(ingress("ok", pub, nil, rule("app.example.com", prefix("/", "web", 80))), web)},
		"ServiceMissing":      {in: input(ingress("gone", pub, nil, rule("app.example.com", prefix("/", "ghost", 80))), web), want: []string{expose.NoteBackendServiceNotFound + " spec.rules[0].http.paths[0].backend"}},
		"PortMissing":         {in: input(ingress("port", pub, nil, rule("app.example.com", prefix("/", "web", 8080))), web), want: []string{expose.NoteBackendPortNotFound + " spec.rules[0].http.paths[0].backend"}},
		"PlainHTTPToPort443":  {in: input(ingress("tls443", pub, nil, rule("app.example.com", prefix("/", "web", 443))), web), want: []string{expose.NotePlainHTTPToTLSPort + " spec.rules[0].http.paths[0].backend"}},
		"TLSSection":          {in: input(withTLS, web), want: []string{expose.NoteTLSIgnored + " spec.tls"}},
		"NoServicesToLookAt":  {in: Input{Ingress: ingress("idx", pub, nil, rule("app.example.com", prefix("/", "ghost", 80))), Tunnel: expose.Tunnel{Name: "edge", TunnelID: tunnelID}}},
		"PrivateDefaultGhost": {in: input(ingress("priv", nil, ptr.To(backend("ghost", 6379))), web), want: []string{expose.NoteBackendServiceNotFound + " spec.defaultBackend"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			withoutServices := tc.in
			got := Translate(tc.in)
			var notes []string
			for _, n := range got.Notes {
				notes = append(notes, n.Reason+" "+n.Field)
			}
			if diff := cmp.Diff(tc.want, notes); diff != "" {
				t.Errorf("Notes: -want +got:\n%s", diff)
			}
			// A Note changes nothing: the result is what it would be without.
			withoutServices.Services = nil
			plain := Translate(withoutServices)
			if diff := cmp.Diff(summarize(plain), summarize(got)); diff != "" && len(got.Problems) == 0 {
				t.Errorf("a Note changed the result: -without +with:\n%s", diff)
			}
		})
	}
}

func TestTranslate(t *testing.T) {
	api := service("api", map[string]int32{"http": 8080, "metrics": 9090})
	svc := func(name string, port int) string {
		return fmt.Sprintf("http://%s.%s.svc.cluster.local:%d", name, ns, port)
	}
	pub := map[string]string{tv1alpha1.AnnotationPublic: "TRUE"}
	cases := map[string]struct {
		in   Input
		want summary
	}{
		"PublicTwoHostsWithPaths": {
			in: input(ingress("shop", pub, nil,
				rule("www.example.com", prefix("/", "web", 80), prefix("/api/", "api", 8080)),
				rule("admin.example.com", networkingv1.HTTPIngressPath{Path: "/login", PathType: ptr.To(networkingv1.PathTypeExact), Backend: backend("admin", 3000)}, prefix("/login", "admin", 3001)),
			)),
			want: summary{
				Public:    true,
				Hostnames: []string{"admin.example.com", "www.example.com"},
				Routes:    []string{"admin.example.com", "www.example.com"},
				Published: []string{
					"admin.example.com",
					"www.example.com",
				},
				Rules: []string{
					// Exact before Prefix of the same path, longer paths first, path-less last.
					"admin.example.com ^/login$ " + svc("admin", 3000),
					"admin.example.com ^/login(/|$) " + svc("admin", 3001),
					"www.example.com ^/api(/|$) " + svc("api", 8080),
					"www.example.com " + svc("web", 80),
				},
			},
		},
		"ThreeHostsThreeRoutes": {
			in: input(ingress("multi", nil, nil, rule("c.example.com"), rule("A.example.com."), rule("b.example.com"), rule("c.example.com"))),
			want: summary{
				Hostnames: []string{"a.example.com", "b.example.com", "c.example.com"},
				Routes:    []string{"a.example.com", "b.example.com", "c.example.com"},
			},
		},
		"DefaultHostnameIsTheBackendService": {
			// Not the Ingress's own name: cloudflared must resolve it.
			in: input(ingress("front", map[string]string{tv1alpha1.AnnotationVPCService: "web"}, ptr.To(backend("web", 80)))),
			want: summary{
				Hostnames: []string{"web.team-a.svc.cluster.local"},
				Routes:    []string{"web.team-a.svc.cluster.local"},
				Services:  []string{"web tcp:80 web.team-a.svc.cluster.local"},
			},
		},
		"DefaultHostnameOfHostlessRules": {
			in: input(ingress("front", nil, nil, rule("", prefix("/", "api", 8080)))),
			want: summary{
				Hostnames: []string{"api.team-a.svc.cluster.local"},
				Routes:    []string{"api.team-a.svc.cluster.local"},
			},
		},
		"PublicWithoutAHostnameIsAProblem": {
			// The cluster-internal default is in no public zone: a DNS
			// record for it could never be made.
			in: input(ingress("web", pub, ptr.To(backend("web", 80)))),
			want: summary{
				Hostnames: []string{"web.team-a.svc.cluster.local"},
				Routes:    []string{"web.team-a.svc.cluster.local"},
				Problems:  []string{tv1alpha1.AnnotationPublic},
			},
		},
		"VPCServiceOfAPublicIngressReachesTheBackend": {
			in: input(ingress("many", map[string]string{tv1alpha1.AnnotationPublic: "true", tv1alpha1.AnnotationVPCService: "many"}, nil,
				rule("many.example.com", prefix("/", "web", 80)))),
			want: summary{
				Public:    true,
				Hostnames: []string{"many.example.com"},
				Routes:    []string{"many.example.com"},
				Services:  []string{"many tcp:80 web.team-a.svc.cluster.local"},
				Published: []string{"many.example.com"},
				Rules:     []string{"many.example.com " + svc("web", 80)},
			},
		},
		"VPCServiceHostFromTheHostnameAnnotation": {
			in: input(ingress("redis", map[string]string{tv1alpha1.AnnotationVPCService: "redis", tv1alpha1.AnnotationHostname: "cache.team-a.svc.cluster.local"}, ptr.To(backend("redis", 6379)))),
			want: summary{
				Hostnames: []string{"cache.team-a.svc.cluster.local"},
				Routes:    []string{"cache.team-a.svc.cluster.local"},
				Services:  []string{"redis tcp:6379 cache.team-a.svc.cluster.local"},
			},
		},
		// The hostname annotation of a public Ingress is a public rule host,
		// which inside the cluster resolves to Cloudflare's edge.
		"VPCServiceOfAPublicHostnameAnnotationReachesTheBackend": {
			in: input(ingress("api", map[string]string{tv1alpha1.AnnotationPublic: "true", tv1alpha1.AnnotationVPCService: "api", tv1alpha1.AnnotationHostname: "api.example.com"}, ptr.To(backend("web", 80)))),
			want: summary{
				Public:    true,
				Hostnames: []string{"api.example.com"},
				Routes:    []string{"api.example.com"},
				Services:  []string{"api tcp:80 web.team-a.svc.cluster.local"},
				Published: []string{"api.example.com"},
				Rules:     []string{"api.example.com " + svc("web", 80)},
			},
		},
		"VPCServiceOfAPublicIngressWithoutABackendServiceIsNotMade": {
			in: input(ingress("api", map[string]string{tv1alpha1.AnnotationPublic: "true", tv1alpha1.AnnotationVPCService: "api", tv1alpha1.AnnotationVPCPort: "80", tv1alpha1.AnnotationHostname: "api.example.com"}, &networkingv1.IngressBackend{Resource: &corev1.TypedLocalObjectReference{Kind: "Bucket", Name: "b"}})),
			want: summary{
				Public:    true,
				Hostnames: []string{"api.example.com"},
				Routes:    []string{"api.example.com"},
				Problems:  []string{"spec.defaultBackend", tv1alpha1.AnnotationVPCService},
			},
		},
		"NamedPortsResolvedThroughTheService": {
			in: input(ingress("api", map[string]string{tv1alpha1.AnnotationPublic: "true", tv1alpha1.AnnotationVPCService: "api"}, nil,
				rule("api.example.com", prefix("/", "api", "http"), prefix("/metrics", "api", "metrics"))), api),
			want: summary{
				Public:    true,
				Hostnames: []string{"api.example.com"},
				Routes:    []string{"api.example.com"},
				Services:  []string{"api tcp:8080 api.team-a.svc.cluster.local"},
				Published: []string{"api.example.com"},
				Rules:     []string{"api.example.com ^/metrics(/|$) " + svc("api", 9090), "api.example.com " + svc("api", 8080)},
			},
		},
		"DefaultBackendPortForVPCAndFallbackRule": {
			in: input(ingress("db", map[string]string{tv1alpha1.AnnotationPublic: "true", tv1alpha1.AnnotationVPCService: "db"}, ptr.To(backend("api", "metrics")),
				rule("db.example.com", prefix("/x", "x", 1)), rule("", prefix("/", "y", 2))), api),
			want: summary{
				Public:    true,
				Hostnames: []string{"db.example.com"},
				Routes:    []string{"db.example.com"},
				Services:  []string{"db tcp:9090 api.team-a.svc.cluster.local"},
				Published: []string{"db.example.com"},
				// The hostless rule applies to the Ingress's hosts; its "/" beats the default backend.
				Rules: []string{"db.example.com ^/x(/|$) " + svc("x", 1), "db.example.com " + svc("y", 2)},
			},
		},
		"WildcardRoutedNormalisedButPublishedAsIs": {
			in: input(ingress("wild", pub, nil, rule("*.apps.example.com", prefix("", "web", 80)), rule("apps.example.com", prefix("", "web", 80)))),
			want: summary{
				Public:    true,
				Hostnames: []string{"apps.example.com"},
				Routes:    []string{"apps.example.com"},
				Published: []string{
					"*.apps.example.com",
					"apps.example.com",
				},
				Rules: []string{"apps.example.com " + svc("web", 80), "*.apps.example.com " + svc("web", 80)},
			},
		},
		"HostnameOverrideAppliesToEveryPath": {
			in: input(ingress("o", map[string]string{tv1alpha1.AnnotationPublic: "true", tv1alpha1.AnnotationHostname: "Pub.Example.com"}, nil,
				rule("ignored.example.com", prefix("/a.b", "a", 1)), rule("other.example.com", prefix("/a.b", "b", 2)))),
			want: summary{
				Public:    true,
				Hostnames: []string{"pub.example.com"},
				Routes:    []string{"pub.example.com"},
				Published: []string{"pub.example.com"},
				Rules:     []string{`pub.example.com ^/a\.b(/|$) ` + svc("a", 1)},
				Problems:  []string{"spec.rules[1].http.paths[0]"}, // same host and path, other service
			},
		},
		"TunnelIDNotKnownYet": {
			// The hostname is published all the same: its DNS record waits
			// for the tunnel's ID, not the translation.
			in: func() Input {
				in := input(ingress("web", pub, ptr.To(backend("web", 80)), rule("web.example.com")))
				in.Tunnel.TunnelID = ""
				return in
			}(),
			want: summary{
				Public:    true,
				Hostnames: []string{"web.example.com"},
				Routes:    []string{"web.example.com"},
				Published: []string{"web.example.com"},
				Rules:     []string{"web.example.com " + svc("web", 80)},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, summarize(Translate(tc.in))); diff != "" {
				t.Errorf("Translate(): -want +got:\n%s", diff)
			}
		})
	}
}

// TestBadInput: each bad input is a Problem naming it, and only what depends
// on it is missing.
func TestBadInput(t *testing.T) {
	route := []string{"app.example.com"}
	cases := map[string]struct {
		ann      map[string]string
		def      *networkingv1.IngressBackend
		rules    []networkingv1.IngressRule
		svcs     []*corev1.Service
		want     summary
		noIngres bool
	}{
		"NoTunnel":                {ann: map[string]string{tv1alpha1.AnnotationTunnel: "-"}, want: summary{Problems: []string{tv1alpha1.AnnotationTunnel}}},
		"EmptyTunnel":             {ann: map[string]string{tv1alpha1.AnnotationTunnel: " "}, want: summary{Problems: []string{tv1alpha1.AnnotationTunnel}}},
		"NilIngress":              {noIngres: true, want: summary{Problems: []string{"ingress"}}},
		"VPCServiceTrue":          {ann: map[string]string{tv1alpha1.AnnotationVPCService: "true"}, want: summary{Hostnames: route, Routes: route, Problems: []string{tv1alpha1.AnnotationVPCService}}},
		"VPCServiceFalse":         {ann: map[string]string{tv1alpha1.AnnotationVPCService: "false"}, want: summary{Hostnames: route, Routes: route, Problems: []string{tv1alpha1.AnnotationVPCService}}},
		"VPCServiceEmpty":         {ann: map[string]string{tv1alpha1.AnnotationVPCService: ""}, want: summary{Hostnames: route, Routes: route, Problems: []string{tv1alpha1.AnnotationVPCService}}},
		"VPCServiceUpperCase":     {ann: map[string]string{tv1alpha1.AnnotationVPCService: "Redis"}, want: summary{Hostnames: route, Routes: route, Problems: []string{tv1alpha1.AnnotationVPCService}}},
		"VPCServiceTooLong":       {ann: map[string]string{tv1alpha1.AnnotationVPCService: strings.Repeat("a", 64)}, want: summary{Hostnames: route, Routes: route, Problems: []string{tv1alpha1.AnnotationVPCService}}},
		"VPCServiceTrailingDash":  {ann: map[string]string{tv1alpha1.AnnotationVPCService: "redis-"}, want: summary{Hostnames: route, Routes: route, Problems: []string{tv1alpha1.AnnotationVPCService}}},
		"VPCPortZero":             {ann: map[string]string{tv1alpha1.AnnotationVPCService: "svc", tv1alpha1.AnnotationVPCPort: "0"}, want: summary{Hostnames: route, Routes: route, Problems: []string{tv1alpha1.AnnotationVPCPort}}},
		"VPCPortTooBig":           {ann: map[string]string{tv1alpha1.AnnotationVPCService: "svc", tv1alpha1.AnnotationVPCPort: "65536"}, want: summary{Hostnames: route, Routes: route, Problems: []string{tv1alpha1.AnnotationVPCPort}}},
		"VPCPortNotANumber":       {ann: map[string]string{tv1alpha1.AnnotationVPCService: "svc", tv1alpha1.AnnotationVPCPort: "redis"}, want: summary{Hostnames: route, Routes: route, Problems: []string{tv1alpha1.AnnotationVPCPort}}},
		"VPCPortNegative":         {ann: map[string]string{tv1alpha1.AnnotationVPCService: "svc", tv1alpha1.AnnotationVPCPort: "-1"}, want: summary{Hostnames: route, Routes: route, Problems: []string{tv1alpha1.AnnotationVPCPort}}},
		"VPCWithoutAnyBackend":    {ann: map[string]string{tv1alpha1.AnnotationVPCService: "svc"}, want: summary{Hostnames: route, Routes: route, Problems: []string{tv1alpha1.AnnotationVPCPort}}},
		"VPCNamedPortNoService":   {ann: map[string]string{tv1alpha1.AnnotationVPCService: "svc"}, def: ptr.To(backend("gone", "http")), want: summary{Hostnames: route, Routes: route, Problems: []string{"spec.defaultBackend", tv1alpha1.AnnotationVPCService}}},
		"VPCNamedPortNotOnServic": {ann: map[string]string{tv1alpha1.AnnotationVPCService: "svc"}, def: ptr.To(backend("web", "grpc")), svcs: []*corev1.Service{service("web", map[string]int32{"http": 80})}, want: summary{Hostnames: route, Routes: route, Problems: []string{"spec.defaultBackend", tv1alpha1.AnnotationVPCService}}},
		"VPCPortOverridesBadBackend": {
			ann: map[string]string{tv1alpha1.AnnotationVPCService: "svc", tv1alpha1.AnnotationVPCPort: "5432"}, def: ptr.To(backend("gone", "http")),
			want: summary{Hostnames: route, Routes: route, Services: []string{"svc tcp:5432 gone.team-a.svc.cluster.local"}},
		},
		"PublicYes": {
			ann:  map[string]string{tv1alpha1.AnnotationPublic: "yes"},
			want: summary{Hostnames: route, Routes: route, Problems: []string{tv1alpha1.AnnotationPublic}},
		},
		"PublicEmpty": {
			ann:  map[string]string{tv1alpha1.AnnotationPublic: ""},
			want: summary{Hostnames: route, Routes: route, Problems: []string{tv1alpha1.AnnotationPublic}},
		},
		"HostnameList": {
			ann:  map[string]string{tv1alpha1.AnnotationHostname: "a.example.com,b.example.com", tv1alpha1.AnnotationVPCPort: "x"},
			want: summary{Problems: []string{tv1alpha1.AnnotationVPCPort, tv1alpha1.AnnotationHostname}},
		},
		"HostnameEmpty":      {ann: map[string]string{tv1alpha1.AnnotationHostname: ""}, want: summary{Problems: []string{tv1alpha1.AnnotationHostname}}},
		"HostnameBadChars":   {ann: map[string]string{tv1alpha1.AnnotationHostname: "app_1.example.com"}, want: summary{Problems: []string{tv1alpha1.AnnotationHostname}}},
		"HostnameUnicode":    {ann: map[string]string{tv1alpha1.AnnotationHostname: "bücher.example.com"}, want: summary{Problems: []string{tv1alpha1.AnnotationHostname}}},
		"HostnameLongLabel":  {ann: map[string]string{tv1alpha1.AnnotationHostname: strings.Repeat("a", 64) + ".com"}, want: summary{Problems: []string{tv1alpha1.AnnotationHostname}}},
		"HostnameTooLong":    {ann: map[string]string{tv1alpha1.AnnotationHostname: strings.Repeat("abc.", 64) + "com"}, want: summary{Problems: []string{tv1alpha1.AnnotationHostname}}},
		"HostnameInnerStar":  {ann: map[string]string{tv1alpha1.AnnotationHostname: "a.*.example.com"}, want: summary{Problems: []string{tv1alpha1.AnnotationHostname}}},
		"HostnameEmptyLabel": {ann: map[string]string{tv1alpha1.AnnotationHostname: "a..example.com"}, want: summary{Problems: []string{tv1alpha1.AnnotationHostname}}},
		"BadRuleHostSkipped": {
			rules: []networkingv1.IngressRule{rule("app.example.com"), rule("bad host")},
			want:  summary{Hostnames: route, Routes: route, Problems: []string{"spec.rules[1].host"}},
		},
		"ResourceBackend": {
			ann: map[string]string{tv1alpha1.AnnotationPublic: "true"},
			rules: []networkingv1.IngressRule{rule("app.example.com", prefix("/ok", "web", 80), networkingv1.HTTPIngressPath{
				Path: "/bucket", Backend: networkingv1.IngressBackend{Resource: &corev1.TypedLocalObjectReference{Kind: "StorageBucket", Name: "static"}},
			})},
			want: summary{
				Public: true, Hostnames: route, Routes: route,
				Published: []string{"app.example.com"},
				Rules:     []string{"app.example.com ^/ok(/|$) http://web.team-a.svc.cluster.local:80"},
				Problems:  []string{"spec.rules[0].http.paths[1].backend"},
			},
		},
		"PublicPathNotUTF8": {
			ann:   map[string]string{tv1alpha1.AnnotationPublic: "true"},
			rules: []networkingv1.IngressRule{rule("app.example.com", prefix("/ok", "web", 80), prefix("/\xff", "web", 80))},
			want: summary{
				Public: true, Hostnames: route, Routes: route,
				Published: []string{"app.example.com"},
				Rules:     []string{"app.example.com ^/ok(/|$) http://web.team-a.svc.cluster.local:80"},
				Problems:  []string{"spec.rules[0].http.paths[1].path"},
			},
		},
		"AccessPoliciesAndTeam": {
			ann:   map[string]string{tv1alpha1.AnnotationPublic: "true", tv1alpha1.AnnotationAccessPolicies: "staff", tv1alpha1.AnnotationAccessTeam: "acme"},
			rules: []networkingv1.IngressRule{rule("app.example.com", prefix("/", "web", 80))},
			want:  summary{Public: true, Hostnames: route, Routes: route, Problems: []string{tv1alpha1.AnnotationAccessPolicies}},
		},
		"AccessPolicyNotAName": {
			ann:   map[string]string{tv1alpha1.AnnotationPublic: "true", tv1alpha1.AnnotationAccessPolicies: "staff,Not A Name"},
			rules: []networkingv1.IngressRule{rule("app.example.com", prefix("/", "web", 80))},
			want:  summary{Public: true, Hostnames: route, Routes: route, Problems: []string{tv1alpha1.AnnotationAccessPolicies}},
		},
		"AccessPoliciesEmpty": {
			ann:   map[string]string{tv1alpha1.AnnotationPublic: "true", tv1alpha1.AnnotationAccessPolicies: " , "},
			rules: []networkingv1.IngressRule{rule("app.example.com", prefix("/", "web", 80))},
			want:  summary{Public: true, Hostnames: route, Routes: route, Problems: []string{tv1alpha1.AnnotationAccessPolicies}},
		},
		"ResourceBackendOnPrivateIngress": {
			def:  &networkingv1.IngressBackend{Resource: &corev1.TypedLocalObjectReference{Kind: "X", Name: "y"}},
			want: summary{Hostnames: route, Routes: route, Problems: []string{"spec.defaultBackend"}},
		},
		"PublicNamedPortMissing": {
			ann:   map[string]string{tv1alpha1.AnnotationPublic: "true"},
			rules: []networkingv1.IngressRule{rule("app.example.com", prefix("/a", "web", "http"), prefix("/b", "web", 80), prefix("relative", "web", 80))},
			want: summary{
				Public: true, Hostnames: route, Routes: route,
				Published: []string{"app.example.com"},
				Rules:     []string{"app.example.com ^/b(/|$) http://web.team-a.svc.cluster.local:80"},
				Problems:  []string{"spec.rules[0].http.paths[0].backend", "spec.rules[0].http.paths[2].path"},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rules := tc.rules
			if rules == nil {
				rules = []networkingv1.IngressRule{rule("app.example.com")}
			}
			in := input(ingress("app", tc.ann, tc.def, rules...), tc.svcs...)
			if tc.noIngres {
				in.Ingress = nil
			}
			got := Translate(in)
			if diff := cmp.Diff(tc.want, summarize(got)); diff != "" {
				t.Errorf("Translate(): -want +got:\n%s", diff)
			}
			for _, p := range got.Problems {
				if p.Message == "" || len(p.Message) > 400 {
					t.Errorf("problem %s: message must be present and short", p)
				}
			}
		})
	}
}

func TestTunnelConfig(t *testing.T) {
	r := func(h, p, s string) ztv1alpha1.IngressRule {
		x := ztv1alpha1.IngressRule{Service: s}
		if h != "" {
			x.Hostname = ptr.To(h)
		}
		if p != "" {
			x.Path = ptr.To(p)
		}
		return x
	}
	got := TunnelConfig(
		[]ztv1alpha1.IngressRule{r("*.example.com", "", "http://w:1"), r("b.example.com", "", "http://b:1"), r("b.example.com", "^/a(/|$)", "http://b:2")},
		nil,
		[]ztv1alpha1.IngressRule{
			r("*.a.example.com", "", "http://wa:1"),
			r("a.example.com", "^/x$", "http://a:3"),
			r("a.example.com", "^/x(/|$)", "http://a:2"),
			r("a.example.com", "^/longer(/|$)", "http://a:4"),
			r("b.example.com", "", "http://b:0"), // shadowed duplicate: lowest service kept
			r("b.example.com", "", "http://b:1"), // exact duplicate
			r("", "^/x", "http://hostless:1"),    // dropped: would swallow everything
			r("c.example.com", "", ""),           // dropped: no service
			r("", "", CatchAllService),           // dropped: TunnelConfig adds its own
		},
	)
	want := []string{
		"a.example.com ^/x$ http://a:3",
		"a.example.com ^/longer(/|$) http://a:4",
		"a.example.com ^/x(/|$) http://a:2",
		"b.example.com ^/a(/|$) http://b:2",
		"b.example.com http://b:0",
		"*.a.example.com http://wa:1",
		"*.example.com http://w:1",
		CatchAllService,
	}
	if diff := cmp.Diff(want, ruleStrings(got.Ingress)); diff != "" {
		t.Errorf("TunnelConfig(): -want +got:\n%s", diff)
	}
	if diff := cmp.Diff([]string{CatchAllService}, ruleStrings(TunnelConfig().Ingress)); diff != "" {
		t.Errorf("TunnelConfig() of nothing: -want +got:\n%s", diff)
	}
}

func TestMRName(t *testing.T) {
	long := strings.Repeat("very-long-ingress-name.", 11) // a 253-character subdomain
	cases := map[string]struct {
		ingress, kind, key string
		wantPrefix         string
	}{
		"Plain":          {"web", KindHostnameRoute, "web.example.com", "web-route-"},
		"DotsAndCase":    {"My.Web", KindDNSRecord, "*.example.com", "my-web-dns-"},
		"Truncated":      {long, KindVPCService, "svc", "very-long-ingress-name-very-long-ingress-name-ve-vpc-"},
		"Empty":          {"", "", "", ""},
		"OnlySymbols":    {"...", "!!", "é", ""},
		"UnicodeIngress": {"ünïcode", KindHostnameRoute, "x", "n-code-route-"},
	}
	seen := map[string]string{}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := MRName(tc.ingress, tc.kind, tc.key)
			if got != MRName(tc.ingress, tc.kind, tc.key) {
				t.Error("not deterministic")
			}
			if errs := validation.IsDNS1123Label(got); len(errs) > 0 {
				t.Errorf("MRName() = %q: %v", got, errs)
			}
			if !strings.HasPrefix(got, tc.wantPrefix) || len(got) != len(tc.wantPrefix)+10 {
				t.Errorf("MRName() = %q, want %q + 10 hex digits", got, tc.wantPrefix)
			}
			seen[got] = name
		})
	}
	// Different keys, or ingresses that only differ after truncation, get different names.
	if MRName(long+"a", "vpc", "k") == MRName(long+"b", "vpc", "k") || MRName("w", "dns", "a") == MRName("w", "dns", "b") {
		t.Error("MRName collides")
	}
	if got := LabelValue(long); len(validation.IsValidLabelValue(got)) > 0 || got != LabelValue(long) {
		t.Errorf("LabelValue() = %q: invalid or not deterministic", got)
	}
	if got := LabelValue("web.v2"); got != "web.v2" {
		t.Errorf("LabelValue() = %q, want valid values unchanged", got)
	}
}

// FuzzTranslate: Translate and TunnelConfig never panic, are deterministic,
// and only produce valid names, labels, hostnames and a valid config.
func FuzzTranslate(f *testing.F) {
	f.Add("edge", "redis-cache-dev", "6379", "false", "redis.ns.svc.cluster.local", "", "", "/", "", "redis", "", int32(6379), "Prefix")
	f.Add("edge", "", "", "true", "", "www.example.com", "*.example.com", "/api/", "/v1.0", "web", "http", int32(0), "Exact")
	f.Add("edge", "true", "99999", "yes", "a,b", "Bad_Host", "", "relative", "", "", "", int32(-1), "")
	f.Add(" ", "x", "", "TRUE", "ü.example.com", "", "", "", "", "svc", "", int32(80), "ImplementationSpecific")
	f.Fuzz(func(t *testing.T, tunnel, vpc, port, public, hostname, host1, host2, path1, path2, svc, portName string, portNum int32, pathType string) {
		ann := map[string]string{tv1alpha1.AnnotationTunnel: tunnel, tv1alpha1.AnnotationPublic: public}
		for k, v := range map[string]string{tv1alpha1.AnnotationVPCService: vpc, tv1alpha1.AnnotationVPCPort: port, tv1alpha1.AnnotationHostname: hostname} {
			if v != "" {
				ann[k] = v
			}
		}
		be := networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: svc, Port: networkingv1.ServiceBackendPort{Name: portName, Number: portNum}}}
		pt := networkingv1.PathType(pathType)
		ing := &networkingv1.Ingress{
			ObjectMeta: metav1.ObjectMeta{Name: svc + host1, Namespace: ns, Annotations: ann},
			Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{
				{Host: host1, IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{
					{Path: path1, PathType: &pt, Backend: be}, {Path: path2, Backend: networkingv1.IngressBackend{}},
				}}}},
				{Host: host2},
			}},
		}
		if portNum%2 == 0 {
			ing.Spec.DefaultBackend = &be
		}
		in := Input{Ingress: ing, Tunnel: expose.Tunnel{Name: "", TunnelID: tunnelID}, Services: map[string]*corev1.Service{svc: service(svc, map[string]int32{portName: portNum})}}
		got := Translate(in)
		if diff := cmp.Diff(got, Translate(in)); diff != "" {
			t.Fatalf("Translate() not deterministic:\n%s", diff)
		}
		var metas []metav1.ObjectMeta
		for _, r := range got.Routes {
			metas = append(metas, r.ObjectMeta)
			if errs := validation.IsDNS1123Subdomain(r.Spec.ForProvider.Hostname); len(errs) > 0 {
				t.Errorf("route hostname %q: %v", r.Spec.ForProvider.Hostname, errs)
			}
		}
		for _, s := range got.Services {
			metas = append(metas, s.ObjectMeta)
			if p := *s.Spec.ForProvider.TCPPort; p < 1 || p > 65535 {
				t.Errorf("VPC service port %d", p)
			}
		}
		for _, r := range got.Published {
			metas = append(metas, r.ObjectMeta)
		}
		for _, m := range metas {
			if errs := validation.IsDNS1123Label(m.Name); len(errs) > 0 {
				t.Errorf("MR name %q: %v", m.Name, errs)
			}
			for k, v := range m.Labels {
				if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
					t.Errorf("label %s=%q: %v", k, v, errs)
				}
			}
		}
		cfg := TunnelConfig(got.Rules, got.Rules)
		last := cfg.Ingress[len(cfg.Ingress)-1]
		if last.Hostname != nil || last.Path != nil || last.Service != CatchAllService {
			t.Errorf("last rule %+v is not the catch-all", last)
		}
		if len(cfg.Ingress) != len(got.Rules)+1 {
			t.Errorf("TunnelConfig() has %d rules, want the %d distinct ones and the catch-all", len(cfg.Ingress), len(got.Rules))
		}
		for _, r := range cfg.Ingress[:len(cfg.Ingress)-1] {
			if ptr.Deref(r.Hostname, "") == "" {
				t.Errorf("rule %+v without hostname before the catch-all", r)
			}
		}
	})
}

func TestBackendServices(t *testing.T) {
	backend := func(name string) networkingv1.IngressBackend {
		return networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: name, Port: networkingv1.ServiceBackendPort{Number: 80}}}
	}
	paths := func(names ...string) networkingv1.IngressRuleValue {
		var ps []networkingv1.HTTPIngressPath
		for _, n := range names {
			ps = append(ps, networkingv1.HTTPIngressPath{Backend: backend(n)})
		}
		return networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: ps}}
	}
	def := backend("default")
	cases := map[string]struct {
		spec networkingv1.IngressSpec
		want []string
	}{
		"Empty":                         {spec: networkingv1.IngressSpec{}, want: nil},
		"DefaultFirst":                  {spec: networkingv1.IngressSpec{DefaultBackend: &def, Rules: []networkingv1.IngressRule{{IngressRuleValue: paths("web")}}}, want: []string{"default", "web"}},
		"EachNameOnce":                  {spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{IngressRuleValue: paths("web", "api", "web")}, {IngressRuleValue: paths("api")}}}, want: []string{"web", "api"}},
		"RuleWithNoHTTP":                {spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{Host: "a.example.com"}}}, want: nil},
		"ResourceBackendsHaveNoService": {spec: networkingv1.IngressSpec{DefaultBackend: &networkingv1.IngressBackend{Resource: &corev1.TypedLocalObjectReference{Kind: "Bucket", Name: "b"}}}, want: nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := BackendServices(&networkingv1.Ingress{Spec: tc.spec})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("BackendServices(): -want +got:\n%s", diff)
			}
		})
	}
}

// TestManagedAccessAnnotation: access-policies gives every published
// hostname an Access application made from those policies, in order, and
// no rule is offered for the tunnel before that application's audience
// tag is known.
func TestManagedAccessAnnotation(t *testing.T) {
	ann := map[string]string{tv1alpha1.AnnotationPublic: "true", tv1alpha1.AnnotationAccessPolicies: "staff, contractors", tv1alpha1.AnnotationAccessRequired: "true"}
	got := Translate(input(ingress("app", ann, nil, rule("app.example.com", prefix("/", "web", 80)), rule("api.example.com", prefix("/", "web", 80)))))
	if len(got.Problems) > 0 {
		t.Fatalf("problems: %v", got.Problems)
	}
	want := &tv1alpha1.Access{Required: ptr.To(true), Policies: []tv1alpha1.AccessPolicyName{{Name: "staff"}, {Name: "contractors"}}}
	if len(got.Published) != 2 {
		t.Fatalf("%d PublicHostnames, want 2", len(got.Published))
	}
	for _, ph := range got.Published {
		if diff := cmp.Diff(want, ph.Spec.Access); diff != "" {
			t.Errorf("%s spec.access -want +got:\n%s", ph.Spec.Hostname, diff)
		}
	}
	if len(got.Rules) != 0 {
		t.Errorf("rules offered before the application exists: %+v", got.Rules)
	}
}

// TestAWildcardHostIsNoted: a wildcard host's private route covers every
// name under it, which a Note (a Warning event) says; a host named one by
// one is no Note.
func TestAWildcardHostIsNoted(t *testing.T) {
	wild := Translate(input(ingress("wild", nil, nil, rule("*.Example.com", prefix("", "web", 80)))))
	var got []expose.Note
	for _, n := range wild.Notes {
		if n.Reason == expose.NoteWildcardPrivateRoute {
			got = append(got, n)
		}
	}
	if len(got) != 1 || !strings.Contains(got[0].Message, `every name under "example.com"`) || got[0].Field != "spec.rules[].host" {
		t.Errorf("notes %+v, want one %s for example.com", wild.Notes, expose.NoteWildcardPrivateRoute)
	}
	byAnnotation := Translate(input(ingress("wild", map[string]string{tv1alpha1.AnnotationHostname: "*.apps.example.com"}, ptr.To(backend("web", 80)))))
	if !slices.ContainsFunc(byAnnotation.Notes, func(n expose.Note) bool {
		return n.Reason == expose.NoteWildcardPrivateRoute && n.Field == tv1alpha1.AnnotationHostname
	}) {
		t.Errorf("notes %+v, want one on the hostname annotation", byAnnotation.Notes)
	}
	named := Translate(input(ingress("named", nil, nil, rule("a.example.com", prefix("", "web", 80)))))
	for _, n := range named.Notes {
		if n.Reason == expose.NoteWildcardPrivateRoute {
			t.Errorf("a named host noted: %+v", n)
		}
	}
}
