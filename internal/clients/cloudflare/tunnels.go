package cloudflare

import (
	"context"
	"encoding/json"
	"time"

	cf "github.com/cloudflare/cloudflare-go/v7"
	"github.com/cloudflare/cloudflare-go/v7/shared"
	"github.com/cloudflare/cloudflare-go/v7/zero_trust"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare/budget"
)

type cfTunnel = shared.CloudflareTunnel

// Tunnel is a Cloudflare Tunnel (cfd_tunnel).
type Tunnel struct {
	ID              string     `json:"id"`
	AccountTag      string     `json:"account_tag"`
	Name            string     `json:"name"`
	ConfigSrc       string     `json:"config_src"`
	Status          string     `json:"status"`
	CreatedAt       time.Time  `json:"created_at"`
	DeletedAt       *time.Time `json:"deleted_at"`
	ConnsActiveAt   *time.Time `json:"conns_active_at"`
	ConnsInactiveAt *time.Time `json:"conns_inactive_at"`
	// Token is the run token; only a create result carries it. It is a
	// secret: never log a Tunnel.
	Token string `json:"token,omitempty"`
}

// Deleted reports whether the tunnel was (soft-)deleted.
func (t *Tunnel) Deleted() bool { return t.DeletedAt != nil && !t.DeletedAt.IsZero() }

// Connector is one running cloudflared and its edge connections.
type Connector struct {
	ID      string `json:"id"`
	Version string `json:"version"`
	// ConfigVersion is the remote configuration version it last applied.
	ConfigVersion int `json:"config_version"`
	// RunAt is when it started.
	RunAt time.Time `json:"run_at"`
	Conns []struct {
		ID       string `json:"id"`
		ColoName string `json:"colo_name"`
	} `json:"conns"`
}

// TunnelConfiguration is a tunnel's remote configuration document.
type TunnelConfiguration struct {
	Version int             `json:"version"`
	Source  string          `json:"source"`
	Config  json.RawMessage `json:"config"`
}

// TunnelFilter narrows a tunnel listing.
type TunnelFilter struct {
	// Name matches exactly.
	Name string
	// Deleted lists only deleted tunnels instead of only live ones.
	Deleted bool
}

// TunnelsAPI manages cfd_tunnels, their tokens, connections and remote
// configuration.
type TunnelsAPI interface {
	CreateTunnel(ctx context.Context, name, configSrc string) (*Tunnel, error)
	GetTunnel(ctx context.Context, id string) (*Tunnel, error)
	ListTunnels(ctx context.Context, f TunnelFilter) ([]Tunnel, error)
	// ListTunnelsSince is ListTunnels from a list sent no earlier than t:
	// what Cloudflare held after a write made before t.
	ListTunnelsSince(ctx context.Context, f TunnelFilter, t time.Time) ([]Tunnel, error)
	RenameTunnel(ctx context.Context, id, name string) (*Tunnel, error)
	DeleteTunnel(ctx context.Context, id string) error
	TunnelToken(ctx context.Context, id string) (string, error)
	// RotateTunnelSecret sets a new tunnel secret (base64 of at least 32
	// bytes): the run token changes, and Cloudflare accepts only the new
	// one from connectors that connect from now on.
	RotateTunnelSecret(ctx context.Context, id, secret string) (*Tunnel, error)
	TunnelConnectors(ctx context.Context, id string) ([]Connector, error)
	// DeleteTunnelConnector removes one connector's connections (Cloudflare
	// recommends it after rotating a token, for the connectors that ran
	// with the old one).
	DeleteTunnelConnector(ctx context.Context, id, connectorID string) error
	GetTunnelConfiguration(ctx context.Context, id string) (*TunnelConfiguration, error)
	UpdateTunnelConfiguration(ctx context.Context, id string, config json.RawMessage) (*TunnelConfiguration, error)
}

func (c *Client) tunnels() *zero_trust.TunnelCloudflaredService {
	return c.sdk.ZeroTrust.Tunnels.Cloudflared
}

// CreateTunnel creates a tunnel; Cloudflare generates its secret.
func (c *Client) CreateTunnel(ctx context.Context, name, configSrc string) (*Tunnel, error) {
	res, err := c.tunnels().New(ctx, zero_trust.TunnelCloudflaredNewParams{
		AccountID: cf.F(c.AccountID),
		Name:      cf.F(name),
		ConfigSrc: cf.F(zero_trust.TunnelCloudflaredNewParamsConfigSrc(configSrc)),
	})
	if err != nil {
		return nil, wrap(err, "cannot create tunnel")
	}
	t := &Tunnel{}
	return t, wrap(decodeRaw(res.JSON.RawJSON(), t), "cannot decode tunnel")
}

// GetTunnel gets a tunnel by ID; a deleted tunnel is returned with DeletedAt set.
func (c *Client) GetTunnel(ctx context.Context, id string) (*Tunnel, error) {
	res, err := c.tunnels().Get(ctx, id, zero_trust.TunnelCloudflaredGetParams{AccountID: cf.F(c.AccountID)})
	if err != nil {
		return nil, wrap(err, "cannot get tunnel")
	}
	t := &Tunnel{}
	return t, wrap(decodeRaw(res.JSON.RawJSON(), t), "cannot decode tunnel")
}

// ListTunnels lists every tunnel matching f, following pagination.
// ListTunnelsSince lists the tunnels matching f now, which is after any t
// already passed (this client keeps no snapshot).
func (c *Client) ListTunnelsSince(ctx context.Context, f TunnelFilter, _ time.Time) ([]Tunnel, error) {
	return c.ListTunnels(ctx, f)
}

func (c *Client) ListTunnels(ctx context.Context, f TunnelFilter) ([]Tunnel, error) {
	p := zero_trust.TunnelCloudflaredListParams{AccountID: cf.F(c.AccountID), IsDeleted: cf.F(f.Deleted), PerPage: cf.F(float64(c.pageSize))}
	if f.Name != "" {
		p.Name = cf.F(f.Name)
	}
	out, err := pages[Tunnel](c.pageSize, func(page int) ([]cfTunnel, string, error) {
		p.Page = cf.F(float64(page))
		res, err := c.tunnels().List(ctx, p)
		if err != nil {
			return nil, "", err
		}
		return res.Result, res.ResultInfo.JSON.RawJSON(), nil
	}, func(t cfTunnel) string { return t.JSON.RawJSON() })
	return out, wrap(err, "cannot list tunnels")
}

// RenameTunnel changes a tunnel's name.
func (c *Client) RenameTunnel(ctx context.Context, id, name string) (*Tunnel, error) {
	res, err := c.tunnels().Edit(ctx, id, zero_trust.TunnelCloudflaredEditParams{AccountID: cf.F(c.AccountID), Name: cf.F(name)})
	if err != nil {
		return nil, wrap(err, "cannot rename tunnel")
	}
	t := &Tunnel{}
	return t, wrap(decodeRaw(res.JSON.RawJSON(), t), "cannot decode tunnel")
}

// DeleteTunnel soft-deletes a tunnel. Cloudflare refuses while connectors are
// connected or routes remain; the error says which.
func (c *Client) DeleteTunnel(ctx context.Context, id string) error {
	_, err := c.tunnels().Delete(ctx, id, zero_trust.TunnelCloudflaredDeleteParams{AccountID: cf.F(c.AccountID)})
	return wrap(err, "cannot delete tunnel")
}

// TunnelToken gets the token cloudflared runs the tunnel with.
func (c *Client) TunnelToken(ctx context.Context, id string) (string, error) {
	res, err := c.tunnels().Token.Get(ctx, id, zero_trust.TunnelCloudflaredTokenGetParams{AccountID: cf.F(c.AccountID)})
	if err != nil {
		return "", wrap(err, "cannot get tunnel token")
	}
	return *res, nil
}

// RotateTunnelSecret sets a new tunnel secret. The secret is never logged
// or wrapped into an error.
func (c *Client) RotateTunnelSecret(ctx context.Context, id, secret string) (*Tunnel, error) {
	res, err := c.tunnels().Edit(ctx, id, zero_trust.TunnelCloudflaredEditParams{AccountID: cf.F(c.AccountID), TunnelSecret: cf.F(secret)})
	if err != nil {
		return nil, wrap(err, "cannot rotate tunnel secret")
	}
	t := &Tunnel{}
	return t, wrap(decodeRaw(res.JSON.RawJSON(), t), "cannot decode tunnel")
}

// DeleteTunnelConnector removes a connector from a tunnel, whatever its
// state.
func (c *Client) DeleteTunnelConnector(ctx context.Context, id, connectorID string) error {
	_, err := c.tunnels().Connections.Delete(ctx, id, zero_trust.TunnelCloudflaredConnectionDeleteParams{AccountID: cf.F(c.AccountID), ClientID: cf.F(connectorID)})
	return wrap(err, "cannot delete tunnel connector")
}

// TunnelConnectors lists the cloudflared connectors attached to a tunnel.
func (c *Client) TunnelConnectors(ctx context.Context, id string) ([]Connector, error) {
	res, err := c.tunnels().Connections.Get(ctx, id, zero_trust.TunnelCloudflaredConnectionGetParams{AccountID: cf.F(c.AccountID)})
	if err != nil {
		return nil, wrap(err, "cannot list tunnel connections")
	}
	out := []Connector{}
	for _, cl := range res.Result {
		var k Connector
		if err := decodeRaw(cl.JSON.RawJSON(), &k); err != nil {
			return nil, wrap(err, "cannot decode tunnel connection")
		}
		out = append(out, k)
	}
	return out, nil
}

// GetTunnelConfiguration gets the remote configuration; Config is an empty
// object (or null) when the tunnel was never configured remotely.
func (c *Client) GetTunnelConfiguration(ctx context.Context, id string) (*TunnelConfiguration, error) {
	// Read before every write of the document that holds every hostname
	// of the tunnel: as urgent as the write.
	ctx = budget.WithPriority(ctx, budget.Aggregate)
	res, err := c.tunnels().Configurations.Get(ctx, id, zero_trust.TunnelCloudflaredConfigurationGetParams{AccountID: cf.F(c.AccountID)})
	if err != nil {
		return nil, wrap(err, "cannot get tunnel configuration")
	}
	tc := &TunnelConfiguration{}
	return tc, wrap(decodeRaw(res.JSON.RawJSON(), tc), "cannot decode tunnel configuration")
}

// UpdateTunnelConfiguration replaces the whole remote configuration document.
func (c *Client) UpdateTunnelConfiguration(ctx context.Context, id string, config json.RawMessage) (*TunnelConfiguration, error) {
	body, err := jsonBody(map[string]json.RawMessage{"config": config})
	if err != nil {
		return nil, wrap(err, "cannot encode tunnel configuration")
	}
	// One document holds every hostname of the tunnel: its write goes ahead
	// of the queue of single-object writes.
	ctx = budget.WithPriority(ctx, budget.Aggregate)
	res, err := c.tunnels().Configurations.Update(ctx, id, zero_trust.TunnelCloudflaredConfigurationUpdateParams{AccountID: cf.F(c.AccountID)}, body)
	if err != nil {
		return nil, wrap(err, "cannot update tunnel configuration")
	}
	tc := &TunnelConfiguration{}
	return tc, wrap(decodeRaw(res.JSON.RawJSON(), tc), "cannot decode tunnel configuration")
}
