package cloudflare

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"time"
)

var tunnelKind = kind[Tunnel]{
	getOp:   "cannot get tunnel",
	id:      func(t *Tunnel) string { return t.ID },
	deleted: (*Tunnel).Deleted,
	list:    func(c *Client, ctx context.Context) ([]Tunnel, error) { return c.ListTunnels(ctx, TunnelFilter{}) },
	get:     (*Client).GetTunnel,
	// What a refused get names (AccessLostError). The permission is
	// granted for the account or, since 2026-05-21, for single tunnels.
	noun:       "tunnel",
	permission: "Account › Cloudflare Tunnel: Edit (Read for an observe-only resource), for the account or for this tunnel",
}

func (c *CachedClient) cachedTunnels() cached[Tunnel] {
	return cached[Tunnel]{c: c, s: &c.cache.tunnels, k: tunnelKind}
}

// GetTunnel serves a live tunnel from the snapshot; anything else (a
// deleted or brand-new tunnel) is confirmed with a get.
func (c *CachedClient) GetTunnel(ctx context.Context, id string) (*Tunnel, error) {
	return c.cachedTunnels().get(ctx, id)
}

// ListTunnels serves live tunnels from the snapshot, so a lookup by name
// (adoption before a create) costs no call; deleted tunnels are not in the
// snapshot and are listed from Cloudflare.
func (c *CachedClient) ListTunnels(ctx context.Context, f TunnelFilter) ([]Tunnel, error) {
	if f.Deleted {
		return c.Client.ListTunnels(ctx, f)
	}
	return c.cachedTunnels().list(ctx, c.observeTTL(), f.keep)
}

// ListTunnelsSince serves ListTunnels from a list sent no earlier than t,
// listing again when the snapshot's is older.
func (c *CachedClient) ListTunnelsSince(ctx context.Context, f TunnelFilter, t time.Time) ([]Tunnel, error) {
	if f.Deleted {
		return c.Client.ListTunnels(ctx, f)
	}
	return c.cachedTunnels().listSince(ctx, t, f.keep)
}

func (f TunnelFilter) keep(t Tunnel) bool { return f.Name == "" || t.Name == f.Name }

// CreateTunnel creates and records the tunnel.
func (c *CachedClient) CreateTunnel(ctx context.Context, name, configSrc string) (*Tunnel, error) {
	t, err := c.Client.CreateTunnel(ctx, name, configSrc)
	var listed *Tunnel
	if err == nil {
		listed = ptrCopy(*t)
		listed.Token = "" // the snapshot never holds the run token
	}
	afterWrite(&c.cache.tunnels, err, nil, idOf(listed, tunnelKind.id), listed)
	return t, err
}

// RenameTunnel renames and records the tunnel.
func (c *CachedClient) RenameTunnel(ctx context.Context, id, name string) (*Tunnel, error) {
	return update(ctx, c.cachedTunnels(), id, name, c.Client.RenameTunnel)
}

// RotateTunnelSecret rotates the secret and records the tunnel.
func (c *CachedClient) RotateTunnelSecret(ctx context.Context, id, secret string) (*Tunnel, error) {
	return update(ctx, c.cachedTunnels(), id, secret, c.Client.RotateTunnelSecret)
}

// DeleteTunnel deletes and forgets the tunnel and its configuration.
func (c *CachedClient) DeleteTunnel(ctx context.Context, id string) error {
	err := c.cachedTunnels().remove(ctx, id, c.Client.DeleteTunnel)
	c.cache.forgetConfig(id)
	return err
}

// seenConfig is a tunnel's configuration document and when it was read or
// written.
type seenConfig struct {
	config TunnelConfiguration
	at     time.Time
}

// GetTunnelConfiguration serves the document as last read or written, when
// that was within the TTL: the tunnel is observed again as soon as the
// document it holds changes in Kubernetes, and the read before each write
// was a third of the tunnel's requests while a large change went out. A
// poll (every two TTLs) always reads, so drift is seen as for every other
// object.
func (c *CachedClient) GetTunnelConfiguration(ctx context.Context, id string) (*TunnelConfiguration, error) {
	if tc, ok := c.cache.config(id, c.ttl); ok {
		return tc, nil
	}
	tc, err := c.Client.GetTunnelConfiguration(ctx, id)
	if err != nil {
		return nil, err
	}
	c.cache.rememberConfig(id, tc)
	return tc, nil
}

// UpdateTunnelConfiguration writes the document and remembers Cloudflare's
// answer; a failed write may or may not have happened, so the next read
// goes to Cloudflare.
func (c *CachedClient) UpdateTunnelConfiguration(ctx context.Context, id string, config json.RawMessage) (*TunnelConfiguration, error) {
	tc, err := c.Client.UpdateTunnelConfiguration(ctx, id, config)
	if err != nil {
		c.cache.forgetConfig(id)
		return nil, err
	}
	c.cache.rememberConfig(id, tc)
	return tc, nil
}

// config returns a copy of the tunnel's document if it was seen within ttl.
func (a *accountCache) config(id string, ttl time.Duration) (*TunnelConfiguration, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	seen, ok := a.configs[id]
	if !ok || time.Since(seen.at) > ttl {
		return nil, false
	}
	tc := seen.config
	tc.Config = bytes.Clone(tc.Config)
	return &tc, true
}

func (a *accountCache) rememberConfig(id string, tc *TunnelConfiguration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.configs == nil {
		a.configs = map[string]seenConfig{}
	}
	c := *tc
	c.Config = bytes.Clone(c.Config)
	a.configs[id] = seenConfig{config: c, at: time.Now()}
}

func (a *accountCache) forgetConfig(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.configs, id)
}

var hostnameRouteKind = kind[HostnameRoute]{
	getOp:   "cannot get hostname route",
	id:      func(r *HostnameRoute) string { return r.ID },
	deleted: (*HostnameRoute).Deleted,
	list: func(c *Client, ctx context.Context) ([]HostnameRoute, error) {
		return c.ListHostnameRoutes(ctx, HostnameRouteFilter{})
	},
	get: (*Client).GetHostnameRoute,
	// What a refused get names (AccessLostError).
	noun:       "hostname route",
	permission: "Account › Cloudflare Tunnel: Edit (or Cloudflare One Networks: Edit)",
}

func (c *CachedClient) cachedHostnameRoutes() cached[HostnameRoute] {
	return cached[HostnameRoute]{c: c, s: &c.cache.routes, k: hostnameRouteKind}
}

// GetHostnameRoute serves a live route from the snapshot.
func (c *CachedClient) GetHostnameRoute(ctx context.Context, id string) (*HostnameRoute, error) {
	return c.cachedHostnameRoutes().get(ctx, id)
}

// ListHostnameRoutes serves live routes from the snapshot with Cloudflare's
// filter semantics (hostname: case-insensitive substring).
func (c *CachedClient) ListHostnameRoutes(ctx context.Context, f HostnameRouteFilter) ([]HostnameRoute, error) {
	host := strings.ToLower(f.Hostname)
	return c.cachedHostnameRoutes().list(ctx, c.observeTTL(), func(r HostnameRoute) bool {
		return (host == "" || strings.Contains(strings.ToLower(r.Hostname), host)) &&
			(f.TunnelID == "" || r.TunnelID == f.TunnelID) &&
			(f.Comment == "" || r.Comment == f.Comment)
	})
}

// CreateHostnameRoute creates and records the route.
func (c *CachedClient) CreateHostnameRoute(ctx context.Context, in HostnameRouteInput) (*HostnameRoute, error) {
	return create(ctx, c.cachedHostnameRoutes(), in, c.Client.CreateHostnameRoute)
}

// UpdateHostnameRoute updates and records the route.
func (c *CachedClient) UpdateHostnameRoute(ctx context.Context, id string, in HostnameRouteInput) (*HostnameRoute, error) {
	return update(ctx, c.cachedHostnameRoutes(), id, in, c.Client.UpdateHostnameRoute)
}

// DeleteHostnameRoute deletes and forgets the route.
func (c *CachedClient) DeleteHostnameRoute(ctx context.Context, id string) error {
	return c.cachedHostnameRoutes().remove(ctx, id, c.Client.DeleteHostnameRoute)
}

var serviceKind = kind[Service]{
	getOp: "cannot get service",
	id:    func(s *Service) string { return s.ServiceID },
	list:  (*Client).ListServices,
	get:   (*Client).GetService,
	// What a refused get names (AccessLostError).
	noun:       "VPC service",
	permission: "Account › Connectivity Directory: Edit",
}

func (c *CachedClient) cachedServices() cached[Service] {
	return cached[Service]{c: c, s: &c.cache.services, k: serviceKind}
}

// GetService serves a service from the snapshot.
func (c *CachedClient) GetService(ctx context.Context, id string) (*Service, error) {
	return c.cachedServices().get(ctx, id)
}

// ListServices serves every service from the snapshot.
func (c *CachedClient) ListServices(ctx context.Context) ([]Service, error) {
	return c.cachedServices().list(ctx, c.observeTTL(), nil)
}

// ListServicesSince serves ListServices from a list sent no earlier than
// t, listing again when the snapshot's is older.
func (c *CachedClient) ListServicesSince(ctx context.Context, t time.Time) ([]Service, error) {
	return c.cachedServices().listSince(ctx, t, nil)
}

// CreateService creates and records the service.
func (c *CachedClient) CreateService(ctx context.Context, s Service) (*Service, error) {
	return create(ctx, c.cachedServices(), s, c.Client.CreateService)
}

// UpdateService updates and records the service.
func (c *CachedClient) UpdateService(ctx context.Context, id string, s Service) (*Service, error) {
	return update(ctx, c.cachedServices(), id, s, c.Client.UpdateService)
}

// DeleteService deletes and forgets the service.
func (c *CachedClient) DeleteService(ctx context.Context, id string) error {
	return c.cachedServices().remove(ctx, id, c.Client.DeleteService)
}
