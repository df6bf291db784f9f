package tunnel_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/common"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/providertest"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

// TestATunnelTheTokenMayNoLongerReadIsNotMadeAgain: Cloudflare's lists show
// only the tunnels a token may read, so a token whose permissions shrink
// sees its tunnel vanish from them although it still exists. The Tunnel
// asks for it by ID, is refused (403), and says which permission the token
// lacks (Synced=False PermissionDenied and a Warning event), never creating
// a second tunnel; once the permission is back it is Ready again with the
// same tunnel.
func TestATunnelTheTokenMayNoLongerReadIsNotMadeAgain(t *testing.T) {
	ctx := context.Background()
	ns := p.Namespace(t)
	cr := newTunnel(ns, "scoped", "scoped-"+ns)
	p.Create(t, cr)
	p.WaitReady(t, cr)
	id := meta.GetExternalName(cr)
	// The token keeps a role on another tunnel: its lists still work,
	// they leave this one out.
	kept, err := p.Cloudflare.CreateTunnel(ctx, "kept-"+ns, "cloudflare")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Sim.UnscopeToken(providertest.Token)
		_ = p.Cloudflare.DeleteTunnel(ctx, kept.ID)
	})
	tunnels, creates := len(p.Sim.Snapshot().Tunnels), p.Sim.Served("POST", "/cfd_tunnel$")

	p.Sim.ScopeToken(providertest.Token, kept.ID)
	const permission = "Account › Cloudflare Tunnel: Edit"
	synced := p.WaitSynced(t, cr, "Synced=False "+string(common.ReasonPermissionDenied), func(c xpv2.Condition) bool {
		return c.Status == corev1.ConditionFalse && c.Reason == common.ReasonPermissionDenied
	})
	for _, want := range []string{id, permission} {
		if !strings.Contains(synced.Message, want) {
			t.Errorf("Synced message %q does not name %q", synced.Message, want)
		}
	}
	p.WaitWarning(t, ns, cr.Name, "CannotObserveExternalResource", permission)
	// Two more observations, each confirming by ID, and still nothing made.
	p.WaitServed(t, 2, "GET", "/cfd_tunnel/"+id)
	if n := p.Sim.Served("POST", "/cfd_tunnel$") - creates; n != 0 {
		t.Errorf("%d tunnel creates were sent while the token could not read the tunnel", n)
	}
	if n := len(p.Sim.Snapshot().Tunnels); n != tunnels {
		t.Errorf("the account holds %d tunnels, %d before the token lost its permission", n, tunnels)
	}
	if err := p.Get(cr); err != nil {
		t.Fatal(err)
	}
	if got := meta.GetExternalName(cr); got != id {
		t.Errorf("external-name %q while the token could not read the tunnel, want %q", got, id)
	}

	p.Sim.UnscopeToken(providertest.Token)
	// The refused observations were retried with backoff, up to a minute
	// apart: allow two of them.
	wait.Eventually(t, 150*time.Second, "Tunnel Ready and Synced again", func() error {
		if err := p.Get(cr); err != nil {
			return err
		}
		r, s := cr.GetCondition(xpv2.TypeReady), cr.GetCondition(xpv2.TypeSynced)
		if r.Status != corev1.ConditionTrue || s.Status != corev1.ConditionTrue {
			return fmt.Errorf("Ready=%s Synced=%s (%s: %s)", r.Status, s.Status, s.Reason, s.Message)
		}
		return nil
	})
	if got := meta.GetExternalName(cr); got != id || cr.Status.AtProvider.ID != id {
		t.Errorf("after the permission is back: external-name %q, atProvider.id %q; want the same tunnel %s", got, cr.Status.AtProvider.ID, id)
	}
	if ts := liveTunnelsNamed(t, "scoped-"+ns); len(ts) != 1 || ts[0].ID != id {
		t.Errorf("live tunnels named scoped-%s: %v, want only %s", ns, ts, id)
	}
	p.DeleteAndWait(t, cr)
}
