package cloudflare

import (
	"context"
	"time"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare/budget"
)

// FreshFor is how old a snapshot ListCIDRRoutesNow answers from may be:
// a second, so that a burst of creates shares one listing while a route
// made elsewhere (the dashboard, another token) since the last poll is
// seen before a create, a move or a deletion relies on its absence.
const FreshFor = time.Second

func (c *CachedClient) cidrList(ctx context.Context) (map[string]CIDRRoute, error) {
	rs, err := c.Client.ListCIDRRoutes(ctx, CIDRRouteFilter{})
	return collectByID(rs, func(r CIDRRoute) string { return r.ID }), err
}

func (c *CachedClient) vnetList(ctx context.Context) (map[string]VirtualNetwork, error) {
	vs, err := c.Client.ListVirtualNetworks(ctx)
	return collectByID(vs, func(v VirtualNetwork) string { return v.ID }), err
}

// GetCIDRRoute serves a live route from the snapshot; anything else (a
// deleted or brand-new route) is confirmed with a get.
func (c *CachedClient) GetCIDRRoute(ctx context.Context, id string) (*CIDRRoute, error) {
	if c.cache.cidr.deleted(id) {
		return nil, goneError("cannot get CIDR route")
	}
	r, ok, err := c.cache.cidr.get(ctx, c.observeTTL(), id, c.cidrList)
	if err != nil {
		return nil, err
	}
	if ok {
		return &r, nil
	}
	got, err := c.Client.GetCIDRRoute(ctx, id)
	if err == nil && !got.Deleted() {
		c.cache.cidr.put(id, *got)
	}
	return got, err
}

// ListCIDRRoutes serves live routes from the snapshot with Cloudflare's
// filter semantics, so looking for a route's natural key or for overlapping
// routes costs no call.
func (c *CachedClient) ListCIDRRoutes(ctx context.Context, f CIDRRouteFilter) ([]CIDRRoute, error) {
	all, err := c.cache.cidr.all(ctx, c.observeTTL(), c.cidrList)
	if err != nil {
		return nil, err
	}
	return sortedValues(all, f.Keep), nil
}

// ListCIDRRoutesNow serves ListCIDRRoutes from a snapshot at most FreshFor
// old, listing again when it is older.
func (c *CachedClient) ListCIDRRoutesNow(ctx context.Context, f CIDRRouteFilter) ([]CIDRRoute, error) {
	all, err := c.cache.cidr.all(ctx, min(c.observeTTL(), FreshFor), c.cidrList)
	if err != nil {
		return nil, err
	}
	return sortedValues(all, f.Keep), nil
}

// ListCIDRRoutesSince serves ListCIDRRoutes from a list sent no earlier
// than t, listing again when the snapshot's is older.
func (c *CachedClient) ListCIDRRoutesSince(ctx context.Context, f CIDRRouteFilter, t time.Time) ([]CIDRRoute, error) {
	all, err := c.cache.cidr.since(ctx, t, c.cidrList)
	if err != nil {
		return nil, err
	}
	return sortedValues(all, f.Keep), nil
}

// CreateCIDRRoute creates and records the route.
func (c *CachedClient) CreateCIDRRoute(ctx context.Context, in CIDRRouteInput) (*CIDRRoute, error) {
	ctx, sent := budget.WithSendRecord(ctx)
	r, err := c.Client.CreateCIDRRoute(ctx, in)
	afterWrite(&c.cache.cidr, err, sent, idOf(r, func(r *CIDRRoute) string { return r.ID }), r)
	return r, err
}

// UpdateCIDRRoute updates and records the route.
func (c *CachedClient) UpdateCIDRRoute(ctx context.Context, id string, in CIDRRouteInput) (*CIDRRoute, error) {
	ctx, sent := budget.WithSendRecord(ctx)
	r, err := c.Client.UpdateCIDRRoute(ctx, id, in)
	afterWrite(&c.cache.cidr, err, sent, id, r)
	return r, err
}

// DeleteCIDRRoute deletes and forgets the route.
func (c *CachedClient) DeleteCIDRRoute(ctx context.Context, id string) error {
	err := c.Client.DeleteCIDRRoute(ctx, id)
	if err == nil || IsNotFound(err) {
		c.cache.cidr.remove(id)
	}
	return err
}

// GetVirtualNetwork serves a live virtual network from the snapshot.
func (c *CachedClient) GetVirtualNetwork(ctx context.Context, id string) (*VirtualNetwork, error) {
	if c.cache.vnets.deleted(id) {
		return nil, goneError("cannot get virtual network")
	}
	v, ok, err := c.cache.vnets.get(ctx, c.observeTTL(), id, c.vnetList)
	if err != nil {
		return nil, err
	}
	if ok {
		return &v, nil
	}
	got, err := c.Client.GetVirtualNetwork(ctx, id)
	if err == nil && !got.Deleted() {
		c.cache.vnets.put(id, *got)
	}
	return got, err
}

// ListVirtualNetworks serves every live virtual network from the snapshot.
func (c *CachedClient) ListVirtualNetworks(ctx context.Context) ([]VirtualNetwork, error) {
	all, err := c.cache.vnets.all(ctx, c.observeTTL(), c.vnetList)
	if err != nil {
		return nil, err
	}
	return sortedValues(all, func(VirtualNetwork) bool { return true }), nil
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
	c.recordVNet(err, idOf(v, func(v *VirtualNetwork) string { return v.ID }), v, in)
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
	err := c.Client.DeleteVirtualNetwork(ctx, id)
	if err == nil || IsNotFound(err) {
		c.cache.vnets.remove(id)
	}
	return err
}
