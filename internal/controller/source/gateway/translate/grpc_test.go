package translate

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"
)

func grpcBackend(name string, port int32) gwv1.GRPCBackendRef {
	return gwv1.GRPCBackendRef{BackendRef: gwv1.BackendRef{BackendObjectReference: gwv1.BackendObjectReference{Name: gwv1.ObjectName(name), Port: ptr.To(gwv1.PortNumber(port))}}}
}

func grpcRule(matches []gwv1.GRPCRouteMatch, refs ...gwv1.GRPCBackendRef) gwv1.GRPCRouteRule {
	return gwv1.GRPCRouteRule{Matches: matches, BackendRefs: refs}
}

func grpcRoute(ns, name string, age int, hosts []string, rules ...gwv1.GRPCRouteRule) gwv1.GRPCRoute {
	r := gwv1.GRPCRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Generation: 1, CreationTimestamp: metav1.NewTime(time.Unix(1000-int64(age), 0))}}
	r.Spec.ParentRefs = []gwv1.ParentReference{{Name: "public", Namespace: ptr.To(gwv1.Namespace("edge"))}}
	for _, h := range hosts {
		r.Spec.Hostnames = append(r.Spec.Hostnames, gwv1.Hostname(h))
	}
	r.Spec.Rules = rules
	return r
}

func grpcGrant(from string, kind gwv1.Kind) gwv1beta1.ReferenceGrant {
	return gwv1beta1.ReferenceGrant{Spec: gwv1beta1.ReferenceGrantSpec{
		From: []gwv1beta1.ReferenceGrantFrom{{Group: gwv1.GroupName, Kind: kind, Namespace: gwv1.Namespace(from)}},
		To:   []gwv1beta1.ReferenceGrantTo{{Kind: "Service"}},
	}}
}

const grpcURL = "https://grpc.apps.svc.cluster.local:8443"

// TestGRPCRoutes: a GRPCRoute whose rules match every call publishes each
// hostname to its one backend over HTTP/2 (https, http2Origin); what
// cloudflared cannot do is said with UnsupportedValue and not published;
// cross-namespace backends need a grant from GRPCRoutes; an HTTPRoute and
// a GRPCRoute meeting on a hostname: the older is accepted.
func TestGRPCRoutes(t *testing.T) {
	accepted := verdict{"Accepted": "True/Accepted", "ResolvedRefs": "True/ResolvedRefs"}
	unsupported := verdict{"Accepted": "False/UnsupportedValue", "ResolvedRefs": "True/ResolvedRefs"}
	svcs := services(service("apps", "grpc", 8443), service("apps", "web", 8080))
	method := []gwv1.GRPCRouteMatch{{Method: &gwv1.GRPCMethodMatch{Service: ptr.To("pkg.Greeter"), Method: ptr.To("Hello")}}}
	header := []gwv1.GRPCRouteMatch{{Headers: []gwv1.GRPCHeaderMatch{{Name: "x-canary", Value: "1"}}}}
	h2c := service("apps", "grpc", 8443)
	h2c.Spec.Ports[0].AppProtocol = ptr.To("kubernetes.io/h2c")
	cross := grpcBackend("grpc", 8443)
	cross.Namespace = ptr.To(gwv1.Namespace("apps"))
	cases := map[string]struct {
		in        Input
		published []published
		http      map[string][]verdict
		grpc      map[string][]verdict
		attached  int32
	}{
		"MatchAllPublishesOverHTTP2": {
			in: Input{Gateway: gateway(allRoutes), Services: svcs, GRPCRoutes: []gwv1.GRPCRoute{
				grpcRoute("apps", "g", 1, []string{"g.example.com", "h.example.com"}, grpcRule(nil, grpcBackend("grpc", 8443))),
			}},
			published: []published{{Hostname: "g.example.com", Origin: grpcURL, HTTP2: true}, {Hostname: "h.example.com", Origin: grpcURL, HTTP2: true}},
			grpc:      map[string][]verdict{"apps/g": {accepted}},
			attached:  1,
		},
		"AnEmptyMatchMatchesEveryCall": {
			in: Input{Gateway: gateway(allRoutes), Services: svcs, GRPCRoutes: []gwv1.GRPCRoute{
				grpcRoute("apps", "g", 1, []string{"g.example.com"}, grpcRule([]gwv1.GRPCRouteMatch{{}}, grpcBackend("grpc", 8443))),
			}},
			published: []published{{Hostname: "g.example.com", Origin: grpcURL, HTTP2: true}},
			grpc:      map[string][]verdict{"apps/g": {accepted}},
			attached:  1,
		},
		"MethodMatchesAreNotPublished": {
			in: Input{Gateway: gateway(allRoutes), Services: svcs, GRPCRoutes: []gwv1.GRPCRoute{
				grpcRoute("apps", "g", 1, []string{"g.example.com"}, grpcRule(method, grpcBackend("grpc", 8443))),
			}},
			grpc:     map[string][]verdict{"apps/g": {unsupported}},
			attached: 1,
		},
		"AHeaderMatchIsLeftOutAndSaid": {
			in: Input{Gateway: gateway(allRoutes), Services: svcs, GRPCRoutes: []gwv1.GRPCRoute{
				grpcRoute("apps", "g", 1, []string{"g.example.com"}, grpcRule(header, grpcBackend("web", 8080)), grpcRule(nil, grpcBackend("grpc", 8443))),
			}},
			published: []published{{Hostname: "g.example.com", Origin: grpcURL, HTTP2: true}},
			grpc:      map[string][]verdict{"apps/g": {{"Accepted": "True/Accepted", "ResolvedRefs": "True/ResolvedRefs", "PartiallyInvalid": "True/UnsupportedValue"}}},
			attached:  1,
		},
		"FiltersAndWeightsAreNotPublished": {
			in: Input{Gateway: gateway(allRoutes), Services: svcs, GRPCRoutes: []gwv1.GRPCRoute{
				grpcRoute("apps", "g", 1, []string{"g.example.com"},
					gwv1.GRPCRouteRule{Filters: []gwv1.GRPCRouteFilter{{Type: gwv1.GRPCRouteFilterRequestHeaderModifier}}, BackendRefs: []gwv1.GRPCBackendRef{grpcBackend("grpc", 8443)}},
					grpcRule(nil, grpcBackend("grpc", 8443), grpcBackend("web", 8080))),
			}},
			grpc:     map[string][]verdict{"apps/g": {unsupported}},
			attached: 1,
		},
		"ACrossNamespaceBackendWithoutAGrantFromGRPCRoutes": {
			in: Input{Gateway: gateway(allRoutes), Services: svcs, Grants: map[string][]gwv1beta1.ReferenceGrant{"apps": {grpcGrant("team", KindHTTPRoute)}}, GRPCRoutes: []gwv1.GRPCRoute{
				grpcRoute("team", "g", 1, []string{"g.example.com"}, grpcRule(nil, cross)),
			}},
			grpc:     map[string][]verdict{"team/g": {{"Accepted": "True/Accepted", "ResolvedRefs": "False/RefNotPermitted"}}},
			attached: 1,
		},
		"ACrossNamespaceBackendWithAGrant": {
			in: Input{Gateway: gateway(allRoutes), Services: svcs, Grants: map[string][]gwv1beta1.ReferenceGrant{"apps": {grpcGrant("team", KindGRPCRoute)}}, GRPCRoutes: []gwv1.GRPCRoute{
				grpcRoute("team", "g", 1, []string{"g.example.com"}, grpcRule(nil, cross)),
			}},
			published: []published{{Hostname: "g.example.com", Origin: grpcURL, HTTP2: true}},
			grpc:      map[string][]verdict{"team/g": {accepted}},
			attached:  1,
		},
		"ACleartextHTTP2PortIsRefused": {
			in: Input{Gateway: gateway(allRoutes), Services: services(h2c), GRPCRoutes: []gwv1.GRPCRoute{
				grpcRoute("apps", "g", 1, []string{"g.example.com"}, grpcRule(nil, grpcBackend("grpc", 8443))),
			}},
			grpc:     map[string][]verdict{"apps/g": {{"Accepted": "True/Accepted", "ResolvedRefs": "False/UnsupportedProtocol"}}},
			attached: 1,
		},
		"AListenerOfHTTPRoutesOnly": {
			in: Input{Gateway: gateway(allRoutes, func(gw *gwv1.Gateway) {
				gw.Spec.Listeners[0].AllowedRoutes.Kinds = []gwv1.RouteGroupKind{{Kind: KindHTTPRoute}}
			}), Services: svcs, GRPCRoutes: []gwv1.GRPCRoute{
				grpcRoute("apps", "g", 1, []string{"g.example.com"}, grpcRule(nil, grpcBackend("grpc", 8443))),
			}},
			grpc: map[string][]verdict{"apps/g": {{"Accepted": "False/NotAllowedByListeners", "ResolvedRefs": "True/ResolvedRefs"}}},
		},
		"AnOlderHTTPRouteKeepsAHostname": {
			in: Input{Gateway: gateway(allRoutes), Services: svcs,
				HTTPRoutes: []gwv1.HTTPRoute{httpRoute("apps", "web", 2, []string{"a.example.com"}, pathRule(gwv1.PathMatchPathPrefix, "/", backendRef("web", 8080)))},
				GRPCRoutes: []gwv1.GRPCRoute{grpcRoute("apps", "g", 1, []string{"a.example.com", "g.example.com"}, grpcRule(nil, grpcBackend("grpc", 8443)))},
			},
			published: []published{{Hostname: "a.example.com", Origin: webURL}},
			http:      map[string][]verdict{"apps/web": {accepted}},
			grpc:      map[string][]verdict{"apps/g": {{"Accepted": "False/HostnameConflict", "ResolvedRefs": "True/ResolvedRefs"}}},
			attached:  2,
		},
		"AnOlderGRPCRouteKeepsAHostname": {
			in: Input{Gateway: gateway(allRoutes), Services: svcs,
				HTTPRoutes: []gwv1.HTTPRoute{httpRoute("apps", "web", 1, []string{"a.example.com"}, pathRule(gwv1.PathMatchPathPrefix, "/", backendRef("web", 8080)))},
				GRPCRoutes: []gwv1.GRPCRoute{grpcRoute("apps", "g", 2, []string{"a.example.com"}, grpcRule(nil, grpcBackend("grpc", 8443)))},
			},
			published: []published{{Hostname: "a.example.com", Origin: grpcURL, HTTP2: true}},
			http:      map[string][]verdict{"apps/web": {{"Accepted": "False/HostnameConflict", "ResolvedRefs": "True/ResolvedRefs"}}},
			grpc:      map[string][]verdict{"apps/g": {accepted}},
			attached:  2,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			res := Translate(tc.in)
			if diff := cmp.Diff(tc.published, summary(res.Published)); diff != "" {
				t.Errorf("published (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.http, verdicts(res.Routes), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("HTTPRoute status (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.grpc, verdicts(res.GRPCRoutes), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("GRPCRoute status (-want +got):\n%s", diff)
			}
			if got := res.Listeners[0].AttachedRoutes; got != tc.attached {
				t.Errorf("attachedRoutes: got %d, want %d", got, tc.attached)
			}
		})
	}
}

// TestGRPCRouteEntries: a GRPCRoute naming another Gateway gets no entry;
// a refused one's message names the other route (of its namespace) and
// the hostname; the
// entry carries the route's generation.
func TestGRPCRouteEntries(t *testing.T) {
	svcs := services(service("apps", "grpc", 8443), service("apps", "web", 8080))
	other := grpcRoute("apps", "o", 1, []string{"o.example.com"}, grpcRule(nil, grpcBackend("grpc", 8443)))
	other.Spec.ParentRefs = []gwv1.ParentReference{{Name: "another"}}
	g := grpcRoute("apps", "g", 1, []string{"a.example.com"}, grpcRule(nil, grpcBackend("grpc", 8443)))
	g.Generation = 3
	res := Translate(Input{Gateway: gateway(allRoutes), Services: svcs, GRPCRoutes: []gwv1.GRPCRoute{other, g},
		HTTPRoutes: []gwv1.HTTPRoute{httpRoute("apps", "web", 2, []string{"a.example.com"}, pathRule(gwv1.PathMatchPathPrefix, "/", backendRef("web", 8080)))}})
	if len(res.GRPCRoutes) != 1 || res.GRPCRoutes[0].Name != "g" || res.GRPCRoutes[0].Kind != KindGRPCRoute {
		t.Fatalf("GRPCRoute entries: %+v", res.GRPCRoutes)
	}
	c := res.GRPCRoutes[0].Parents[0].Conditions[0]
	if c.ObservedGeneration != 3 || !strings.Contains(c.Message, "hostname a.example.com is served by HTTPRoute web,") {
		t.Errorf("Accepted: %+v", c)
	}
}
