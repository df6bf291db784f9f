package translate

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/utils/ptr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
)

// TestRouteAccessNamespaces: a route of the Gateway's namespace names
// AccessPolicies as any source does; a route of another namespace names
// its own namespace's (an unqualified name is qualified with the route's
// namespace, never resolved in the Gateway's), and one naming another
// namespace's policies is refused and holds its hostnames (fail closed).
func TestRouteAccessNamespaces(t *testing.T) {
	policies := func(names ...string) *v1alpha1.Access {
		a := &v1alpha1.Access{Required: ptr.To(true)}
		for _, n := range names {
			ns, name, ok := strings.Cut(n, "/")
			if !ok {
				ns, name = "", n
			}
			a.Policies = append(a.Policies, v1alpha1.AccessPolicyName{Namespace: ns, Name: name})
		}
		return a
	}
	route := func(ns, value string) gwv1.HTTPRoute {
		return withAnnotation(httpRoute(ns, "r", 1, []string{"a.example.com"}, pathRule(gwv1.PathMatchPathPrefix, "/", backendRef("web", 8080))), v1alpha1.AnnotationAccessPolicies, value)
	}
	grpc := func(ns, value string) gwv1.GRPCRoute {
		r := grpcRoute(ns, "g", 1, []string{"a.example.com"}, grpcRule(nil, grpcBackend("web", 8080)))
		r.Annotations = map[string]string{v1alpha1.AnnotationAccessPolicies: value}
		return r
	}
	refused := "False/UnsupportedValue"
	cases := map[string]struct {
		http     []gwv1.HTTPRoute
		grpc     []gwv1.GRPCRoute
		want     *v1alpha1.Access // of a.example.com, when published
		accepted string
		message  []string
	}{
		"SameNamespaceUnqualifiedIsUnchanged": {http: []gwv1.HTTPRoute{route("edge", "admins")}, want: policies("admins"), accepted: "True/Accepted"},
		"SameNamespaceQualifiedIsUnchanged":   {http: []gwv1.HTTPRoute{route("edge", "platform/admins")}, want: policies("platform/admins"), accepted: "True/Accepted"},
		"OtherNamespaceUnqualifiedIsTheRoutes": {
			http: []gwv1.HTTPRoute{route("apps", "admins, ops")}, want: policies("apps/admins", "apps/ops"), accepted: "True/Accepted",
		},
		"OtherNamespaceQualifiedWithItsOwn": {http: []gwv1.HTTPRoute{route("apps", "apps/admins")}, want: policies("apps/admins"), accepted: "True/Accepted"},
		"OtherNamespaceNamingTheGateways": {
			http: []gwv1.HTTPRoute{route("apps", "admins, edge/admins")}, accepted: refused,
			message: []string{`AccessPolicy "edge/admins"`, "only AccessPolicies of its own namespace", "share it with namespace edge"},
		},
		"OtherNamespaceNamingAThird": {
			http: []gwv1.HTTPRoute{route("apps", "platform/admins")}, accepted: refused,
			message: []string{`AccessPolicy "platform/admins"`, "name one of namespace apps"},
		},
		"AGRPCRouteOfOtherNamespaceUnqualified": {grpc: []gwv1.GRPCRoute{grpc("apps", "admins")}, want: policies("apps/admins"), accepted: "True/Accepted"},
		"AGRPCRouteOfOtherNamespaceNamingAThird": {
			grpc: []gwv1.GRPCRoute{grpc("apps", "platform/admins")}, accepted: refused, message: []string{`AccessPolicy "platform/admins"`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			res := Translate(Input{Gateway: gateway(allRoutes), Services: services(service("apps", "web", 8080), service("edge", "web", 8080)), HTTPRoutes: tc.http, GRPCRoutes: tc.grpc})
			var got *v1alpha1.Access
			for _, ph := range res.Published {
				if ph.Spec.Hostname == "a.example.com" {
					got = ph.Spec.Access
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("a.example.com's Access (-want +got):\n%s", diff)
			}
			var held []string
			if tc.want == nil {
				held = []string{"a.example.com"}
			}
			if diff := cmp.Diff(held, res.Held, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("held (-want +got):\n%s", diff)
			}
			sts := append(res.Routes, res.GRPCRoutes...)
			if len(sts) != 1 || len(sts[0].Parents) != 1 {
				t.Fatalf("route entries: %+v", sts)
			}
			accepted := sts[0].Parents[0].Conditions[0]
			if got := string(accepted.Status) + "/" + accepted.Reason; got != tc.accepted {
				t.Errorf("Accepted %s (%s), want %s", got, accepted.Message, tc.accepted)
			}
			for _, m := range tc.message {
				if !strings.Contains(accepted.Message, m) {
					t.Errorf("Accepted message %q does not say %q", accepted.Message, m)
				}
			}
		})
	}
}
