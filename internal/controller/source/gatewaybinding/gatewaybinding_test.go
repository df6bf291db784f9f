package gatewaybinding_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/externaldns"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/gatewaybinding"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/gatewaybinding/translate"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/providertest"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

var p *providertest.Provider

func TestMain(m *testing.M) { os.Exit(providertest.Run(m, &p)) }

// traefik is the Gateway controller the tests play: they write the routes'
// parent status as Traefik would, under its own field manager, so the
// routes' managedFields show whether anyone else wrote them.
const (
	traefik      = gwv1.GatewayController("traefik.io/gateway-controller")
	routeManager = "traefik-as-played-by-the-test"
)

var gatewayAPI sync.Once

// installGatewayAPI installs Gateway API's standard CRDs (v1.6.1's, from
// the Go module) while the provider runs, once for the whole package.
func installGatewayAPI(t *testing.T) {
	t.Helper()
	gatewayAPI.Do(func() { p.InstallThirdPartyCRDs(t, "gateway-api") })
}

// world is one test's namespace: a running CloudflareTunnel "edge", a
// GatewayClass of Traefik's controller, a Gateway "public" with listeners
// "web" (HTTP) and "admin", and Traefik's Service.
type world struct {
	ns, tunnelID string
	gateway      *gwv1.Gateway
}

func setup(t *testing.T) world {
	t.Helper()
	installGatewayAPI(t)
	ns := p.Namespace(t)
	cr := &v1alpha1.CloudflareTunnel{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "edge"},
		Spec:       v1alpha1.CloudflareTunnelSpec{TunnelName: ptr.To("edge-" + ns), Replicas: ptr.To[int32](1)},
	}
	p.Create(t, cr)
	class := &gwv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "traefik-" + ns}, Spec: gwv1.GatewayClassSpec{ControllerName: traefik}}
	p.Create(t, class)
	t.Cleanup(func() { _ = p.Client.Delete(context.Background(), class) })
	gw := &gwv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "public"},
		Spec: gwv1.GatewaySpec{GatewayClassName: gwv1.ObjectName(class.Name), Listeners: []gwv1.Listener{
			{Name: "web", Port: 8000, Protocol: gwv1.HTTPProtocolType},
			{Name: "admin", Port: 9000, Protocol: gwv1.HTTPProtocolType, Hostname: ptr.To(gwv1.Hostname("admin-" + ns + ".example.com"))},
		}},
	}
	p.Create(t, gw)
	p.Create(t, traefikService(ns))
	return world{ns: ns, tunnelID: p.TunnelID(t, cr), gateway: gw}
}

func traefikService(ns string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "traefik"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "web", Port: 80, TargetPort: intstr.FromInt32(8000)}}},
	}
}

func binding(ns string, mutate ...func(*v1alpha1.GatewayBinding)) *v1alpha1.GatewayBinding {
	b := &v1alpha1.GatewayBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "public-web"},
		Spec: v1alpha1.GatewayBindingSpec{
			TunnelRef:  v1alpha1.TunnelReference{Name: "edge"},
			GatewayRef: v1alpha1.GatewayListenerReference{Name: "public", SectionName: "web"},
			Origin:     v1alpha1.GatewayOrigin{Service: v1alpha1.GatewayServiceOrigin{Name: "traefik", Port: intstr.FromString("web")}},
		},
	}
	for _, m := range mutate {
		m(b)
	}
	return b
}

// route is an HTTPRoute attached to the Gateway "public" (listener
// section, or every listener when "").
func route(ns, name, section string, hosts ...string) *gwv1.HTTPRoute {
	ref := gwv1.ParentReference{Name: "public"}
	if section != "" {
		ref.SectionName = ptr.To(gwv1.SectionName(section))
	}
	r := &gwv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	r.Spec.ParentRefs = []gwv1.ParentReference{ref}
	for _, h := range hosts {
		r.Spec.Hostnames = append(r.Spec.Hostnames, gwv1.Hostname(h))
	}
	return r
}

// createRoute creates a route and answers for it as Traefik would:
// Accepted (or not) for its generation.
func createRoute(t *testing.T, r *gwv1.HTTPRoute, accepted bool) {
	t.Helper()
	if err := p.Client.Create(context.Background(), r, client.FieldOwner(routeManager)); err != nil {
		t.Fatal(err)
	}
	answer(t, r, accepted)
}

func answer(t *testing.T, r *gwv1.HTTPRoute, accepted bool) {
	t.Helper()
	status, reason := metav1.ConditionTrue, string(gwv1.RouteReasonAccepted)
	if !accepted {
		status, reason = metav1.ConditionFalse, string(gwv1.RouteReasonNotAllowedByListeners)
	}
	r.Status.Parents = []gwv1.RouteParentStatus{{
		ParentRef:      r.Spec.ParentRefs[0],
		ControllerName: traefik,
		Conditions: []metav1.Condition{{
			Type: string(gwv1.RouteConditionAccepted), Status: status, Reason: reason, Message: "as Traefik says",
			ObservedGeneration: r.Generation, LastTransitionTime: metav1.Now(),
		}},
	}}
	if err := p.Client.Status().Update(context.Background(), r, client.FieldOwner(routeManager)); err != nil {
		t.Fatal(err)
	}
}

func get(t *testing.T, b *v1alpha1.GatewayBinding) *v1alpha1.GatewayBinding {
	t.Helper()
	if err := p.Get(b); err != nil {
		t.Fatal(err)
	}
	return b
}

// waitCondition waits until the binding's condition has status and reason.
func waitCondition(t *testing.T, b *v1alpha1.GatewayBinding, ct xpv2.ConditionType, status corev1.ConditionStatus, reason string) xpv2.Condition {
	t.Helper()
	var c xpv2.Condition
	wait.Eventually(t, wait.Patience, fmt.Sprintf("%s %s=%s (%s)", b.Name, ct, status, reason), func() error {
		if err := p.Get(b); err != nil {
			return err
		}
		c = b.GetCondition(ct)
		if c.Status != status || string(c.Reason) != reason || c.ObservedGeneration != b.Generation {
			return fmt.Errorf("%s=%s %s: %s (hostnames %+v)", ct, c.Status, c.Reason, c.Message, b.Status.Hostnames)
		}
		return nil
	})
	return c
}

func publicHostnames(t *testing.T, b *v1alpha1.GatewayBinding) []string {
	t.Helper()
	l := &v1alpha1.PublicHostnameList{}
	if err := p.Client.List(context.Background(), l, client.InNamespace(b.Namespace), client.MatchingLabels{translate.LabelBinding: b.Name}); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ph := range l.Items {
		out = append(out, ph.Spec.Hostname)
	}
	slices.Sort(out)
	return out
}

// rules are the tunnel's configured hostnames and their services, as
// Cloudflare holds them.
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
			out[*r.Hostname] = r.Service
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

func states(b *v1alpha1.GatewayBinding) map[string]string {
	out := map[string]string{}
	for _, h := range b.Status.Hostnames {
		out[h.Route+" "+h.Hostname] = h.State
	}
	return out
}

func waitEvent(t *testing.T, ns, name, reason, contains string) {
	t.Helper()
	p.WaitWarning(t, ns, name, reason, contains)
}

// The provider runs normally without Gateway API: the binding's controller
// waits for the CRDs (the CRD gate) while everything else works, and starts
// once they are installed. It must run first in the package: the others
// are parallel, so they start once it is done.
func TestWaitsForGatewayAPI(t *testing.T) {
	ns := p.Namespace(t)
	cr := &v1alpha1.CloudflareTunnel{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "edge"},
		Spec:       v1alpha1.CloudflareTunnelSpec{TunnelName: ptr.To("edge-" + ns), Replicas: ptr.To[int32](1)},
	}
	p.Create(t, cr)
	b := binding(ns)
	p.Create(t, b)
	wait.Eventually(t, wait.Patience, "the CloudflareTunnel works without Gateway API", func() error {
		if err := p.Get(cr); err != nil {
			return err
		}
		if cr.Status.TunnelID == "" {
			return fmt.Errorf("no tunnel ID yet")
		}
		return nil
	})
	if got := get(t, b); len(got.Status.Conditions) > 0 || len(got.Finalizers) > 0 {
		t.Fatalf("the binding was reconciled before Gateway API was installed: %+v", got.Status)
	}
	installGatewayAPI(t)
	c := waitCondition(t, b, gatewaybinding.TypeResolvedRefs, corev1.ConditionFalse, translate.ReasonGatewayNotFound)
	if !strings.Contains(c.Message, `no Gateway "public"`) {
		t.Errorf("ResolvedRefs message = %q, want it to name the Gateway", c.Message)
	}
	waitEvent(t, ns, b.Name, translate.ReasonGatewayNotFound, "public")
}

// The KFlared path: the binding publishes exactly the hostnames of the
// routes Traefik accepted on the listener (a wildcard as a wildcard), each
// to Traefik's Service, with DNS records; the set follows routes added,
// un-accepted and deleted; and no route is ever written by the provider.
func TestPublishesTheAcceptedHostnames(t *testing.T) {
	t.Parallel() // each in its own namespace, after TestWaitsForGatewayAPI
	w := setup(t)
	ns := w.ns
	a, bHost, c, wild := "a-"+ns+".example.com", "b-"+ns+".example.com", "c-"+ns+".example.com", "*."+ns+".example.com"
	shop := route(ns, "shop", "web", a, bHost)
	createRoute(t, shop, true)
	everything := route(ns, "everything", "web", wild)
	createRoute(t, everything, true)
	createRoute(t, route(ns, "refused", "web", "refused-"+ns+".example.com"), false)
	createRoute(t, route(ns, "other-listener", "admin"), true)
	b := binding(ns)
	p.Create(t, b)

	waitCondition(t, b, xpv2.TypeReady, corev1.ConditionTrue, "Available")
	if got, want := publicHostnames(t, b), []string{wild, a, bHost}; !cmp.Equal(got, want) {
		t.Errorf("PublicHostnames = %v, want %v", got, want)
	}
	origin := "http://traefik." + ns + ".svc.cluster.local:80"
	got := rules(t, w.tunnelID)
	for _, h := range []string{a, bHost, wild} {
		if got[h] != origin {
			t.Errorf("tunnel rule for %s = %q, want %q (Traefik's Service)", h, got[h], origin)
		}
		if rs := records(t, h); len(rs) != 1 || rs[0].Content != w.tunnelID+".cfargotunnel.com" || !rs[0].Proxied {
			t.Errorf("DNS records of %s = %+v, want one proxied CNAME to the tunnel", h, rs)
		}
	}
	for _, h := range []string{"refused-" + ns + ".example.com", "admin-" + ns + ".example.com"} {
		if _, ok := got[h]; ok {
			t.Errorf("tunnel rule for %s exists: a route Traefik refused, or of another listener, must not be published", h)
		}
	}
	wantStates := map[string]string{
		"HTTPRoute/shop " + a:                              v1alpha1.HostnamePublished,
		"HTTPRoute/shop " + bHost:                          v1alpha1.HostnamePublished,
		"HTTPRoute/everything " + wild:                     v1alpha1.HostnamePublished,
		"HTTPRoute/refused refused-" + ns + ".example.com": translate.HostnameNotAccepted,
	}
	if diff := cmp.Diff(wantStates, states(get(t, b))); diff != "" {
		t.Errorf("status.hostnames (-want +got):\n%s", diff)
	}
	for _, h := range b.Status.Hostnames {
		if h.State == v1alpha1.HostnamePublished && h.CNAME != w.tunnelID+".cfargotunnel.com" {
			t.Errorf("hostname %s: cname = %q, want the tunnel's", h.Hostname, h.CNAME)
		}
	}

	// A route added: its hostname follows.
	createRoute(t, route(ns, "late", "", c), true)
	wait.Eventually(t, wait.Patience, c+" published", func() error {
		if got := rules(t, w.tunnelID)[c]; got != origin {
			return fmt.Errorf("rule for %s = %q", c, got)
		}
		// Its DNS record too: the step below checks that it stays so.
		if s := states(get(t, b))["HTTPRoute/late "+c]; s != v1alpha1.HostnamePublished {
			return fmt.Errorf("state of %s = %q", c, s)
		}
		return nil
	})

	// The late route changed: until Traefik answers its new generation, the
	// route keeps what it published; then the set follows.
	d := "d-" + ns + ".example.com"
	late := route(ns, "late", "")
	p.Edit(t, late, func() { late.Spec.Hostnames = []gwv1.Hostname{gwv1.Hostname(d)} }, client.FieldOwner(routeManager))
	wait.Eventually(t, wait.Patience, "the edit seen as not yet accepted", func() error {
		if s := states(get(t, b))["HTTPRoute/late "+d]; s != translate.HostnameNotAccepted {
			return fmt.Errorf("state of %s = %q", d, s)
		}
		return nil
	})
	if got := rules(t, w.tunnelID); got[c] != origin || got[d] != "" {
		t.Errorf("before Traefik answers: rules %v, want %s kept and %s not yet", got, c, d)
	}
	if s := states(b)["HTTPRoute/late "+c]; s != v1alpha1.HostnamePublished {
		t.Errorf("before Traefik answers: %s is %q in status, want still Published", c, s)
	}
	answer(t, late, true)
	wait.Eventually(t, wait.Patience, "the edit published", func() error {
		got := rules(t, w.tunnelID)
		if _, ok := got[c]; ok || got[d] != origin {
			return fmt.Errorf("rules %v, want %s and not %s", got, d, c)
		}
		return nil
	})

	// Traefik withdraws its acceptance of shop: a and b are unpublished,
	// DNS records included.
	if err := p.Get(shop); err != nil {
		t.Fatal(err)
	}
	answer(t, shop, false)
	wait.Eventually(t, wait.Patience, "shop's hostnames unpublished", func() error {
		got := rules(t, w.tunnelID)
		for _, h := range []string{a, bHost} {
			if _, ok := got[h]; ok {
				return fmt.Errorf("rule for %s still there", h)
			}
			if rs := records(t, h); len(rs) > 0 {
				return fmt.Errorf("DNS record of %s still there", h)
			}
		}
		return nil
	})

	// The late route and the wildcard's deleted: theirs go too.
	for _, r := range []*gwv1.HTTPRoute{route(ns, "late", ""), everything} {
		if err := p.Client.Delete(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	wait.Eventually(t, wait.Patience, d+" unpublished", func() error {
		if got := publicHostnames(t, b); len(got) > 0 {
			return fmt.Errorf("PublicHostnames left: %v", got)
		}
		if _, ok := rules(t, w.tunnelID)[d]; ok {
			return fmt.Errorf("rule for %s still there", d)
		}
		return nil
	})
	waitCondition(t, b, gatewaybinding.TypeProgrammed, corev1.ConditionFalse, gatewaybinding.ReasonNoHostnames)

	// The routes are Traefik's alone: the provider never wrote one, status
	// included.
	routes := &gwv1.HTTPRouteList{}
	if err := p.Client.List(context.Background(), routes, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, r := range routes.Items {
		for _, mf := range r.ManagedFields {
			if mf.Manager != routeManager {
				t.Errorf("HTTPRoute %s was written by %q (%s %s): only the Gateway's controller writes a route", r.Name, mf.Manager, mf.Operation, mf.Subresource)
			}
		}
	}
}

// An origin Service in another namespace needs that namespace's
// ReferenceGrant: without it nothing is published (RefNotPermitted); the
// grant publishes; revoking it unpublishes and removes the DNS records.
func TestCrossNamespaceOriginNeedsAGrant(t *testing.T) {
	t.Parallel() // each in its own namespace, after TestWaitsForGatewayAPI
	w := setup(t)
	ns := w.ns
	infra := p.Namespace(t)
	p.Create(t, traefikService(infra))
	host := "x-" + ns + ".example.com"
	createRoute(t, route(ns, "app", "web", host), true)
	b := binding(ns, func(b *v1alpha1.GatewayBinding) { b.Spec.Origin.Service.Namespace = infra })
	p.Create(t, b)

	c := waitCondition(t, b, gatewaybinding.TypeResolvedRefs, corev1.ConditionFalse, translate.ReasonRefNotPermitted)
	if !strings.Contains(c.Message, "ReferenceGrant") {
		t.Errorf("message %q does not say what is missing", c.Message)
	}
	waitEvent(t, ns, b.Name, translate.ReasonRefNotPermitted, infra)
	if got := publicHostnames(t, b); len(got) > 0 {
		t.Fatalf("published %v without a grant", got)
	}

	grant := &gwv1beta1.ReferenceGrant{
		ObjectMeta: metav1.ObjectMeta{Namespace: infra, Name: "tunnel-bindings"},
		Spec: gwv1beta1.ReferenceGrantSpec{
			From: []gwv1beta1.ReferenceGrantFrom{{Group: v1alpha1.Group, Kind: gwv1.Kind(v1alpha1.GatewayBindingKind), Namespace: gwv1.Namespace(ns)}},
			To:   []gwv1beta1.ReferenceGrantTo{{Group: "", Kind: "Service", Name: ptr.To(gwv1.ObjectName("traefik"))}},
		},
	}
	p.Create(t, grant)
	waitCondition(t, b, xpv2.TypeReady, corev1.ConditionTrue, "Available")
	if got, want := rules(t, w.tunnelID)[host], "http://traefik."+infra+".svc.cluster.local:80"; got != want {
		t.Errorf("rule for %s = %q, want %q", host, got, want)
	}
	if rs := records(t, host); len(rs) != 1 {
		t.Errorf("DNS records of %s = %+v, want one", host, rs)
	}

	if err := p.Client.Delete(context.Background(), grant); err != nil {
		t.Fatal(err)
	}
	waitCondition(t, b, gatewaybinding.TypeResolvedRefs, corev1.ConditionFalse, translate.ReasonRefNotPermitted)
	wait.Eventually(t, wait.Patience, "unpublished with the grant", func() error {
		if _, ok := rules(t, w.tunnelID)[host]; ok {
			return fmt.Errorf("rule still there")
		}
		if rs := records(t, host); len(rs) > 0 {
			return fmt.Errorf("DNS record still there")
		}
		return nil
	})
}

// Bad input loses nothing: a listener typo reports ListenerNotFound and
// keeps what is published; the fix resumes. Deleting the binding removes
// exactly what it made.
func TestATypoKeepsTheSiteUp(t *testing.T) {
	t.Parallel() // each in its own namespace, after TestWaitsForGatewayAPI
	w := setup(t)
	host := "typo-" + w.ns + ".example.com"
	createRoute(t, route(w.ns, "app", "web", host), true)
	b := binding(w.ns)
	p.Create(t, b)
	waitCondition(t, b, xpv2.TypeReady, corev1.ConditionTrue, "Available")

	p.Edit(t, b, func() { b.Spec.GatewayRef.SectionName = "wbe" })
	c := waitCondition(t, b, gatewaybinding.TypeResolvedRefs, corev1.ConditionFalse, translate.ReasonListenerNotFound)
	if !strings.Contains(c.Message, "web, admin") {
		t.Errorf("message %q does not list the listeners", c.Message)
	}
	waitEvent(t, w.ns, b.Name, translate.ReasonListenerNotFound, "wbe")
	p.WaitServed(t, 3, "GET", w.tunnelID+"/configurations$") // the tunnel's rules read at three more polls
	if _, ok := rules(t, w.tunnelID)[host]; !ok || len(records(t, host)) != 1 {
		t.Fatalf("the typo took %s down", host)
	}

	// A tunnel typo, with the listener fixed: Accepted=False, still kept.
	p.Edit(t, b, func() {
		b.Spec.GatewayRef.SectionName = "web"
		b.Spec.TunnelRef.Name = "egde"
	})
	waitCondition(t, b, gatewaybinding.TypeAccepted, corev1.ConditionFalse, "TunnelNotFound")
	waitEvent(t, w.ns, b.Name, "TunnelNotFound", "egde")
	if got := publicHostnames(t, b); len(got) != 1 || len(records(t, host)) != 1 {
		t.Fatalf("the tunnel typo took %s down (PublicHostnames %v)", host, got)
	}

	p.Edit(t, b, func() { b.Spec.TunnelRef.Name = "edge" })
	waitCondition(t, b, xpv2.TypeReady, corev1.ConditionTrue, "Available")

	p.DeleteAndWait(t, b)
	// The PublicHostname goes once its DNS record is deleted; the tunnel
	// drops its rule in its next configuration write.
	if rs := records(t, host); len(rs) > 0 {
		t.Errorf("DNS record of %s outlived its binding", host)
	}
	wait.Eventually(t, wait.Patience, "the rule of "+host+" removed", func() error {
		if _, ok := rules(t, w.tunnelID)[host]; ok {
			return fmt.Errorf("still in the tunnel's configuration")
		}
		return nil
	})
}

// A hostname another source published first is a conflict told on the
// binding; the other's is never taken over.
func TestAHostnameAlreadyPublishedIsAConflict(t *testing.T) {
	t.Parallel() // each in its own namespace, after TestWaitsForGatewayAPI
	w := setup(t)
	host := "taken-" + w.ns + ".example.com"
	mine := &v1alpha1.PublicHostname{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "first"},
		Spec: v1alpha1.PublicHostnameSpec{TunnelRef: v1alpha1.TunnelReference{Name: "edge"}, Hostname: host,
			Origin: &v1alpha1.Origin{URL: ptr.To("http://first." + w.ns + ".svc.cluster.local:80")}},
	}
	p.Create(t, mine)
	wait.Eventually(t, wait.Patience, "the first PublicHostname published", func() error {
		if got := rules(t, w.tunnelID)[host]; got != *mine.Spec.Origin.URL {
			return fmt.Errorf("rule = %q", got)
		}
		return nil
	})
	createRoute(t, route(w.ns, "app", "web", host), true)
	b := binding(w.ns)
	p.Create(t, b)
	c := waitCondition(t, b, gatewaybinding.TypeProgrammed, corev1.ConditionFalse, gatewaybinding.ReasonHostnameConflict)
	if !strings.Contains(c.Message, host) {
		t.Errorf("message %q does not name the hostname", c.Message)
	}
	if s := states(b)["HTTPRoute/app "+host]; s != v1alpha1.HostnameConflict {
		t.Errorf("state of %s = %q, want Conflict", host, s)
	}
	waitEvent(t, w.ns, b.Name, "HostnameConflict", host)
	if got := rules(t, w.tunnelID)[host]; got != *mine.Spec.Origin.URL {
		t.Errorf("rule = %q: the binding took over a hostname another source published", got)
	}
}

// DNS modes: None writes nothing and lists the records needed; ExternalDNS
// reports DNSReady=False while the DNSEndpoint kind is missing (with the
// hostnames on the tunnel), and writes one DNSEndpoint, accepted by its
// CRD's schema, once it is installed. The only test of the package that
// installs external-dns's CRD.
func TestDNSModes(t *testing.T) {
	t.Parallel() // each in its own namespace, after TestWaitsForGatewayAPI
	w := setup(t)
	// The admin listener's hostname is the ext route's: it names none.
	none, ext := "none-"+w.ns+".example.com", "admin-"+w.ns+".example.com"
	createRoute(t, route(w.ns, "none", "web", none), true)
	createRoute(t, route(w.ns, "ext", "admin"), true)

	byNone := binding(w.ns, func(b *v1alpha1.GatewayBinding) {
		b.Name = "no-dns"
		b.Spec.DNS.Mode = v1alpha1.DNSModeNone
	})
	p.Create(t, byNone)
	c := waitCondition(t, byNone, xpv2.TypeReady, corev1.ConditionTrue, "Available")
	if dns := byNone.GetCondition(gatewaybinding.TypeDNSReady); dns.Reason != gatewaybinding.ReasonNotManaged || !strings.Contains(dns.Message, w.tunnelID+".cfargotunnel.com") {
		t.Errorf("DNSReady = %+v, want NotManaged naming the CNAME target", dns)
	}
	if _, ok := rules(t, w.tunnelID)[none]; !ok {
		t.Errorf("%s is not on the tunnel (%s)", none, c.Message)
	}
	if rs := records(t, none); len(rs) > 0 {
		t.Errorf("DNS mode None wrote records: %+v", rs)
	}
	if h := byNone.Status.Hostnames; len(h) != 1 || h[0].CNAME != w.tunnelID+".cfargotunnel.com" {
		t.Errorf("status.hostnames = %+v, want the CNAME needed", h)
	}

	byExt := binding(w.ns, func(b *v1alpha1.GatewayBinding) {
		b.Name = "external-dns"
		b.Spec.GatewayRef.SectionName = "admin"
		b.Spec.DNS.Mode = v1alpha1.DNSModeExternalDNS
	})
	p.Create(t, byExt)
	c = waitCondition(t, byExt, gatewaybinding.TypeDNSReady, corev1.ConditionFalse, "DNSEndpointCRDMissing")
	if !strings.Contains(c.Message, "externaldns.k8s.io") {
		t.Errorf("DNSReady message %q does not name the missing kind", c.Message)
	}
	waitCondition(t, byExt, gatewaybinding.TypeProgrammed, corev1.ConditionTrue, gatewaybinding.ReasonProgrammed)
	if _, ok := rules(t, w.tunnelID)[ext]; !ok {
		t.Errorf("%s is not on the tunnel while the DNSEndpoint kind is missing", ext)
	}

	p.InstallThirdPartyCRDs(t, "external-dns")
	waitCondition(t, byExt, xpv2.TypeReady, corev1.ConditionTrue, "Available")
	ep := &unstructured.Unstructured{}
	ep.SetGroupVersionKind(externaldns.GroupVersionKind)
	if err := p.Client.Get(context.Background(), client.ObjectKey{Namespace: w.ns, Name: byExt.Name}, ep); err != nil {
		t.Fatalf("no DNSEndpoint: %v", err)
	}
	want := []any{map[string]any{
		"dnsName": ext, "recordType": "CNAME", "targets": []any{w.tunnelID + ".cfargotunnel.com"},
		"providerSpecific": []any{map[string]any{"name": v1alpha1.DefaultExternalDNSProxiedKey, "value": "true"}},
	}}
	if diff := cmp.Diff(want, ep.Object["spec"].(map[string]any)["endpoints"]); diff != "" {
		t.Errorf("DNSEndpoint endpoints (-want +got):\n%s", diff)
	}
	if rs := records(t, ext); len(rs) > 0 {
		t.Errorf("ExternalDNS mode wrote records through Cloudflare: %+v", rs)
	}
	// None mode writes no DNSEndpoint.
	if err := p.Client.Get(context.Background(), client.ObjectKey{Namespace: w.ns, Name: byNone.Name}, ep); err == nil {
		t.Errorf("DNS mode None wrote DNSEndpoint %s", byNone.Name)
	}

	// A DNSEndpoint of the binding's name that someone else wrote is left
	// alone: DNSEndpointConflict.
	foreign := &unstructured.Unstructured{}
	foreign.SetGroupVersionKind(externaldns.GroupVersionKind)
	foreign.SetNamespace(w.ns)
	foreign.SetName("taken")
	foreign.Object["spec"] = map[string]any{"endpoints": []any{map[string]any{"dnsName": "other.example.com", "recordType": "A", "targets": []any{"192.0.2.1"}}}}
	p.Create(t, foreign)
	taken := binding(w.ns, func(b *v1alpha1.GatewayBinding) {
		b.Name = "taken"
		b.Spec.GatewayRef.SectionName = "admin"
		b.Spec.DNS.Mode = v1alpha1.DNSModeExternalDNS
	})
	p.Create(t, taken)
	waitCondition(t, taken, gatewaybinding.TypeDNSReady, corev1.ConditionFalse, "DNSEndpointConflict")
	if err := p.Get(foreign); err != nil {
		t.Fatal(err)
	}
	if got := externaldns.Hosts(foreign); !cmp.Equal(got, []string{"other.example.com"}) || len(foreign.GetOwnerReferences()) > 0 {
		t.Errorf("the foreign DNSEndpoint was changed: hosts %v, owners %v", got, foreign.GetOwnerReferences())
	}
	p.DeleteAndWait(t, taken)
	if err := p.Get(foreign); err != nil {
		t.Errorf("deleting the binding deleted a DNSEndpoint it did not make: %v", err)
	}

	// The binding's deletion takes its DNSEndpoint along.
	p.DeleteAndWait(t, byExt)
	wait.Eventually(t, wait.Patience, "DNSEndpoint deleted", func() error {
		err := p.Client.Get(context.Background(), client.ObjectKey{Namespace: w.ns, Name: byExt.Name}, ep)
		if client.IgnoreNotFound(err) != nil {
			return err
		}
		if err == nil && ep.GetDeletionTimestamp() == nil {
			return fmt.Errorf("still there")
		}
		return nil
	})
}

// A binding may publish through another namespace's tunnel that is shared
// with its own; through one that is not, it is refused and what it had
// there goes.
func TestABindingThroughASharedTunnel(t *testing.T) {
	t.Parallel()
	platform := setup(t)
	team := setup(t) // its Gateway, routes and Traefik; its own tunnel unused
	cr := &v1alpha1.CloudflareTunnel{ObjectMeta: metav1.ObjectMeta{Namespace: platform.ns, Name: "edge"}}
	p.Edit(t, cr, func() { cr.Spec.AllowedNamespaces = &v1alpha1.AllowedNamespaces{From: v1alpha1.NamespacesFromAll} })
	host := "shared-" + team.ns + ".example.com"
	createRoute(t, route(team.ns, "shop", "web", host), true)
	b := binding(team.ns, func(b *v1alpha1.GatewayBinding) { b.Spec.TunnelRef.Namespace = platform.ns })
	p.Create(t, b)
	waitCondition(t, b, xpv2.TypeReady, corev1.ConditionTrue, "Available")
	origin := "http://traefik." + team.ns + ".svc.cluster.local:80"
	if got := rules(t, platform.tunnelID)[host]; got != origin {
		t.Fatalf("platform's tunnel rule for %s = %q, want %q", host, got, origin)
	}
	if rs := records(t, host); len(rs) != 1 || rs[0].Content != platform.tunnelID+".cfargotunnel.com" {
		t.Fatalf("DNS records of %s = %+v, want one to the shared tunnel", host, rs)
	}

	// No longer shared: refused, and unpublished.
	wait.Eventually(t, wait.Patience, "tunnel no longer shared", func() error {
		if err := p.Get(cr); err != nil {
			return err
		}
		cr.Spec.AllowedNamespaces = nil
		return p.Client.Update(context.Background(), cr)
	})
	waitCondition(t, b, gatewaybinding.TypeAccepted, corev1.ConditionFalse, "TunnelNotShared")
	wait.Eventually(t, wait.Patience, host+" unpublished", func() error {
		if _, ok := rules(t, platform.tunnelID)[host]; ok {
			return fmt.Errorf("rule for %s still there", host)
		}
		if rs := records(t, host); len(rs) != 0 {
			return fmt.Errorf("%d records for %s", len(rs), host)
		}
		return nil
	})
}
