package cloudflare

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"reflect"
	"sort"
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
	LoadBalancingAPI
	// Account is the account the client is bound to.
	Account() string
}

// Account is the account the client is bound to.
func (c *Client) Account() string { return c.AccountID }

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
	// Load Balancing monitors and pools, and load balancers by zone ID
	// (cache_loadbalancing.go).
	lbMonitors snapshot[LoadBalancerMonitor]
	lbPools    snapshot[Pool]
	lbs        map[string]*snapshot[LoadBalancer] // by zone ID, under mu
	// poolHealth is each pool's health as last read, by pool ID, under mu
	// (poolhealth.go).
	poolHealth map[string]timedPoolHealth
	mu         sync.Mutex
	records    map[string]*snapshot[DNSRecord] // by zone ID
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

// kind is what the generic reads and writes of a snapshot (cached) need
// to know of one kind of object.
type kind[T any] struct {
	// getOp names the get in the not-found answer for an object this
	// process deleted.
	getOp string
	// noun names one object of the kind ("tunnel") and permission the API
	// token permission that reads and writes it (the x-api-token-group of
	// its operations in Cloudflare's OpenAPI document), for the error of a
	// get refused with 403 (AccessLostError).
	noun, permission string
	id               func(*T) string
	// deleted reports whether a get answered with a deleted object, which
	// Cloudflare's lists leave out and so the snapshot must too (tunnels
	// and routes keep their IDs after a delete). nil: a kind whose deleted
	// objects are not found.
	deleted func(*T) bool
	list    func(*Client, context.Context) ([]T, error)
	get     func(*Client, context.Context, string) (*T, error)
}

// cached is one kind's snapshot as a client reads and writes it: every
// CachedClient method of a listed kind is one of these calls. The snapshot
// is the account's, shared by every client of it; the lists, gets and
// writes go through this client, and so its budget and transport.
type cached[T any] struct {
	c *CachedClient
	s *snapshot[T]
	k kind[T]
}

// listAll is the list behind the snapshot.
func (o cached[T]) listAll(ctx context.Context) (map[string]T, error) {
	items, err := o.k.list(o.c.Client, ctx)
	return collectByID(items, o.k.id), err
}

// get serves a live object from the snapshot; anything else (an object
// newer than the snapshot, deleted, or one the token may no longer read,
// which Cloudflare's lists leave out) is confirmed with a get, and
// recorded when live. The get tells the cases apart: a 404 is gone, a 403
// an object the token lost its permission on (AccessLostError), which is
// never taken for gone. So a missing object costs one get per observation
// and a listed one none. An object this process deleted costs no call.
func (o cached[T]) get(ctx context.Context, id string) (*T, error) {
	if o.s.deleted(id) {
		return nil, goneError(o.k.getOp)
	}
	v, ok, err := o.s.get(ctx, o.c.observeTTL(), id, o.listAll)
	if err != nil {
		return nil, err
	}
	if ok {
		return &v, nil
	}
	got, err := o.k.get(o.c.Client, ctx, id)
	if IsForbidden(err) {
		return nil, &AccessLostError{Kind: o.k.noun, ID: id, Permission: o.k.permission, Err: err}
	}
	if err == nil && (o.k.deleted == nil || !o.k.deleted(got)) {
		o.s.put(id, *got)
	}
	return got, err
}

// list serves the objects keep selects (nil: all) from a snapshot no
// older than ttl, so a lookup by natural key costs no call.
func (o cached[T]) list(ctx context.Context, ttl time.Duration, keep func(T) bool) ([]T, error) {
	all, err := o.s.all(ctx, ttl, o.listAll)
	if err != nil {
		return nil, err
	}
	return sortedValues(all, keep), nil
}

// listSince is list from a list sent no earlier than t, listing again
// when the snapshot's is older.
func (o cached[T]) listSince(ctx context.Context, t time.Time, keep func(T) bool) ([]T, error) {
	all, err := o.s.since(ctx, t, o.listAll)
	if err != nil {
		return nil, err
	}
	return sortedValues(all, keep), nil
}

// write sends a write of the object id ("" for a create: its answer names
// it) and records the outcome (afterWrite).
func (o cached[T]) write(ctx context.Context, id string, send func(context.Context) (*T, error)) (*T, error) {
	ctx, sent := budget.WithSendRecord(ctx)
	v, err := send(ctx)
	if id == "" {
		id = idOf(v, o.k.id)
	}
	afterWrite(o.s, err, sent, id, v)
	return v, err
}

// remove deletes and forgets the object; one already gone is forgotten too.
func (o cached[T]) remove(ctx context.Context, id string, del func(context.Context, string) error) error {
	err := del(ctx, id)
	if err == nil || IsNotFound(err) {
		o.s.remove(id)
	}
	return err
}

// create creates and records an object.
func create[T, In any](ctx context.Context, o cached[T], in In, send func(context.Context, In) (*T, error)) (*T, error) {
	return o.write(ctx, "", func(ctx context.Context) (*T, error) { return send(ctx, in) })
}

// update updates and records an object.
func update[T, In any](ctx context.Context, o cached[T], id string, in In, send func(context.Context, string, In) (*T, error)) (*T, error) {
	return o.write(ctx, id, func(ctx context.Context) (*T, error) { return send(ctx, id, in) })
}

func collectByID[T any](items []T, id func(*T) string) map[string]T {
	m := make(map[string]T, len(items))
	for i := range items {
		m[id(&items[i])] = items[i]
	}
	return m
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

// sortedValues returns the objects keep selects (nil: all) in a stable
// order, so a lookup by natural key answers the same way a paginated list
// would each time.
func sortedValues[T any](m map[string]T, keep func(T) bool) []T {
	ids := make([]string, 0, len(m))
	for id, v := range m {
		if keep == nil || keep(v) {
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

func ptrCopy[T any](v T) *T { return &v }

func idOf[T any](v *T, id func(*T) string) string {
	if v == nil {
		return ""
	}
	return id(v)
}
