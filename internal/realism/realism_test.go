package realism_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare/budget"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/mr"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/providertest"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

var p *providertest.Provider

const (
	// listLag is longer than a poll (2 s) and than the observation TTL
	// (1 s), so every list the provider sends after a create misses it for
	// a while; it is well inside the creation grace period.
	listLag = 5 * time.Second
	// linger is how long stopped connectors stay listed: shorter than
	// Cloudflare's ~30 s, to keep the suite quick.
	linger = 10 * time.Second
)

func TestMain(m *testing.M) {
	os.Exit(providertest.RunWithOptions(m, &p, providertest.Options{
		ListLag:         listLag,
		ConnectorLinger: linger,
		// Cloudflare's real limit, and the provider's real, default budget.
		RateLimit:  sim.CloudflareRateLimit,
		RateWindow: sim.CloudflareRateWindow,
		Budgets:    budget.NewRegistry(budget.Options{}),
		// Production's: a create that lists miss is not taken for a deletion.
		CreationGracePeriod: mr.DefaultCreationGracePeriod,
	}))
}

// noneRateLimited fails the test if Cloudflare's limit refused any call so
// far: at its default budget the provider stays under it.
func noneRateLimited(t *testing.T) {
	t.Helper()
	for op, st := range p.Sim.Stats() {
		if st.RateLimited > 0 {
			t.Errorf("%d %s calls answered 429 under Cloudflare's real rate limit", st.RateLimited, op)
		}
	}
}

func routeTo(ns, name, hostname, tunnelRef string) *v1alpha1.HostnameRoute {
	return &v1alpha1.HostnameRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.HostnameRouteSpec{ForProvider: v1alpha1.HostnameRouteParameters{
			Hostname:    hostname,
			TunnelIDRef: &xpv2.NamespacedReference{Name: tunnelRef},
		}},
	}
}

// liveRoutes are the account's live hostname routes for host, read from the
// simulator's state: lists lag here, the state does not.
func liveRoutes(host string) []string {
	var ids []string
	for _, r := range p.Sim.Snapshot().HostnameRoutes {
		if r.Hostname == host && r.DeletedAt == nil {
			ids = append(ids, r.ID)
		}
	}
	return ids
}

// routesEver are the routes for host the account ever held, deleted or not.
func routesEver(host string) []string {
	var ids []string
	for _, r := range p.Sim.Snapshot().HostnameRoutes {
		if r.Hostname == host {
			ids = append(ids, r.ID)
		}
	}
	return ids
}

// TestALostCreateUnderListLagLeavesNoDuplicate: a route's create happens
// but its answer is lost (as when the provider crashes before saving the
// external-name), and for five seconds no list shows the route. The
// provider must neither make a second route nor give up: it finds the
// route once lists show it and adopts it, since it was created after this
// resource asked, which is the proof a name alone is not. All of it under
// the production creation grace period.
func TestALostCreateUnderListLagLeavesNoDuplicate(t *testing.T) {
	ns := p.Namespace(t)
	p.ReadyTunnel(t, ns, "edge")
	host := "lost." + ns + ".svc.cluster.local"
	lost := p.Sim.LostResponses()["hostname_routes.create"]

	p.Sim.LoseNext("hostname_routes.create", 1)
	cr := routeTo(ns, "lost", host, "edge")
	p.Create(t, cr)
	p.WaitReady(t, cr)

	if n := p.Sim.LostResponses()["hostname_routes.create"] - lost; n != 1 {
		t.Fatalf("%d create answers lost, want 1: the test did not test a lost create", n)
	}
	ids := liveRoutes(host)
	if len(ids) != 1 {
		t.Fatalf("%d live routes for %s, want exactly 1: %v", len(ids), host, ids)
	}
	if got := meta.GetExternalName(cr); got != ids[0] {
		t.Errorf("external-name %q, want the route the lost create made (%s)", got, ids[0])
	}
	if n := len(routesEver(host)); n != 1 {
		t.Errorf("%d routes ever made for %s, want 1 (a duplicate made and deleted counts)", n, host)
	}
	noneRateLimited(t)
}

// TestARouteMadeElsewhereUnderListLagIsNotAdopted: a route for the same
// hostname made by someone else a moment before this resource, still
// missing from lists when the resource is created: a name is not proof, so
// it is reported and never adopted, changed or deleted.
func TestARouteMadeElsewhereUnderListLagIsNotAdopted(t *testing.T) {
	ctx := context.Background()
	ns := p.Namespace(t)
	tun := p.ReadyTunnel(t, ns, "edge")
	host := "theirs." + ns + ".svc.cluster.local"
	foreign, err := p.Cloudflare.CreateHostnameRoute(ctx, cloudflare.HostnameRouteInput{Hostname: host, TunnelID: meta.GetExternalName(tun), Comment: "made by hand"})
	if err != nil {
		t.Fatal(err)
	}
	cr := routeTo(ns, "theirs", host, "edge")
	p.Create(t, cr)
	c := p.WaitSynced(t, cr, "the foreign route reported", func(c xpv2.Condition) bool {
		return c.Status == corev1.ConditionFalse && strings.Contains(c.Message, foreign.ID)
	})
	t.Logf("%s", c.Message)
	// Past the lag, every list shows it: it must stay refused when looked
	// at twice more (retries with backoff).
	p.WaitServed(t, 2, "GET", "/zerotrust/routes/hostname$")
	if err := p.Get(cr); err != nil {
		t.Fatal(err)
	}
	if got := meta.GetExternalName(cr); got != "" {
		t.Errorf("the foreign route was adopted: external-name %q", got)
	}
	if ids := liveRoutes(host); len(ids) != 1 || ids[0] != foreign.ID {
		t.Errorf("live routes for %s: %v, want only the foreign %s", host, ids, foreign.ID)
	}
	p.DeleteAndWait(t, cr)
	if ids := liveRoutes(host); len(ids) != 1 || ids[0] != foreign.ID {
		t.Errorf("after deleting the HostnameRoute, live routes for %s: %v, want the foreign %s untouched", host, ids, foreign.ID)
	}
	noneRateLimited(t)
}

// TestDeletingATunnelRightAfterItsConnectorsStop: cloudflared reports its
// connections through …/connections only (tunnel responses carry no
// connections array); when it stops, Cloudflare keeps listing its
// connectors and refuses the tunnel's delete (1022) until they expire. The
// Tunnel's deletion finishes once they do, without deleting connections
// that are not the provider's to remove and without a hot loop.
func TestDeletingATunnelRightAfterItsConnectorsStop(t *testing.T) {
	ns := p.Namespace(t)
	tun := p.ReadyTunnel(t, ns, "edge")
	id := meta.GetExternalName(tun)
	if raw := rawTunnel(t, id); strings.Contains(raw, `"connections"`) {
		t.Fatalf("the simulator still serves the connections array: %s", raw)
	}
	if !p.Sim.SetConnectors(id, 2) {
		t.Fatal("no such tunnel in the simulator")
	}
	wait.Eventually(t, 90*time.Second, "two connectors, eight connections observed", func() error {
		if err := p.Get(tun); err != nil {
			return err
		}
		if at := tun.Status.AtProvider; at.Connectors != 2 || at.Connections != 8 {
			return fmt.Errorf("connectors %d connections %d", at.Connectors, at.Connections)
		}
		return nil
	})

	before := p.Sim.Stats()
	p.Sim.SetConnectors(id, 0) // the Deployment scaled to zero
	stopped := time.Now()
	p.DeleteAndWait(t, tun)
	took := time.Since(stopped)
	after := p.Sim.Stats()

	refused := after["tunnels.delete"].ByStatus[http.StatusBadRequest] - before["tunnels.delete"].ByStatus[http.StatusBadRequest]
	attempts := after["tunnels.delete"].Requests - before["tunnels.delete"].Requests
	if refused == 0 || took < linger {
		t.Errorf("deleted after %s with %d refusals: the connectors did not linger (%s)", took.Round(100*time.Millisecond), refused, linger)
	}
	// Backoff, not a hot loop: crossplane-runtime requeues a failed delete
	// after 1, 2, 4, 8 … s.
	if attempts > 8 {
		t.Errorf("%d delete attempts in %s: a hot loop", attempts, took.Round(time.Second))
	}
	if n := after["tunnels.connections.delete"].Requests - before["tunnels.connections.delete"].Requests; n != 0 {
		t.Errorf("%d connection deletes: the provider removed connectors it does not run", n)
	}
	for _, ts := range p.Sim.Snapshot().Tunnels {
		if ts.ID == id && ts.DeletedAt == nil {
			t.Errorf("tunnel %s still live in Cloudflare", id)
		}
	}
	t.Logf("deleted %s after the connectors stopped, %d attempts, %d refused with 1022", took.Round(100*time.Millisecond), attempts, refused)
	noneRateLimited(t)
}

// rawTunnel is the tunnel's GET response as Cloudflare's JSON.
func rawTunnel(t *testing.T, id string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, p.Endpoint+"accounts/"+providertest.AccountID+"/cfd_tunnel/"+id, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+providertest.Token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	var env struct {
		Result json.RawMessage `json:"result"`
	}
	if res.StatusCode != http.StatusOK || json.Unmarshal(b, &env) != nil || len(env.Result) == 0 {
		t.Fatalf("GET tunnel %s: %d %s", id, res.StatusCode, b)
	}
	return string(env.Result)
}
