package tunnel_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/common"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/providertest"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

var p *providertest.Provider

func TestMain(m *testing.M) { os.Exit(providertest.Run(m, &p)) }

func newTunnel(ns, name, cfName string) *v1alpha1.Tunnel {
	return &v1alpha1.Tunnel{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.TunnelSpec{
			ManagedResourceSpec: xpv2.ManagedResourceSpec{WriteConnectionSecretToReference: &xpv2.LocalSecretReference{Name: name + "-token"}},
			ForProvider:         v1alpha1.TunnelParameters{Name: cfName},
		},
	}
}

func cfTunnel(t *testing.T, id string) *cloudflare.Tunnel {
	t.Helper()
	tun, err := p.Cloudflare.GetTunnel(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return tun
}

func liveTunnelsNamed(t *testing.T, name string) []cloudflare.Tunnel {
	t.Helper()
	ts, err := p.Cloudflare.ListTunnels(context.Background(), cloudflare.TunnelFilter{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func TestTunnelLifecycle(t *testing.T) {
	ctx := context.Background()
	ns := p.Namespace(t)
	cr := newTunnel(ns, "edge", "lifecycle-"+ns)
	p.Create(t, cr)
	p.WaitReady(t, cr)

	id := meta.GetExternalName(cr)
	if id == "" || cr.Status.AtProvider.ID != id || cr.Status.AtProvider.Status != "inactive" {
		t.Fatalf("external-name %q, atProvider %+v", id, cr.Status.AtProvider)
	}
	if got := cfTunnel(t, id); got.Name != "lifecycle-"+ns || got.ConfigSrc != "cloudflare" {
		t.Errorf("Cloudflare has %+v", got)
	}

	t.Run("ConnectionSecretHoldsTheRunToken", func(t *testing.T) {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "edge-token"}}
		wait.Eventually(t, wait.Patience, "connection secret with token", func() error {
			if err := p.Get(s); err != nil {
				return err
			}
			if len(s.Data["token"]) == 0 {
				return fmt.Errorf("no token yet: keys %v", len(s.Data))
			}
			return nil
		})
		raw, err := base64.StdEncoding.DecodeString(string(s.Data["token"]))
		if err != nil {
			t.Fatal(err)
		}
		var tok struct{ A, T, S string }
		if err := json.Unmarshal(raw, &tok); err != nil {
			t.Fatal(err)
		}
		if tok.A != providertest.AccountID || tok.T != id || tok.S == "" {
			t.Errorf("token decodes to account %q tunnel %q", tok.A, tok.T)
		}
		if string(s.Data["tunnelID"]) != id || string(s.Data["accountID"]) != providertest.AccountID {
			t.Errorf("secret tunnelID %q accountID %q", s.Data["tunnelID"], s.Data["accountID"])
		}
		// The token is a secret: not in status or events. A failed list or
		// marshal would make this check pass on nothing, so each fails the test.
		b, err := json.Marshal(cr.Status)
		if err != nil {
			t.Fatal(err)
		}
		evs := &corev1.EventList{}
		if err := p.Client.List(ctx, evs); err != nil {
			t.Fatalf("listing events: %v", err)
		}
		eb, err := json.Marshal(evs)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Data["token"]) == 0 {
			t.Fatal("the token Secret holds no token to look for")
		}
		if strings.Contains(string(b), string(s.Data["token"])) || strings.Contains(string(eb), string(s.Data["token"])) {
			t.Error("the run token appears in status or events")
		}
	})

	t.Run("SpecUpdatesReachCloudflare", func(t *testing.T) {
		cfg := &v1alpha1.TunnelConfig{Ingress: []v1alpha1.IngressRule{
			{Hostname: ptr.To("app.example.com"), Service: "http://app." + ns + ".svc.cluster.local:80", OriginRequest: &v1alpha1.OriginRequest{ConnectTimeout: ptr.To[int64](10)}},
			{Service: "http_status:404"},
		}}
		wait.Eventually(t, wait.Patience, "spec update", func() error {
			if err := p.Get(cr); err != nil {
				return err
			}
			cr.Spec.ForProvider.Name = "renamed-" + ns
			cr.Spec.ForProvider.Config = cfg
			return p.Client.Update(ctx, cr)
		})
		wait.Eventually(t, wait.Patience, "rename and configuration in Cloudflare", func() error {
			if got := cfTunnel(t, id); got.Name != "renamed-"+ns {
				return fmt.Errorf("name %q", got.Name)
			}
			tc, err := p.Cloudflare.GetTunnelConfiguration(ctx, id)
			if err != nil {
				return err
			}
			if !strings.Contains(string(tc.Config), `"hostname":"app.example.com"`) || !strings.Contains(string(tc.Config), `"connectTimeout":10`) || tc.Version != 1 {
				return fmt.Errorf("configuration v%d %s", tc.Version, tc.Config)
			}
			return nil
		})
		// The status is written after Cloudflare is: the resource may still
		// be Ready from before the update with the old version in status.
		wait.Eventually(t, wait.Patience, "remoteConfigVersion 1 in status", func() error {
			if err := p.Get(cr); err != nil {
				return err
			}
			if v := cr.Status.AtProvider.RemoteConfigVersion; v != 1 {
				return fmt.Errorf("remoteConfigVersion %d, want 1", v)
			}
			return nil
		})
		p.WaitReady(t, cr)
	})

	t.Run("DriftIsCorrected", func(t *testing.T) {
		if _, err := p.Cloudflare.RenameTunnel(ctx, id, "changed-behind-our-back-"+ns); err != nil {
			t.Fatal(err)
		}
		if _, err := p.Cloudflare.UpdateTunnelConfiguration(ctx, id, json.RawMessage(`{"ingress":[{"service":"http_status:503"}]}`)); err != nil {
			t.Fatal(err)
		}
		wait.Eventually(t, wait.Patience, "drift corrected", func() error {
			if got := cfTunnel(t, id); got.Name != "renamed-"+ns {
				return fmt.Errorf("name still %q", got.Name)
			}
			tc, err := p.Cloudflare.GetTunnelConfiguration(ctx, id)
			if err != nil {
				return err
			}
			if !strings.Contains(string(tc.Config), "app.example.com") {
				return fmt.Errorf("configuration still %s", tc.Config)
			}
			return nil
		})
	})

	t.Run("DeleteWaitsForConnectors", func(t *testing.T) {
		p.Sim.SetConnectors(id, 2)
		wait.Eventually(t, wait.Patience, "connections observed", func() error {
			if err := p.Get(cr); err != nil {
				return err
			}
			if cr.Status.AtProvider.Status != "healthy" || cr.Status.AtProvider.Connections != 8 || cr.Status.AtProvider.Connectors != 2 {
				return fmt.Errorf("atProvider %+v", cr.Status.AtProvider)
			}
			return nil
		})
		if err := p.Client.Delete(ctx, cr); err != nil {
			t.Fatal(err)
		}
		c := p.WaitSynced(t, cr, "deletion refused while connected", func(c xpv2.Condition) bool {
			return c.Status == corev1.ConditionFalse && strings.Contains(c.Message, "connectors are still connected")
		})
		t.Logf("while connected: %s", c.Message)
		if cfTunnel(t, id).Deleted() {
			t.Fatal("tunnel deleted while connectors were connected")
		}
		p.Sim.SetConnectors(id, 0)
		p.DeleteAndWait(t, cr)
		if !cfTunnel(t, id).Deleted() {
			t.Error("the tunnel is not deleted in Cloudflare")
		}
	})
}

func TestTunnelRecreatedWhenDeletedBehindOurBack(t *testing.T) {
	ns := p.Namespace(t)
	cr := newTunnel(ns, "phoenix", "phoenix-"+ns)
	p.Create(t, cr)
	p.WaitReady(t, cr)
	old := meta.GetExternalName(cr)
	if err := p.Cloudflare.DeleteTunnel(context.Background(), old); err != nil {
		t.Fatal(err)
	}
	wait.Eventually(t, wait.Patience, "tunnel recreated", func() error {
		ts := liveTunnelsNamed(t, "phoenix-"+ns)
		if len(ts) != 1 || ts[0].ID == old {
			return fmt.Errorf("live tunnels named phoenix: %d", len(ts))
		}
		if err := p.Get(cr); err != nil {
			return err
		}
		if meta.GetExternalName(cr) != ts[0].ID {
			return fmt.Errorf("external-name %q, want %q", meta.GetExternalName(cr), ts[0].ID)
		}
		return nil
	})
	p.DeleteAndWait(t, cr)
}

func TestTunnelImportObserveOnly(t *testing.T) {
	ctx := context.Background()
	ns := p.Namespace(t)
	existing, err := p.Cloudflare.CreateTunnel(ctx, "imported-"+ns, "cloudflare")
	if err != nil {
		t.Fatal(err)
	}
	cr := newTunnel(ns, "imported", "a-different-name-"+ns)
	cr.Spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionObserve}
	meta.SetExternalName(cr, existing.ID)
	before := p.WriteCalls()
	p.Create(t, cr)
	p.WaitReady(t, cr)
	// Several polls later, nothing was written: the name differs from the
	// spec, but observing never changes Cloudflare.
	p.WaitServed(t, 3, "GET", "/cfd_tunnel$") // the tunnels listed at three more observations
	if got := cfTunnel(t, existing.ID); got.Name != "imported-"+ns {
		t.Errorf("an observe-only Tunnel renamed the tunnel to %q", got.Name)
	}
	if w := p.WriteCalls() - before; w != 0 {
		t.Errorf("%d write calls reached Cloudflare for an observe-only Tunnel", w)
	}
	if cr.Status.AtProvider.ID != existing.ID {
		t.Errorf("atProvider.id %q", cr.Status.AtProvider.ID)
	}
	p.DeleteAndWait(t, cr)
	if cfTunnel(t, existing.ID).Deleted() {
		t.Error("deleting an observe-only Tunnel deleted the tunnel")
	}
}

// TestTunnelCrashAfterCreate: the process died after Cloudflare created the
// tunnel but before the external-name was saved. The next reconcile must
// adopt that tunnel, not create a second one or stop for a human.
func TestTunnelCrashAfterCreate(t *testing.T) {
	ctx := context.Background()
	ns := p.Namespace(t)
	name := "crash-" + ns
	// As the managed reconciler does: the pending time is recorded, then
	// the create sent. This provider, shared by the package's tests, may
	// hold a listing older than the tunnel: a create of unknown outcome is
	// looked for in a new one.
	pending := time.Now()
	if _, err := p.Cloudflare.CreateTunnel(ctx, name, "cloudflare"); err != nil {
		t.Fatal(err)
	}
	cr := newTunnel(ns, "crash", name)
	meta.SetExternalCreatePending(cr, pending)
	p.Create(t, cr)
	p.WaitReady(t, cr)
	if ts := liveTunnelsNamed(t, name); len(ts) != 1 || ts[0].ID != meta.GetExternalName(cr) {
		t.Fatalf("after the crash: %d live tunnels named %s, external-name %q", len(ts), name, meta.GetExternalName(cr))
	}
	p.DeleteAndWait(t, cr)
}

// TestTunnelSteadyStateCostIsIndependentOfCount: once converged, observing
// costs at most one list per observation TTL for all tunnels together — not
// a get per tunnel — and no token or connection calls.
func TestTunnelSteadyStateCostIsIndependentOfCount(t *testing.T) {
	ns := p.Namespace(t)
	var crs []*v1alpha1.Tunnel
	for i := range 6 {
		cr := newTunnel(ns, fmt.Sprintf("quiet-%d", i), fmt.Sprintf("quiet-%d-%s", i, ns))
		p.Create(t, cr)
		crs = append(crs, cr)
	}
	for _, cr := range crs {
		p.WaitReady(t, cr)
	}
	p.WaitServed(t, 2, "GET", "/cfd_tunnel$") // observed since Ready: the connection secrets are written
	r := p.AtRest(t, 4, "/cfd_tunnel$")
	t.Logf("calls in %d observation TTLs of steady state with %d tunnels: %v", r.TTLs, len(crs), r.Calls)
	for op, n := range r.Calls {
		if op != "tunnels.list" && op != "tunnels.get" {
			t.Errorf("steady state called %s %d times; only observation reads are expected", op, n)
		}
	}
	// A get per tunnel per poll would be three per TTL; one list per TTL is one.
	if n := r.Calls["tunnels.list"] + r.Calls["tunnels.get"]; n > r.TTLs+1 {
		t.Errorf("%d reads in %d observation TTLs for %d tunnels; want at most one per TTL, independent of the count", n, r.TTLs, len(crs))
	}
	for _, cr := range crs {
		p.DeleteAndWait(t, cr)
	}
}

// TestATunnelOfTheSameNameMadeElsewhereIsNotAdopted: another cluster (or
// Terraform, or the dashboard) already runs a tunnel of the name this
// Tunnel asks for. A name finds it; it does not prove it is ours: it must
// not be adopted, its token must not be published, and deleting ours must
// not delete it.
func TestATunnelOfTheSameNameMadeElsewhereIsNotAdopted(t *testing.T) {
	ctx := context.Background()
	ns := p.Namespace(t)
	name := "elsewhere-" + ns
	theirs, err := p.Cloudflare.CreateTunnel(ctx, name, "cloudflare")
	if err != nil {
		t.Fatal(err)
	}
	cr := newTunnel(ns, "mine", name)
	p.Create(t, cr)
	var synced xpv2.Condition
	wait.Eventually(t, wait.Patience, "the name refused", func() error {
		if err := p.Get(cr); err != nil {
			return err
		}
		if synced = cr.GetCondition(xpv2.TypeSynced); synced.Status != corev1.ConditionFalse || synced.Reason != common.ReasonNameTaken {
			return fmt.Errorf("Synced %s %s: %s", synced.Status, synced.Reason, synced.Message)
		}
		return nil
	})
	for _, want := range []string{theirs.ID, "crossplane.io/external-name"} {
		if !strings.Contains(synced.Message, want) {
			t.Errorf("message %q does not say %q", synced.Message, want)
		}
	}
	// Looked again twice (lists of tunnels; a refused resource is retried
	// with backoff): it stays refused.
	p.WaitServed(t, 2, "GET", "/cfd_tunnel$")
	if err := p.Get(cr); err != nil {
		t.Fatal(err)
	}
	if id := meta.GetExternalName(cr); id != "" || cr.Status.AtProvider.ID != "" {
		t.Errorf("the foreign tunnel was adopted: external-name %q, atProvider.id %q", id, cr.Status.AtProvider.ID)
	}
	if err := p.Get(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mine-token"}}); !kerrors.IsNotFound(err) {
		t.Errorf("a connection Secret was written for a tunnel this resource does not own (%v)", err)
	}
	if ts := liveTunnelsNamed(t, name); len(ts) != 1 {
		t.Errorf("%d live tunnels named %s, want only theirs", len(ts), name)
	}
	p.DeleteAndWait(t, cr)
	if cfTunnel(t, theirs.ID).Deleted() {
		t.Error("deleting the refused Tunnel deleted the foreign tunnel")
	}

	t.Run("TakenOverOnPurposeByID", func(t *testing.T) {
		cr := newTunnel(ns, "taken-over", name)
		meta.SetExternalName(cr, theirs.ID)
		p.Create(t, cr)
		p.WaitReady(t, cr)
		p.DeleteAndWait(t, cr)
	})
}

// TestConnectorConfigVersions: the Tunnel reads which configuration version
// each connector applied, so a connector that has not picked up the latest
// one shows, and catching up shows too.
func TestConnectorConfigVersions(t *testing.T) {
	ctx := context.Background()
	ns := p.Namespace(t)
	cr := newTunnel(ns, "versions", "versions-"+ns)
	rules := func(svc string) *v1alpha1.TunnelConfig {
		return &v1alpha1.TunnelConfig{Ingress: []v1alpha1.IngressRule{{Hostname: ptr.To("v.example.com"), Service: svc}, {Service: "http_status:404"}}}
	}
	cr.Spec.ForProvider.Config = rules("http://a.web.svc:80")
	p.Create(t, cr)
	p.WaitReady(t, cr)
	id := meta.GetExternalName(cr)
	waitAt := func(what string, ok func(o v1alpha1.TunnelObservation) bool) v1alpha1.TunnelObservation {
		t.Helper()
		wait.Eventually(t, wait.Patience, what, func() error {
			if err := p.Get(cr); err != nil {
				return err
			}
			if !ok(cr.Status.AtProvider) {
				return fmt.Errorf("atProvider %+v", cr.Status.AtProvider)
			}
			return nil
		})
		return cr.Status.AtProvider
	}
	v1 := waitAt("configuration written", func(o v1alpha1.TunnelObservation) bool { return o.RemoteConfigVersion > 0 }).RemoteConfigVersion

	// Two connectors on the current version; the first will not pick up
	// the next one.
	p.Sim.SetConnectorStates(id, []sim.ConnectorState{{Connections: 4, ConfigLag: true}, {Connections: 4}})
	waitAt("both connectors on the latest configuration", func(o v1alpha1.TunnelObservation) bool {
		return o.Connectors == 2 && o.ConnectorsOnLatestConfig == 2 && len(o.ConnectorDetails) == 2
	})
	wait.Eventually(t, wait.Patience, "configuration change", func() error {
		if err := p.Get(cr); err != nil {
			return err
		}
		cr.Spec.ForProvider.Config = rules("http://b.web.svc:80")
		return p.Client.Update(ctx, cr)
	})
	o := waitAt("one connector lags", func(o v1alpha1.TunnelObservation) bool {
		return o.RemoteConfigVersion == v1+1 && o.Connectors == 2 && o.ConnectorsOnLatestConfig == 1
	})
	versions := []int{o.ConnectorDetails[0].ConfigVersion, o.ConnectorDetails[1].ConfigVersion}
	if versions[0] != v1 || versions[1] != v1+1 {
		t.Errorf("connector configuration versions %v, want [%d %d]", versions, v1, v1+1)
	}

	p.Sim.SetConnectorStates(id, []sim.ConnectorState{{Connections: 4}, {Connections: 4}})
	waitAt("caught up", func(o v1alpha1.TunnelObservation) bool { return o.ConnectorsOnLatestConfig == 2 })

	p.Sim.SetConnectors(id, 0)
	p.DeleteAndWait(t, cr)
}
