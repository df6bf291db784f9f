package gateway_test

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/client-go/util/retry"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/gateway/translate"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

// An HTTPRoute whose lb-* annotations load-balance its hostname: the
// Gateway's PublicHostname for it carries spec.loadBalancing, its pool is
// made in Cloudflare with the Gateway's tunnel as origin, and no DNS
// record is. A bad lb-* value then refuses the route (Accepted=False) and
// keeps the hostname's PublicHostname as it was.
func TestARoutesAnnotationsLoadBalanceItsHostname(t *testing.T) {
	t.Parallel()
	w := setup(t)
	ns := w.ns
	p.Create(t, service(ns, "web", 8080))
	host := "lb-" + ns + ".example.com"
	pool := "g-" + ns
	r := route(ns, ns, "app", []string{host}, pathRule(gwv1.PathMatchPathPrefix, "/", backend("web", 8080)))
	r.Annotations = map[string]string{v1alpha1.AnnotationLBPool: pool, v1alpha1.AnnotationLBMonitorPath: "/healthz"}
	p.Create(t, r)
	ph := &v1alpha1.PublicHostname{}
	ph.Namespace, ph.Name = ns, translate.PublicHostnameName(w.gateway, host)
	wait.Eventually(t, wait.Patience, "the PublicHostname load-balanced and its pool made", func() error {
		if err := p.Get(ph); err != nil {
			return err
		}
		lb := ph.Spec.LoadBalancing
		if lb == nil || lb.Pool != pool || lb.Monitor == nil || lb.Monitor.Path == nil || *lb.Monitor.Path != "/healthz" || lb.LoadBalancer != nil {
			return fmt.Errorf("spec.loadBalancing %+v", lb)
		}
		pools, err := p.Cloudflare.ListPools(context.Background())
		if err != nil {
			return err
		}
		for _, pl := range pools {
			if pl.Name == pool && len(pl.Origins) == 1 && pl.Origins[0].Address == w.tunnelID+".cfargotunnel.com" {
				return nil
			}
		}
		return fmt.Errorf("no pool %s of the Gateway's tunnel among %d", pool, len(pools))
	})
	if rs := records(t, host); len(rs) != 0 {
		t.Errorf("a load-balanced hostname has DNS records: %+v", rs)
	}

	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := p.Get(r); err != nil {
			return err
		}
		r.Annotations[v1alpha1.AnnotationLBMonitorInterval] = "1s"
		return p.Client.Update(context.Background(), r)
	})
	if err != nil {
		t.Fatal(err)
	}
	waitParentConditions(t, r, "Accepted=False/UnsupportedValue", "ResolvedRefs=True/ResolvedRefs")
	if err := p.Get(ph); err != nil || ph.Spec.LoadBalancing == nil || ph.Spec.LoadBalancing.Pool != pool {
		t.Fatalf("a bad lb-* value changed the published hostname: %v %+v", err, ph.Spec.LoadBalancing)
	}
	p.DeleteAndWait(t, r)
	gone(t, ph)
}
