// Package cidr holds a private-network route as Cloudflare stores it and
// the prefix arithmetic that decides which routes overlap. It is a package
// of its own, without the Cloudflare SDK, so that what fuzzes it builds in
// seconds rather than minutes (fuzzing rebuilds every dependency with
// coverage instrumentation).
package cidr

import (
	"net/netip"
	"time"
)

// Route routes a private network (CIDR) through a tunnel.
type Route struct {
	ID               string `json:"id"`
	Network          string `json:"network"`
	TunnelID         string `json:"tunnel_id"`
	VirtualNetworkID string `json:"virtual_network_id"`
	Comment          string `json:"comment"`
	// TunnelName and VirtualNetworkName are in list results only.
	TunnelName         string     `json:"tunnel_name"`
	VirtualNetworkName string     `json:"virtual_network_name"`
	CreatedAt          time.Time  `json:"created_at"`
	DeletedAt          *time.Time `json:"deleted_at"`
}

// Deleted reports whether the route was (soft-)deleted.
func (r *Route) Deleted() bool { return r.DeletedAt != nil && !r.DeletedAt.IsZero() }

// Contains reports whether outer contains inner (every address of inner is
// in outer). Prefixes of different families never contain each other.
func Contains(outer, inner netip.Prefix) bool {
	return outer.Addr().Is4() == inner.Addr().Is4() && outer.Bits() <= inner.Bits() && outer.Masked().Contains(inner.Addr())
}

// Normalize is the form Cloudflare stores a route's network in: the masked
// prefix ("10.1.2.3/16" is "10.1.0.0/16"). A value that is not a CIDR is
// returned as it is.
func Normalize(n string) string {
	p, err := netip.ParsePrefix(n)
	if err != nil {
		return n
	}
	return p.Masked().String()
}

// Overlapping returns the live routes whose networks share an address with
// network: the same network, networks inside it, networks containing it.
func Overlapping(network string, rs []Route) []Route {
	n, err := netip.ParsePrefix(network)
	if err != nil {
		return nil
	}
	var out []Route
	for _, r := range rs {
		p, err := netip.ParsePrefix(r.Network)
		if err != nil || r.Deleted() {
			continue
		}
		if Contains(p, n) || Contains(n, p) {
			out = append(out, r)
		}
	}
	return out
}
