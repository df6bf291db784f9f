package translate

import (
	"net/url"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
)

const traefik = gwv1.GatewayController("traefik.io/gateway-controller")

func hostnames(hs ...string) []gwv1.Hostname {
	var out []gwv1.Hostname
	for _, h := range hs {
		out = append(out, gwv1.Hostname(h))
	}
	return out
}

// fixture is a namespace "apps" with the Gateway "public" (listener "web",
// HTTP on 8000; listener "tcp"), its class of Traefik's controller, and
// Traefik's Service.
func fixture() Input {
	return Input{
		Binding: &v1alpha1.GatewayBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "public-web", UID: "uid-1"},
			Spec: v1alpha1.GatewayBindingSpec{
				TunnelRef:  v1alpha1.TunnelReference{Name: "edge"},
				GatewayRef: v1alpha1.GatewayListenerReference{Name: "public", SectionName: "web"},
				Origin:     v1alpha1.GatewayOrigin{Service: v1alpha1.GatewayServiceOrigin{Name: "traefik", Port: intstr.FromString("web")}},
			},
		},
		Gateway: &gwv1.Gateway{
			ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "public"},
			Spec: gwv1.GatewaySpec{GatewayClassName: "traefik", Listeners: []gwv1.Listener{
				{Name: "web", Port: 8000, Protocol: gwv1.HTTPProtocolType},
				{Name: "tcp", Port: 9000, Protocol: gwv1.TCPProtocolType},
			}},
		},
		Class:         &gwv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "traefik"}, Spec: gwv1.GatewayClassSpec{ControllerName: traefik}},
		OriginService: &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "traefik"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "web", Port: 80}}}},
	}
}

// accepted is a route of "apps" attached to public/web (or, with section
// "", every listener), accepted by controller for its generation.
func accepted(name string, created int, controller gwv1.GatewayController, section string, hosts ...string) gwv1.HTTPRoute {
	ref := gwv1.ParentReference{Name: "public"}
	if section != "" {
		ref.SectionName = ptr.To(gwv1.SectionName(section))
	}
	r := gwv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: name, Generation: 1, CreationTimestamp: metav1.NewTime(time.Unix(int64(created), 0))}}
	r.Spec.ParentRefs = []gwv1.ParentReference{ref}
	r.Spec.Hostnames = hostnames(hosts...)
	r.Status.Parents = []gwv1.RouteParentStatus{{ParentRef: ref, ControllerName: controller, Conditions: []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue, ObservedGeneration: 1, Reason: "Accepted"}}}}
	return r
}

// The PublicHostnames carry a copy of the binding's origin options, not
// the binding's own (which the corpus cannot tell apart).
func TestOriginOptionsAreCopied(t *testing.T) {
	in := fixture()
	in.Binding.Spec.OriginRequest = &v1alpha1.OriginOptions{OriginServerName: ptr.To("traefik.internal")}
	in.HTTPRoutes = []gwv1.HTTPRoute{accepted("shop", 1, traefik, "web", "a.example.com")}
	res := Translate(in)
	if len(res.Published) != 1 {
		t.Fatalf("published %d, want 1", len(res.Published))
	}
	if ph := res.Published[0]; ph.Spec.OriginRequest == in.Binding.Spec.OriginRequest {
		t.Error("originRequest is shared with the binding, not copied")
	}
}

// FuzzTranslate: whatever the hostnames, listener and section, the
// translation publishes only concrete, distinct hostnames the route or the
// listener named, each once, to the origin Service's URL.
func FuzzTranslate(f *testing.F) {
	f.Add("a.example.com", "*.example.com", "", "web", "web", int32(80))
	f.Add("*.example.com", "", "b.example.com", "web", "", int32(0))
	f.Add("", "app.example.com", "", "x", "web", int32(8080))
	f.Fuzz(func(t *testing.T, h1, listenerHost, h2, section, refSection string, port int32) {
		in := fixture()
		in.Binding.Spec.GatewayRef.SectionName = section
		if port > 0 {
			in.Binding.Spec.Origin.Service.Port = intstr.FromInt32(port)
			in.OriginService.Spec.Ports = []corev1.ServicePort{{Port: port}}
		}
		if listenerHost != "" {
			in.Gateway.Spec.Listeners[0].Hostname = ptr.To(gwv1.Hostname(listenerHost))
		}
		var hs []string
		for _, h := range []string{h1, h2} {
			if h != "" {
				hs = append(hs, h)
			}
		}
		in.HTTPRoutes = []gwv1.HTTPRoute{accepted("r", 1, traefik, refSection, hs...), accepted("s", 2, traefik, "", hs...)}
		res := Translate(in)
		seen := map[string]bool{}
		for _, ph := range res.Published {
			h := ph.Spec.Hostname
			if name := strings.TrimPrefix(h, "*."); strings.Contains(name, "*") || len(validation.IsDNS1123Subdomain(name)) > 0 {
				t.Fatalf("published %q: not a lower-case hostname or a leading-wildcard one", h)
			}
			if seen[h] || seen[ph.Name] {
				t.Fatalf("published %q twice", h)
			}
			seen[h], seen[ph.Name] = true, true
			named := strings.EqualFold(h, listenerHost)
			for _, x := range hs {
				named = named || strings.EqualFold(h, x)
			}
			if !named {
				t.Fatalf("published %q, which neither the routes (%q) nor the listener (%q) named", h, hs, listenerHost)
			}
			u, err := url.Parse(*ph.Spec.Origin.URL)
			if err != nil || u.Hostname() != "traefik.apps.svc.cluster.local" {
				t.Fatalf("origin %q is not the Service's", *ph.Spec.Origin.URL)
			}
		}
		if section != "web" && len(res.Published) > 0 {
			t.Fatalf("published through listener %q, which the Gateway does not have", section)
		}
	})
}
