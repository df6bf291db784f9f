package clients

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/common"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/networks"
)

// notAllowedPrefix starts every NotAllowedError message.
const notAllowedPrefix = "not allowed: "

// NotAllowedError says a provider config's guardrails refuse what a managed
// resource asks for.
type NotAllowedError struct {
	// Source names the config.
	Source string
	// What is refused ("namespace", "zone", "hostname"), and its value.
	What, Value string
	// Field is the config field that refuses it; Allowed its entries.
	Field   string
	Allowed []string
}

func (e *NotAllowedError) Error() string {
	return fmt.Sprintf(notAllowedPrefix+"%s does not allow %s %q: %s allows only %s. Nothing was written to Cloudflare; use an allowed %s, or ask the config's owner to allow this one",
		e.Source, e.What, e.Value, e.Field, strings.Join(e.Allowed, ", "), e.What)
}

// ConditionReason of a guardrail refusal: NotAllowed.
func (e *NotAllowedError) ConditionReason() xpv2.ConditionReason { return common.ReasonNotAllowed }

func normalizeDomain(s string) string {
	return strings.TrimSuffix(strings.ToLower(strings.TrimSpace(s)), ".")
}

// CheckNamespace refuses a namespace the config does not serve.
func (c Config) CheckNamespace(ns string) error {
	if len(c.Allow.Namespaces) == 0 || slices.Contains(c.Allow.Namespaces, ns) {
		return nil
	}
	return &NotAllowedError{Source: c.Source, What: "namespace", Value: ns, Field: "spec.allow.namespaces", Allowed: c.Allow.Namespaces}
}

// CheckZone refuses a DNS zone the config does not allow.
func (c Config) CheckZone(zone string) error {
	z := normalizeDomain(zone)
	for _, a := range c.Allow.Zones {
		if normalizeDomain(a) == z {
			return nil
		}
	}
	if len(c.Allow.Zones) == 0 {
		return nil
	}
	return &NotAllowedError{Source: c.Source, What: "zone", Value: zone, Field: "spec.allow.zones", Allowed: c.Allow.Zones}
}

// CheckHostname refuses a hostname outside every allowed suffix. A suffix
// allows itself and the names below it, at a label boundary.
func (c Config) CheckHostname(hostname string) error {
	if len(c.Allow.HostnameSuffixes) == 0 {
		return nil
	}
	h := normalizeDomain(hostname)
	for _, a := range c.Allow.HostnameSuffixes {
		s := strings.TrimPrefix(normalizeDomain(a), "*.")
		if s != "" && (h == s || strings.HasSuffix(h, "."+s)) {
			return nil
		}
	}
	return &NotAllowedError{Source: c.Source, What: "hostname", Value: hostname, Field: "spec.allow.hostnameSuffixes", Allowed: c.Allow.HostnameSuffixes}
}

// NetworkNotAllowedError says a provider config without allowed networks
// refuses a NetworkRoute's network: too wide alone, or beyond what its
// namespace's routes may reach together (networks.Within).
type NetworkNotAllowedError struct {
	// Source names the config.
	Source string
	*networks.Refusal
}

// ConditionReason of a refused network: NotAllowed.
func (e *NetworkNotAllowedError) ConditionReason() xpv2.ConditionReason {
	return common.ReasonNotAllowed
}

func (e *NetworkNotAllowedError) Error() string {
	return fmt.Sprintf(notAllowedPrefix+"%s does not allow %s. With spec.allow.networks empty, %s. Nothing was written to Cloudflare; route narrower networks, or ask the config's owner to list a network containing this one in spec.allow.networks (the only way to route more)",
		e.Source, e.Refusal.Error(), networks.Rule)
}

// CheckNetwork refuses a NetworkRoute's network outside every allowed
// CIDR; with none listed, one wider than one route may be
// (networks.Check), which only an entry containing it allows.
func (c Config) CheckNetwork(network string) error {
	n, err := netip.ParsePrefix(strings.TrimSpace(network))
	if err != nil {
		// The managed resource's own validation says what is wrong.
		return nil
	}
	n = n.Masked()
	allowed := c.Allow.Networks
	if len(allowed) == 0 {
		if r := networks.Check(network); r != nil {
			return &NetworkNotAllowedError{Source: c.Source, Refusal: r}
		}
		return nil
	}
	for _, a := range allowed {
		p, err := netip.ParsePrefix(strings.TrimSpace(a))
		if err != nil {
			continue
		}
		p = p.Masked()
		if p.Addr().Is4() == n.Addr().Is4() && p.Bits() <= n.Bits() && p.Contains(n.Addr()) {
			return nil
		}
	}
	return &NotAllowedError{Source: c.Source, What: "network", Value: network, Field: "spec.allow.networks", Allowed: allowed}
}

// CheckNamespaceNetworks refuses mine, with no allowed networks listed,
// when the namespace's routes older than it (others) already reach so
// much of its family that it would go beyond what they may reach together
// (networks.Within). With networks listed, each route is judged by them
// alone (CheckNetwork).
func (c Config) CheckNamespaceNetworks(mine networks.Route, others []networks.Route) error {
	if len(c.Allow.Networks) != 0 {
		return nil
	}
	if r := networks.Within(mine, others); r != nil {
		return &NetworkNotAllowedError{Source: c.Source, Refusal: r}
	}
	return nil
}

// CheckDefaultVirtualNetwork refuses to make a virtual network the
// account's default unless the config allows it: by default a
// ClusterProviderConfig does and a ProviderConfig does not.
func (c Config) CheckDefaultVirtualNetwork(name string) error {
	allowed := !c.Namespaced
	if c.Allow.DefaultVirtualNetwork != nil {
		allowed = *c.Allow.DefaultVirtualNetwork
	}
	if allowed {
		return nil
	}
	return &NotAllowedError{Source: c.Source, What: "default virtual network", Value: name, Field: "spec.allow.defaultVirtualNetwork", Allowed: []string{"false (only a ClusterProviderConfig allows it unless set)"}}
}
