package networks

import (
	"fmt"
	"math/big"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// FuzzWithin: whatever networks a namespace asks for, in whatever order,
// the routes it may keep never reach more than a family's budget together
// (NAT64 and IPv4-mapped routes counted as the IPv4 they reach), none is
// wider than one route may be, and every refusal names its network.
func FuzzWithin(f *testing.F) {
	f.Add("0.0.0.0/1 128.0.0.0/1")
	f.Add("::/1 8000::/1")
	f.Add("64:ff9b::/96 10.0.0.0/8")
	f.Add("10.0.0.0/8 11.0.0.0/8 64:ff9b::c00:0/104 ::ffff:13.0.0.0/104")
	f.Add("64:ff9b:1::/48 fd00::/16 fd01::/16 fd02::/16")
	f.Add("1:0:000::/17 0001::/16 0001::/16")
	f.Fuzz(func(t *testing.T, list string) {
		var kept []Route
		routed := map[bool]*big.Int{true: new(big.Int), false: new(big.Int)}
		for i, n := range strings.Fields(list) {
			// Names are unique, as objects' names in a namespace are; the
			// same network may be asked for twice.
			mine := Route{Name: fmt.Sprint("route-", i), Network: n, Created: time.Unix(int64(i), 0)}
			if r := Within(mine, kept); r != nil {
				if !strings.Contains(r.Error(), n) {
					t.Fatalf("refusal %q does not name %q", r.Error(), n)
				}
				continue
			}
			p, _, ok := Reach(n)
			if !ok {
				continue
			}
			if p.Bits() < widest(p) {
				t.Fatalf("kept %s, which reaches %s", n, p)
			}
			fam := p.Addr().Is4()
			routed[fam].Add(routed[fam], size(p))
			if routed[fam].Cmp(Budget(p)) > 0 {
				t.Fatalf("kept %v and %s: %s addresses, over the budget %s", kept, n, routed[fam], Budget(p))
			}
			kept = append(kept, mine)
		}
		// What the budget counts in IPv4 is at most all of IPv4.
		if routed[true].Cmp(size(netip.MustParsePrefix("0.0.0.0/0"))) > 0 {
			t.Fatalf("kept more than every IPv4 address: %v", kept)
		}
	})
}
