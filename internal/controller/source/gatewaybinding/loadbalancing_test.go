package gatewaybinding_test

import (
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/gatewaybinding"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

// An HTTPRoute the binding publishes whose lb-* annotations load-balance
// its hostname, as a native Gateway's route does: the binding's
// PublicHostname carries spec.loadBalancing, its pool (the binding's
// tunnel the one origin, the hostname its Host header) and the load
// balancer are made in Cloudflare, and the simulator serves the hostname
// from that pool; no DNS record is made and status.hostnames gives no
// CNAME. A bad lb-* value is then told on the binding (Programmed=False,
// InvalidAnnotation, a Warning) and keeps the hostname load-balanced as it
// was; deleting the route takes the pool and load balancer out of
// Cloudflare.
func TestARoutesAnnotationsLoadBalanceItsHostname(t *testing.T) {
	t.Parallel() // each in its own namespace, after TestWaitsForGatewayAPI
	w := setup(t)
	ns := w.ns
	p.Sim.SetConnectors(w.tunnelID, 2) // cloudflared connected: the pool's origin answers
	host, pool := "lb-"+ns+".example.com", "gb-"+ns
	r := route(ns, "app", "web", host)
	r.Annotations = map[string]string{v1alpha1.AnnotationLBPool: pool, v1alpha1.AnnotationLBMonitorPath: "/healthz", v1alpha1.AnnotationLBPools: pool}
	createRoute(t, r, true)
	b := binding(ns)
	p.Create(t, b)

	ph := &v1alpha1.PublicHostname{}
	ph.Namespace, ph.Name = ns, publish.ObjectName(b.Name, publish.KindPublicHostname, host)
	// Ready: programmed, and the DNS (here, the load balancer) ready.
	waitCondition(t, b, xpv2.TypeReady, corev1.ConditionTrue, "Available")
	if err := p.Get(ph); err != nil {
		t.Fatal(err)
	}
	if lb := ph.Spec.LoadBalancing; lb == nil || lb.Pool != pool || lb.Monitor == nil || lb.Monitor.Path == nil || *lb.Monitor.Path != "/healthz" ||
		lb.LoadBalancer == nil || !slices.Equal(lb.LoadBalancer.Pools, []string{pool}) {
		t.Fatalf("spec.loadBalancing %+v", lb)
	}
	if c := ph.GetCondition(v1alpha1.TypeDNSReady); c.Reason != "LoadBalanced" {
		t.Errorf("the PublicHostname's DNSReady = %s %s, want its load balancer holding the name", c.Reason, c.Message)
	}
	if hs := get(t, b).Status.Hostnames; len(hs) != 1 || hs[0].State != v1alpha1.HostnamePublished || hs[0].CNAME != "" {
		t.Errorf("status.hostnames = %+v, want %s published with no CNAME", hs, host)
	}
	cfPool := p.Pool(t, pool)
	if cfPool == nil || len(cfPool.Origins) != 1 || cfPool.Origins[0].Address != w.tunnelID+".cfargotunnel.com" || !slices.Equal(cfPool.Origins[0].Header["Host"], []string{host}) {
		t.Fatalf("pool %s = %+v, want the binding's tunnel as its origin with Host %s", pool, cfPool, host)
	}
	wait.Eventually(t, wait.Patience, "the simulator serving "+host+" from the pool", func() error {
		if lb := p.LoadBalancer(t, host); lb == nil || !slices.Equal(lb.DefaultPools, []string{cfPool.ID}) {
			return fmt.Errorf("load balancer %+v, want pool %s", lb, cfPool.ID)
		}
		d, ok := p.Sim.Decide(host)
		if !ok || d.PoolName != pool || d.Fallback || d.OriginAddress != w.tunnelID+".cfargotunnel.com" {
			return fmt.Errorf("decision %+v (%v)", d, ok)
		}
		return nil
	})
	if rs := records(t, host); len(rs) != 0 {
		t.Errorf("a load-balanced hostname has DNS records: %+v", rs)
	}

	// A typo: the interval is below 5 s. Told on the binding; the
	// hostname stays load-balanced as it was, still with no record.
	p.Edit(t, r, func() { r.Annotations[v1alpha1.AnnotationLBMonitorInterval] = "1s" })
	answer(t, r, true)
	waitCondition(t, b, gatewaybinding.TypeProgrammed, corev1.ConditionFalse, gatewaybinding.ReasonInvalidAnnotation)
	waitEvent(t, ns, b.Name, gatewaybinding.ReasonInvalidAnnotation, v1alpha1.AnnotationLBMonitorInterval)
	if st := states(get(t, b)); st["HTTPRoute/app "+host] != v1alpha1.HostnameInvalid {
		t.Errorf("states %v, want %s Invalid", st, host)
	}
	if err := p.Get(ph); err != nil || ph.Spec.LoadBalancing == nil || ph.Spec.LoadBalancing.Pool != pool || ph.Spec.LoadBalancing.Monitor.Interval != nil {
		t.Fatalf("a bad lb-* value changed the published hostname: %v %+v", err, ph.Spec.LoadBalancing)
	}
	if d, ok := p.Sim.Decide(host); !ok || d.PoolName != pool {
		t.Errorf("a bad lb-* value moved the decision: %+v (%v)", d, ok)
	}
	if rs := records(t, host); len(rs) != 0 {
		t.Errorf("a bad lb-* value gave the hostname DNS records: %+v", rs)
	}

	p.DeleteAndWait(t, r)
	wait.Eventually(t, wait.Patience, "the pool and load balancer out of Cloudflare", func() error {
		if err := p.Get(ph); !kerrors.IsNotFound(err) {
			return fmt.Errorf("PublicHostname %s still there (%v)", ph.Name, err)
		}
		if p.Pool(t, pool) != nil || p.LoadBalancer(t, host) != nil {
			return fmt.Errorf("pool or load balancer of %s left", host)
		}
		return nil
	})
}
