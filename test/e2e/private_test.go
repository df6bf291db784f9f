package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

// TestAServiceRoutedPrivatelyInAVirtualNetwork routes a Service's cluster IP
// through the provider binary, with its own RBAC (read-only on Services), in
// a VirtualNetwork, then deletes the Service with the cluster's own garbage
// collector running: the route goes from Cloudflare, and so does the
// virtual network once nothing uses it.
func TestAServiceRoutedPrivatelyInAVirtualNetwork(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t, "private")
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
	vn := &ztv1alpha1.VirtualNetwork{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "blue"},
		Spec:       ztv1alpha1.VirtualNetworkSpec{ForProvider: ztv1alpha1.VirtualNetworkParameters{Name: "e2e-blue-" + ns}},
	}
	create(vn)
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "postgres", Annotations: map[string]string{
			v1alpha1.AnnotationTunnel: "edge", v1alpha1.AnnotationPrivateRoute: "true", v1alpha1.AnnotationVirtualNetwork: "blue",
		}},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "postgres", Port: 5432}}},
	}
	create(svc)
	network := svc.Spec.ClusterIP + "/32"
	start := time.Now()
	wait.Eventually(t, 2*time.Minute, network+" routed in the virtual network", func() error {
		if err := env.kube.Get(ctx, client.ObjectKeyFromObject(vn), vn); err != nil {
			return err
		}
		cft := &v1alpha1.CloudflareTunnel{}
		if err := env.kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: "edge"}, cft); err != nil {
			return err
		}
		for _, r := range env.sim.Snapshot().CIDRRoutes {
			if r.Network == network && r.DeletedAt == nil && r.TunnelID == cft.Status.TunnelID && r.VirtualNetworkID == meta.GetExternalName(vn) && cft.Status.TunnelID != "" {
				return nil
			}
		}
		return fmt.Errorf("no live route for %s through tunnel %q in virtual network %q", network, cft.Status.TunnelID, meta.GetExternalName(vn))
	})
	t.Logf("%s routed %s after the Service was created", network, time.Since(start).Round(100*time.Millisecond))
	// Cloudflare holds the route before its NetworkRoute has observed it.
	wait.Eventually(t, time.Minute, "one NetworkRoute, Ready", func() error {
		routes := &ztv1alpha1.NetworkRouteList{}
		if err := env.kube.List(ctx, routes, client.InNamespace(ns)); err != nil {
			return err
		}
		if len(routes.Items) != 1 {
			return fmt.Errorf("%d NetworkRoutes", len(routes.Items))
		}
		if c := routes.Items[0].GetCondition(xpv2.TypeReady); c.Status != corev1.ConditionTrue {
			return fmt.Errorf("NetworkRoute %s Ready=%s %s: %s", routes.Items[0].Name, c.Status, c.Reason, c.Message)
		}
		return nil
	})

	deleted := time.Now()
	if err := env.kube.Delete(ctx, svc); err != nil {
		t.Fatal(err)
	}
	if err := env.kube.Delete(ctx, vn); err != nil {
		t.Fatal(err)
	}
	wait.Eventually(t, 2*time.Minute, "route and virtual network gone from Cloudflare", func() error {
		st := env.sim.Snapshot()
		for _, r := range st.CIDRRoutes {
			if r.Network == network && r.DeletedAt == nil {
				return fmt.Errorf("route %s still live", r.ID)
			}
		}
		seen := false
		for _, v := range st.VirtualNetworks {
			if v.Name == vn.Spec.ForProvider.Name {
				if v.DeletedAt == nil {
					return fmt.Errorf("virtual network %s still live", v.ID)
				}
				seen = true
			}
		}
		if !seen {
			return fmt.Errorf("no virtual network %q in the simulator at all", vn.Spec.ForProvider.Name)
		}
		return nil
	})
	t.Logf("route and virtual network deleted in Cloudflare %s after the Service's deletion", time.Since(deleted).Round(10*time.Millisecond))
}
