package translate

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"

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

func grant(from, name string, mutate ...func(*gwv1beta1.ReferenceGrant)) gwv1beta1.ReferenceGrant {
	g := gwv1beta1.ReferenceGrant{Spec: gwv1beta1.ReferenceGrantSpec{
		From: []gwv1beta1.ReferenceGrantFrom{{Group: v1alpha1.Group, Kind: gwv1.Kind(v1alpha1.GatewayBindingKind), Namespace: gwv1.Namespace(from)}},
		To:   []gwv1beta1.ReferenceGrantTo{{Kind: "Service"}},
	}}
	if name != "" {
		g.Spec.To[0].Name = ptr.To(gwv1.ObjectName(name))
	}
	for _, m := range mutate {
		m(&g)
	}
	return g
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

func published(res Result) []string {
	var out []string
	for _, ph := range res.Published {
		out = append(out, ph.Spec.Hostname+" "+*ph.Spec.Origin.URL+" "+ph.Spec.DNS+" "+ph.Labels[LabelRoute])
	}
	return out
}

func TestTranslate(t *testing.T) {
	const origin = "http://traefik.apps.svc.cluster.local:80"
	cases := map[string]struct {
		edit          func(*Input)
		want          []string
		resolvedRefs  string
		acceptedCond  string
		keepExisting  bool
		keepRoutes    []string
		hostnameState map[string]string
	}{
		"AcceptedRoutesArePublished": {
			edit: func(in *Input) {
				in.HTTPRoutes = []gwv1.HTTPRoute{accepted("shop", 1, traefik, "web", "a.example.com", "b.example.com")}
			},
			want: []string{"a.example.com " + origin + " Managed shop", "b.example.com " + origin + " Managed shop"},
		},
		"AnotherControllersAcceptanceIsNotTraefiks": {
			edit: func(in *Input) {
				in.HTTPRoutes = []gwv1.HTTPRoute{accepted("shop", 1, "example.com/other", "web", "a.example.com")}
			},
			hostnameState: map[string]string{"a.example.com": HostnameNotAccepted},
		},
		"ARouteOfAnotherListenerIsIgnored": {
			edit: func(in *Input) {
				in.HTTPRoutes = []gwv1.HTTPRoute{accepted("shop", 1, traefik, "tcp", "a.example.com")}
			},
			hostnameState: map[string]string{},
		},
		"ARouteNamingAnotherPortIsIgnored": {
			edit: func(in *Input) {
				r := accepted("shop", 1, traefik, "", "a.example.com")
				r.Spec.ParentRefs[0].Port = ptr.To(gwv1.PortNumber(9000))
				r.Status.Parents[0].ParentRef = r.Spec.ParentRefs[0]
				in.HTTPRoutes = []gwv1.HTTPRoute{r}
			},
			hostnameState: map[string]string{},
		},
		"ARouteOfEveryListener": {
			edit: func(in *Input) {
				in.HTTPRoutes = []gwv1.HTTPRoute{accepted("shop", 1, traefik, "", "a.example.com")}
			},
			want: []string{"a.example.com " + origin + " Managed shop"},
		},
		"AStaleAcceptanceKeepsWhatTheRoutePublished": {
			edit: func(in *Input) {
				r := accepted("shop", 1, traefik, "web", "a.example.com")
				r.Generation = 2
				in.HTTPRoutes = []gwv1.HTTPRoute{r}
			},
			keepRoutes:    []string{"shop"},
			hostnameState: map[string]string{"a.example.com": HostnameNotAccepted},
		},
		"TheOlderRouteKeepsASharedHostname": {
			edit: func(in *Input) {
				in.HTTPRoutes = []gwv1.HTTPRoute{accepted("young", 2, traefik, "web", "a.example.com"), accepted("old", 1, traefik, "web", "a.example.com")}
			},
			want: []string{"a.example.com " + origin + " Managed old"},
		},
		"WildcardsAndGRPCRoutesAreReported": {
			edit: func(in *Input) {
				in.HTTPRoutes = []gwv1.HTTPRoute{accepted("wild", 1, traefik, "web", "*.example.com")}
				in.GRPCRoutes = []gwv1.GRPCRoute{{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "rpc"}, Spec: gwv1.GRPCRouteSpec{CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: []gwv1.ParentReference{{Name: "public"}}}, Hostnames: hostnames("rpc.example.com")}}}
			},
			hostnameState: map[string]string{"*.example.com": v1alpha1.HostnameNotSupported, "rpc.example.com": v1alpha1.HostnameNotSupported},
		},
		"DNSModeNone": {
			edit: func(in *Input) {
				in.Binding.Spec.DNS.Mode = v1alpha1.DNSModeNone
				in.HTTPRoutes = []gwv1.HTTPRoute{accepted("shop", 1, traefik, "web", "a.example.com")}
			},
			want: []string{"a.example.com " + origin + " None shop"},
		},
		"APortByNumberAndHTTPS": {
			edit: func(in *Input) {
				in.Binding.Spec.Origin.Service.Port = intstr.FromInt32(80)
				in.Binding.Spec.Origin.Service.Protocol = "https"
				in.HTTPRoutes = []gwv1.HTTPRoute{accepted("shop", 1, traefik, "web", "a.example.com")}
			},
			want: []string{"a.example.com https://traefik.apps.svc.cluster.local:80 Managed shop"},
		},
		"NoGateway":        {edit: func(in *Input) { in.Gateway = nil }, resolvedRefs: ReasonGatewayNotFound, keepExisting: true},
		"NoClass":          {edit: func(in *Input) { in.Class = nil }, resolvedRefs: ReasonGatewayClassNotFound, keepExisting: true},
		"NoListener":       {edit: func(in *Input) { in.Binding.Spec.GatewayRef.SectionName = "wbe" }, resolvedRefs: ReasonListenerNotFound, keepExisting: true},
		"ATCPListener":     {edit: func(in *Input) { in.Binding.Spec.GatewayRef.SectionName = "tcp" }, acceptedCond: ReasonUnsupportedProtocol, keepExisting: true},
		"NoService":        {edit: func(in *Input) { in.OriginService = nil }, resolvedRefs: ReasonBackendNotFound, keepExisting: true},
		"NoSuchPortName":   {edit: func(in *Input) { in.Binding.Spec.Origin.Service.Port = intstr.FromString("websecure") }, resolvedRefs: ReasonBackendNotFound, keepExisting: true},
		"NoSuchPortNumber": {edit: func(in *Input) { in.Binding.Spec.Origin.Service.Port = intstr.FromInt32(443) }, resolvedRefs: ReasonBackendNotFound, keepExisting: true},
		// A revoked grant unpublishes: it is not a typo.
		"AnotherNamespaceWithoutAGrant": {
			edit: func(in *Input) {
				in.Binding.Spec.Origin.Service.Namespace = "traefik"
				in.HTTPRoutes = []gwv1.HTTPRoute{accepted("shop", 1, traefik, "web", "a.example.com")}
			},
			resolvedRefs: ReasonRefNotPermitted,
		},
		"AnotherNamespaceWithAGrant": {
			edit: func(in *Input) {
				in.Binding.Spec.Origin.Service.Namespace = "traefik"
				in.Grants = []gwv1beta1.ReferenceGrant{grant("apps", "traefik")}
				in.HTTPRoutes = []gwv1.HTTPRoute{accepted("shop", 1, traefik, "web", "a.example.com")}
			},
			want: []string{"a.example.com http://traefik.traefik.svc.cluster.local:80 Managed shop"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := fixture()
			tc.edit(&in)
			res := Translate(in)
			if diff := cmp.Diff(tc.want, published(res)); diff != "" {
				t.Errorf("published (-want +got):\n%s", diff)
			}
			if got := res.ResolvedRefs; (tc.resolvedRefs == "") != got.OK || (tc.resolvedRefs != "" && got.Reason != tc.resolvedRefs) {
				t.Errorf("ResolvedRefs = %+v, want reason %q", got, tc.resolvedRefs)
			}
			if got := res.Accepted; (tc.acceptedCond == "") != got.OK || (tc.acceptedCond != "" && got.Reason != tc.acceptedCond) {
				t.Errorf("Accepted = %+v, want reason %q", got, tc.acceptedCond)
			}
			if res.KeepExisting != tc.keepExisting {
				t.Errorf("KeepExisting = %v, want %v", res.KeepExisting, tc.keepExisting)
			}
			if diff := cmp.Diff(tc.keepRoutes, res.KeepRoutes); diff != "" {
				t.Errorf("KeepRoutes (-want +got):\n%s", diff)
			}
			if tc.hostnameState != nil {
				got := map[string]string{}
				for _, h := range res.Hostnames {
					got[h.Hostname] = h.State
				}
				if diff := cmp.Diff(tc.hostnameState, got); diff != "" {
					t.Errorf("hostname states (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// The PublicHostnames name the binding as controller, carry its labels and
// copy its origin options.
func TestPublicHostnameShape(t *testing.T) {
	in := fixture()
	in.Binding.Spec.OriginRequest = &v1alpha1.OriginOptions{OriginServerName: ptr.To("traefik.internal")}
	in.HTTPRoutes = []gwv1.HTTPRoute{accepted("shop", 1, traefik, "web", "a.example.com")}
	res := Translate(in)
	if len(res.Published) != 1 {
		t.Fatalf("published %d, want 1", len(res.Published))
	}
	ph := res.Published[0]
	if c := metav1.GetControllerOf(ph); c == nil || c.UID != "uid-1" || c.Kind != v1alpha1.GatewayBindingKind {
		t.Errorf("controller = %+v, want the binding", c)
	}
	want := map[string]string{LabelBinding: "public-web", LabelRoute: "shop", "tunnels.cloudflare.com/tunnel": "edge"}
	if diff := cmp.Diff(want, ph.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(in.Binding.Spec.OriginRequest, ph.Spec.OriginRequest); diff != "" {
		t.Errorf("originRequest (-want +got):\n%s", diff)
	}
	if ph.Spec.OriginRequest == in.Binding.Spec.OriginRequest {
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
			if strings.Contains(h, "*") || len(validation.IsDNS1123Subdomain(h)) > 0 {
				t.Fatalf("published %q: not a concrete lower-case hostname", h)
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
