package cloudflare

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"time"

	cf "github.com/cloudflare/cloudflare-go/v7"
	"github.com/cloudflare/cloudflare-go/v7/zero_trust"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare/cidr"
)

// CIDRRoute routes a private network (CIDR) through a tunnel (cidr.Route,
// which the claim logic shares without the SDK).
type CIDRRoute = cidr.Route

// VirtualNetwork is a teamnet virtual network.
type VirtualNetwork struct {
	ID               string     `json:"id"`
	Name             string     `json:"name"`
	Comment          string     `json:"comment"`
	IsDefaultNetwork bool       `json:"is_default_network"`
	CreatedAt        time.Time  `json:"created_at"`
	DeletedAt        *time.Time `json:"deleted_at"`
}

// Deleted reports whether the virtual network was (soft-)deleted.
func (v *VirtualNetwork) Deleted() bool { return v.DeletedAt != nil && !v.DeletedAt.IsZero() }

// CIDRRouteInput is what a CIDR route is created or updated with; an empty
// virtual network means the account's default on create, and no change on
// update.
type CIDRRouteInput struct {
	Network          string
	TunnelID         string
	VirtualNetworkID string
	Comment          string
}

// CIDRRouteFilter narrows a listing, with Cloudflare's semantics:
// NetworkSubset keeps routes inside that CIDR, NetworkSuperset routes that
// contain it.
type CIDRRouteFilter struct {
	TunnelID         string
	VirtualNetworkID string
	NetworkSubset    string
	NetworkSuperset  string
}

// Keep applies the filter to one route, as Cloudflare does.
func (f CIDRRouteFilter) Keep(r CIDRRoute) bool {
	if (f.TunnelID != "" && r.TunnelID != f.TunnelID) || (f.VirtualNetworkID != "" && r.VirtualNetworkID != f.VirtualNetworkID) {
		return false
	}
	n, err := netip.ParsePrefix(r.Network)
	if err != nil {
		return f.NetworkSubset == "" && f.NetworkSuperset == ""
	}
	if f.NetworkSubset != "" {
		p, err := netip.ParsePrefix(f.NetworkSubset)
		if err != nil || !Contains(p, n) {
			return false
		}
	}
	if f.NetworkSuperset != "" {
		p, err := netip.ParsePrefix(f.NetworkSuperset)
		if err != nil || !Contains(n, p) {
			return false
		}
	}
	return true
}

// Contains reports whether outer contains inner (cidr.Contains).
func Contains(outer, inner netip.Prefix) bool { return cidr.Contains(outer, inner) }

// NormalizeNetwork is the form Cloudflare stores a route's network in
// (cidr.Normalize).
func NormalizeNetwork(n string) string { return cidr.Normalize(n) }

// DescribeRoutes names routes for a message: "10.0.0.0/8 (route <id>), …",
// the first few and how many more.
func DescribeRoutes(rs []CIDRRoute) string {
	const shown = 5
	names := make([]string, 0, shown)
	for i, r := range rs {
		if i == shown {
			break
		}
		names = append(names, fmt.Sprintf("%s (route %s)", r.Network, r.ID))
	}
	out := strings.Join(names, ", ")
	if len(rs) > shown {
		out += fmt.Sprintf(" and %d more", len(rs)-shown)
	}
	return out
}

// VirtualNetworkInput is what a virtual network is created or updated
// with; a nil IsDefaultNetwork leaves the flag alone on update.
type VirtualNetworkInput struct {
	Name             string
	Comment          string
	IsDefaultNetwork *bool
}

// TeamnetAPI manages private-network (CIDR) routes and virtual networks.
type TeamnetAPI interface {
	CreateCIDRRoute(ctx context.Context, in CIDRRouteInput) (*CIDRRoute, error)
	GetCIDRRoute(ctx context.Context, id string) (*CIDRRoute, error)
	ListCIDRRoutes(ctx context.Context, f CIDRRouteFilter) ([]CIDRRoute, error)
	// ListCIDRRoutesNow is ListCIDRRoutes as Cloudflare has it now (a
	// cached client's snapshot at most FreshFor old), for the checks that
	// guard a create, a move or a deletion.
	ListCIDRRoutesNow(ctx context.Context, f CIDRRouteFilter) ([]CIDRRoute, error)
	// ListCIDRRoutesSince is ListCIDRRoutes from a list sent no earlier
	// than t: what Cloudflare held after a write that returned at t, for
	// the check that follows a create.
	ListCIDRRoutesSince(ctx context.Context, f CIDRRouteFilter, t time.Time) ([]CIDRRoute, error)
	UpdateCIDRRoute(ctx context.Context, id string, in CIDRRouteInput) (*CIDRRoute, error)
	DeleteCIDRRoute(ctx context.Context, id string) error
	// RouteForIP is the most specific live route containing ip in a
	// virtual network ("" is the account's default).
	RouteForIP(ctx context.Context, ip, virtualNetworkID string) (*CIDRRoute, error)

	ListVirtualNetworks(ctx context.Context) ([]VirtualNetwork, error)
	GetVirtualNetwork(ctx context.Context, id string) (*VirtualNetwork, error)
	CreateVirtualNetwork(ctx context.Context, in VirtualNetworkInput) (*VirtualNetwork, error)
	UpdateVirtualNetwork(ctx context.Context, id string, in VirtualNetworkInput) (*VirtualNetwork, error)
	DeleteVirtualNetwork(ctx context.Context, id string) error
}

// CreateCIDRRoute creates a CIDR route; an empty virtual network means the
// account's default.
func (c *Client) CreateCIDRRoute(ctx context.Context, in CIDRRouteInput) (*CIDRRoute, error) {
	p := zero_trust.NetworkRouteNewParams{AccountID: cf.F(c.AccountID), Network: cf.F(in.Network), TunnelID: cf.F(in.TunnelID), Comment: cf.F(in.Comment)}
	if in.VirtualNetworkID != "" {
		p.VirtualNetworkID = cf.F(in.VirtualNetworkID)
	}
	res, err := c.sdk.ZeroTrust.Networks.Routes.New(ctx, p)
	if err != nil {
		return nil, wrap(err, "cannot create CIDR route")
	}
	r := &CIDRRoute{}
	return r, wrap(decodeRaw(res.JSON.RawJSON(), r), "cannot decode CIDR route")
}

// GetCIDRRoute gets a CIDR route by ID.
func (c *Client) GetCIDRRoute(ctx context.Context, id string) (*CIDRRoute, error) {
	res, err := c.sdk.ZeroTrust.Networks.Routes.Get(ctx, id, zero_trust.NetworkRouteGetParams{AccountID: cf.F(c.AccountID)})
	if err != nil {
		return nil, wrap(err, "cannot get CIDR route")
	}
	r := &CIDRRoute{}
	return r, wrap(decodeRaw(res.JSON.RawJSON(), r), "cannot decode CIDR route")
}

// ListCIDRRoutes lists the live CIDR routes matching f, following
// pagination.
func (c *Client) ListCIDRRoutes(ctx context.Context, f CIDRRouteFilter) ([]CIDRRoute, error) {
	p := zero_trust.NetworkRouteListParams{AccountID: cf.F(c.AccountID), IsDeleted: cf.F(false), PerPage: cf.F(float64(c.pageSize))}
	if f.TunnelID != "" {
		p.TunnelID = cf.F(f.TunnelID)
	}
	if f.VirtualNetworkID != "" {
		p.VirtualNetworkID = cf.F(f.VirtualNetworkID)
	}
	if f.NetworkSubset != "" {
		p.NetworkSubset = cf.F(f.NetworkSubset)
	}
	if f.NetworkSuperset != "" {
		p.NetworkSuperset = cf.F(f.NetworkSuperset)
	}
	out, err := pages[CIDRRoute](c.pageSize, func(page int) ([]zero_trust.Teamnet, string, error) {
		p.Page = cf.F(float64(page))
		res, err := c.sdk.ZeroTrust.Networks.Routes.List(ctx, p)
		if err != nil {
			return nil, "", err
		}
		return res.Result, res.ResultInfo.JSON.RawJSON(), nil
	}, func(r zero_trust.Teamnet) string { return r.JSON.RawJSON() })
	return out, wrap(err, "cannot list CIDR routes")
}

// ListCIDRRoutesNow lists the live routes matching f (this client keeps no
// snapshot).
func (c *Client) ListCIDRRoutesNow(ctx context.Context, f CIDRRouteFilter) ([]CIDRRoute, error) {
	return c.ListCIDRRoutes(ctx, f)
}

// ListCIDRRoutesSince lists the live routes matching f now, which is after
// any t already passed (this client keeps no snapshot).
func (c *Client) ListCIDRRoutesSince(ctx context.Context, f CIDRRouteFilter, _ time.Time) ([]CIDRRoute, error) {
	return c.ListCIDRRoutes(ctx, f)
}

// UpdateCIDRRoute changes a route's network, tunnel, virtual network and
// comment.
func (c *Client) UpdateCIDRRoute(ctx context.Context, id string, in CIDRRouteInput) (*CIDRRoute, error) {
	p := zero_trust.NetworkRouteEditParams{AccountID: cf.F(c.AccountID), Network: cf.F(in.Network), TunnelID: cf.F(in.TunnelID), Comment: cf.F(in.Comment)}
	if in.VirtualNetworkID != "" {
		p.VirtualNetworkID = cf.F(in.VirtualNetworkID)
	}
	res, err := c.sdk.ZeroTrust.Networks.Routes.Edit(ctx, id, p)
	if err != nil {
		return nil, wrap(err, "cannot update CIDR route")
	}
	r := &CIDRRoute{}
	return r, wrap(decodeRaw(res.JSON.RawJSON(), r), "cannot decode CIDR route")
}

// DeleteCIDRRoute deletes a CIDR route.
func (c *Client) DeleteCIDRRoute(ctx context.Context, id string) error {
	_, err := c.sdk.ZeroTrust.Networks.Routes.Delete(ctx, id, zero_trust.NetworkRouteDeleteParams{AccountID: cf.F(c.AccountID)})
	return wrap(err, "cannot delete CIDR route")
}

// RouteForIP asks Cloudflare which route serves an IP address.
func (c *Client) RouteForIP(ctx context.Context, ip, virtualNetworkID string) (*CIDRRoute, error) {
	p := zero_trust.NetworkRouteIPGetParams{AccountID: cf.F(c.AccountID)}
	if virtualNetworkID != "" {
		p.VirtualNetworkID = cf.F(virtualNetworkID)
	}
	res, err := c.sdk.ZeroTrust.Networks.Routes.IPs.Get(ctx, ip, p)
	if err != nil {
		return nil, wrap(err, "cannot look up the route for an IP")
	}
	r := &CIDRRoute{}
	return r, wrap(decodeRaw(res.JSON.RawJSON(), r), "cannot decode CIDR route")
}

// ListVirtualNetworks lists the live virtual networks (one page: the API
// does not paginate them).
func (c *Client) ListVirtualNetworks(ctx context.Context) ([]VirtualNetwork, error) {
	res, err := c.sdk.ZeroTrust.Networks.VirtualNetworks.List(ctx, zero_trust.NetworkVirtualNetworkListParams{AccountID: cf.F(c.AccountID), IsDeleted: cf.F(false)})
	if err != nil {
		return nil, wrap(err, "cannot list virtual networks")
	}
	out := []VirtualNetwork{}
	for _, v := range res.Result {
		var vn VirtualNetwork
		if err := decodeRaw(v.JSON.RawJSON(), &vn); err != nil {
			return nil, wrap(err, "cannot decode virtual network")
		}
		out = append(out, vn)
	}
	return out, nil
}

// GetVirtualNetwork gets a virtual network by ID.
func (c *Client) GetVirtualNetwork(ctx context.Context, id string) (*VirtualNetwork, error) {
	res, err := c.sdk.ZeroTrust.Networks.VirtualNetworks.Get(ctx, id, zero_trust.NetworkVirtualNetworkGetParams{AccountID: cf.F(c.AccountID)})
	if err != nil {
		return nil, wrap(err, "cannot get virtual network")
	}
	v := &VirtualNetwork{}
	return v, wrap(decodeRaw(res.JSON.RawJSON(), v), "cannot decode virtual network")
}

// CreateVirtualNetwork creates a virtual network.
func (c *Client) CreateVirtualNetwork(ctx context.Context, in VirtualNetworkInput) (*VirtualNetwork, error) {
	p := zero_trust.NetworkVirtualNetworkNewParams{AccountID: cf.F(c.AccountID), Name: cf.F(in.Name), Comment: cf.F(in.Comment)}
	if in.IsDefaultNetwork != nil {
		p.IsDefaultNetwork = cf.F(*in.IsDefaultNetwork)
	}
	res, err := c.sdk.ZeroTrust.Networks.VirtualNetworks.New(ctx, p)
	if err != nil {
		return nil, wrap(err, "cannot create virtual network")
	}
	v := &VirtualNetwork{}
	return v, wrap(decodeRaw(res.JSON.RawJSON(), v), "cannot decode virtual network")
}

// UpdateVirtualNetwork changes a virtual network's name, comment and, when
// set, default flag.
func (c *Client) UpdateVirtualNetwork(ctx context.Context, id string, in VirtualNetworkInput) (*VirtualNetwork, error) {
	p := zero_trust.NetworkVirtualNetworkEditParams{AccountID: cf.F(c.AccountID), Name: cf.F(in.Name), Comment: cf.F(in.Comment)}
	if in.IsDefaultNetwork != nil {
		p.IsDefaultNetwork = cf.F(*in.IsDefaultNetwork)
	}
	res, err := c.sdk.ZeroTrust.Networks.VirtualNetworks.Edit(ctx, id, p)
	if err != nil {
		return nil, wrap(err, "cannot update virtual network")
	}
	v := &VirtualNetwork{}
	return v, wrap(decodeRaw(res.JSON.RawJSON(), v), "cannot decode virtual network")
}

// DeleteVirtualNetwork deletes a virtual network; Cloudflare refuses while
// routes use it, and for the account's default.
func (c *Client) DeleteVirtualNetwork(ctx context.Context, id string) error {
	_, err := c.sdk.ZeroTrust.Networks.VirtualNetworks.Delete(ctx, id, zero_trust.NetworkVirtualNetworkDeleteParams{AccountID: cf.F(c.AccountID)})
	return wrap(err, "cannot delete virtual network")
}
