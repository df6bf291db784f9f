package service_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/composite/cloudflaretunnel"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/providertest"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

var p *providertest.Provider

func TestMain(m *testing.M) { os.Exit(providertest.Run(m, &p)) }

// setup makes a namespace with a running CloudflareTunnel "edge".
func setup(t *testing.T) (ns, tunnelID string) {
	t.Helper()
	ns = p.Namespace(t)
	cr := &v1alpha1.CloudflareTunnel{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "edge"},
		Spec:       v1alpha1.CloudflareTunnelSpec{TunnelName: ptr.To("edge-" + ns), Replicas: ptr.To[int32](1)},
	}
	p.CreateTunnel(t, cr)
	return ns, cr.Status.TunnelID
}

func routed(extra ...string) map[string]string {
	a := map[string]string{v1alpha1.AnnotationTunnel: "edge", v1alpha1.AnnotationPrivateRoute: "true"}
	for i := 0; i+1 < len(extra); i += 2 {
		a[extra[i]] = extra[i+1]
	}
	return a
}

func newService(ns, name, clusterIP string, ann map[string]string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: ann},
		Spec:       corev1.ServiceSpec{ClusterIP: clusterIP, Ports: []corev1.ServicePort{{Name: "redis", Port: 6379}}},
	}
}

// cfRoutes are the live Cloudflare routes for one address.
func cfRoutes(t *testing.T, ip string) []cloudflare.CIDRRoute {
	t.Helper()
	n := ip + "/32"
	if strings.Contains(ip, ":") {
		n = ip + "/128"
	}
	rs, err := p.Cloudflare.ListCIDRRoutes(context.Background(), cloudflare.CIDRRouteFilter{NetworkSubset: n, NetworkSuperset: n})
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func routesOf(t *testing.T, ns, svc string) []ztv1alpha1.NetworkRoute {
	t.Helper()
	l := &ztv1alpha1.NetworkRouteList{}
	if err := p.Client.List(context.Background(), l, client.InNamespace(ns), client.MatchingLabels{publish.LabelService: svc}); err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// waitRouted waits until the Service's address is routed through tunnelID,
// by exactly one route, and returns that route's ID.
func waitRouted(t *testing.T, ip, tunnelID string) string {
	t.Helper()
	var id string
	wait.Eventually(t, wait.Patience, ip+" routed through the tunnel", func() error {
		rs := cfRoutes(t, ip)
		if len(rs) != 1 || rs[0].TunnelID != tunnelID {
			return fmt.Errorf("%d routes for %s: %+v", len(rs), ip, rs)
		}
		id = rs[0].ID
		return nil
	})
	return id
}

func waitUnrouted(t *testing.T, ns, svc, ip string) {
	t.Helper()
	wait.Eventually(t, wait.Patience, ip+" no longer routed", func() error {
		if rs := cfRoutes(t, ip); len(rs) != 0 {
			return fmt.Errorf("%d routes for %s", len(rs), ip)
		}
		if ms := routesOf(t, ns, svc); len(ms) != 0 {
			return fmt.Errorf("%d NetworkRoutes left", len(ms))
		}
		return nil
	})
}

func waitEvent(t *testing.T, ns, name, reason, contains string) {
	t.Helper()
	p.WaitWarning(t, ns, name, reason, contains)
}

func edit(t *testing.T, svc *corev1.Service, fn func(*corev1.Service)) {
	t.Helper()
	wait.Eventually(t, wait.Patience, "Service update", func() error {
		if err := p.Get(svc); err != nil {
			return err
		}
		fn(svc)
		return p.Client.Update(context.Background(), svc)
	})
}

func TestServiceClusterIPIsRoutedPrivately(t *testing.T) {
	ns, tunnelID := setup(t)
	svc := newService(ns, "redis", "", routed())
	p.Create(t, svc)
	ip := svc.Spec.ClusterIP
	if ip == "" {
		t.Fatal("the API server allocated no cluster IP")
	}
	id := waitRouted(t, ip, tunnelID)
	ms := routesOf(t, ns, "redis")
	if len(ms) != 1 || ms[0].Spec.ForProvider.Network != ip+"/32" {
		t.Fatalf("NetworkRoutes %+v, want one for %s/32", ms, ip)
	}
	p.WaitReady(t, &ms[0])

	t.Run("ATunnelTypoKeepsTheRoute", func(t *testing.T) {
		edit(t, svc, func(s *corev1.Service) { s.Annotations[v1alpha1.AnnotationTunnel] = "edgee" })
		waitEvent(t, ns, "redis", "TunnelNotFound", "edgee")
		p.WaitServed(t, 3, "GET", "/teamnet/routes$") // the routes observed three more times
		if rs := cfRoutes(t, ip); len(rs) != 1 || rs[0].ID != id {
			t.Errorf("a typo changed the route: %+v", rs)
		}
		edit(t, svc, func(s *corev1.Service) { s.Annotations[v1alpha1.AnnotationTunnel] = "edge" })
	})

	t.Run("AnInvalidAnnotationKeepsTheRoute", func(t *testing.T) {
		edit(t, svc, func(s *corev1.Service) { s.Annotations[v1alpha1.AnnotationPrivateRoute] = "yes please" })
		waitEvent(t, ns, "redis", "InvalidAnnotation", "yes please")
		p.WaitServed(t, 3, "GET", "/teamnet/routes$") // the routes observed three more times
		if rs := cfRoutes(t, ip); len(rs) != 1 || rs[0].ID != id {
			t.Errorf("an invalid annotation changed the route: %+v", rs)
		}
	})

	t.Run("TheTunnelWaitsForTheService", func(t *testing.T) {
		cft := &v1alpha1.CloudflareTunnel{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "edge"}}
		if err := p.Client.Delete(context.Background(), cft); err != nil {
			t.Fatal(err)
		}
		wait.Eventually(t, wait.Patience, "TunnelInUse naming the Service", func() error {
			if err := p.Get(cft); err != nil {
				return err
			}
			c := cft.GetCondition(xpv2.TypeReady)
			if c.Reason != cloudflaretunnel.ReasonTunnelInUse || !strings.Contains(c.Message, "Service redis") {
				return fmt.Errorf("Ready %s: %s", c.Reason, c.Message)
			}
			return nil
		})
		if rs := cfRoutes(t, ip); len(rs) != 1 {
			t.Errorf("the route went while its tunnel waited: %+v", rs)
		}
	})

	t.Run("RemovingTheAnnotationRemovesTheRoute", func(t *testing.T) {
		edit(t, svc, func(s *corev1.Service) { delete(s.Annotations, v1alpha1.AnnotationPrivateRoute) })
		waitUnrouted(t, ns, "redis", ip)
		wait.Eventually(t, wait.Patience, "the tunnel deleted once its last user went", func() error {
			if err := p.Get(&v1alpha1.CloudflareTunnel{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "edge"}}); err == nil {
				return fmt.Errorf("still there")
			}
			return nil
		})
	})
}

func TestDeletingTheServiceRemovesTheRoute(t *testing.T) {
	ns, tunnelID := setup(t)
	svc := newService(ns, "db", "", routed())
	p.Create(t, svc)
	ip := svc.Spec.ClusterIP
	waitRouted(t, ip, tunnelID)
	p.DeleteAndWait(t, svc)
	waitUnrouted(t, ns, "db", ip)
}

// A Service recreated under the same name gets a new cluster IP: the route
// follows it, the old address's route goes, and never are both left.
func TestARecreatedServiceMovesItsRoute(t *testing.T) {
	ns, tunnelID := setup(t)
	svc := newService(ns, "cache", "", routed())
	p.Create(t, svc)
	oldIP := svc.Spec.ClusterIP
	waitRouted(t, oldIP, tunnelID)
	if err := p.Client.Delete(context.Background(), svc); err != nil {
		t.Fatal(err)
	}
	// The API server allocates at random: recreate until the address
	// differs (a same-address recreate keeps its route, taken over).
	var again *corev1.Service
	for again == nil || again.Spec.ClusterIP == oldIP {
		if again != nil {
			p.DeleteAndWait(t, again)
		}
		again = newService(ns, "cache", "", routed())
		p.Create(t, again)
	}
	newIP := again.Spec.ClusterIP
	waitRouted(t, newIP, tunnelID)
	waitUnroutedAddress(t, oldIP)
	wait.Eventually(t, wait.Patience, "one NetworkRoute, controlled by the new Service", func() error {
		ms := routesOf(t, ns, "cache")
		if len(ms) != 1 || ms[0].Spec.ForProvider.Network != newIP+"/32" || metav1.GetControllerOf(&ms[0]).UID != again.UID {
			return fmt.Errorf("%d NetworkRoutes: %+v", len(ms), ms)
		}
		return nil
	})
}

func waitUnroutedAddress(t *testing.T, ip string) {
	t.Helper()
	wait.Eventually(t, wait.Patience, ip+" no longer routed", func() error {
		if rs := cfRoutes(t, ip); len(rs) != 0 {
			return fmt.Errorf("%d routes for %s", len(rs), ip)
		}
		return nil
	})
}

func TestServicesWithoutAClusterIPAreRefused(t *testing.T) {
	ns, _ := setup(t)
	headless := newService(ns, "pods", corev1.ClusterIPNone, routed())
	p.Create(t, headless)
	external := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "elsewhere", Annotations: routed()},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "db.example.com"},
	}
	p.Create(t, external)
	waitEvent(t, ns, "pods", "NoClusterIP", "headless")
	// The refusals are the evidence that their reconciles ran: a route, if
	// one were made, would be made by the same reconcile.
	waitEvent(t, ns, "elsewhere", "NoClusterIP", "ExternalName")
	if n := len(routesOf(t, ns, "pods")) + len(routesOf(t, ns, "elsewhere")); n != 0 {
		t.Errorf("%d NetworkRoutes for Services without a cluster IP", n)
	}
}

func TestAServiceRoutedInAVirtualNetwork(t *testing.T) {
	ns, tunnelID := setup(t)
	vn := &ztv1alpha1.VirtualNetwork{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "blue"},
		Spec:       ztv1alpha1.VirtualNetworkSpec{ForProvider: ztv1alpha1.VirtualNetworkParameters{Name: "blue-" + ns}},
	}
	p.Create(t, vn)
	p.WaitReady(t, vn)
	svc := newService(ns, "api", "", routed(v1alpha1.AnnotationVirtualNetwork, "blue"))
	p.Create(t, svc)
	wait.Eventually(t, wait.Patience, "route in the virtual network", func() error {
		rs, err := p.Cloudflare.ListCIDRRoutes(context.Background(), cloudflare.CIDRRouteFilter{VirtualNetworkID: meta.GetExternalName(vn), TunnelID: tunnelID})
		if err != nil {
			return err
		}
		if len(rs) != 1 || rs[0].Network != svc.Spec.ClusterIP+"/32" {
			return fmt.Errorf("routes in the virtual network: %+v", rs)
		}
		return nil
	})
	// Back to the account's default virtual network: a new route there, and
	// the one in "blue" goes (so "blue" can be deleted).
	edit(t, svc, func(s *corev1.Service) { delete(s.Annotations, v1alpha1.AnnotationVirtualNetwork) })
	wait.Eventually(t, wait.Patience, "the route moved to the default virtual network", func() error {
		rs := cfRoutes(t, svc.Spec.ClusterIP)
		if len(rs) != 1 || rs[0].VirtualNetworkID == meta.GetExternalName(vn) {
			return fmt.Errorf("routes for %s: %+v", svc.Spec.ClusterIP, rs)
		}
		if ms := routesOf(t, ns, "api"); len(ms) != 1 {
			return fmt.Errorf("%d NetworkRoutes", len(ms))
		}
		return nil
	})
	p.DeleteAndWait(t, vn)
	p.DeleteAndWait(t, svc)
	waitUnrouted(t, ns, "api", svc.Spec.ClusterIP)
}
