// Package cloudflare is the provider's only door to the Cloudflare API. It
// wraps cloudflare-go behind narrow interfaces, one per Cloudflare area, with
// the provider's own types, so controllers never import the SDK.
package cloudflare

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	cf "github.com/cloudflare/cloudflare-go/v7"
	"github.com/cloudflare/cloudflare-go/v7/connectivity"
	"github.com/cloudflare/cloudflare-go/v7/dns"
	"github.com/cloudflare/cloudflare-go/v7/option"
	"github.com/cloudflare/cloudflare-go/v7/zero_trust"
	"github.com/cloudflare/cloudflare-go/v7/zones"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare/budget"
)

// Client is a Cloudflare API client bound to one account. It implements every
// area interface; controllers take only the interface they need.
type Client struct {
	AccountID string
	sdk       *sdk
	pageSize  int
	// budget is the token's request budget every request spends.
	budget *budget.Budget
}

var (
	_ TunnelsAPI        = &Client{}
	_ HostnameRoutesAPI = &Client{}
	_ ServicesAPI       = &Client{}
	_ ZonesAPI          = &Client{}
	_ DNSRecordsAPI     = &Client{}
	_ AccessAPI         = &Client{}
	_ TeamnetAPI        = &Client{}
)

// Options tune how a client is built.
type Options struct {
	// Budgets hands out the shared request budget of each token; nil means
	// a registry of this client's own, shared with nothing.
	Budgets *budget.Registry
	// Caches holds the account-wide observation caches shared by every
	// client of a token and account; nil means a cache of the client's own.
	Caches *Caches
	// Env looks up the provider's environment, for credentials from it;
	// nil means os.LookupEnv.
	Env clients.Env
	// Transport sends the requests; nil means http.DefaultTransport.
	Transport http.RoundTripper
	// Timeout of one API call once the request budget let it go (time
	// queued for the budget is not counted); default 30s.
	Timeout time.Duration
	// PageSize of list calls; default the largest most list endpoints
	// allow (1000), so a listing costs as few requests as possible.
	PageSize int
	// DNSBatching coalesces DNS record writes into batches; the zero value
	// sends each write alone.
	DNSBatching DNSBatching
	// ObservationTTL is how old an account-wide observation may be before
	// a get by ID refreshes it with one list; 0 means 30s. Half the poll
	// interval keeps drift detection within one poll.
	ObservationTTL time.Duration
}

// sdk is the part of the Cloudflare SDK's client the provider calls: the
// services it uses and the generic requests. cf.NewClient builds every one
// of the SDK's services, and its *Client holds them all, so the binary
// linked them all in.
type sdk struct {
	opts         []option.RequestOption
	ZeroTrust    *zero_trust.ZeroTrustService
	DNS          *dns.DNSService
	Zones        *zones.ZoneService
	Connectivity *connectivity.ConnectivityService
}

// newSDK builds the services with the SDK's default options (read from the
// environment, as cf.NewClient does) followed by opts.
func newSDK(opts ...option.RequestOption) *sdk {
	opts = append(cf.DefaultClientOptions(), opts...)
	return &sdk{
		opts:         opts,
		ZeroTrust:    zero_trust.NewZeroTrustService(opts...),
		DNS:          dns.NewDNSService(opts...),
		Zones:        zones.NewZoneService(opts...),
		Connectivity: connectivity.NewConnectivityService(opts...),
	}
}

// Get is the SDK's generic GET, for answers decoded as plain JSON.
func (s *sdk) Get(ctx context.Context, path string, params, res any, opts ...option.RequestOption) error {
	return (&cf.Client{Options: s.opts}).Get(ctx, path, params, res, opts...)
}

// Post is the SDK's generic POST, for requests the SDK types as unions.
func (s *sdk) Post(ctx context.Context, path string, params, res any, opts ...option.RequestOption) error {
	return (&cf.Client{Options: s.opts}).Post(ctx, path, params, res, opts...)
}

// Put is the SDK's generic PUT, for requests the SDK types as unions.
func (s *sdk) Put(ctx context.Context, path string, params, res any, opts ...option.RequestOption) error {
	return (&cf.Client{Options: s.opts}).Put(ctx, path, params, res, opts...)
}

// Delete is the SDK's generic DELETE.
func (s *sdk) Delete(ctx context.Context, path string, params, res any, opts ...option.RequestOption) error {
	return (&cf.Client{Options: s.opts}).Delete(ctx, path, params, res, opts...)
}

// New builds a client from resolved credentials. Every request spends the
// token's shared budget. The token is passed explicitly and the SDK's own
// environment-derived credentials are dropped, so a stray CLOUDFLARE_API_KEY
// in the provider's environment is never sent.
func New(cfg clients.Config, o Options) *Client {
	if o.Budgets == nil {
		o.Budgets = budget.NewRegistry(budget.Options{})
	}
	if o.Timeout == 0 {
		o.Timeout = 30 * time.Second
	}
	if o.PageSize == 0 {
		o.PageSize = maxPageSize
	}
	b := o.Budgets.For(cfg.Token)
	hc := &http.Client{
		// The timeout is per request once the budget let it go: time
		// queued for the budget is bounded by the caller's context.
		Transport: &budget.Transport{Next: o.Transport, Budget: b, Timeout: o.Timeout},
	}
	sdk := newSDK(
		option.WithBaseURL(cfg.Endpoint),
		option.WithHTTPClient(hc),
		option.WithAPIToken(cfg.Token),
		option.WithHeaderDel("X-Auth-Key"),
		option.WithHeaderDel("X-Auth-Email"),
		option.WithHeaderDel("X-Auth-User-Service-Key"),
		// Retrying is the reconciler's job: the SDK retrying inside a
		// reconcile would spend the shared rate limit blindly, and it
		// retries 409s, which are answers, not failures.
		option.WithMaxRetries(0),
	)
	return &Client{AccountID: cfg.AccountID, sdk: sdk, pageSize: o.PageSize, budget: b}
}

// Connect turns a managed resource's providerConfigRef into a ready client:
// it records the usage, resolves the credentials and builds a client with o
// that observes through the account's shared observation cache, refreshed
// at most once per o.ObservationTTL. The resolved config comes back too, for
// its owner ID and guardrails.
func Connect(ctx context.Context, kube client.Client, usage *resource.ProviderConfigUsageTracker, mg resource.ModernManaged, o Options) (API, *clients.Config, error) {
	cfg, err := clients.ConfigFor(ctx, kube, usage, mg, o.Env)
	if err != nil {
		return nil, nil, err
	}
	return NewCached(*cfg, o), cfg, nil
}

// NewCached builds a client whose gets by ID are served from the account's
// shared observation cache.
func NewCached(cfg clients.Config, o Options) *CachedClient {
	ttl := o.ObservationTTL
	if ttl <= 0 {
		ttl = 30 * time.Second
	}
	caches := o.Caches
	if caches == nil {
		caches = NewCaches()
	}
	ac := caches.forAccount(cfg.Token, cfg.AccountID, cfg.Endpoint)
	return &CachedClient{Client: ac.client(cfg, o), ttl: ttl, cache: ac, batcher: ac.dnsBatcher(o.DNSBatching, &caches.dnsWaiters)}
}

// maxPageSize is the largest page the list endpoints we page through allow.
const maxPageSize = 1000

// maxDNSPageSize is the page size for DNS records (the API allows 5,000,000).
const maxDNSPageSize = 5000

// jsonBody replaces the SDK's typed body with our own JSON, for request
// bodies that are unions in the SDK (DNS records, directory services,
// tunnel configurations).
func jsonBody(v any) (option.RequestOption, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return option.WithRequestBody("application/json", b), nil
}

// decodeRaw converts an SDK result into the provider's type through the raw
// JSON the SDK keeps, so union-typed results need no type switches.
func decodeRaw(raw string, into any) error {
	return json.Unmarshal([]byte(raw), into)
}

// pages lists page after page until a short page. The SDK's auto-pager
// always asks for one more page and stops at an empty one; stopping at a
// short page saves that request on every list, which is most of them.
func pages[T any, R any](perPage int, fetch func(page int) ([]R, string, error), raw func(R) string) ([]T, error) {
	out := []T{}
	for page := 1; ; page++ {
		items, info, err := fetch(page)
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			var v T
			if err := decodeRaw(raw(it), &v); err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		// A short page is the last; so is the page that reaches the total
		// Cloudflare reports, which saves asking for an empty page when the
		// count is a multiple of the page size.
		if len(items) < perPage || reachedTotal(info, len(out)) {
			return out, nil
		}
	}
}

// reachedTotal reads result_info.total_count, when Cloudflare sends it.
func reachedTotal(info string, have int) bool {
	var ri struct {
		TotalCount *int `json:"total_count"`
	}
	if info == "" || json.Unmarshal([]byte(info), &ri) != nil || ri.TotalCount == nil {
		return false
	}
	return have >= *ri.TotalCount
}
