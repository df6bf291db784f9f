package cloudflare

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare/budget"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim/contract"
)

// Monitors, pools and load balancers through the cached client and the
// simulator, every request checked against Cloudflare's OpenAPI document:
// what is written reads back the same, a deletion of something in use is
// told apart (IsReferenced), and a gone object is not found.
func TestLoadBalancingRoundTrip(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, sim.Options{}, 0)
	c := NewCached(clients.Config{Token: testToken, AccountID: testAccount, Endpoint: f.srv.URL + "/client/v4/"}, Options{
		Budgets: budget.NewRegistry(budget.Options{Limit: 100000}), Transport: contract.NewTransport(t, http.DefaultTransport), ObservationTTL: time.Minute,
	})
	zone := sim.ZoneID("example.com")

	monIn := LoadBalancerMonitorInput{Type: "https", Description: "probe [crossplane:o/x]", Method: "GET", Path: "/healthz", ExpectedCodes: "2xx", Header: map[string][]string{"Host": {"app.example.com"}}, Interval: 60, Timeout: 5, Retries: 2}
	mon := must(c.CreateLoadBalancerMonitor(ctx, monIn))
	got := must(c.GetLoadBalancerMonitor(ctx, mon.ID))
	if got.Path != "/healthz" || got.ExpectedCodes != "2xx" || got.Description != monIn.Description || got.CreatedOn.IsZero() {
		t.Errorf("monitor read back: %+v", got)
	}

	poolIn := PoolInput{Name: "a", Enabled: true, MinimumOrigins: 1, Monitor: mon.ID, Origins: []PoolOrigin{{Name: "t", Address: "6b7b9f8c-0d3e-4b59-9f38-1e6f1b0c6a11.cfargotunnel.com", Enabled: true, Weight: 1, Header: map[string][]string{"Host": {"app.example.com"}}}}}
	pool := must(c.CreatePool(ctx, poolIn))
	if diff := cmp.Diff(poolIn.Origins, must(c.GetPool(ctx, pool.ID)).Origins); diff != "" {
		t.Errorf("origins read back (-sent +got):\n%s", diff)
	}
	if ps := must(c.ListPools(ctx)); len(ps) != 1 || ps[0].Monitor != mon.ID {
		t.Errorf("ListPools = %+v", ps)
	}

	lbIn := LoadBalancerInput{Name: "app.example.com", Enabled: true, Proxied: true, DefaultPools: []string{pool.ID}, FallbackPool: pool.ID, SteeringPolicy: "off", SessionAffinity: "cookie", SessionAffinityTTL: ptr.To(1800.0)}
	lb := must(c.CreateLoadBalancer(ctx, zone, lbIn))
	if lbs := must(c.ListLoadBalancers(ctx, zone)); len(lbs) != 1 || lbs[0].Name != "app.example.com" || lbs[0].ZoneID != zone {
		t.Errorf("ListLoadBalancers = %+v", lbs)
	}
	lbIn.SteeringPolicy = "random"
	if u := must(c.UpdateLoadBalancer(ctx, zone, lb.ID, lbIn)); u.SteeringPolicy != "random" {
		t.Errorf("updated steering = %q", u.SteeringPolicy)
	}

	if err := c.DeleteLoadBalancerMonitor(ctx, mon.ID); !IsReferenced(err) {
		t.Errorf("deleting a monitor a pool uses: %v, want code %d", err, CodeReferenced)
	}
	if err := c.DeletePool(ctx, pool.ID); !IsReferenced(err) {
		t.Errorf("deleting a pool a load balancer uses: %v, want code %d", err, CodeReferenced)
	}
	must(0, c.DeleteLoadBalancer(ctx, zone, lb.ID))
	must(0, c.DeletePool(ctx, pool.ID))
	must(0, c.DeleteLoadBalancerMonitor(ctx, mon.ID))
	if _, err := c.Client.GetPool(ctx, pool.ID); !IsNotFound(err) {
		t.Errorf("a deleted pool: %v, want not found", err)
	}
	if _, err := c.Client.GetLoadBalancer(ctx, zone, lb.ID); !IsNotFound(err) {
		t.Errorf("a deleted load balancer: %v, want not found", err)
	}
}
