package translate

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/annotation"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
)

func policies(names ...string) *v1alpha1.Access {
	a := &v1alpha1.Access{Required: ptr.To(true)}
	for _, n := range names {
		a.Policies = append(a.Policies, v1alpha1.AccessPolicyName{Name: n})
	}
	return a
}

var (
	tagA = strings.Repeat("a", 64)
	tagB = strings.Repeat("b", 64)
)

func explicit(required bool, tags ...string) *v1alpha1.Access {
	return &v1alpha1.Access{Required: ptr.To(required), TeamName: "acme", AudTags: tags}
}

func annotated(r gwv1.HTTPRoute, kv ...string) gwv1.HTTPRoute {
	r.Annotations = map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		r.Annotations[kv[i]] = kv[i+1]
	}
	return r
}

// TestAccess: which check each hostname is published with, and what is
// withheld. The hostnames' PublicHostnames carry the check; nothing is ever
// published without the one asked for.
func TestAccess(t *testing.T) {
	const ann = v1alpha1.AnnotationAccessPolicies
	phName := func(host string) string { return publish.ObjectName("public-web", publish.KindPublicHostname, host) }
	type host struct {
		Hostname, Route, State string
		Access                 *v1alpha1.Access // of the PublicHostname, when published
	}
	type want struct {
		Hosts []host
		Held  Held
		// Refused are the routes whose weaker check was refused.
		Refused []string
	}
	cases := map[string]struct {
		binding *v1alpha1.Access
		routes  []gwv1.HTTPRoute
		want    want
	}{
		"NoAccessAnywhere": {
			routes: []gwv1.HTTPRoute{accepted("a", 1, traefik, "web", "a.example.com")},
			want:   want{Hosts: []host{{"a.example.com", "HTTPRoute/a", v1alpha1.HostnamePending, nil}}},
		},
		"TheBindingsDefaultOnEveryHostname": {
			binding: policies("staff"),
			routes:  []gwv1.HTTPRoute{accepted("a", 1, traefik, "web", "a.example.com"), accepted("b", 2, traefik, "web", "b.example.com")},
			want: want{Hosts: []host{
				{"a.example.com", "HTTPRoute/a", v1alpha1.HostnamePending, policies("staff")},
				{"b.example.com", "HTTPRoute/b", v1alpha1.HostnamePending, policies("staff")},
			}},
		},
		"ARouteCannotSwapTheBindingsPolicies": {
			binding: policies("staff"),
			routes:  []gwv1.HTTPRoute{accepted("a", 1, traefik, "web", "a.example.com"), annotated(accepted("b", 2, traefik, "web", "b.example.com"), ann, "admins, oncall")},
			want: want{Hosts: []host{
				{"a.example.com", "HTTPRoute/a", v1alpha1.HostnamePending, policies("staff")},
				{"b.example.com", "HTTPRoute/b", v1alpha1.HostnamePending, policies("staff")},
			}, Refused: []string{"HTTPRoute/b"}},
		},
		"ARouteCannotAddAPolicy": {
			binding: policies("staff"),
			routes:  []gwv1.HTTPRoute{annotated(accepted("a", 1, traefik, "web", "a.example.com"), ann, "staff, contractors")},
			want:    want{Hosts: []host{{"a.example.com", "HTTPRoute/a", v1alpha1.HostnamePending, policies("staff")}}, Refused: []string{"HTTPRoute/a"}},
		},
		"AccessRequiredFalseWithATeamKeepsTheBindingsCheck": {
			binding: policies("staff"),
			routes: []gwv1.HTTPRoute{annotated(accepted("a", 1, traefik, "web", "a.example.com"),
				v1alpha1.AnnotationAccessTeam, "acme", v1alpha1.AnnotationAccessAudTags, tagA, v1alpha1.AnnotationAccessRequired, "false")},
			want: want{Hosts: []host{{"a.example.com", "HTTPRoute/a", v1alpha1.HostnamePending, policies("staff")}}, Refused: []string{"HTTPRoute/a"}},
		},
		"ARouteMayNarrowTheBindingsAudienceTags": {
			binding: explicit(true, tagA, tagB),
			routes:  []gwv1.HTTPRoute{annotated(accepted("a", 1, traefik, "web", "a.example.com"), v1alpha1.AnnotationAccessTeam, "acme", v1alpha1.AnnotationAccessAudTags, tagB)},
			want:    want{Hosts: []host{{"a.example.com", "HTTPRoute/a", v1alpha1.HostnamePending, explicit(true, tagB)}}},
		},
		"ARouteMayRequireWhatTheBindingLeavesOptional": {
			binding: explicit(false, tagA),
			routes:  []gwv1.HTTPRoute{annotated(accepted("a", 1, traefik, "web", "a.example.com"), ann, "admins")},
			want:    want{Hosts: []host{{"a.example.com", "HTTPRoute/a", v1alpha1.HostnamePending, policies("admins")}}},
		},
		"ARouteAnnotationWithoutABindingDefault": {
			routes: []gwv1.HTTPRoute{annotated(accepted("a", 1, traefik, "web", "a.example.com"), ann, "staff")},
			want:   want{Hosts: []host{{"a.example.com", "HTTPRoute/a", v1alpha1.HostnamePending, policies("staff")}}},
		},
		"AnEmptyAnnotationIsNoWayOut": {
			binding: policies("staff"),
			routes:  []gwv1.HTTPRoute{annotated(accepted("a", 1, traefik, "web", "a.example.com"), ann, " ")},
			want:    want{Hosts: []host{{"a.example.com", "HTTPRoute/a", v1alpha1.HostnameInvalid, nil}}, Held: Held{Routes: []string{"a"}, PublicHostnames: []string{phName("a.example.com")}}},
		},
		"AccessRequiredAloneIsNoWayOut": {
			binding: policies("staff"),
			routes:  []gwv1.HTTPRoute{annotated(accepted("a", 1, traefik, "web", "a.example.com"), v1alpha1.AnnotationAccessRequired, "false")},
			want:    want{Hosts: []host{{"a.example.com", "HTTPRoute/a", v1alpha1.HostnameInvalid, nil}}, Held: Held{Routes: []string{"a"}, PublicHostnames: []string{phName("a.example.com")}}},
		},
		"ABadPolicyNameKeepsWhatTheRoutePublished": {
			routes: []gwv1.HTTPRoute{annotated(accepted("a", 1, traefik, "web", "a.example.com"), ann, "Not_A_Name"), accepted("b", 2, traefik, "web", "b.example.com")},
			want: want{Hosts: []host{
				{"a.example.com", "HTTPRoute/a", v1alpha1.HostnameInvalid, nil},
				{"b.example.com", "HTTPRoute/b", v1alpha1.HostnamePending, nil},
			}, Held: Held{Routes: []string{"a"}, PublicHostnames: []string{phName("a.example.com")}}},
		},
		"TwoRoutesAlikeShareAHostname": {
			binding: policies("staff"),
			routes:  []gwv1.HTTPRoute{accepted("a", 1, traefik, "web", "a.example.com"), annotated(accepted("b", 2, traefik, "web", "a.example.com"), ann, "staff")},
			want:    want{Hosts: []host{{"a.example.com", "HTTPRoute/a", v1alpha1.HostnamePending, policies("staff")}}},
		},
		"TwoRoutesDisagreeingOnAHostnamesCheckPublishItNot": {
			binding: explicit(false, tagA),
			routes: []gwv1.HTTPRoute{
				accepted("a", 1, traefik, "web", "a.example.com", "only-a.example.com"),
				annotated(accepted("b", 2, traefik, "web", "a.example.com"), ann, "admins"),
			},
			want: want{Hosts: []host{
				{"a.example.com", "HTTPRoute/a", v1alpha1.HostnameConflict, nil},
				{"only-a.example.com", "HTTPRoute/a", v1alpha1.HostnamePending, explicit(false, tagA)},
				{"a.example.com", "HTTPRoute/b", v1alpha1.HostnameConflict, nil},
			}, Held: Held{PublicHostnames: []string{phName("a.example.com")}}},
		},
		"AnUnprotectedRouteAndAProtectedOneDisagree": {
			routes: []gwv1.HTTPRoute{
				accepted("a", 1, traefik, "web", "a.example.com"),
				annotated(accepted("b", 2, traefik, "web", "a.example.com"), ann, "admins"),
			},
			want: want{Hosts: []host{
				{"a.example.com", "HTTPRoute/a", v1alpha1.HostnameConflict, nil},
				{"a.example.com", "HTTPRoute/b", v1alpha1.HostnameConflict, nil},
			}, Held: Held{PublicHostnames: []string{phName("a.example.com")}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := fixture()
			in.Binding.Spec.Access = tc.binding
			in.HTTPRoutes = tc.routes
			res := Translate(in)
			byName := map[string]*v1alpha1.PublicHostname{}
			for _, ph := range res.Published {
				byName[ph.Name] = ph
			}
			got := want{Held: res.Held}
			for _, h := range res.Hostnames {
				g := host{Hostname: h.Hostname, Route: h.Route, State: h.State}
				if ph := byName[h.PublicHostname]; ph != nil && h.State == v1alpha1.HostnamePending {
					g.Access = ph.Spec.Access
				}
				got.Hosts = append(got.Hosts, g)
			}
			for _, r := range res.Refused {
				got.Refused = append(got.Refused, strings.SplitN(r, ":", 2)[0])
			}
			if len(res.Published) != len(byName) {
				t.Errorf("published %d PublicHostnames under %d names", len(res.Published), len(byName))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Translate (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRouteAccessNamesTheAnnotation: the problem a bad annotation makes
// names it, so the binding's condition and event say what to fix.
func TestRouteAccessNamesTheAnnotation(t *testing.T) {
	r := annotated(accepted("a", 1, traefik, "web"), v1alpha1.AnnotationAccessPolicies, "")
	c := annotation.ChildAccess(fixture().Binding.Spec.Access, "the binding's spec.access", r.Annotations)
	a, problem := c.Access, c.Problem
	want := "annotation " + v1alpha1.AnnotationAccessPolicies + ": names no AccessPolicy: the AccessPolicy objects of the namespace (or <namespace>/<name> of one shared with it), comma-separated; the hostnames are not published without their Access check"
	if a != nil || problem != want {
		t.Errorf("routeAccess: got %v, %q; want nil, %q", a, problem, want)
	}
}

// TestHeldKeepsOnlyProtected: a held PublicHostname stays only while it
// carries a required Access check.
func TestHeldKeepsOnlyProtected(t *testing.T) {
	held := Held{Routes: []string{"admin"}, PublicHostnames: []string{"by-name"}}
	ph := func(name, route string, a *v1alpha1.Access) *v1alpha1.PublicHostname {
		p := &v1alpha1.PublicHostname{Spec: v1alpha1.PublicHostnameSpec{Access: a}}
		p.Name, p.Labels = name, map[string]string{LabelRoute: route}
		return p
	}
	optional := policies("staff")
	optional.Required = ptr.To(false)
	cases := map[string]struct {
		ph   *v1alpha1.PublicHostname
		want bool
	}{
		"ProtectedByName":        {ph("by-name", "other", policies("staff")), true},
		"ProtectedByRoute":       {ph("x", "admin", &v1alpha1.Access{TeamName: "acme", AudTags: []string{"a"}}), true},
		"ProtectedButNotHeld":    {ph("x", "other", policies("staff")), false},
		"HeldButOpen":            {ph("by-name", "admin", nil), false},
		"HeldButTokensOptional":  {ph("by-name", "admin", optional), false},
		"RequiredDefaultsToTrue": {ph("by-name", "admin", &v1alpha1.Access{Policies: []v1alpha1.AccessPolicyName{{Name: "staff"}}}), true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := held.Keeps(tc.ph); got != tc.want {
				t.Errorf("Keeps = %v, want %v", got, tc.want)
			}
		})
	}
}
