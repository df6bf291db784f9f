package networks

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"
)

func TestReach(t *testing.T) {
	cases := map[string]struct {
		network, want string
		via           bool
	}{
		"IPv4":                    {network: "10.1.2.3/16", want: "10.1.0.0/16"},
		"IPv6":                    {network: "fd00:1::/48", want: "fd00:1::/48"},
		"WellKnownNAT64Whole":     {network: "64:ff9b::/96", want: "0.0.0.0/0", via: true},
		"WellKnownNAT64Half":      {network: "64:ff9b::8000:0/97", want: "128.0.0.0/1", via: true},
		"WellKnownNAT64OneHost":   {network: "64:ff9b::a00:1/128", want: "10.0.0.1/32", via: true},
		"AroundWellKnownNAT64":    {network: "64:ff9b::/32", want: "0.0.0.0/0", via: true},
		"LocalUseNAT64":           {network: "64:ff9b:1::/48", want: "0.0.0.0/0", via: true},
		"LocalUseNAT64SomeNinety": {network: "64:ff9b:1:2:3::/96", want: "0.0.0.0/0", via: true},
		"LocalUseNAT64Narrow":     {network: "64:ff9b:1::0a00:0/104", want: "10.0.0.0/8", via: true},
		"IPv4Mapped":              {network: "::ffff:0.0.0.0/97", want: "0.0.0.0/1", via: true},
		"HalfOfIPv6HoldsNAT64":    {network: "::/1", want: "0.0.0.0/0", via: true},
		"OtherHalfOfIPv6":         {network: "8000::/1", want: "8000::/1"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, via, ok := Reach(tc.network)
			if !ok || got.String() != tc.want || via != tc.via {
				t.Errorf("Reach(%q) = %s, via IPv6 %v, ok %v; want %s, %v", tc.network, got, via, ok, tc.want, tc.via)
			}
		})
	}
	if _, _, ok := Reach("nonsense"); ok {
		t.Error("Reach(nonsense) is ok")
	}
}

func TestCheck(t *testing.T) {
	cases := map[string]struct {
		network string
		refused bool
	}{
		"EveryIPv4":          {network: "0.0.0.0/0", refused: true},
		"LowerHalfOfIPv4":    {network: "0.0.0.0/1", refused: true},
		"UpperHalfOfIPv4":    {network: "128.0.0.0/1", refused: true},
		"A/7":                {network: "10.0.0.0/7", refused: true},
		"A/8":                {network: "10.0.0.0/8"},
		"AHost":              {network: "10.1.2.3/32"},
		"EveryIPv6":          {network: "::/0", refused: true},
		"LowerHalfOfIPv6":    {network: "::/1", refused: true},
		"UpperHalfOfIPv6":    {network: "8000::/1", refused: true},
		"ULAWhole":           {network: "fc00::/7", refused: true},
		"A/15OfIPv6":         {network: "fd00::/15", refused: true},
		"A/16OfIPv6":         {network: "fd00::/16"},
		"NAT64OfAllIPv4":     {network: "64:ff9b::/96", refused: true},
		"NAT64OfHalfIPv4":    {network: "64:ff9b::/97", refused: true},
		"NAT64OfA/8":         {network: "64:ff9b::a00:0/104"},
		"LocalUseNAT64":      {network: "64:ff9b:1::/48", refused: true},
		"IPv4MappedAll":      {network: "::ffff:0:0/96", refused: true},
		"IPv4MappedHost":     {network: "::ffff:10.0.0.1/128"},
		"NotACIDRIsLeftToIt": {network: "nonsense"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := Check(tc.network)
			if (r != nil) != tc.refused {
				t.Fatalf("Check(%q) = %v, want refused %v", tc.network, r, tc.refused)
			}
			if r != nil && !strings.Contains(r.Error(), tc.network) {
				t.Errorf("refusal %q does not name the network", r.Error())
			}

		})
	}
}

// A wide IPv6 route holding the NAT64 prefix is told of its IPv6 width.
func TestARefusalSaysItsOwnFamilyFirst(t *testing.T) {
	if r := Check("::/1"); r == nil || !strings.Contains(r.Error(), "at most a /16 of IPv6, and this is a /1") {
		t.Errorf("Check(::/1) = %v", r)
	}
	if r := Check("64:ff9b::/96"); r == nil || !strings.Contains(r.Error(), "through NAT64") || !strings.Contains(r.Error(), "0.0.0.0/0") {
		t.Errorf("Check(64:ff9b::/96) = %v", r)
	}
}

func TestWithin(t *testing.T) {
	at := func(min int) time.Time { return time.Date(2026, 1, 1, 0, min, 0, 0, time.UTC) }
	r := func(name, network string, min int) Route {
		return Route{Name: name, Network: network, Created: at(min)}
	}
	cases := map[string]struct {
		mine     Route
		others   []Route
		refused  bool
		together bool
	}{
		"Alone":                    {mine: r("a", "10.0.0.0/8", 0)},
		"TooWideAlone":             {mine: r("a", "0.0.0.0/1", 0), refused: true},
		"PrivateRangesTogether":    {mine: r("d", "100.64.0.0/10", 3), others: []Route{r("a", "10.0.0.0/8", 0), r("b", "172.16.0.0/12", 1), r("c", "192.168.0.0/16", 2)}},
		"ThirdSlashEight":          {mine: r("c", "12.0.0.0/8", 2), others: []Route{r("a", "10.0.0.0/8", 0), r("b", "11.0.0.0/8", 1)}, refused: true, together: true},
		"OlderKeepsItsShare":       {mine: r("a", "10.0.0.0/8", 0), others: []Route{r("b", "11.0.0.0/8", 1), r("c", "12.0.0.0/8", 2)}},
		"TiesGoByName":             {mine: r("b", "11.0.0.0/8", 0), others: []Route{r("a", "10.0.0.0/8", 0), r("c", "12.0.0.0/8", 0)}},
		"TiesGoByNameLast":         {mine: r("c", "12.0.0.0/8", 0), others: []Route{r("a", "10.0.0.0/8", 0), r("b", "11.0.0.0/8", 0)}, refused: true, together: true},
		"ARefusedOlderHoldsNone":   {mine: r("b", "10.0.0.0/8", 1), others: []Route{r("a", "0.0.0.0/1", 0)}},
		"NAT64CountsAsIPv4":        {mine: r("c", "64:ff9b::c00:0/104", 2), others: []Route{r("a", "10.0.0.0/8", 0), r("b", "11.0.0.0/8", 1)}, refused: true, together: true},
		"IPv6HasItsOwnBudget":      {mine: r("c", "fd00::/16", 2), others: []Route{r("a", "10.0.0.0/8", 0), r("b", "11.0.0.0/8", 1)}},
		"ManyHostsFit":             {mine: r("z", "10.9.9.9/32", 9), others: []Route{r("a", "10.0.0.0/8", 0), r("b", "11.0.0.0/9", 1), r("h", "12.0.0.1/32", 2)}},
		"ItselfIsNotCounted":       {mine: r("a", "10.0.0.0/8", 0), others: []Route{r("a", "10.0.0.0/8", 0), r("b", "11.0.0.0/8", 1)}},
		"NonsenseOthersAreIgnored": {mine: r("b", "10.0.0.0/8", 1), others: []Route{r("a", "nonsense", 0)}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Within(tc.mine, tc.others)
			if (got != nil) != tc.refused {
				t.Fatalf("Within(%v) = %v, want refused %v", tc.mine, got, tc.refused)
			}
			if got != nil && got.Together != tc.together {
				t.Errorf("refusal %q: together %v, want %v", got.Error(), got.Together, tc.together)
			}
		})
	}
}

// TestHalvesNeverRouteEverything: however everything is cut, the pieces
// one namespace may keep together never reach more than the budget.
func TestHalvesNeverRouteEverything(t *testing.T) {
	for _, pieces := range [][]string{
		{"0.0.0.0/1", "128.0.0.0/1"},
		{"::/1", "8000::/1"},
		{"64:ff9b::/97", "64:ff9b::8000:0/97"},
	} {
		var kept []Route
		for i, n := range pieces {
			mine := Route{Name: string(rune('a' + i)), Network: n}
			if Within(mine, kept) == nil {
				kept = append(kept, mine)
			}
		}
		if len(kept) != 0 {
			t.Errorf("pieces %v: kept %v", pieces, kept)
		}
	}
	var kept []Route
	for i := range 256 {
		mine := Route{Name: fmt.Sprint(i), Network: netip.PrefixFrom(netip.AddrFrom4([4]byte{byte(i)}), 8).String(), Created: time.Unix(int64(i), 0)}
		if Within(mine, kept) == nil {
			kept = append(kept, mine)
		}
	}
	if len(kept) != routesPerBudget {
		t.Errorf("every /8 asked for in turn: kept %d, want %d", len(kept), routesPerBudget)
	}
}
