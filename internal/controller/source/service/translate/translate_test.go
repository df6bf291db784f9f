package translate

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
)

func service(annotations map[string]string, edit func(*corev1.Service)) *corev1.Service {
	s := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "redis", UID: "u1", Annotations: annotations},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.96.0.12", ClusterIPs: []string{"10.96.0.12"}},
	}
	if edit != nil {
		edit(s)
	}
	return s
}

func routed(vnet ...string) map[string]string {
	a := map[string]string{v1alpha1.AnnotationTunnel: "edge", v1alpha1.AnnotationPrivateRoute: "true"}
	if len(vnet) > 0 {
		a[v1alpha1.AnnotationVirtualNetwork] = vnet[0]
	}
	return a
}

func TestRouteObject(t *testing.T) {
	pc := &xpv2.ProviderConfigReference{Kind: "ProviderConfig", Name: "team"}
	res := PrivateRoutes(Input{Service: service(routed(), nil), ProviderConfigRef: pc})
	if len(res.Routes) != 1 {
		t.Fatalf("%d routes", len(res.Routes))
	}
	r := res.Routes[0]
	if c := r.OwnerReferences; len(c) != 1 || c[0].Kind != "Service" || c[0].UID != "u1" || c[0].Controller == nil || !*c[0].Controller {
		t.Errorf("owner references %+v, want the Service as controller", c)
	}
	wantLabels := map[string]string{publish.LabelService: "redis", publish.LabelTunnel: "edge"}
	if diff := cmp.Diff(wantLabels, r.Labels); diff != "" {
		t.Errorf("labels -want +got:\n%s", diff)
	}
	if r.Spec.ForProvider.TunnelIDRef == nil || r.Spec.ForProvider.TunnelIDRef.Name != "edge" || r.Spec.ProviderConfigReference.Name != "team" {
		t.Errorf("spec %+v", r.Spec)
	}
	if r.Spec.ProviderConfigReference == pc {
		t.Error("the provider config reference is shared with the input, not copied")
	}
	other := PrivateRoutes(Input{Service: service(routed(), func(s *corev1.Service) { s.Spec.ClusterIPs = []string{"10.96.0.13"} })}).Routes[0]
	if other.Name == r.Name {
		t.Errorf("a new cluster IP keeps the route's name %s: the old route would be moved, not replaced", r.Name)
	}
	blue := PrivateRoutes(Input{Service: service(routed("blue"), nil)}).Routes[0]
	if blue.Name == r.Name {
		t.Errorf("another virtual network keeps the route's name %s: the old route would stay in its virtual network", r.Name)
	}
}

func TestComment(t *testing.T) {
	long := service(nil, func(s *corev1.Service) { s.Name = strings.Repeat("a", 63); s.Namespace = strings.Repeat("b", 63) })
	if c := Comment(long); len(c) > 50 || !strings.HasPrefix(c, "Service ") {
		t.Errorf("Comment = %q (%d characters), want at most 50", c, len(c))
	}
	if c := Comment(service(nil, nil)); c != "Service team-a/redis" {
		t.Errorf("Comment = %q", c)
	}
}

func FuzzPrivateRoutes(f *testing.F) {
	f.Add("true", "edge", "blue", "10.96.0.12", "fd00::1", "ClusterIP", "redis")
	f.Add("yes", "", "", "None", "", "ClusterIP", "x")
	f.Add("true", "edge", "", "", "", "ExternalName", "a.b")
	f.Add("TRUE", " edge ", "Blue", "::ffff:10.0.0.1", "10.0.0.1", "NodePort", strings.Repeat("n", 63))
	f.Fuzz(func(t *testing.T, private, tunnel, vnet, ip1, ip2, typ, name string) {
		a := map[string]string{v1alpha1.AnnotationPrivateRoute: private, v1alpha1.AnnotationTunnel: tunnel}
		if vnet != "" {
			a[v1alpha1.AnnotationVirtualNetwork] = vnet
		}
		svc := service(a, func(s *corev1.Service) {
			s.Name, s.Spec.Type, s.Spec.ClusterIP, s.Spec.ClusterIPs = name, corev1.ServiceType(typ), ip1, []string{ip1, ip2}
		})
		res := PrivateRoutes(Input{Service: svc})
		if res.KeepExisting && len(res.Routes) > 0 {
			t.Fatalf("routes %d alongside a problem that keeps what exists", len(res.Routes))
		}
		if !res.Wanted && len(res.Routes) > 0 {
			t.Fatal("routes for a Service that does not ask for them")
		}
		names := map[string]bool{}
		for _, r := range res.Routes {
			p, err := netip.ParsePrefix(r.Spec.ForProvider.Network)
			if err != nil || p.Bits() != p.Addr().BitLen() {
				t.Fatalf("network %q is not a single address", r.Spec.ForProvider.Network)
			}
			if !hasIP(svc, p.Addr()) {
				t.Fatalf("network %s is none of the Service's cluster IPs %v", p, svc.Spec.ClusterIPs)
			}
			if errs := validation.IsDNS1123Label(r.Name); len(errs) > 0 || names[r.Name] {
				t.Fatalf("route name %q: %v (duplicate: %v)", r.Name, errs, names[r.Name])
			}
			names[r.Name] = true
			if len(*r.Spec.ForProvider.Comment) > 50 {
				t.Fatalf("comment %q is longer than 50", *r.Spec.ForProvider.Comment)
			}
		}
	})
}

func hasIP(svc *corev1.Service, ip netip.Addr) bool {
	for _, s := range append([]string{svc.Spec.ClusterIP}, svc.Spec.ClusterIPs...) {
		if a, err := netip.ParseAddr(s); err == nil && a.Unmap() == ip {
			return true
		}
	}
	return false
}
