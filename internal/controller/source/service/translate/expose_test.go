package translate

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/expose"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
)

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
