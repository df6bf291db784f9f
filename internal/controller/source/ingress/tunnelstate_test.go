package ingress_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
)

// warnings are the Warning events on the object name in ns.
func warnings(t *testing.T, ns, name string) []corev1.Event {
	t.Helper()
	evs := &corev1.EventList{}
	if err := p.Client.List(context.Background(), evs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var out []corev1.Event
	for _, e := range evs.Items {
		if e.InvolvedObject.Name == name && e.Type == corev1.EventTypeWarning {
			out = append(out, e)
		}
	}
	return out
}

// TestATunnelBeingMadeIsNoWarning: an Ingress made right after its
// CloudflareTunnel waits for the tunnel's ID without a Warning: its routes
// cannot resolve the ID yet, which is the normal path, not a failure.
func TestATunnelBeingMadeIsNoWarning(t *testing.T) {
	ns := p.Namespace(t)
	p.Create(t, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "redis"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "redis", Port: 6379, TargetPort: intstr.FromInt32(6379)}}},
	})
	p.Create(t, &v1alpha1.CloudflareTunnel{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "edge"},
		Spec:       v1alpha1.CloudflareTunnelSpec{TunnelName: ptr.To("edge-" + ns), Replicas: ptr.To[int32](1)},
	})
	ing := ingress(ns, "together", map[string]string{v1alpha1.AnnotationTunnel: "edge"})
	p.Create(t, ing)
	host := "redis." + ns + ".svc.cluster.local"
	eventually(t, "the route made once the tunnel has its ID", func() error {
		if rs := routesFor(t, host); len(rs) != 1 {
			return fmt.Errorf("%d routes for %s", len(rs), host)
		}
		return nil
	})
	for _, e := range warnings(t, ns, "together") {
		t.Errorf("Warning %s on the normal path: %s", e.Reason, e.Message)
	}
	deleteIngress(t, ing)
}

// TestABrokenTunnelIsSaidOnTheSource: a CloudflareTunnel whose Cloudflare
// name is taken gets no tunnel ID; its Ingress says so, with the tunnel's
// reason, instead of repeating that its route's reference is empty.
func TestABrokenTunnelIsSaidOnTheSource(t *testing.T) {
	ns := p.Namespace(t)
	name := "taken-" + ns
	if _, err := p.Cloudflare.CreateTunnel(context.Background(), name, "cloudflare"); err != nil {
		t.Fatal(err)
	}
	p.Create(t, &v1alpha1.CloudflareTunnel{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "taken"},
		Spec:       v1alpha1.CloudflareTunnelSpec{TunnelName: ptr.To(name), Replicas: ptr.To[int32](1)},
	})
	p.Create(t, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "redis"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "redis", Port: 6379, TargetPort: intstr.FromInt32(6379)}}},
	})
	ing := ingress(ns, "broken", map[string]string{v1alpha1.AnnotationTunnel: "taken"})
	p.Create(t, ing)
	waitEvent(t, ns, "broken", string(v1alpha1.ReasonTunnelNameTaken), "CloudflareTunnel "+ns+"/taken has no Cloudflare tunnel")
	for _, e := range warnings(t, ns, "broken") {
		if strings.Contains(e.Message, "referenced field was empty") {
			t.Errorf("Warning %s repeats a route's empty reference instead of the tunnel's reason: %s", e.Reason, e.Message)
		}
	}
	deleteIngress(t, ing)
}
