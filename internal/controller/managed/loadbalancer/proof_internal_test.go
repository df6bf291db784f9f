package loadbalancer

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
)

// tunnels answers a pool's proof from a fixed configuration and tunnel, or
// their errors.
type tunnels struct {
	config    json.RawMessage
	configErr error
	tunnel    *cloudflare.Tunnel
	tunnelErr error
}

func (f tunnels) GetTunnelConfiguration(context.Context, string) (*cloudflare.TunnelConfiguration, error) {
	if f.configErr != nil {
		return nil, f.configErr
	}
	return &cloudflare.TunnelConfiguration{Config: f.config}, nil
}

func (f tunnels) GetTunnel(context.Context, string) (*cloudflare.Tunnel, error) {
	return f.tunnel, f.tunnelErr
}

func TestTunnelServes(t *testing.T) {
	const host = "app.example.com"
	rule := json.RawMessage(`{"ingress":[{"hostname":"app.example.com","service":"http://web:80"},{"service":"http_status:404"}]}`)
	deletedAt := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	refusedDeleted := &cloudflare.APIError{Operation: "cannot get tunnel configuration", Status: http.StatusBadRequest, Codes: []int{1002}}
	unavailable := &cloudflare.APIError{Operation: "cannot get tunnel configuration", Status: http.StatusServiceUnavailable}
	notFound := &cloudflare.APIError{Operation: "cannot get tunnel", Status: http.StatusNotFound}
	cases := map[string]struct {
		api     tunnels
		serves  bool
		wantErr error
	}{
		"a rule for the hostname":      {api: tunnels{config: rule}, serves: true},
		"no rule for the hostname":     {api: tunnels{config: json.RawMessage(`{"ingress":[{"service":"http_status:404"}]}`)}},
		"configuration not found":      {api: tunnels{configErr: notFound}},
		"a deleted tunnel serves none": {api: tunnels{configErr: refusedDeleted, tunnel: &cloudflare.Tunnel{ID: "t", DeletedAt: &deletedAt}}},
		"a tunnel not found":           {api: tunnels{configErr: refusedDeleted, tunnelErr: notFound}},
		"a live tunnel whose configuration cannot be read is not knowing": {api: tunnels{configErr: unavailable, tunnel: &cloudflare.Tunnel{ID: "t"}}, wantErr: unavailable},
		"neither can be read": {api: tunnels{configErr: unavailable, tunnelErr: unavailable}, wantErr: unavailable},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			serves, err := tunnelServes(context.Background(), tc.api, "t", host)
			if serves != tc.serves || !errors.Is(err, tc.wantErr) {
				t.Errorf("tunnelServes = %v, %v; want %v, %v", serves, err, tc.serves, tc.wantErr)
			}
		})
	}
}
