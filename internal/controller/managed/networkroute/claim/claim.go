// Package claim decides which of a virtual network's live routes a
// NetworkRoute may take as its own, and which forbid routing its network.
// It is a package of its own, without the Cloudflare SDK, so that its fuzz
// target builds in seconds (fuzzing rebuilds every dependency with coverage
// instrumentation).
package claim

import (
	"fmt"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare/cidr"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/ownership"
)

// ConflictError is a route this resource cannot prove it made, for its
// network or overlapping it, in its virtual network: it is never taken
// over, changed or deleted.
type ConflictError struct {
	Network string
	Other   cidr.Route
	// Exact: the other route is for the same network; else it overlaps.
	Exact bool
	// Owner says who the other route's comment says made it.
	Owner string
}

func (c *ConflictError) Error() string {
	o := c.Other
	if c.Exact {
		return fmt.Sprintf("conflict: network %s is already routed to tunnel %s (%s) by route %s, which was not created by this resource (%s); it is left alone. Delete that route, or set %s as this resource's crossplane.io/external-name to take it over on purpose",
			c.Network, o.TunnelName, o.TunnelID, o.ID, c.Owner, o.ID)
	}
	return fmt.Sprintf("conflict: network %s overlaps route %s for %s (tunnel %s, %s) in the same virtual network, which this provider did not create (%s); routing it would take addresses from that route, so nothing is created. Choose a network that does not overlap, use another virtual network, or remove that route",
		c.Network, o.ID, o.Network, o.TunnelName, o.TunnelID, c.Owner)
}

// Network decides, from the live routes of one virtual network, which route
// is me's for network and whether another route forbids routing it. A
// route for the same network is me's only with its ownership marker (and,
// existing, it is kept whatever overlaps it since); one without is a
// conflict. For a network not routed yet, a route that overlaps it is a
// conflict unless this installation made it: a more specific route takes
// addresses from a broader one, and a broader one would swallow someone
// else's. self, when set, is the route being moved onto network: it is
// skipped, and any other route for network is a conflict.
func Network(network, self string, rs []cidr.Route, me ownership.Identity) (*cidr.Route, error) {
	overlap := cidr.Overlapping(network, rs)
	for i := range overlap {
		r := overlap[i]
		if r.ID == self || cidr.Normalize(r.Network) != network {
			continue
		}
		if _, mark, _ := ownership.Split(r.Comment); self == "" && me.Made(mark) {
			return &r, nil
		}
		return nil, &ConflictError{Network: network, Other: r, Exact: true, Owner: me.Describe(r.Comment)}
	}
	for _, r := range overlap {
		if r.ID == self {
			continue
		}
		if _, mark, _ := ownership.Split(r.Comment); me.Owner == "" || mark.Owner() != me.Owner {
			return nil, &ConflictError{Network: network, Other: r, Owner: me.Describe(r.Comment)}
		}
	}
	return nil, nil
}

// Confirm decides, from the live routes of mine's virtual network listed
// after mine was created, whether mine may stay: a route for the same
// network, or one overlapping it that this installation did not make,
// created no later than mine, was there when mine was made — the check
// before the create missed it (a list a moment old, or a route made in the
// moment between). The older route wins; one made after mine is the one
// that overlaps.
func Confirm(mine cidr.Route, rs []cidr.Route, me ownership.Identity) error {
	network := cidr.Normalize(mine.Network)
	for _, r := range cidr.Overlapping(network, rs) {
		// Without mine's creation time, every other route was first.
		if r.ID == mine.ID || (!mine.CreatedAt.IsZero() && r.CreatedAt.After(mine.CreatedAt)) {
			continue
		}
		exact := cidr.Normalize(r.Network) == network
		if _, mark, _ := ownership.Split(r.Comment); exact || me.Owner == "" || mark.Owner() != me.Owner {
			return &ConflictError{Network: network, Other: r, Exact: exact, Owner: me.Describe(r.Comment)}
		}
	}
	return nil
}
