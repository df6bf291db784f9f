package translate

import (
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/expose"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
)

// exposed is what an exposure says, in short.
type exposed struct {
	Wanted    bool
	Routes    []string
	VPC       []string // name host:port
	Published []string // hostname -> origin
	DNS       []string
	Problems  []string // fields
}

func summarizeExposure(r Exposure) exposed {
	o := exposed{Wanted: r.Wanted}
	for _, rt := range r.Routes {
		o.Routes = append(o.Routes, rt.Spec.ForProvider.Hostname)
	}
	for _, s := range r.Services {
		o.VPC = append(o.VPC, s.Spec.ForProvider.Name+" "+ptr.Deref(s.Spec.ForProvider.Host.Hostname, "")+":"+itoa(ptr.Deref(s.Spec.ForProvider.TCPPort, 0)))
	}
	for _, ph := range r.Published {
		o.Published = append(o.Published, ph.Spec.Hostname)
		o.DNS = append(o.DNS, string(ph.Spec.DNS))
	}
	for _, rule := range r.Rules {
		o.Published = append(o.Published, ptr.Deref(rule.Hostname, "")+" -> "+rule.Service)
	}
	for _, p := range r.Problems {
		o.Problems = append(o.Problems, p.Field)
	}
	return o
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func ports(ps ...corev1.ServicePort) func(*corev1.Service) {
	return func(s *corev1.Service) { s.Spec.Ports = ps }
}

func port(name string, n int32, app ...string) corev1.ServicePort {
	p := corev1.ServicePort{Name: name, Port: n}
	if len(app) > 0 {
		p.AppProtocol = ptr.To(app[0])
	}
	return p
}

func on(extra map[string]string) map[string]string {
	a := map[string]string{v1alpha1.AnnotationTunnel: "edge"}
	for k, v := range extra {
		a[k] = v
	}
	return a
}

func TestExpose(t *testing.T) {
	const local = "redis.team-a.svc.cluster.local"
	redis := ports(port("redis", 6379))
	cases := map[string]struct {
		svc  *corev1.Service
		want exposed
	}{
		"NoTunnel": {
			svc:  service(map[string]string{v1alpha1.AnnotationHostname: "x.example.com"}, redis),
			want: exposed{},
		},
		"PrivateRouteAloneKeepsItsIPOnlyMeaning": {
			svc:  service(routed(), redis),
			want: exposed{},
		},
		"PrivateRouteWithAHostnameRoutesBoth": {
			svc:  service(func() map[string]string { a := routed(); a[v1alpha1.AnnotationHostname] = "redis.internal"; return a }(), redis),
			want: exposed{Wanted: true, Routes: []string{"redis.internal"}},
		},
		"DefaultPrivateHostnameIsTheClusterName": {
			svc:  service(on(nil), redis),
			want: exposed{Wanted: true, Routes: []string{local}},
		},
		"ManyPortsNeedNoPortForARouteAlone": {
			svc:  service(on(nil), ports(port("a", 1), port("b", 2))),
			want: exposed{Wanted: true, Routes: []string{local}},
		},
		"TheDesignsRedisWithoutAnIngress": {
			svc:  service(on(map[string]string{v1alpha1.AnnotationVPCService: "redis-cache"}), redis),
			want: exposed{Wanted: true, Routes: []string{local}, VPC: []string{"redis-cache " + local + ":6379"}},
		},
		"VPCServiceNeedsAPortOfManyAndAsks": {
			svc:  service(on(map[string]string{v1alpha1.AnnotationVPCService: "redis-cache"}), ports(port("redis", 6379), port("metrics", 9121))),
			want: exposed{Wanted: true, Routes: []string{local}, Problems: []string{v1alpha1.AnnotationPort}},
		},
		"VPCPortAnnotationIsEnoughAmongMany": {
			svc:  service(on(map[string]string{v1alpha1.AnnotationVPCService: "redis-cache", v1alpha1.AnnotationVPCPort: "6379"}), ports(port("redis", 6379), port("metrics", 9121))),
			want: exposed{Wanted: true, Routes: []string{local}, VPC: []string{"redis-cache " + local + ":6379"}},
		},
		"PortByName": {
			svc:  service(on(map[string]string{v1alpha1.AnnotationVPCService: "redis-cache", v1alpha1.AnnotationPort: "redis"}), ports(port("metrics", 9121), port("redis", 6379))),
			want: exposed{Wanted: true, Routes: []string{local}, VPC: []string{"redis-cache " + local + ":6379"}},
		},
		"PortByNumber": {
			svc:  service(on(map[string]string{v1alpha1.AnnotationVPCService: "redis-cache", v1alpha1.AnnotationPort: "9121"}), ports(port("metrics", 9121), port("redis", 6379))),
			want: exposed{Wanted: true, Routes: []string{local}, VPC: []string{"redis-cache " + local + ":9121"}},
		},
		"PortThatIsNotTheServices": {
			svc:  service(on(map[string]string{v1alpha1.AnnotationVPCService: "redis-cache", v1alpha1.AnnotationPort: "6380"}), redis),
			want: exposed{Wanted: true, Routes: []string{local}, Problems: []string{v1alpha1.AnnotationPort}},
		},
		"ServiceWithoutPortsCannotBePublished": {
			svc:  service(on(map[string]string{v1alpha1.AnnotationHostname: "db.example.com", v1alpha1.AnnotationPublic: "true"}), nil),
			want: exposed{Wanted: true, Routes: []string{"db.example.com"}, Problems: []string{v1alpha1.AnnotationPort}},
		},
		"PublicNeedsTheHostnameAnnotation": {
			svc:  service(on(map[string]string{v1alpha1.AnnotationPublic: "true"}), redis),
			want: exposed{Wanted: true, Routes: []string{local}, Problems: []string{v1alpha1.AnnotationPublic}},
		},
		"PublicTCPByAnnotation": {
			svc: service(on(map[string]string{v1alpha1.AnnotationHostname: "db.example.com", v1alpha1.AnnotationPublic: "true", v1alpha1.AnnotationProtocol: "TCP"}), ports(port("postgres", 5432))),
			want: exposed{Wanted: true, Routes: []string{"db.example.com"}, DNS: []string{string(v1alpha1.DNSManaged)},
				Published: []string{"db.example.com", "db.example.com -> tcp://redis.team-a.svc.cluster.local:5432"}},
		},
		"PublicHTTPSByAppProtocol": {
			svc: service(on(map[string]string{v1alpha1.AnnotationHostname: "www.example.com", v1alpha1.AnnotationPublic: "true"}), ports(port("web", 8443, "HTTPS"))),
			want: exposed{Wanted: true, Routes: []string{"www.example.com"}, DNS: []string{string(v1alpha1.DNSManaged)},
				Published: []string{"www.example.com", "www.example.com -> https://redis.team-a.svc.cluster.local:8443"}},
		},
		"PublicSSHByPortName": {
			svc: service(on(map[string]string{v1alpha1.AnnotationHostname: "ssh.example.com", v1alpha1.AnnotationPublic: "true"}), ports(port("ssh-admin", 22))),
			want: exposed{Wanted: true, Routes: []string{"ssh.example.com"}, DNS: []string{string(v1alpha1.DNSManaged)},
				Published: []string{"ssh.example.com", "ssh.example.com -> ssh://redis.team-a.svc.cluster.local:22"}},
		},
		"PublicHTTPByDefault": {
			svc: service(on(map[string]string{v1alpha1.AnnotationHostname: "app.example.com", v1alpha1.AnnotationPublic: "true", v1alpha1.AnnotationDNS: "None"}), ports(port("", 8080))),
			want: exposed{Wanted: true, Routes: []string{"app.example.com"}, DNS: []string{string(v1alpha1.DNSNone)},
				Published: []string{"app.example.com", "app.example.com -> http://redis.team-a.svc.cluster.local:8080"}},
		},
		"BadProtocolPublishesNothing": {
			svc:  service(on(map[string]string{v1alpha1.AnnotationHostname: "db.example.com", v1alpha1.AnnotationPublic: "true", v1alpha1.AnnotationProtocol: "postgres"}), ports(port("postgres", 5432))),
			want: exposed{Wanted: true, Routes: []string{"db.example.com"}, Problems: []string{v1alpha1.AnnotationProtocol}},
		},
		"ExternalDNSIsForIngresses": {
			svc:  service(on(map[string]string{v1alpha1.AnnotationHostname: "db.example.com", v1alpha1.AnnotationPublic: "true", v1alpha1.AnnotationDNS: "ExternalDNS"}), redis),
			want: exposed{Wanted: true, Routes: []string{"db.example.com"}, Problems: []string{v1alpha1.AnnotationDNS}},
		},
		// Issue 34, bug 6: a Worker's traffic leaves the tunnel at cloudflared,
		// inside the cluster, where the public name resolves to Cloudflare's
		// edge: a public Service's VPC service reaches its cluster name.
		"PublicServicesVPCServiceReachesTheClusterName": {
			svc: service(on(map[string]string{v1alpha1.AnnotationHostname: "x.example.com", v1alpha1.AnnotationPublic: "true", v1alpha1.AnnotationVPCService: "x"}), redis),
			want: exposed{Wanted: true, Routes: []string{"x.example.com"}, VPC: []string{"x " + local + ":6379"}, DNS: []string{string(v1alpha1.DNSManaged)},
				Published: []string{"x.example.com", "x.example.com -> http://" + local + ":6379"}},
		},
		"PublicServiceWithheldByAProblemStillReachesTheClusterName": {
			svc:  service(on(map[string]string{v1alpha1.AnnotationHostname: "x.example.com", v1alpha1.AnnotationPublic: "true", v1alpha1.AnnotationVPCService: "x", v1alpha1.AnnotationProtocol: "postgres"}), redis),
			want: exposed{Wanted: true, Routes: []string{"x.example.com"}, VPC: []string{"x " + local + ":6379"}, Problems: []string{v1alpha1.AnnotationProtocol}},
		},
		"PrivateServicesVPCServiceReachesItsHostname": {
			svc:  service(on(map[string]string{v1alpha1.AnnotationHostname: "cache.internal", v1alpha1.AnnotationVPCService: "x"}), redis),
			want: exposed{Wanted: true, Routes: []string{"cache.internal"}, VPC: []string{"x cache.internal:6379"}},
		},
		"TheIngressTranslatorsAnswersToBadInput": {
			svc:  service(on(map[string]string{v1alpha1.AnnotationHostname: "a.example.com,b.example.com", v1alpha1.AnnotationVPCService: "true"}), redis),
			want: exposed{Wanted: true, Problems: []string{v1alpha1.AnnotationVPCService, v1alpha1.AnnotationHostname}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := summarizeExposure(Expose(ExposeInput{Service: tc.svc, Tunnel: expose.Tunnel{Name: "edge"}}))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Expose(): -want, +got:\n%s", diff)
			}
		})
	}
}

// Objects made for a Service are its own: owned by it, labelled with it,
// and named apart from those of an Ingress of the same name.
func TestExposedObjectsBelongToTheService(t *testing.T) {
	ann := on(map[string]string{v1alpha1.AnnotationVPCService: "cache", v1alpha1.AnnotationHostname: "redis.example.com", v1alpha1.AnnotationPublic: "true"})
	svc := service(ann, ports(port("redis", 6379)))
	res := Expose(ExposeInput{Service: svc, Tunnel: expose.Tunnel{Name: "edge"}})
	if len(res.Problems) > 0 {
		t.Fatalf("Expose(): problems %v", res.Problems)
	}
	// An Ingress of the same name, annotations and backend, as the core
	// sees it.
	ing := expose.Translate(expose.Input{
		Namespace: svc.Namespace, Annotations: ann,
		Owner:   expose.Owner{APIVersion: "networking.k8s.io/v1", Kind: "Ingress", Name: svc.Name, UID: "u2", Label: publish.LabelIngress},
		Tunnel:  expose.Tunnel{Name: "edge"},
		Routing: expose.Routing{Default: &expose.Backend{Field: "spec.defaultBackend", Service: &expose.ServicePort{Name: "redis", Number: 6379}}},
	})
	ingressNames := map[string]bool{}
	for _, o := range objects(ing) {
		ingressNames[o.GetName()] = true
	}
	got := objects(res.Result)
	if len(got) != 3 {
		t.Fatalf("want a route, a VPC service and a public hostname, got %d objects", len(got))
	}
	for _, o := range got {
		if ingressNames[o.GetName()] {
			t.Errorf("%s is the name of an object of the Ingress called redis too", o.GetName())
		}
		c := metav1.GetControllerOf(o)
		if c == nil || c.Kind != "Service" || c.APIVersion != "v1" || c.Name != "redis" || c.UID != "u1" {
			t.Errorf("%s: controller %+v, want the Service redis (u1)", o.GetName(), c)
		}
		want := map[string]string{publish.LabelService: "redis", publish.LabelTunnel: "edge"}
		if diff := cmp.Diff(want, o.GetLabels()); diff != "" {
			t.Errorf("%s labels: -want, +got:\n%s", o.GetName(), diff)
		}
	}
}

func objects(r expose.Result) []metav1.Object {
	var out []metav1.Object
	for _, o := range r.Routes {
		out = append(out, o)
	}
	for _, o := range r.Services {
		out = append(out, o)
	}
	for _, o := range r.Published {
		out = append(out, o)
	}
	return out
}
