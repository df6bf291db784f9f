package providertest

import (
	"context"
	"slices"
	"testing"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim"
)

// What the simulated account holds, for tests to assert on.

// HostnameRoutes are the account's hostname routes for exactly host.
func (p *Provider) HostnameRoutes(t *testing.T, host string) []cloudflare.HostnameRoute {
	t.Helper()
	rs, err := p.Cloudflare.ListHostnameRoutes(context.Background(), cloudflare.HostnameRouteFilter{Hostname: host})
	if err != nil {
		t.Fatal(err)
	}
	var out []cloudflare.HostnameRoute
	for _, r := range rs {
		if r.Hostname == host {
			out = append(out, r)
		}
	}
	return out
}

// VPCServices are the account's Workers VPC services called name.
func (p *Provider) VPCServices(t *testing.T, name string) []cloudflare.Service {
	t.Helper()
	ss, err := p.Cloudflare.ListServices(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []cloudflare.Service
	for _, s := range ss {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// Records are the DNS records called name in zone example.com.
func (p *Provider) Records(t *testing.T, name string) []cloudflare.DNSRecord {
	t.Helper()
	rs, err := p.Cloudflare.ListDNSRecords(context.Background(), sim.ZoneID("example.com"), cloudflare.DNSRecordFilter{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// TunnelConfig is the remote configuration document of tunnel id.
func (p *Provider) TunnelConfig(t *testing.T, id string) string {
	t.Helper()
	tc, err := p.Cloudflare.GetTunnelConfiguration(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return string(tc.Config)
}

// Pool is the account's Load Balancing pool called name; nil when there
// is none.
func (p *Provider) Pool(t *testing.T, name string) *cloudflare.Pool {
	t.Helper()
	return PoolNamed(t, p.Cloudflare, name)
}

// LoadBalancer is the load balancer of host in zone example.com; nil when
// there is none.
func (p *Provider) LoadBalancer(t *testing.T, host string) *cloudflare.LoadBalancer {
	t.Helper()
	return LoadBalancerOf(t, p.Cloudflare, host)
}

// PoolNamed is the pool called name in the account c reads (this
// package's simulator, or an end-to-end test's); nil when there is none.
func PoolNamed(t *testing.T, c *cloudflare.Client, name string) *cloudflare.Pool {
	t.Helper()
	pools, err := c.ListPools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return found(pools, func(p cloudflare.Pool) bool { return p.Name == name })
}

// LoadBalancerOf is the load balancer of host in zone example.com of the
// account c reads; nil when there is none.
func LoadBalancerOf(t *testing.T, c *cloudflare.Client, host string) *cloudflare.LoadBalancer {
	t.Helper()
	lbs, err := c.ListLoadBalancers(context.Background(), sim.ZoneID("example.com"))
	if err != nil {
		t.Fatal(err)
	}
	return found(lbs, func(lb cloudflare.LoadBalancer) bool { return lb.Name == host })
}

// found is the first item that matches; nil when none does.
func found[T any](items []T, match func(T) bool) *T {
	if i := slices.IndexFunc(items, match); i >= 0 {
		return &items[i]
	}
	return nil
}
