package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
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
)

// TestAGatewayBindingThroughTheBinary installs Gateway API (v1.6.1's
// standard CRDs) and external-dns's DNSEndpoint CRD into a cluster where the
// provider binary already runs with cluster/install's RBAC: the binding
// controller starts then, reads the Gateway, its class and the routes, and
// publishes an accepted route's hostname with a DNS record (one binding) and
// through a DNSEndpoint (another) — and deleting the bindings removes both.
func TestAGatewayBindingThroughTheBinary(t *testing.T) {
	ctx := context.Background()
	dir, err := testenv.ThirdPartyCRDs()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"gateway-api", "external-dns"} {
		if _, err := env.kubectl("apply", "--server-side", "-f", filepath.Join(dir, d)); err != nil {
			t.Fatalf("cannot install the %s CRDs: %v", d, err)
		}
	}
	eventually(t, time.Minute, "the CRDs established", func() error {
		_, err := env.kubectl("wait", "--for=condition=Established", "--timeout=20s",
			"crd/gateways.gateway.networking.k8s.io", "crd/httproutes.gateway.networking.k8s.io", "crd/dnsendpoints.externaldns.k8s.io")
		return err
	})
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
	eventually(t, time.Minute, "Gateway API served", func() error { return env.kube.Create(ctx, class) })
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
		eventually(t, 2*time.Minute, "GatewayBinding "+b.Name+" Ready", func() error {
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
	eventually(t, 2*time.Minute, "the bindings and what they made gone", func() error {
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
