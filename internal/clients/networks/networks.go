// Package networks bounds what a namespace's NetworkRoutes may route when
// their provider config lists no allowed networks. A route sends every WARP
// client's traffic for its network to one tunnel, so the default must bound
// the share of the address space a tenant takes, not one spelling of
// "everything": halves, quarters and the NAT64 image of IPv4 take it too.
// It is a package of its own, without the Cloudflare SDK, so that its fuzz
// target builds in seconds.
package networks

import (
	"cmp"
	"fmt"
	"math/big"
	"net/netip"
	"slices"
	"strings"
	"time"
)

// The widest network one route may have, per family: a /8 of IPv4 (all of
// 10.0.0.0/8 is a private network a tenant may well route) and a /16 of
// IPv6 (fd00::/8 and wider take whole address plans of everyone's).
const (
	WidestIPv4 = 8
	WidestIPv6 = 16
)

// routesPerBudget is how many of the widest routes a namespace's routes
// may add up to, per family: two /8s of IPv4 hold 10.0.0.0/8,
// 172.16.0.0/12, 192.168.0.0/16 and 100.64.0.0/10 together.
const routesPerBudget = 2

// translated are the IPv6 prefixes whose addresses stand for IPv4 ones: a
// route there reaches IPv4 hosts through a translator (NAT64, RFC 6052 and
// RFC 8215) or names them as IPv4-mapped addresses.
var translated = []netip.Prefix{
	netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
	netip.MustParsePrefix("::ffff:0:0/96"),
}

// translatedBits is the length of the prefix an IPv4 address is appended
// to in translated space; a route that holds a whole such prefix reaches
// every IPv4 address.
const translatedBits = 96

// Reach is the network a route reaches: the route's own, or for a route in
// NAT64 or IPv4-mapped space the IPv4 network it stands for (a route that
// holds a whole /96 there reaches 0.0.0.0/0). Ok is false for a network
// that is not a CIDR.
func Reach(network string) (reach netip.Prefix, viaIPv6 bool, ok bool) {
	p, err := netip.ParsePrefix(strings.TrimSpace(network))
	if err != nil {
		return netip.Prefix{}, false, false
	}
	p = p.Masked()
	if p.Addr().Is4() {
		return p, false, true
	}
	for _, t := range translated {
		if !overlaps(p, t) {
			continue
		}
		if p.Bits() <= translatedBits {
			return netip.PrefixFrom(netip.IPv4Unspecified(), 0), true, true
		}
		a := p.Addr().As16()
		return netip.PrefixFrom(netip.AddrFrom4([4]byte(a[12:])), p.Bits()-translatedBits), true, true
	}
	return p, false, true
}

func overlaps(a, b netip.Prefix) bool {
	return a.Addr().BitLen() == b.Addr().BitLen() && (a.Contains(b.Addr()) || b.Contains(a.Addr()))
}

// widest is the shortest prefix length one route may reach in p's family.
func widest(p netip.Prefix) int {
	if p.Addr().Is4() {
		return WidestIPv4
	}
	return WidestIPv6
}

func family(p netip.Prefix) string {
	if p.Addr().Is4() {
		return "IPv4"
	}
	return "IPv6"
}

// size is how many addresses p holds.
func size(p netip.Prefix) *big.Int {
	return new(big.Int).Lsh(big.NewInt(1), uint(p.Addr().BitLen()-p.Bits()))
}

// Budget is how many addresses of p's family one namespace's routes may
// reach together.
func Budget(p netip.Prefix) *big.Int {
	w := netip.PrefixFrom(p.Addr(), widest(p))
	return new(big.Int).Mul(size(w), big.NewInt(routesPerBudget))
}

// A Refusal says why a network may not be routed without an allow list.
type Refusal struct {
	// Network as the route names it; Reach what it reaches (its IPv4
	// image, ViaIPv6, for a NAT64 or IPv4-mapped route).
	Network string
	Reach   netip.Prefix
	ViaIPv6 bool
	// Together: refused for what the namespace's older routes already
	// reach (Routed, of the family's Budget), not for its own width.
	Together bool
	Routed   *big.Int
}

func (r *Refusal) Error() string {
	f := family(r.Reach)
	what := fmt.Sprintf("network %s", r.Network)
	if r.ViaIPv6 {
		what = fmt.Sprintf("network %s (through NAT64 or as IPv4-mapped addresses it reaches IPv4 %s)", r.Network, r.Reach)
	}
	if !r.Together {
		return fmt.Sprintf("%s: one NetworkRoute may route at most a /%d of %s, and this is a /%d",
			what, widest(r.Reach), f, r.Reach.Bits())
	}
	return fmt.Sprintf("%s: this namespace's NetworkRoutes may route at most %s %s addresses together (two /%d), and its older routes already route %s, to which this one would add %s",
		what, Budget(r.Reach), f, widest(r.Reach), r.Routed, size(r.Reach))
}

// Rule says the default a refusal applies (with no allow list), for a
// message.
const Rule = "one NetworkRoute may route at most a /8 of IPv4 or a /16 of IPv6, a namespace's routes together at most two of those per family, and a NAT64 or IPv4-mapped route counts as the IPv4 addresses it reaches"

// Check refuses a network wider than one route may be. A network that is
// not a CIDR is left to the resource's own validation.
func Check(network string) *Refusal {
	// An IPv6 route too wide of its own is told so in IPv6 terms, even
	// when it holds the NAT64 prefixes too (::/1).
	if own, err := netip.ParsePrefix(strings.TrimSpace(network)); err == nil && !own.Addr().Is4() && own.Bits() < WidestIPv6 {
		return &Refusal{Network: network, Reach: own.Masked()}
	}
	p, via, ok := Reach(network)
	if !ok || p.Bits() >= widest(p) {
		return nil
	}
	return &Refusal{Network: network, Reach: p, ViaIPv6: via}
}

// Route is one of a namespace's NetworkRoutes, for Within.
type Route struct {
	Name    string
	Network string
	Created time.Time
}

// older orders routes oldest first, by name on ties: the order in which
// they hold their share, so a new route never takes an older one's.
func older(a, b Route) int {
	if c := a.Created.Compare(b.Created); c != 0 {
		return c
	}
	return cmp.Compare(a.Name, b.Name)
}

// Within refuses mine if it is wider than one route may be, or if the
// namespace's routes older than it (others; mine among them is skipped)
// already reach so much of its family that it would go beyond the
// budget. An older route that is itself refused holds nothing.
func Within(mine Route, others []Route) *Refusal {
	if r := Check(mine.Network); r != nil {
		return r
	}
	p, via, ok := Reach(mine.Network)
	if !ok {
		return nil
	}
	before := slices.SortedFunc(slices.Values(others), older)
	routed := new(big.Int)
	for _, o := range before {
		if o.Name == mine.Name || older(o, mine) >= 0 {
			continue
		}
		q, _, ok := Reach(o.Network)
		if !ok || q.Addr().Is4() != p.Addr().Is4() || Check(o.Network) != nil {
			continue
		}
		if next := new(big.Int).Add(routed, size(q)); next.Cmp(Budget(q)) <= 0 {
			routed = next
		}
	}
	if new(big.Int).Add(routed, size(p)).Cmp(Budget(p)) > 0 {
		return &Refusal{Network: mine.Network, Reach: p, ViaIPv6: via, Together: true, Routed: routed}
	}
	return nil
}
