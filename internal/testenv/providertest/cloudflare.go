package providertest

import (
	"context"
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
