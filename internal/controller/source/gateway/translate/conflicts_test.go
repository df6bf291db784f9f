package translate

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// TestListenerConflicts: listeners of the same protocol and hostname are
// all Conflicted and take no route, whatever their ports; the others keep
// working; the Gateway says ListenersNotValid, accepted while one works.
func TestListenerConflicts(t *testing.T) {
	l := func(name string, port int32, proto gwv1.ProtocolType, host string) gwv1.Listener {
		out := gwv1.Listener{Name: gwv1.SectionName(name), Port: gwv1.PortNumber(port), Protocol: proto,
			AllowedRoutes: &gwv1.AllowedRoutes{Namespaces: &gwv1.RouteNamespaces{From: ptr.To(gwv1.NamespacesFromAll)}}}
		if host != "" {
			out.Hostname = ptr.To(gwv1.Hostname(host))
		}
		return out
	}
	type want struct {
		gateway   string
		listeners map[string]string // name → Accepted/Conflicted
		attached  map[string]int32
		published []string
		routes    map[string][]verdict
	}
	route := httpRoute("apps", "r", 1, []string{"a.example.com"}, pathRule(gwv1.PathMatchPathPrefix, "/", backendRef("web", 8080)))
	cases := map[string]struct {
		listeners []gwv1.Listener
		want      want
	}{
		"SameHostnameOtherPort": {
			listeners: []gwv1.Listener{l("a", 80, gwv1.HTTPProtocolType, "a.example.com"), l("b", 8080, gwv1.HTTPProtocolType, "a.example.com"), l("any", 80, gwv1.HTTPProtocolType, "")},
			want: want{
				gateway:   "True/ListenersNotValid",
				listeners: map[string]string{"a": "False/HostnameConflict True/HostnameConflict", "b": "False/HostnameConflict True/HostnameConflict", "any": "True/Accepted -"},
				attached:  map[string]int32{"a": 0, "b": 0, "any": 1},
				published: []string{"a.example.com"},
				routes:    map[string][]verdict{"apps/r": {{"Accepted": "True/Accepted", "ResolvedRefs": "True/ResolvedRefs"}}},
			},
		},
		"NoHostnameTwice": {
			listeners: []gwv1.Listener{l("a", 80, gwv1.HTTPProtocolType, ""), l("b", 8080, gwv1.HTTPProtocolType, "")},
			want: want{
				gateway:   "False/ListenersNotValid",
				listeners: map[string]string{"a": "False/HostnameConflict True/HostnameConflict", "b": "False/HostnameConflict True/HostnameConflict"},
				attached:  map[string]int32{"a": 0, "b": 0},
				routes:    map[string][]verdict{"apps/r": {{"Accepted": "False/NotAllowedByListeners", "ResolvedRefs": "True/ResolvedRefs"}}},
			},
		},
		"HTTPAndHTTPSOfOneHostnameAreDistinct": {
			listeners: []gwv1.Listener{l("http", 80, gwv1.HTTPProtocolType, "a.example.com"), l("https", 443, gwv1.HTTPSProtocolType, "a.example.com")},
			want: want{
				gateway:   "True/Accepted",
				listeners: map[string]string{"http": "True/Accepted -", "https": "True/Accepted -"},
				attached:  map[string]int32{"http": 1, "https": 1},
				published: []string{"a.example.com"},
				routes:    map[string][]verdict{"apps/r": {{"Accepted": "True/Accepted", "ResolvedRefs": "True/ResolvedRefs"}}},
			},
		},
		"UnsupportedProtocolsDoNotConflict": {
			listeners: []gwv1.Listener{l("tcp1", 5432, gwv1.TCPProtocolType, ""), l("tcp2", 5433, gwv1.TCPProtocolType, ""), l("http", 80, gwv1.HTTPProtocolType, "")},
			want: want{
				gateway:   "True/Accepted",
				listeners: map[string]string{"tcp1": "False/UnsupportedProtocol -", "tcp2": "False/UnsupportedProtocol -", "http": "True/Accepted -"},
				attached:  map[string]int32{"tcp1": 0, "tcp2": 0, "http": 1},
				published: []string{"a.example.com"},
				routes:    map[string][]verdict{"apps/r": {{"Accepted": "True/Accepted", "ResolvedRefs": "True/ResolvedRefs"}}},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			gw := gateway(func(gw *gwv1.Gateway) { gw.Spec.Listeners = tc.listeners })
			res := Translate(Input{Gateway: gw, Services: services(service("apps", "web", 8080)), HTTPRoutes: []gwv1.HTTPRoute{route}, Namespaces: map[string]map[string]string{}})
			got := want{
				gateway:   string(res.Accepted.Status) + "/" + res.Accepted.Reason,
				listeners: map[string]string{},
				attached:  map[string]int32{},
				routes:    verdicts(res.Routes),
			}
			for _, ph := range res.Published {
				got.published = append(got.published, ph.Spec.Hostname)
			}
			for _, st := range res.Listeners {
				a, c := "-", "-"
				for _, cond := range st.Conditions {
					switch cond.Type {
					case string(gwv1.ListenerConditionAccepted):
						a = string(cond.Status) + "/" + cond.Reason
					case string(gwv1.ListenerConditionConflicted):
						c = string(cond.Status) + "/" + cond.Reason
					}
				}
				got.listeners[string(st.Name)] = a + " " + c
				got.attached[string(st.Name)] = st.AttachedRoutes
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
