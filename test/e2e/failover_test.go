package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	lbv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/loadbalancing/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare/budget"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/providertest"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

// failoverSide is one cluster's half of a load-balanced hostname: its
// harness, its tunnel and the Cloudflare IDs of what it made.
type failoverSide struct {
	h                       *harness
	who                     string // its label in the simulator's log
	tunnelID                string
	pool, poolID, monitorID string
	ph                      *v1alpha1.PublicHostname
}

// publish makes, in the side's namespace ns, a CloudflareTunnel "edge"
// and a PublicHostname "app" load-balancing host under the side's pool,
// probed every 5 s; lb is the load balancer, in one side only.
func (s *failoverSide) publish(t *testing.T, ns, host string, lb *v1alpha1.HostnameLoadBalancer) {
	t.Helper()
	ctx := context.Background()
	s.h.namespace(t, ns)
	if err := s.h.kube.Create(ctx, &v1alpha1.CloudflareTunnel{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "edge"},
		Spec:       v1alpha1.CloudflareTunnelSpec{TunnelName: ptr.To("e2e-" + s.pool), Replicas: ptr.To[int32](1)},
	}); err != nil {
		t.Fatal(err)
	}
	s.ph = &v1alpha1.PublicHostname{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app"},
		Spec: v1alpha1.PublicHostnameSpec{
			TunnelRef: v1alpha1.TunnelReference{Name: "edge"},
			Hostname:  host,
			Origin:    &v1alpha1.Origin{Service: &v1alpha1.ServiceOrigin{Name: "web", Port: intstr.FromInt32(80)}},
			LoadBalancing: &v1alpha1.LoadBalancing{
				Pool:         s.pool,
				Monitor:      &v1alpha1.HostnameMonitor{Path: ptr.To("/"), ExpectedCodes: ptr.To("2xx"), Interval: ptr.To[int64](5), Timeout: ptr.To[int64](2)},
				LoadBalancer: lb,
			},
		},
	}
	if err := s.h.kube.Create(ctx, s.ph); err != nil {
		t.Fatal(err)
	}
}

// made waits until the side's tunnel and pool are made, plays its
// cloudflared connecting, and reads back the IDs.
func (s *failoverSide) made(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	wait.Eventually(t, 3*time.Minute, s.who+"'s tunnel and pool made", func() error {
		cft := &v1alpha1.CloudflareTunnel{}
		if err := s.h.kube.Get(ctx, client.ObjectKey{Namespace: s.ph.Namespace, Name: "edge"}, cft); err != nil {
			return err
		}
		if s.tunnelID = cft.Status.TunnelID; s.tunnelID == "" {
			return fmt.Errorf("no tunnel ID yet")
		}
		if err := s.h.kube.Get(ctx, client.ObjectKeyFromObject(s.ph), s.ph); err != nil {
			return err
		}
		if st := s.ph.Status.LoadBalancing; st == nil || st.PoolID == "" {
			return fmt.Errorf("no pool ID yet: %+v", st)
		}
		return nil
	})
	s.h.sim.SetConnectors(s.tunnelID, 2)
	s.poolID = s.ph.Status.LoadBalancing.PoolID
	p, err := env.cf.GetPool(ctx, s.poolID)
	if err != nil {
		t.Fatal(err)
	}
	if s.monitorID = p.Monitor; s.monitorID == "" || len(p.Origins) != 1 || p.Origins[0].Address != s.tunnelID+lbv1alpha1.TunnelOriginSuffix {
		t.Fatalf("%s's pool %+v: want its tunnel %s as the one origin, and a monitor", s.who, p, s.tunnelID)
	}
}

// condition waits until the side's PublicHostname has condition ct with
// status, reason and a message containing every one of want.
func (s *failoverSide) condition(t *testing.T, ct xpv2.ConditionType, status corev1.ConditionStatus, reason xpv2.ConditionReason, want ...string) {
	t.Helper()
	wait.Eventually(t, 3*time.Minute, fmt.Sprintf("%s's PublicHostname %s=%s %s", s.who, ct, status, reason), func() error {
		if err := s.h.kube.Get(context.Background(), client.ObjectKeyFromObject(s.ph), s.ph); err != nil {
			return err
		}
		c := s.ph.GetCondition(ct)
		if c.Status != status || c.Reason != reason {
			return fmt.Errorf("%s=%s %s: %s", ct, c.Status, c.Reason, c.Message)
		}
		for _, w := range want {
			if !strings.Contains(c.Message, w) {
				return fmt.Errorf("%s=%s %s: %s (want %q in it)", ct, c.Status, c.Reason, c.Message, w)
			}
		}
		return nil
	})
}

// waitPools waits until the load balancer of host lists exactly pools, in
// order, with fallback.
func waitPools(t *testing.T, host string, pools []string, fallback string) *cloudflare.LoadBalancer {
	t.Helper()
	var lb *cloudflare.LoadBalancer
	wait.Eventually(t, 3*time.Minute, fmt.Sprintf("the load balancer of pools %v, fallback %s", pools, fallback), func() error {
		if lb = providertest.LoadBalancerOf(t, env.cf, host); lb == nil || !slices.Equal(lb.DefaultPools, pools) || lb.FallbackPool != fallback {
			return fmt.Errorf("load balancer %+v", lb)
		}
		return nil
	})
	return lb
}

// waitServedBy waits until the simulator's decision for host is pool, and
// returns how long that took.
func waitServedBy(t *testing.T, host, pool, why string) time.Duration {
	t.Helper()
	start := time.Now()
	wait.Eventually(t, 3*time.Minute, why, func() error {
		d, ok := env.sim.Decide(host)
		if !ok {
			return fmt.Errorf("no enabled load balancer of %s", host)
		}
		if d.PoolID != pool || d.Origin == "" {
			return fmt.Errorf("decision %+v", d)
		}
		return nil
	})
	return time.Since(start)
}

// liveLoadBalancing are the IDs of the account's pools and monitors.
func liveLoadBalancing(t *testing.T) map[string]bool {
	t.Helper()
	ctx := context.Background()
	ids := map[string]bool{}
	pools, err := env.cf.ListPools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pools {
		ids[p.ID] = true
	}
	ms, err := env.cf.ListLoadBalancerMonitors(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		ids[m.ID] = true
	}
	return ids
}

// TestFailoverAcrossTwoClusters: two clusters, each with its own provider,
// publish one hostname load-balanced on one account (issue 50). A makes the
// load balancer of pools [a, b, forged], B only its pool b; "forged" is a
// pool made by hand that names the hostname and B's tunnel but carries no
// ownership marker, and is never listed. A's connectors drop: the
// simulator's decision moves to B's pool; they come back: A serves again.
// B's namespace is deleted: its pool leaves the load balancer and
// Cloudflare, and A serves alone; A's namespace is deleted: the load
// balancer, A's pool and monitor go. Each provider reaches the simulator on
// a listener of its own, so its log shows that neither ever wrote an
// object the other made.
func TestFailoverAcrossTwoClusters(t *testing.T) {
	ctx := context.Background()
	b := &failoverSide{h: env.second(t, "cluster-b"), who: "cluster-b"}
	a := &failoverSide{h: env, who: "cluster"}
	suffix := randomHex(4)
	const ns = "failover"
	host := "app.failover-" + suffix + "." + zone
	a.pool, b.pool = "app-a-"+suffix, "app-b-"+suffix
	forgedName := "app-forged-" + suffix

	published := time.Now()
	madeA, madeB := env.simLog.Requests(a.who), env.simLog.Requests(b.who)
	a.publish(t, ns, host, &v1alpha1.HostnameLoadBalancer{Pools: []string{a.pool, b.pool, forgedName}, FallbackPool: ptr.To(b.pool)})
	b.publish(t, ns, host, nil)
	a.made(t)
	b.made(t)

	// The forgery: B's tunnel (which serves host), host as Host header,
	// the hostname in its description, but no marker. Made by hand, on a
	// listener of its own.
	byHand := cloudflare.New(clients.Config{Token: env.token, AccountID: env.account, Endpoint: env.simListener(t, "by hand")}, cloudflare.Options{
		Budgets: budget.NewRegistry(budget.Options{Limit: 1000000}),
	})
	forged, err := byHand.CreatePool(ctx, cloudflare.PoolInput{Name: forgedName, Description: lbv1alpha1.PoolDescription(host, ns), Enabled: true, MinimumOrigins: 1,
		Origins: []cloudflare.PoolOrigin{{Name: "tunnel", Address: b.tunnelID + lbv1alpha1.TunnelOriginSuffix, Enabled: true, Weight: 1, Header: map[string][]string{"Host": {host}}}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := byHand.DeletePool(context.Background(), forged.ID); err != nil {
			t.Errorf("delete the forged pool: %v", err)
		}
	})

	// Both pools proven and listed, in order; the forgery named and left out.
	lb := waitPools(t, host, []string{a.poolID, b.poolID}, b.poolID)
	a.condition(t, v1alpha1.TypeLoadBalanced, corev1.ConditionFalse, v1alpha1.ReasonPoolNotProven, `"`+forgedName+`"`, "no ownership marker")
	b.condition(t, v1alpha1.TypeLoadBalanced, corev1.ConditionTrue, v1alpha1.ReasonLoadBalanced)
	waitServedBy(t, host, a.poolID, "the decision serves A's pool")
	settled := time.Now()
	requestsA, requestsB := env.simLog.Requests(a.who), env.simLog.Requests(b.who)
	t.Logf("published until served (%v): cluster A sent %d requests, cluster B %d", settled.Sub(published).Round(time.Second), requestsA-madeA, requestsB-madeB)

	// A's connectors drop: B takes over.
	env.sim.SetConnectors(a.tunnelID, 0)
	failover := waitServedBy(t, host, b.poolID, "the decision moves to B's pool")
	t.Logf("connectors of A dropped → the decision moved to B's pool in %v (monitor interval 5 s)", failover.Round(100*time.Millisecond))
	// A comes back: A serves again.
	env.sim.SetConnectors(a.tunnelID, 2)
	failback := waitServedBy(t, host, a.poolID, "the decision back on A's pool")
	t.Logf("connectors of A back → the decision back on A's pool in %v", failback.Round(100*time.Millisecond))
	steady := time.Since(settled)
	t.Logf("while settled (%v): cluster A sent %d requests, cluster B %d (%.1f and %.1f a minute)", steady.Round(time.Second),
		env.simLog.Requests(a.who)-requestsA, env.simLog.Requests(b.who)-requestsB,
		float64(env.simLog.Requests(a.who)-requestsA)/steady.Minutes(), float64(env.simLog.Requests(b.who)-requestsB)/steady.Minutes())

	// B's namespace deleted: its pool leaves the load balancer, then
	// Cloudflare; A's load balancer stays and serves A.
	b.h.deleteNamespace(t, ns, "edge", b.tunnelID, []string{b.tunnelID})
	waitPools(t, host, []string{a.poolID}, a.poolID)
	if live := liveLoadBalancing(t); live[b.poolID] || live[b.monitorID] {
		t.Errorf("B's pool %s or monitor %s still in Cloudflare", b.poolID, b.monitorID)
	}
	if got := providertest.LoadBalancerOf(t, env.cf, host); got == nil || got.ID != lb.ID {
		t.Fatalf("A's load balancer %s replaced by %+v", lb.ID, got)
	}
	waitServedBy(t, host, a.poolID, "A's pool serves alone")

	// A's namespace deleted: the load balancer, A's pool and monitor go.
	env.deleteNamespace(t, ns, "edge", a.tunnelID, []string{a.tunnelID})
	if got := providertest.LoadBalancerOf(t, env.cf, host); got != nil {
		t.Errorf("load balancer left: %+v", got)
	}
	if live := liveLoadBalancing(t); live[a.poolID] || live[a.monitorID] || !live[forged.ID] {
		t.Errorf("after A's deletion: A's pool %s or monitor %s still live, or the forged pool %s gone: %v", a.poolID, a.monitorID, forged.ID, live)
	}

	neverWroteTheOthers(t, a, b, lb.ID, forged.ID)
}

// neverWroteTheOthers checks the simulator's log: each provider wrote its
// own objects (the evidence that the log tells them apart) and none of the
// other's, nor the forged pool.
func neverWroteTheOthers(t *testing.T, a, b *failoverSide, lbID, forgedID string) {
	t.Helper()
	own := map[*failoverSide][]string{
		a: {a.tunnelID, a.poolID, a.monitorID, lbID},
		b: {b.tunnelID, b.poolID, b.monitorID},
	}
	for side, other := range map[*failoverSide]*failoverSide{a: b, b: a} {
		wrote := env.simLog.Written(side.who)
		for _, id := range own[side] {
			if !wrote[id] {
				t.Errorf("the log holds no write of %s to its own object %s: it does not tell the providers apart", side.who, id)
			}
		}
		for _, id := range append(own[other], forgedID) {
			if wrote[id] {
				t.Errorf("%s wrote %s, not its own: %+v", side.who, id, env.simLog.Writes(side.who, id))
			}
		}
	}
}
