package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

// origin is a tunnel rule's service and whether cloudflared speaks HTTP/2
// to it.
type origin struct {
	Service string
	HTTP2   bool
}

// origins are the tunnel's rules of a hostname, by path, as Cloudflare
// holds them.
func origins(t *testing.T, tunnelID, host string) map[string]origin {
	t.Helper()
	tc, err := p.Cloudflare.GetTunnelConfiguration(context.Background(), tunnelID)
	if err != nil {
		t.Fatal(err)
	}
	var c ztv1alpha1.TunnelConfig
	if len(tc.Config) > 0 {
		if err := json.Unmarshal(tc.Config, &c); err != nil {
			t.Fatal(err)
		}
	}
	out := map[string]origin{}
	for _, r := range c.Ingress {
		if ptr.Deref(r.Hostname, "") == host {
			out[ptr.Deref(r.Path, "")] = origin{Service: r.Service, HTTP2: r.OriginRequest != nil && ptr.Deref(r.OriginRequest.HTTP2Origin, false)}
		}
	}
	return out
}

// grpcConditions are the GRPCRoute's conditions in this provider's parent
// entries, "Type=Status/Reason", sorted.
func grpcConditions(t *testing.T, r *gwv1.GRPCRoute) []string {
	t.Helper()
	if err := p.Get(r); err != nil {
		t.Fatal(err)
	}
	return ourConditions(r.Status.Parents, r.Generation)
}

func waitGRPCConditions(t *testing.T, r *gwv1.GRPCRoute, want ...string) {
	t.Helper()
	sort.Strings(want)
	wait.Eventually(t, wait.Patience, "GRPCRoute "+r.Name+" parent status", func() error {
		if got := grpcConditions(t, r); !slices.Equal(got, want) {
			return fmt.Errorf("got %v, want %v (parents %+v)", got, want, r.Status.Parents)
		}
		return nil
	})
}

func grpcRoute(ns, name string, hosts []string, rules ...gwv1.GRPCRouteRule) *gwv1.GRPCRoute {
	r := &gwv1.GRPCRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	r.Spec.ParentRefs = []gwv1.ParentReference{{Name: "public"}}
	for _, h := range hosts {
		r.Spec.Hostnames = append(r.Spec.Hostnames, gwv1.Hostname(h))
	}
	r.Spec.Rules = rules
	return r
}

func grpcBackend(name string, port int32) gwv1.GRPCBackendRef {
	return gwv1.GRPCBackendRef{BackendRef: gwv1.BackendRef{BackendObjectReference: gwv1.BackendObjectReference{Name: gwv1.ObjectName(name), Port: ptr.To(gwv1.PortNumber(port))}}}
}

// A GRPCRoute matching every call publishes its hostname to its backend
// over HTTP/2 (https, http2Origin: the only way cloudflared speaks HTTP/2
// to an origin) with a proxied CNAME; one with a method match is told
// UnsupportedValue and publishes nothing; the listener lists GRPCRoute
// among its kinds and counts both; deleting the route unpublishes it.
func TestAGRPCRoutePublishesOverHTTP2(t *testing.T) {
	t.Parallel()
	w := setup(t)
	ns := w.ns
	p.Create(t, service(ns, "greeter", 8443))
	g := "g-" + ns + ".example.com"
	greeter := grpcRoute(ns, "greeter", []string{g}, gwv1.GRPCRouteRule{BackendRefs: []gwv1.GRPCBackendRef{grpcBackend("greeter", 8443)}})
	p.Create(t, greeter)
	want := map[string]origin{"": {Service: "https://greeter." + ns + ".svc.cluster.local:8443", HTTP2: true}}
	wait.Eventually(t, wait.Patience, "the GRPCRoute's hostname published over HTTP/2", func() error {
		if diff := cmp.Diff(want, origins(t, w.tunnelID, g)); diff != "" {
			return fmt.Errorf("rules of %s (-want +got):\n%s", g, diff)
		}
		return nil
	})
	waitGRPCConditions(t, greeter, "Accepted=True/Accepted", "ResolvedRefs=True/ResolvedRefs")
	wait.Eventually(t, wait.Patience, "a proxied CNAME to the tunnel", func() error {
		if rs := records(t, g); len(rs) != 1 || rs[0].Content != w.tunnelID+".cfargotunnel.com" || !rs[0].Proxied {
			return fmt.Errorf("DNS records of %s = %+v", g, rs)
		}
		return nil
	})

	m := "m-" + ns + ".example.com"
	method := grpcRoute(ns, "method", []string{m}, gwv1.GRPCRouteRule{
		Matches:     []gwv1.GRPCRouteMatch{{Method: &gwv1.GRPCMethodMatch{Service: ptr.To("pkg.Greeter"), Method: ptr.To("Hello")}}},
		BackendRefs: []gwv1.GRPCBackendRef{grpcBackend("greeter", 8443)},
	})
	p.Create(t, method)
	waitGRPCConditions(t, method, "Accepted=False/UnsupportedValue", "ResolvedRefs=True/ResolvedRefs")
	if got := origins(t, w.tunnelID, m); len(got) > 0 {
		t.Errorf("the method match was published: %v", got)
	}
	gw := w.gateway
	wait.Eventually(t, wait.Patience, "the listener supports and counts GRPCRoutes", func() error {
		if err := p.Get(gw); err != nil {
			return err
		}
		if len(gw.Status.Listeners) != 1 || gw.Status.Listeners[0].AttachedRoutes != 2 || !slices.ContainsFunc(gw.Status.Listeners[0].SupportedKinds, func(k gwv1.RouteGroupKind) bool { return k.Kind == "GRPCRoute" }) {
			return fmt.Errorf("listeners %+v", gw.Status.Listeners)
		}
		return nil
	})

	p.DeleteAndWait(t, greeter)
	wait.Eventually(t, wait.Patience, "the hostname unpublished", func() error {
		if got := origins(t, w.tunnelID, g); len(got) > 0 {
			return fmt.Errorf("rules remain: %v", got)
		}
		if rs := records(t, g); len(rs) > 0 {
			return fmt.Errorf("records remain: %+v", rs)
		}
		return nil
	})
}

// Two listeners of one protocol and hostname are both Conflicted and take
// no route; the Gateway is accepted with ListenersNotValid, and a route
// attached through the third listener is published.
func TestConflictedListeners(t *testing.T) {
	t.Parallel()
	w := setup(t, func(gw *gwv1.Gateway) {
		host := ptr.To(gwv1.Hostname("dup.example.com"))
		gw.Spec.Listeners = []gwv1.Listener{
			{Name: "a", Port: 80, Protocol: gwv1.HTTPProtocolType, Hostname: host},
			{Name: "b", Port: 8080, Protocol: gwv1.HTTPProtocolType, Hostname: host},
			{Name: "any", Port: 80, Protocol: gwv1.HTTPProtocolType},
		}
	})
	p.Create(t, service(w.ns, "web", 8080))
	h := "ok-" + w.ns + ".example.com"
	r := route(w.ns, w.ns, "ok", []string{h}, pathRule(gwv1.PathMatchPathPrefix, "/", backend("web", 8080)))
	p.Create(t, r)
	waitRules(t, w.tunnelID, w.ns, map[string]string{h + " ": "http://web." + w.ns + ".svc.cluster.local:8080"})
	waitParentConditions(t, r, "Accepted=True/Accepted", "ResolvedRefs=True/ResolvedRefs")
	gw := w.gateway
	wait.Eventually(t, wait.Patience, "listeners a and b Conflicted, any working", func() error {
		if err := p.Get(gw); err != nil {
			return err
		}
		got := map[string]string{"Gateway": brief(gw.Status.Conditions, string(gwv1.GatewayConditionAccepted))}
		for _, l := range gw.Status.Listeners {
			got[string(l.Name)] = brief(l.Conditions, string(gwv1.ListenerConditionConflicted)) + " " + brief(l.Conditions, string(gwv1.ListenerConditionProgrammed)) + fmt.Sprintf(" %d", l.AttachedRoutes)
		}
		want := map[string]string{
			"Gateway": "True/ListenersNotValid",
			"a":       "True/HostnameConflict False/Invalid 0",
			"b":       "True/HostnameConflict False/Invalid 0",
			"any":     "/ True/Programmed 1",
		}
		if diff := cmp.Diff(want, got); diff != "" {
			return fmt.Errorf("(-want +got):\n%s", diff)
		}
		return nil
	})
}

func brief(cs []metav1.Condition, t string) string {
	c := condition(cs, t)
	return string(c.Status) + "/" + c.Reason
}
