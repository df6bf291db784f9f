package hostnameroute_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	tv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/providerconfig"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/ownership"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/providertest"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

var p *providertest.Provider

func TestMain(m *testing.M) { os.Exit(providertest.Run(m, &p)) }

func routeTo(ns, name, hostname string, tunnelRef string) *v1alpha1.HostnameRoute {
	return &v1alpha1.HostnameRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.HostnameRouteSpec{ForProvider: v1alpha1.HostnameRouteParameters{
			Hostname:    hostname,
			TunnelIDRef: &xpv2.NamespacedReference{Name: tunnelRef},
		}},
	}
}

func cfRoute(t *testing.T, id string) *cloudflare.HostnameRoute {
	t.Helper()
	r, err := p.Cloudflare.GetHostnameRoute(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func liveRoutes(t *testing.T, hostname string) []cloudflare.HostnameRoute {
	t.Helper()
	rs, err := p.Cloudflare.ListHostnameRoutes(context.Background(), cloudflare.HostnameRouteFilter{Hostname: hostname})
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func TestHostnameRouteLifecycle(t *testing.T) {
	ctx := context.Background()
	ns := p.Namespace(t)
	tun := p.ReadyTunnel(t, ns, "edge")
	tunnelID := meta.GetExternalName(tun)

	host := "redis." + ns + ".svc.cluster.local"
	// Written the way users write it; Cloudflare stores it normalised.
	cr := routeTo(ns, "redis", "Redis."+ns+".SVC.cluster.local.", "edge")
	p.Create(t, cr)
	p.WaitReady(t, cr)

	id := meta.GetExternalName(cr)
	r := cfRoute(t, id)
	if r.Hostname != host || r.TunnelID != tunnelID {
		t.Fatalf("Cloudflare route %+v, want %s → %s", r, host, tunnelID)
	}
	if ptr.Deref(cr.Spec.ForProvider.TunnelID, "") != tunnelID {
		t.Errorf("tunnelIdRef resolved to %v, want the Tunnel's external-name %s", cr.Spec.ForProvider.TunnelID, tunnelID)
	}
	// Normalised comparison: no endless updates for a differently written hostname.
	edits := p.Sim.Stats()["hostname_routes.edit"].Requests
	p.WaitServed(t, 6, "GET", "/zerotrust/routes/hostname$") // polls that saw the route
	if n := p.Sim.Stats()["hostname_routes.edit"].Requests - edits; n != 0 {
		t.Errorf("%d updates of an up-to-date route: hostnames are not compared normalised", n)
	}

	t.Run("UpdateReachesCloudflare", func(t *testing.T) {
		wait.Eventually(t, wait.Patience, "spec update", func() error {
			if err := p.Get(cr); err != nil {
				return err
			}
			cr.Spec.ForProvider.Comment = ptr.To("team a")
			return p.Client.Update(ctx, cr)
		})
		wait.Eventually(t, wait.Patience, "comment in Cloudflare", func() error {
			if c := cfRoute(t, id).Comment; c != ownership.Comment("team a", p.Mark(t, v1alpha1.HostnameRouteKind, cr)) {
				return fmt.Errorf("comment %q", c)
			}
			return nil
		})
	})

	t.Run("DriftIsCorrected", func(t *testing.T) {
		if _, err := p.Cloudflare.UpdateHostnameRoute(ctx, id, cloudflare.HostnameRouteInput{Hostname: host, TunnelID: tunnelID, Comment: "changed behind our back"}); err != nil {
			t.Fatal(err)
		}
		wait.Eventually(t, wait.Patience, "changed route corrected", func() error {
			if c := cfRoute(t, id).Comment; c != ownership.Comment("team a", p.Mark(t, v1alpha1.HostnameRouteKind, cr)) {
				return fmt.Errorf("comment %q", c)
			}
			return nil
		})
		if err := p.Cloudflare.DeleteHostnameRoute(ctx, id); err != nil {
			t.Fatal(err)
		}
		wait.Eventually(t, wait.Patience, "deleted route recreated", func() error {
			rs := liveRoutes(t, host)
			if len(rs) != 1 || rs[0].ID == id {
				return fmt.Errorf("%d live routes for %s", len(rs), host)
			}
			if err := p.Get(cr); err != nil {
				return err
			}
			if meta.GetExternalName(cr) != rs[0].ID {
				return fmt.Errorf("external-name %q, want %q", meta.GetExternalName(cr), rs[0].ID)
			}
			id = rs[0].ID
			return nil
		})
	})

	t.Run("TunnelDeletionWaitsForTheRoute", func(t *testing.T) {
		if err := p.Client.Delete(ctx, tun); err != nil {
			t.Fatal(err)
		}
		// The message names what it waits for: the route's ID, its
		// hostname and the HostnameRoute that manages it.
		p.WaitSynced(t, tun, "tunnel deletion refused while routed", func(c xpv2.Condition) bool {
			return c.Status == corev1.ConditionFalse && strings.Contains(c.Message, "routes still point at it") &&
				strings.Contains(c.Message, "hostname route "+id+" ("+host+", managed by HostnameRoute "+ns+"/redis)")
		})
		p.DeleteAndWait(t, cr)
		if !cfRoute(t, id).Deleted() {
			t.Error("the route was not deleted in Cloudflare")
		}
		p.DeleteAndWait(t, tun)
	})
}

func TestHostnameRouteConflictIsNeverTakenOver(t *testing.T) {
	ctx := context.Background()
	ns := p.Namespace(t)
	mine := p.ReadyTunnel(t, ns, "mine")
	other, err := p.Cloudflare.CreateTunnel(ctx, "someone-else-"+ns, "cloudflare")
	if err != nil {
		t.Fatal(err)
	}
	host := "db." + ns + ".internal"
	foreign, err := p.Cloudflare.CreateHostnameRoute(ctx, cloudflare.HostnameRouteInput{Hostname: host, TunnelID: other.ID, Comment: "not yours"})
	if err != nil {
		t.Fatal(err)
	}
	cr := routeTo(ns, "db", host, "mine")
	// With the managed reconciler's finalizer from the start, as when the
	// first observation did not see the other route yet (a cached list):
	// the resource must still be deletable.
	cr.Finalizers = []string{"finalizer.managedresource.crossplane.io"}
	p.Create(t, cr)
	c := p.WaitSynced(t, cr, "conflict reported", func(c xpv2.Condition) bool {
		return c.Status == corev1.ConditionFalse && strings.Contains(c.Message, "conflict") && strings.Contains(c.Message, other.ID)
	})
	t.Logf("reported: %s", c.Message)
	p.WaitServed(t, 2, "GET", "/zerotrust/routes/hostname$") // looked again twice (backoff)
	got := cfRoute(t, foreign.ID)
	if got.TunnelID != other.ID || got.Comment != "not yours" || got.Deleted() {
		t.Errorf("the foreign route was touched: %+v", got)
	}
	if meta.GetExternalName(cr) != "" {
		t.Errorf("the foreign route was adopted: external-name %q", meta.GetExternalName(cr))
	}
	p.DeleteAndWait(t, cr)
	if cfRoute(t, foreign.ID).Deleted() {
		t.Error("deleting the conflicting resource deleted the foreign route")
	}
	p.DeleteAndWait(t, mine)
}

func TestHostnameRouteImportObserveOnly(t *testing.T) {
	ctx := context.Background()
	ns := p.Namespace(t)
	tun, err := p.Cloudflare.CreateTunnel(ctx, "imp-"+ns, "cloudflare")
	if err != nil {
		t.Fatal(err)
	}
	existing, err := p.Cloudflare.CreateHostnameRoute(ctx, cloudflare.HostnameRouteInput{Hostname: "imp." + ns + ".internal", TunnelID: tun.ID, Comment: "original"})
	if err != nil {
		t.Fatal(err)
	}
	cr := &v1alpha1.HostnameRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "imported"},
		Spec: v1alpha1.HostnameRouteSpec{
			ManagedResourceSpec: xpv2.ManagedResourceSpec{ManagementPolicies: xpv2.ManagementPolicies{xpv2.ManagementActionObserve}},
			ForProvider:         v1alpha1.HostnameRouteParameters{Hostname: "imp." + ns + ".internal", TunnelID: ptr.To(tun.ID), Comment: ptr.To("desired differs")},
		},
	}
	meta.SetExternalName(cr, existing.ID)
	before := p.WriteCalls()
	p.Create(t, cr)
	p.WaitReady(t, cr)
	p.WaitServed(t, 3, "GET", "/zerotrust/routes/hostname$") // three more observations
	if w := p.WriteCalls() - before; w != 0 {
		t.Errorf("%d write calls for an observe-only HostnameRoute", w)
	}
	if got := cfRoute(t, existing.ID); got.Comment != "original" {
		t.Errorf("observe-only changed the route: %+v", got)
	}
	p.DeleteAndWait(t, cr)
	if cfRoute(t, existing.ID).Deleted() {
		t.Error("deleting an observe-only HostnameRoute deleted the route")
	}
}

func TestHostnameRouteCrashAfterCreate(t *testing.T) {
	ctx := context.Background()
	ns := p.Namespace(t)
	tun := p.ReadyTunnel(t, ns, "crash")
	host := "crash." + ns + ".internal"
	cr := routeTo(ns, "crash", host, "crash")
	// What the lost create left: the route, with this resource's marker.
	if _, err := p.Cloudflare.CreateHostnameRoute(ctx, cloudflare.HostnameRouteInput{Hostname: host, TunnelID: meta.GetExternalName(tun), Comment: ownership.Comment("", p.Mark(t, v1alpha1.HostnameRouteKind, cr))}); err != nil {
		t.Fatal(err)
	}
	meta.SetExternalCreatePending(cr, time.Now().Add(-time.Second))
	p.Create(t, cr)
	p.WaitReady(t, cr)
	if rs := liveRoutes(t, host); len(rs) != 1 || rs[0].ID != meta.GetExternalName(cr) {
		t.Fatalf("after the crash: %d live routes, external-name %q", len(rs), meta.GetExternalName(cr))
	}
	p.DeleteAndWait(t, cr)
	p.DeleteAndWait(t, tun)
}

func TestHostnameRouteRefusesOtherNamespaces(t *testing.T) {
	ns := p.Namespace(t)
	other := p.Namespace(t)
	p.ReadyTunnel(t, other, "theirs")
	cr := routeTo(ns, "sneaky", "sneaky."+ns+".internal", "theirs")
	cr.Spec.ForProvider.TunnelIDRef.Namespace = other
	p.Create(t, cr)
	p.WaitSynced(t, cr, "cross-namespace reference refused", func(c xpv2.Condition) bool {
		return c.Status == corev1.ConditionFalse && strings.Contains(c.Message, "other namespaces are not allowed")
	})
	if rs := liveRoutes(t, "sneaky."+ns+".internal"); len(rs) != 0 {
		t.Errorf("a route was created through a cross-namespace reference: %+v", rs)
	}
	p.DeleteAndWait(t, cr)
}

// A raw tunnelId is no way around the same-namespace rule: tunnel IDs are
// public (every proxied CNAME names one), so a route may not point at a
// tunnel another namespace manages.
func TestHostnameRouteRefusesAnotherNamespacesTunnelByID(t *testing.T) {
	ns := p.Namespace(t)
	other := p.Namespace(t)
	theirs := p.ReadyTunnel(t, other, "theirs")
	cr := routeTo(ns, "by-id", "by-id."+ns+".internal", "unused")
	cr.Spec.ForProvider.TunnelIDRef = nil
	cr.Spec.ForProvider.TunnelID = ptr.To(meta.GetExternalName(theirs))
	p.Create(t, cr)
	p.WaitSynced(t, cr, "a foreign tunnel ID refused", func(c xpv2.Condition) bool {
		return c.Status == corev1.ConditionFalse && strings.Contains(c.Message, "managed by Tunnel "+other+"/theirs in another namespace")
	})
	if rs := liveRoutes(t, "by-id."+ns+".internal"); len(rs) != 0 {
		t.Errorf("a route into another namespace's tunnel was created: %+v", rs)
	}
	// The same ID through a Tunnel of its own namespace (an import of the
	// same tunnel there) would be allowed; deleting the refused route
	// touches nothing.
	p.DeleteAndWait(t, cr)
}

// TestHostnameRouteRefusesATunnelOnlyADecoyNames: an Observe-only Tunnel
// in the route's namespace naming another namespace's tunnel is refused,
// and being there does not make that tunnel the namespace's own — whether
// it was made after the tunnel or before it, its external-name set later.
func TestHostnameRouteRefusesATunnelOnlyADecoyNames(t *testing.T) {
	for _, early := range []bool{false, true} {
		t.Run(fmt.Sprintf("DecoyMadeBeforeTheTunnel=%t", early), func(t *testing.T) {
			ctx := context.Background()
			ns := p.Namespace(t)
			other := p.Namespace(t)
			decoy := &v1alpha1.Tunnel{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "decoy"},
				Spec: v1alpha1.TunnelSpec{
					ManagedResourceSpec: xpv2.ManagedResourceSpec{ManagementPolicies: xpv2.ManagementPolicies{xpv2.ManagementActionObserve}},
					ForProvider:         v1alpha1.TunnelParameters{Name: "decoy-" + ns},
				},
			}
			if early {
				meta.SetExternalName(decoy, "00000000-0000-4000-8000-000000000000")
				p.Create(t, decoy)
			}
			theirs := p.ReadyTunnel(t, other, "theirs")
			theirID := meta.GetExternalName(theirs)
			if early {
				wait.Eventually(t, wait.Patience, "the decoy's external-name set to their tunnel", func() error {
					if err := p.Get(decoy); err != nil {
						return err
					}
					meta.SetExternalName(decoy, theirID)
					return p.Client.Update(ctx, decoy)
				})
			} else {
				meta.SetExternalName(decoy, theirID)
				p.Create(t, decoy)
			}
			p.WaitSynced(t, decoy, "the decoy refused", func(c xpv2.Condition) bool {
				return c.Status == corev1.ConditionFalse && strings.Contains(c.Message, "already managed by "+other+"/theirs")
			})

			cr := routeTo(ns, "by-id", "by-id."+ns+".internal", "unused")
			cr.Spec.ForProvider.TunnelIDRef = nil
			cr.Spec.ForProvider.TunnelID = ptr.To(theirID)
			p.Create(t, cr)
			p.WaitSynced(t, cr, "their tunnel refused despite the decoy", func(c xpv2.Condition) bool {
				return c.Status == corev1.ConditionFalse && strings.Contains(c.Message, "managed by Tunnel "+other+"/theirs in another namespace")
			})
			if rs := liveRoutes(t, "by-id."+ns+".internal"); len(rs) != 0 {
				t.Errorf("a route into another namespace's tunnel was created: %+v", rs)
			}
			if err := p.Get(theirs); err != nil {
				t.Fatal(err)
			}
			if c := theirs.GetCondition(xpv2.TypeSynced); c.Status != corev1.ConditionTrue {
				t.Errorf("their Tunnel lost its tunnel to the decoy: Synced=%s %q", c.Status, c.Message)
			}
			p.DeleteAndWait(t, cr)
			p.DeleteAndWait(t, decoy)
			p.DeleteAndWait(t, theirs)
		})
	}
}

// TestHostnameRouteDeletedWithItsNamespace deletes the namespace a route and
// its tunnel live in, as `kubectl delete namespace` does: the namespace
// turns Terminating, the namespace controller deletes the usage records with
// the rest of its content, and the API server refuses anything new there.
// The resources must still be deleted in Cloudflare and lose their
// finalizers, or the namespace never goes away.
func TestHostnameRouteDeletedWithItsNamespace(t *testing.T) {
	ctx := context.Background()
	ns := p.Namespace(t)
	tun := p.ReadyTunnel(t, ns, "edge")
	cr := routeTo(ns, "web", "web."+ns+".internal", "edge")
	p.Create(t, cr)
	p.WaitReady(t, cr)
	routeID, tunnelID := meta.GetExternalName(cr), meta.GetExternalName(tun)

	if err := p.Client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	// envtest runs no namespace controller: do its part for the usage
	// records (the managed resources are deleted below, as it would).
	if err := p.Client.DeleteAllOf(ctx, &tv1alpha1.ProviderConfigUsage{}, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	probe := &tv1alpha1.ProviderConfigUsage{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "probe"}}
	if err := p.Client.Create(ctx, probe, client.DryRunAll); !kerrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
		t.Fatalf("creating in the terminating namespace: got %v, want the NamespaceTerminating refusal", err)
	}

	p.DeleteAndWait(t, cr)
	p.DeleteAndWait(t, tun)
	if !cfRoute(t, routeID).Deleted() {
		t.Errorf("route %s was not deleted in Cloudflare", routeID)
	}
	if tn, err := p.Cloudflare.GetTunnel(ctx, tunnelID); err != nil || !tn.Deleted() {
		t.Errorf("tunnel %s was not deleted in Cloudflare (err %v)", tunnelID, err)
	}
}

// TestNamespacedCredentialsOutliveTheirUsers deletes a namespace whose
// resources use a ProviderConfig and token Secret of that namespace. The
// namespace controller deletes everything at once — the Secret first, as it
// has no finalizer — yet the resources must still reach Cloudflare to delete
// their objects, and the Secret and ProviderConfig must go once they have.
func TestNamespacedCredentialsOutliveTheirUsers(t *testing.T) {
	ctx := context.Background()
	ns := p.Namespace(t)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team-token"}, StringData: map[string]string{tv1alpha1.DefaultTokenKey: providertest.Token}}
	p.Create(t, secret)
	cpc := &tv1alpha1.ClusterProviderConfig{}
	if err := p.Client.Get(ctx, client.ObjectKey{Name: "default"}, cpc); err != nil {
		t.Fatal(err)
	}
	pc := &tv1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team"}, Spec: tv1alpha1.ProviderConfigSpec{
		AccountID: cpc.Spec.AccountID, Endpoint: cpc.Spec.Endpoint,
		Credentials: tv1alpha1.ProviderCredentials{Source: tv1alpha1.CredentialsSourceSecret, SecretRef: &tv1alpha1.SecretKeySelector{Name: secret.Name}},
	}}
	p.Create(t, pc)
	teamConfig := &xpv2.ProviderConfigReference{Kind: tv1alpha1.ProviderConfigKind, Name: pc.Name}

	tun := &v1alpha1.Tunnel{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "edge"}, Spec: v1alpha1.TunnelSpec{ForProvider: v1alpha1.TunnelParameters{Name: "edge-" + ns}}}
	tun.Spec.ProviderConfigReference = teamConfig
	p.Create(t, tun)
	p.WaitReady(t, tun)
	cr := routeTo(ns, "web", "web."+ns+".internal", "edge")
	cr.Spec.ProviderConfigReference = teamConfig
	p.Create(t, cr)
	p.WaitReady(t, cr)
	routeID, tunnelID := meta.GetExternalName(cr), meta.GetExternalName(tun)

	kept := func(o client.Object) error {
		if err := p.Get(o); err != nil {
			return err
		}
		if !slices.Contains(o.GetFinalizers(), providerconfig.FinalizerCredentialsInUse) {
			return fmt.Errorf("%T %s has finalizers %v", o, o.GetName(), o.GetFinalizers())
		}
		return nil
	}
	wait.Eventually(t, wait.Patience, "Secret and ProviderConfig kept for their users", func() error { return errors.Join(kept(secret), kept(pc)) })

	// What the namespace controller does, all at once (envtest has none).
	if err := p.Client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	for _, o := range []client.Object{secret, pc, cr, tun} {
		if err := p.Client.Delete(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Client.DeleteAllOf(ctx, &tv1alpha1.ProviderConfigUsage{}, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}

	p.DeleteAndWait(t, cr)
	p.DeleteAndWait(t, tun)
	if !cfRoute(t, routeID).Deleted() {
		t.Errorf("route %s was not deleted in Cloudflare", routeID)
	}
	if tn, err := p.Cloudflare.GetTunnel(ctx, tunnelID); err != nil || !tn.Deleted() {
		t.Errorf("tunnel %s was not deleted in Cloudflare (err %v)", tunnelID, err)
	}
	// Nothing holds the credentials once their users are gone.
	p.DeleteAndWait(t, secret)
	p.DeleteAndWait(t, pc)
}

// TestAHostnameRouteIsAdoptedOnlyWithItsMarker: a route into our own tunnel
// made by someone else (by hand, another tool) is found by its hostname but
// not taken: the tunnel being ours does not make the route ours. A route
// carrying this resource's ownership marker — what a rebuilt cluster with
// the same owner ID finds — is adopted without a create.
func TestAHostnameRouteIsAdoptedOnlyWithItsMarker(t *testing.T) {
	ctx := context.Background()
	ns := p.Namespace(t)
	tun := p.ReadyTunnel(t, ns, "edge")

	byHand := "byhand." + ns + ".internal"
	foreign, err := p.Cloudflare.CreateHostnameRoute(ctx, cloudflare.HostnameRouteInput{Hostname: byHand, TunnelID: meta.GetExternalName(tun), Comment: "made by hand"})
	if err != nil {
		t.Fatal(err)
	}
	refused := routeTo(ns, "byhand", byHand, "edge")
	p.Create(t, refused)
	c := p.WaitSynced(t, refused, "the unmarked route refused", func(c xpv2.Condition) bool {
		return c.Status == corev1.ConditionFalse && strings.Contains(c.Message, foreign.ID) && strings.Contains(c.Message, "no ownership marker")
	})
	t.Logf("reported: %s", c.Message)

	rebuilt := routeTo(ns, "rebuilt", "rebuilt."+ns+".internal", "edge")
	mine, err := p.Cloudflare.CreateHostnameRoute(ctx, cloudflare.HostnameRouteInput{
		Hostname: rebuilt.Spec.ForProvider.Hostname, TunnelID: meta.GetExternalName(tun),
		Comment: ownership.Comment("", p.Mark(t, v1alpha1.HostnameRouteKind, rebuilt)),
	})
	if err != nil {
		t.Fatal(err)
	}
	p.Create(t, rebuilt)
	p.WaitReady(t, rebuilt)
	if got := meta.GetExternalName(rebuilt); got != mine.ID {
		t.Errorf("external-name %q, want the marked route %s", got, mine.ID)
	}
	// A create may still be tried when the account's cached listing
	// predates the route; Cloudflare refuses it and the route is adopted.
	if rs := liveRoutes(t, rebuilt.Spec.ForProvider.Hostname); len(rs) != 1 || rs[0].ID != mine.ID {
		t.Errorf("live routes for %s: %+v, want only %s", rebuilt.Spec.ForProvider.Hostname, rs, mine.ID)
	}

	if got := cfRoute(t, foreign.ID); got.Comment != "made by hand" || got.Deleted() || meta.GetExternalName(refused) != "" {
		t.Errorf("the unmarked route was touched or adopted: %+v, external-name %q", got, meta.GetExternalName(refused))
	}
	p.DeleteAndWait(t, refused)
	if cfRoute(t, foreign.ID).Deleted() {
		t.Error("deleting the refused resource deleted the route made by hand")
	}
	p.DeleteAndWait(t, rebuilt)
	if !cfRoute(t, mine.ID).Deleted() {
		t.Error("the adopted route outlived its resource")
	}
	// The route made by hand still holds the tunnel: its maker removes it.
	if err := p.Cloudflare.DeleteHostnameRoute(ctx, foreign.ID); err != nil {
		t.Fatal(err)
	}
	p.DeleteAndWait(t, tun)
}
