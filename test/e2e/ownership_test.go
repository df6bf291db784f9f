package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	dnsv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/dns/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/composite/cloudflaretunnel"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

// TestTwoClustersOneAccount: two clusters, each with its own control plane
// and its own provider process, manage one Cloudflare account. Each holds
// namespace "edge" with a CloudflareTunnel "edge" and the same two
// Ingresses (one public, one private, both with a VPC service) — so the
// same tunnel name, hostnames and VPC service names. The second cluster
// takes nothing of the first's: its CloudflareTunnel says TunnelNameTaken
// and gets no token; moved onto a tunnel of its own, its Ingresses report
// every taken name (NameTaken events for the VPC services; the DNS record
// and hostname routes name the other installation), and the first cluster's tunnel, token, configuration,
// routes, services and records stay exactly as they were — also after
// everything in the second cluster is deleted.
func TestTwoClustersOneAccount(t *testing.T) {
	ctx := context.Background()
	a := env
	b := env.second(t, "cluster-b")
	const ns, tunnel, apps = "edge", "edge", 2

	a.namespace(t, ns)
	a.workload(t, ns, tunnel, apps)
	wait.Eventually(t, 3*time.Minute, "the first cluster's managed resources Ready", a.allReady(t, ns, 1+2+2+1))
	// And its public hostname in the tunnel's configuration: the managed
	// resources are Ready before the CloudflareTunnel writes it, and a
	// write after the fingerprint below would look like the second
	// cluster's doing.
	wait.Eventually(t, 2*time.Minute, "the first cluster's public hostnames Ready", func() error {
		l := &v1alpha1.PublicHostnameList{}
		if err := a.kube.List(ctx, l, client.InNamespace(ns)); err != nil {
			return err
		}
		if len(l.Items) == 0 {
			return fmt.Errorf("no PublicHostname yet")
		}
		for _, ph := range l.Items {
			if c := ph.GetCondition(xpv2.TypeReady); c.Status != corev1.ConditionTrue {
				return fmt.Errorf("PublicHostname %s: Ready=%s %s: %s", ph.Name, c.Status, c.Reason, c.Message)
			}
		}
		return nil
	})
	cft := &v1alpha1.CloudflareTunnel{}
	if err := a.kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: tunnel}, cft); err != nil {
		t.Fatal(err)
	}
	tunnelID := cft.Status.TunnelID
	a.sim.SetConnectors(tunnelID, 2)
	var ids []string
	for _, m := range a.managed(t, ns) {
		ids = append(ids, meta.GetExternalName(m))
	}
	token := secretData(t, a, ns, cloudflaretunnel.TokenSecretName(cft))
	before := fingerprint(t, ids)

	// The second cluster applies the same manifests.
	b.namespace(t, ns)
	b.workload(t, ns, tunnel, apps)
	wait.Eventually(t, 2*time.Minute, "the second cluster's CloudflareTunnel reports the taken name", func() error {
		got := &v1alpha1.CloudflareTunnel{}
		if err := b.kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: tunnel}, got); err != nil {
			return err
		}
		if c := got.GetCondition(xpv2.TypeReady); c.Reason != v1alpha1.ReasonTunnelNameTaken || !strings.Contains(c.Message, tunnelID) {
			return fmt.Errorf("Ready %s %s: %s", c.Status, c.Reason, c.Message)
		}
		return nil
	})
	if err := b.kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: tunnel + "-token"}, &corev1.Secret{}); !kerrors.IsNotFound(err) {
		t.Errorf("the second cluster has a token Secret for the first cluster's tunnel (%v)", err)
	}

	// Moved onto a tunnel of its own, the second cluster's Ingresses meet
	// every other name of the first's.
	own := &v1alpha1.CloudflareTunnel{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "b"},
		Spec:       v1alpha1.CloudflareTunnelSpec{TunnelName: ptr.To("e2e-" + ns + "-b"), Replicas: ptr.To[int32](1)},
	}
	if err := b.kube.Create(ctx, own); err != nil {
		t.Fatal(err)
	}
	for i := range apps {
		name := fmt.Sprintf("app-%02d", i)
		wait.Eventually(t, time.Minute, "Ingress "+name+" moved", func() error {
			ing := &networkingv1.Ingress{}
			if err := b.kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, ing); err != nil {
				return err
			}
			ing.Annotations[v1alpha1.AnnotationTunnel] = own.Name
			return b.kube.Update(ctx, ing)
		})
	}
	// Both Ingresses' VPC service names are taken: each says so.
	for i := range apps {
		name := fmt.Sprintf("app-%02d", i)
		wait.Eventually(t, 2*time.Minute, "a NameTaken event on "+name, func() error {
			return b.event(ctx, ns, name, "NameTaken", "e2e-edge-"+name)
		})
	}
	// The DNS record of the public one and the hostname routes of both are
	// the first cluster's, by their markers: each resource says whose.
	wait.Eventually(t, 2*time.Minute, "every refused record and route names the other installation", func() error {
		var bad []string
		for _, m := range b.managed(t, ns) {
			switch m.(type) {
			case *dnsv1alpha1.DNSRecord, *ztv1alpha1.HostnameRoute:
				if c := m.GetCondition(xpv2.TypeSynced); c.Status != corev1.ConditionFalse || !strings.Contains(c.Message, "ownership marker names owner") || meta.GetExternalName(m) != "" {
					bad = append(bad, fmt.Sprintf("%T %s: %s %s", m, m.GetName(), c.Status, c.Message))
				}
			}
		}
		if len(bad) > 0 {
			return fmt.Errorf("%s", strings.Join(bad, "; "))
		}
		return nil
	})
	if after := fingerprint(t, ids); after != before {
		t.Errorf("the second cluster changed the first cluster's objects:\nbefore %s\nafter  %s", before, after)
	}

	// Everything in the second cluster is deleted: the first's objects stay.
	var bTunnelID string
	wait.Eventually(t, time.Minute, "the second cluster's own tunnel created", func() error {
		if err := b.kube.Get(ctx, client.ObjectKeyFromObject(own), own); err != nil {
			return err
		}
		if bTunnelID = own.Status.TunnelID; bTunnelID == "" {
			return fmt.Errorf("no tunnel ID yet")
		}
		return nil
	})
	b.deleteNamespace(t, ns, own.Name, bTunnelID, []string{bTunnelID})
	if after := fingerprint(t, ids); after != before {
		t.Errorf("deleting the second cluster's objects changed the first cluster's:\nbefore %s\nafter  %s", before, after)
	}
	if got := secretData(t, a, ns, cloudflaretunnel.TokenSecretName(cft)); got != token {
		t.Error("the first cluster's token Secret changed")
	}
	wait.Eventually(t, time.Minute, "the first cluster still Ready", a.allReady(t, ns, 1+2+2+1))

	a.deleteNamespace(t, ns, tunnel, tunnelID, ids)
}

// fingerprint is the account's objects of the given IDs as JSON, tunnels
// without their connector status.
func fingerprint(t *testing.T, ids []string) string {
	t.Helper()
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	st := env.sim.Snapshot()
	var out []any
	for _, x := range st.Tunnels {
		if want[x.ID] {
			out = append(out, []any{x.ID, x.Name, x.DeletedAt, x.ConfigVersion, x.Config})
		}
	}
	for _, x := range st.HostnameRoutes {
		if want[x.ID] {
			out = append(out, x)
		}
	}
	for _, x := range st.Services {
		if want[x.ServiceID] {
			out = append(out, x)
		}
	}
	for _, x := range st.DNSRecords {
		if want[x.ID] {
			out = append(out, x)
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(ids) {
		t.Fatalf("%d of %d objects live: %s", len(out), len(ids), b)
	}
	return string(b)
}

func secretData(t *testing.T, h *harness, ns, name string) string {
	t.Helper()
	s := &corev1.Secret{}
	if err := h.kube.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, s); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(s.Data)
	return string(b)
}

// event finds an event of reason about the object name in ns whose message
// contains want.
func (h *harness) event(ctx context.Context, ns, name, reason, want string) error {
	evs := &corev1.EventList{}
	if err := h.kube.List(ctx, evs, client.InNamespace(ns)); err != nil {
		return err
	}
	var seen []string
	for _, e := range evs.Items {
		if e.InvolvedObject.Name != name {
			continue
		}
		if e.Reason == reason && strings.Contains(e.Message, want) {
			return nil
		}
		seen = append(seen, e.Reason+": "+e.Message)
	}
	return fmt.Errorf("events of %s: %s", name, strings.Join(seen, " | "))
}
