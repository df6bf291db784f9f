package cloudflare

import (
	"context"
	"time"

	cf "github.com/cloudflare/cloudflare-go/v7"
	"github.com/cloudflare/cloudflare-go/v7/zero_trust"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/hostname"
)

// HostnameRoute maps a private hostname to a tunnel.
type HostnameRoute struct {
	ID         string     `json:"id"`
	Hostname   string     `json:"hostname"`
	TunnelID   string     `json:"tunnel_id"`
	TunnelName string     `json:"tunnel_name"`
	Comment    string     `json:"comment"`
	CreatedAt  time.Time  `json:"created_at"`
	DeletedAt  *time.Time `json:"deleted_at"`
}

// Deleted reports whether the route was (soft-)deleted.
func (r *HostnameRoute) Deleted() bool { return r.DeletedAt != nil && !r.DeletedAt.IsZero() }

// HostnameRouteInput is what a route is created or updated with.
type HostnameRouteInput struct {
	Hostname string
	TunnelID string
	Comment  string
}

// HostnameRouteFilter narrows a listing. Hostname is Cloudflare's
// case-insensitive substring match: compare exact hostnames yourself.
type HostnameRouteFilter struct {
	Hostname string
	TunnelID string
	Comment  string
}

// HostnameRoutesAPI manages private hostname routes.
type HostnameRoutesAPI interface {
	CreateHostnameRoute(ctx context.Context, in HostnameRouteInput) (*HostnameRoute, error)
	GetHostnameRoute(ctx context.Context, id string) (*HostnameRoute, error)
	ListHostnameRoutes(ctx context.Context, f HostnameRouteFilter) ([]HostnameRoute, error)
	UpdateHostnameRoute(ctx context.Context, id string, in HostnameRouteInput) (*HostnameRoute, error)
	DeleteHostnameRoute(ctx context.Context, id string) error
}

func (c *Client) hostnameRoutes() *zero_trust.NetworkHostnameRouteService {
	return c.sdk.ZeroTrust.Networks.HostnameRoutes
}

// CreateHostnameRoute creates a route.
func (c *Client) CreateHostnameRoute(ctx context.Context, in HostnameRouteInput) (*HostnameRoute, error) {
	res, err := c.hostnameRoutes().New(ctx, zero_trust.NetworkHostnameRouteNewParams{
		AccountID: cf.F(c.AccountID), Hostname: cf.F(in.Hostname), TunnelID: cf.F(in.TunnelID), Comment: cf.F(in.Comment),
	})
	if err != nil {
		return nil, wrap(err, "cannot create hostname route")
	}
	r := &HostnameRoute{}
	return r, wrap(decodeRaw(res.JSON.RawJSON(), r), "cannot decode hostname route")
}

// GetHostnameRoute gets a route by ID; a deleted route has DeletedAt set.
func (c *Client) GetHostnameRoute(ctx context.Context, id string) (*HostnameRoute, error) {
	res, err := c.hostnameRoutes().Get(ctx, id, zero_trust.NetworkHostnameRouteGetParams{AccountID: cf.F(c.AccountID)})
	if err != nil {
		return nil, wrap(err, "cannot get hostname route")
	}
	r := &HostnameRoute{}
	return r, wrap(decodeRaw(res.JSON.RawJSON(), r), "cannot decode hostname route")
}

// ListHostnameRoutes lists live routes matching f, following pagination.
func (c *Client) ListHostnameRoutes(ctx context.Context, f HostnameRouteFilter) ([]HostnameRoute, error) {
	p := zero_trust.NetworkHostnameRouteListParams{AccountID: cf.F(c.AccountID), IsDeleted: cf.F(false), PerPage: cf.F(float64(c.pageSize))}
	if f.Hostname != "" {
		p.Hostname = cf.F(f.Hostname)
	}
	if f.TunnelID != "" {
		p.TunnelID = cf.F(f.TunnelID)
	}
	if f.Comment != "" {
		p.Comment = cf.F(f.Comment)
	}
	out, err := pages[HostnameRoute](c.pageSize, func(page int) ([]zero_trust.HostnameRoute, string, error) {
		p.Page = cf.F(float64(page))
		res, err := c.hostnameRoutes().List(ctx, p)
		if err != nil {
			return nil, "", err
		}
		return res.Result, res.ResultInfo.JSON.RawJSON(), nil
	}, func(r zero_trust.HostnameRoute) string { return r.JSON.RawJSON() })
	return out, wrap(err, "cannot list hostname routes")
}

// UpdateHostnameRoute changes a route's hostname, tunnel and comment.
func (c *Client) UpdateHostnameRoute(ctx context.Context, id string, in HostnameRouteInput) (*HostnameRoute, error) {
	res, err := c.hostnameRoutes().Edit(ctx, id, zero_trust.NetworkHostnameRouteEditParams{
		AccountID: cf.F(c.AccountID), Hostname: cf.F(in.Hostname), TunnelID: cf.F(in.TunnelID), Comment: cf.F(in.Comment),
	})
	if err != nil {
		return nil, wrap(err, "cannot update hostname route")
	}
	r := &HostnameRoute{}
	return r, wrap(decodeRaw(res.JSON.RawJSON(), r), "cannot decode hostname route")
}

// DeleteHostnameRoute soft-deletes a route.
func (c *Client) DeleteHostnameRoute(ctx context.Context, id string) error {
	_, err := c.hostnameRoutes().Delete(ctx, id, zero_trust.NetworkHostnameRouteDeleteParams{AccountID: cf.F(c.AccountID)})
	return wrap(err, "cannot delete hostname route")
}

// NormalizeHostname is the form Cloudflare stores a route's hostname in
// (hostname.Normalize): compare hostnames in this form, or a reconciler
// never settles.
func NormalizeHostname(h string) string { return hostname.Normalize(h) }
