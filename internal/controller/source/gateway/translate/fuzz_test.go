package translate

import (
	"regexp"
	"testing"

	"k8s.io/utils/ptr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
)

// FuzzTranslate: whatever a route's hostnames and path say, the
// translation publishes only valid hostnames and expressions cloudflared
// compiles, and writes a parent entry for every route naming the Gateway.
func FuzzTranslate(f *testing.F) {
	f.Add("a.example.com", "*.example.com", "PathPrefix", "/api", false)
	f.Add("*.example.com", "", "RegularExpression", "/v[0-9", false)
	f.Add("A.Example.COM.", "a.example.com", "Exact", "/x", true)
	f.Add("", "", "PathPrefix", "/", false)
	f.Fuzz(func(t *testing.T, routeHost, listenerHost, pathType, pathValue string, header bool) {
		gw := gateway(allRoutes)
		if listenerHost != "" {
			gw.Spec.Listeners[0].Hostname = ptr.To(gwv1.Hostname(listenerHost))
		}
		var hosts []string
		if routeHost != "" {
			hosts = []string{routeHost}
		}
		rule := pathRule(gwv1.PathMatchType(pathType), pathValue, backendRef("web", 8080))
		if header {
			rule.Matches[0].Headers = []gwv1.HTTPHeaderMatch{{Name: "x", Value: "y"}}
		}
		res := Translate(Input{Gateway: gw, Services: services(service("apps", "web", 8080)), HTTPRoutes: []gwv1.HTTPRoute{httpRoute("apps", "r", 1, hosts, rule)}})
		if len(res.Routes) != 1 || len(res.Routes[0].Parents) != 1 {
			t.Fatalf("want one parent entry, got %+v", res.Routes)
		}
		for _, ph := range res.Published {
			if h, problem := publish.Hostname(ph.Spec.Hostname); problem != "" || h != ph.Spec.Hostname {
				t.Errorf("published hostname %q: %s", ph.Spec.Hostname, problem)
			}
			for _, p := range ph.Spec.Paths {
				if p.PathType == "RegularExpression" {
					if _, err := regexp.Compile(p.Path); err != nil {
						t.Errorf("published expression %q: %v", p.Path, err)
					}
				}
			}
			if header {
				t.Errorf("a header match was published: %+v", ph.Spec)
			}
		}
	})
}
