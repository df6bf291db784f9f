package gateway_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

// edge serves requests as Cloudflare's edge and cloudflared would (the
// simulator's), to origins named "host:port" as a rule's service names
// them; each origin answers its own name.
func edge(t *testing.T, origins map[string]string) *httptest.Server {
	t.Helper()
	addrs := map[string]string{}
	for hostport, name := range origins {
		o := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, name) }))
		t.Cleanup(o.Close)
		addrs[hostport] = strings.TrimPrefix(o.URL, "http://")
	}
	e := httptest.NewServer(p.Sim.Edge(sim.EdgeOptions{ResolveOrigin: func(hostport string) (string, bool) {
		a, ok := addrs[hostport]
		return a, ok
	}}))
	t.Cleanup(e.Close)
	return e
}

// visit is the status and body a visitor of host gets through the edge.
func visit(e *httptest.Server, host, path string) (int, string, error) {
	req, err := http.NewRequest(http.MethodGet, e.URL+path, nil)
	if err != nil {
		return 0, "", err
	}
	req.Host = host
	resp, err := e.Client().Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b)), err
}

// waitServed waits until each host's visitors get want: an origin's name,
// or "<status>" for an answer without one (Cloudflare's 1001 is 530).
func waitServed(t *testing.T, e *httptest.Server, want map[string]string) {
	t.Helper()
	wait.Eventually(t, wait.Patience, "the edge serves the hostnames", func() error {
		var wrong []string
		for host, w := range want {
			status, body, err := visit(e, host, "/")
			if err != nil {
				return err
			}
			got := body
			if status != http.StatusOK {
				got = fmt.Sprint(status)
			}
			if got != w {
				wrong = append(wrong, fmt.Sprintf("%s: got %q (%d %s), want %q", host, got, status, body, w))
			}
		}
		if len(wrong) > 0 {
			return fmt.Errorf("%s", strings.Join(wrong, "; "))
		}
		return nil
	})
}

func inSection(r *gwv1.HTTPRoute, section string) *gwv1.HTTPRoute {
	r.Spec.ParentRefs[0].SectionName = ptr.To(gwv1.SectionName(section))
	return r
}

// Wildcards end to end: a listener "*.l-<ns>.example.com" publishes its
// wildcard for a route that names no hostname, and a route naming
// "*.w-<ns>.example.com" publishes that wildcard: a proxied wildcard CNAME
// to the tunnel and a wildcard rule, so a visitor of any name below (at any
// depth, never the wildcard's parent) reaches the route's backend through
// Cloudflare's edge. A route naming foo.w-<ns>.example.com on the same
// tunnel beats the wildcard for that name (its own record, its rule first).
// Deleting the wildcard's route removes its record and rule, and the
// specific name stays served.
func TestWildcardHostnamesArePublished(t *testing.T) {
	t.Parallel()
	var lw, ww, foo string
	w := setup(t, func(gw *gwv1.Gateway) {
		lw = "*.l-" + gw.Namespace + ".example.com"
		gw.Spec.Listeners = append(gw.Spec.Listeners, gwv1.Listener{Name: "wild", Port: 80, Protocol: gwv1.HTTPProtocolType, Hostname: ptr.To(gwv1.Hostname(lw))})
	})
	ns := w.ns
	ww, foo = "*.w-"+ns+".example.com", "foo.w-"+ns+".example.com"
	for _, s := range []string{"web", "wild", "special"} {
		p.Create(t, service(ns, s, 8080))
	}
	origin := func(s string) string { return "http://" + s + "." + ns + ".svc.cluster.local:8080" }
	root := func(s string) gwv1.HTTPRouteRule { return pathRule(gwv1.PathMatchPathPrefix, "/", backend(s, 8080)) }
	byListener := inSection(route(ns, ns, "by-listener", nil, root("web")), "wild")
	wildRoute := inSection(route(ns, ns, "wild", []string{ww}, root("wild")), "http")
	special := inSection(route(ns, ns, "special", []string{foo}, root("special")), "http")
	for _, r := range []*gwv1.HTTPRoute{byListener, wildRoute, special} {
		p.Create(t, r)
	}
	waitRules(t, w.tunnelID, ns, map[string]string{lw + " ": origin("web"), ww + " ": origin("wild"), foo + " ": origin("special")})
	for _, r := range []*gwv1.HTTPRoute{byListener, wildRoute, special} {
		waitParentConditions(t, r, "Accepted=True/Accepted", "ResolvedRefs=True/ResolvedRefs")
	}
	wait.Eventually(t, wait.Patience, "a proxied CNAME to the tunnel for each wildcard and name", func() error {
		for _, h := range []string{lw, ww, foo} {
			if rs := records(t, h); len(rs) != 1 || rs[0].Type != "CNAME" || rs[0].Content != w.tunnelID+".cfargotunnel.com" || !rs[0].Proxied {
				return fmt.Errorf("DNS records of %s = %+v", h, rs)
			}
		}
		return nil
	})

	e := edge(t, map[string]string{
		"web." + ns + ".svc.cluster.local:8080":     "web",
		"wild." + ns + ".svc.cluster.local:8080":    "wild",
		"special." + ns + ".svc.cluster.local:8080": "special",
	})
	waitServed(t, e, map[string]string{
		"a.l-" + ns + ".example.com":     "web",
		"a.b.l-" + ns + ".example.com":   "web",
		"l-" + ns + ".example.com":       "530", // a wildcard does not answer for its parent
		"bar.w-" + ns + ".example.com":   "wild",
		"x.bar.w-" + ns + ".example.com": "wild",
		foo:                              "special",
		"x." + foo:                       "530", // foo's own record ends the wildcard below it (DNS)
	})

	p.DeleteAndWait(t, wildRoute)
	waitRules(t, w.tunnelID, ns, map[string]string{lw + " ": origin("web"), foo + " ": origin("special")})
	wait.Eventually(t, wait.Patience, "the wildcard's record deleted", func() error {
		if rs := records(t, ww); len(rs) > 0 {
			return fmt.Errorf("records of %s remain: %+v", ww, rs)
		}
		return nil
	})
	waitServed(t, e, map[string]string{"bar.w-" + ns + ".example.com": "530", foo: "special", "a.l-" + ns + ".example.com": "web"})

	p.DeleteAndWait(t, byListener)
	p.DeleteAndWait(t, special)
	waitRules(t, w.tunnelID, ns, map[string]string{})
	stopConnectors(w)
	p.DeleteAndWait(t, w.gateway)
	gone(t, &v1alpha1.CloudflareTunnel{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "public"}})
	accountClean(t, ns+"-public", lw, ww, foo)
}
