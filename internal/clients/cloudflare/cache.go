package cloudflare

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"time"
)

// API is every Cloudflare area; a connected client, cached or not.
type API interface {
	TunnelsAPI
	HostnameRoutesAPI
	ServicesAPI
	ZonesAPI
	DNSRecordsAPI
	TeamnetAPI
	// Account is the account the client is bound to.
	Account() string
}

// Account is the account the client is bound to.
func (c *Client) Account() string { return c.AccountID }

// snapshot is one kind's objects from one paginated list, shared by every
// managed resource of that kind in the account.
type snapshot[T any] struct {
	mu      sync.Mutex
	items   map[string]T
	fetched time.Time
	// refreshing serialises refreshes: concurrent readers of a stale
	// snapshot wait for one list instead of each listing (single flight).
	refreshing sync.Mutex
}

// get returns the object with id from a snapshot no older than ttl,
// refreshing it with list when stale. found is false when the object is
// not in the snapshot.
func (s *snapshot[T]) get(ctx context.Context, ttl time.Duration, id string, list func(context.Context) (map[string]T, error)) (T, bool, error) {
	if v, ok, fresh := s.lookup(ttl, id); fresh {
		return v, ok, nil
	}
	s.refreshing.Lock()
	defer s.refreshing.Unlock()
	// Another caller may have refreshed while we waited.
	if v, ok, fresh := s.lookup(ttl, id); fresh {
		return v, ok, nil
	}
	items, err := list(ctx)
	if err != nil {
		var zero T
		return zero, false, err
	}
	s.mu.Lock()
	s.items, s.fetched = items, time.Now()
	v, ok := s.items[id]
	s.mu.Unlock()
	return v, ok, nil
}

func (s *snapshot[T]) lookup(ttl time.Duration, id string) (T, bool, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var zero T
	if s.items == nil || time.Since(s.fetched) > ttl {
		return zero, false, false
	}
	v, ok := s.items[id]
	return v, ok, true
}

// put records a write, so the next observation sees it without a call.
func (s *snapshot[T]) put(id string, v T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.items != nil {
		s.items[id] = v
	}
}

func (s *snapshot[T]) remove(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.items, id)
}

// accountCache holds the snapshots of one account as seen with one token.
type accountCache struct {
	tunnels  snapshot[Tunnel]
	routes   snapshot[HostnameRoute]
	services snapshot[Service]
	mu       sync.Mutex
	records  map[string]*snapshot[DNSRecord] // by zone ID
}

func (a *accountCache) zoneRecords(zoneID string) *snapshot[DNSRecord] {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.records == nil {
		a.records = map[string]*snapshot[DNSRecord]{}
	}
	s, ok := a.records[zoneID]
	if !ok {
		s = &snapshot[DNSRecord]{}
		a.records[zoneID] = s
	}
	return s
}

var (
	cachesMu sync.Mutex
	caches   = map[string]*accountCache{}
)

// accountCacheFor is shared by every client of the same token, account and
// endpoint in the process; the token is keyed by its hash only.
func accountCacheFor(token, account, endpoint string) *accountCache {
	sum := sha256.Sum256([]byte(token + "\x00" + account + "\x00" + endpoint))
	key := hex.EncodeToString(sum[:])
	cachesMu.Lock()
	defer cachesMu.Unlock()
	c, ok := caches[key]
	if !ok {
		c = &accountCache{}
		caches[key] = c
	}
	return c
}

// CachedClient serves gets by ID from an account-wide observation: one
// paginated list per kind refreshes every object of that kind at most once
// per TTL, so the cost of observing does not grow with the number of
// managed resources. A miss is confirmed with one get before the object is
// declared gone (it may be newer than the snapshot, or deleted). Writes go
// to Cloudflare and update the snapshot.
type CachedClient struct {
	*Client
	ttl   time.Duration
	cache *accountCache
}

var _ API = &CachedClient{}

func collectByID[T any](items []T, id func(T) string) map[string]T {
	m := make(map[string]T, len(items))
	for _, it := range items {
		m[id(it)] = it
	}
	return m
}

// GetTunnel serves a live tunnel from the snapshot; anything else (a
// deleted or brand-new tunnel) is confirmed with a get.
func (c *CachedClient) GetTunnel(ctx context.Context, id string) (*Tunnel, error) {
	t, ok, err := c.cache.tunnels.get(ctx, c.ttl, id, func(ctx context.Context) (map[string]Tunnel, error) {
		ts, err := c.Client.ListTunnels(ctx, TunnelFilter{})
		return collectByID(ts, func(t Tunnel) string { return t.ID }), err
	})
	if err != nil {
		return nil, err
	}
	if ok {
		return &t, nil
	}
	got, err := c.Client.GetTunnel(ctx, id)
	if err == nil && !got.Deleted() {
		c.cache.tunnels.put(id, *got)
	}
	return got, err
}

// CreateTunnel creates and records the tunnel.
func (c *CachedClient) CreateTunnel(ctx context.Context, name, configSrc string) (*Tunnel, error) {
	t, err := c.Client.CreateTunnel(ctx, name, configSrc)
	if err == nil {
		cp := *t
		cp.Token = "" // the snapshot never holds the run token
		c.cache.tunnels.put(t.ID, cp)
	}
	return t, err
}

// RenameTunnel renames and records the tunnel.
func (c *CachedClient) RenameTunnel(ctx context.Context, id, name string) (*Tunnel, error) {
	t, err := c.Client.RenameTunnel(ctx, id, name)
	if err == nil {
		c.cache.tunnels.put(id, *t)
	}
	return t, err
}

// DeleteTunnel deletes and forgets the tunnel.
func (c *CachedClient) DeleteTunnel(ctx context.Context, id string) error {
	err := c.Client.DeleteTunnel(ctx, id)
	if err == nil || IsNotFound(err) {
		c.cache.tunnels.remove(id)
	}
	return err
}

// GetHostnameRoute serves a live route from the snapshot.
func (c *CachedClient) GetHostnameRoute(ctx context.Context, id string) (*HostnameRoute, error) {
	r, ok, err := c.cache.routes.get(ctx, c.ttl, id, func(ctx context.Context) (map[string]HostnameRoute, error) {
		rs, err := c.Client.ListHostnameRoutes(ctx, HostnameRouteFilter{})
		return collectByID(rs, func(r HostnameRoute) string { return r.ID }), err
	})
	if err != nil {
		return nil, err
	}
	if ok {
		return &r, nil
	}
	got, err := c.Client.GetHostnameRoute(ctx, id)
	if err == nil && !got.Deleted() {
		c.cache.routes.put(id, *got)
	}
	return got, err
}

// CreateHostnameRoute creates and records the route.
func (c *CachedClient) CreateHostnameRoute(ctx context.Context, in HostnameRouteInput) (*HostnameRoute, error) {
	r, err := c.Client.CreateHostnameRoute(ctx, in)
	if err == nil {
		c.cache.routes.put(r.ID, *r)
	}
	return r, err
}

// UpdateHostnameRoute updates and records the route.
func (c *CachedClient) UpdateHostnameRoute(ctx context.Context, id string, in HostnameRouteInput) (*HostnameRoute, error) {
	r, err := c.Client.UpdateHostnameRoute(ctx, id, in)
	if err == nil {
		c.cache.routes.put(id, *r)
	}
	return r, err
}

// DeleteHostnameRoute deletes and forgets the route.
func (c *CachedClient) DeleteHostnameRoute(ctx context.Context, id string) error {
	err := c.Client.DeleteHostnameRoute(ctx, id)
	if err == nil || IsNotFound(err) {
		c.cache.routes.remove(id)
	}
	return err
}

// GetService serves a service from the snapshot.
func (c *CachedClient) GetService(ctx context.Context, id string) (*Service, error) {
	s, ok, err := c.cache.services.get(ctx, c.ttl, id, func(ctx context.Context) (map[string]Service, error) {
		ss, err := c.Client.ListServices(ctx)
		return collectByID(ss, func(s Service) string { return s.ServiceID }), err
	})
	if err != nil {
		return nil, err
	}
	if ok {
		return &s, nil
	}
	got, err := c.Client.GetService(ctx, id)
	if err == nil {
		c.cache.services.put(id, *got)
	}
	return got, err
}

// CreateService creates and records the service.
func (c *CachedClient) CreateService(ctx context.Context, s Service) (*Service, error) {
	got, err := c.Client.CreateService(ctx, s)
	if err == nil {
		c.cache.services.put(got.ServiceID, *got)
	}
	return got, err
}

// UpdateService updates and records the service.
func (c *CachedClient) UpdateService(ctx context.Context, id string, s Service) (*Service, error) {
	got, err := c.Client.UpdateService(ctx, id, s)
	if err == nil {
		c.cache.services.put(id, *got)
	}
	return got, err
}

// DeleteService deletes and forgets the service.
func (c *CachedClient) DeleteService(ctx context.Context, id string) error {
	err := c.Client.DeleteService(ctx, id)
	if err == nil || IsNotFound(err) {
		c.cache.services.remove(id)
	}
	return err
}

// GetDNSRecord serves a record from its zone's snapshot.
func (c *CachedClient) GetDNSRecord(ctx context.Context, zoneID, id string) (*DNSRecord, error) {
	r, ok, err := c.cache.zoneRecords(zoneID).get(ctx, c.ttl, id, func(ctx context.Context) (map[string]DNSRecord, error) {
		rs, err := c.Client.ListDNSRecords(ctx, zoneID, DNSRecordFilter{})
		return collectByID(rs, func(r DNSRecord) string { return r.ID }), err
	})
	if err != nil {
		return nil, err
	}
	if ok {
		return &r, nil
	}
	got, err := c.Client.GetDNSRecord(ctx, zoneID, id)
	if err == nil {
		c.cache.zoneRecords(zoneID).put(id, *got)
	}
	return got, err
}

// CreateDNSRecord creates and records the record.
func (c *CachedClient) CreateDNSRecord(ctx context.Context, zoneID string, r DNSRecord) (*DNSRecord, error) {
	got, err := c.Client.CreateDNSRecord(ctx, zoneID, r)
	if err == nil {
		c.cache.zoneRecords(zoneID).put(got.ID, *got)
	}
	return got, err
}

// UpdateDNSRecord updates and records the record.
func (c *CachedClient) UpdateDNSRecord(ctx context.Context, zoneID, id string, r DNSRecord) (*DNSRecord, error) {
	got, err := c.Client.UpdateDNSRecord(ctx, zoneID, id, r)
	if err == nil {
		c.cache.zoneRecords(zoneID).put(id, *got)
	}
	return got, err
}

// DeleteDNSRecord deletes and forgets the record.
func (c *CachedClient) DeleteDNSRecord(ctx context.Context, zoneID, id string) error {
	err := c.Client.DeleteDNSRecord(ctx, zoneID, id)
	if err == nil || IsNotFound(err) {
		c.cache.zoneRecords(zoneID).remove(id)
	}
	return err
}
