package publichostname_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/common"
	lbv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/loadbalancing/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/composite/publichostname"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/ownership"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

// Load-balanced hostnames: this cluster's pool and monitor, the load
// balancer listing only proven pools, no DNS record, and nothing of
// another installation's ever written.

var bg = context.Background()

// otherCluster plays another installation of the provider (another
// cluster, owner "cluster-b") publishing host load-balanced against the
// same account: its tunnel, whose configuration serves host when serves
// says so, and its pool of that tunnel, marked as its PublicHostname marks
// it. It returns the pool.
func otherCluster(t *testing.T, name, host string, serves bool) cloudflare.Pool {
	t.Helper()
	tun, err := p.Cloudflare.CreateTunnel(bg, name, "cloudflare")
	if err != nil {
		t.Fatal(err)
	}
	rules := []map[string]string{{"service": "http_status:404"}}
	if serves {
		rules = append([]map[string]string{{"hostname": host, "service": "http://web.team.svc.cluster.local:8080"}}, rules...)
	}
	doc, _ := json.Marshal(map[string]any{"ingress": rules})
	if _, err := p.Cloudflare.UpdateTunnelConfiguration(bg, tun.ID, doc); err != nil {
		t.Fatal(err)
	}
	mark := ownership.Identity{Owner: "cluster-b", Kind: lbv1alpha1.LoadBalancerPoolKind, Namespace: "team", Name: "app"}.Mark()
	pool, err := p.Cloudflare.CreatePool(bg, cloudflare.PoolInput{Name: name, Description: ownership.Comment(lbv1alpha1.PoolDescription(host, "team"), mark), Enabled: true, MinimumOrigins: 1,
		Origins: []cloudflare.PoolOrigin{{Name: "tunnel", Address: tun.ID + ".cfargotunnel.com", Enabled: true, Weight: 1, Header: map[string][]string{"Host": {host}}}}})
	if err != nil {
		t.Fatal(err)
	}
	return *pool
}

func monitorsFor(t *testing.T, host string) []cloudflare.LoadBalancerMonitor {
	t.Helper()
	ms, err := p.Cloudflare.ListLoadBalancerMonitors(bg)
	if err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(ms, func(m cloudflare.LoadBalancerMonitor) bool { return !slices.Contains(m.Header["Host"], host) })
}

func loadBalanced(ns, host string, lb *v1alpha1.HostnameLoadBalancer) *v1alpha1.PublicHostname {
	return hostname(ns, "app", host, func(ph *v1alpha1.PublicHostname) {
		ph.Spec.LoadBalancing = &v1alpha1.LoadBalancing{Pool: "a-" + ns, Monitor: &v1alpha1.HostnameMonitor{Path: ptr.To("/healthz"), Interval: ptr.To[int64](5), Timeout: ptr.To[int64](2)}, LoadBalancer: lb}
	})
}

func waitCondition(t *testing.T, ph *v1alpha1.PublicHostname, ct xpv2.ConditionType, status corev1.ConditionStatus, reason xpv2.ConditionReason, contains string) {
	t.Helper()
	wait.Eventually(t, wait.Patience, fmt.Sprintf("PublicHostname %s %s=%s %s", ph.Name, ct, status, reason), func() error {
		if err := p.Get(ph); err != nil {
			return err
		}
		if c := ph.GetCondition(ct); c.Status != status || c.Reason != reason || !strings.Contains(c.Message, contains) {
			return fmt.Errorf("%s=%s %s: %s", ct, c.Status, c.Reason, c.Message)
		}
		return nil
	})
}

// Both clusters publish the hostname load-balanced; this one holds the
// load balancer, which lists its own pool and the other cluster's, proven,
// in the order asked, and leaves out a pool of a name it was given that
// proves nothing. No DNS record is made. When the other cluster stops
// serving the hostname its pool leaves the load balancer; deleting the
// PublicHostname takes the load balancer, pool and monitor out of
// Cloudflare, and never touches the other installation's objects.
func TestALoadBalancedHostnameListsOnlyProvenPools(t *testing.T) {
	ns, tunnelID := setup(t)
	host := "lb-" + ns + ".example.com"
	b := otherCluster(t, "b-"+ns, host, true)
	forged := otherCluster(t, "f-"+ns, host, false)
	ph := loadBalanced(ns, host, &v1alpha1.HostnameLoadBalancer{Pools: []string{"a-" + ns, "b-" + ns, "f-" + ns}})
	p.Create(t, ph)

	waitCondition(t, ph, v1alpha1.TypeLoadBalanced, corev1.ConditionFalse, v1alpha1.ReasonPoolNotProven, `"f-`+ns+`"`)
	waitCondition(t, ph, v1alpha1.TypeLoadBalanced, corev1.ConditionFalse, v1alpha1.ReasonPoolNotProven, "has no rule for "+host)
	waitReady(t, ph)
	if c := ph.GetCondition(v1alpha1.TypeDNSReady); c.Reason != "LoadBalanced" {
		t.Errorf("DNSReady = %s %s", c.Reason, c.Message)
	}
	if rs := records(t, host); len(rs) != 0 {
		t.Fatalf("a load-balanced hostname has DNS records: %+v", rs)
	}
	a := p.Pool(t, "a-"+ns)
	if a == nil {
		t.Fatal("no pool a in Cloudflare")
	}
	if h, _ := lbv1alpha1.DescribedHostname(a.Description); h != host || len(a.Origins) != 1 || a.Origins[0].Address != tunnelID+".cfargotunnel.com" || !slices.Equal(a.Origins[0].Header["Host"], []string{host}) {
		t.Errorf("pool a = %+v, want its tunnel with Host %s, described as serving it", a, host)
	}
	if ms := monitorsFor(t, host); len(ms) != 1 || ms[0].Path != "/healthz" || ms[0].ID != a.Monitor {
		t.Errorf("monitors for %s = %+v, want one probing /healthz, pool a's", host, ms)
	}
	wait.Eventually(t, wait.Patience, "the load balancer of pools a and b", func() error {
		if lb := p.LoadBalancer(t, host); lb == nil || !slices.Equal(lb.DefaultPools, []string{a.ID, b.ID}) || lb.FallbackPool != b.ID {
			return fmt.Errorf("load balancer = %+v, want pools [%s %s], fallback %s", lb, a.ID, b.ID, b.ID)
		}
		return nil
	})
	if st := ph.Status.LoadBalancing; st == nil || st.PoolID != a.ID || st.LoadBalancer != "app" || st.PoolHealth == "" {
		t.Errorf("status.loadBalancing = %+v", st)
	}

	// Cluster B stops serving the hostname: its pool no longer proves
	// anything, and leaves the load balancer at the next observation.
	doc, _ := json.Marshal(map[string]any{"ingress": []map[string]string{{"service": "http_status:404"}}})
	if _, err := p.Cloudflare.UpdateTunnelConfiguration(bg, b.Origins[0].Address[:36], doc); err != nil {
		t.Fatal(err)
	}
	wait.Eventually(t, wait.Patience, "pool b out of the load balancer", func() error {
		if lb := p.LoadBalancer(t, host); lb == nil || !slices.Equal(lb.DefaultPools, []string{a.ID}) || lb.FallbackPool != a.ID {
			return fmt.Errorf("load balancer = %+v", lb)
		}
		return nil
	})

	p.DeleteAndWait(t, ph)
	if lb := p.LoadBalancer(t, host); lb != nil {
		t.Errorf("load balancer left: %+v", lb)
	}
	if p.Pool(t, "a-"+ns) != nil || len(monitorsFor(t, host)) != 0 {
		t.Error("pool a or its monitor left in Cloudflare")
	}
	for _, want := range []cloudflare.Pool{b, forged} {
		if got := p.Pool(t, want.Name); got == nil || got.Description != want.Description || !slices.EqualFunc(got.Origins, want.Origins, func(x, y cloudflare.PoolOrigin) bool { return x.Address == y.Address }) {
			t.Errorf("the other installation's pool %s was changed: %+v", want.Name, got)
		}
	}
}

// A load-balanced hostname whose name a DNS record this installation did
// not make holds: the load balancer is refused, naming the record, and
// the record is left as it is; the pool (this cluster's own) is made.
func TestALoadBalancedHostnameRefusesARecordNotOurs(t *testing.T) {
	ns, _ := setup(t)
	host := "lbc-" + ns + ".example.com"
	rec, err := p.Cloudflare.CreateDNSRecord(bg, sim.ZoneID("example.com"), cloudflare.DNSRecord{Name: host, Type: "CNAME", Content: "elsewhere.example.net", Proxied: true, TTL: 1})
	if err != nil {
		t.Fatal(err)
	}
	ph := loadBalanced(ns, host, &v1alpha1.HostnameLoadBalancer{Pools: []string{"a-" + ns}})
	p.Create(t, ph)
	waitCondition(t, ph, v1alpha1.TypeLoadBalanced, corev1.ConditionFalse, v1alpha1.ReasonLoadBalancerRefused, rec.ID)
	if c := ph.GetCondition(xpv2.TypeReady); c.Status == corev1.ConditionTrue {
		t.Errorf("Ready while the load balancer is refused: %s", c.Message)
	}
	if rs := records(t, host); len(rs) != 1 || rs[0].ID != rec.ID || rs[0].Content != "elsewhere.example.net" {
		t.Errorf("records of %s = %+v, want only the one not ours, unchanged", host, rs)
	}
	if p.LoadBalancer(t, host) != nil {
		t.Error("a load balancer was made over a record not ours")
	}
	if p.Pool(t, "a-"+ns) == nil {
		t.Error("this cluster's pool was not made")
	}
	p.DeleteAndWait(t, ph)
	if p.Pool(t, "a-"+ns) != nil {
		t.Error("pool left after deletion")
	}
}

// A pool name taken in the account by a pool this installation did not
// make is refused with a condition naming it, and never taken over; no
// load balancer is made without this cluster's own pool.
func TestALoadBalancedHostnameRefusesAPoolNameNotOurs(t *testing.T) {
	ns, _ := setup(t)
	host := "lbp-" + ns + ".example.com"
	theirs := otherCluster(t, "a-"+ns, host, true)
	ph := loadBalanced(ns, host, &v1alpha1.HostnameLoadBalancer{Pools: []string{"a-" + ns}})
	p.Create(t, ph)
	waitCondition(t, ph, v1alpha1.TypeLoadBalanced, corev1.ConditionFalse, v1alpha1.ReasonPoolRefused, theirs.ID)
	if got := p.Pool(t, theirs.Name); got == nil || got.ID != theirs.ID || got.Description != theirs.Description {
		t.Errorf("the other installation's pool was changed: %+v", got)
	}
	if p.LoadBalancer(t, host) != nil {
		t.Error("a load balancer was made without this cluster's own pool")
	}
	p.DeleteAndWait(t, ph)
	if p.Pool(t, theirs.Name) == nil {
		t.Error("the other installation's pool was deleted")
	}
}

// A load-balanced hostname is held by the namespace whose load balancer
// answers for it: another namespace of the cluster that publishes the
// hostname on a tunnel of its own does not take it from the load balancer,
// and its Access application for the hostname is refused.
func TestALoadBalancerHoldsItsHostnameForItsNamespace(t *testing.T) {
	ns, _ := setup(t)
	host := "lbh-" + ns + ".example.com"
	ph := loadBalanced(ns, host, &v1alpha1.HostnameLoadBalancer{Pools: []string{"a-" + ns}})
	p.Create(t, ph)
	waitCondition(t, ph, v1alpha1.TypeLoadBalanced, corev1.ConditionTrue, v1alpha1.ReasonLoadBalanced, "")

	tenant, _ := setup(t)
	rival := hostname(tenant, "rival", host, func(ph *v1alpha1.PublicHostname) { ph.Spec.DNS = v1alpha1.DNSNone })
	p.Create(t, rival)
	waitReady(t, rival)
	squat := &ztv1alpha1.AccessApplication{
		ObjectMeta: metav1.ObjectMeta{Namespace: tenant, Name: "squat"},
		Spec:       ztv1alpha1.AccessApplicationSpec{ForProvider: ztv1alpha1.AccessApplicationParameters{Name: "squat-" + tenant, Domain: host}},
	}
	p.Create(t, squat)
	wait.Eventually(t, wait.Patience, "the tenant's application refused NotAllowed", func() error {
		if err := p.Get(squat); err != nil {
			return err
		}
		if c := squat.GetCondition(xpv2.TypeSynced); c.Status != corev1.ConditionFalse || c.Reason != common.ReasonNotAllowed {
			return fmt.Errorf("Synced=%s %s: %s", c.Status, c.Reason, c.Message)
		}
		return nil
	})
	if len(appsFor(t, host)) != 0 {
		t.Error("an Access application was made on a load-balanced hostname another namespace holds")
	}
	// The rival's tunnel rule does not refuse the load balancer: after
	// polls of it, it is still Synced.
	lb := &lbv1alpha1.LoadBalancer{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: publichostname.LoadBalancingName(ph)}}
	p.WaitServed(t, 2, "GET", "/load_balancers")
	if err := p.Get(lb); err != nil {
		t.Fatal(err)
	}
	if c := lb.GetCondition(xpv2.TypeSynced); c.Status != corev1.ConditionTrue {
		t.Errorf("the load balancer lost its hostname to another namespace's tunnel rule: Synced=%s %s: %s", c.Status, c.Reason, c.Message)
	}
	p.DeleteAndWait(t, squat)
	p.DeleteAndWait(t, rival)
	p.DeleteAndWait(t, ph)
}

func waitPoolHealth(t *testing.T, ph *v1alpha1.PublicHostname, want string) {
	t.Helper()
	wait.Eventually(t, wait.Patience, "pool health "+want, func() error {
		if err := p.Get(ph); err != nil {
			return err
		}
		if st := ph.Status.LoadBalancing; st == nil || st.PoolHealth != want {
			return fmt.Errorf("status.loadBalancing %+v", st)
		}
		return nil
	})
}

// A pool turning unhealthy (its tunnel's connectors gone) is a Warning on
// its PublicHostname naming the pool and why, besides the status and the
// metric; its recovery a Normal event.
func TestAPoolTurningUnhealthyIsAWarning(t *testing.T) {
	ns, tunnelID := setup(t)
	host := "health-" + ns + ".example.com"
	ph := loadBalanced(ns, host, nil)
	// cloudflared connected. The pool's first probes may still fail (its
	// origin's rule not yet in the tunnel's configuration), so only the
	// events after it is healthy count.
	p.Sim.SetConnectors(tunnelID, 2)
	p.Create(t, ph)
	waitPoolHealth(t, ph, publichostname.PoolHealthy)
	unhealthy := poolEvents(t, ph, publichostname.ReasonPoolUnhealthy)
	p.Sim.SetConnectors(tunnelID, 0)
	waitMoreEvents(t, ph, publichostname.ReasonPoolUnhealthy, unhealthy)
	p.WaitWarning(t, ns, ph.Name, string(publichostname.ReasonPoolUnhealthy), "pool a-"+ns+" is unhealthy")
	waitPoolHealth(t, ph, publichostname.PoolUnhealthy)
	healthy := poolEvents(t, ph, publichostname.ReasonPoolHealthy)
	p.Sim.SetConnectors(tunnelID, 2)
	waitPoolHealth(t, ph, publichostname.PoolHealthy)
	waitMoreEvents(t, ph, publichostname.ReasonPoolHealthy, healthy)
	p.DeleteAndWait(t, ph)
}

// poolEvents counts the events of reason on ph, repeats included: the
// recorder folds an event like an earlier one into its count.
func poolEvents(t *testing.T, ph *v1alpha1.PublicHostname, reason event.Reason) int {
	t.Helper()
	evs := &corev1.EventList{}
	if err := p.Client.List(bg, evs, client.InNamespace(ph.Namespace)); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range evs.Items {
		if e.InvolvedObject.Name == ph.Name && e.Reason == string(reason) {
			n += int(max(e.Count, 1))
		}
	}
	return n
}

// waitMoreEvents waits for an event of reason on ph beyond the before
// counted.
func waitMoreEvents(t *testing.T, ph *v1alpha1.PublicHostname, reason event.Reason, before int) {
	t.Helper()
	wait.Eventually(t, wait.Patience, "a new "+string(reason)+" event", func() error {
		if n := poolEvents(t, ph, reason); n <= before {
			return fmt.Errorf("%d, as before", n)
		}
		return nil
	})
}
