package gatewayapi

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

func hostnames(hs ...string) []gwv1.Hostname {
	var out []gwv1.Hostname
	for _, h := range hs {
		out = append(out, gwv1.Hostname(h))
	}
	return out
}

func TestEffectiveHostnames(t *testing.T) {
	cases := map[string]struct {
		route    []string
		listener string
		want     []Hostname
	}{
		"RouteHostnamesOnAListenerWithout":      {route: []string{"a.example.com", "B.example.com"}, want: []Hostname{{Name: "a.example.com"}, {Name: "b.example.com"}}},
		"TheListenersWhenTheRouteNamesNone":     {listener: "app.example.com", want: []Hostname{{Name: "app.example.com"}}},
		"TheListenersWildcardWhenTheRouteNames": {listener: "*.example.com", want: []Hostname{{Name: "*.example.com"}}},
		"NarrowedToTheListenersHostname":        {route: []string{"*.example.com"}, listener: "app.example.com", want: []Hostname{{Name: "app.example.com"}}},
		"ARouteHostnameUnderAWildcardListener":  {route: []string{"a.b.example.com"}, listener: "*.example.com", want: []Hostname{{Name: "a.b.example.com"}}},
		"TwoWildcardsGiveTheLonger":             {route: []string{"*.a.example.com"}, listener: "*.example.com", want: []Hostname{{Name: "*.a.example.com"}}},
		"TwoWildcardsTheOtherWayRound":          {route: []string{"*.example.com"}, listener: "*.a.example.com", want: []Hostname{{Name: "*.a.example.com"}}},
		"TheSameWildcard":                       {route: []string{"*.Example.com"}, listener: "*.example.com", want: []Hostname{{Name: "*.example.com"}}},
		"AWildcardRoute":                        {route: []string{"*.example.com"}, want: []Hostname{{Name: "*.example.com"}}},
		"NoMatchWithTheListenerIsIgnored":       {route: []string{"a.example.org"}, listener: "*.example.com"},
		"TheWildcardDoesNotMatchItsApex":        {route: []string{"example.com"}, listener: "*.example.com"},
		"AWildcardRouteDoesNotMatchItsApex":     {route: []string{"*.example.com"}, listener: "example.com"},
		"AWildcardIsASuffixNotASubstring":       {route: []string{"xexample.com"}, listener: "*.example.com"},
		"OnlyTheMatchingOnesOfARoute":           {route: []string{"non.matching.com", "*.nonmatchingwildcard.io", "very.specific.com"}, listener: "very.specific.com", want: []Hostname{{Name: "very.specific.com"}}},
		"ManyLevelsUnderAWildcardListener":      {route: []string{"wildcard.io", "foo.wildcard.io", "foo.bar.wildcard.io"}, listener: "*.wildcard.io", want: []Hostname{{Name: "foo.wildcard.io"}, {Name: "foo.bar.wildcard.io"}}},
		"NoHostnameAnywhere":                    {want: []Hostname{{Name: "*", Problem: "neither the route nor the listener names a hostname: it matches any hostname, which cannot be published; name the route's hostnames"}}},
		"DuplicatesOnce":                        {route: []string{"a.example.com", "A.example.com"}, want: []Hostname{{Name: "a.example.com"}}},
		"NotAHostname":                          {route: []string{"a..example.com"}, want: []Hostname{{Name: "a..example.com", Problem: "not a valid hostname"}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var l *gwv1.Hostname
			if tc.listener != "" {
				l = ptr.To(gwv1.Hostname(tc.listener))
			}
			if diff := cmp.Diff(tc.want, EffectiveHostnames(hostnames(tc.route...), l)); diff != "" {
				t.Errorf("EffectiveHostnames (-want +got):\n%s", diff)
			}
		})
	}
}
