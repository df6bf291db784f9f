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
	ingressctl "github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/ingress"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
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
	wait.Eventually(t, wait.Patience, "the route made once the tunnel has its ID", func() error {
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

// waitNormal waits for a Normal event of reason on the object name in ns.
func waitNormal(t *testing.T, ns, name, reason, contains string) {
	t.Helper()
	wait.Eventually(t, wait.Patience, "Normal "+reason+" on "+name, func() error {
		evs := &corev1.EventList{}
		if err := p.Client.List(context.Background(), evs, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, e := range evs.Items {
			if e.InvolvedObject.Name == name && e.Type == corev1.EventTypeNormal && e.Reason == reason && strings.Contains(e.Message, contains) {
				return nil
			}
		}
		return fmt.Errorf("no Normal %s event saying %q", reason, contains)
	})
}

// TestATunnelWithoutConnectionsIsSaidOnItsIngress: a public Ingress on a
// tunnel that never connected says so (a Normal event: the moments after a
// tunnel is made look the same), and a Warning once the tunnel, connected
// for a while, has no connections left.
func TestATunnelWithoutConnectionsIsSaidOnItsIngress(t *testing.T) {
	ns, tunnelID := setup(t)
	ing := ingress(ns, "unconnected", map[string]string{v1alpha1.AnnotationTunnel: "edge", v1alpha1.AnnotationPublic: "true"}, "unconnected-"+ns+".example.com")
	p.Create(t, ing)
	waitNormal(t, ns, ing.Name, ingressctl.ReasonTunnelNotConnected, "CloudflareTunnel "+ns+"/edge has never connected")
	cr := &v1alpha1.CloudflareTunnel{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "edge"}}
	for _, step := range []struct {
		connectors int
		status     string
	}{{1, "healthy"}, {0, "down"}} {
		if !p.Sim.SetConnectors(tunnelID, step.connectors) {
			t.Fatal("no tunnel in the simulator")
		}
		wait.Eventually(t, wait.Patience, "the CloudflareTunnel "+step.status, func() error {
			if err := p.Get(cr); err != nil {
				return err
			}
			if cr.Status.TunnelStatus != step.status {
				return fmt.Errorf("status %q", cr.Status.TunnelStatus)
			}
			return nil
		})
	}
	waitEvent(t, ns, ing.Name, ingressctl.ReasonTunnelDown, "has no connections to Cloudflare")
	deleteIngress(t, ing)
}

func TestConnectionNotice(t *testing.T) {
	cases := map[string]struct {
		warning bool
		reason  string
	}{
		"inactive": {false, ingressctl.ReasonTunnelNotConnected},
		"down":     {true, ingressctl.ReasonTunnelDown},
		"healthy":  {false, ""},
		"degraded": {false, ""},
		"":         {false, ""},
	}
	for status, tc := range cases {
		warning, reason, msg := ingressctl.ConnectionNotice(status, "team-a/edge")
		if warning != tc.warning || reason != tc.reason || (reason != "") != strings.Contains(msg, "team-a/edge") {
			t.Errorf("ConnectionNotice(%q) = %v %q %q", status, warning, reason, msg)
		}
	}
}
