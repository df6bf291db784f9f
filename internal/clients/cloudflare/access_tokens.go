package cloudflare

import (
	"context"
	"encoding/json"
	"net/http"
	"time"
)

// AccessGroup is an Access group. Rules are kept as Cloudflare's JSON
// objects, like a policy's.
type AccessGroup struct {
	ID        string            `json:"id"`
	Name      string            `json:"name"`
	Include   []json.RawMessage `json:"include"`
	Exclude   []json.RawMessage `json:"exclude"`
	Require   []json.RawMessage `json:"require"`
	CreatedAt time.Time         `json:"created_at"`
}

// AccessGroupInput is what a group is created or replaced with.
type AccessGroupInput struct {
	Name    string            `json:"name"`
	Include []json.RawMessage `json:"include"`
	Exclude []json.RawMessage `json:"exclude"`
	Require []json.RawMessage `json:"require"`
}

// AccessGroupAPI manages Access groups.
type AccessGroupAPI interface {
	CreateAccessGroup(ctx context.Context, in AccessGroupInput) (*AccessGroup, error)
	GetAccessGroup(ctx context.Context, id string) (*AccessGroup, error)
	ListAccessGroups(ctx context.Context) ([]AccessGroup, error)
	UpdateAccessGroup(ctx context.Context, id string, in AccessGroupInput) (*AccessGroup, error)
	DeleteAccessGroup(ctx context.Context, id string) error
}

// ClientSecret is a service token's secret. It prints redacted, so no
// log, event or error that formats a token can carry it; Reveal is the
// one way to its value, for the connection Secret.
type ClientSecret string

func (ClientSecret) String() string   { return "[redacted]" }
func (ClientSecret) GoString() string { return "[redacted]" }

// Reveal is the secret itself.
func (s ClientSecret) Reveal() string { return string(s) }

// ServiceToken is an Access service token as Cloudflare lists it: never
// with its secret.
type ServiceToken struct {
	ID        string     `json:"id"`
	Name      string     `json:"name"`
	ClientID  string     `json:"client_id"`
	Duration  string     `json:"duration"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
	// Enabled is false for a token turned off (it authenticates with
	// neither its secret nor a rotated-out one). Nil, as a token read
	// before Cloudflare answered the field, is on: IsEnabled.
	Enabled *bool `json:"enabled,omitempty"`
	// LastSeenAt is when the token last authenticated; nil: never.
	LastSeenAt *time.Time `json:"last_seen_at,omitempty"`
}

// IsEnabled says whether the token may authenticate (Cloudflare's default,
// when the answer leaves the field out, is enabled).
func (t ServiceToken) IsEnabled() bool { return t.Enabled == nil || *t.Enabled }

// IssuedServiceToken is a service token with the secret Cloudflare shows
// once: in the answer to its create and to each rotation.
type IssuedServiceToken struct {
	ServiceToken
	ClientSecret ClientSecret `json:"client_secret"`
}

// ServiceTokenInput is what a token is created or changed with; an empty
// Duration is left as it is (an update) or Cloudflare's default (a create).
type ServiceTokenInput struct {
	Name     string `json:"name"`
	Duration string `json:"duration,omitempty"`
	// Enabled turns the token on or off; nil leaves it as it is (an
	// update) or on (a create).
	Enabled *bool `json:"enabled,omitempty"`
}

// ServiceTokenAPI manages Access service tokens.
type ServiceTokenAPI interface {
	CreateServiceToken(ctx context.Context, in ServiceTokenInput) (*IssuedServiceToken, error)
	GetServiceToken(ctx context.Context, id string) (*ServiceToken, error)
	ListServiceTokens(ctx context.Context) ([]ServiceToken, error)
	UpdateServiceToken(ctx context.Context, id string, in ServiceTokenInput) (*ServiceToken, error)
	DeleteServiceToken(ctx context.Context, id string) error
	// RotateServiceToken issues a new secret; the replaced one is still
	// accepted until previousExpiresAt (nil: it stops at once).
	RotateServiceToken(ctx context.Context, id string, previousExpiresAt *time.Time) (*IssuedServiceToken, error)
	// RefreshServiceToken extends the token's expiry by its duration.
	RefreshServiceToken(ctx context.Context, id string) (*ServiceToken, error)
}

var (
	_ AccessGroupAPI  = &Client{}
	_ ServiceTokenAPI = &Client{}
)

// CreateAccessGroup creates a group.
func (c *Client) CreateAccessGroup(ctx context.Context, in AccessGroupInput) (*AccessGroup, error) {
	out := &AccessGroup{}
	return out, c.accessCall(ctx, http.MethodPost, c.accessPath("groups"), groupBody(in), out, "cannot create Access group")
}

// GetAccessGroup gets a group by ID.
func (c *Client) GetAccessGroup(ctx context.Context, id string) (*AccessGroup, error) {
	out := &AccessGroup{}
	return out, c.accessCall(ctx, http.MethodGet, c.accessPath("groups", id), nil, out, "cannot get Access group")
}

// ListAccessGroups lists the account's groups, following pagination.
func (c *Client) ListAccessGroups(ctx context.Context) ([]AccessGroup, error) {
	out, err := accessPages[AccessGroup](ctx, c, c.accessPath("groups"))
	return out, wrap(err, "cannot list Access groups")
}

// UpdateAccessGroup replaces a group.
func (c *Client) UpdateAccessGroup(ctx context.Context, id string, in AccessGroupInput) (*AccessGroup, error) {
	out := &AccessGroup{}
	return out, c.accessCall(ctx, http.MethodPut, c.accessPath("groups", id), groupBody(in), out, "cannot update Access group")
}

// DeleteAccessGroup deletes a group.
func (c *Client) DeleteAccessGroup(ctx context.Context, id string) error {
	return c.accessCall(ctx, http.MethodDelete, c.accessPath("groups", id), nil, nil, "cannot delete Access group")
}

func groupBody(in AccessGroupInput) AccessGroupInput {
	in.Include, in.Exclude, in.Require = nonNil(in.Include), nonNil(in.Exclude), nonNil(in.Require)
	return in
}

// CreateServiceToken creates a token; the answer carries its secret, the
// only time Cloudflare shows it but for a rotation.
func (c *Client) CreateServiceToken(ctx context.Context, in ServiceTokenInput) (*IssuedServiceToken, error) {
	out := &IssuedServiceToken{}
	return out, c.accessCall(ctx, http.MethodPost, c.accessPath("service_tokens"), in, out, "cannot create Access service token")
}

// GetServiceToken gets a token by ID (without its secret).
func (c *Client) GetServiceToken(ctx context.Context, id string) (*ServiceToken, error) {
	out := &ServiceToken{}
	return out, c.accessCall(ctx, http.MethodGet, c.accessPath("service_tokens", id), nil, out, "cannot get Access service token")
}

// ListServiceTokens lists the account's tokens, following pagination.
func (c *Client) ListServiceTokens(ctx context.Context) ([]ServiceToken, error) {
	out, err := accessPages[ServiceToken](ctx, c, c.accessPath("service_tokens"))
	return out, wrap(err, "cannot list Access service tokens")
}

// UpdateServiceToken changes a token's name and, when given, its duration
// (which Cloudflare counts from now).
func (c *Client) UpdateServiceToken(ctx context.Context, id string, in ServiceTokenInput) (*ServiceToken, error) {
	out := &ServiceToken{}
	return out, c.accessCall(ctx, http.MethodPut, c.accessPath("service_tokens", id), in, out, "cannot update Access service token")
}

// DeleteServiceToken deletes (revokes) a token.
func (c *Client) DeleteServiceToken(ctx context.Context, id string) error {
	return c.accessCall(ctx, http.MethodDelete, c.accessPath("service_tokens", id), nil, nil, "cannot delete Access service token")
}

// RotateServiceToken issues a new secret and answers it, once.
func (c *Client) RotateServiceToken(ctx context.Context, id string, previousExpiresAt *time.Time) (*IssuedServiceToken, error) {
	body := struct {
		PreviousClientSecretExpiresAt *time.Time `json:"previous_client_secret_expires_at,omitempty"`
	}{previousExpiresAt}
	out := &IssuedServiceToken{}
	return out, c.accessCall(ctx, http.MethodPost, c.accessPath("service_tokens", id, "rotate"), body, out, "cannot rotate Access service token")
}

// RefreshServiceToken extends a token's expiry by its duration from now.
func (c *Client) RefreshServiceToken(ctx context.Context, id string) (*ServiceToken, error) {
	out := &ServiceToken{}
	return out, c.accessCall(ctx, http.MethodPost, c.accessPath("service_tokens", id, "refresh"), nil, out, "cannot refresh Access service token")
}
