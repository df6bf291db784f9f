package ingress_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/providertest"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

var p *providertest.Provider

func TestMain(m *testing.M) { os.Exit(providertest.Run(m, &p)) }

// setup makes a namespace with a running CloudflareTunnel and a few Services.
func setup(t *testing.T) (ns, tunnelID string) {
	t.Helper()
	ns = p.Namespace(t)
	cr := &v1alpha1.CloudflareTunnel{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "edge"},
		Spec:       v1alpha1.CloudflareTunnelSpec{TunnelName: ptr.To("edge-" + ns), Replicas: ptr.To[int32](1)},
	}
	p.CreateTunnel(t, cr)
	for _, s := range []struct {
		name string
		port int32
		pn   string
	}{{"redis", 6379, "redis"}, {"web", 80, "http"}, {"api", 8080, "http"}} {
		p.Create(t, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: s.name},
			Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: s.pn, Port: s.port, TargetPort: intstr.FromInt32(s.port)}}},
		})
	}
	return ns, cr.Status.TunnelID
}

func backend(svc string, port int32) networkingv1.IngressBackend {
	return networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: svc, Port: networkingv1.ServiceBackendPort{Number: port}}}
}

func ingress(ns, name string, ann map[string]string, hosts ...string) *networkingv1.Ingress {
	ing := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: ann},
		Spec:       networkingv1.IngressSpec{IngressClassName: ptr.To("cloudflare")},
	}
	if len(hosts) == 0 {
		b := backend("redis", 6379)
		ing.Spec.DefaultBackend = &b
	}
	for _, h := range hosts {
		ing.Spec.Rules = append(ing.Spec.Rules, networkingv1.IngressRule{Host: h, IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
			Paths: []networkingv1.HTTPIngressPath{
				{Path: "/api", PathType: ptr.To(networkingv1.PathTypePrefix), Backend: backend("api", 8080)},
				{Path: "/", PathType: ptr.To(networkingv1.PathTypePrefix), Backend: backend("web", 80)},
			},
		}}})
	}
	return ing
}

func routesFor(t *testing.T, host string) []cloudflare.HostnameRoute {
	t.Helper()
	return p.HostnameRoutes(t, host)
}

func servicesNamed(t *testing.T, name string) []cloudflare.Service {
	t.Helper()
	return p.VPCServices(t, name)
}

func recordsNamed(t *testing.T, name string) []cloudflare.DNSRecord {
	t.Helper()
	return p.Records(t, name)
}

func tunnelConfig(t *testing.T, id string) string {
	t.Helper()
	return p.TunnelConfig(t, id)
}

func waitEvent(t *testing.T, ns, name, reason, contains string) {
	t.Helper()
	p.WaitWarning(t, ns, name, reason, contains)
}

func deleteIngress(t *testing.T, ing *networkingv1.Ingress) {
	t.Helper()
	p.DeleteAndWait(t, ing)
}

func TestPrivateRedisExample(t *testing.T) {
	ns, tunnelID := setup(t)
	host := "redis-cache-azure-dev." + ns + ".svc.cluster.local"
	ing := ingress(ns, "redis", map[string]string{
		v1alpha1.AnnotationTunnel:     "edge",
		v1alpha1.AnnotationVPCService: "redis-cache-dev-" + ns,
		v1alpha1.AnnotationVPCPort:    "6379",
		v1alpha1.AnnotationPublic:     "false",
		v1alpha1.AnnotationHostname:   host,
	})
	p.Create(t, ing)
	wait.Eventually(t, wait.Patience, "route and VPC service in Cloudflare", func() error {
		rs, ss := routesFor(t, host), servicesNamed(t, "redis-cache-dev-"+ns)
		if len(rs) != 1 || len(ss) != 1 {
			return fmt.Errorf("%d routes, %d services", len(rs), len(ss))
		}
		if rs[0].TunnelID != tunnelID {
			return fmt.Errorf("route to %s, want %s", rs[0].TunnelID, tunnelID)
		}
		s := ss[0]
		if s.Type != "tcp" || s.TCPPort == nil || *s.TCPPort != 6379 || s.Host.Hostname != host || s.Host.ResolverNetwork == nil || s.Host.ResolverNetwork.TunnelID != tunnelID {
			return fmt.Errorf("service %+v", s)
		}
		return nil
	})
	if rs := recordsNamed(t, host); len(rs) != 0 {
		t.Errorf("a private Ingress created DNS records: %+v", rs)
	}
	if c := tunnelConfig(t, tunnelID); c != "{}" {
		t.Errorf("a private Ingress wrote the tunnel configuration: %s", c)
	}

	t.Run("RemovingTheVPCAnnotationDeletesTheService", func(t *testing.T) {
		wait.Eventually(t, wait.Patience, "annotation removed", func() error {
			if err := p.Get(ing); err != nil {
				return err
			}
			delete(ing.Annotations, v1alpha1.AnnotationVPCService)
			return p.Client.Update(context.Background(), ing)
		})
		wait.Eventually(t, wait.Patience, "service gone, route kept", func() error {
			if ss := servicesNamed(t, "redis-cache-dev-"+ns); len(ss) != 0 {
				return fmt.Errorf("service still there")
			}
			if rs := routesFor(t, host); len(rs) != 1 {
				return fmt.Errorf("%d routes", len(rs))
			}
			return nil
		})
	})

	deleteIngress(t, ing)
	if rs := routesFor(t, host); len(rs) != 0 {
		t.Errorf("routes left after deleting the Ingress: %+v", rs)
	}
}

func TestPublicIngress(t *testing.T) {
	ns, tunnelID := setup(t)
	host := "app-" + ns + ".example.com"
	ing := ingress(ns, "web", map[string]string{v1alpha1.AnnotationTunnel: "edge", v1alpha1.AnnotationPublic: "true"}, host)
	p.Create(t, ing)
	wait.Eventually(t, wait.Patience, "CNAME, tunnel rules and address", func() error {
		rs := recordsNamed(t, host)
		if len(rs) != 1 || rs[0].Type != "CNAME" || !rs[0].Proxied || rs[0].Content != tunnelID+".cfargotunnel.com" {
			return fmt.Errorf("records %+v", rs)
		}
		c := tunnelConfig(t, tunnelID)
		api := strings.Index(c, "http://api."+ns+".svc.cluster.local:8080")
		web := strings.Index(c, "http://web."+ns+".svc.cluster.local:80")
		catchAll := strings.Index(c, "http_status:404")
		if api < 0 || web < 0 || catchAll < 0 || !(api < web && web < catchAll) {
			return fmt.Errorf("configuration %s: want the /api rule, then /, then the catch-all", c)
		}
		if err := p.Get(ing); err != nil {
			return err
		}
		if lb := ing.Status.LoadBalancer.Ingress; len(lb) != 1 || lb[0].Hostname != tunnelID+".cfargotunnel.com" {
			return fmt.Errorf("address %+v", lb)
		}
		return nil
	})
	if rs := routesFor(t, host); len(rs) != 1 {
		t.Errorf("%d hostname routes for a public host, want 1", len(rs))
	}

	t.Run("ATypoLosesNothing", func(t *testing.T) {
		wait.Eventually(t, wait.Patience, "bad hostname annotation", func() error {
			if err := p.Get(ing); err != nil {
				return err
			}
			ing.Annotations[v1alpha1.AnnotationHostname] = "not a host!"
			return p.Client.Update(context.Background(), ing)
		})
		waitEvent(t, ns, "web", "InvalidIngress", v1alpha1.AnnotationHostname)
		p.WaitServed(t, 3, "GET", "/zones/"+sim.ZoneID("example.com")+"/dns_records$") // the records observed three more times
		if rs := recordsNamed(t, host); len(rs) != 1 {
			t.Errorf("the typo deleted the DNS record")
		}
		if rs := routesFor(t, host); len(rs) != 1 {
			t.Errorf("the typo deleted the route")
		}
		if c := tunnelConfig(t, tunnelID); !strings.Contains(c, "web."+ns+".svc.cluster.local") {
			t.Errorf("the typo removed the public rules: %s", c)
		}
		wait.Eventually(t, wait.Patience, "annotation fixed", func() error {
			if err := p.Get(ing); err != nil {
				return err
			}
			delete(ing.Annotations, v1alpha1.AnnotationHostname)
			return p.Client.Update(context.Background(), ing)
		})
	})

	t.Run("NoLongerPublic", func(t *testing.T) {
		wait.Eventually(t, wait.Patience, "public false", func() error {
			if err := p.Get(ing); err != nil {
				return err
			}
			ing.Annotations[v1alpha1.AnnotationPublic] = "false"
			return p.Client.Update(context.Background(), ing)
		})
		wait.Eventually(t, wait.Patience, "record and rules removed", func() error {
			if rs := recordsNamed(t, host); len(rs) != 0 {
				return fmt.Errorf("record still there")
			}
			if c := tunnelConfig(t, tunnelID); strings.Contains(c, "cluster.local") || !strings.Contains(c, "http_status:404") {
				return fmt.Errorf("configuration %s", c)
			}
			return nil
		})
	})
	deleteIngress(t, ing)
	if rs := routesFor(t, host); len(rs) != 0 {
		t.Errorf("routes left: %+v", rs)
	}
}

func TestThreeHostsRouteAllThree(t *testing.T) {
	ns, _ := setup(t)
	hosts := []string{"a-" + ns + ".internal", "b-" + ns + ".internal", "c-" + ns + ".internal"}
	ing := ingress(ns, "multi", map[string]string{v1alpha1.AnnotationTunnel: "edge"}, hosts...)
	p.Create(t, ing)
	wait.Eventually(t, wait.Patience, "three routes", func() error {
		for _, h := range hosts {
			if len(routesFor(t, h)) != 1 {
				return fmt.Errorf("no route for %s", h)
			}
		}
		return nil
	})
	deleteIngress(t, ing)
	for _, h := range hosts {
		if len(routesFor(t, h)) != 0 {
			t.Errorf("route for %s left behind", h)
		}
	}
}

func TestConflicts(t *testing.T) {
	ctx := context.Background()
	ns, _ := setup(t)

	t.Run("TwoIngressesOneHostname", func(t *testing.T) {
		host := "dup-" + ns + ".internal"
		first := ingress(ns, "first", map[string]string{v1alpha1.AnnotationTunnel: "edge", v1alpha1.AnnotationHostname: host})
		p.Create(t, first)
		wait.Eventually(t, wait.Patience, "first routed", func() error {
			if len(routesFor(t, host)) != 1 {
				return fmt.Errorf("not yet")
			}
			return nil
		})
		second := ingress(ns, "second", map[string]string{v1alpha1.AnnotationTunnel: "edge", v1alpha1.AnnotationHostname: host})
		p.Create(t, second)
		waitEvent(t, ns, "second", "HostnameConflict", host)
		if rs := routesFor(t, host); len(rs) != 1 {
			t.Errorf("%d routes for a contested hostname", len(rs))
		}
		deleteIngress(t, second)
		if len(routesFor(t, host)) != 1 {
			t.Error("deleting the losing Ingress removed the winner's route")
		}
		deleteIngress(t, first)
	})

	t.Run("HostnameRoutedToAnotherTunnel", func(t *testing.T) {
		other, err := p.Cloudflare.CreateTunnel(ctx, "other-"+ns, "cloudflare")
		if err != nil {
			t.Fatal(err)
		}
		host := "taken-" + ns + ".internal"
		foreign, err := p.Cloudflare.CreateHostnameRoute(ctx, cloudflare.HostnameRouteInput{Hostname: host, TunnelID: other.ID, Comment: "theirs"})
		if err != nil {
			t.Fatal(err)
		}
		ing := ingress(ns, "taker", map[string]string{v1alpha1.AnnotationTunnel: "edge", v1alpha1.AnnotationHostname: host})
		p.Create(t, ing)
		waitEvent(t, ns, "taker", "NameTaken", "conflict")
		deleteIngress(t, ing)
		got, err := p.Cloudflare.GetHostnameRoute(ctx, foreign.ID)
		if err != nil || got.Deleted() || got.TunnelID != other.ID || got.Comment != "theirs" {
			t.Errorf("the foreign route was touched: %+v (%v)", got, err)
		}
	})
}

func TestBadInput(t *testing.T) {
	ns, _ := setup(t)
	resourceBackend := ingress(ns, "resource-backend", map[string]string{v1alpha1.AnnotationTunnel: "edge"})
	resourceBackend.Spec.DefaultBackend = &networkingv1.IngressBackend{Resource: &corev1.TypedLocalObjectReference{APIGroup: ptr.To("storage.k8s.io"), Kind: "Bucket", Name: "b"}}
	cases := []struct {
		ing            *networkingv1.Ingress
		reason, substr string
	}{
		{ingress(ns, "no-tunnel", map[string]string{}), "MissingTunnelAnnotation", v1alpha1.AnnotationTunnel},
		{ingress(ns, "unknown-tunnel", map[string]string{v1alpha1.AnnotationTunnel: "nope"}), "TunnelNotFound", "nope"},
		{ingress(ns, "vpc-true", map[string]string{v1alpha1.AnnotationTunnel: "edge", v1alpha1.AnnotationVPCService: "true"}), "InvalidIngress", v1alpha1.AnnotationVPCService},
		{ingress(ns, "vpc-empty", map[string]string{v1alpha1.AnnotationTunnel: "edge", v1alpha1.AnnotationVPCService: ""}), "InvalidIngress", v1alpha1.AnnotationVPCService},
		{ingress(ns, "vpc-bad-name", map[string]string{v1alpha1.AnnotationTunnel: "edge", v1alpha1.AnnotationVPCService: "Not_Valid!"}), "InvalidIngress", v1alpha1.AnnotationVPCService},
		{ingress(ns, "vpc-port", map[string]string{v1alpha1.AnnotationTunnel: "edge", v1alpha1.AnnotationVPCService: "svc-" + ns, v1alpha1.AnnotationVPCPort: "http"}), "InvalidIngress", v1alpha1.AnnotationVPCPort},
		{ingress(ns, "public-maybe", map[string]string{v1alpha1.AnnotationTunnel: "edge", v1alpha1.AnnotationPublic: "maybe"}), "InvalidIngress", v1alpha1.AnnotationPublic},
		{ingress(ns, "bad-hostname", map[string]string{v1alpha1.AnnotationTunnel: "edge", v1alpha1.AnnotationHostname: "not a host!"}), "InvalidIngress", v1alpha1.AnnotationHostname},
		{ingress(ns, "no-zone", map[string]string{v1alpha1.AnnotationTunnel: "edge", v1alpha1.AnnotationPublic: "true", v1alpha1.AnnotationHostname: "app-" + ns + ".nozone.test"}), "CloudflareError", "zone"},
		{resourceBackend, "InvalidIngress", "resource"},
	}
	for _, tc := range cases {
		p.Create(t, tc.ing)
	}
	for _, tc := range cases {
		t.Run(tc.ing.Name, func(t *testing.T) {
			waitEvent(t, ns, tc.ing.Name, tc.reason, tc.substr)
		})
	}
	// Nothing that depends on a bad annotation was created.
	if ss := servicesNamed(t, "svc-"+ns); len(ss) != 0 {
		t.Errorf("a VPC service was created despite a bad vpc-port: %+v", ss)
	}
	if rs := routesFor(t, "not a host!"); len(rs) != 0 {
		t.Errorf("a route was created for a bad hostname")
	}
	for _, tc := range cases {
		deleteIngress(t, tc.ing)
	}
}

func TestDeletingAPublicIngressRemovesWhatItCreated(t *testing.T) {
	ns, tunnelID := setup(t)
	host := "gone-" + ns + ".example.com"
	ing := ingress(ns, "gone", map[string]string{v1alpha1.AnnotationTunnel: "edge", v1alpha1.AnnotationPublic: "true", v1alpha1.AnnotationVPCService: "gone-" + ns}, host)
	p.Create(t, ing)
	wait.Eventually(t, wait.Patience, "route, VPC service, record and rules", func() error {
		if len(routesFor(t, host)) != 1 || len(servicesNamed(t, "gone-"+ns)) != 1 || len(recordsNamed(t, host)) != 1 || !strings.Contains(tunnelConfig(t, tunnelID), host) {
			return fmt.Errorf("not all there yet")
		}
		return nil
	})
	// A Worker's traffic leaves the tunnel inside the cluster: the VPC
	// service reaches the backend Service (the first path's), not the
	// public hostname.
	if ss := servicesNamed(t, "gone-"+ns); len(ss) != 1 || ss[0].Host.Hostname != "api."+ns+".svc.cluster.local" || ss[0].TCPPort == nil || *ss[0].TCPPort != 8080 {
		t.Errorf("VPC service %+v, want host api.%s.svc.cluster.local port 8080", ss, ns)
	}
	deleteIngress(t, ing)
	if n := len(routesFor(t, host)); n != 0 {
		t.Errorf("%d routes left", n)
	}
	if n := len(servicesNamed(t, "gone-"+ns)); n != 0 {
		t.Errorf("%d VPC services left", n)
	}
	if n := len(recordsNamed(t, host)); n != 0 {
		t.Errorf("%d DNS records left", n)
	}
	wait.Eventually(t, wait.Patience, "rules removed from the tunnel configuration", func() error {
		if c := tunnelConfig(t, tunnelID); strings.Contains(c, host) || !strings.Contains(c, "http_status:404") {
			return fmt.Errorf("configuration %s", c)
		}
		return nil
	})
}

func setAnnotation(t *testing.T, ing *networkingv1.Ingress, key, value string) {
	t.Helper()
	wait.Eventually(t, wait.Patience, "annotation "+key+"="+value, func() error {
		if err := p.Get(ing); err != nil {
			return err
		}
		ing.Annotations[key] = value
		return p.Client.Update(context.Background(), ing)
	})
}

// TestATunnelTypoKeepsTheSiteUp: pointing a working public Ingress at a
// tunnel that does not exist must not remove its rules from the tunnel it
// is on, even when that tunnel reconciles again.
func TestATunnelTypoKeepsTheSiteUp(t *testing.T) {
	ns, tunnelID := setup(t)
	host := "typo-" + ns + ".example.com"
	ing := ingress(ns, "typo", map[string]string{v1alpha1.AnnotationTunnel: "edge", v1alpha1.AnnotationPublic: "true"}, host)
	p.Create(t, ing)
	wait.Eventually(t, wait.Patience, "published", func() error {
		if !strings.Contains(tunnelConfig(t, tunnelID), host) || len(recordsNamed(t, host)) != 1 {
			return fmt.Errorf("not yet")
		}
		return nil
	})

	setAnnotation(t, ing, v1alpha1.AnnotationTunnel, "egde")
	waitEvent(t, ns, "typo", "TunnelNotFound", "egde")
	// Make the tunnel it was on reconcile, as any later change would.
	cft := &v1alpha1.CloudflareTunnel{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "edge"}}
	wait.Eventually(t, wait.Patience, "tunnel touched", func() error {
		if err := p.Get(cft); err != nil {
			return err
		}
		cft.Annotations = map[string]string{"test/touch": time.Now().String()}
		return p.Client.Update(context.Background(), cft)
	})
	p.WaitServed(t, 4, "GET", tunnelID+"/configurations$") // read at four more polls: past the configuration batch window
	if c := tunnelConfig(t, tunnelID); !strings.Contains(c, host) {
		t.Errorf("a typo in the tunnel annotation removed the site's rules: %s", c)
	}
	if len(recordsNamed(t, host)) != 1 || len(routesFor(t, host)) != 1 {
		t.Error("a typo in the tunnel annotation removed the DNS record or route")
	}

	t.Run("TheTunnelWaitsForIt", func(t *testing.T) {
		if err := p.Get(cft); err != nil {
			t.Fatal(err)
		}
		if err := p.Client.Delete(context.Background(), cft); err != nil {
			t.Fatal(err)
		}
		waitEvent(t, ns, "edge", "TunnelInUse", "typo")
		setAnnotation(t, ing, v1alpha1.AnnotationTunnel, "edge")
		waitEvent(t, ns, "typo", "TunnelDeleting", "edge")
		if c := tunnelConfig(t, tunnelID); !strings.Contains(c, host) {
			t.Errorf("the rules are gone while the tunnel waits: %s", c)
		}
	})
	deleteIngress(t, ing)
	wait.Eventually(t, wait.Patience, "the tunnel deleted once its Ingress is gone", func() error {
		if err := p.Get(cft); err == nil {
			return fmt.Errorf("still there: %v", cft.Status.Conditions)
		}
		return nil
	})
}

// TestBackendServiceChangesReachTheTunnel: a Service that appears after its
// Ingress, or changes its port, changes the Ingress's rule without anything
// else touching the Ingress.
func TestBackendServiceChangesReachTheTunnel(t *testing.T) {
	ns, tunnelID := setup(t)
	host := "late-" + ns + ".example.com"
	ing := ingress(ns, "late", map[string]string{v1alpha1.AnnotationTunnel: "edge", v1alpha1.AnnotationPublic: "true"}, host)
	ing.Spec.Rules[0].HTTP.Paths = []networkingv1.HTTPIngressPath{{Path: "/", PathType: ptr.To(networkingv1.PathTypePrefix),
		Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "late", Port: networkingv1.ServiceBackendPort{Name: "http"}}}}}
	p.Create(t, ing)
	waitEvent(t, ns, "late", "InvalidIngress", "late")

	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "late"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 8081, TargetPort: intstr.FromInt32(8081)}}},
	}
	p.Create(t, svc)
	rule := func(port int) func() error {
		return func() error {
			if c := tunnelConfig(t, tunnelID); !strings.Contains(c, fmt.Sprintf("http://late.%s.svc.cluster.local:%d", ns, port)) {
				return fmt.Errorf("configuration %s", c)
			}
			return nil
		}
	}
	wait.Eventually(t, 30*time.Second, "the rule once the Service exists", rule(8081))

	wait.Eventually(t, wait.Patience, "port changed", func() error {
		if err := p.Get(svc); err != nil {
			return err
		}
		svc.Spec.Ports[0].Port = 8082
		return p.Client.Update(context.Background(), svc)
	})
	wait.Eventually(t, 30*time.Second, "the rule follows the Service's port", rule(8082))
	deleteIngress(t, ing)
}

func address(t *testing.T, ing *networkingv1.Ingress) string {
	t.Helper()
	if err := p.Get(ing); err != nil {
		t.Fatal(err)
	}
	if lb := ing.Status.LoadBalancer.Ingress; len(lb) > 0 {
		return lb[0].Hostname
	}
	return ""
}

// TestOnlyWhatIsTrue: an Ingress's address and the tunnel's rules say only
// what is so, and input that works but not as its author may think gets a
// Warning.
func TestOnlyWhatIsTrue(t *testing.T) {
	ctx := context.Background()
	ns, tunnelID := setup(t)

	t.Run("NoAddressWithoutADNSRecord", func(t *testing.T) {
		ing := ingress(ns, "nozone", map[string]string{v1alpha1.AnnotationTunnel: "edge", v1alpha1.AnnotationPublic: "true"}, "app-"+ns+".nozone.test")
		p.Create(t, ing)
		waitEvent(t, ns, "nozone", "CloudflareError", "zone")
		if a := address(t, ing); a != "" {
			t.Errorf("address %q for an Ingress whose DNS record Cloudflare refused", a)
		}
		deleteIngress(t, ing)
	})

	t.Run("TheLoserOfADNSConflictGetsNoRule", func(t *testing.T) {
		host := "taken-" + ns + ".example.com"
		if _, err := p.Cloudflare.CreateDNSRecord(ctx, sim.ZoneID("example.com"), cloudflare.DNSRecord{Name: host, Type: "CNAME", Content: "elsewhere.example.net", Proxied: true, TTL: 1}); err != nil {
			t.Fatal(err)
		}
		ing := ingress(ns, "loser", map[string]string{v1alpha1.AnnotationTunnel: "edge", v1alpha1.AnnotationPublic: "true"}, host)
		p.Create(t, ing)
		waitEvent(t, ns, "loser", "NameTaken", "conflict")
		p.WaitServed(t, 4, "GET", tunnelID+"/configurations$") // read at four more polls: past the configuration batch window
		if c := tunnelConfig(t, tunnelID); strings.Contains(c, host) {
			t.Errorf("the tunnel serves a hostname whose DNS record belongs to someone else: %s", c)
		}
		if a := address(t, ing); a != "" {
			t.Errorf("address %q for an Ingress that lost its DNS record", a)
		}
		deleteIngress(t, ing)
		if rs := recordsNamed(t, host); len(rs) != 1 || rs[0].Content != "elsewhere.example.net" {
			t.Errorf("the foreign record was touched: %+v", rs)
		}
	})

	t.Run("AddressGoesWithTheTunnelAnnotation", func(t *testing.T) {
		host := "addr-" + ns + ".example.com"
		ing := ingress(ns, "addr", map[string]string{v1alpha1.AnnotationTunnel: "edge", v1alpha1.AnnotationPublic: "true"}, host)
		p.Create(t, ing)
		wait.Eventually(t, wait.Patience, "address", func() error {
			if a := address(t, ing); a != tunnelID+".cfargotunnel.com" {
				return fmt.Errorf("address %q", a)
			}
			return nil
		})
		wait.Eventually(t, wait.Patience, "annotation removed", func() error {
			if err := p.Get(ing); err != nil {
				return err
			}
			delete(ing.Annotations, v1alpha1.AnnotationTunnel)
			return p.Client.Update(ctx, ing)
		})
		wait.Eventually(t, wait.Patience, "record and address gone", func() error {
			if n := len(recordsNamed(t, host)); n != 0 {
				return fmt.Errorf("%d records", n)
			}
			if a := address(t, ing); a != "" {
				return fmt.Errorf("address %q", a)
			}
			return nil
		})
		deleteIngress(t, ing)
	})

	t.Run("Warnings", func(t *testing.T) {
		tls := ingress(ns, "with-tls", map[string]string{v1alpha1.AnnotationTunnel: "edge", v1alpha1.AnnotationPublic: "true"}, "tls-"+ns+".example.com")
		tls.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{"tls-" + ns + ".example.com"}, SecretName: "tls"}}
		ghost := ingress(ns, "ghost", map[string]string{v1alpha1.AnnotationTunnel: "edge"})
		ghost.Spec.DefaultBackend = ptr.To(backend("ghost", 80))
		noPort := ingress(ns, "no-port", map[string]string{v1alpha1.AnnotationTunnel: "edge"})
		noPort.Spec.DefaultBackend = ptr.To(backend("web", 8443))
		tls443 := ingress(ns, "tls443", map[string]string{v1alpha1.AnnotationTunnel: "edge"})
		tls443.Spec.DefaultBackend = ptr.To(backend("web", 443))
		if err := p.Get(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}); err != nil {
			t.Fatal(err)
		}
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}
		wait.Eventually(t, wait.Patience, "web also on 443", func() error {
			if err := p.Get(svc); err != nil {
				return err
			}
			svc.Spec.Ports = append(svc.Spec.Ports[:1], corev1.ServicePort{Name: "https", Port: 443, TargetPort: intstr.FromInt32(443)})
			return p.Client.Update(ctx, svc)
		})
		publicNoHost := ingress(ns, "public-no-host", map[string]string{v1alpha1.AnnotationTunnel: "edge", v1alpha1.AnnotationPublic: "true"})
		apex := ingress(ns, "apex", map[string]string{v1alpha1.AnnotationTunnel: "edge"}, "wild-"+ns+".example.com")
		for _, ing := range []*networkingv1.Ingress{tls, ghost, noPort, tls443, publicNoHost, apex} {
			p.Create(t, ing)
		}
		wait.Eventually(t, wait.Patience, "apex routed", func() error {
			if len(routesFor(t, "wild-"+ns+".example.com")) != 1 {
				return fmt.Errorf("not yet")
			}
			return nil
		})
		wildcard := ingress(ns, "wildcard", map[string]string{v1alpha1.AnnotationTunnel: "edge"}, "*.wild-"+ns+".example.com")
		p.Create(t, wildcard)

		waitEvent(t, ns, "with-tls", "TLSIgnored", "Cloudflare terminates TLS")
		waitEvent(t, ns, "ghost", "BackendServiceNotFound", "ghost")
		waitEvent(t, ns, "no-port", "BackendPortNotFound", "8443")
		waitEvent(t, ns, "tls443", "PlainHTTPToPort443", "443")
		waitEvent(t, ns, "public-no-host", "InvalidIngress", "names no hostname")
		waitEvent(t, ns, "wildcard", "HostnameConflict", "*.wild-"+ns+".example.com is routed privately as wild-"+ns+".example.com")
		if rs := recordsNamed(t, "redis."+ns+".svc.cluster.local"); len(rs) != 0 {
			t.Errorf("a DNS record for a cluster-internal name: %+v", rs)
		}
		// The ghost Ingress's private route is the backend Service's name.
		if len(routesFor(t, "ghost."+ns+".svc.cluster.local")) != 1 {
			t.Error("a defaultBackend-only Ingress is not routed as its backend Service's cluster name")
		}
		for _, ing := range []*networkingv1.Ingress{tls, ghost, noPort, tls443, publicNoHost, wildcard, apex} {
			deleteIngress(t, ing)
		}
	})
}
