package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/gateway/translate"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/providertest"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

var p *providertest.Provider

func TestMain(m *testing.M) { os.Exit(providertest.Run(m, &p)) }

var gatewayAPI sync.Once

// installGatewayAPI installs Gateway API's standard CRDs (v1.6.1's) while
// the provider runs, once for the whole package.
func installGatewayAPI(t *testing.T) {
	t.Helper()
	gatewayAPI.Do(func() { p.InstallThirdPartyCRDs(t, "gateway-api") })
}

// world is one test's namespace with a GatewayClass of this provider and a
// Gateway "public" whose tunnel is Ready.
type world struct {
	ns, tunnelID string
	class        *gwv1.GatewayClass
	gateway      *gwv1.Gateway
}

func setup(t *testing.T, edit ...func(*gwv1.Gateway)) world {
	t.Helper()
	installGatewayAPI(t)
	ns := p.Namespace(t)
	class := &gwv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "cloudflare-" + ns}, Spec: gwv1.GatewayClassSpec{ControllerName: translate.ControllerName}}
	p.Create(t, class)
	t.Cleanup(func() { _ = p.Client.Delete(context.Background(), class) })
	gw := &gwv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "public"},
		Spec: gwv1.GatewaySpec{GatewayClassName: gwv1.ObjectName(class.Name), Listeners: []gwv1.Listener{
			{Name: "http", Port: 80, Protocol: gwv1.HTTPProtocolType},
		}},
	}
	for _, e := range edit {
		e(gw)
	}
	p.Create(t, gw)
	id := p.RunTunnel(t, &v1alpha1.CloudflareTunnel{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: gw.Name}})
	return world{ns: ns, tunnelID: id, class: class, gateway: gw}
}

// stopConnectors plays cloudflared stopping: Cloudflare refuses to delete
// a tunnel with connections.
func stopConnectors(w world) { p.Sim.SetConnectors(w.tunnelID, 0) }

func service(ns, name string, port int32) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: port}}}}
}

func backend(name string, port int32) gwv1.HTTPBackendRef {
	return gwv1.HTTPBackendRef{BackendRef: gwv1.BackendRef{BackendObjectReference: gwv1.BackendObjectReference{Name: gwv1.ObjectName(name), Port: ptr.To(gwv1.PortNumber(port))}}}
}

func pathRule(t gwv1.PathMatchType, value string, b gwv1.HTTPBackendRef) gwv1.HTTPRouteRule {
	return gwv1.HTTPRouteRule{Matches: []gwv1.HTTPRouteMatch{{Path: &gwv1.HTTPPathMatch{Type: ptr.To(t), Value: ptr.To(value)}}}, BackendRefs: []gwv1.HTTPBackendRef{b}}
}

// route is an HTTPRoute of namespace ns attached to the Gateway "public"
// of namespace gwNS.
func route(ns, gwNS, name string, hosts []string, rules ...gwv1.HTTPRouteRule) *gwv1.HTTPRoute {
	r := &gwv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	r.Spec.ParentRefs = []gwv1.ParentReference{{Name: "public", Namespace: ptr.To(gwv1.Namespace(gwNS))}}
	for _, h := range hosts {
		r.Spec.Hostnames = append(r.Spec.Hostnames, gwv1.Hostname(h))
	}
	r.Spec.Rules = rules
	return r
}

// rules are the tunnel's configured rules, "<hostname> <path>" → service,
// as Cloudflare holds them.
func rules(t *testing.T, tunnelID string) map[string]string {
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
	out := map[string]string{}
	for _, r := range c.Ingress {
		if r.Hostname != nil {
			out[*r.Hostname+" "+ptr.Deref(r.Path, "")] = r.Service
		}
	}
	return out
}

func records(t *testing.T, name string) []cloudflare.DNSRecord {
	t.Helper()
	rs, err := p.Cloudflare.ListDNSRecords(context.Background(), sim.ZoneID("example.com"), cloudflare.DNSRecordFilter{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// waitRules waits until the tunnel's rules for hostnames ending in suffix
// are want.
func waitRules(t *testing.T, tunnelID, suffix string, want map[string]string) {
	t.Helper()
	wait.Eventually(t, wait.Patience, "the tunnel's rules", func() error {
		got := map[string]string{}
		for k, v := range rules(t, tunnelID) {
			if strings.Contains(k, suffix) {
				got[k] = v
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			return fmt.Errorf("rules (-want +got):\n%s", diff)
		}
		return nil
	})
}

// parentConditions are the route's conditions in this provider's parent
// entries, "Type=Status/Reason", sorted.
func parentConditions(t *testing.T, r *gwv1.HTTPRoute) []string {
	t.Helper()
	if err := p.Get(r); err != nil {
		t.Fatal(err)
	}
	return ourConditions(r.Status.Parents, r.Generation)
}

// ourConditions are the conditions of generation in this provider's parent
// entries of a route of either kind, "Type=Status/Reason", sorted.
func ourConditions(parents []gwv1.RouteParentStatus, generation int64) []string {
	var out []string
	for _, ps := range parents {
		if ps.ControllerName != translate.ControllerName {
			continue
		}
		for _, c := range ps.Conditions {
			if c.ObservedGeneration == generation {
				out = append(out, fmt.Sprintf("%s=%s/%s", c.Type, c.Status, c.Reason))
			}
		}
	}
	sort.Strings(out)
	return out
}

func waitParentConditions(t *testing.T, r *gwv1.HTTPRoute, want ...string) {
	t.Helper()
	sort.Strings(want)
	wait.Eventually(t, wait.Patience, "route "+r.Name+" parent status", func() error {
		if got := parentConditions(t, r); !slices.Equal(got, want) {
			return fmt.Errorf("got %v, want %v (parents %+v)", got, want, r.Status.Parents)
		}
		return nil
	})
}

func condition(cs []metav1.Condition, t string) metav1.Condition {
	for _, c := range cs {
		if c.Type == t {
			return c
		}
	}
	return metav1.Condition{}
}

func gone(t *testing.T, o client.Object) {
	t.Helper()
	wait.Eventually(t, wait.Patience, fmt.Sprintf("%T %s gone", o, o.GetName()), func() error {
		err := p.Client.Get(context.Background(), types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}, o)
		if kerrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there (%v)", err)
	})
}

// accountClean waits until Cloudflare holds no live tunnel of the name,
// and no DNS record of the hostnames.
func accountClean(t *testing.T, tunnelName string, hosts ...string) {
	t.Helper()
	wait.Eventually(t, wait.Patience, "the account is clean", func() error {
		ts, err := p.Cloudflare.ListTunnels(context.Background(), cloudflare.TunnelFilter{Name: tunnelName})
		if err != nil {
			return err
		}
		if len(ts) > 0 {
			return fmt.Errorf("tunnel %s still exists", tunnelName)
		}
		for _, h := range hosts {
			if rs := records(t, h); len(rs) > 0 {
				return fmt.Errorf("records of %s remain: %+v", h, rs)
			}
		}
		return nil
	})
}

// A Gateway of the class is a tunnel: Programmed with the tunnel's address
// once Ready, its class Accepted. An HTTPRoute with two hostnames and three
// path rules publishes each hostname with its paths, each to the backend
// the route names; a header match is reported and not published; deleting
// the route and the Gateway leaves the account clean.
func TestAGatewayIsATunnel(t *testing.T) {
	t.Parallel()
	w := setup(t)
	ns := w.ns
	gw := w.gateway
	wait.Eventually(t, wait.Patience, "Gateway Programmed with the tunnel's address", func() error {
		if err := p.Get(gw); err != nil {
			return err
		}
		c := condition(gw.Status.Conditions, string(gwv1.GatewayConditionProgrammed))
		if c.Status != metav1.ConditionTrue || c.ObservedGeneration != gw.Generation {
			return fmt.Errorf("Programmed %s %s: %s", c.Status, c.Reason, c.Message)
		}
		want := []gwv1.GatewayStatusAddress{{Type: ptr.To(gwv1.HostnameAddressType), Value: w.tunnelID + ".cfargotunnel.com"}}
		if diff := cmp.Diff(want, gw.Status.Addresses); diff != "" {
			return fmt.Errorf("addresses (-want +got):\n%s", diff)
		}
		return nil
	})
	if c := condition(gw.Status.Conditions, string(gwv1.GatewayConditionAccepted)); c.Status != metav1.ConditionTrue {
		t.Errorf("Gateway Accepted = %+v", c)
	}
	wait.Eventually(t, wait.Patience, "GatewayClass Accepted", func() error {
		if err := p.Get(w.class); err != nil {
			return err
		}
		if c := condition(w.class.Status.Conditions, string(gwv1.GatewayClassConditionStatusAccepted)); c.Status != metav1.ConditionTrue {
			return fmt.Errorf("Accepted %s %s", c.Status, c.Reason)
		}
		return nil
	})

	p.Create(t, service(ns, "web", 8080))
	p.Create(t, service(ns, "api", 9090))
	a, b := "a-"+ns+".example.com", "b-"+ns+".example.com"
	site := route(ns, ns, "site", []string{a, b},
		pathRule(gwv1.PathMatchPathPrefix, "/", backend("web", 8080)),
		pathRule(gwv1.PathMatchPathPrefix, "/api", backend("api", 9090)),
		pathRule(gwv1.PathMatchExact, "/healthz", backend("api", 9090)),
		gwv1.HTTPRouteRule{Matches: []gwv1.HTTPRouteMatch{{Headers: []gwv1.HTTPHeaderMatch{{Name: "x-canary", Value: "1"}}, Path: &gwv1.HTTPPathMatch{Type: ptr.To(gwv1.PathMatchPathPrefix), Value: ptr.To("/canary")}}}, BackendRefs: []gwv1.HTTPBackendRef{backend("api", 9090)}})
	p.Create(t, site)
	web, api := "http://web."+ns+".svc.cluster.local:8080", "http://api."+ns+".svc.cluster.local:9090"
	want := map[string]string{}
	for _, h := range []string{a, b} {
		want[h+" "] = web
		want[h+" ^/api(/|$)"] = api
		want[h+" ^/healthz$"] = api
	}
	waitRules(t, w.tunnelID, ns, want)
	waitParentConditions(t, site, "Accepted=True/Accepted", "ResolvedRefs=True/ResolvedRefs", "PartiallyInvalid=True/UnsupportedValue")
	wait.Eventually(t, wait.Patience, "a proxied CNAME to the tunnel for each hostname", func() error {
		for _, h := range []string{a, b} {
			if rs := records(t, h); len(rs) != 1 || rs[0].Content != w.tunnelID+".cfargotunnel.com" || !rs[0].Proxied {
				return fmt.Errorf("DNS records of %s = %+v", h, rs)
			}
		}
		return nil
	})
	wait.Eventually(t, wait.Patience, "listener attachedRoutes", func() error {
		if err := p.Get(gw); err != nil {
			return err
		}
		if len(gw.Status.Listeners) != 1 || gw.Status.Listeners[0].AttachedRoutes != 1 {
			return fmt.Errorf("listeners %+v", gw.Status.Listeners)
		}
		return nil
	})

	// A route naming only what cloudflared cannot do is not accepted, and
	// publishes nothing.
	c := "c-" + ns + ".example.com"
	split := route(ns, ns, "split", []string{c}, gwv1.HTTPRouteRule{BackendRefs: []gwv1.HTTPBackendRef{backend("web", 8080), backend("api", 9090)}})
	p.Create(t, split)
	waitParentConditions(t, split, "Accepted=False/UnsupportedValue", "ResolvedRefs=True/ResolvedRefs")
	if got := rules(t, w.tunnelID); got[c+" "] != "" {
		t.Errorf("the weighted split was published: %v", got)
	}

	// Deleting the route unpublishes it; deleting the Gateway removes its
	// tunnel.
	p.DeleteAndWait(t, site)
	waitRules(t, w.tunnelID, ns, map[string]string{})
	stopConnectors(w)
	p.DeleteAndWait(t, gw)
	gone(t, &v1alpha1.CloudflareTunnel{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "public"}})
	accountClean(t, ns+"-public", a, b)
	wait.Eventually(t, wait.Patience, "the split route's entry removed", func() error {
		if got := parentConditions(t, split); len(got) > 0 {
			return fmt.Errorf("entries remain: %v", got)
		}
		return nil
	})
}

// A backend of another namespace is used only with a ReferenceGrant there;
// revoking it unpublishes. allowedRoutes All takes routes of any namespace.
func TestACrossNamespaceBackendNeedsAGrant(t *testing.T) {
	t.Parallel()
	w := setup(t, func(gw *gwv1.Gateway) {
		gw.Spec.Listeners[0].AllowedRoutes = &gwv1.AllowedRoutes{Namespaces: &gwv1.RouteNamespaces{From: ptr.To(gwv1.NamespacesFromAll)}}
	})
	team, apps := p.Namespace(t), p.Namespace(t)
	p.Create(t, service(apps, "web", 8080))
	h := "x-" + w.ns + ".example.com"
	ref := backend("web", 8080)
	ref.Namespace = ptr.To(gwv1.Namespace(apps))
	r := route(team, w.ns, "x", []string{h}, gwv1.HTTPRouteRule{BackendRefs: []gwv1.HTTPBackendRef{ref}})
	p.Create(t, r)
	waitParentConditions(t, r, "Accepted=True/Accepted", "ResolvedRefs=False/RefNotPermitted")
	// Gateway API: the rule's requests are answered 500, never sent to
	// the Service.
	waitRules(t, w.tunnelID, w.ns, map[string]string{h + " ": "http_status:500"})
	grant := &gwv1beta1.ReferenceGrant{
		ObjectMeta: metav1.ObjectMeta{Namespace: apps, Name: "routes-of-team"},
		Spec: gwv1beta1.ReferenceGrantSpec{
			From: []gwv1beta1.ReferenceGrantFrom{{Group: gwv1.GroupName, Kind: "HTTPRoute", Namespace: gwv1.Namespace(team)}},
			To:   []gwv1beta1.ReferenceGrantTo{{Kind: "Service"}},
		},
	}
	p.Create(t, grant)
	waitParentConditions(t, r, "Accepted=True/Accepted", "ResolvedRefs=True/ResolvedRefs")
	waitRules(t, w.tunnelID, w.ns, map[string]string{h + " ": "http://web." + apps + ".svc.cluster.local:8080"})
	p.DeleteAndWait(t, grant)
	waitParentConditions(t, r, "Accepted=True/Accepted", "ResolvedRefs=False/RefNotPermitted")
	waitRules(t, w.tunnelID, w.ns, map[string]string{h + " ": "http_status:500"})
}

// A listener allowing routes of its own namespace only (the default)
// refuses another's, says so in the route's entry, and counts it not.
// Deleting the class first releases everything the Gateway made.
func TestAllowedRoutesAndDeletingTheClass(t *testing.T) {
	t.Parallel()
	w := setup(t)
	other := p.Namespace(t)
	p.Create(t, service(other, "web", 8080))
	p.Create(t, service(w.ns, "web", 8080))
	refused := route(other, w.ns, "refused", []string{"refused-" + w.ns + ".example.com"}, pathRule(gwv1.PathMatchPathPrefix, "/", backend("web", 8080)))
	p.Create(t, refused)
	waitParentConditions(t, refused, "Accepted=False/NotAllowedByListeners", "ResolvedRefs=True/ResolvedRefs")
	own := "own-" + w.ns + ".example.com"
	mine := route(w.ns, w.ns, "own", []string{own}, pathRule(gwv1.PathMatchPathPrefix, "/", backend("web", 8080)))
	p.Create(t, mine)
	waitRules(t, w.tunnelID, w.ns, map[string]string{own + " ": "http://web." + w.ns + ".svc.cluster.local:8080"})
	gw := w.gateway
	wait.Eventually(t, wait.Patience, "attachedRoutes counts the own route only", func() error {
		if err := p.Get(gw); err != nil {
			return err
		}
		if len(gw.Status.Listeners) != 1 || gw.Status.Listeners[0].AttachedRoutes != 1 {
			return fmt.Errorf("listeners %+v", gw.Status.Listeners)
		}
		return nil
	})

	stopConnectors(w)
	p.DeleteAndWait(t, w.class)
	gone(t, &v1alpha1.CloudflareTunnel{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "public"}})
	accountClean(t, w.ns+"-public", own)
	wait.Eventually(t, wait.Patience, "the Gateway let go", func() error {
		if err := p.Get(gw); err != nil {
			return err
		}
		// Its status is back to the CRD's default: no controller answers.
		if c := condition(gw.Status.Conditions, string(gwv1.GatewayConditionProgrammed)); len(gw.Finalizers) > 0 || c.Status != metav1.ConditionUnknown || len(gw.Status.Addresses) > 0 {
			return fmt.Errorf("finalizers %v, status %+v", gw.Finalizers, gw.Status)
		}
		return nil
	})
	waitParentConditions(t, mine)
	waitParentConditions(t, refused)
}
