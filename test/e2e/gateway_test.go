package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/externaldns"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

// installGatewayAPI installs Gateway API's standard CRDs (v1.6.1's) and
// external-dns's DNSEndpoint CRD, once or again (server-side apply).
func installGatewayAPI(t *testing.T) {
	t.Helper()
	dir, err := testenv.ThirdPartyCRDs()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"gateway-api", "external-dns"} {
		if _, err := env.kubectl("apply", "--server-side", "-f", filepath.Join(dir, d)); err != nil {
			t.Fatalf("cannot install the %s CRDs: %v", d, err)
		}
	}
	wait.Eventually(t, time.Minute, "the CRDs established", func() error {
		_, err := env.kubectl("wait", "--for=condition=Established", "--timeout=20s",
			"crd/gateways.gateway.networking.k8s.io", "crd/httproutes.gateway.networking.k8s.io", "crd/dnsendpoints.externaldns.k8s.io")
		return err
	})
}

// TestAGatewayBindingThroughTheBinary installs Gateway API (v1.6.1's
// standard CRDs) and external-dns's DNSEndpoint CRD into a cluster where the
// provider binary already runs with cluster/install's RBAC: the binding
// controller starts then, reads the Gateway, its class and the routes, and
// publishes an accepted route's hostname with a DNS record (one binding) and
// through a DNSEndpoint (another) — and deleting the bindings removes both.
func TestAGatewayBindingThroughTheBinary(t *testing.T) {
	ctx := context.Background()
	installGatewayAPI(t)
	ns := namespace(t, "gateway")
	create := func(o client.Object) {
		t.Helper()
		if err := env.kube.Create(ctx, o); err != nil {
			t.Fatalf("create %T %s: %v", o, o.GetName(), err)
		}
	}
	create(&v1alpha1.CloudflareTunnel{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "edge"},
		Spec:       v1alpha1.CloudflareTunnelSpec{TunnelName: ptr.To("e2e-" + ns), Replicas: ptr.To[int32](1)},
	})
	const controller = gwv1.GatewayController("traefik.io/gateway-controller")
	class := &gwv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "traefik-" + ns}, Spec: gwv1.GatewayClassSpec{ControllerName: controller}}
	wait.Eventually(t, time.Minute, "Gateway API served", func() error { return env.kube.Create(ctx, class) })
	create(&gwv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "public"},
		Spec: gwv1.GatewaySpec{GatewayClassName: gwv1.ObjectName(class.Name), Listeners: []gwv1.Listener{
			{Name: "web", Port: 8000, Protocol: gwv1.HTTPProtocolType},
			{Name: "admin", Port: 9000, Protocol: gwv1.HTTPProtocolType},
		}},
	})
	create(&corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "traefik"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "web", Port: 80, TargetPort: intstr.FromInt32(8000)}}},
	})
	web, admin := "gw-web-"+ns+"."+zone, "gw-admin-"+ns+"."+zone
	for listener, host := range map[string]string{"web": web, "admin": admin} {
		ref := gwv1.ParentReference{Name: "public", SectionName: ptr.To(gwv1.SectionName(listener))}
		r := &gwv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: listener}}
		r.Spec.ParentRefs = []gwv1.ParentReference{ref}
		r.Spec.Hostnames = []gwv1.Hostname{gwv1.Hostname(host)}
		create(r)
		r.Status.Parents = []gwv1.RouteParentStatus{{ParentRef: ref, ControllerName: controller, Conditions: []metav1.Condition{{
			Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted", Message: "as Traefik says", ObservedGeneration: r.Generation, LastTransitionTime: metav1.Now(),
		}}}}
		if err := env.kube.Status().Update(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	bind := func(name, listener, mode string) *v1alpha1.GatewayBinding {
		b := &v1alpha1.GatewayBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: v1alpha1.GatewayBindingSpec{
				TunnelRef:  v1alpha1.TunnelReference{Name: "edge"},
				GatewayRef: v1alpha1.GatewayListenerReference{Name: "public", SectionName: listener},
				Origin:     v1alpha1.GatewayOrigin{Service: v1alpha1.GatewayServiceOrigin{Name: "traefik", Port: intstr.FromString("web")}},
				DNS:        v1alpha1.BindingDNS{Mode: mode},
			},
		}
		create(b)
		return b
	}
	byRecord, byEndpoint := bind("web", "web", v1alpha1.DNSModeDNSRecord), bind("admin", "admin", v1alpha1.DNSModeExternalDNS)
	for _, b := range []*v1alpha1.GatewayBinding{byRecord, byEndpoint} {
		wait.Eventually(t, 2*time.Minute, "GatewayBinding "+b.Name+" Ready", func() error {
			if err := env.kube.Get(ctx, client.ObjectKeyFromObject(b), b); err != nil {
				return err
			}
			if c := b.GetCondition(xpv2.TypeReady); c.Status != corev1.ConditionTrue {
				return fmt.Errorf("Ready=%s %s: %s", c.Status, c.Reason, c.Message)
			}
			return nil
		})
	}
	cft := &v1alpha1.CloudflareTunnel{}
	if err := env.kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: "edge"}, cft); err != nil {
		t.Fatal(err)
	}
	target := cft.Status.TunnelID + ".cfargotunnel.com"
	recordsOf := func(host string) int {
		n := 0
		for _, r := range env.sim.Snapshot().DNSRecords {
			if r.Name == host && r.Content == target && r.Proxied {
				n++
			}
		}
		return n
	}
	if n := recordsOf(web); n != 1 {
		t.Errorf("%d proxied CNAMEs %s → the tunnel, want 1", n, web)
	}
	if n := recordsOf(admin); n != 0 {
		t.Errorf("%d records of %s through Cloudflare, want none: its DNS is external-dns's", n, admin)
	}
	ep := &unstructured.Unstructured{}
	ep.SetGroupVersionKind(externaldns.GroupVersionKind)
	if err := env.kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: byEndpoint.Name}, ep); err != nil {
		t.Fatalf("no DNSEndpoint: %v", err)
	}
	if got := externaldns.Hosts(ep); len(got) != 1 || got[0] != admin {
		t.Errorf("DNSEndpoint hosts %v, want [%s]", got, admin)
	}

	for _, b := range []*v1alpha1.GatewayBinding{byRecord, byEndpoint} {
		if err := env.kube.Delete(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	wait.Eventually(t, 2*time.Minute, "the bindings and what they made gone", func() error {
		for _, b := range []*v1alpha1.GatewayBinding{byRecord, byEndpoint} {
			if err := env.kube.Get(ctx, client.ObjectKeyFromObject(b), b); err == nil {
				return fmt.Errorf("GatewayBinding %s still there", b.Name)
			}
		}
		if n := recordsOf(web); n != 0 {
			return fmt.Errorf("%d records of %s left", n, web)
		}
		if err := env.kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: byEndpoint.Name}, ep); err == nil {
			return fmt.Errorf("DNSEndpoint still there")
		}
		return nil
	})
}

// TestANativeGatewayThroughTheBinary: a Gateway of a class whose controller
// is the provider's is a tunnel. The binary makes its CloudflareTunnel,
// reports it Programmed with the tunnel's address, publishes an HTTPRoute's
// hostname straight to its backend Service (rule and DNS record) and writes
// its own entry of the route's status; deleting the Gateway takes the
// hostname, its record and the tunnel.
func TestANativeGatewayThroughTheBinary(t *testing.T) {
	ctx := context.Background()
	installGatewayAPI(t)
	ns := namespace(t, "native")
	create := func(o client.Object) {
		t.Helper()
		if err := env.kube.Create(ctx, o); err != nil {
			t.Fatalf("create %T %s: %v", o, o.GetName(), err)
		}
	}
	class := &gwv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "cloudflare-" + ns}, Spec: gwv1.GatewayClassSpec{ControllerName: "tunnels.cloudflare.com/gateway-controller"}}
	wait.Eventually(t, time.Minute, "Gateway API served", func() error { return env.kube.Create(ctx, class) })
	t.Cleanup(func() { _ = env.kube.Delete(context.Background(), class) })
	gw := &gwv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "edge"},
		Spec: gwv1.GatewaySpec{GatewayClassName: gwv1.ObjectName(class.Name), Listeners: []gwv1.Listener{
			{Name: "web", Port: 80, Protocol: gwv1.HTTPProtocolType},
		}},
	}
	create(gw)
	create(&corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 8080, TargetPort: intstr.FromInt32(8080)}}},
	})
	host := "native-" + ns + "." + zone
	route := &gwv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}
	route.Spec.ParentRefs = []gwv1.ParentReference{{Name: "edge"}}
	route.Spec.Hostnames = []gwv1.Hostname{gwv1.Hostname(host)}
	route.Spec.Rules = []gwv1.HTTPRouteRule{{BackendRefs: []gwv1.HTTPBackendRef{{BackendRef: gwv1.BackendRef{BackendObjectReference: gwv1.BackendObjectReference{Name: "web", Port: ptr.To(gwv1.PortNumber(8080))}}}}}}
	create(route)

	// The test plays cloudflared (the KWOK pods run nothing): it connects
	// with the token the provider wrote for the Gateway's tunnel.
	wait.Eventually(t, 2*time.Minute, "a connector on the Gateway's tunnel", func() error {
		sec := &corev1.Secret{}
		if err := env.kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: "edge-token"}, sec); err != nil {
			return err
		}
		_, err := env.sim.Connect(string(sec.Data["token"]))
		return err
	})
	var address string
	wait.Eventually(t, 3*time.Minute, "the Gateway Programmed with the tunnel's address", func() error {
		if err := env.kube.Get(ctx, client.ObjectKeyFromObject(gw), gw); err != nil {
			return err
		}
		for _, c := range gw.Status.Conditions {
			if c.Type == string(gwv1.GatewayConditionProgrammed) && c.Status != metav1.ConditionTrue {
				return fmt.Errorf("Programmed=%s %s: %s", c.Status, c.Reason, c.Message)
			}
		}
		if len(gw.Status.Addresses) != 1 || !strings.HasSuffix(gw.Status.Addresses[0].Value, ".cfargotunnel.com") {
			return fmt.Errorf("addresses %+v", gw.Status.Addresses)
		}
		address = gw.Status.Addresses[0].Value
		return nil
	})
	wait.Eventually(t, 2*time.Minute, "the route published: a proxied CNAME to the tunnel and our Accepted entry", func() error {
		n := 0
		for _, r := range env.sim.Snapshot().DNSRecords {
			if r.Name == host && r.Content == address && r.Proxied {
				n++
			}
		}
		if n != 1 {
			return fmt.Errorf("%d records of %s to %s", n, host, address)
		}
		if err := env.kube.Get(ctx, client.ObjectKeyFromObject(route), route); err != nil {
			return err
		}
		for _, p := range route.Status.Parents {
			for _, c := range p.Conditions {
				if p.ControllerName == "tunnels.cloudflare.com/gateway-controller" && c.Type == "Accepted" && c.Status == metav1.ConditionTrue {
					return nil
				}
			}
		}
		return fmt.Errorf("route status %+v", route.Status.Parents)
	})
	tunnelID := strings.TrimSuffix(address, ".cfargotunnel.com")
	var ruled bool
	for _, tun := range env.sim.Snapshot().Tunnels {
		if tun.ID == tunnelID && strings.Contains(string(tun.Config), host) && strings.Contains(string(tun.Config), "web."+ns+".svc") {
			ruled = true
		}
	}
	if !ruled {
		t.Errorf("tunnel %s's configuration has no rule sending %s to Service web", tunnelID, host)
	}

	// cloudflared stops with its Deployment; the test's connector with it.
	env.sim.SetConnectors(tunnelID, 0)
	if err := env.kube.Delete(ctx, gw); err != nil {
		t.Fatal(err)
	}
	wait.Eventually(t, 3*time.Minute, "the hostname, its record and the tunnel gone with the Gateway", func() error {
		for _, r := range env.sim.Snapshot().DNSRecords {
			if r.Name == host {
				return fmt.Errorf("record %s of %s left", r.ID, host)
			}
		}
		if err := env.kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: "edge"}, &v1alpha1.CloudflareTunnel{}); !kerrors.IsNotFound(err) {
			return fmt.Errorf("CloudflareTunnel edge still there (%v)", err)
		}
		for _, tun := range env.sim.Snapshot().Tunnels {
			if tun.ID == tunnelID && tun.DeletedAt == nil {
				return fmt.Errorf("tunnel %s still in the account", tunnelID)
			}
		}
		return nil
	})
}
