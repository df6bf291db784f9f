package cloudflare

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"time"

	cf "github.com/cloudflare/cloudflare-go/v7"
	"github.com/cloudflare/cloudflare-go/v7/option"
	"github.com/cloudflare/cloudflare-go/v7/zero_trust"
)

// AccessOrganization is the account's Zero Trust organization.
type AccessOrganization struct {
	// AuthDomain is <team>.cloudflareaccess.com.
	AuthDomain string `json:"auth_domain"`
	Name       string `json:"name"`
	// StrictServiceTokenAuth: when true, a request that carries service
	// token headers is let in only by a Service Auth (non_identity)
	// policy; Allow policies are ignored for it. On for good in
	// organizations made since 2026-10-05. Nil: not answered (an API
	// older than the setting), which is how Access behaved before it, off.
	StrictServiceTokenAuth *bool `json:"strict_service_token_auth,omitempty"`
	// ServiceTokenInactivity is Cloudflare's cleanup of inactive service
	// tokens; nil: not answered.
	ServiceTokenInactivity *ServiceTokenInactivity `json:"service_token_inactivity,omitempty"`
}

// ServiceTokenInactivity is the organization's cleanup of service tokens
// that have not authenticated for InactivityThresholdDays: Action
// "disable" turns them off, "delete" deletes them. Tokens an Access
// policy rule names directly are spared; one named only through an
// Access group is not.
type ServiceTokenInactivity struct {
	Enabled                 bool   `json:"enabled"`
	InactivityThresholdDays int    `json:"inactivity_threshold_days"`
	Action                  string `json:"action"`
}

// AccessPolicy is a reusable Access policy. Rules are kept as Cloudflare's
// JSON objects ({"email":{"email":"a@example.com"}}), one key each.
type AccessPolicy struct {
	ID              string            `json:"id"`
	Name            string            `json:"name"`
	Decision        string            `json:"decision"`
	Include         []json.RawMessage `json:"include"`
	Exclude         []json.RawMessage `json:"exclude"`
	Require         []json.RawMessage `json:"require"`
	SessionDuration string            `json:"session_duration,omitempty"`
	CreatedAt       time.Time         `json:"created_at"`
}

// AccessPolicyInput is what a reusable policy is created or replaced with.
type AccessPolicyInput struct {
	Name            string            `json:"name"`
	Decision        string            `json:"decision"`
	Include         []json.RawMessage `json:"include"`
	Exclude         []json.RawMessage `json:"exclude"`
	Require         []json.RawMessage `json:"require"`
	SessionDuration string            `json:"session_duration,omitempty"`
}

// AccessDestination is one hostname (and path) an application guards.
type AccessDestination struct {
	Type string `json:"type"`
	URI  string `json:"uri"`
}

// AccessPolicyRef is a reusable policy as an application uses it.
type AccessPolicyRef struct {
	ID         string `json:"id"`
	Precedence int64  `json:"precedence"`
}

// AccessApplication is a self-hosted Access application.
type AccessApplication struct {
	ID                     string              `json:"id"`
	AUD                    string              `json:"aud"`
	Name                   string              `json:"name"`
	Type                   string              `json:"type"`
	Domain                 string              `json:"domain"`
	Destinations           []AccessDestination `json:"destinations"`
	SessionDuration        string              `json:"session_duration"`
	AllowedIdPs            []string            `json:"allowed_idps"`
	AutoRedirectToIdentity bool                `json:"auto_redirect_to_identity"`
	AppLauncherVisible     bool                `json:"app_launcher_visible"`
	Policies               []AccessPolicyRef   `json:"policies"`
	CreatedAt              time.Time           `json:"created_at"`
}

// AccessApplicationInput is what a self-hosted application is created or
// replaced with.
type AccessApplicationInput struct {
	Name                   string              `json:"name"`
	Type                   string              `json:"type"`
	Domain                 string              `json:"domain"`
	Destinations           []AccessDestination `json:"destinations,omitempty"`
	SessionDuration        string              `json:"session_duration,omitempty"`
	AllowedIdPs            []string            `json:"allowed_idps"`
	AutoRedirectToIdentity bool                `json:"auto_redirect_to_identity"`
	AppLauncherVisible     bool                `json:"app_launcher_visible"`
	Policies               []AccessPolicyRef   `json:"policies"`
}

// AccessAPI manages Cloudflare Access: the organization, reusable policies
// and self-hosted applications.
type AccessAPI interface {
	AccessOrganizationReader

	CreateAccessPolicy(ctx context.Context, in AccessPolicyInput) (*AccessPolicy, error)
	GetAccessPolicy(ctx context.Context, id string) (*AccessPolicy, error)
	ListAccessPolicies(ctx context.Context) ([]AccessPolicy, error)
	UpdateAccessPolicy(ctx context.Context, id string, in AccessPolicyInput) (*AccessPolicy, error)
	DeleteAccessPolicy(ctx context.Context, id string) error

	CreateAccessApplication(ctx context.Context, in AccessApplicationInput) (*AccessApplication, error)
	GetAccessApplication(ctx context.Context, id string) (*AccessApplication, error)
	ListAccessApplications(ctx context.Context) ([]AccessApplication, error)
	UpdateAccessApplication(ctx context.Context, id string, in AccessApplicationInput) (*AccessApplication, error)
	DeleteAccessApplication(ctx context.Context, id string) error
}

// AccessOrganizationReader reads the account's Zero Trust organization.
type AccessOrganizationReader interface {
	GetAccessOrganization(ctx context.Context) (*AccessOrganization, error)
}

func (c *Client) accessPath(kind string, id ...string) string {
	p := "accounts/" + url.PathEscape(c.AccountID) + "/access/" + kind
	for _, part := range id {
		p += "/" + url.PathEscape(part)
	}
	return p
}

// accessCall sends one Access request with a JSON body (nil: none) and
// decodes the envelope's result into out (nil: ignored). The typed SDK
// services take rule unions field by field; the provider keeps Cloudflare's
// rule JSON as it is, so the request goes through the SDK's transport (its
// retries, the budget, the error type) with the body as written.
func (c *Client) accessCall(ctx context.Context, method, path string, body any, out any, op string) error {
	var opts []option.RequestOption
	if body != nil {
		b, err := jsonBody(body)
		if err != nil {
			return wrap(err, op)
		}
		opts = append(opts, b)
	}
	var res struct {
		Result json.RawMessage `json:"result"`
	}
	var err error
	switch method {
	case http.MethodGet:
		err = c.sdk.Get(ctx, path, nil, &res, opts...)
	case http.MethodPost:
		err = c.sdk.Post(ctx, path, nil, &res, opts...)
	case http.MethodPut:
		err = c.sdk.Put(ctx, path, nil, &res, opts...)
	case http.MethodDelete:
		err = c.sdk.Delete(ctx, path, nil, &res, opts...)
	}
	if err != nil {
		return wrap(err, op)
	}
	if out == nil || len(res.Result) == 0 {
		return nil
	}
	return wrap(decodeRaw(string(res.Result), out), op)
}

// GetAccessOrganization reads the account's Zero Trust organization.
func (c *Client) GetAccessOrganization(ctx context.Context) (*AccessOrganization, error) {
	out := &AccessOrganization{}
	return out, c.accessCall(ctx, http.MethodGet, c.accessPath("organizations"), nil, out, "cannot get the Access organization")
}

// CreateAccessPolicy creates a reusable policy.
func (c *Client) CreateAccessPolicy(ctx context.Context, in AccessPolicyInput) (*AccessPolicy, error) {
	out := &AccessPolicy{}
	return out, c.accessCall(ctx, http.MethodPost, c.accessPath("policies"), policyBody(in), out, "cannot create Access policy")
}

// GetAccessPolicy gets a reusable policy by ID.
func (c *Client) GetAccessPolicy(ctx context.Context, id string) (*AccessPolicy, error) {
	out := &AccessPolicy{}
	return out, c.accessCall(ctx, http.MethodGet, c.accessPath("policies", id), nil, out, "cannot get Access policy")
}

// ListAccessPolicies lists the account's reusable policies, following
// pagination.
func (c *Client) ListAccessPolicies(ctx context.Context) ([]AccessPolicy, error) {
	out, err := accessPages[AccessPolicy](ctx, c, c.accessPath("policies"))
	return out, wrap(err, "cannot list Access policies")
}

// UpdateAccessPolicy replaces a reusable policy.
func (c *Client) UpdateAccessPolicy(ctx context.Context, id string, in AccessPolicyInput) (*AccessPolicy, error) {
	out := &AccessPolicy{}
	return out, c.accessCall(ctx, http.MethodPut, c.accessPath("policies", id), policyBody(in), out, "cannot update Access policy")
}

// DeleteAccessPolicy deletes a reusable policy.
func (c *Client) DeleteAccessPolicy(ctx context.Context, id string) error {
	return c.accessCall(ctx, http.MethodDelete, c.accessPath("policies", id), nil, nil, "cannot delete Access policy")
}

// CreateAccessApplication creates a self-hosted application.
func (c *Client) CreateAccessApplication(ctx context.Context, in AccessApplicationInput) (*AccessApplication, error) {
	out := &AccessApplication{}
	return out, c.accessCall(ctx, http.MethodPost, c.accessPath("apps"), appBody(in), out, "cannot create Access application")
}

// GetAccessApplication gets an application by ID.
func (c *Client) GetAccessApplication(ctx context.Context, id string) (*AccessApplication, error) {
	out := &AccessApplication{}
	return out, c.accessCall(ctx, http.MethodGet, c.accessPath("apps", id), nil, out, "cannot get Access application")
}

// ListAccessApplications lists the account's applications, following
// pagination.
func (c *Client) ListAccessApplications(ctx context.Context) ([]AccessApplication, error) {
	out, err := accessPages[AccessApplication](ctx, c, c.accessPath("apps"))
	return out, wrap(err, "cannot list Access applications")
}

// UpdateAccessApplication replaces an application.
func (c *Client) UpdateAccessApplication(ctx context.Context, id string, in AccessApplicationInput) (*AccessApplication, error) {
	out := &AccessApplication{}
	return out, c.accessCall(ctx, http.MethodPut, c.accessPath("apps", id), appBody(in), out, "cannot update Access application")
}

// DeleteAccessApplication deletes an application.
func (c *Client) DeleteAccessApplication(ctx context.Context, id string) error {
	return c.accessCall(ctx, http.MethodDelete, c.accessPath("apps", id), nil, nil, "cannot delete Access application")
}

// policyBody sends empty rule lists as [], which Cloudflare takes as "none".
func policyBody(in AccessPolicyInput) AccessPolicyInput {
	in.Include, in.Exclude, in.Require = nonNil(in.Include), nonNil(in.Exclude), nonNil(in.Require)
	return in
}

func appBody(in AccessApplicationInput) AccessApplicationInput {
	in.Type = "self_hosted"
	in.AllowedIdPs = nonNil(in.AllowedIdPs)
	in.Policies = nonNil(in.Policies)
	return in
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// accessPages lists an Access collection page after page until a short one.
func accessPages[T any](ctx context.Context, c *Client, path string) ([]T, error) {
	return pages[T](c.pageSize, func(page int) ([]json.RawMessage, string, error) {
		var res struct {
			Result     []json.RawMessage `json:"result"`
			ResultInfo json.RawMessage   `json:"result_info"`
		}
		// Every Access list takes the same page and per_page query.
		q := zero_trust.AccessPolicyListParams{Page: cf.F(int64(page)), PerPage: cf.F(int64(c.pageSize))}
		if err := c.sdk.Get(ctx, path, q, &res); err != nil {
			return nil, "", err
		}
		return res.Result, string(res.ResultInfo), nil
	}, func(r json.RawMessage) string { return string(r) })
}
