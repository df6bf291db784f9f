package translate

import (
	"testing"
)

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
