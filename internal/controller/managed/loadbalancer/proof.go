package loadbalancer

// Proof: a load balancer names pools of other installations (other
// clusters' providers) by their name, and lists one only when the pool
// proves it serves the load balancer's hostname. A name alone proves
// nothing: anyone with the account can make a pool of any name.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/loadbalancing/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare/zonename"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/ownership"
)

// PoolTunnels are the tunnels a pool's origins are (<tunnel ID>.cfargotunnel.com),
// whose configurations the proof reads.
func PoolTunnels(p cloudflare.Pool) []string {
	var ids []string
	for _, o := range p.Origins {
		if id, ok := strings.CutSuffix(strings.ToLower(o.Address), v1alpha1.TunnelOriginSuffix); ok && id != "" {
			ids = append(ids, id)
		}
	}
	return ids
}

// Unproven says why pool p does not prove it serves host, "" when it does.
// served says which of its tunnels' configurations have a rule for host
// (PoolTunnels; a tunnel missing from it does not). The proof, each part
// of which another's pool made by mistake or on purpose would lack:
//   - its description ends with this provider's ownership marker (of any
//     installation) and names host (v1alpha1.PoolDescription);
//   - it has origins, each a tunnel with host as its Host header, so each
//     sends the hostname's requests to a tunnel's rule for it;
//   - each of those tunnels' configuration has a rule for host.
func Unproven(host string, p cloudflare.Pool, served map[string]bool) string {
	user, mark, ok := ownership.Split(p.Description)
	if !ok || mark.Owner() == "" {
		return "its description carries no ownership marker of this provider"
	}
	if h, ok := v1alpha1.DescribedHostname(user); !ok || zonename.Normalize(h) != host {
		return fmt.Sprintf("its description does not name hostname %s", host)
	}
	if len(p.Origins) == 0 {
		return "it has no origins"
	}
	for _, o := range p.Origins {
		id, isTunnel := strings.CutSuffix(strings.ToLower(o.Address), v1alpha1.TunnelOriginSuffix)
		switch {
		case !isTunnel || id == "":
			return fmt.Sprintf("origin %q (%s) is not a tunnel", o.Name, o.Address)
		case zonename.Normalize(hostOf(o.Header)) != host:
			return fmt.Sprintf("origin %q does not send Host %s", o.Name, host)
		case !served[id]:
			return fmt.Sprintf("the configuration of tunnel %s (origin %q) has no rule for %s", id, o.Name, host)
		}
	}
	return ""
}

func hostOf(h map[string][]string) string {
	if len(h["Host"]) != 1 {
		return ""
	}
	return h["Host"][0]
}

// ServesHostname says whether a tunnel's remote configuration has a rule
// for host (an exact hostname rule; a wildcard does not prove a pool made
// for this very hostname).
func ServesHostname(config json.RawMessage, host string) bool {
	var doc struct {
		Ingress []struct {
			Hostname string `json:"hostname"`
		} `json:"ingress"`
	}
	if len(config) == 0 || json.Unmarshal(config, &doc) != nil {
		return false
	}
	for _, r := range doc.Ingress {
		if r.Hostname != "" && zonename.Normalize(r.Hostname) == host {
			return true
		}
	}
	return false
}

// NamedPools is how the pools a load balancer names by name resolve.
type NamedPools struct {
	// Default are the proven pools' IDs, in the order named.
	Default []string
	// Fallback is the fallback pool's ID: the one named if proven, else
	// the last proven default pool.
	Fallback string
	// Unproven says, per pool name, why it is not listed.
	Unproven []string
}

// ResolveNames resolves names (and fallback, "" for the last) against the
// account's pools, each with its proof (why, from Unproven).
func ResolveNames(names []string, fallback string, pools []cloudflare.Pool, why func(cloudflare.Pool) string) NamedPools {
	var out NamedPools
	byName := map[string]cloudflare.Pool{}
	for _, p := range pools {
		byName[p.Name] = p
	}
	proven := map[string]string{}
	for _, n := range names {
		p, ok := byName[n]
		if !ok {
			out.Unproven = append(out.Unproven, fmt.Sprintf("pool %q: no pool of that name in the account", n))
			continue
		}
		if w := why(p); w != "" {
			out.Unproven = append(out.Unproven, fmt.Sprintf("pool %q (%s): %s", n, p.ID, w))
			continue
		}
		proven[n] = p.ID
		out.Default = append(out.Default, p.ID)
	}
	switch id, ok := proven[fallback]; {
	case ok:
		out.Fallback = id
	case len(out.Default) > 0:
		out.Fallback = out.Default[len(out.Default)-1]
	}
	return out
}

// params are the parameters to write: the spec's, with the pools poolNames
// names resolved to the IDs of those proven now (and PoolsProven set to
// say which are not). The spec itself is left as it is: the IDs are
// decided again at every observation, so a pool that loses its proof
// leaves the load balancer.
func (e *external) params(ctx context.Context, cr *v1alpha1.LoadBalancer) (v1alpha1.LoadBalancerParameters, error) {
	p := cr.Spec.ForProvider
	if len(p.PoolNames) == 0 {
		return p, nil
	}
	pools, err := e.api.ListPools(ctx)
	if err != nil {
		return p, errors.Wrap(err, "cannot list load balancer pools")
	}
	host := zonename.Normalize(p.Hostname)
	var failed error
	why := func(pool cloudflare.Pool) string {
		served := map[string]bool{}
		for _, id := range PoolTunnels(pool) {
			serves, err := tunnelServes(ctx, e.api, id, host)
			if err != nil {
				failed = err
			}
			served[id] = serves
		}
		return Unproven(host, pool, served)
	}
	named := ResolveNames(p.PoolNames, ptr.Deref(p.FallbackPoolName, ""), pools, why)
	if failed != nil {
		// Not knowing is not disproof: nothing is decided on it.
		return p, errors.Wrap(failed, "cannot read a named pool's tunnel configuration for its proof")
	}
	cr.SetConditions(ProvenCondition(named))
	p.DefaultPools, p.FallbackPool = named.Default, ptr.To(named.Fallback)
	return p, nil
}

// tunnelReader is what a pool's proof reads of its tunnels.
type tunnelReader interface {
	GetTunnelConfiguration(ctx context.Context, id string) (*cloudflare.TunnelConfiguration, error)
	GetTunnel(ctx context.Context, id string) (*cloudflare.Tunnel, error)
}

// tunnelServes says whether tunnel id's configuration has a rule for host.
// A tunnel that is gone serves nothing: not found, or deleted (Cloudflare
// keeps a deleted tunnel, with deleted_at, and refuses to read its
// configuration), so the pool of a cluster that deleted its tunnel loses
// its proof and can leave the load balancer. Any other error is not
// knowing, and is returned.
func tunnelServes(ctx context.Context, api tunnelReader, id, host string) (bool, error) {
	tc, err := api.GetTunnelConfiguration(ctx, id)
	switch {
	case err == nil:
		return ServesHostname(tc.Config, host), nil
	case cloudflare.IsNotFound(err):
		return false, nil
	}
	t, terr := api.GetTunnel(ctx, id)
	switch {
	case cloudflare.IsNotFound(terr):
		return false, nil
	case terr == nil && t.Deleted():
		return false, nil
	}
	return false, err
}

// ProvenCondition is PoolsProven for pools resolved by name.
func ProvenCondition(named NamedPools) xpv2.Condition {
	c := xpv2.Condition{Type: v1alpha1.TypePoolsProven, Status: corev1.ConditionTrue, Reason: v1alpha1.ReasonPoolsProven, LastTransitionTime: metav1.Now(),
		Message: fmt.Sprintf("every pool named is proven to serve the hostname: %d listed", len(named.Default))}
	if len(named.Unproven) > 0 {
		c.Status, c.Reason = corev1.ConditionFalse, v1alpha1.ReasonPoolNotProven
		c.Message = "not listed, without proof that it serves the hostname (never written either): " + strings.Join(named.Unproven, "; ")
	}
	return c
}
