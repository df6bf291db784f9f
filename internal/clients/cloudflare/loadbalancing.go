package cloudflare

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"time"
)

// LoadBalancerMonitor is a Load Balancing health monitor (account-scoped).
type LoadBalancerMonitor struct {
	ID            string              `json:"id"`
	Type          string              `json:"type"`
	Description   string              `json:"description"`
	Method        string              `json:"method"`
	Path          string              `json:"path"`
	Header        map[string][]string `json:"header"`
	Port          *int64              `json:"port"`
	ExpectedCodes string              `json:"expected_codes"`
	Interval      int64               `json:"interval"`
	Timeout       int64               `json:"timeout"`
	Retries       int64               `json:"retries"`
	CreatedOn     time.Time           `json:"created_on"`
}

// LoadBalancerMonitorInput is what a monitor is created or replaced with
// (a PUT replaces it whole).
type LoadBalancerMonitorInput struct {
	Type          string              `json:"type"`
	Description   string              `json:"description"`
	Method        string              `json:"method,omitempty"`
	Path          string              `json:"path,omitempty"`
	Header        map[string][]string `json:"header,omitempty"`
	Port          *int64              `json:"port,omitempty"`
	ExpectedCodes string              `json:"expected_codes,omitempty"`
	Interval      int64               `json:"interval"`
	Timeout       int64               `json:"timeout"`
	Retries       int64               `json:"retries"`
}

// PoolOrigin is one origin of a pool.
type PoolOrigin struct {
	Name    string              `json:"name"`
	Address string              `json:"address"`
	Enabled bool                `json:"enabled"`
	Weight  float64             `json:"weight"`
	Header  map[string][]string `json:"header,omitempty"`
}

// Pool is a Load Balancing pool (account-scoped).
type Pool struct {
	ID             string       `json:"id"`
	Name           string       `json:"name"`
	Description    string       `json:"description"`
	Enabled        bool         `json:"enabled"`
	MinimumOrigins int64        `json:"minimum_origins"`
	Monitor        string       `json:"monitor"`
	Origins        []PoolOrigin `json:"origins"`
	CreatedOn      time.Time    `json:"created_on"`
}

// PoolInput is what a pool is created or replaced with.
type PoolInput struct {
	Name           string `json:"name"`
	Description    string `json:"description"`
	Enabled        bool   `json:"enabled"`
	MinimumOrigins int64  `json:"minimum_origins"`
	// Monitor is the monitor's ID; "" is none (poolBody leaves it out).
	Monitor string       `json:"monitor"`
	Origins []PoolOrigin `json:"origins"`
}

// LoadBalancer is a zone's load balancer; its Name is the hostname it
// serves.
type LoadBalancer struct {
	ID                 string    `json:"id"`
	Name               string    `json:"name"`
	Description        string    `json:"description"`
	Enabled            bool      `json:"enabled"`
	Proxied            bool      `json:"proxied"`
	TTL                int64     `json:"ttl"`
	DefaultPools       []string  `json:"default_pools"`
	FallbackPool       string    `json:"fallback_pool"`
	SteeringPolicy     string    `json:"steering_policy"`
	SessionAffinity    string    `json:"session_affinity"`
	SessionAffinityTTL *float64  `json:"session_affinity_ttl"`
	CreatedOn          time.Time `json:"created_on"`
	// ZoneID is the zone the load balancer was read from (not sent by
	// Cloudflare).
	ZoneID string `json:"-"`
}

// LoadBalancerInput is what a load balancer is created or replaced with.
type LoadBalancerInput struct {
	Name               string   `json:"name"`
	Description        string   `json:"description"`
	Enabled            bool     `json:"enabled"`
	Proxied            bool     `json:"proxied"`
	TTL                int64    `json:"ttl,omitempty"`
	DefaultPools       []string `json:"default_pools"`
	FallbackPool       string   `json:"fallback_pool"`
	SteeringPolicy     string   `json:"steering_policy"`
	SessionAffinity    string   `json:"session_affinity"`
	SessionAffinityTTL *float64 `json:"session_affinity_ttl,omitempty"`
}

// LoadBalancingAPI manages Load Balancing monitors, pools and load
// balancers. Lists answer from a list sent after the time ListedAfter put
// in ctx (else now): they are asked only to find what a create of unknown
// outcome left, or who holds a name.
type LoadBalancingAPI interface {
	ListLoadBalancerMonitors(ctx context.Context) ([]LoadBalancerMonitor, error)
	GetLoadBalancerMonitor(ctx context.Context, id string) (*LoadBalancerMonitor, error)
	CreateLoadBalancerMonitor(ctx context.Context, in LoadBalancerMonitorInput) (*LoadBalancerMonitor, error)
	UpdateLoadBalancerMonitor(ctx context.Context, id string, in LoadBalancerMonitorInput) (*LoadBalancerMonitor, error)
	DeleteLoadBalancerMonitor(ctx context.Context, id string) error

	ListPools(ctx context.Context) ([]Pool, error)
	GetPool(ctx context.Context, id string) (*Pool, error)
	CreatePool(ctx context.Context, in PoolInput) (*Pool, error)
	UpdatePool(ctx context.Context, id string, in PoolInput) (*Pool, error)
	DeletePool(ctx context.Context, id string) error

	ListLoadBalancers(ctx context.Context, zoneID string) ([]LoadBalancer, error)
	GetLoadBalancer(ctx context.Context, zoneID, id string) (*LoadBalancer, error)
	CreateLoadBalancer(ctx context.Context, zoneID string, in LoadBalancerInput) (*LoadBalancer, error)
	UpdateLoadBalancer(ctx context.Context, zoneID, id string, in LoadBalancerInput) (*LoadBalancer, error)
	DeleteLoadBalancer(ctx context.Context, zoneID, id string) error

	PoolHealthAPI
}

var _ LoadBalancingAPI = &Client{}

// CodeReferenced is Cloudflare's answer to deleting a monitor or pool that
// something still uses: "This object is referenced by other objects,
// delete them first" (load-balancing/troubleshooting/common-error-codes).
const CodeReferenced = 1005

// IsReferenced reports a deletion Cloudflare refused because another
// object still uses the one deleted.
func IsReferenced(err error) bool {
	e, ok := asAPIError(err)
	return ok && e.HasCode(CodeReferenced)
}

func (c *Client) lbPath(kind string, id ...string) string {
	p := "accounts/" + url.PathEscape(c.AccountID) + "/load_balancers/" + kind
	for _, part := range id {
		p += "/" + url.PathEscape(part)
	}
	return p
}

func zoneLBPath(zoneID string, id ...string) string {
	p := "zones/" + url.PathEscape(zoneID) + "/load_balancers"
	for _, part := range id {
		p += "/" + url.PathEscape(part)
	}
	return p
}

// ListLoadBalancerMonitors lists the account's monitors (one page: the
// endpoint does not paginate).
func (c *Client) ListLoadBalancerMonitors(ctx context.Context) ([]LoadBalancerMonitor, error) {
	out := []LoadBalancerMonitor{}
	return out, c.accessCall(ctx, http.MethodGet, c.lbPath("monitors"), nil, &out, "cannot list load balancer monitors")
}

// GetLoadBalancerMonitor gets a monitor by ID.
func (c *Client) GetLoadBalancerMonitor(ctx context.Context, id string) (*LoadBalancerMonitor, error) {
	out := &LoadBalancerMonitor{}
	return out, c.accessCall(ctx, http.MethodGet, c.lbPath("monitors", id), nil, out, "cannot get load balancer monitor")
}

// CreateLoadBalancerMonitor creates a monitor.
func (c *Client) CreateLoadBalancerMonitor(ctx context.Context, in LoadBalancerMonitorInput) (*LoadBalancerMonitor, error) {
	out := &LoadBalancerMonitor{}
	return out, c.accessCall(ctx, http.MethodPost, c.lbPath("monitors"), in, out, "cannot create load balancer monitor")
}

// UpdateLoadBalancerMonitor replaces a monitor.
func (c *Client) UpdateLoadBalancerMonitor(ctx context.Context, id string, in LoadBalancerMonitorInput) (*LoadBalancerMonitor, error) {
	out := &LoadBalancerMonitor{}
	return out, c.accessCall(ctx, http.MethodPut, c.lbPath("monitors", id), in, out, "cannot update load balancer monitor")
}

// DeleteLoadBalancerMonitor deletes a monitor.
func (c *Client) DeleteLoadBalancerMonitor(ctx context.Context, id string) error {
	return c.accessCall(ctx, http.MethodDelete, c.lbPath("monitors", id), nil, nil, "cannot delete load balancer monitor")
}

// ListPools lists the account's pools (one page).
func (c *Client) ListPools(ctx context.Context) ([]Pool, error) {
	out := []Pool{}
	return out, c.accessCall(ctx, http.MethodGet, c.lbPath("pools"), nil, &out, "cannot list load balancer pools")
}

// GetPool gets a pool by ID.
func (c *Client) GetPool(ctx context.Context, id string) (*Pool, error) {
	out := &Pool{}
	return out, c.accessCall(ctx, http.MethodGet, c.lbPath("pools", id), nil, out, "cannot get load balancer pool")
}

// CreatePool creates a pool.
func (c *Client) CreatePool(ctx context.Context, in PoolInput) (*Pool, error) {
	out := &Pool{}
	return out, c.accessCall(ctx, http.MethodPost, c.lbPath("pools"), poolBody(in), out, "cannot create load balancer pool")
}

// UpdatePool replaces a pool.
func (c *Client) UpdatePool(ctx context.Context, id string, in PoolInput) (*Pool, error) {
	out := &Pool{}
	return out, c.accessCall(ctx, http.MethodPut, c.lbPath("pools", id), poolBody(in), out, "cannot update load balancer pool")
}

// DeletePool deletes a pool.
func (c *Client) DeletePool(ctx context.Context, id string) error {
	return c.accessCall(ctx, http.MethodDelete, c.lbPath("pools", id), nil, nil, "cannot delete load balancer pool")
}

// poolBody leaves out an empty monitor: the document types it as a
// monitor ID, and a PUT without one replaces the pool without a monitor.
func poolBody(in PoolInput) any {
	b, _ := json.Marshal(in)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	if in.Monitor == "" {
		delete(m, "monitor")
	}
	return m
}

// ListLoadBalancers lists a zone's load balancers (one page).
func (c *Client) ListLoadBalancers(ctx context.Context, zoneID string) ([]LoadBalancer, error) {
	out := []LoadBalancer{}
	err := c.accessCall(ctx, http.MethodGet, zoneLBPath(zoneID), nil, &out, "cannot list load balancers")
	for i := range out {
		out[i].ZoneID = zoneID
	}
	return out, err
}

// GetLoadBalancer gets a zone's load balancer by ID.
func (c *Client) GetLoadBalancer(ctx context.Context, zoneID, id string) (*LoadBalancer, error) {
	out := &LoadBalancer{}
	err := c.accessCall(ctx, http.MethodGet, zoneLBPath(zoneID, id), nil, out, "cannot get load balancer")
	out.ZoneID = zoneID
	return out, err
}

// CreateLoadBalancer creates a load balancer in a zone.
func (c *Client) CreateLoadBalancer(ctx context.Context, zoneID string, in LoadBalancerInput) (*LoadBalancer, error) {
	out := &LoadBalancer{}
	err := c.accessCall(ctx, http.MethodPost, zoneLBPath(zoneID), in, out, "cannot create load balancer")
	out.ZoneID = zoneID
	return out, err
}

// UpdateLoadBalancer replaces a zone's load balancer.
func (c *Client) UpdateLoadBalancer(ctx context.Context, zoneID, id string, in LoadBalancerInput) (*LoadBalancer, error) {
	out := &LoadBalancer{}
	err := c.accessCall(ctx, http.MethodPut, zoneLBPath(zoneID, id), in, out, "cannot update load balancer")
	out.ZoneID = zoneID
	return out, err
}

// DeleteLoadBalancer deletes a zone's load balancer.
func (c *Client) DeleteLoadBalancer(ctx context.Context, zoneID, id string) error {
	return c.accessCall(ctx, http.MethodDelete, zoneLBPath(zoneID, id), nil, nil, "cannot delete load balancer")
}
