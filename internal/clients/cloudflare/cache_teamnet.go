package cloudflare

import (
	"context"
	"time"
)

// FreshFor is how old a snapshot ListCIDRRoutesNow answers from may be:
// a second, so that a burst of creates shares one listing while a route
// made elsewhere (the dashboard, another token) since the last poll is
// seen before a create, a move or a deletion relies on its absence.
const FreshFor = time.Second

var cidrRouteKind = kind[CIDRRoute]{
	getOp:   "cannot get CIDR route",
	id:      func(r *CIDRRoute) string { return r.ID },
	deleted: (*CIDRRoute).Deleted,
	list: func(c *Client, ctx context.Context) ([]CIDRRoute, error) {
		return c.ListCIDRRoutes(ctx, CIDRRouteFilter{})
	},
	get: (*Client).GetCIDRRoute,
	// What a refused get names (AccessLostError). Cloudflare lists a
	// route only to a token that may read its tunnel.
	noun:       "network route",
	permission: "Account › Cloudflare Tunnel: Edit (or Cloudflare One Networks: Edit), for the account or for the route's tunnel",
}

func (c *CachedClient) cachedCIDRRoutes() cached[CIDRRoute] {
	return cached[CIDRRoute]{c: c, s: &c.cache.cidr, k: cidrRouteKind}
}

// GetCIDRRoute serves a live route from the snapshot; anything else (a
// deleted or brand-new route) is confirmed with a get.
func (c *CachedClient) GetCIDRRoute(ctx context.Context, id string) (*CIDRRoute, error) {
	return c.cachedCIDRRoutes().get(ctx, id)
}

// ListCIDRRoutes serves live routes from the snapshot with Cloudflare's
// filter semantics, so looking for a route's natural key or for overlapping
// routes costs no call.
func (c *CachedClient) ListCIDRRoutes(ctx context.Context, f CIDRRouteFilter) ([]CIDRRoute, error) {
	return c.cachedCIDRRoutes().list(ctx, c.observeTTL(), f.Keep)
}

// ListCIDRRoutesNow serves ListCIDRRoutes from a snapshot at most FreshFor
// old, listing again when it is older.
func (c *CachedClient) ListCIDRRoutesNow(ctx context.Context, f CIDRRouteFilter) ([]CIDRRoute, error) {
	return c.cachedCIDRRoutes().list(ctx, min(c.observeTTL(), FreshFor), f.Keep)
}

// ListCIDRRoutesSince serves ListCIDRRoutes from a list sent no earlier
// than t, listing again when the snapshot's is older.
func (c *CachedClient) ListCIDRRoutesSince(ctx context.Context, f CIDRRouteFilter, t time.Time) ([]CIDRRoute, error) {
	return c.cachedCIDRRoutes().listSince(ctx, t, f.Keep)
}

// CreateCIDRRoute creates and records the route.
func (c *CachedClient) CreateCIDRRoute(ctx context.Context, in CIDRRouteInput) (*CIDRRoute, error) {
	return create(ctx, c.cachedCIDRRoutes(), in, c.Client.CreateCIDRRoute)
}

// UpdateCIDRRoute updates and records the route.
func (c *CachedClient) UpdateCIDRRoute(ctx context.Context, id string, in CIDRRouteInput) (*CIDRRoute, error) {
	return update(ctx, c.cachedCIDRRoutes(), id, in, c.Client.UpdateCIDRRoute)
}

// DeleteCIDRRoute deletes and forgets the route.
func (c *CachedClient) DeleteCIDRRoute(ctx context.Context, id string) error {
	return c.cachedCIDRRoutes().remove(ctx, id, c.Client.DeleteCIDRRoute)
}

var virtualNetworkKind = kind[VirtualNetwork]{
	getOp:   "cannot get virtual network",
	id:      func(v *VirtualNetwork) string { return v.ID },
	deleted: (*VirtualNetwork).Deleted,
	list:    (*Client).ListVirtualNetworks,
	get:     (*Client).GetVirtualNetwork,
	// What a refused get names (AccessLostError).
	noun:       "virtual network",
	permission: "Account › Cloudflare Tunnel: Edit (or Cloudflare One Networks: Edit)",
}

func (c *CachedClient) cachedVirtualNetworks() cached[VirtualNetwork] {
	return cached[VirtualNetwork]{c: c, s: &c.cache.vnets, k: virtualNetworkKind}
}

// GetVirtualNetwork serves a live virtual network from the snapshot.
func (c *CachedClient) GetVirtualNetwork(ctx context.Context, id string) (*VirtualNetwork, error) {
	return c.cachedVirtualNetworks().get(ctx, id)
}

// ListVirtualNetworks serves every live virtual network from the snapshot.
func (c *CachedClient) ListVirtualNetworks(ctx context.Context) ([]VirtualNetwork, error) {
	return c.cachedVirtualNetworks().list(ctx, c.observeTTL(), nil)
}

// recordVNet records a virtual network write. Making one the default takes
// the flag from another, which the snapshot cannot know: it lists again.
func (c *CachedClient) recordVNet(err error, id string, v *VirtualNetwork, in VirtualNetworkInput) {
	if err == nil && in.IsDefaultNetwork != nil && *in.IsDefaultNetwork {
		c.cache.vnets.invalidate()
		return
	}
	afterWrite(&c.cache.vnets, err, nil, id, v)
}

// CreateVirtualNetwork creates and records the virtual network.
func (c *CachedClient) CreateVirtualNetwork(ctx context.Context, in VirtualNetworkInput) (*VirtualNetwork, error) {
	v, err := c.Client.CreateVirtualNetwork(ctx, in)
	c.recordVNet(err, idOf(v, virtualNetworkKind.id), v, in)
	return v, err
}

// UpdateVirtualNetwork updates and records the virtual network.
func (c *CachedClient) UpdateVirtualNetwork(ctx context.Context, id string, in VirtualNetworkInput) (*VirtualNetwork, error) {
	v, err := c.Client.UpdateVirtualNetwork(ctx, id, in)
	c.recordVNet(err, id, v, in)
	return v, err
}

// DeleteVirtualNetwork deletes and forgets the virtual network.
func (c *CachedClient) DeleteVirtualNetwork(ctx context.Context, id string) error {
	return c.cachedVirtualNetworks().remove(ctx, id, c.Client.DeleteVirtualNetwork)
}
