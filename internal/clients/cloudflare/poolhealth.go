package cloudflare

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"time"
)

// PoolHealth is a pool's health as Cloudflare's pool health endpoint
// (GET …/load_balancers/pools/{pool_id}/health) reports it: one entry per
// region that probes the pool.
type PoolHealth struct {
	PoolID  string
	Regions []RegionHealth
}

// RegionHealth is what one region's probes found.
type RegionHealth struct {
	// Region is Cloudflare's name for it ("Amsterdam, NL"); "" when the
	// answer names none (the document's schema shape).
	Region  string
	Healthy bool
	Origins []OriginHealth
}

// OriginHealth is one origin's health in one region.
type OriginHealth struct {
	Address       string
	Healthy       bool
	FailureReason string
	// ResponseCode of the last probe; nil when it got no HTTP answer.
	ResponseCode *int64
}

// PoolHealthAPI reads pools' health.
type PoolHealthAPI interface {
	GetPoolHealth(ctx context.Context, id string) (*PoolHealth, error)
}

var _ PoolHealthAPI = &Client{}

// GetPoolHealth reads a pool's health (one request).
func (c *Client) GetPoolHealth(ctx context.Context, id string) (*PoolHealth, error) {
	var raw json.RawMessage
	if err := c.accessCall(ctx, http.MethodGet, c.lbPath("pools", id, "health"), nil, &raw, "cannot get load balancer pool health"); err != nil {
		return nil, err
	}
	return ParsePoolHealth(raw)
}

// regionAnswer is one region's part of pop_health.
type regionAnswer struct {
	Healthy *bool                           `json:"healthy"`
	Origins []map[string]originHealthAnswer `json:"origins"`
}

type originHealthAnswer struct {
	Healthy       bool     `json:"healthy"`
	FailureReason string   `json:"failure_reason"`
	ResponseCode  *float64 `json:"response_code"`
}

// ParsePoolHealth reads the health endpoint's result. The document is of
// two minds: its schema makes pop_health one {healthy, origins} object,
// its example keys such objects by region ("Amsterdam, NL"). Both are
// read; regions come sorted by name.
func ParsePoolHealth(raw []byte) (*PoolHealth, error) {
	var res struct {
		PoolID    string                     `json:"pool_id"`
		PopHealth map[string]json.RawMessage `json:"pop_health"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, wrap(err, "cannot read load balancer pool health")
	}
	out := &PoolHealth{PoolID: res.PoolID}
	if _, single := res.PopHealth["healthy"]; single {
		whole, _ := json.Marshal(res.PopHealth)
		r, err := parseRegion("", whole)
		if err != nil {
			return nil, err
		}
		out.Regions = []RegionHealth{r}
		return out, nil
	}
	for _, name := range sortedKeys(res.PopHealth) {
		r, err := parseRegion(name, res.PopHealth[name])
		if err != nil {
			return nil, err
		}
		out.Regions = append(out.Regions, r)
	}
	return out, nil
}

func parseRegion(name string, raw []byte) (RegionHealth, error) {
	var a regionAnswer
	if err := json.Unmarshal(raw, &a); err != nil || a.Healthy == nil {
		return RegionHealth{}, fmt.Errorf("cannot read load balancer pool health: region %q has no healthy field", name)
	}
	r := RegionHealth{Region: name, Healthy: *a.Healthy}
	for _, entry := range a.Origins {
		for _, addr := range sortedKeys(entry) {
			o := entry[addr]
			h := OriginHealth{Address: addr, Healthy: o.Healthy, FailureReason: o.FailureReason}
			if o.ResponseCode != nil {
				code := int64(*o.ResponseCode)
				h.ResponseCode = &code
			}
			r.Origins = append(r.Origins, h)
		}
	}
	return r, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// timedPoolHealth is a pool's health and when it was read.
type timedPoolHealth struct {
	health *PoolHealth
	at     time.Time
}

// GetPoolHealth serves a pool's health read within the observation TTL,
// else reads it: the pool's own resource and every load balancer that
// lists the pool share one read per TTL.
func (c *CachedClient) GetPoolHealth(ctx context.Context, id string) (*PoolHealth, error) {
	if h, ok := c.cache.poolHealthSince(id, time.Now().Add(-c.observeTTL())); ok {
		return h, nil
	}
	h, err := c.Client.GetPoolHealth(ctx, id)
	if err != nil {
		return nil, err
	}
	c.cache.keepPoolHealth(id, timedPoolHealth{health: h, at: time.Now()})
	return h, nil
}

func (a *accountCache) poolHealthSince(id string, since time.Time) (*PoolHealth, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	h, ok := a.poolHealth[id]
	if !ok || h.at.Before(since) {
		return nil, false
	}
	return h.health, true
}

func (a *accountCache) keepPoolHealth(id string, h timedPoolHealth) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.poolHealth == nil {
		a.poolHealth = map[string]timedPoolHealth{}
	}
	a.poolHealth[id] = h
}

func (a *accountCache) forgetPoolHealth(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.poolHealth, id)
}
