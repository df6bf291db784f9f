package cloudflare

import (
	"context"
	"time"

	cf "github.com/cloudflare/cloudflare-go/v7"
	"github.com/cloudflare/cloudflare-go/v7/connectivity"
)

// Service is a Workers VPC directory service.
type Service struct {
	ServiceID   string       `json:"service_id,omitempty"`
	Name        string       `json:"name"`
	Type        string       `json:"type"`
	Host        ServiceHost  `json:"host"`
	TCPPort     *int64       `json:"tcp_port,omitempty"`
	HTTPPort    *int64       `json:"http_port,omitempty"`
	HTTPSPort   *int64       `json:"https_port,omitempty"`
	AppProtocol string       `json:"app_protocol,omitempty"`
	TLSSettings *TLSSettings `json:"tls_settings,omitempty"`
	CreatedAt   *time.Time   `json:"created_at,omitempty"`
	UpdatedAt   *time.Time   `json:"updated_at,omitempty"`
}

// ServiceHost is where a service lives: a hostname resolved inside a
// tunnel's network, or an address on it.
type ServiceHost struct {
	Hostname        string           `json:"hostname,omitempty"`
	IPv4            string           `json:"ipv4,omitempty"`
	IPv6            string           `json:"ipv6,omitempty"`
	Network         *ServiceNetwork  `json:"network,omitempty"`
	ResolverNetwork *ResolverNetwork `json:"resolver_network,omitempty"`
}

// ServiceNetwork is the tunnel an address is reached through.
type ServiceNetwork struct {
	TunnelID string `json:"tunnel_id"`
}

// ResolverNetwork is the tunnel a hostname is resolved and reached through.
type ResolverNetwork struct {
	TunnelID    string   `json:"tunnel_id"`
	ResolverIPs []string `json:"resolver_ips,omitempty"`
}

// TLSSettings of a service.
type TLSSettings struct {
	CertVerificationMode string `json:"cert_verification_mode,omitempty"`
}

// ServicesAPI manages Workers VPC directory services.
type ServicesAPI interface {
	CreateService(ctx context.Context, s Service) (*Service, error)
	GetService(ctx context.Context, id string) (*Service, error)
	ListServices(ctx context.Context) ([]Service, error)
	// ListServicesSince is ListServices from a list sent no earlier than
	// t: what Cloudflare held after a write made before t.
	ListServicesSince(ctx context.Context, t time.Time) ([]Service, error)
	UpdateService(ctx context.Context, id string, s Service) (*Service, error)
	DeleteService(ctx context.Context, id string) error
}

func (c *Client) services() *connectivity.DirectoryServiceService {
	return c.sdk.Connectivity.Directory.Services
}

// writable drops the read-only fields Cloudflare sets.
func (s Service) writable() Service {
	s.ServiceID, s.CreatedAt, s.UpdatedAt = "", nil, nil
	return s
}

// CreateService creates a directory service.
func (c *Client) CreateService(ctx context.Context, s Service) (*Service, error) {
	body, err := jsonBody(s.writable())
	if err != nil {
		return nil, wrap(err, "cannot encode service")
	}
	res, err := c.services().New(ctx, connectivity.DirectoryServiceNewParams{AccountID: cf.F(c.AccountID)}, body)
	if err != nil {
		return nil, wrap(err, "cannot create service")
	}
	out := &Service{}
	return out, wrap(decodeRaw(res.JSON.RawJSON(), out), "cannot decode service")
}

// GetService gets a directory service by ID.
func (c *Client) GetService(ctx context.Context, id string) (*Service, error) {
	res, err := c.services().Get(ctx, id, connectivity.DirectoryServiceGetParams{AccountID: cf.F(c.AccountID)})
	if err != nil {
		return nil, wrap(err, "cannot get service")
	}
	out := &Service{}
	return out, wrap(decodeRaw(res.JSON.RawJSON(), out), "cannot decode service")
}

// ListServices lists every directory service, following pagination. The API
// has no name filter.
// ListServicesSince lists every service now, which is after any t already
// passed (this client keeps no snapshot).
func (c *Client) ListServicesSince(ctx context.Context, _ time.Time) ([]Service, error) {
	return c.ListServices(ctx)
}

func (c *Client) ListServices(ctx context.Context) ([]Service, error) {
	p := connectivity.DirectoryServiceListParams{AccountID: cf.F(c.AccountID), PerPage: cf.F(int64(c.pageSize))}
	out, err := pages[Service](c.pageSize, func(page int) ([]connectivity.DirectoryServiceListResponse, string, error) {
		p.Page = cf.F(int64(page))
		res, err := c.services().List(ctx, p)
		if err != nil {
			return nil, "", err
		}
		return res.Result, res.ResultInfo.JSON.RawJSON(), nil
	}, func(s connectivity.DirectoryServiceListResponse) string { return s.JSON.RawJSON() })
	return out, wrap(err, "cannot list services")
}

// UpdateService replaces a directory service whole.
func (c *Client) UpdateService(ctx context.Context, id string, s Service) (*Service, error) {
	body, err := jsonBody(s.writable())
	if err != nil {
		return nil, wrap(err, "cannot encode service")
	}
	res, err := c.services().Update(ctx, id, connectivity.DirectoryServiceUpdateParams{AccountID: cf.F(c.AccountID)}, body)
	if err != nil {
		return nil, wrap(err, "cannot update service")
	}
	out := &Service{}
	return out, wrap(decodeRaw(res.JSON.RawJSON(), out), "cannot decode service")
}

// DeleteService deletes a directory service.
func (c *Client) DeleteService(ctx context.Context, id string) error {
	return wrap(c.services().Delete(ctx, id, connectivity.DirectoryServiceDeleteParams{AccountID: cf.F(c.AccountID)}), "cannot delete service")
}
