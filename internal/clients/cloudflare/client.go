// Package cloudflare is the provider's only door to the Cloudflare API. It
// wraps cloudflare-go behind narrow interfaces that controllers use.
package cloudflare

import (
	"context"
	"net/http"
	"time"

	cf "github.com/cloudflare/cloudflare-go/v7"
	"github.com/cloudflare/cloudflare-go/v7/option"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients"
)

// Client is a Cloudflare API client bound to one account.
type Client struct {
	AccountID string
	sdk       *cf.Client
}

// SDK exposes the underlying SDK client to this package's area wrappers.
func (c *Client) SDK() *cf.Client { return c.sdk }

// New builds a client from resolved credentials. The token is passed
// explicitly and the SDK's own environment-derived credentials are dropped, so
// a stray CLOUDFLARE_API_KEY in the provider's environment can never be sent.
func New(cfg clients.Config, hc *http.Client) *Client {
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	sdk := cf.NewClient(
		option.WithBaseURL(cfg.Endpoint),
		option.WithHTTPClient(hc),
		option.WithAPIToken(cfg.Token),
		option.WithHeaderDel("X-Auth-Key"),
		option.WithHeaderDel("X-Auth-Email"),
		option.WithHeaderDel("X-Auth-User-Service-Key"),
		// Retries are the managed reconciler's job; the SDK retrying inside a
		// reconcile would spend the shared rate limit blindly.
		option.WithMaxRetries(0),
	)
	return &Client{AccountID: cfg.AccountID, sdk: sdk}
}

// Connect turns a managed resource's providerConfigRef into a ready client:
// it records the usage, resolves the credentials and builds the client.
func Connect(ctx context.Context, kube client.Client, usage *resource.ProviderConfigUsageTracker, mg resource.ModernManaged) (*Client, error) {
	cfg, err := clients.ConfigFor(ctx, kube, usage, mg)
	if err != nil {
		return nil, err
	}
	return New(*cfg, nil), nil
}
