package tunnel

import (
	"encoding/json"
	"reflect"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/mr"
)

// observe maps a tunnel to status, keeping the connection counts of the
// previous observation (they come from a separate call).
func observe(t *cloudflare.Tunnel, prev v1alpha1.TunnelObservation) v1alpha1.TunnelObservation {
	return v1alpha1.TunnelObservation{
		ID:                  t.ID,
		AccountTag:          t.AccountTag,
		Status:              t.Status,
		Connections:         prev.Connections,
		Connectors:          prev.Connectors,
		CreatedAt:           mr.Time(&t.CreatedAt),
		DeletedAt:           mr.Time(t.DeletedAt),
		ConnsActiveAt:       mr.Time(t.ConnsActiveAt),
		ConnsInactiveAt:     mr.Time(t.ConnsInactiveAt),
		RemoteConfigVersion: prev.RemoteConfigVersion,
	}
}

// connectionsMayHaveChanged says whether the connection count must be
// fetched: only when the tunnel's status or its active/inactive transition
// times moved, or it is connected and was never counted. That keeps a
// steady-state poll at one Cloudflare call.
func connectionsMayHaveChanged(prev, cur v1alpha1.TunnelObservation) bool {
	if prev.Status != cur.Status || !prev.ConnsActiveAt.Equal(cur.ConnsActiveAt) || !prev.ConnsInactiveAt.Equal(cur.ConnsInactiveAt) {
		return cur.Status != "inactive" || prev.Connectors != 0
	}
	return (cur.Status == "healthy" || cur.Status == "degraded") && prev.Connectors == 0
}

func countConnections(cs []cloudflare.Connector) (connectors, connections int) {
	for _, c := range cs {
		connections += len(c.Conns)
	}
	return len(cs), connections
}

// decodeConfig reads a remote configuration document into the API type,
// dropping fields this provider does not manage (such as the read-only
// warp-routing); an empty or null document is nil.
func decodeConfig(raw json.RawMessage) (*v1alpha1.TunnelConfig, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	c := &v1alpha1.TunnelConfig{}
	if err := json.Unmarshal(raw, c); err != nil {
		return nil, err
	}
	if len(c.Ingress) == 0 && c.OriginRequest == nil {
		return nil, nil
	}
	return c, nil
}

// ConfigDiff compares the desired and observed remote configuration and
// returns a readable diff, or "" when they are equal. Empty origin-request
// blocks equal absent ones, as Cloudflare may return either.
func ConfigDiff(want, got *v1alpha1.TunnelConfig) string {
	return cmp.Diff(normalizeConfig(want), normalizeConfig(got), cmpopts.EquateEmpty())
}

func normalizeConfig(c *v1alpha1.TunnelConfig) *v1alpha1.TunnelConfig {
	if c == nil {
		return nil
	}
	out := c.DeepCopy()
	empty := func(o *v1alpha1.OriginRequest) *v1alpha1.OriginRequest {
		if o == nil || reflect.ValueOf(*o).IsZero() {
			return nil
		}
		return o
	}
	out.OriginRequest = empty(out.OriginRequest)
	for i := range out.Ingress {
		out.Ingress[i].OriginRequest = empty(out.Ingress[i].OriginRequest)
	}
	return out
}
