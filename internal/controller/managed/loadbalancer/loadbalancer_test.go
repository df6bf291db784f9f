package loadbalancer_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

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
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/providertest"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

// LoadBalancer against the simulator, the whole provider running: what the
// configuration means (the simulator's decision), drift, import, a lost
// create, hostnames held by others, and a pool's deletion waiting for it.

var p *providertest.Provider

func TestMain(m *testing.M) { os.Exit(providertest.Run(m, &p)) }

var ctx = context.Background()

var zoneID = sim.ZoneID("example.com")

func runTunnel(t *testing.T, ns, name string) string {
	t.Helper()
	ct := &tunnelsv1alpha1.CloudflareTunnel{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: tunnelsv1alpha1.CloudflareTunnelSpec{TunnelName: ptr.To(name + "-" + ns), Replicas: ptr.To[int32](1)}}
	p.CreateTunnel(t, ct)
	return p.RunTunnel(t, ct)
}

// pools makes, in ns, pool "a" of the running tunnel "edge", which
// publishes host, and pool "b" of a raw address, both probed by an https
// monitor every 5 s (timeout 2 s: below the interval); it returns the tunnel's ID.
func pools(t *testing.T, ns, host string) string {
	t.Helper()
	id := runTunnel(t, ns, "edge")
	ph := &tunnelsv1alpha1.PublicHostname{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app"}}
	ph.Spec = tunnelsv1alpha1.PublicHostnameSpec{TunnelRef: tunnelsv1alpha1.TunnelReference{Name: "edge"}, Hostname: host,
		Origin: &tunnelsv1alpha1.Origin{URL: ptr.To("http://app." + ns + ".svc.cluster.local:8080")}, DNS: "None"}
	p.Create(t, ph)
	mon := &v1alpha1.LoadBalancerMonitor{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "probe"}}
	mon.Spec.ForProvider = v1alpha1.LoadBalancerMonitorParameters{Type: "https", Host: ptr.To(host), Interval: ptr.To[int64](5), Timeout: ptr.To[int64](2)}
	a := &v1alpha1.LoadBalancerPool{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "a"}}
	a.Spec.ForProvider = v1alpha1.LoadBalancerPoolParameters{Name: "a-" + ns, MonitorIDRef: &xpv2.NamespacedReference{Name: "probe"},
		Origins: []v1alpha1.PoolOrigin{{Name: "edge", TunnelRef: &v1alpha1.TunnelOriginReference{Name: "edge"}, Host: ptr.To(host)}}}
	b := &v1alpha1.LoadBalancerPool{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "b"}}
	b.Spec.ForProvider = v1alpha1.LoadBalancerPoolParameters{Name: "b-" + ns, MonitorIDRef: &xpv2.NamespacedReference{Name: "probe"},
		Origins: []v1alpha1.PoolOrigin{{Name: "dc", Address: ptr.To("origin.example.net"), Host: ptr.To(host)}}}
	p.Create(t, mon)
	p.Create(t, a)
	p.Create(t, b)
	p.WaitReady(t, a)
	p.WaitReady(t, b)
	return id
}

func loadBalancer(ns, host string) *v1alpha1.LoadBalancer {
	lb := &v1alpha1.LoadBalancer{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app"}}
	lb.Spec.ForProvider = v1alpha1.LoadBalancerParameters{Hostname: host,
		DefaultPoolsRefs: []xpv2.NamespacedReference{{Name: "a"}, {Name: "b"}}, FallbackPoolRef: &xpv2.NamespacedReference{Name: "b"}}
	return lb
}

func reason(r xpv2.ConditionReason) func(xpv2.Condition) bool {
	return func(c xpv2.Condition) bool { return c.Status == corev1.ConditionFalse && c.Reason == r }
}

func decision(t *testing.T, host string) sim.LoadBalancerDecision {
	t.Helper()
	d, ok := p.Sim.Decide(host)
	if !ok {
		t.Fatalf("no load balancer serves %s", host)
	}
	return d
}

// serving is nil when the simulator's decision is pool and the load
// balancer's status says so, with its Healthy condition's reason.
func serving(lb *v1alpha1.LoadBalancer, host, pool string, reason xpv2.ConditionReason) error {
	d, ok := p.Sim.Decide(host)
	if !ok || d.PoolID != pool {
		return fmt.Errorf("the simulator serves %s from %+v, want pool %s", host, d, pool)
	}
	if err := p.Get(lb); err != nil {
		return err
	}
	c := lb.GetCondition(v1alpha1.TypeHealthy)
	if lb.Status.AtProvider.ServingPool != pool || c.Reason != reason {
		return fmt.Errorf("status serving pool %q, Healthy %s/%s (%s); want %s, %s", lb.Status.AtProvider.ServingPool, c.Status, c.Reason, c.Message, pool, reason)
	}
	return nil
}

func cfLB(t *testing.T, id string) *cloudflare.LoadBalancer {
	t.Helper()
	got, err := p.Cloudflare.GetLoadBalancer(ctx, zoneID, id)
	if cloudflare.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// Two pools in order: the first serves while its tunnel is connected, the
// second once it is not, the first again once it reconnects. The load
// balancer carries its marker, and a hand edit is undone. A pool the load
// balancer uses waits to be deleted until the load balancer is gone.
func TestALoadBalancerFailsOverInOrder(t *testing.T) {
	ns := p.Namespace(t)
	host := "app-" + ns + ".example.com"
	tunnelID := pools(t, ns, host)
	lb := loadBalancer(ns, host)
	p.Create(t, lb)
	p.WaitReady(t, lb)

	got := cfLB(t, meta.GetExternalName(lb))
	a, b := &v1alpha1.LoadBalancerPool{}, &v1alpha1.LoadBalancerPool{}
	a.Namespace, a.Name, b.Namespace, b.Name = ns, "a", ns, "b"
	if err := p.Get(a); err != nil {
		t.Fatal(err)
	}
	if err := p.Get(b); err != nil {
		t.Fatal(err)
	}
	if got == nil || got.Name != host || !got.Proxied || strings.Join(got.DefaultPools, ",") != meta.GetExternalName(a)+","+meta.GetExternalName(b) || got.FallbackPool != meta.GetExternalName(b) {
		t.Fatalf("load balancer in Cloudflare: %+v", got)
	}
	if _, mark, _ := ownership.Split(got.Description); mark != p.Mark(t, v1alpha1.LoadBalancerKind, lb) {
		t.Errorf("description %q carries no marker of this resource", got.Description)
	}
	poolA, poolB := meta.GetExternalName(a), meta.GetExternalName(b)
	wait.Eventually(t, wait.Patience, "pool a serving", func() error { return serving(lb, host, poolA, v1alpha1.ReasonServingFromDefaultPool) })
	if d := decision(t, host); d.OriginAddress != tunnelID+".cfargotunnel.com" {
		t.Errorf("served by %+v, want pool a's tunnel", d)
	}
	p.Sim.SetConnectors(tunnelID, 0)
	wait.Eventually(t, wait.Patience, "pool b serving in order", func() error { return serving(lb, host, poolB, v1alpha1.ReasonServingFromDefaultPool) })
	if d := decision(t, host); d.Fallback {
		t.Errorf("with a's tunnel down, served by %+v, want pool b in order, not as the fallback", d)
	}
	p.Sim.SetConnectors(tunnelID, 1)
	wait.Eventually(t, wait.Patience, "pool a serving again", func() error { return serving(lb, host, poolA, v1alpha1.ReasonServingFromDefaultPool) })

	in := cloudflare.LoadBalancerInput{Name: host, Description: got.Description, Enabled: true, Proxied: true, DefaultPools: []string{meta.GetExternalName(b)}, FallbackPool: got.FallbackPool, SteeringPolicy: "random", SessionAffinity: "none"}
	if _, err := p.Cloudflare.UpdateLoadBalancer(ctx, zoneID, got.ID, in); err != nil {
		t.Fatal(err)
	}
	wait.Eventually(t, wait.Patience, "the hand edit undone", func() error {
		got := cfLB(t, meta.GetExternalName(lb))
		if len(got.DefaultPools) != 2 || got.SteeringPolicy != "off" {
			return fmt.Errorf("pools %v, steering %q", got.DefaultPools, got.SteeringPolicy)
		}
		return nil
	})

	if err := p.Client.Delete(ctx, a); err != nil {
		t.Fatal(err)
	}
	p.WaitSynced(t, a, "pool a's deletion waiting for the load balancer", reason(common.ReasonInUse))
	if _, err := p.Cloudflare.GetPool(ctx, meta.GetExternalName(a)); err != nil {
		t.Fatalf("a pool in use is gone: %v", err)
	}
	p.DeleteAndWait(t, lb)
	p.DeleteAndWait(t, a)
	if cfLB(t, got.ID) != nil {
		t.Error("the load balancer is still in Cloudflare")
	}
}

// A hostname held by a load balancer or a DNS record this resource did not
// make is refused NotAllowed, and what holds it is left as it was.
func TestAHostnameHeldByAnotherIsRefused(t *testing.T) {
	ns := p.Namespace(t)
	pools(t, ns, "held.example.com")
	poolA := &v1alpha1.LoadBalancerPool{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "a"}}
	if err := p.Get(poolA); err != nil {
		t.Fatal(err)
	}
	poolID := meta.GetExternalName(poolA)

	byLB := "lb-" + ns + ".example.com"
	theirs, err := p.Cloudflare.CreateLoadBalancer(ctx, zoneID, cloudflare.LoadBalancerInput{Name: byLB, Description: "terraform", Enabled: true, Proxied: true, DefaultPools: []string{poolID}, FallbackPool: poolID, SteeringPolicy: "off", SessionAffinity: "none"})
	if err != nil {
		t.Fatal(err)
	}
	byRecord := "dns-" + ns + ".example.com"
	if _, err := p.Cloudflare.CreateDNSRecord(ctx, zoneID, cloudflare.DNSRecord{Name: byRecord, Type: "CNAME", Content: "elsewhere.example.net", Proxied: true, Comment: "hand-made"}); err != nil {
		t.Fatal(err)
	}
	for host, holder := range map[string]string{byLB: "load balancer " + theirs.ID, byRecord: "DNS CNAME record"} {
		lb := loadBalancer(ns, host)
		lb.Name = strings.Split(host, ".")[0]
		writes := p.Sim.Stats()["load_balancers.create"].Requests
		p.Create(t, lb)
		c := p.WaitSynced(t, lb, host+" refused", reason(common.ReasonNotAllowed))
		if !strings.Contains(c.Message, holder) {
			t.Errorf("the refusal does not name %q: %s", holder, c.Message)
		}
		if n := p.Sim.Stats()["load_balancers.create"].Requests - writes; n != 0 {
			t.Errorf("%d load balancer creates for a hostname held by another", n)
		}
		p.DeleteAndWait(t, lb)
	}
	if got := cfLB(t, theirs.ID); got == nil || got.Description != "terraform" {
		t.Errorf("someone else's load balancer was touched: %+v", got)
	}
	if rs := p.Records(t, byRecord); len(rs) != 1 || rs[0].Comment != "hand-made" {
		t.Errorf("someone else's record was touched: %+v", rs)
	}
	if err := p.Cloudflare.DeleteLoadBalancer(ctx, zoneID, theirs.ID); err != nil {
		t.Fatal(err)
	}
}

// A load balancer made in Cloudflare is imported by its ID, observe only:
// nothing is written and deleting the resource leaves it.
func TestLoadBalancerImportObserveOnly(t *testing.T) {
	ns := p.Namespace(t)
	host := "imp-" + ns + ".example.com"
	pools(t, ns, host)
	a := &v1alpha1.LoadBalancerPool{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "a"}}
	if err := p.Get(a); err != nil {
		t.Fatal(err)
	}
	existing, err := p.Cloudflare.CreateLoadBalancer(ctx, zoneID, cloudflare.LoadBalancerInput{Name: host, Description: "by hand", Enabled: true, Proxied: true, DefaultPools: []string{meta.GetExternalName(a)}, FallbackPool: meta.GetExternalName(a), SteeringPolicy: "off", SessionAffinity: "none"})
	if err != nil {
		t.Fatal(err)
	}
	cr := loadBalancer(ns, host)
	cr.Spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionObserve}
	meta.SetExternalName(cr, existing.ID)
	// Only load-balancer writes count: the pools' hostname is still being
	// published beside this test, which writes configurations and records.
	lbWrites := func() int {
		part := "/zones/" + zoneID + "/load_balancers"
		return p.Sim.Served("", part) - p.Sim.Served("GET", part)
	}
	before := lbWrites()
	p.Create(t, cr)
	p.WaitReady(t, cr)
	p.WaitServed(t, 3, "GET", "/load_balancers$")
	if w := lbWrites() - before; w != 0 {
		t.Errorf("%d load balancer writes for an observe-only LoadBalancer", w)
	}
	p.DeleteAndWait(t, cr)
	if got := cfLB(t, existing.ID); got == nil || got.Description != "by hand" {
		t.Errorf("an observe-only load balancer was changed or deleted: %+v", got)
	}
	if err := p.Cloudflare.DeleteLoadBalancer(ctx, zoneID, existing.ID); err != nil {
		t.Fatal(err)
	}
}

// A create whose answer is lost leaves one load balancer, adopted by its
// marker.
func TestALostCreateIsAdoptedWithProof(t *testing.T) {
	ns := p.Namespace(t)
	host := "lost-" + ns + ".example.com"
	pools(t, ns, host)
	lost := p.Sim.LostResponses()["load_balancers.create"]
	p.Sim.LoseNext("load_balancers.create", 1)
	t.Cleanup(func() { p.Sim.LoseNext("load_balancers.create", 0) })
	lb := loadBalancer(ns, host)
	p.Create(t, lb)
	p.WaitReady(t, lb)
	if p.Sim.LostResponses()["load_balancers.create"] == lost {
		t.Fatal("no create answer was lost: the test proves nothing")
	}
	all, err := p.Cloudflare.ListLoadBalancers(ctx, zoneID)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, o := range all {
		if o.Name == host {
			n++
			if o.ID != meta.GetExternalName(lb) {
				t.Errorf("load balancer %s, the resource holds %s", o.ID, meta.GetExternalName(lb))
			}
		}
	}
	if n != 1 {
		t.Errorf("%d load balancers of %s, want 1", n, host)
	}
	p.DeleteAndWait(t, lb)
}

// A hostname outside the provider config's allowed suffixes is refused
// before anything is written.
func TestAHostnameOutsideTheAllowedSuffixesIsRefused(t *testing.T) {
	ns := p.Namespace(t)
	cpc := p.ClusterConfig(t, "fenced-"+ns, func(s *tunnelsv1alpha1.ProviderConfigSpec) {
		s.Allow = &tunnelsv1alpha1.Allowances{HostnameSuffixes: []string{"apps.example.com"}}
	})
	lb := loadBalancer(ns, "www.example.com")
	lb.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: tunnelsv1alpha1.ClusterProviderConfigKind, Name: cpc.Name}
	lb.Spec.ForProvider.DefaultPoolsRefs, lb.Spec.ForProvider.FallbackPoolRef = nil, nil
	lb.Spec.ForProvider.DefaultPools, lb.Spec.ForProvider.FallbackPool = []string{"0123456789abcdef0123456789abcdef"}, ptr.To("0123456789abcdef0123456789abcdef")
	writes := p.WriteCalls()
	p.Create(t, lb)
	p.WaitSynced(t, lb, "refused by spec.allow.hostnameSuffixes", func(c xpv2.Condition) bool {
		return c.Status == corev1.ConditionFalse && strings.Contains(c.Message, "spec.allow.hostnameSuffixes")
	})
	p.WaitWarning(t, ns, lb.Name, "CannotObserveExternalResource", "spec.allow.hostnameSuffixes")
	if n := p.WriteCalls() - writes; n != 0 {
		t.Errorf("%d writes for a refused hostname", n)
	}
	p.DeleteAndWait(t, lb)
}

// onlyA is the load balancer of host with pool a alone by default and
// pool b as its fallback.
func onlyA(ns, host string) *v1alpha1.LoadBalancer {
	lb := loadBalancer(ns, host)
	lb.Spec.ForProvider.DefaultPoolsRefs = []xpv2.NamespacedReference{{Name: "a"}}
	return lb
}

// With its only default pool's tunnel down, the load balancer says traffic
// is on its fallback pool (Healthy False, ServingFromFallback, the pool
// named in status), as the simulator decides; once the tunnel is back,
// the default pool serves again. It logs how long the failover took: from
// the tunnel losing its connectors to the simulator's decision moving
// (the monitor probes every 5 s) and to the status saying so (the
// provider polls every 2 s); docs/benchmarks.md gives the figures.
func TestALoadBalancerShowsItsFallback(t *testing.T) {
	ns := p.Namespace(t)
	host := "fallback-" + ns + ".example.com"
	tunnelID := pools(t, ns, host)
	lb := onlyA(ns, host)
	p.Create(t, lb)
	p.WaitReady(t, lb)
	a, b := &v1alpha1.LoadBalancerPool{}, &v1alpha1.LoadBalancerPool{}
	a.Namespace, a.Name, b.Namespace, b.Name = ns, "a", ns, "b"
	if err := p.Get(a); err != nil {
		t.Fatal(err)
	}
	if err := p.Get(b); err != nil {
		t.Fatal(err)
	}
	poolA, poolB := meta.GetExternalName(a), meta.GetExternalName(b)
	wait.Eventually(t, wait.Patience, "pool a serving", func() error { return serving(lb, host, poolA, v1alpha1.ReasonServingFromDefaultPool) })

	dropped := time.Now()
	p.Sim.SetConnectors(tunnelID, 0)
	var toDecision, toStatus time.Duration
	wait.Eventually(t, wait.Patience, "the fallback serving", func() error {
		if d, _ := p.Sim.Decide(host); d.Fallback && toDecision == 0 {
			toDecision = time.Since(dropped)
		}
		err := serving(lb, host, poolB, v1alpha1.ReasonServingFromFallback)
		if err == nil {
			toStatus = time.Since(dropped)
		}
		return err
	})
	t.Logf("failover: the decision moved %.1fs and the status %.1fs after the connectors dropped", toDecision.Seconds(), toStatus.Seconds())
	if c := lb.GetCondition(v1alpha1.TypeHealthy); c.Status != corev1.ConditionFalse || !strings.Contains(c.Message, poolB) {
		t.Errorf("Healthy while on the fallback: %+v", c)
	}
	if d := decision(t, host); !d.Fallback {
		t.Errorf("the simulator's decision is not the fallback: %+v", d)
	}
	if c := lb.GetCondition(xpv2.TypeReady); c.Status != corev1.ConditionTrue {
		t.Errorf("a load balancer on its fallback is not Ready: %+v", c)
	}

	p.Sim.SetConnectors(tunnelID, 1)
	wait.Eventually(t, wait.Patience, "pool a serving again", func() error { return serving(lb, host, poolA, v1alpha1.ReasonServingFromDefaultPool) })

	// At rest, each pool's health is read at most once per observation
	// TTL (half a poll), though both the pool and the load balancer need
	// pool a's.
	healthOf := func(id string) int { return p.Sim.Served(http.MethodGet, "/pools/"+id+"/health") }
	a0, b0, start := healthOf(poolA), healthOf(poolB), time.Now()
	p.WaitServed(t, 6, http.MethodGet, "/pools/"+poolA+"/health$")
	ttls := int((time.Since(start) + p.Poll/2 - 1) / (p.Poll / 2))
	readsA, readsB := healthOf(poolA)-a0, healthOf(poolB)-b0
	t.Logf("health reads over %d TTLs: pool a (its pool and the load balancer's default) %d, pool b (its pool only) %d", ttls, readsA, readsB)
	if readsA > ttls+1 || readsB > ttls+1 {
		t.Errorf("health read more than once per TTL: a %d, b %d in %d TTLs", readsA, readsB, ttls)
	}
	p.DeleteAndWait(t, lb)
}

// onFallback is the load balancer's Healthy status (False: on the
// fallback pool).
func onFallback(lb *v1alpha1.LoadBalancer) corev1.ConditionStatus {
	if err := p.Get(lb); err != nil {
		return ""
	}
	return lb.GetCondition(v1alpha1.TypeHealthy).Status
}
