package networkroute_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/common"
	tv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/ownership"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/providertest"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

func virtualNetwork(ns, name, cfName string) *v1alpha1.VirtualNetwork {
	return &v1alpha1.VirtualNetwork{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       v1alpha1.VirtualNetworkSpec{ForProvider: v1alpha1.VirtualNetworkParameters{Name: cfName}},
	}
}

func cfVNet(t *testing.T, id string) *cloudflare.VirtualNetwork {
	t.Helper()
	v, err := p.Cloudflare.GetVirtualNetwork(context.Background(), id)
	if cloudflare.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestVirtualNetworkLifecycle(t *testing.T) {
	ctx := context.Background()
	ns := p.Namespace(t)
	p.ReadyTunnel(t, ns, "edge")
	vn := virtualNetwork(ns, "blue", "blue-"+ns)
	vn.Spec.ForProvider.Comment = ptr.To("cluster blue")
	p.Create(t, vn)
	p.WaitReady(t, vn)
	id := meta.GetExternalName(vn)
	got := cfVNet(t, id)
	if got == nil || got.Name != "blue-"+ns || got.Comment != ownership.Comment("cluster blue", p.Mark(t, v1alpha1.VirtualNetworkKind, vn)) || got.IsDefaultNetwork {
		t.Fatalf("Cloudflare virtual network %+v", got)
	}

	t.Run("DriftIsCorrected", func(t *testing.T) {
		if _, err := p.Cloudflare.UpdateVirtualNetwork(ctx, id, cloudflare.VirtualNetworkInput{Name: "renamed-" + ns, Comment: "by hand"}); err != nil {
			t.Fatal(err)
		}
		wait.Eventually(t, wait.Patience, "name and comment restored", func() error {
			if got := cfVNet(t, id); got == nil || got.Name != "blue-"+ns || !strings.HasPrefix(got.Comment, "cluster blue ") {
				return fmt.Errorf("virtual network %+v", got)
			}
			return nil
		})
	})

	t.Run("DeletionWaitsForItsRoutes", func(t *testing.T) {
		cr := routeTo(ns, "blue-pods", "10.80.0.0/16", "edge")
		cr.Spec.ForProvider.VirtualNetworkIDRef = &xpv2.NamespacedReference{Name: "blue"}
		p.Create(t, cr)
		p.WaitReady(t, cr)
		if err := p.Client.Delete(ctx, vn); err != nil {
			t.Fatal(err)
		}
		c := p.WaitSynced(t, vn, "deletion refused while a route uses it", func(c xpv2.Condition) bool {
			return c.Status == corev1.ConditionFalse && strings.Contains(c.Message, "10.80.0.0/16") && strings.Contains(c.Message, meta.GetExternalName(cr))
		})
		t.Logf("reported: %s", c.Message)
		if cfVNet(t, id) == nil {
			t.Fatal("the virtual network was deleted under its route")
		}
		p.DeleteAndWait(t, cr)
		p.DeleteAndWait(t, vn)
		if got := cfVNet(t, id); got != nil && !got.Deleted() {
			t.Errorf("the virtual network outlived its VirtualNetwork: %+v", got)
		}
	})
}

func TestVirtualNetworkNameTakenIsNeverAdopted(t *testing.T) {
	ctx := context.Background()
	ns := p.Namespace(t)
	foreign, err := p.Cloudflare.CreateVirtualNetwork(ctx, cloudflare.VirtualNetworkInput{Name: "shared-" + ns, Comment: "not yours"})
	if err != nil {
		t.Fatal(err)
	}
	vn := virtualNetwork(ns, "shared", "shared-"+ns)
	p.Create(t, vn)
	c := p.WaitSynced(t, vn, "name taken reported", func(c xpv2.Condition) bool {
		return c.Status == corev1.ConditionFalse && c.Reason == common.ReasonNameTaken && strings.Contains(c.Message, foreign.ID)
	})
	t.Logf("reported: %s", c.Message)
	p.WaitServed(t, 2, "GET", "/teamnet/virtual_networks$") // looked again twice (backoff)
	if got := cfVNet(t, foreign.ID); got == nil || got.Comment != "not yours" {
		t.Errorf("the foreign virtual network was touched: %+v", got)
	}
	p.DeleteAndWait(t, vn)
	if cfVNet(t, foreign.ID) == nil {
		t.Error("deleting the refused VirtualNetwork deleted the foreign one")
	}

	t.Run("ImportedByExternalName", func(t *testing.T) {
		imp := virtualNetwork(ns, "imported", "shared-"+ns)
		meta.SetExternalName(imp, foreign.ID)
		p.Create(t, imp)
		p.WaitReady(t, imp)
		wait.Eventually(t, wait.Patience, "the imported virtual network marked as this resource's", func() error {
			got := cfVNet(t, foreign.ID)
			if got == nil {
				return fmt.Errorf("gone")
			}
			if _, mark, _ := ownership.Split(got.Comment); mark != p.Mark(t, v1alpha1.VirtualNetworkKind, imp) {
				return fmt.Errorf("comment %q", got.Comment)
			}
			return nil
		})
		if err := p.Get(imp); err != nil || ptr.Deref(imp.Spec.ForProvider.Comment, "") != "not yours" {
			t.Errorf("comment not late-initialised from Cloudflare: %+v (%v)", imp.Spec.ForProvider, err)
		}
		p.DeleteAndWait(t, imp)
	})
}

// The account's default can move to a VirtualNetwork, which is then not
// deleted while it is the default.
func TestVirtualNetworkDefault(t *testing.T) {
	ctx := context.Background()
	ns := p.Namespace(t)
	original := defaultVNet(t)
	vn := virtualNetwork(ns, "main", "main-"+ns)
	vn.Spec.ForProvider.IsDefaultNetwork = ptr.To(true)
	p.Create(t, vn)
	p.WaitReady(t, vn)
	id := meta.GetExternalName(vn)
	defer func() {
		// Give the account its default back, whatever happened above.
		if _, err := p.Cloudflare.UpdateVirtualNetwork(ctx, original, cloudflare.VirtualNetworkInput{Name: "default", IsDefaultNetwork: ptr.To(true)}); err != nil {
			t.Errorf("cannot restore the default virtual network: %v", err)
		}
	}()
	if defaultVNet(t) != id {
		t.Fatalf("the default virtual network is %s, want %s", defaultVNet(t), id)
	}
	wait.Eventually(t, wait.Patience, "status says default", func() error {
		if err := p.Get(vn); err != nil || !vn.Status.AtProvider.IsDefaultNetwork {
			return fmt.Errorf("status %+v (%v)", vn.Status.AtProvider, err)
		}
		return nil
	})
	t.Run("ASecondDefaultIsToldNotFought", func(t *testing.T) {
		rival := virtualNetwork(ns, "rival", "rival-"+ns)
		rival.Spec.ForProvider.IsDefaultNetwork = ptr.To(true)
		p.Create(t, rival)
		c := p.WaitSynced(t, rival, "the newer default claim refused", func(c xpv2.Condition) bool {
			return c.Status == corev1.ConditionFalse && strings.Contains(c.Message, ns+"/main, older, also asks to be the account's default")
		})
		t.Logf("reported: %s", c.Message)
		edits := p.Sim.Stats()["virtual_networks.edit"].Requests
		p.WaitServed(t, 4, "GET", "/teamnet/virtual_networks$") // four more observations
		if n := p.Sim.Stats()["virtual_networks.edit"].Requests - edits; n != 0 || defaultVNet(t) != id {
			t.Errorf("%d virtual network updates over four observations, default %s: the two fight over the default", n, defaultVNet(t))
		}
		p.DeleteAndWait(t, rival)
	})
	t.Run("AnotherInstallationTakesItAndKeepsIt", func(t *testing.T) {
		// Another installation (or a hand edit) makes another network the
		// default: this one says so and does not take it back.
		theirs, err := p.Cloudflare.CreateVirtualNetwork(ctx, cloudflare.VirtualNetworkInput{Name: "elsewhere-" + ns, IsDefaultNetwork: ptr.To(true)})
		if err != nil {
			t.Fatal(err)
		}
		c := p.WaitSynced(t, vn, "the lost default reported", func(c xpv2.Condition) bool {
			return c.Status == corev1.ConditionFalse && strings.Contains(c.Message, theirs.ID+" became the account's default after this one held it")
		})
		t.Logf("reported: %s", c.Message)
		// Reads are a get, or a list the provider's snapshot is made of.
		reads := func() int {
			st := p.Sim.Stats()
			return st["virtual_networks.get"].Requests + st["virtual_networks.list"].Requests
		}
		edits, before := p.Sim.Stats()["virtual_networks.edit"].Requests, reads()
		wait.Eventually(t, wait.Patience, "more observations", func() error {
			if n := reads() - before; n < 4 {
				return fmt.Errorf("%d reads since", n)
			}
			return nil
		})
		if n := p.Sim.Stats()["virtual_networks.edit"].Requests - edits; n != 0 || defaultVNet(t) != theirs.ID {
			t.Errorf("%d virtual network updates, default %s: it takes the default back", n, defaultVNet(t))
		}
		if err := p.Get(vn); err != nil || vn.Status.AtProvider.DefaultTakenBy != theirs.ID {
			t.Errorf("status.atProvider.defaultTakenBy %q (%v), want %s", vn.Status.AtProvider.DefaultTakenBy, err, theirs.ID)
		}

		// Asked again (false, then true): it takes the default back.
		p.Edit(t, vn, func() { vn.Spec.ForProvider.IsDefaultNetwork = ptr.To(false) })
		wait.Eventually(t, wait.Patience, "the loss forgotten", func() error {
			if err := p.Get(vn); err != nil || vn.Status.AtProvider.DefaultTakenBy != "" {
				return fmt.Errorf("defaultTakenBy %q (%v)", vn.Status.AtProvider.DefaultTakenBy, err)
			}
			return nil
		})
		p.Edit(t, vn, func() { vn.Spec.ForProvider.IsDefaultNetwork = ptr.To(true) })
		wait.Eventually(t, wait.Patience, "the default taken back", func() error {
			if got := defaultVNet(t); got != id {
				return fmt.Errorf("default %s", got)
			}
			return nil
		})
		if err := p.Cloudflare.DeleteVirtualNetwork(ctx, theirs.ID); err != nil {
			t.Error(err)
		}
	})
	if err := p.Client.Delete(ctx, vn); err != nil {
		t.Fatal(err)
	}
	p.WaitSynced(t, vn, "deleting the default refused", func(c xpv2.Condition) bool {
		return c.Status == corev1.ConditionFalse && strings.Contains(c.Message, "default")
	})
	if cfVNet(t, id) == nil {
		t.Fatal("the account's default virtual network was deleted")
	}
	if _, err := p.Cloudflare.UpdateVirtualNetwork(ctx, original, cloudflare.VirtualNetworkInput{Name: "default", IsDefaultNetwork: ptr.To(true)}); err != nil {
		t.Fatal(err)
	}
	p.DeleteAndWait(t, vn)
}

// TestANamespacedConfigDoesNotMoveTheDefault: a VirtualNetwork through a
// namespace's ProviderConfig may not make itself the account's default
// (which would move every route that names no virtual network) unless the
// config allows it: the network is made, without the flag, and the refusal
// names the rule.
func TestANamespacedConfigDoesNotMoveTheDefault(t *testing.T) {
	ctx := context.Background()
	ns := p.Namespace(t)
	original := defaultVNet(t)
	def := &tv1alpha1.ClusterProviderConfig{}
	if err := p.Client.Get(ctx, types.NamespacedName{Name: "default"}, def); err != nil {
		t.Fatal(err)
	}
	p.Create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "creds"}, StringData: map[string]string{tv1alpha1.DefaultTokenKey: providertest.Token}})
	p.Create(t, &tv1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team"}, Spec: tv1alpha1.ProviderConfigSpec{
		AccountID: providertest.AccountID, Endpoint: def.Spec.Endpoint,
		Credentials: tv1alpha1.ProviderCredentials{Source: tv1alpha1.CredentialsSourceSecret, SecretRef: &tv1alpha1.SecretKeySelector{Name: "creds"}},
	}})
	vn := virtualNetwork(ns, "takeover", "takeover-"+ns)
	vn.Spec.ForProvider.IsDefaultNetwork = ptr.To(true)
	vn.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: "ProviderConfig", Name: "team"}
	p.Create(t, vn)
	p.WaitSynced(t, vn, "the default refused by the guardrail", func(c xpv2.Condition) bool {
		return c.Status == corev1.ConditionFalse && strings.Contains(c.Message, "spec.allow.defaultVirtualNetwork")
	})
	if got := defaultVNet(t); got != original {
		t.Errorf("the account's default moved to %s through a namespaced config", got)
	}
	if id := meta.GetExternalName(vn); id == "" || cfVNet(t, id) == nil || cfVNet(t, id).IsDefaultNetwork {
		t.Errorf("virtual network %q: want it made, without the default flag", id)
	}
	p.DeleteAndWait(t, vn)
}

// A raw virtual network ID of a VirtualNetwork another namespace manages is
// refused, as a raw tunnel ID of another namespace's Tunnel is: one
// namespace must not put routes into another's virtual network (and so hold
// up its deletion).
func TestAnotherNamespacesVirtualNetworkIsRefused(t *testing.T) {
	theirs := p.Namespace(t)
	vn := virtualNetwork(theirs, "private", "private-"+theirs)
	p.Create(t, vn)
	p.WaitReady(t, vn)
	ns := p.Namespace(t)
	p.ReadyTunnel(t, ns, "edge")
	cr := routeTo(ns, "sneaky", "10.95.0.0/16", "edge")
	cr.Spec.ForProvider.VirtualNetworkID = ptr.To(meta.GetExternalName(vn))
	p.Create(t, cr)
	c := p.WaitSynced(t, cr, "refused", func(c xpv2.Condition) bool {
		return c.Status == corev1.ConditionFalse && strings.Contains(c.Message, "is managed by VirtualNetwork "+theirs+"/private in another namespace")
	})
	t.Logf("reported: %s", c.Message)
	if rs := liveRoutes(t, "10.95.0.0/16"); len(rs) != 0 {
		t.Errorf("a route was made in another namespace's virtual network: %+v", rs)
	}
	p.DeleteAndWait(t, cr)
	p.DeleteAndWait(t, vn)
}
