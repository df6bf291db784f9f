package networkroute_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/common"
	tunnelsv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/ownership"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/providertest"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

// The integration tests of both private-network kinds, NetworkRoute and
// VirtualNetwork, share this package's control plane and simulator.
var p *providertest.Provider

func TestMain(m *testing.M) { os.Exit(providertest.Run(m, &p)) }

func routeTo(ns, name, network, tunnelRef string) *v1alpha1.NetworkRoute {
	return &v1alpha1.NetworkRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.NetworkRouteSpec{ForProvider: v1alpha1.NetworkRouteParameters{
			Network:     network,
			TunnelIDRef: &xpv2.NamespacedReference{Name: tunnelRef},
		}},
	}
}

func cfRoute(t *testing.T, id string) *cloudflare.CIDRRoute {
	t.Helper()
	rs, err := p.Cloudflare.ListCIDRRoutes(context.Background(), cloudflare.CIDRRouteFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range rs {
		if rs[i].ID == id {
			return &rs[i]
		}
	}
	return nil
}

func liveRoutes(t *testing.T, network string) []cloudflare.CIDRRoute {
	t.Helper()
	rs, err := p.Cloudflare.ListCIDRRoutes(context.Background(), cloudflare.CIDRRouteFilter{NetworkSubset: network, NetworkSuperset: network})
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func defaultVNet(t *testing.T) string {
	t.Helper()
	vns, err := p.Cloudflare.ListVirtualNetworks(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vns {
		if v.IsDefaultNetwork {
			return v.ID
		}
	}
	t.Fatal("the simulated account has no default virtual network")
	return ""
}

func updateSpec(t *testing.T, cr *v1alpha1.NetworkRoute, edit func(*v1alpha1.NetworkRouteParameters)) {
	t.Helper()
	wait.Eventually(t, wait.Patience, "spec update", func() error {
		if err := p.Get(cr); err != nil {
			return err
		}
		edit(&cr.Spec.ForProvider)
		return p.Client.Update(context.Background(), cr)
	})
}

func TestNetworkRouteLifecycle(t *testing.T) {
	ctx := context.Background()
	ns := p.Namespace(t)
	tun := p.ReadyTunnel(t, ns, "edge")
	tunnelID := meta.GetExternalName(tun)

	// Written unmasked; Cloudflare stores it masked.
	cr := routeTo(ns, "pods", "10.20.3.4/16", "edge")
	p.Create(t, cr)
	p.WaitReady(t, cr)
	id := meta.GetExternalName(cr)
	r := cfRoute(t, id)
	if r == nil || r.Network != "10.20.0.0/16" || r.TunnelID != tunnelID || r.VirtualNetworkID != defaultVNet(t) {
		t.Fatalf("Cloudflare route %+v, want 10.20.0.0/16 → %s in the default virtual network", r, tunnelID)
	}
	if cr.Spec.ForProvider.VirtualNetworkID != nil || cr.Status.AtProvider.VirtualNetworkID != r.VirtualNetworkID {
		t.Errorf("virtualNetworkId %v in the spec, %q in status; want it unset and the default %s in status", cr.Spec.ForProvider.VirtualNetworkID, cr.Status.AtProvider.VirtualNetworkID, r.VirtualNetworkID)
	}
	if _, mark, _ := ownership.Split(r.Comment); mark != p.Mark(t, v1alpha1.NetworkRouteKind, cr) {
		t.Errorf("comment %q carries no ownership marker of this resource", r.Comment)
	}
	if cr.Status.AtProvider.TunnelID != tunnelID || cr.Status.AtProvider.Network != "10.20.0.0/16" {
		t.Errorf("status.atProvider %+v", cr.Status.AtProvider)
	}
	edits := p.Sim.Stats()["teamnet_routes.edit"].Requests
	p.WaitServed(t, 3, "GET", "/teamnet/routes$") // three more observations
	if n := p.Sim.Stats()["teamnet_routes.edit"].Requests - edits; n != 0 {
		t.Errorf("%d updates of an up-to-date route: networks are not compared masked", n)
	}

	t.Run("UpdateReachesCloudflare", func(t *testing.T) {
		updateSpec(t, cr, func(fp *v1alpha1.NetworkRouteParameters) {
			fp.Comment = ptr.To("team a")
			fp.Network = "10.21.0.0/16"
		})
		wait.Eventually(t, wait.Patience, "comment and network in Cloudflare", func() error {
			got := cfRoute(t, id)
			if got == nil || got.Network != "10.21.0.0/16" || got.Comment != ownership.Comment("team a", p.Mark(t, v1alpha1.NetworkRouteKind, cr)) {
				return fmt.Errorf("route %+v", got)
			}
			return nil
		})
	})

	t.Run("DriftIsCorrected", func(t *testing.T) {
		if _, err := p.Cloudflare.UpdateCIDRRoute(ctx, id, cloudflare.CIDRRouteInput{Network: "10.22.0.0/16", TunnelID: tunnelID, Comment: "changed behind our back"}); err != nil {
			t.Fatal(err)
		}
		wait.Eventually(t, wait.Patience, "changed route corrected", func() error {
			if got := cfRoute(t, id); got == nil || got.Network != "10.21.0.0/16" || !strings.HasPrefix(got.Comment, "team a ") {
				return fmt.Errorf("route %+v", got)
			}
			return nil
		})
		if err := p.Cloudflare.DeleteCIDRRoute(ctx, id); err != nil {
			t.Fatal(err)
		}
		wait.Eventually(t, wait.Patience, "deleted route recreated", func() error {
			rs := liveRoutes(t, "10.21.0.0/16")
			if len(rs) != 1 || rs[0].ID == id {
				return fmt.Errorf("%d live routes for 10.21.0.0/16", len(rs))
			}
			return nil
		})
		p.WaitReady(t, cr)
		id = meta.GetExternalName(cr)
	})

	t.Run("DeleteRemovesTheRoute", func(t *testing.T) {
		p.DeleteAndWait(t, cr)
		if got := cfRoute(t, id); got != nil {
			t.Errorf("the route outlived its NetworkRoute: %+v", got)
		}
		p.DeleteAndWait(t, tun)
	})
}

// A route this provider did not create is never taken over, changed or
// deleted, whether it is for the same network or overlaps it; a route in
// another virtual network does not conflict.
func TestNetworkRouteConflictsAreNeverTakenOver(t *testing.T) {
	ctx := context.Background()
	ns := p.Namespace(t)
	p.ReadyTunnel(t, ns, "mine")
	other, err := p.Cloudflare.CreateTunnel(ctx, "someone-else-"+ns, "cloudflare")
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := p.Cloudflare.CreateCIDRRoute(ctx, cloudflare.CIDRRouteInput{Network: "10.30.0.0/16", TunnelID: other.ID, Comment: "not yours"})
	if err != nil {
		t.Fatal(err)
	}
	for name, network := range map[string]string{"exact": "10.30.0.0/16", "inside": "10.30.1.7/32", "around": "10.30.0.0/15"} {
		cr := routeTo(ns, name, network, "mine")
		p.Create(t, cr)
		c := p.WaitSynced(t, cr, "conflict reported for "+name, func(c xpv2.Condition) bool {
			return c.Status == corev1.ConditionFalse && strings.Contains(c.Message, "conflict") && strings.Contains(c.Message, foreign.ID)
		})
		t.Logf("%s: %s", name, c.Message)
		if meta.GetExternalName(cr) != "" {
			t.Errorf("%s: the foreign route was adopted", name)
		}
		defer p.DeleteAndWait(t, cr)
	}
	p.WaitServed(t, 2, "GET", "/teamnet/routes$") // the refused routes looked again twice (backoff)
	if got := cfRoute(t, foreign.ID); got == nil || got.TunnelID != other.ID || got.Comment != "not yours" {
		t.Errorf("the foreign route was touched: %+v", got)
	}
	if n := len(liveRoutes(t, "10.30.0.0/15")) + len(liveRoutes(t, "10.30.1.7/32")); n != 0 {
		t.Errorf("%d routes were created despite the conflict", n)
	}

	t.Run("AnotherVirtualNetworkDoesNotConflict", func(t *testing.T) {
		vn := &v1alpha1.VirtualNetwork{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "staging"},
			Spec:       v1alpha1.VirtualNetworkSpec{ForProvider: v1alpha1.VirtualNetworkParameters{Name: "staging-" + ns}},
		}
		p.Create(t, vn)
		p.WaitReady(t, vn)
		cr := routeTo(ns, "staging-pods", "10.30.0.0/16", "mine")
		cr.Spec.ForProvider.VirtualNetworkIDRef = &xpv2.NamespacedReference{Name: "staging"}
		p.Create(t, cr)
		p.WaitReady(t, cr)
		if got := cfRoute(t, meta.GetExternalName(cr)); got == nil || got.VirtualNetworkID != meta.GetExternalName(vn) {
			t.Errorf("route %+v, want it in virtual network %s", got, meta.GetExternalName(vn))
		}
		p.DeleteAndWait(t, cr)
		p.DeleteAndWait(t, vn)
	})
}

// TestNetworkRoutesBesideAForeignRouteMadeAMomentBefore: a route made
// outside the provider, then at once NetworkRoutes inside it and around
// it: both are refused and none is left in Cloudflare, however fresh the
// list the provider checked before creating (the create is confirmed
// against a list sent after it).
func TestNetworkRoutesBesideAForeignRouteMadeAMomentBefore(t *testing.T) {
	ctx := context.Background()
	ns := p.Namespace(t)
	p.ReadyTunnel(t, ns, "mine")
	other, err := p.Cloudflare.CreateTunnel(ctx, "someone-else-"+ns, "cloudflare")
	if err != nil {
		t.Fatal(err)
	}
	// Addresses no other test of the package routes: they share the
	// account's default virtual network.
	foreign, err := p.Cloudflare.CreateCIDRRoute(ctx, cloudflare.CIDRRouteInput{Network: "172.20.0.0/16", TunnelID: other.ID, Comment: "not yours"})
	if err != nil {
		t.Fatal(err)
	}
	for name, network := range map[string]string{"inside": "172.20.1.0/24", "around": "172.16.0.0/12"} {
		cr := routeTo(ns, name, network, "mine")
		p.Create(t, cr)
		p.WaitSynced(t, cr, "conflict reported for "+name, func(c xpv2.Condition) bool {
			return c.Status == corev1.ConditionFalse && strings.Contains(c.Message, "conflict") && strings.Contains(c.Message, foreign.ID)
		})
		if n := len(liveRoutes(t, network)); n != 0 {
			t.Errorf("%s: %d routes for %s in Cloudflare beside the foreign %s", name, n, network, foreign.Network)
		}
		p.DeleteAndWait(t, cr)
	}
	if got := cfRoute(t, foreign.ID); got == nil || got.Deleted() || got.Comment != "not yours" {
		t.Errorf("the foreign route was touched: %+v", got)
	}
	if err := p.Cloudflare.DeleteCIDRRoute(ctx, foreign.ID); err != nil {
		t.Fatal(err)
	}
}

// TestANetworkRouteForEveryAddressIsRefused: 0.0.0.0/0 and ::/0 route
// everything, and only a provider config that lists them allows them.
func TestANetworkRouteForEveryAddressIsRefused(t *testing.T) {
	ns := p.Namespace(t)
	p.ReadyTunnel(t, ns, "mine")
	for name, network := range map[string]string{"all-v4": "0.0.0.0/0", "all-v6": "::/0"} {
		cr := routeTo(ns, name, network, "mine")
		p.Create(t, cr)
		p.WaitSynced(t, cr, "refused by the guardrail", func(c xpv2.Condition) bool {
			return c.Status == corev1.ConditionFalse && strings.Contains(c.Message, "spec.allow.networks")
		})
		if n := len(liveRoutes(t, network)); n != 0 {
			t.Errorf("%d routes for %s in Cloudflare", n, network)
		}
		p.DeleteAndWait(t, cr)
	}
}

// TestHalvesOfEveryAddressAreRefused: without allowed networks, no route
// takes a share that routes every WARP client's traffic to one tunnel in
// another spelling than ::/0: the halves of IPv6, or all of IPv4 through
// NAT64 (the well-known prefix, or the local-use one).
func TestHalvesOfEveryAddressAreRefused(t *testing.T) {
	ns := p.Namespace(t)
	p.ReadyTunnel(t, ns, "mine")
	for name, network := range map[string]string{"low-v6": "::/1", "high-v6": "8000::/1", "nat64": "64:ff9b::/96", "nat64-local": "64:ff9b:1::/48"} {
		cr := routeTo(ns, name, network, "mine")
		p.Create(t, cr)
		p.WaitSynced(t, cr, "refused by the guardrail", func(c xpv2.Condition) bool {
			return c.Status == corev1.ConditionFalse && c.Reason == common.ReasonNotAllowed && strings.Contains(c.Message, "spec.allow.networks")
		})
		p.WaitWarning(t, ns, name, "CannotObserveExternalResource", "spec.allow.networks")
		if n := len(liveRoutes(t, network)); n != 0 {
			t.Errorf("%d routes for %s in Cloudflare", n, network)
		}
		p.DeleteAndWait(t, cr)
	}
}

// TestANamespaceRoutesAtMostItsShare: a namespace's routes together take at
// most two /8s of IPv4 without allowed networks, NAT64 routes counted as
// the IPv4 they reach; the oldest keep theirs, the newest is refused until
// an older one goes; a config that lists networks judges each route alone.
func TestANamespaceRoutesAtMostItsShare(t *testing.T) {
	ns := p.Namespace(t)
	p.ReadyTunnel(t, ns, "mine")
	first, second := routeTo(ns, "first", "44.0.0.0/8", "mine"), routeTo(ns, "second", "45.0.0.0/8", "mine")
	for _, cr := range []*v1alpha1.NetworkRoute{first, second} {
		p.Create(t, cr)
		p.WaitReady(t, cr)
	}
	// 46.0.0.0/8 through NAT64.
	third := routeTo(ns, "third", "64:ff9b::2e00:0/104", "mine")
	p.Create(t, third)
	p.WaitSynced(t, third, "refused for what the namespace routes", func(c xpv2.Condition) bool {
		return c.Status == corev1.ConditionFalse && c.Reason == common.ReasonNotAllowed && strings.Contains(c.Message, "together") && strings.Contains(c.Message, "spec.allow.networks")
	})
	if n := len(liveRoutes(t, "64:ff9b::2e00:0/104")); n != 0 {
		t.Errorf("%d routes for the refused network in Cloudflare", n)
	}
	p.WaitReady(t, second)

	p.DeleteAndWait(t, first)
	p.Edit(t, third, func() { meta.AddAnnotations(third, map[string]string{"test/nudge": "first deleted"}) })
	p.WaitReady(t, third)

	p.ClusterConfig(t, "wide-"+ns, func(s *tunnelsv1alpha1.ProviderConfigSpec) {
		s.Allow = &tunnelsv1alpha1.Allowances{Networks: []string{"32.0.0.0/3", "64:ff9b::/96"}}
	})
	listed := routeTo(ns, "listed", "47.0.0.0/8", "mine")
	listed.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: "ClusterProviderConfig", Name: "wide-" + ns}
	p.Create(t, listed)
	p.WaitReady(t, listed)
	for _, cr := range []*v1alpha1.NetworkRoute{listed, third, second} {
		p.DeleteAndWait(t, cr)
	}
}

// Routes this installation made may overlap: a /32 inside a user's /16 is
// the user's own intent.
func TestNetworkRoutesOfThisProviderMayOverlap(t *testing.T) {
	ns := p.Namespace(t)
	p.ReadyTunnel(t, ns, "edge")
	wide := routeTo(ns, "wide", "10.40.0.0/16", "edge")
	p.Create(t, wide)
	p.WaitReady(t, wide)
	one := routeTo(ns, "one", "10.40.0.9/32", "edge")
	p.Create(t, one)
	p.WaitReady(t, one)
	got, err := p.Cloudflare.RouteForIP(context.Background(), "10.40.0.9", "")
	if err != nil || got.ID != meta.GetExternalName(one) {
		t.Errorf("Cloudflare routes 10.40.0.9 by %+v (%v), want the /32 %s", got, err, meta.GetExternalName(one))
	}
	p.DeleteAndWait(t, one)
	p.DeleteAndWait(t, wide)
}

func TestNetworkRouteImportObserveOnly(t *testing.T) {
	ctx := context.Background()
	ns := p.Namespace(t)
	tun, err := p.Cloudflare.CreateTunnel(ctx, "imp-"+ns, "cloudflare")
	if err != nil {
		t.Fatal(err)
	}
	existing, err := p.Cloudflare.CreateCIDRRoute(ctx, cloudflare.CIDRRouteInput{Network: "10.50.0.0/24", TunnelID: tun.ID, Comment: "original"})
	if err != nil {
		t.Fatal(err)
	}
	cr := &v1alpha1.NetworkRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "imported"},
		Spec: v1alpha1.NetworkRouteSpec{
			ManagedResourceSpec: xpv2.ManagedResourceSpec{ManagementPolicies: xpv2.ManagementPolicies{xpv2.ManagementActionObserve}},
			ForProvider:         v1alpha1.NetworkRouteParameters{Network: "10.50.0.0/24", TunnelID: ptr.To(tun.ID)},
		},
	}
	meta.SetExternalName(cr, existing.ID)
	before := p.WriteCalls()
	p.Create(t, cr)
	p.WaitReady(t, cr)
	p.WaitServed(t, 3, "GET", "/teamnet/routes$") // three more observations
	if w := p.WriteCalls() - before; w != 0 {
		t.Errorf("%d write calls for an observe-only NetworkRoute", w)
	}
	if err := p.Get(cr); err != nil {
		t.Fatal(err)
	}
	if ptr.Deref(cr.Spec.ForProvider.Comment, "") != "original" || cr.Status.AtProvider.VirtualNetworkID != existing.VirtualNetworkID {
		t.Errorf("spec not late-initialised from Cloudflare, or status without the virtual network: %+v, %+v", cr.Spec.ForProvider, cr.Status.AtProvider)
	}
	if got := cfRoute(t, existing.ID); got == nil || got.Comment != "original" {
		t.Errorf("observe-only changed the route: %+v", got)
	}
	p.DeleteAndWait(t, cr)
	if cfRoute(t, existing.ID) == nil {
		t.Error("deleting an observe-only NetworkRoute deleted the route")
	}
}

// A create whose response is lost (the route made, a 500 returned) heals
// into one route, found by its natural key and marker: never a duplicate.
func TestNetworkRouteLostCreateResponse(t *testing.T) {
	ns := p.Namespace(t)
	p.ReadyTunnel(t, ns, "lossy")
	lost := p.Sim.LostResponses()["teamnet_routes.create"]
	p.Sim.SetFaults(sim.Faults{LostResponseRate: 1})
	defer p.Sim.SetFaults(sim.Faults{})
	cr := routeTo(ns, "lossy", "10.60.0.0/24", "lossy")
	p.Create(t, cr)
	wait.Eventually(t, wait.Patience, "a lost create response", func() error {
		if n := p.Sim.LostResponses()["teamnet_routes.create"]; n == lost {
			return fmt.Errorf("no create response lost yet")
		}
		return nil
	})
	p.Sim.SetFaults(sim.Faults{})
	p.WaitReady(t, cr)
	rs := liveRoutes(t, "10.60.0.0/24")
	if len(rs) != 1 || rs[0].ID != meta.GetExternalName(cr) {
		t.Fatalf("after a lost create response: %d live routes %+v, external-name %q", len(rs), rs, meta.GetExternalName(cr))
	}
	p.DeleteAndWait(t, cr)
}

// Observing N routes costs one list per observation TTL (half a poll) in
// all, not a call per route.
func TestNetworkRouteSteadyStateIsOneListPerHalfPoll(t *testing.T) {
	ns := p.Namespace(t)
	p.ReadyTunnel(t, ns, "many")
	const n = 20
	var crs []*v1alpha1.NetworkRoute
	for i := range n {
		cr := routeTo(ns, fmt.Sprintf("r%d", i), fmt.Sprintf("10.70.%d.0/24", i), "many")
		p.Create(t, cr)
		crs = append(crs, cr)
	}
	for _, cr := range crs {
		p.WaitReady(t, cr)
	}
	p.WaitServed(t, 2, "GET", "/teamnet/routes$") // observed since Ready
	r := p.AtRest(t, 4, "/teamnet/routes$")
	lists, gets, vnets := r.Calls["teamnet_routes.list"], r.Calls["teamnet_routes.get"], r.Calls["virtual_networks.list"]
	t.Logf("%d routes in %d observation TTLs: %d route lists, %d route gets, %d virtual network lists", n, r.TTLs, lists, gets, vnets)
	// At most one list per kind per TTL, whatever n is.
	if lists > r.TTLs+1 || gets != 0 || vnets > r.TTLs+1 {
		t.Errorf("in %d observation TTLs of %d routes: %d lists, %d gets, %d virtual network lists; want at most one list per TTL and no gets", r.TTLs, n, lists, gets, vnets)
	}
	if w := r.Writes(); w != 0 {
		t.Errorf("%d write calls in steady state", w)
	}
	for _, cr := range crs {
		p.DeleteAndWait(t, cr)
	}
}

// Cloudflare deletes a tunnel's network routes with it. A Tunnel is not
// deleted while a route points at it, so a route someone else made through
// it (here, in the dashboard) is never deleted as a side effect.
func TestATunnelWaitsForTheRoutesThroughIt(t *testing.T) {
	ctx := context.Background()
	ns := p.Namespace(t)
	tun := p.ReadyTunnel(t, ns, "shared")
	tunnelID := meta.GetExternalName(tun)
	theirs, err := p.Cloudflare.CreateCIDRRoute(ctx, cloudflare.CIDRRouteInput{Network: "10.90.0.0/16", TunnelID: tunnelID, Comment: "added in the dashboard"})
	if err != nil {
		t.Fatal(err)
	}
	ours := routeTo(ns, "ours", "10.91.0.0/16", "shared")
	p.Create(t, ours)
	p.WaitReady(t, ours)
	if err := p.Client.Delete(ctx, tun); err != nil {
		t.Fatal(err)
	}
	// Each route is named with the resource that manages it, if any.
	c := p.WaitSynced(t, tun, "deletion refused while a route points at the tunnel", func(c xpv2.Condition) bool {
		return c.Status == corev1.ConditionFalse && strings.Contains(c.Message, "network route(s) still point at it") &&
			strings.Contains(c.Message, "network route "+theirs.ID+" (10.90.0.0/16, managed by no resource of this cluster)") &&
			strings.Contains(c.Message, "network route "+meta.GetExternalName(ours)+" (10.91.0.0/16, managed by NetworkRoute "+ns+"/ours)")
	})
	p.DeleteAndWait(t, ours)
	t.Logf("reported: %s", c.Message)
	if got := cfRoute(t, theirs.ID); got == nil {
		t.Fatal("the route through the tunnel was deleted")
	}
	if got, err := p.Cloudflare.GetTunnel(ctx, tunnelID); err != nil || got.Deleted() {
		t.Fatalf("the tunnel was deleted under its route: %+v (%v)", got, err)
	}
	if err := p.Cloudflare.DeleteCIDRRoute(ctx, theirs.ID); err != nil {
		t.Fatal(err)
	}
	p.DeleteAndWait(t, tun)
}
