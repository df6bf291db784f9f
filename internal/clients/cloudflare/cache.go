package cloudflare

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare/budget"
)

// API is every Cloudflare area; a connected client, cached or not.
type API interface {
	TunnelsAPI
	HostnameRoutesAPI
	ServicesAPI
	ZonesAPI
	DNSRecordsAPI
	TeamnetAPI
	AccessAPI
	AccessGroupAPI
	ServiceTokenAPI
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
	// listed is when the list behind items was sent: a write that
	// returned before then is in it (Cloudflare's lists are consistent
	// with its writes; see docs/reliability.md for the simulator's lag).
	listed time.Time
	// gone holds IDs this process deleted: Cloudflare never reuses an ID,
	// so observing one after its delete needs no call.
	gone map[string]struct{}
	// refreshing serialises refreshes: concurrent readers of a stale
	// snapshot wait for one list instead of each listing (single flight).
	refreshing sync.Mutex
	// journal holds the writes recorded while a refresh's list is on its
	// way (nil: removed), and invalidated whether one failed meanwhile:
	// the list may have been read before they landed and must not undo
	// them. journal is nil when no refresh runs.
	journal     map[string]*T
	invalidated bool
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
	items, err := s.refresh(ctx, list)
	if err != nil {
		var zero T
		return zero, false, err
	}
	v, ok := items[id]
	return v, ok, nil
}

// refresh lists and stores the result with the writes recorded meanwhile
// applied on top, and returns a copy (the snapshot's own map changes with
// every write). The caller holds s.refreshing.
func (s *snapshot[T]) refresh(ctx context.Context, list func(context.Context) (map[string]T, error)) (map[string]T, error) {
	s.mu.Lock()
	s.journal, s.invalidated = map[string]*T{}, false
	s.mu.Unlock()
	listed := time.Now()
	items, err := list(refreshing(ctx))
	s.mu.Lock()
	defer s.mu.Unlock()
	journal, invalidated := s.journal, s.invalidated
	s.journal = nil
	if err != nil {
		return nil, err
	}
	for id, v := range journal {
		if v == nil {
			delete(items, id)
			continue
		}
		items[id] = *v
	}
	s.items, s.fetched, s.listed = items, time.Now(), listed
	if invalidated {
		s.fetched = time.Time{}
	}
	out := make(map[string]T, len(items))
	for k, v := range items {
		out[k] = v
	}
	return out, nil
}

// all returns every object in a snapshot no older than ttl, refreshing it
// with list when stale. Callers filter; the map must not be modified.
func (s *snapshot[T]) all(ctx context.Context, ttl time.Duration, list func(context.Context) (map[string]T, error)) (map[string]T, error) {
	if items, fresh := s.current(ttl); fresh {
		return items, nil
	}
	s.refreshing.Lock()
	defer s.refreshing.Unlock()
	if items, fresh := s.current(ttl); fresh {
		return items, nil
	}
	return s.refresh(ctx, list)
}

// since returns every object from a list sent no earlier than t, listing
// again when the snapshot's is older: what Cloudflare held after a write
// that returned at t. Callers waiting together share one list.
func (s *snapshot[T]) since(ctx context.Context, t time.Time, list func(context.Context) (map[string]T, error)) (map[string]T, error) {
	if items, ok := s.listedSince(t); ok {
		return items, nil
	}
	s.refreshing.Lock()
	defer s.refreshing.Unlock()
	if items, ok := s.listedSince(t); ok {
		return items, nil
	}
	return s.refresh(ctx, list)
}

// listedSince copies the snapshot's objects when its list was sent no
// earlier than t and no write of unknown outcome has happened since.
func (s *snapshot[T]) listedSince(t time.Time) (map[string]T, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.items == nil || s.fetched.IsZero() || s.listed.Before(t) {
		return nil, false
	}
	out := make(map[string]T, len(s.items))
	for k, v := range s.items {
		out[k] = v
	}
	return out, true
}

// refreshing marks a snapshot's list: one request that observes every
// object of its kind, so it goes ahead of single-object writes in the
// budget, and a resource that was just created is confirmed without
// waiting for the queue of creates.
func refreshing(ctx context.Context) context.Context {
	return budget.WithPriority(ctx, budget.Aggregate)
}

// current copies the snapshot's objects when it is no older than ttl. The
// copy lets callers filter while writes are recorded concurrently.
func (s *snapshot[T]) current(ttl time.Duration) (map[string]T, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.items == nil || time.Since(s.fetched) > ttl {
		return nil, false
	}
	out := make(map[string]T, len(s.items))
	for k, v := range s.items {
		out[k] = v
	}
	return out, true
}

// invalidate forces the next read to list again. A write whose outcome is
// unknown (a timeout, a 5xx) may still have happened, and a lookup by
// natural key must then see Cloudflare rather than the snapshot, or the
// write would be repeated and the object duplicated.
func (s *snapshot[T]) invalidate() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fetched = time.Time{}
	if s.journal != nil {
		s.invalidated = true
	}
}

// deleted reports whether this process deleted the object.
func (s *snapshot[T]) deleted(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.gone[id]
	return ok
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
	if s.journal != nil {
		s.journal[id] = &v
	}
}

func (s *snapshot[T]) remove(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.items, id)
	if s.journal != nil {
		s.journal[id] = nil
	}
	if s.gone == nil {
		s.gone = map[string]struct{}{}
	}
	s.gone[id] = struct{}{}
}

// accountCache holds the snapshots of one account as seen with one token.
type accountCache struct {
	tunnels  snapshot[Tunnel]
	routes   snapshot[HostnameRoute]
	services snapshot[Service]
	cidr     snapshot[CIDRRoute]
	vnets    snapshot[VirtualNetwork]
	// Access applications, reusable policies, groups and service tokens
	// (cache_access.go).
	accessApps     snapshot[AccessApplication]
	accessPolicies snapshot[AccessPolicy]
	accessGroups   snapshot[AccessGroup]
	serviceTokens  snapshot[ServiceToken]
	accessOrg      snapshot[AccessOrganization]
	mu             sync.Mutex
	records        map[string]*snapshot[DNSRecord] // by zone ID
	// configs are the tunnels' configuration documents as last read or
	// written, by tunnel ID.
	configs map[string]seenConfig
	batcher *dnsBatcher
	clients map[clientKey]*Client
}

// clientKey is what a Client is built from besides the account's
// credentials, which key the accountCache itself.
type clientKey struct {
	budgets   *budget.Registry
	transport http.RoundTripper
	timeout   time.Duration
	pageSize  int
}

// client returns the account's Client for o, built once. Every managed
// resource reconcile connects anew, and building the SDK's client (a struct
// for each of its hundreds of services) was 14% of the provider's
// steady-state CPU at 3,000 managed resources; the Client holds nothing but
// settings, so one serves every reconcile. Options without a budget
// registry (each such client has a budget of its own) or with a transport
// that cannot be compared (a func) get a new client each time.
func (a *accountCache) client(cfg clients.Config, o Options) *Client {
	if o.Budgets == nil || (o.Transport != nil && !reflect.TypeOf(o.Transport).Comparable()) {
		return New(cfg, o)
	}
	key := clientKey{budgets: o.Budgets, transport: o.Transport, timeout: o.Timeout, pageSize: o.PageSize}
	a.mu.Lock()
	defer a.mu.Unlock()
	if c, ok := a.clients[key]; ok {
		return c
	}
	if a.clients == nil {
		a.clients = map[clientKey]*Client{}
	}
	c := New(cfg, o)
	a.clients[key] = c
	return c
}

// dnsBatcher returns the account's DNS batcher, made with o by its first
// user: every client of the account shares its batches.
func (a *accountCache) dnsBatcher(o DNSBatching, w *dnsWaiters) *dnsBatcher {
	if !o.Enabled() {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.batcher == nil {
		a.batcher = newDNSBatcher(o, w)
	}
	return a.batcher
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

// Caches are the account-wide observation caches of a process: one per
// token, account and endpoint, shared by every client of those (the token is
// keyed by its hash only). The provider makes one at start.
type Caches struct {
	mu    sync.Mutex
	byKey map[string]*accountCache
	// dnsWaiters counts the DNS writes waiting for batches in every
	// account: the DNSRecord controller's workers serve them all.
	dnsWaiters dnsWaiters
}

// NewCaches returns an empty set of caches.
func NewCaches() *Caches { return &Caches{byKey: map[string]*accountCache{}} }

// forAccount returns the cache of a token, account and endpoint.
func (c *Caches) forAccount(token, account, endpoint string) *accountCache {
	sum := sha256.Sum256([]byte(token + "\x00" + account + "\x00" + endpoint))
	key := hex.EncodeToString(sum[:])
	c.mu.Lock()
	defer c.mu.Unlock()
	ac, ok := c.byKey[key]
	if !ok {
		ac = &accountCache{}
		c.byKey[key] = ac
	}
	return ac
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
	// batcher coalesces DNS record writes; nil sends each alone.
	batcher *dnsBatcher
}

var _ API = &CachedClient{}

// observeTTL is how old a snapshot may be when it serves a get: the TTL,
// or twice it while the budget is spent (requests queued at its rate,
// as in a bulk change). Every list then delays a write the user is
// waiting for, so observation yields: drift is seen within two polls
// instead of one and a half for as long as the queue lasts.
func (c *CachedClient) observeTTL() time.Duration {
	if b := c.Client.budget; b != nil && b.SpentSince(time.Now().Add(-c.ttl)) {
		return 2 * c.ttl
	}
	return c.ttl
}

func collectByID[T any](items []T, id func(T) string) map[string]T {
	m := make(map[string]T, len(items))
	for _, it := range items {
		m[id(it)] = it
	}
	return m
}

func (c *CachedClient) tunnelList(ctx context.Context) (map[string]Tunnel, error) {
	ts, err := c.Client.ListTunnels(ctx, TunnelFilter{})
	return collectByID(ts, func(t Tunnel) string { return t.ID }), err
}

func (c *CachedClient) routeList(ctx context.Context) (map[string]HostnameRoute, error) {
	rs, err := c.Client.ListHostnameRoutes(ctx, HostnameRouteFilter{})
	return collectByID(rs, func(r HostnameRoute) string { return r.ID }), err
}

func (c *CachedClient) serviceList(ctx context.Context) (map[string]Service, error) {
	ss, err := c.Client.ListServices(ctx)
	return collectByID(ss, func(s Service) string { return s.ServiceID }), err
}

func (c *CachedClient) recordList(zoneID string) func(context.Context) (map[string]DNSRecord, error) {
	return func(ctx context.Context) (map[string]DNSRecord, error) {
		rs, err := c.Client.ListDNSRecords(ctx, zoneID, DNSRecordFilter{})
		return collectByID(rs, func(r DNSRecord) string { return r.ID }), err
	}
}

// goneError is what Cloudflare answers for an object this process deleted.
func goneError(op string) error {
	return &APIError{Operation: op, Status: http.StatusNotFound, Codes: []int{1003}, Messages: []string{"not found (deleted by this provider)"}}
}

// afterWrite records a write's outcome: a success in the snapshot; a
// failure by forcing the next read to list again, because the write may
// have happened (timeout, 5xx) or collided with an object the snapshot
// does not have yet (already exists). A write that ended while it waited
// for the budget never reached Cloudflare and changed nothing (sent, nil
// when unknown, says so).
func afterWrite[T any](s *snapshot[T], err error, sent *budget.SendRecord, id string, v *T) {
	if err != nil {
		if !sent.NeverSent() {
			s.invalidate()
		}
		return
	}
	s.put(id, *v)
}

// sortedValues returns a filtered snapshot in a stable order, so a lookup
// by natural key answers the same way a paginated list would each time.
func sortedValues[T any](m map[string]T, keep func(T) bool) []T {
	ids := make([]string, 0, len(m))
	for id, v := range m {
		if keep(v) {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	out := make([]T, 0, len(ids))
	for _, id := range ids {
		out = append(out, m[id])
	}
	return out
}

// GetTunnel serves a live tunnel from the snapshot; anything else (a
// deleted or brand-new tunnel) is confirmed with a get.
func (c *CachedClient) GetTunnel(ctx context.Context, id string) (*Tunnel, error) {
	if c.cache.tunnels.deleted(id) {
		return nil, goneError("cannot get tunnel")
	}
	t, ok, err := c.cache.tunnels.get(ctx, c.observeTTL(), id, c.tunnelList)
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

// ListTunnels serves live tunnels from the snapshot, so a lookup by name
// (adoption before a create) costs no call; deleted tunnels are not in the
// snapshot and are listed from Cloudflare.
func (c *CachedClient) ListTunnels(ctx context.Context, f TunnelFilter) ([]Tunnel, error) {
	if f.Deleted {
		return c.Client.ListTunnels(ctx, f)
	}
	all, err := c.cache.tunnels.all(ctx, c.observeTTL(), c.tunnelList)
	if err != nil {
		return nil, err
	}
	return sortedValues(all, f.keep), nil
}

// ListTunnelsSince serves ListTunnels from a list sent no earlier than t,
// listing again when the snapshot's is older.
func (c *CachedClient) ListTunnelsSince(ctx context.Context, f TunnelFilter, t time.Time) ([]Tunnel, error) {
	if f.Deleted {
		return c.Client.ListTunnels(ctx, f)
	}
	all, err := c.cache.tunnels.since(ctx, t, c.tunnelList)
	if err != nil {
		return nil, err
	}
	return sortedValues(all, f.keep), nil
}

func (f TunnelFilter) keep(t Tunnel) bool { return f.Name == "" || t.Name == f.Name }

// CreateTunnel creates and records the tunnel.
func (c *CachedClient) CreateTunnel(ctx context.Context, name, configSrc string) (*Tunnel, error) {
	t, err := c.Client.CreateTunnel(ctx, name, configSrc)
	var cp *Tunnel
	if err == nil {
		cp = ptrCopy(*t)
		cp.Token = "" // the snapshot never holds the run token
	}
	afterWrite(&c.cache.tunnels, err, nil, idOf(cp, func(t *Tunnel) string { return t.ID }), cp)
	return t, err
}

// RenameTunnel renames and records the tunnel.
func (c *CachedClient) RenameTunnel(ctx context.Context, id, name string) (*Tunnel, error) {
	ctx, sent := budget.WithSendRecord(ctx)
	t, err := c.Client.RenameTunnel(ctx, id, name)
	afterWrite(&c.cache.tunnels, err, sent, id, t)
	return t, err
}

// RotateTunnelSecret rotates the secret and records the tunnel.
func (c *CachedClient) RotateTunnelSecret(ctx context.Context, id, secret string) (*Tunnel, error) {
	ctx, sent := budget.WithSendRecord(ctx)
	t, err := c.Client.RotateTunnelSecret(ctx, id, secret)
	afterWrite(&c.cache.tunnels, err, sent, id, t)
	return t, err
}

// DeleteTunnel deletes and forgets the tunnel.
func (c *CachedClient) DeleteTunnel(ctx context.Context, id string) error {
	err := c.Client.DeleteTunnel(ctx, id)
	if err == nil || IsNotFound(err) {
		c.cache.tunnels.remove(id)
	}
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

// GetHostnameRoute serves a live route from the snapshot.
func (c *CachedClient) GetHostnameRoute(ctx context.Context, id string) (*HostnameRoute, error) {
	if c.cache.routes.deleted(id) {
		return nil, goneError("cannot get hostname route")
	}
	r, ok, err := c.cache.routes.get(ctx, c.observeTTL(), id, c.routeList)
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

// ListHostnameRoutes serves live routes from the snapshot with Cloudflare's
// filter semantics (hostname: case-insensitive substring).
func (c *CachedClient) ListHostnameRoutes(ctx context.Context, f HostnameRouteFilter) ([]HostnameRoute, error) {
	all, err := c.cache.routes.all(ctx, c.observeTTL(), c.routeList)
	if err != nil {
		return nil, err
	}
	host := strings.ToLower(f.Hostname)
	return sortedValues(all, func(r HostnameRoute) bool {
		return (host == "" || strings.Contains(strings.ToLower(r.Hostname), host)) &&
			(f.TunnelID == "" || r.TunnelID == f.TunnelID) &&
			(f.Comment == "" || r.Comment == f.Comment)
	}), nil
}

// CreateHostnameRoute creates and records the route.
func (c *CachedClient) CreateHostnameRoute(ctx context.Context, in HostnameRouteInput) (*HostnameRoute, error) {
	ctx, sent := budget.WithSendRecord(ctx)
	r, err := c.Client.CreateHostnameRoute(ctx, in)
	afterWrite(&c.cache.routes, err, sent, idOf(r, func(r *HostnameRoute) string { return r.ID }), r)
	return r, err
}

// UpdateHostnameRoute updates and records the route.
func (c *CachedClient) UpdateHostnameRoute(ctx context.Context, id string, in HostnameRouteInput) (*HostnameRoute, error) {
	ctx, sent := budget.WithSendRecord(ctx)
	r, err := c.Client.UpdateHostnameRoute(ctx, id, in)
	afterWrite(&c.cache.routes, err, sent, id, r)
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
	if c.cache.services.deleted(id) {
		return nil, goneError("cannot get service")
	}
	s, ok, err := c.cache.services.get(ctx, c.observeTTL(), id, c.serviceList)
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

// ListServices serves every service from the snapshot.
func (c *CachedClient) ListServices(ctx context.Context) ([]Service, error) {
	all, err := c.cache.services.all(ctx, c.observeTTL(), c.serviceList)
	if err != nil {
		return nil, err
	}
	return sortedValues(all, func(Service) bool { return true }), nil
}

// ListServicesSince serves ListServices from a list sent no earlier than
// t, listing again when the snapshot's is older.
func (c *CachedClient) ListServicesSince(ctx context.Context, t time.Time) ([]Service, error) {
	all, err := c.cache.services.since(ctx, t, c.serviceList)
	if err != nil {
		return nil, err
	}
	return sortedValues(all, func(Service) bool { return true }), nil
}

// CreateService creates and records the service.
func (c *CachedClient) CreateService(ctx context.Context, s Service) (*Service, error) {
	ctx, sent := budget.WithSendRecord(ctx)
	got, err := c.Client.CreateService(ctx, s)
	afterWrite(&c.cache.services, err, sent, idOf(got, func(s *Service) string { return s.ServiceID }), got)
	return got, err
}

// UpdateService updates and records the service.
func (c *CachedClient) UpdateService(ctx context.Context, id string, s Service) (*Service, error) {
	ctx, sent := budget.WithSendRecord(ctx)
	got, err := c.Client.UpdateService(ctx, id, s)
	afterWrite(&c.cache.services, err, sent, id, got)
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
	s := c.cache.zoneRecords(zoneID)
	if s.deleted(id) {
		return nil, goneError("cannot get DNS record")
	}
	r, ok, err := s.get(ctx, c.observeTTL(), id, c.recordList(zoneID))
	if err != nil {
		return nil, err
	}
	if ok {
		return &r, nil
	}
	got, err := c.Client.GetDNSRecord(ctx, zoneID, id)
	if err == nil {
		s.put(id, *got)
	}
	return got, err
}

// ListDNSRecords serves a zone's records from its snapshot with Cloudflare's
// exact-match filter semantics (names and contents case-insensitively).
func (c *CachedClient) ListDNSRecords(ctx context.Context, zoneID string, f DNSRecordFilter) ([]DNSRecord, error) {
	all, err := c.cache.zoneRecords(zoneID).all(ctx, c.observeTTL(), c.recordList(zoneID))
	if err != nil {
		return nil, err
	}
	return filterRecords(all, f), nil
}

// ListDNSRecordsSince serves ListDNSRecords from a list of the zone sent no
// earlier than t, listing again when the snapshot's is older.
func (c *CachedClient) ListDNSRecordsSince(ctx context.Context, zoneID string, f DNSRecordFilter, t time.Time) ([]DNSRecord, error) {
	all, err := c.cache.zoneRecords(zoneID).since(ctx, t, c.recordList(zoneID))
	if err != nil {
		return nil, err
	}
	return filterRecords(all, f), nil
}

// filterRecords applies Cloudflare's exact-match filter semantics (names
// and contents case-insensitively).
func filterRecords(all map[string]DNSRecord, f DNSRecordFilter) []DNSRecord {
	return sortedValues(all, func(r DNSRecord) bool {
		return (f.Name == "" || strings.EqualFold(r.Name, f.Name)) &&
			(f.Type == "" || strings.EqualFold(r.Type, f.Type)) &&
			(f.Content == "" || strings.EqualFold(r.Content, f.Content)) &&
			(f.Tag == "" || slices.Contains(r.Tags, f.Tag))
	})
}

// CreateDNSRecord creates and records the record, in the zone's next batch
// when batching is on.
func (c *CachedClient) CreateDNSRecord(ctx context.Context, zoneID string, r DNSRecord) (*DNSRecord, error) {
	return c.writeRecord(ctx, zoneID, &dnsOp{kind: opPost, rec: r})
}

// UpdateDNSRecord updates and records the record, in the zone's next batch
// when batching is on.
func (c *CachedClient) UpdateDNSRecord(ctx context.Context, zoneID, id string, r DNSRecord) (*DNSRecord, error) {
	return c.writeRecord(ctx, zoneID, &dnsOp{kind: opPut, id: id, rec: r})
}

// DeleteDNSRecord deletes and forgets the record, in the zone's next batch
// when batching is on.
func (c *CachedClient) DeleteDNSRecord(ctx context.Context, zoneID, id string) error {
	_, err := c.writeRecord(ctx, zoneID, &dnsOp{kind: opDelete, id: id})
	return err
}

// writeRecord sends one record write, alone or batched, and records its
// outcome in the zone's snapshot.
func (c *CachedClient) writeRecord(ctx context.Context, zoneID string, op *dnsOp) (*DNSRecord, error) {
	records := c.cache.zoneRecords(zoneID)
	op.settle = func(op *dnsOp) { settleRecord(records, op) }
	if c.batcher == nil {
		op.done = make(chan struct{})
		sendOne(ctx, c.Client, zoneID, op)
		return op.result, op.err
	}
	return c.batcher.do(ctx, c.Client, zoneID, op)
}

// settleRecord records a write's outcome in the zone's snapshot.
func settleRecord(s *snapshot[DNSRecord], op *dnsOp) {
	if op.kind == opDelete {
		if op.err == nil || IsNotFound(op.err) {
			s.remove(op.id)
			return
		}
		s.invalidate()
		return
	}
	id := op.id
	if op.kind == opPost {
		id = idOf(op.result, func(r *DNSRecord) string { return r.ID })
	}
	afterWrite(s, op.err, nil, id, op.result)
}

func ptrCopy[T any](v T) *T { return &v }

func idOf[T any](v *T, id func(*T) string) string {
	if v == nil {
		return ""
	}
	return id(v)
}
