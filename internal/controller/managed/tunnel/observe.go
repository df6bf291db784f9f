package tunnel

import (
	"encoding/json"
	"reflect"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/mr"
)

// observe maps a tunnel to status, keeping the connector observation and
// configuration version of the previous observation (they come from
// separate calls).
func observe(t *cloudflare.Tunnel, prev v1alpha1.TunnelObservation) v1alpha1.TunnelObservation {
	return v1alpha1.TunnelObservation{
		ID:                       t.ID,
		AccountTag:               t.AccountTag,
		Status:                   t.Status,
		Connections:              prev.Connections,
		Connectors:               prev.Connectors,
		ConnectorDetails:         prev.ConnectorDetails,
		ConnectorsObservedAt:     prev.ConnectorsObservedAt,
		ConnectorsOnLatestConfig: prev.ConnectorsOnLatestConfig,
		CreatedAt:                mr.Time(&t.CreatedAt),
		DeletedAt:                mr.Time(t.DeletedAt),
		ConnsActiveAt:            mr.Time(t.ConnsActiveAt),
		ConnsInactiveAt:          mr.Time(t.ConnsInactiveAt),
		RemoteConfigVersion:      prev.RemoteConfigVersion,
		TokenRotation:            prev.TokenRotation,
	}
}

// connectorsStale says whether Cloudflare's connector list must be read
// again. The tunnel's status comes with the account-wide tunnel listing, so
// it costs nothing; the list costs a call per tunnel. It is read when the
// status or the active/inactive transition times moved; while the tunnel
// serves, when it was never counted, while Cloudflare says degraded or a
// connector has not applied the current configuration (cur carries the
// version just read), and otherwise once every recountEvery: a connector
// lost while the tunnel stays healthy moves nothing else that Cloudflare
// reports.
func connectorsStale(prev, cur v1alpha1.TunnelObservation, now time.Time, recountEvery time.Duration) bool {
	if prev.Status != cur.Status || !prev.ConnsActiveAt.Equal(cur.ConnsActiveAt) || !prev.ConnsInactiveAt.Equal(cur.ConnsInactiveAt) {
		return cur.Status != "inactive" || prev.Connectors != 0
	}
	if cur.Status != "healthy" && cur.Status != "degraded" {
		return false
	}
	switch {
	case prev.ConnectorsObservedAt == nil || prev.Connectors == 0:
		return true
	case cur.Status == "degraded":
		return true
	case onLatestConfig(prev.ConnectorDetails, cur.RemoteConfigVersion) < prev.Connectors:
		return true
	default:
		return now.Sub(prev.ConnectorsObservedAt.Time) >= recountEvery
	}
}

// connectorObservations maps Cloudflare's connector list to status.
func connectorObservations(cs []cloudflare.Connector) []v1alpha1.ConnectorObservation {
	out := make([]v1alpha1.ConnectorObservation, 0, len(cs))
	for _, c := range cs {
		out = append(out, v1alpha1.ConnectorObservation{ID: c.ID, Version: c.Version, ConfigVersion: c.ConfigVersion, RunAt: mr.Time(&c.RunAt), Connections: len(c.Conns)})
	}
	return out
}

// countConnections counts the connectors that hold at least one edge
// connection (Cloudflare may still list one that lost them all) and their
// connections.
func countConnections(cs []v1alpha1.ConnectorObservation) (connectors, connections int) {
	for _, c := range cs {
		if c.Connections > 0 {
			connectors++
			connections += c.Connections
		}
	}
	return connectors, connections
}

// onLatestConfig counts the connected connectors that applied configuration
// version (or a later one); with no managed configuration (version 0)
// every connector is.
func onLatestConfig(cs []v1alpha1.ConnectorObservation, version int) int {
	n := 0
	for _, c := range cs {
		if c.Connections > 0 && c.ConfigVersion >= version {
			n++
		}
	}
	return n
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
