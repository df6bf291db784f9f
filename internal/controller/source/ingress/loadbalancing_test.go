package ingress_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

func monitorOf(t *testing.T, id string) *cloudflare.LoadBalancerMonitor {
	t.Helper()
	ms, err := p.Cloudflare.ListLoadBalancerMonitors(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for i := range ms {
		if ms[i].ID == id {
			return &ms[i]
		}
	}
	return nil
}

// An Ingress whose lb-* annotations load-balance its hostname: its rules
// reach its tunnel as without them, and its pool (the tunnel the one
// origin, the hostname the Host header), the pool's monitor (the path the
// annotation names) and, as it names lb-pools, the load balancer listing
// the pool are made in Cloudflare — and no DNS record: the load balancer
// holds the name. A bad lb-* value then is a Warning naming it, and takes
// nothing down; the Ingress's deletion takes all of it out of Cloudflare.
func TestAnAnnotatedIngressIsLoadBalanced(t *testing.T) {
	ns, tunnelID := setup(t)
	host := "lb-" + ns + ".example.com"
	pool := "a-" + ns
	ing := ingress(ns, "app", map[string]string{
		v1alpha1.AnnotationTunnel: "edge", v1alpha1.AnnotationPublic: "true",
		v1alpha1.AnnotationLBPool: pool, v1alpha1.AnnotationLBMonitorPath: "/healthz", v1alpha1.AnnotationLBMonitorInterval: "10s",
		v1alpha1.AnnotationLBPools: pool,
	}, host)
	p.Create(t, ing)
	wait.Eventually(t, wait.Patience, "its pool, monitor and load balancer", func() error {
		pl, lb := p.Pool(t, pool), p.LoadBalancer(t, host)
		if pl == nil || lb == nil {
			return fmt.Errorf("pool %v, load balancer %v", pl, lb)
		}
		if len(pl.Origins) != 1 || pl.Origins[0].Address != tunnelID+".cfargotunnel.com" || !slices.Equal(pl.Origins[0].Header["Host"], []string{host}) {
			t.Fatalf("pool origins %+v", pl.Origins)
		}
		if m := monitorOf(t, pl.Monitor); m == nil || m.Path != "/healthz" || m.Interval != 10 || !slices.Equal(m.Header["Host"], []string{host}) {
			return fmt.Errorf("monitor %+v", m)
		}
		if !slices.Equal(lb.DefaultPools, []string{pl.ID}) {
			return fmt.Errorf("load balancer pools %v, want [%s]", lb.DefaultPools, pl.ID)
		}
		return nil
	})
	if rs := rulesOf(t, tunnelID, host); len(rs) == 0 {
		t.Errorf("no rules for %s on the tunnel", host)
	}
	if rs := recordsNamed(t, host); len(rs) != 0 {
		t.Errorf("a load-balanced hostname has DNS records: %+v", rs)
	}
	if got, ok := p.Sim.Decide(host); !ok || got.PoolName != pool {
		t.Errorf("the load balancer would serve %s from %+v, want pool %s", host, got, pool)
	}

	setAnnotation(t, ing, v1alpha1.AnnotationLBSteering, "geo")
	waitEvent(t, ns, "app", "InvalidIngress", v1alpha1.AnnotationLBSteering)
	// Observations of the load balancers past the one the bad value met.
	p.WaitServed(t, 2, "GET", "/load_balancers$")
	if p.Pool(t, pool) == nil || p.LoadBalancer(t, host) == nil || len(rulesOf(t, tunnelID, host)) == 0 {
		t.Fatalf("a bad lb-* value took down what was published")
	}

	deleteIngress(t, ing)
	wait.Eventually(t, wait.Patience, "its pool and load balancer gone", func() error {
		if p.Pool(t, pool) != nil || p.LoadBalancer(t, host) != nil {
			return fmt.Errorf("still there")
		}
		return nil
	})
}
