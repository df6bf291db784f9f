package translate

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
)

func gateway(edit ...func(*gwv1.Gateway)) *gwv1.Gateway {
	gw := &gwv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Namespace: "edge", Name: "public", UID: "gw-uid", Generation: 2},
		Spec: gwv1.GatewaySpec{GatewayClassName: "cloudflare", Listeners: []gwv1.Listener{
			{Name: "http", Port: 80, Protocol: gwv1.HTTPProtocolType},
		}},
	}
	for _, e := range edit {
		e(gw)
	}
	return gw
}

func service(ns, name string, port int32) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: port}}}}
}

func services(ss ...*corev1.Service) map[types.NamespacedName]*corev1.Service {
	out := map[types.NamespacedName]*corev1.Service{}
	for _, s := range ss {
		out[types.NamespacedName{Namespace: s.Namespace, Name: s.Name}] = s
	}
	return out
}

func backendRef(name string, port int32) gwv1.HTTPBackendRef {
	return gwv1.HTTPBackendRef{BackendRef: gwv1.BackendRef{BackendObjectReference: gwv1.BackendObjectReference{Name: gwv1.ObjectName(name), Port: ptr.To(gwv1.PortNumber(port))}}}
}

func pathRule(t gwv1.PathMatchType, value string, b gwv1.HTTPBackendRef) gwv1.HTTPRouteRule {
	return gwv1.HTTPRouteRule{Matches: []gwv1.HTTPRouteMatch{{Path: &gwv1.HTTPPathMatch{Type: ptr.To(t), Value: ptr.To(value)}}}, BackendRefs: []gwv1.HTTPBackendRef{b}}
}

func httpRoute(ns, name string, age int, hosts []string, rules ...gwv1.HTTPRouteRule) gwv1.HTTPRoute {
	r := gwv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Generation: 1, CreationTimestamp: metav1.NewTime(time.Unix(1000-int64(age), 0))}}
	r.Spec.ParentRefs = []gwv1.ParentReference{{Name: "public", Namespace: ptr.To(gwv1.Namespace("edge"))}}
	for _, h := range hosts {
		r.Spec.Hostnames = append(r.Spec.Hostnames, gwv1.Hostname(h))
	}
	r.Spec.Rules = rules
	return r
}

// verdict is a route parent entry in short: each condition as
// Type=Status/Reason.
type verdict map[string]string

func verdicts(rs []RouteStatus) map[string][]verdict {
	out := map[string][]verdict{}
	for _, r := range rs {
		for _, p := range r.Parents {
			v := verdict{}
			for _, c := range p.Conditions {
				v[c.Type] = string(c.Status) + "/" + c.Reason
			}
			out[r.Namespace+"/"+r.Name] = append(out[r.Namespace+"/"+r.Name], v)
		}
	}
	return out
}

type publishedPath struct{ Type, Path, URL string }

type published struct {
	Hostname, Origin string
	Paths            []publishedPath
	Access           bool
	// HTTP2: HTTP/2 to the origins (a GRPCRoute's).
	HTTP2 bool
}

func summary(phs []*v1alpha1.PublicHostname) []published {
	var out []published
	for _, ph := range phs {
		p := published{Hostname: ph.Spec.Hostname, Access: ph.Spec.Access != nil}
		if o := ph.Spec.OriginRequest; o != nil {
			p.HTTP2 = ptr.Deref(o.HTTP2Origin, false)
		}
		if ph.Spec.Origin != nil {
			p.Origin = ptr.Deref(ph.Spec.Origin.URL, "")
		}
		for _, x := range ph.Spec.Paths {
			p.Paths = append(p.Paths, publishedPath{x.PathType, x.Path, ptr.Deref(x.Origin.URL, "")})
		}
		out = append(out, p)
	}
	return out
}

const (
	webURL = "http://web.apps.svc.cluster.local:8080"
	apiURL = "http://api.apps.svc.cluster.local:9090"
)

func allRoutes(gw *gwv1.Gateway) {
	gw.Spec.Listeners[0].AllowedRoutes = &gwv1.AllowedRoutes{Namespaces: &gwv1.RouteNamespaces{From: ptr.To(gwv1.NamespacesFromAll)}}
}

func TestTranslate(t *testing.T) {
	accepted := verdict{"Accepted": "True/Accepted", "ResolvedRefs": "True/ResolvedRefs"}
	webAPI := services(service("apps", "web", 8080), service("apps", "api", 9090))
	cases := map[string]struct {
		in        Input
		published []published
		routes    map[string][]verdict
		keep      []string
		attached  int32
	}{
		"TwoHostnamesThreePathRules": {
			in: Input{Gateway: gateway(allRoutes), Services: webAPI, HTTPRoutes: []gwv1.HTTPRoute{
				httpRoute("apps", "site", 1, []string{"a.example.com", "b.example.com"},
					pathRule(gwv1.PathMatchPathPrefix, "/", backendRef("web", 8080)),
					pathRule(gwv1.PathMatchPathPrefix, "/api", backendRef("api", 9090)),
					pathRule(gwv1.PathMatchExact, "/healthz", backendRef("api", 9090))),
			}},
			published: []published{
				{Hostname: "a.example.com", Origin: webURL, Paths: []publishedPath{{"Prefix", "/api", apiURL}, {"Exact", "/healthz", apiURL}}},
				{Hostname: "b.example.com", Origin: webURL, Paths: []publishedPath{{"Prefix", "/api", apiURL}, {"Exact", "/healthz", apiURL}}},
			},
			routes:   map[string][]verdict{"apps/site": {accepted}},
			attached: 1,
		},
		"RegularExpressionsAreAnchored": {
			in: Input{Gateway: gateway(allRoutes), Services: webAPI, HTTPRoutes: []gwv1.HTTPRoute{
				httpRoute("apps", "re", 1, []string{"a.example.com"}, pathRule(gwv1.PathMatchRegularExpression, "/v[0-9]+/.*", backendRef("api", 9090))),
			}},
			published: []published{{Hostname: "a.example.com", Paths: []publishedPath{{"RegularExpression", "^(?:/v[0-9]+/.*)$", apiURL}}}},
			routes:    map[string][]verdict{"apps/re": {accepted}},
			attached:  1,
		},
		"AHeaderMatchIsLeftOutAndSaid": {
			in: Input{Gateway: gateway(allRoutes), Services: webAPI, HTTPRoutes: []gwv1.HTTPRoute{
				httpRoute("apps", "mixed", 1, []string{"a.example.com"},
					pathRule(gwv1.PathMatchPathPrefix, "/", backendRef("web", 8080)),
					gwv1.HTTPRouteRule{Matches: []gwv1.HTTPRouteMatch{{Headers: []gwv1.HTTPHeaderMatch{{Name: "x-canary", Value: "1"}}}}, BackendRefs: []gwv1.HTTPBackendRef{backendRef("api", 9090)}}),
			}},
			published: []published{{Hostname: "a.example.com", Origin: webURL}},
			routes:    map[string][]verdict{"apps/mixed": {{"Accepted": "True/Accepted", "ResolvedRefs": "True/ResolvedRefs", "PartiallyInvalid": "True/UnsupportedValue"}}},
			attached:  1,
		},
		"NothingPublishableIsNotAccepted": {
			in: Input{Gateway: gateway(allRoutes), Services: webAPI, HTTPRoutes: []gwv1.HTTPRoute{
				httpRoute("apps", "split", 1, []string{"a.example.com"},
					gwv1.HTTPRouteRule{BackendRefs: []gwv1.HTTPBackendRef{backendRef("web", 8080), backendRef("api", 9090)}},
					gwv1.HTTPRouteRule{Filters: []gwv1.HTTPRouteFilter{{Type: gwv1.HTTPRouteFilterRequestHeaderModifier}}, BackendRefs: []gwv1.HTTPBackendRef{backendRef("web", 8080)}},
					gwv1.HTTPRouteRule{Matches: []gwv1.HTTPRouteMatch{{Method: ptr.To(gwv1.HTTPMethodPost)}}, BackendRefs: []gwv1.HTTPBackendRef{backendRef("web", 8080)}}),
			}},
			routes:   map[string][]verdict{"apps/split": {{"Accepted": "False/UnsupportedValue", "ResolvedRefs": "True/ResolvedRefs"}}},
			attached: 1,
		},
		"ACrossNamespaceBackendWithoutAGrant": {
			in: Input{Gateway: gateway(allRoutes), Services: webAPI, HTTPRoutes: []gwv1.HTTPRoute{
				httpRoute("team", "x", 1, []string{"x.example.com"}, gwv1.HTTPRouteRule{BackendRefs: []gwv1.HTTPBackendRef{crossNS(backendRef("web", 8080), "apps")}}),
			}},
			routes:   map[string][]verdict{"team/x": {{"Accepted": "True/Accepted", "ResolvedRefs": "False/RefNotPermitted"}}},
			attached: 1,
		},
		"ACrossNamespaceBackendWithAGrant": {
			in: Input{Gateway: gateway(allRoutes), Services: webAPI, Grants: map[string][]gwv1beta1.ReferenceGrant{"apps": {grant("team")}}, HTTPRoutes: []gwv1.HTTPRoute{
				httpRoute("team", "x", 1, []string{"x.example.com"}, gwv1.HTTPRouteRule{BackendRefs: []gwv1.HTTPBackendRef{crossNS(backendRef("web", 8080), "apps")}}),
			}},
			published: []published{{Hostname: "x.example.com", Origin: webURL}},
			routes:    map[string][]verdict{"team/x": {accepted}},
			attached:  1,
		},
		"AMissingBackendKeepsWhatWasPublished": {
			in: Input{Gateway: gateway(allRoutes), Services: webAPI, HTTPRoutes: []gwv1.HTTPRoute{
				httpRoute("apps", "typo", 1, []string{"a.example.com"}, gwv1.HTTPRouteRule{BackendRefs: []gwv1.HTTPBackendRef{backendRef("wbe", 8080)}}),
			}},
			routes:   map[string][]verdict{"apps/typo": {{"Accepted": "True/Accepted", "ResolvedRefs": "False/BackendNotFound"}}},
			keep:     []string{"a.example.com"},
			attached: 1,
		},
		"SameNamespaceOnlyByDefault": {
			in: Input{Gateway: gateway(), Services: services(service("edge", "web", 8080), service("apps", "web", 8080)), HTTPRoutes: []gwv1.HTTPRoute{
				httpRoute("apps", "other", 2, []string{"o.example.com"}, gwv1.HTTPRouteRule{BackendRefs: []gwv1.HTTPBackendRef{backendRef("web", 8080)}}),
				httpRoute("edge", "own", 1, []string{"e.example.com"}, gwv1.HTTPRouteRule{BackendRefs: []gwv1.HTTPBackendRef{backendRef("web", 8080)}}),
			}},
			published: []published{{Hostname: "e.example.com", Origin: "http://web.edge.svc.cluster.local:8080"}},
			routes: map[string][]verdict{
				"apps/other": {{"Accepted": "False/NotAllowedByListeners", "ResolvedRefs": "True/ResolvedRefs"}},
				"edge/own":   {accepted},
			},
			attached: 1,
		},
		"TheOldestRouteKeepsAPath": {
			in: Input{Gateway: gateway(allRoutes), Services: webAPI, HTTPRoutes: []gwv1.HTTPRoute{
				httpRoute("apps", "young", 1, []string{"a.example.com"}, pathRule(gwv1.PathMatchPathPrefix, "/api", backendRef("web", 8080))),
				httpRoute("apps", "old", 2, []string{"a.example.com"}, pathRule(gwv1.PathMatchPathPrefix, "/api", backendRef("api", 9090)), pathRule(gwv1.PathMatchPathPrefix, "/", backendRef("web", 8080))),
			}},
			published: []published{{Hostname: "a.example.com", Origin: webURL, Paths: []publishedPath{{"Prefix", "/api", apiURL}}}},
			routes:    map[string][]verdict{"apps/old": {accepted}, "apps/young": {{"Accepted": "True/Accepted", "ResolvedRefs": "True/ResolvedRefs", "PartiallyInvalid": "True/PathConflict"}}},
			attached:  2,
		},
		"RoutesDisagreeingOnAccessPublishNeither": {
			in: Input{Gateway: gateway(allRoutes), Services: webAPI, HTTPRoutes: []gwv1.HTTPRoute{
				httpRoute("apps", "open", 2, []string{"a.example.com"}, pathRule(gwv1.PathMatchPathPrefix, "/", backendRef("web", 8080))),
				withAnnotation(httpRoute("apps", "guarded", 1, []string{"a.example.com"}, pathRule(gwv1.PathMatchPathPrefix, "/admin", backendRef("api", 9090))), v1alpha1.AnnotationAccessPolicies, "admins"),
			}},
			routes: map[string][]verdict{
				"apps/open":    {{"Accepted": "True/Accepted", "ResolvedRefs": "True/ResolvedRefs", "PartiallyInvalid": "True/UnsupportedValue"}},
				"apps/guarded": {{"Accepted": "True/Accepted", "ResolvedRefs": "True/ResolvedRefs", "PartiallyInvalid": "True/UnsupportedValue"}},
			},
			attached: 2,
		},
		"AWildcardListenerNarrowsAndAWildcardRouteIsSaid": {
			in: Input{Gateway: gateway(allRoutes, func(gw *gwv1.Gateway) { gw.Spec.Listeners[0].Hostname = ptr.To(gwv1.Hostname("*.example.com")) }), Services: webAPI, HTTPRoutes: []gwv1.HTTPRoute{
				httpRoute("apps", "w", 1, []string{"*.example.com", "a.example.com"}, pathRule(gwv1.PathMatchPathPrefix, "/", backendRef("web", 8080))),
				httpRoute("apps", "elsewhere", 2, []string{"a.example.org"}, pathRule(gwv1.PathMatchPathPrefix, "/", backendRef("web", 8080))),
			}},
			published: []published{{Hostname: "a.example.com", Origin: webURL}},
			routes: map[string][]verdict{
				"apps/w":         {{"Accepted": "True/Accepted", "ResolvedRefs": "True/ResolvedRefs", "PartiallyInvalid": "True/UnsupportedValue"}},
				"apps/elsewhere": {{"Accepted": "False/NoMatchingListenerHostname", "ResolvedRefs": "True/ResolvedRefs"}},
			},
			attached: 1,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			res := Translate(tc.in)
			if diff := cmp.Diff(tc.published, summary(res.Published)); diff != "" {
				t.Errorf("published (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.routes, verdicts(res.Routes)); diff != "" {
				t.Errorf("route status (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.keep, res.Keep, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("keep (-want +got):\n%s", diff)
			}
			if got := res.Listeners[0].AttachedRoutes; got != tc.attached {
				t.Errorf("attachedRoutes: got %d, want %d", got, tc.attached)
			}
		})
	}
}

func crossNS(b gwv1.HTTPBackendRef, ns string) gwv1.HTTPBackendRef {
	b.Namespace = ptr.To(gwv1.Namespace(ns))
	return b
}

func grant(from string) gwv1beta1.ReferenceGrant {
	return gwv1beta1.ReferenceGrant{Spec: gwv1beta1.ReferenceGrantSpec{
		From: []gwv1beta1.ReferenceGrantFrom{{Group: "gateway.networking.k8s.io", Kind: "HTTPRoute", Namespace: gwv1.Namespace(from)}},
		To:   []gwv1beta1.ReferenceGrantTo{{Kind: "Service"}},
	}}
}

func withAnnotation(r gwv1.HTTPRoute, k, v string) gwv1.HTTPRoute {
	r.Annotations = map[string]string{k: v}
	return r
}

func TestStatus(t *testing.T) {
	gw := gateway(func(gw *gwv1.Gateway) {
		gw.Spec.Listeners = append(gw.Spec.Listeners,
			gwv1.Listener{Name: "https", Port: 443, Protocol: gwv1.HTTPSProtocolType, TLS: &gwv1.ListenerTLSConfig{}},
			gwv1.Listener{Name: "tcp", Port: 5432, Protocol: gwv1.TCPProtocolType})
	})
	res := Translate(Input{Gateway: gw})
	brief := func(st gwv1.GatewayStatus) map[string]string {
		out := map[string]string{}
		for _, c := range st.Conditions {
			out[c.Type] = string(c.Status) + "/" + c.Reason
		}
		for _, l := range st.Listeners {
			for _, c := range l.Conditions {
				out[string(l.Name)+"."+c.Type] = string(c.Status) + "/" + c.Reason
			}
			out[string(l.Name)+".kinds"] = ""
			for _, k := range l.SupportedKinds {
				out[string(l.Name)+".kinds"] += string(k.Kind)
			}
		}
		for _, a := range st.Addresses {
			out["address"] = string(*a.Type) + "/" + a.Value
		}
		return out
	}
	cases := map[string]struct {
		tunnel TunnelState
		want   map[string]string
	}{
		"Ready": {tunnel: TunnelState{Found: true, ID: "abc", Ready: true}, want: map[string]string{
			"Accepted": "True/Accepted", "Programmed": "True/Programmed", "address": "Hostname/abc.cfargotunnel.com",
			"http.Accepted": "True/Accepted", "http.ResolvedRefs": "True/ResolvedRefs", "http.Programmed": "True/Programmed", "http.kinds": "HTTPRouteGRPCRoute",
			"https.Accepted": "True/Accepted", "https.ResolvedRefs": "True/ResolvedRefs", "https.Programmed": "True/Programmed", "https.kinds": "HTTPRouteGRPCRoute",
			"tcp.Accepted": "False/UnsupportedProtocol", "tcp.ResolvedRefs": "True/ResolvedRefs", "tcp.Programmed": "False/Invalid", "tcp.kinds": "",
		}},
		"Pending": {tunnel: TunnelState{Found: true}, want: map[string]string{
			"Accepted": "True/Accepted", "Programmed": "False/Pending",
			"http.Accepted": "True/Accepted", "http.ResolvedRefs": "True/ResolvedRefs", "http.Programmed": "False/Pending", "http.kinds": "HTTPRouteGRPCRoute",
			"https.Accepted": "True/Accepted", "https.ResolvedRefs": "True/ResolvedRefs", "https.Programmed": "False/Pending", "https.kinds": "HTTPRouteGRPCRoute",
			"tcp.Accepted": "False/UnsupportedProtocol", "tcp.ResolvedRefs": "True/ResolvedRefs", "tcp.Programmed": "False/Invalid", "tcp.kinds": "",
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, brief(Status(gw, res, tc.tunnel))); diff != "" {
				t.Errorf("Status (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMadeOrNamedTunnel: a Gateway without the annotation has a tunnel made
// for it, named after it; with it, names an existing one and makes none.
func TestMadeOrNamedTunnel(t *testing.T) {
	made := Translate(Input{Gateway: gateway()})
	if made.Tunnel != "public" || made.MakeTunnel == nil || ptr.Deref(made.MakeTunnel.Spec.TunnelName, "") != "edge-public" {
		t.Errorf("made: got %q, %+v", made.Tunnel, made.MakeTunnel)
	}
	named := Translate(Input{Gateway: gateway(func(gw *gwv1.Gateway) { gw.Annotations = map[string]string{v1alpha1.AnnotationTunnel: "shared"} })})
	if named.Tunnel != "shared" || named.MakeTunnel != nil {
		t.Errorf("named: got %q, %+v", named.Tunnel, named.MakeTunnel)
	}
}

// TestDNSMode: the Gateway's dns annotation sets its hostnames' DNS; a
// value it cannot honour is not accepted and publishes nothing new.
func TestDNSMode(t *testing.T) {
	webAPI := services(service("apps", "web", 8080))
	route := httpRoute("apps", "r", 1, []string{"a.example.com"}, pathRule(gwv1.PathMatchPathPrefix, "/", backendRef("web", 8080)))
	for value, want := range map[string]string{"": v1alpha1.DNSManaged, "DNSRecord": v1alpha1.DNSManaged, "None": v1alpha1.DNSNone, "ExternalDNS": v1alpha1.DNSNone} {
		gw := gateway(allRoutes)
		if value != "" {
			gw.Annotations = map[string]string{v1alpha1.AnnotationDNS: value}
		}
		res := Translate(Input{Gateway: gw, Services: webAPI, HTTPRoutes: []gwv1.HTTPRoute{route}})
		if len(res.Published) != 1 || res.Published[0].Spec.DNS != want || res.KeepAll {
			t.Errorf("dns %q: published %+v, keepAll %v; want DNS %s", value, res.Published, res.KeepAll, want)
		}
		if mode := modeOr(value); res.DNS.Mode != mode {
			t.Errorf("dns %q: mode %s, want %s", value, res.DNS.Mode, mode)
		}
	}
	gw := gateway(allRoutes)
	gw.Annotations = map[string]string{v1alpha1.AnnotationDNS: "Route53"}
	res := Translate(Input{Gateway: gw, Services: webAPI, HTTPRoutes: []gwv1.HTTPRoute{route}})
	if res.Accepted.Status != metav1.ConditionFalse || res.Accepted.Reason != string(gwv1.GatewayReasonInvalidParameters) || !res.KeepAll || len(res.Published) > 0 {
		t.Errorf("Route53: accepted %+v, keepAll %v, published %d", res.Accepted, res.KeepAll, len(res.Published))
	}
}

// Infrastructure parameters of a kind this provider does not read are
// refused, never ignored in silence, and what is published stays.
func TestInfrastructureParametersAreRefused(t *testing.T) {
	webAPI := services(service("apps", "web", 8080))
	route := httpRoute("apps", "r", 1, []string{"a.example.com"}, pathRule(gwv1.PathMatchPathPrefix, "/", backendRef("web", 8080)))
	gw := gateway(allRoutes)
	gw.Spec.Infrastructure = &gwv1.GatewayInfrastructure{ParametersRef: &gwv1.LocalParametersReference{Group: "example.com", Kind: "ConnectorSettings", Name: "big"}}
	res := Translate(Input{Gateway: gw, Services: webAPI, HTTPRoutes: []gwv1.HTTPRoute{route}})
	if res.Accepted.Status != metav1.ConditionFalse || res.Accepted.Reason != string(gwv1.GatewayReasonInvalidParameters) || !strings.Contains(res.Accepted.Message, `spec.infrastructure.parametersRef names "ConnectorSettings" of group "example.com"`) || !res.KeepAll || len(res.Published) > 0 {
		t.Errorf("parametersRef: accepted %+v, keepAll %v, published %d", res.Accepted, res.KeepAll, len(res.Published))
	}
	gw.Spec.Infrastructure = &gwv1.GatewayInfrastructure{Labels: map[gwv1.LabelKey]gwv1.LabelValue{"team": "a"}}
	if res := Translate(Input{Gateway: gw, Services: webAPI, HTTPRoutes: []gwv1.HTTPRoute{route}}); res.Accepted.Status != metav1.ConditionTrue {
		t.Errorf("infrastructure without parametersRef: accepted %+v, want True", res.Accepted)
	}
}
