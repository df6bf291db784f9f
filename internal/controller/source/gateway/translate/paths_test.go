package translate

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
)

// TestAPathIsTheOldestRoutes: a newer route of another namespace naming a
// path an older route holds (however spelled) loses it and is told, with
// a typed reason and without the older route's name; its other paths are
// published, and none of them is tried before the older route's literals.
func TestAPathIsTheOldestRoutes(t *testing.T) {
	svcs := services(service("apps", "web", 8080), service("apps", "api", 9090), service("evil", "grab", 80))
	capture := "/(login|" + strings.Repeat("z", 40) + ")"
	res := Translate(Input{Gateway: gateway(allRoutes), Services: svcs, HTTPRoutes: []gwv1.HTTPRoute{
		httpRoute("evil", "grab", 1, []string{"a.example.com"},
			pathRule(gwv1.PathMatchRegularExpression, capture, backendRef("grab", 80)),
			pathRule(gwv1.PathMatchPathPrefix, "/api/", backendRef("grab", 80)),
			pathRule(gwv1.PathMatchExact, "/login", backendRef("grab", 80)),
			pathRule(gwv1.PathMatchPathPrefix, "/grab", backendRef("grab", 80))),
		httpRoute("apps", "site", 2, []string{"a.example.com"},
			pathRule(gwv1.PathMatchExact, "/login", backendRef("web", 8080)),
			pathRule(gwv1.PathMatchPathPrefix, "/api", backendRef("api", 9090))),
	}})
	want := map[string][]verdict{
		"apps/site": {{"Accepted": "True/Accepted", "ResolvedRefs": "True/ResolvedRefs"}},
		"evil/grab": {{"Accepted": "True/Accepted", "ResolvedRefs": "True/ResolvedRefs", "PartiallyInvalid": "True/PathConflict"}},
	}
	if diff := cmp.Diff(want, verdicts(res.Routes)); diff != "" {
		t.Errorf("route status (-want +got):\n%s", diff)
	}
	var msg string
	for _, st := range res.Routes {
		if st.Name == "grab" {
			msg = cond(st.Parents[0].Conditions, string(gwv1.RouteConditionPartiallyInvalid)).Message
		}
	}
	for _, s := range []string{`Exact "/login"`, `Prefix "/api/"`, "a route of another namespace"} {
		if !strings.Contains(msg, s) {
			t.Errorf("message %q does not say %s", msg, s)
		}
	}
	if strings.Contains(msg, "site") || strings.Contains(msg, "apps") {
		t.Errorf("message %q names another namespace's route", msg)
	}

	if len(res.Published) != 1 {
		t.Fatalf("published %d hostnames", len(res.Published))
	}
	got := publish.Rules(res.Published[0].Spec, publish.Env{Namespace: "edge"})
	var order []string
	for _, r := range publish.TunnelConfig(got.Rules).Ingress {
		if r.Path != nil {
			order = append(order, *r.Path+" "+strings.TrimPrefix(strings.Split(r.Service, ".")[0], "http://"))
		}
	}
	wantOrder := []string{`^/login$ web`, `^/grab(/|$) grab`, `^/api(/|$) api`, `^(?:` + capture + `)$ grab`}
	if diff := cmp.Diff(wantOrder, order); diff != "" {
		t.Errorf("rules (-want +got):\n%s", diff)
	}
}

func cond(cs []metav1.Condition, t string) metav1.Condition {
	for _, c := range cs {
		if c.Type == t {
			return c
		}
	}
	return metav1.Condition{}
}

// A route is told of the other routes on its hostname by kind and name in
// its own namespace; those of other namespaces are counted, never named.
func TestRouteNamesHideOtherTenants(t *testing.T) {
	mk := func(ns, name string) *route {
		return &route{id: ns + "/" + name, kind: "HTTPRoute", status: RouteStatus{Namespace: ns, Name: name}}
	}
	me, sibling, theirs, more := mk("team-a", "web"), mk("team-a", "api"), mk("team-b", "shop"), mk("team-c", "blog")
	for _, tc := range []struct {
		others []*route
		want   string
	}{
		{[]*route{me, sibling}, "HTTPRoute web and HTTPRoute api"},
		{[]*route{me, theirs}, "HTTPRoute web and a route of another namespace"},
		{[]*route{sibling, theirs, more}, "HTTPRoute api and 2 routes of other namespaces"},
	} {
		if got := me.names(tc.others); got != tc.want {
			t.Errorf("names(%v) = %q, want %q", tc.others, got, tc.want)
		}
	}
}
