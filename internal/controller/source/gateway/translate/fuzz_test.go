package translate

import (
	"regexp"
	"strings"
	"testing"

	"k8s.io/utils/ptr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
)

// FuzzTranslate: whatever a route's hostnames and path say, the
// translation publishes only valid hostnames and expressions cloudflared
// compiles, writes a parent entry for every route naming the Gateway,
// never publishes a header or method match, never one hostname to both an
// HTTP/2 and an HTTP/1 origin, and every HTTP/2 origin is https (the only
// way cloudflared speaks HTTP/2 to an origin).
func FuzzTranslate(f *testing.F) {
	f.Add("a.example.com", "*.example.com", "PathPrefix", "/api", false, "", false)
	f.Add("*.example.com", "", "RegularExpression", "/v[0-9", false, "*.example.com", false)
	f.Add("A.Example.COM.", "a.example.com", "Exact", "/x", true, "a.example.com", true)
	f.Add("", "", "PathPrefix", "/", false, "g.example.com", false)
	f.Fuzz(func(t *testing.T, routeHost, listenerHost, pathType, pathValue string, header bool, grpcHost string, grpcMethod bool) {
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
		var grpcHosts []string
		if grpcHost != "" {
			grpcHosts = []string{grpcHost}
		}
		var matches []gwv1.GRPCRouteMatch
		if grpcMethod {
			matches = []gwv1.GRPCRouteMatch{{Method: &gwv1.GRPCMethodMatch{Service: ptr.To("pkg.S")}}}
		}
		res := Translate(Input{Gateway: gw, Services: services(service("apps", "web", 8080), service("apps", "grpc", 8443)),
			HTTPRoutes: []gwv1.HTTPRoute{httpRoute("apps", "r", 1, hosts, rule)},
			GRPCRoutes: []gwv1.GRPCRoute{grpcRoute("apps", "g", 2, grpcHosts, grpcRule(matches, grpcBackend("grpc", 8443)))}})
		if len(res.Routes) != 1 || len(res.Routes[0].Parents) != 1 || len(res.GRPCRoutes) != 1 || len(res.GRPCRoutes[0].Parents) != 1 {
			t.Fatalf("want one parent entry each, got %+v and %+v", res.Routes, res.GRPCRoutes)
		}
		for _, ph := range res.Published {
			checkPublished(t, ph, header, grpcMethod)
		}
	})
}

// checkPublished checks one PublicHostname the fuzzed input made.
func checkPublished(t *testing.T, ph *v1alpha1.PublicHostname, header, grpcMethod bool) {
	t.Helper()
	if h, problem := publish.Hostname(ph.Spec.Hostname); problem != "" || h != ph.Spec.Hostname {
		t.Errorf("published hostname %q: %s", ph.Spec.Hostname, problem)
	}
	http2 := ph.Spec.OriginRequest != nil && ptr.Deref(ph.Spec.OriginRequest.HTTP2Origin, false)
	origins := []v1alpha1.Origin{}
	if ph.Spec.Origin != nil {
		origins = append(origins, *ph.Spec.Origin)
	}
	for _, p := range ph.Spec.Paths {
		origins = append(origins, p.Origin)
		if p.PathType == v1alpha1.PathTypeRegularExpression {
			if _, err := regexp.Compile(p.Path); err != nil {
				t.Errorf("published expression %q: %v", p.Path, err)
			}
		}
	}
	for _, o := range origins {
		url := ptr.Deref(o.URL, "")
		if http2 != strings.HasPrefix(url, "https://grpc.") {
			t.Errorf("hostname %s: http2Origin %v with origin %s (a GRPCRoute's origin, and only it, is HTTP/2 over https)", ph.Spec.Hostname, http2, url)
		}
	}
	if header && !http2 {
		t.Errorf("a header match was published: %+v", ph.Spec)
	}
	if grpcMethod && http2 {
		t.Errorf("a method match was published: %+v", ph.Spec)
	}
}
