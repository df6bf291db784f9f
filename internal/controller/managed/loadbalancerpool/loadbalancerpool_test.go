package loadbalancerpool_test

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
	"github.com/context-labs/provider-cloudflare-tunnel/apis/loadbalancing/v1alpha1"
	tunnelsv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/ownership"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/providertest"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

// LoadBalancerMonitor and LoadBalancerPool against the simulator, the
// whole provider running: tunnels by reference, drift, import, lost
// creates, names taken, deletion while in use and refused input. (The
// monitor has no suite of its own: a monitor is only ever seen through the
// pools that use it.)

var p *providertest.Provider

func TestMain(m *testing.M) { os.Exit(providertest.Run(m, &p)) }

var ctx = context.Background()

func monitor(ns, name, typ string) *v1alpha1.LoadBalancerMonitor {
	m := &v1alpha1.LoadBalancerMonitor{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	m.Spec.ForProvider = v1alpha1.LoadBalancerMonitorParameters{Type: typ}
	if typ == "tcp" {
		m.Spec.ForProvider.Port = ptr.To(int64(443))
	} else {
		m.Spec.ForProvider.Path = ptr.To("/healthz")
		m.Spec.ForProvider.Host = ptr.To("app.example.com")
	}
	return m
}

// tunnelPool is a pool of the CloudflareTunnel tunnel, probed by monitor.
func tunnelPool(ns, name, tunnel, monitor string) *v1alpha1.LoadBalancerPool {
	pool := &v1alpha1.LoadBalancerPool{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	pool.Spec.ForProvider = v1alpha1.LoadBalancerPoolParameters{
		Name:         name + "-" + ns,
		MonitorIDRef: &xpv2.NamespacedReference{Name: monitor},
		Origins:      []v1alpha1.PoolOrigin{{Name: tunnel, TunnelRef: &v1alpha1.TunnelOriginReference{Name: tunnel}, Host: ptr.To("app.example.com")}},
	}
	return pool
}

func runTunnel(t *testing.T, ns, name string) string {
	t.Helper()
	ct := &tunnelsv1alpha1.CloudflareTunnel{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: tunnelsv1alpha1.CloudflareTunnelSpec{TunnelName: ptr.To(name + "-" + ns), Replicas: ptr.To[int32](1)}}
	p.CreateTunnel(t, ct)
	return p.RunTunnel(t, ct)
}

func cfPool(t *testing.T, id string) *cloudflare.Pool {
	t.Helper()
	got, err := p.Cloudflare.GetPool(ctx, id)
	if cloudflare.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func poolsNamed(t *testing.T, name string) []cloudflare.Pool {
	t.Helper()
	all, err := p.Cloudflare.ListPools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []cloudflare.Pool
	for _, pl := range all {
		if pl.Name == name {
			out = append(out, pl)
		}
	}
	return out
}

func reason(r xpv2.ConditionReason) func(xpv2.Condition) bool {
	return func(c xpv2.Condition) bool { return c.Status == corev1.ConditionFalse && c.Reason == r }
}

// A pool of a running CloudflareTunnel probed by an https monitor: the
// origin is <tunnel ID>.cfargotunnel.com with the hostname as its Host
// header, both objects carry their ownership markers, the simulator counts
// the pool healthy while the tunnel is connected, and hand edits of either
// are undone.
func TestAPoolOfATunnel(t *testing.T) {
	ns := p.Namespace(t)
	tunnelID := runTunnel(t, ns, "edge")
	mon := monitor(ns, "probe", "https")
	pool := tunnelPool(ns, "a", "edge", "probe")
	p.Create(t, mon)
	p.Create(t, pool)
	p.WaitReady(t, mon)
	p.WaitReady(t, pool)

	got := cfPool(t, meta.GetExternalName(pool))
	want := cloudflare.PoolOrigin{Name: "edge", Address: tunnelID + ".cfargotunnel.com", Enabled: true, Weight: 1, Header: map[string][]string{"Host": {"app.example.com"}}}
	if got == nil || len(got.Origins) != 1 || got.Origins[0].Address != want.Address || got.Origins[0].Header["Host"][0] != "app.example.com" || got.Monitor != meta.GetExternalName(mon) {
		t.Fatalf("pool in Cloudflare: %+v, want the origin %+v and monitor %s", got, want, meta.GetExternalName(mon))
	}
	if _, mark, _ := ownership.Split(got.Description); mark != p.Mark(t, v1alpha1.LoadBalancerPoolKind, pool) {
		t.Errorf("pool description %q carries no marker of this resource", got.Description)
	}
	m, err := p.Cloudflare.GetLoadBalancerMonitor(ctx, meta.GetExternalName(mon))
	if err != nil {
		t.Fatal(err)
	}
	if _, mark, _ := ownership.Split(m.Description); mark != p.Mark(t, v1alpha1.LoadBalancerMonitorKind, mon) || m.Path != "/healthz" || m.Header["Host"][0] != "app.example.com" {
		t.Errorf("monitor in Cloudflare: %+v", m)
	}
	// Hand edits: the origin disabled, the monitor's path changed.
	edited := *got
	edited.Origins = []cloudflare.PoolOrigin{{Name: "edge", Address: want.Address, Enabled: false, Weight: 1}}
	if _, err := p.Cloudflare.UpdatePool(ctx, got.ID, cloudflare.PoolInput{Name: edited.Name, Description: edited.Description, Enabled: true, MinimumOrigins: 1, Monitor: edited.Monitor, Origins: edited.Origins}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Cloudflare.UpdateLoadBalancerMonitor(ctx, m.ID, cloudflare.LoadBalancerMonitorInput{Type: "https", Description: m.Description, Method: "GET", Path: "/", ExpectedCodes: "200", Interval: 60, Timeout: 5, Retries: 2}); err != nil {
		t.Fatal(err)
	}
	wait.Eventually(t, wait.Patience, "the hand edits undone", func() error {
		got := cfPool(t, meta.GetExternalName(pool))
		m, err := p.Cloudflare.GetLoadBalancerMonitor(ctx, meta.GetExternalName(mon))
		if err != nil {
			return err
		}
		if !got.Origins[0].Enabled || len(got.Origins[0].Header["Host"]) == 0 || m.Path != "/healthz" {
			return fmt.Errorf("origin %+v, monitor path %q", got.Origins[0], m.Path)
		}
		return nil
	})
	p.DeleteAndWait(t, pool)
	p.DeleteAndWait(t, mon)
}

// publish puts host on the CloudflareTunnel tunnel (no DNS record), served
// by an HTTP origin: the monitors' probes of host reach an app, which the
// simulator counts as answering 200. A tunnel publishing nothing answers
// every probe 503.
func publish(t *testing.T, ns, tunnel, host string) {
	t.Helper()
	ph := &tunnelsv1alpha1.PublicHostname{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app"}}
	ph.Spec = tunnelsv1alpha1.PublicHostnameSpec{TunnelRef: tunnelsv1alpha1.TunnelReference{Name: tunnel}, Hostname: host,
		Origin: &tunnelsv1alpha1.Origin{URL: ptr.To("http://app." + ns + ".svc.cluster.local:8080")}, DNS: "None"}
	p.Create(t, ph)
}

// healthy is the pool's Healthy condition with status s and reason r.
func healthy(s corev1.ConditionStatus, r xpv2.ConditionReason) func(*v1alpha1.LoadBalancerPool) error {
	return func(pool *v1alpha1.LoadBalancerPool) error {
		if err := p.Get(pool); err != nil {
			return err
		}
		if c := pool.GetCondition(v1alpha1.TypeHealthy); c.Status != s || c.Reason != r {
			return fmt.Errorf("Healthy is %s/%s (%s), want %s/%s", c.Status, c.Reason, c.Message, s, r)
		}
		return nil
	}
}

// The pool's status follows the health Cloudflare reports: healthy while
// its tunnel's rules answer the monitor's probe, unhealthy (the origin's
// failure named) once the tunnel has no connectors and the monitor has
// probed again, healthy again once it reconnects. Ready stays True all
// along: the pool is as desired.
func TestPoolHealthFollowsTheTunnel(t *testing.T) {
	ns := p.Namespace(t)
	host := "app-" + ns + ".example.com"
	tunnelID := runTunnel(t, ns, "edge")
	publish(t, ns, "edge", host)
	mon := monitor(ns, "probe", "https")
	mon.Spec.ForProvider.Host, mon.Spec.ForProvider.Interval, mon.Spec.ForProvider.Timeout = ptr.To(host), ptr.To[int64](5), ptr.To[int64](2)
	pool := tunnelPool(ns, "a", "edge", "probe")
	pool.Spec.ForProvider.Origins[0].Host = ptr.To(host)
	p.Create(t, mon)
	p.Create(t, pool)
	p.WaitReady(t, pool)
	wait.Eventually(t, wait.Patience, "the pool healthy", func() error { return healthy(corev1.ConditionTrue, v1alpha1.ReasonPoolHealthy)(pool) })
	origin := tunnelID + ".cfargotunnel.com"
	if h := pool.Status.AtProvider.Health; h == nil || !h.Healthy || len(h.Origins) != 1 || h.Origins[0].Address != origin || ptr.Deref(h.Origins[0].ResponseCode, 0) != 200 {
		t.Errorf("health in status: %+v", h)
	}

	p.Sim.SetConnectors(tunnelID, 0)
	wait.Eventually(t, wait.Patience, "the pool unhealthy", func() error { return healthy(corev1.ConditionFalse, v1alpha1.ReasonPoolUnhealthy)(pool) })
	if h := pool.Status.AtProvider.Health; h == nil || h.Healthy || len(h.Origins) != 1 || h.Origins[0].Healthy || h.Origins[0].FailureReason == "" {
		t.Errorf("health in status: %+v", h)
	}
	if c := pool.GetCondition(xpv2.TypeReady); c.Status != corev1.ConditionTrue {
		t.Errorf("an unhealthy pool is not Ready: %+v", c)
	}
	if !strings.Contains(pool.GetCondition(v1alpha1.TypeHealthy).Message, origin) {
		t.Errorf("the condition does not name the failing origin: %s", pool.GetCondition(v1alpha1.TypeHealthy).Message)
	}

	p.Sim.SetConnectors(tunnelID, 1)
	wait.Eventually(t, wait.Patience, "the pool healthy again", func() error { return healthy(corev1.ConditionTrue, v1alpha1.ReasonPoolHealthy)(pool) })
}

// A monitor a pool uses waits to be deleted (InUse, Cloudflare's refusal
// named), and goes once the pool is gone.
func TestDeletingAMonitorInUseWaits(t *testing.T) {
	ns := p.Namespace(t)
	runTunnel(t, ns, "edge")
	mon := monitor(ns, "probe", "https")
	pool := tunnelPool(ns, "a", "edge", "probe")
	p.Create(t, mon)
	p.Create(t, pool)
	p.WaitReady(t, mon)
	p.WaitReady(t, pool)
	monID := meta.GetExternalName(mon)

	if err := p.Client.Delete(ctx, mon); err != nil {
		t.Fatal(err)
	}
	c := p.WaitSynced(t, mon, "the deletion waiting for the pool", reason(common.ReasonInUse))
	if !strings.Contains(c.Message, pool.Spec.ForProvider.Name) {
		t.Errorf("the wait does not name the pool: %s", c.Message)
	}
	if _, err := p.Cloudflare.GetLoadBalancerMonitor(ctx, monID); err != nil {
		t.Fatalf("the monitor in use is gone: %v", err)
	}
	p.DeleteAndWait(t, pool)
	wait.Eventually(t, wait.Patience, "the monitor deleted once unused", func() error {
		if err := p.Get(mon); err == nil {
			return fmt.Errorf("LoadBalancerMonitor still there")
		}
		if _, err := p.Cloudflare.GetLoadBalancerMonitor(ctx, monID); !cloudflare.IsNotFound(err) {
			return fmt.Errorf("monitor still in Cloudflare: %v", err)
		}
		return nil
	})
}

// A pool made in Cloudflare is imported by its ID, observe only: nothing is
// written, the description is late-initialised, and deleting the resource
// leaves the pool.
func TestPoolImportObserveOnly(t *testing.T) {
	ns := p.Namespace(t)
	existing, err := p.Cloudflare.CreatePool(ctx, cloudflare.PoolInput{Name: "imported-" + ns, Description: "made by hand", Enabled: true, MinimumOrigins: 1,
		Origins: []cloudflare.PoolOrigin{{Name: "o", Address: "origin.example.net", Enabled: true, Weight: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	cr := &v1alpha1.LoadBalancerPool{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "imported"}, Spec: v1alpha1.LoadBalancerPoolSpec{
		ManagedResourceSpec: xpv2.ManagedResourceSpec{ManagementPolicies: xpv2.ManagementPolicies{xpv2.ManagementActionObserve}},
		ForProvider:         v1alpha1.LoadBalancerPoolParameters{Name: existing.Name, Origins: []v1alpha1.PoolOrigin{{Name: "o", Address: ptr.To("origin.example.net")}}},
	}}
	meta.SetExternalName(cr, existing.ID)
	before := p.WriteCalls()
	p.Create(t, cr)
	p.WaitReady(t, cr)
	p.WaitServed(t, 3, "GET", "/load_balancers/pools$")
	if w := p.WriteCalls() - before; w != 0 {
		t.Errorf("%d write calls for an observe-only LoadBalancerPool", w)
	}
	if err := p.Get(cr); err != nil {
		t.Fatal(err)
	}
	if ptr.Deref(cr.Spec.ForProvider.Description, "") != "made by hand" || cr.Status.AtProvider.ID != existing.ID {
		t.Errorf("not late-initialised or observed: %+v, %+v", cr.Spec.ForProvider, cr.Status.AtProvider)
	}
	p.DeleteAndWait(t, cr)
	if got := cfPool(t, existing.ID); got == nil || got.Description != "made by hand" {
		t.Errorf("an observe-only pool was changed or deleted: %+v", got)
	}
}

// A create whose answer is lost leaves one pool and one monitor, adopted by
// their markers: never a duplicate.
func TestLostCreatesAreAdoptedWithProof(t *testing.T) {
	ns := p.Namespace(t)
	runTunnel(t, ns, "edge")
	p.Sim.LoseNext("lb_monitors.create", 1)
	p.Sim.LoseNext("lb_pools.create", 1)
	t.Cleanup(func() { p.Sim.LoseNext("lb_monitors.create", 0); p.Sim.LoseNext("lb_pools.create", 0) })
	lostMonitors, lostPools := p.Sim.LostResponses()["lb_monitors.create"], p.Sim.LostResponses()["lb_pools.create"]
	mon := monitor(ns, "probe", "http")
	pool := tunnelPool(ns, "a", "edge", "probe")
	p.Create(t, mon)
	p.Create(t, pool)
	p.WaitReady(t, mon)
	p.WaitReady(t, pool)
	if p.Sim.LostResponses()["lb_monitors.create"] == lostMonitors || p.Sim.LostResponses()["lb_pools.create"] == lostPools {
		t.Fatal("no create answer was lost: the test proves nothing")
	}
	pools := poolsNamed(t, pool.Spec.ForProvider.Name)
	if len(pools) != 1 || pools[0].ID != meta.GetExternalName(pool) {
		t.Errorf("%d pools %+v, external-name %s", len(pools), pools, meta.GetExternalName(pool))
	}
	all, err := p.Cloudflare.ListLoadBalancerMonitors(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mark, n := p.Mark(t, v1alpha1.LoadBalancerMonitorKind, mon), 0
	for _, m := range all {
		if _, got, _ := ownership.Split(m.Description); got == mark {
			n++
			if m.ID != meta.GetExternalName(mon) {
				t.Errorf("the monitor with the marker is %s, the resource holds %s", m.ID, meta.GetExternalName(mon))
			}
		}
	}
	if n != 1 {
		t.Errorf("%d monitors carry the resource's marker, want 1", n)
	}
	p.DeleteAndWait(t, pool)
	p.DeleteAndWait(t, mon)
}

// A pool of the desired name made by someone else is neither adopted nor
// changed nor deleted.
func TestAPoolNameTakenIsRefused(t *testing.T) {
	ns := p.Namespace(t)
	name := "taken-" + ns
	theirs, err := p.Cloudflare.CreatePool(ctx, cloudflare.PoolInput{Name: name, Description: "terraform", Enabled: true, MinimumOrigins: 1,
		Origins: []cloudflare.PoolOrigin{{Name: "o", Address: "origin.example.net", Enabled: true, Weight: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	cr := &v1alpha1.LoadBalancerPool{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mine"}}
	cr.Spec.ForProvider = v1alpha1.LoadBalancerPoolParameters{Name: name, Origins: []v1alpha1.PoolOrigin{{Name: "x", Address: ptr.To("other.example.net")}}}
	p.Create(t, cr)
	p.WaitSynced(t, cr, "the name refused as taken", reason(common.ReasonNameTaken))
	p.DeleteAndWait(t, cr)
	if got := cfPool(t, theirs.ID); got == nil || got.Description != "terraform" || got.Origins[0].Address != "origin.example.net" {
		t.Errorf("someone else's pool was touched: %+v", got)
	}
}

// A tcp monitor on tunnel origins is refused with a Warning and the typed
// reason Unsupported: Cloudflare documents that it cannot work. Nothing is
// written until the monitor is an http one.
func TestATCPMonitorOnATunnelIsRefused(t *testing.T) {
	ns := p.Namespace(t)
	runTunnel(t, ns, "edge")
	mon := monitor(ns, "tcp", "tcp")
	pool := tunnelPool(ns, "a", "edge", "tcp")
	p.Create(t, mon)
	p.WaitReady(t, mon)
	p.Create(t, pool)
	c := p.WaitSynced(t, pool, "a tcp monitor on a tunnel refused", reason(common.ReasonUnsupported))
	if !strings.Contains(c.Message, "TCP monitors do not work on Cloudflare Tunnel origins") {
		t.Errorf("the refusal does not say why: %s", c.Message)
	}
	p.WaitWarning(t, ns, pool.Name, "CannotCreateExternalResource", "TCP monitors")
	if n := len(poolsNamed(t, pool.Spec.ForProvider.Name)); n != 0 {
		t.Fatalf("%d pools written with a tcp monitor on a tunnel", n)
	}
	https := monitor(ns, "https", "https")
	p.Create(t, https)
	p.Edit(t, pool, func() {
		pool.Spec.ForProvider.MonitorIDRef = &xpv2.NamespacedReference{Name: "https"}
		pool.Spec.ForProvider.MonitorID = nil
	})
	p.WaitReady(t, pool)
	p.DeleteAndWait(t, pool)
	p.DeleteAndWait(t, mon)
	p.DeleteAndWait(t, https)
}

// A tunnel another namespace manages cannot be named by its raw ID.
func TestAnotherNamespacesTunnelIsNotAllowed(t *testing.T) {
	theirs := p.Namespace(t)
	id := runTunnel(t, theirs, "edge")
	ns := p.Namespace(t)
	cr := &v1alpha1.LoadBalancerPool{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "borrowed"}}
	cr.Spec.ForProvider = v1alpha1.LoadBalancerPoolParameters{Name: "borrowed-" + ns, Origins: []v1alpha1.PoolOrigin{{Name: "x", TunnelID: ptr.To(id)}}}
	p.Create(t, cr)
	p.WaitSynced(t, cr, "another namespace's tunnel refused", reason(common.ReasonNotAllowed))
	if n := len(poolsNamed(t, cr.Spec.ForProvider.Name)); n != 0 {
		t.Fatalf("%d pools written with another namespace's tunnel", n)
	}
	p.DeleteAndWait(t, cr)
}
