package cloudflare

import (
	"context"
)

// Load Balancing objects are observed like every other kind: one list per
// kind (per zone for load balancers) refreshes every resource of it at most
// once per TTL. Their lists are asked only to find what a create of
// unknown outcome left, or who holds a name or hostname, so they answer
// from a list sent after the time ListedAfter put in ctx, else now.

var lbMonitorKind = kind[LoadBalancerMonitor]{
	getOp:      "cannot get load balancer monitor",
	id:         func(m *LoadBalancerMonitor) string { return m.ID },
	list:       (*Client).ListLoadBalancerMonitors,
	get:        (*Client).GetLoadBalancerMonitor,
	noun:       "load balancer monitor",
	permission: "Account › Load Balancing: Monitors and Pools: Edit",
}

func (c *CachedClient) cachedLBMonitors() cached[LoadBalancerMonitor] {
	return cached[LoadBalancerMonitor]{c: c, s: &c.cache.lbMonitors, k: lbMonitorKind}
}

// GetLoadBalancerMonitor serves a monitor from the snapshot.
func (c *CachedClient) GetLoadBalancerMonitor(ctx context.Context, id string) (*LoadBalancerMonitor, error) {
	return c.cachedLBMonitors().get(ctx, id)
}

// ListLoadBalancerMonitors lists now, or answers from a list sent after
// the time ListedAfter put in ctx.
func (c *CachedClient) ListLoadBalancerMonitors(ctx context.Context) ([]LoadBalancerMonitor, error) {
	return c.cachedLBMonitors().listSince(ctx, listedAfter(ctx), nil)
}

// CreateLoadBalancerMonitor creates and records the monitor.
func (c *CachedClient) CreateLoadBalancerMonitor(ctx context.Context, in LoadBalancerMonitorInput) (*LoadBalancerMonitor, error) {
	return create(ctx, c.cachedLBMonitors(), in, c.Client.CreateLoadBalancerMonitor)
}

// UpdateLoadBalancerMonitor updates and records the monitor.
func (c *CachedClient) UpdateLoadBalancerMonitor(ctx context.Context, id string, in LoadBalancerMonitorInput) (*LoadBalancerMonitor, error) {
	return update(ctx, c.cachedLBMonitors(), id, in, c.Client.UpdateLoadBalancerMonitor)
}

// DeleteLoadBalancerMonitor deletes and forgets the monitor.
func (c *CachedClient) DeleteLoadBalancerMonitor(ctx context.Context, id string) error {
	return c.cachedLBMonitors().remove(ctx, id, c.Client.DeleteLoadBalancerMonitor)
}

var poolKind = kind[Pool]{
	getOp:      "cannot get load balancer pool",
	id:         func(p *Pool) string { return p.ID },
	list:       (*Client).ListPools,
	get:        (*Client).GetPool,
	noun:       "load balancer pool",
	permission: "Account › Load Balancing: Monitors and Pools: Edit",
}

func (c *CachedClient) cachedPools() cached[Pool] {
	return cached[Pool]{c: c, s: &c.cache.lbPools, k: poolKind}
}

// GetPool serves a pool from the snapshot.
func (c *CachedClient) GetPool(ctx context.Context, id string) (*Pool, error) {
	return c.cachedPools().get(ctx, id)
}

// ListPools lists now, or answers from a list sent after the time
// ListedAfter put in ctx.
func (c *CachedClient) ListPools(ctx context.Context) ([]Pool, error) {
	return c.cachedPools().listSince(ctx, listedAfter(ctx), nil)
}

// CreatePool creates and records the pool.
func (c *CachedClient) CreatePool(ctx context.Context, in PoolInput) (*Pool, error) {
	return create(ctx, c.cachedPools(), in, c.Client.CreatePool)
}

// UpdatePool updates and records the pool.
func (c *CachedClient) UpdatePool(ctx context.Context, id string, in PoolInput) (*Pool, error) {
	return update(ctx, c.cachedPools(), id, in, c.Client.UpdatePool)
}

// DeletePool deletes and forgets the pool.
func (c *CachedClient) DeletePool(ctx context.Context, id string) error {
	err := c.cachedPools().remove(ctx, id, c.Client.DeletePool)
	if err == nil {
		c.cache.forgetPoolHealth(id)
	}
	return err
}

// zoneLoadBalancers is the snapshot of one zone's load balancers.
func (a *accountCache) zoneLoadBalancers(zoneID string) *snapshot[LoadBalancer] {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.lbs == nil {
		a.lbs = map[string]*snapshot[LoadBalancer]{}
	}
	s, ok := a.lbs[zoneID]
	if !ok {
		s = &snapshot[LoadBalancer]{}
		a.lbs[zoneID] = s
	}
	return s
}

func (c *CachedClient) cachedLoadBalancers(zoneID string) cached[LoadBalancer] {
	return cached[LoadBalancer]{c: c, s: c.cache.zoneLoadBalancers(zoneID), k: kind[LoadBalancer]{
		getOp: "cannot get load balancer",
		id:    func(lb *LoadBalancer) string { return lb.ID },
		list: func(cl *Client, ctx context.Context) ([]LoadBalancer, error) {
			return cl.ListLoadBalancers(ctx, zoneID)
		},
		get: func(cl *Client, ctx context.Context, id string) (*LoadBalancer, error) {
			return cl.GetLoadBalancer(ctx, zoneID, id)
		},
		noun:       "load balancer",
		permission: "Zone › Load Balancers: Edit",
	}}
}

// GetLoadBalancer serves a load balancer from its zone's snapshot.
func (c *CachedClient) GetLoadBalancer(ctx context.Context, zoneID, id string) (*LoadBalancer, error) {
	return c.cachedLoadBalancers(zoneID).get(ctx, id)
}

// ListLoadBalancers lists the zone's load balancers now, or answers from a
// list sent after the time ListedAfter put in ctx.
func (c *CachedClient) ListLoadBalancers(ctx context.Context, zoneID string) ([]LoadBalancer, error) {
	return c.cachedLoadBalancers(zoneID).listSince(ctx, listedAfter(ctx), nil)
}

// CreateLoadBalancer creates and records the load balancer.
func (c *CachedClient) CreateLoadBalancer(ctx context.Context, zoneID string, in LoadBalancerInput) (*LoadBalancer, error) {
	return c.cachedLoadBalancers(zoneID).write(ctx, "", func(ctx context.Context) (*LoadBalancer, error) {
		return c.Client.CreateLoadBalancer(ctx, zoneID, in)
	})
}

// UpdateLoadBalancer updates and records the load balancer.
func (c *CachedClient) UpdateLoadBalancer(ctx context.Context, zoneID, id string, in LoadBalancerInput) (*LoadBalancer, error) {
	return c.cachedLoadBalancers(zoneID).write(ctx, id, func(ctx context.Context) (*LoadBalancer, error) {
		return c.Client.UpdateLoadBalancer(ctx, zoneID, id, in)
	})
}

// DeleteLoadBalancer deletes and forgets the load balancer.
func (c *CachedClient) DeleteLoadBalancer(ctx context.Context, zoneID, id string) error {
	return c.cachedLoadBalancers(zoneID).remove(ctx, id, func(ctx context.Context, id string) error {
		return c.Client.DeleteLoadBalancer(ctx, zoneID, id)
	})
}
