package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	connv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/connectivity/v1alpha1"
	dnsv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/dns/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

// restoreWithin is how long an edit behind the provider's back may survive.
// Most are undone within a poll or two (the measured times are in
// docs/reliability.md), but an object Cloudflare loses within 30 s of its
// creation is recreated only after the creation grace period (Cloudflare's
// reads lag its writes), and a managed resource that was just requeued with
// backoff can wait up to the controller's 60 s maximum.
const restoreWithin = 90 * time.Second

func liveRoute(hostname string) (string, int) {
	id, n := "", 0
	for _, r := range env.sim.Snapshot().HostnameRoutes {
		if r.DeletedAt == nil && r.Hostname == hostname {
			id = r.ID
			n++
		}
	}
	return id, n
}

func record(name string) (id, content string, n int) {
	for _, r := range env.sim.Snapshot().DNSRecords {
		if r.Name == name {
			id, content = r.ID, r.Content
			n++
		}
	}
	return id, content, n
}

func serviceNamed(name string) (id string, port int, n int) {
	for _, s := range env.sim.Snapshot().Services {
		if s.Name == name {
			id, n = s.ServiceID, n+1
			if s.TCPPort != nil {
				port = *s.TCPPort
			}
			if s.HTTPPort != nil {
				port = *s.HTTPPort
			}
		}
	}
	return id, port, n
}

func configHostnames(tunnelID string) []string {
	for _, t := range env.sim.Snapshot().Tunnels {
		if t.ID != tunnelID || t.Config == "" {
			continue
		}
		var c struct {
			Ingress []struct {
				Hostname string `json:"hostname"`
			} `json:"ingress"`
		}
		_ = json.Unmarshal([]byte(t.Config), &c)
		var hs []string
		for _, r := range c.Ingress {
			if r.Hostname != "" {
				hs = append(hs, r.Hostname)
			}
		}
		return hs
	}
	return nil
}

// TestHandEditsAreUndone changes and deletes objects behind the provider's
// back, in Cloudflare and in Kubernetes, and expects each restored within a
// poll; then it deletes from Kubernetes what Cloudflare has already lost and
// expects no finalizer to hold on.
func TestHandEditsAreUndone(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t, "edits")
	workload(t, ns, "edge", 2) // app-00 public, app-01 private; both with a VPC service
	wait.Eventually(t, 3*time.Minute, "every managed resource Ready", allReady(t, ns, 1+2+2+1))
	cft := &v1alpha1.CloudflareTunnel{}
	if err := env.kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: "edge"}, cft); err != nil {
		t.Fatal(err)
	}
	tunnelID := cft.Status.TunnelID
	env.sim.SetConnectors(tunnelID, 2)

	publicHost := "app-00-" + ns + "." + zone
	privateHost := "app-01." + ns + ".svc.cluster.local"
	svcName := "e2e-" + ns + "-app-01"
	zoneID := sim.ZoneID(zone)

	t.Run("CloudflareRouteDeleted", func(t *testing.T) {
		id, _ := liveRoute(privateHost)
		if err := env.cf.DeleteHostnameRoute(ctx, id); err != nil {
			t.Fatal(err)
		}
		wait.Eventually(t, restoreWithin, "the deleted hostname route recreated", func() error {
			if nid, n := liveRoute(privateHost); n != 1 || nid == id {
				return fmt.Errorf("%d live routes for %s (old id %s, now %s)", n, privateHost, id, nid)
			}
			return nil
		})
	})

	t.Run("CloudflareRecordChanged", func(t *testing.T) {
		id, content, _ := record(publicHost)
		rec, err := env.cf.GetDNSRecord(ctx, zoneID, id)
		if err != nil {
			t.Fatal(err)
		}
		rec.Content = "hijacked.example.net"
		if _, err := env.cf.UpdateDNSRecord(ctx, zoneID, id, *rec); err != nil {
			t.Fatal(err)
		}
		wait.Eventually(t, restoreWithin, "the record's content restored", func() error {
			if _, c, n := record(publicHost); n != 1 || c != content {
				return fmt.Errorf("%d records, content %q, want %q", n, c, content)
			}
			return nil
		})
	})

	t.Run("CloudflareRecordDeleted", func(t *testing.T) {
		id, content, _ := record(publicHost)
		if err := env.cf.DeleteDNSRecord(ctx, zoneID, id); err != nil {
			t.Fatal(err)
		}
		wait.Eventually(t, restoreWithin, "the deleted record recreated", func() error {
			if nid, c, n := record(publicHost); n != 1 || nid == id || c != content {
				return fmt.Errorf("%d records (id %s, content %q)", n, nid, c)
			}
			return nil
		})
	})

	t.Run("CloudflareServiceChanged", func(t *testing.T) {
		id, port, _ := serviceNamed(svcName)
		s, err := env.cf.GetService(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if s.TCPPort != nil {
			s.TCPPort = ptrInt64(1)
		} else {
			s.HTTPPort = ptrInt64(1)
		}
		if _, err := env.cf.UpdateService(ctx, id, *s); err != nil {
			t.Fatal(err)
		}
		wait.Eventually(t, restoreWithin, "the service's port restored", func() error {
			if _, p, n := serviceNamed(svcName); n != 1 || p != port {
				return fmt.Errorf("%d services, port %d, want %d", n, p, port)
			}
			return nil
		})
	})

	t.Run("CloudflareTunnelConfigurationOverwritten", func(t *testing.T) {
		if _, err := env.cf.UpdateTunnelConfiguration(ctx, tunnelID, json.RawMessage(`{"ingress":[{"service":"http_status:404"}]}`)); err != nil {
			t.Fatal(err)
		}
		wait.Eventually(t, restoreWithin, "the tunnel's rules restored", func() error {
			if hs := configHostnames(tunnelID); len(hs) != 1 || hs[0] != publicHost {
				return fmt.Errorf("configuration hostnames %v, want [%s]", hs, publicHost)
			}
			return nil
		})
	})

	key := func(name string) client.ObjectKey { return client.ObjectKey{Namespace: ns, Name: name} }
	t.Run("DeploymentDeleted", func(t *testing.T) {
		dep := &appsv1.Deployment{}
		if err := env.kube.Get(ctx, key("edge-cloudflared"), dep); err != nil {
			t.Fatal(err)
		}
		uid := dep.UID
		if err := env.kube.Delete(ctx, dep); err != nil {
			t.Fatal(err)
		}
		wait.Eventually(t, restoreWithin, "the cloudflared Deployment recreated", func() error {
			d := &appsv1.Deployment{}
			if err := env.kube.Get(ctx, key("edge-cloudflared"), d); err != nil {
				return err
			}
			if d.UID == uid {
				return fmt.Errorf("still the old Deployment")
			}
			return nil
		})
	})

	t.Run("DeploymentEdited", func(t *testing.T) {
		var want string
		edit(t, ctx, env.kube, &appsv1.Deployment{}, key("edge-cloudflared"), func(d *appsv1.Deployment) {
			want = d.Spec.Template.Spec.Containers[0].Image
			d.Spec.Template.Spec.Containers[0].Image = "registry.example.com/evil:latest"
		})
		wait.Eventually(t, restoreWithin, "the Deployment's image restored", func() error {
			d := &appsv1.Deployment{}
			if err := env.kube.Get(ctx, key("edge-cloudflared"), d); err != nil {
				return err
			}
			if got := d.Spec.Template.Spec.Containers[0].Image; got != want {
				return fmt.Errorf("image %q, want %q", got, want)
			}
			return nil
		})
	})

	t.Run("TokenSecretDeleted", func(t *testing.T) {
		s := &corev1.Secret{}
		if err := env.kube.Get(ctx, key("edge-token"), s); err != nil {
			t.Fatal(err)
		}
		uid := s.UID
		if err := env.kube.Delete(ctx, s); err != nil {
			t.Fatal(err)
		}
		wait.Eventually(t, restoreWithin, "the token Secret restored", func() error {
			s := &corev1.Secret{}
			if err := env.kube.Get(ctx, key("edge-token"), s); err != nil {
				return err
			}
			if s.UID == uid || len(s.Data) == 0 {
				return fmt.Errorf("not restored yet (%d keys)", len(s.Data))
			}
			return nil
		})
	})

	t.Run("PodDisruptionBudgetDeleted", func(t *testing.T) {
		pdb := &policyv1.PodDisruptionBudget{}
		if err := env.kube.Get(ctx, key("edge-cloudflared"), pdb); err != nil {
			t.Fatal(err)
		}
		uid := pdb.UID
		if err := env.kube.Delete(ctx, pdb); err != nil {
			t.Fatal(err)
		}
		wait.Eventually(t, restoreWithin, "the PodDisruptionBudget recreated", func() error {
			p := &policyv1.PodDisruptionBudget{}
			if err := env.kube.Get(ctx, key("edge-cloudflared"), p); err != nil {
				return err
			}
			if p.UID == uid {
				return fmt.Errorf("still the old PodDisruptionBudget")
			}
			return nil
		})
	})

	t.Run("ManagedResourceDeleted", func(t *testing.T) {
		l := &ztv1alpha1.HostnameRouteList{}
		if err := env.kube.List(ctx, l, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		var mr *ztv1alpha1.HostnameRoute
		for i := range l.Items {
			if l.Items[i].Spec.ForProvider.Hostname == privateHost {
				mr = &l.Items[i]
			}
		}
		if mr == nil {
			t.Fatalf("no HostnameRoute for %s", privateHost)
		}
		uid := mr.UID
		if err := env.kube.Delete(ctx, mr); err != nil {
			t.Fatal(err)
		}
		wait.Eventually(t, restoreWithin+poll, "the HostnameRoute recreated by its Ingress, with one live route in Cloudflare", func() error {
			got := &ztv1alpha1.HostnameRoute{}
			if err := env.kube.Get(ctx, client.ObjectKeyFromObject(mr), got); err != nil {
				return err
			}
			if got.UID == uid || got.GetCondition(xpv2.TypeReady).Status != corev1.ConditionTrue {
				return fmt.Errorf("not recreated and Ready yet")
			}
			if _, n := liveRoute(privateHost); n != 1 {
				return fmt.Errorf("%d live routes for %s", n, privateHost)
			}
			return nil
		})
	})

	t.Run("ManagedResourceEdited", func(t *testing.T) {
		l := &dnsv1alpha1.DNSRecordList{}
		if err := env.kube.List(ctx, l, client.InNamespace(ns)); err != nil || len(l.Items) != 1 {
			t.Fatalf("DNSRecords: %v %d", err, len(l.Items))
		}
		var want string
		rec := &l.Items[0]
		edit(t, ctx, env.kube, &dnsv1alpha1.DNSRecord{}, client.ObjectKeyFromObject(rec), func(r *dnsv1alpha1.DNSRecord) {
			want = r.Spec.ForProvider.Content
			r.Spec.ForProvider.Content = "hijacked.example.net"
		})
		wait.Eventually(t, restoreWithin, "the DNSRecord's spec restored by its Ingress and Cloudflare unchanged", func() error {
			got := &dnsv1alpha1.DNSRecord{}
			if err := env.kube.Get(ctx, client.ObjectKeyFromObject(rec), got); err != nil {
				return err
			}
			if got.Spec.ForProvider.Content != want {
				return fmt.Errorf("spec content %q, want %q", got.Spec.ForProvider.Content, want)
			}
			if _, c, n := record(publicHost); n != 1 || c != want {
				return fmt.Errorf("%d records in Cloudflare, content %q", n, c)
			}
			return nil
		})
	})

	// Finalizers: Cloudflare already lost the object; deleting it in
	// Kubernetes must not wait for anything.
	t.Run("FinalizerWithCloudflareObjectGone", func(t *testing.T) {
		id, _, _ := serviceNamed(svcName)
		if err := env.cf.DeleteService(ctx, id); err != nil {
			t.Fatal(err)
		}
		rid, _ := liveRoute(privateHost)
		if err := env.cf.DeleteHostnameRoute(ctx, rid); err != nil {
			t.Fatal(err)
		}
		if err := env.kube.Delete(ctx, &networkingv1.Ingress{ObjectMeta: objMeta(ns, "app-01")}); err != nil {
			t.Fatal(err)
		}
		wait.Eventually(t, restoreWithin, "the private Ingress and its managed resources gone", func() error {
			if err := env.kube.Get(ctx, key("app-01"), &networkingv1.Ingress{}); !kerrors.IsNotFound(err) {
				return fmt.Errorf("Ingress still there (%v)", err)
			}
			vs := &connv1alpha1.VPCServiceList{}
			if err := env.kube.List(ctx, vs, client.InNamespace(ns)); err != nil {
				return err
			}
			for _, v := range vs.Items {
				if v.Spec.ForProvider.Name == svcName {
					return fmt.Errorf("VPCService %s still there (finalizers %v)", v.Name, v.Finalizers)
				}
			}
			return nil
		})
		if _, _, n := serviceNamed(svcName); n != 0 {
			t.Errorf("the service was recreated while being deleted: %d", n)
		}
	})

	t.Run("TunnelGoneBeforeCloudflareTunnelDeleted", func(t *testing.T) {
		if err := env.kube.Delete(ctx, &networkingv1.Ingress{ObjectMeta: objMeta(ns, "app-00")}); err != nil {
			t.Fatal(err)
		}
		wait.Eventually(t, restoreWithin, "the public Ingress gone", func() error {
			if err := env.kube.Get(ctx, key("app-00"), &networkingv1.Ingress{}); !kerrors.IsNotFound(err) {
				return fmt.Errorf("still there (%v)", err)
			}
			return nil
		})
		// The tunnel disappears in Cloudflare (say, deleted in the dashboard).
		env.sim.SetConnectors(tunnelID, 0)
		if err := env.cf.DeleteTunnel(ctx, tunnelID); err != nil && !cloudflare.IsNotFound(err) {
			t.Fatal(err)
		}
		if err := env.kube.Delete(ctx, cft); err != nil {
			t.Fatal(err)
		}
		wait.Eventually(t, restoreWithin, "the CloudflareTunnel and its Tunnel gone", func() error {
			if err := env.kube.Get(ctx, key("edge"), &v1alpha1.CloudflareTunnel{}); !kerrors.IsNotFound(err) {
				return fmt.Errorf("CloudflareTunnel still there (%v)", err)
			}
			if err := env.kube.Get(ctx, key("edge"), &ztv1alpha1.Tunnel{}); !kerrors.IsNotFound(err) {
				return fmt.Errorf("Tunnel still there (%v)", err)
			}
			return nil
		})
		for _, m := range managed(t, ns) {
			t.Errorf("left behind: %T %s (external-name %s)", m, m.GetName(), meta.GetExternalName(m))
		}
		// Whether or not the provider recreated the tunnel before the
		// delete arrived, none may be left.
		for _, tun := range env.sim.Snapshot().Tunnels {
			if tun.Name == "e2e-"+ns+"-edge" && tun.DeletedAt == nil {
				t.Errorf("tunnel %s (%s) left in Cloudflare", tun.Name, tun.ID)
			}
		}
	})
}

func ptrInt64(v int64) *int64 { return &v }

func objMeta(ns, name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: ns, Name: name} }

// edit changes an object as a person's kubectl edit would: read, change,
// write, and again on a conflict, because the provider and the cluster's own
// controllers write the same objects.
func edit[T client.Object](t *testing.T, ctx context.Context, c client.Client, obj T, k client.ObjectKey, change func(T)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, k, obj); err != nil {
			return err
		}
		change(obj)
		return c.Update(ctx, obj)
	})
	if err != nil {
		t.Fatal(err)
	}
}
