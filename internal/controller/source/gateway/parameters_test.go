package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/externaldns"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/gateway"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/gateway/translate"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

var externalDNS sync.Once

// installExternalDNS installs external-dns's DNSEndpoint CRD while the
// provider runs, once for the whole package.
func installExternalDNS(t *testing.T) {
	t.Helper()
	externalDNS.Do(func() { p.InstallThirdPartyCRDs(t, "external-dns") })
}

func parametersRef(name string) *gwv1.GatewayInfrastructure {
	return &gwv1.GatewayInfrastructure{ParametersRef: &gwv1.LocalParametersReference{Group: v1alpha1.Group, Kind: gwv1.Kind(v1alpha1.GatewayParametersKind), Name: name}}
}

func tunnelOf(t *testing.T, ns string) *v1alpha1.CloudflareTunnel {
	t.Helper()
	cr := &v1alpha1.CloudflareTunnel{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "public"}}
	if err := p.Get(cr); err != nil {
		t.Fatal(err)
	}
	return cr
}

// waitTunnel waits until the tunnel made for the Gateway "public" of ns
// passes check.
func waitTunnel(t *testing.T, ns, what string, check func(v1alpha1.CloudflareTunnelSpec) error) {
	t.Helper()
	wait.Eventually(t, wait.Patience, "the made tunnel "+what, func() error {
		return check(tunnelOf(t, ns).Spec)
	})
}

// waitAccepted waits until the Gateway's Accepted condition of its
// current generation is status/reason, and returns it.
func waitAccepted(t *testing.T, gw *gwv1.Gateway, status metav1.ConditionStatus, reason string) metav1.Condition {
	t.Helper()
	var c metav1.Condition
	wait.Eventually(t, wait.Patience, fmt.Sprintf("Gateway Accepted=%s/%s", status, reason), func() error {
		if err := p.Get(gw); err != nil {
			return err
		}
		c = condition(gw.Status.Conditions, string(gwv1.GatewayConditionAccepted))
		if c.Status != status || c.Reason != reason || c.ObservedGeneration != gw.Generation {
			return fmt.Errorf("Accepted %s/%s (generation %d of %d): %s", c.Status, c.Reason, c.ObservedGeneration, gw.Generation, c.Message)
		}
		return nil
	})
	return c
}

func publicHostname(ns, host string) *v1alpha1.PublicHostname {
	gw := &gwv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "public"}}
	return &v1alpha1.PublicHostname{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: translate.PublicHostnameName(gw, host)}}
}

// stillPublished fails unless host's PublicHostname is there, not being
// deleted, and its rule on the tunnel.
func stillPublished(t *testing.T, ns, tunnelID, host string) {
	t.Helper()
	ph := publicHostname(ns, host)
	if err := p.Get(ph); err != nil || ph.DeletionTimestamp != nil {
		t.Errorf("PublicHostname of %s: %v, deleting %v; want it kept", host, err, ph.DeletionTimestamp)
	}
	if _, ok := rules(t, tunnelID)[host+" "]; !ok {
		t.Errorf("%s has no rule on the tunnel; want it kept", host)
	}
}

// The Gateway's GatewayParameters make its tunnel, and changing them
// changes it; parameters that cannot be read refuse the Gateway
// (InvalidParameters, a Warning) and keep the tunnel and what is
// published. Without parameters of its own, the Gateway takes its class's;
// a class naming parameters that do not exist is not accepted.
func TestGatewayParametersMakeTheTunnel(t *testing.T) {
	t.Parallel()
	w := setup(t, func(gw *gwv1.Gateway) {
		p.Create(t, &v1alpha1.GatewayParameters{ObjectMeta: metav1.ObjectMeta{Namespace: gw.Namespace, Name: "connector"},
			Spec: v1alpha1.GatewayParametersSpec{Replicas: ptr.To(int32(3)), NodeSelector: map[string]string{"pool": "edge"}}})
		gw.Spec.Infrastructure = parametersRef("connector")
	})
	ns, gw := w.ns, w.gateway
	waitTunnel(t, ns, "has the parameters' settings", func(s v1alpha1.CloudflareTunnelSpec) error {
		if ptr.Deref(s.Replicas, 0) != 3 || s.NodeSelector["pool"] != "edge" {
			return fmt.Errorf("replicas %d, nodeSelector %v", ptr.Deref(s.Replicas, 0), s.NodeSelector)
		}
		return nil
	})
	p.Create(t, service(ns, "web", 8080))
	host := "p-" + ns + ".example.com"
	p.Create(t, route(ns, ns, "site", []string{host}, pathRule(gwv1.PathMatchPathPrefix, "/", backend("web", 8080))))
	waitRules(t, w.tunnelID, ns, map[string]string{host + " ": "http://web." + ns + ".svc.cluster.local:8080"})

	params := &v1alpha1.GatewayParameters{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "connector"}}
	p.Edit(t, params, func() { params.Spec.Replicas = ptr.To(int32(1)) })
	waitTunnel(t, ns, "follows its parameters", func(s v1alpha1.CloudflareTunnelSpec) error {
		if ptr.Deref(s.Replicas, 0) != 1 {
			return fmt.Errorf("replicas %d, want 1", ptr.Deref(s.Replicas, 0))
		}
		return nil
	})

	// A typo: refused and told; the tunnel keeps its settings and the
	// hostname stays published. The condition is written after the
	// reconcile converged, so what is checked next is what it left.
	p.Edit(t, gw, func() { gw.Spec.Infrastructure = parametersRef("conector") })
	c := waitAccepted(t, gw, metav1.ConditionFalse, string(gwv1.GatewayReasonInvalidParameters))
	if !strings.Contains(c.Message, "do not exist") {
		t.Errorf("Accepted message %q does not say the parameters do not exist", c.Message)
	}
	p.WaitWarning(t, ns, gw.Name, string(gwv1.GatewayReasonInvalidParameters), "conector")
	if r := ptr.Deref(tunnelOf(t, ns).Spec.Replicas, 0); r != 1 {
		t.Errorf("replicas %d after a typo, want 1 kept", r)
	}
	stillPublished(t, ns, w.tunnelID, host)

	// Another kind: refused the same way.
	p.Edit(t, gw, func() {
		gw.Spec.Infrastructure = &gwv1.GatewayInfrastructure{ParametersRef: &gwv1.LocalParametersReference{Group: "", Kind: "ConfigMap", Name: "connector"}}
	})
	c = waitAccepted(t, gw, metav1.ConditionFalse, string(gwv1.GatewayReasonInvalidParameters))
	if !strings.Contains(c.Message, "does not read") {
		t.Errorf("Accepted message %q does not say the kind is not read", c.Message)
	}
	stillPublished(t, ns, w.tunnelID, host)

	// The class's parameters, of another namespace, when the Gateway names
	// none; a class naming missing ones is not accepted.
	infra := p.Namespace(t)
	p.Create(t, &v1alpha1.GatewayParameters{ObjectMeta: metav1.ObjectMeta{Namespace: infra, Name: "class"},
		Spec: v1alpha1.GatewayParametersSpec{Image: ptr.To("cloudflare/cloudflared:2026.9.0")}})
	p.Edit(t, w.class, func() {
		w.class.Spec.ParametersRef = &gwv1.ParametersReference{Group: v1alpha1.Group, Kind: gwv1.Kind(v1alpha1.GatewayParametersKind), Name: "class", Namespace: ptr.To(gwv1.Namespace(infra))}
	})
	p.Edit(t, gw, func() { gw.Spec.Infrastructure = nil })
	waitAccepted(t, gw, metav1.ConditionTrue, string(gwv1.GatewayReasonAccepted))
	waitTunnel(t, ns, "has the class's settings, not merged with the Gateway's former ones", func(s v1alpha1.CloudflareTunnelSpec) error {
		if ptr.Deref(s.Image, "") != "cloudflare/cloudflared:2026.9.0" || ptr.Deref(s.Replicas, 0) != 2 || len(s.NodeSelector) > 0 {
			return fmt.Errorf("image %q, replicas %d, nodeSelector %v", ptr.Deref(s.Image, ""), ptr.Deref(s.Replicas, 0), s.NodeSelector)
		}
		return nil
	})
	p.Edit(t, w.class, func() { w.class.Spec.ParametersRef.Name = "gone" })
	wait.Eventually(t, wait.Patience, "GatewayClass Accepted=False/InvalidParameters", func() error {
		if err := p.Get(w.class); err != nil {
			return err
		}
		if c := condition(w.class.Status.Conditions, string(gwv1.GatewayClassConditionStatusAccepted)); c.Status != metav1.ConditionFalse || c.Reason != string(gwv1.GatewayClassReasonInvalidParameters) {
			return fmt.Errorf("Accepted %s/%s: %s", c.Status, c.Reason, c.Message)
		}
		return nil
	})
	waitAccepted(t, gw, metav1.ConditionFalse, string(gwv1.GatewayReasonInvalidParameters))
	p.WaitWarning(t, metav1.NamespaceDefault, w.class.Name, string(gwv1.GatewayClassReasonInvalidParameters), "gone")
	stillPublished(t, ns, w.tunnelID, host)
}

func dnsEndpoint(ns, name string) (*unstructured.Unstructured, error) {
	ep := &unstructured.Unstructured{}
	ep.SetGroupVersionKind(externaldns.GroupVersionKind)
	err := p.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, ep)
	return ep, err
}

// endpointGone waits until the Gateway's DNSEndpoint is gone.
func endpointGone(t *testing.T, ns, name string) {
	t.Helper()
	wait.Eventually(t, wait.Patience, "DNSEndpoint gone", func() error {
		ep, err := dnsEndpoint(ns, name)
		if kerrors.IsNotFound(err) || err == nil && ep.GetDeletionTimestamp() != nil {
			return nil
		}
		return fmt.Errorf("still there (%v)", err)
	})
}

func waitRecords(t *testing.T, host string, n int) {
	t.Helper()
	wait.Eventually(t, wait.Patience, fmt.Sprintf("%d DNS records of %s", n, host), func() error {
		if rs := records(t, host); len(rs) != n {
			return fmt.Errorf("records %+v", rs)
		}
		return nil
	})
}

// A Gateway's DNS mode, by annotation or parameters: DNSRecord makes
// records through Cloudflare, ExternalDNS one DNSEndpoint (and no record),
// None neither; switching keeps no stale record of the other kind. An
// annotation and parameters that disagree refuse the Gateway and keep the
// DNSEndpoint.
func TestDNSModesPerGateway(t *testing.T) {
	t.Parallel()
	installExternalDNS(t)
	w := setup(t)
	ns, gw := w.ns, w.gateway
	p.Create(t, service(ns, "web", 8080))
	host := "dns-" + ns + ".example.com"
	p.Create(t, route(ns, ns, "site", []string{host}, pathRule(gwv1.PathMatchPathPrefix, "/", backend("web", 8080))))
	waitRecords(t, host, 1)

	endpoints := func(proxiedKey string) []any {
		return []any{map[string]any{
			"dnsName": host, "recordType": "CNAME", "targets": []any{w.tunnelID + ".cfargotunnel.com"},
			"providerSpecific": []any{map[string]any{"name": proxiedKey, "value": "true"}},
		}}
	}
	waitEndpoint := func(want []any) {
		t.Helper()
		wait.Eventually(t, wait.Patience, "the Gateway's DNSEndpoint", func() error {
			ep, err := dnsEndpoint(ns, gw.Name)
			if err != nil {
				return err
			}
			if diff := cmp.Diff(want, ep.Object["spec"].(map[string]any)["endpoints"]); diff != "" {
				return fmt.Errorf("endpoints (-want +got):\n%s", diff)
			}
			return nil
		})
	}

	p.Edit(t, gw, func() { gw.Annotations = map[string]string{v1alpha1.AnnotationDNS: v1alpha1.DNSModeExternalDNS} })
	waitEndpoint(endpoints(v1alpha1.DefaultExternalDNSProxiedKey))
	waitRecords(t, host, 0)
	wait.Eventually(t, wait.Patience, "the DNSEndpoint condition", func() error {
		if err := p.Get(gw); err != nil {
			return err
		}
		if c := condition(gw.Status.Conditions, gateway.ConditionDNSEndpoint); c.Status != metav1.ConditionTrue {
			return fmt.Errorf("%s %s/%s: %s", gateway.ConditionDNSEndpoint, c.Status, c.Reason, c.Message)
		}
		return nil
	})

	p.Edit(t, gw, func() { gw.Annotations[v1alpha1.AnnotationDNS] = v1alpha1.DNSModeNone })
	endpointGone(t, ns, gw.Name)
	waitAccepted(t, gw, metav1.ConditionTrue, string(gwv1.GatewayReasonAccepted))
	if rs := records(t, host); len(rs) > 0 {
		t.Errorf("None mode: records %+v", rs)
	}
	stillPublished(t, ns, w.tunnelID, host)

	// The parameters' dns, with its own proxied key.
	p.Create(t, &v1alpha1.GatewayParameters{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "dns"},
		Spec: v1alpha1.GatewayParametersSpec{DNS: &v1alpha1.BindingDNS{Mode: v1alpha1.DNSModeExternalDNS, ExternalDNS: &v1alpha1.ExternalDNSOptions{ProxiedKey: "example.com/proxied"}}}})
	p.Edit(t, gw, func() {
		delete(gw.Annotations, v1alpha1.AnnotationDNS)
		gw.Spec.Infrastructure = parametersRef("dns")
	})
	waitEndpoint(endpoints("example.com/proxied"))

	// The annotation disagreeing: refused, the DNSEndpoint kept.
	p.Edit(t, gw, func() { gw.Annotations = map[string]string{v1alpha1.AnnotationDNS: v1alpha1.DNSModeDNSRecord} })
	waitAccepted(t, gw, metav1.ConditionFalse, string(gwv1.GatewayReasonInvalidParameters))
	if _, err := dnsEndpoint(ns, gw.Name); err != nil {
		t.Errorf("DNSEndpoint after a refused change: %v; want it kept", err)
	}

	// Back to DNSRecord: the DNSEndpoint goes, the record comes back.
	p.Edit(t, gw, func() { gw.Spec.Infrastructure = nil })
	endpointGone(t, ns, gw.Name)
	waitRecords(t, host, 1)
}

// The made tunnel is shared as the listeners admit routes: All shares it
// with every namespace, and a route of another namespace publishes; Same
// shares it with none, and that route is refused and unpublished. A
// namespace's ProviderConfig cannot serve a shared tunnel: refused.
func TestSharingFollowsAllowedRoutes(t *testing.T) {
	t.Parallel()
	w := setup(t, func(gw *gwv1.Gateway) {
		gw.Spec.Listeners[0].AllowedRoutes = &gwv1.AllowedRoutes{Namespaces: &gwv1.RouteNamespaces{From: ptr.To(gwv1.NamespacesFromAll)}}
	})
	ns, gw := w.ns, w.gateway
	waitTunnel(t, ns, "shared with all", func(s v1alpha1.CloudflareTunnelSpec) error {
		if s.AllowedNamespaces == nil || s.AllowedNamespaces.From != v1alpha1.NamespacesFromAll {
			return fmt.Errorf("allowedNamespaces %+v", s.AllowedNamespaces)
		}
		return nil
	})
	team := p.Namespace(t)
	p.Create(t, service(team, "web", 8080))
	host := "team-" + ns + ".example.com"
	r := route(team, ns, "site", []string{host}, pathRule(gwv1.PathMatchPathPrefix, "/", backend("web", 8080)))
	p.Create(t, r)
	// Shared, the tunnel takes another source of that namespace naming it
	// "<namespace>/<name>": a PublicHostname written by hand.
	direct := "direct-" + ns + ".example.com"
	p.Create(t, &v1alpha1.PublicHostname{ObjectMeta: metav1.ObjectMeta{Namespace: team, Name: "direct"}, Spec: v1alpha1.PublicHostnameSpec{
		TunnelRef: v1alpha1.TunnelReference{Namespace: ns, Name: "public"}, Hostname: direct, DNS: v1alpha1.DNSNone,
		Origin: &v1alpha1.Origin{URL: ptr.To("http://web." + team + ".svc.cluster.local:8080")},
	}})
	waitRules(t, w.tunnelID, ns, map[string]string{
		host + " ":   "http://web." + team + ".svc.cluster.local:8080",
		direct + " ": "http://web." + team + ".svc.cluster.local:8080",
	})
	waitParentConditions(t, r, "Accepted=True/Accepted", "ResolvedRefs=True/ResolvedRefs")

	p.Create(t, &v1alpha1.GatewayParameters{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "own-credentials"},
		Spec: v1alpha1.GatewayParametersSpec{ProviderConfigRef: &xpv2.ProviderConfigReference{Kind: "ProviderConfig", Name: "team"}}})
	p.Edit(t, gw, func() { gw.Spec.Infrastructure = parametersRef("own-credentials") })
	c := waitAccepted(t, gw, metav1.ConditionFalse, string(gwv1.GatewayReasonInvalidParameters))
	if !strings.Contains(c.Message, "ClusterProviderConfig") {
		t.Errorf("Accepted message %q does not name ClusterProviderConfig", c.Message)
	}
	stillPublished(t, ns, w.tunnelID, host)
	p.Edit(t, gw, func() { gw.Spec.Infrastructure = nil })

	p.Edit(t, gw, func() { gw.Spec.Listeners[0].AllowedRoutes.Namespaces.From = ptr.To(gwv1.NamespacesFromSame) })
	waitParentConditions(t, r, "Accepted=False/NotAllowedByListeners", "ResolvedRefs=True/ResolvedRefs")
	// Unshared: the route and the other namespace's PublicHostname go.
	waitRules(t, w.tunnelID, ns, map[string]string{})
	waitTunnel(t, ns, "unshared", func(s v1alpha1.CloudflareTunnelSpec) error {
		if s.AllowedNamespaces != nil && s.AllowedNamespaces.From != v1alpha1.NamespacesFromSame {
			return fmt.Errorf("allowedNamespaces %+v", s.AllowedNamespaces)
		}
		return nil
	})
}

// protectedRule says whether host has a rule on the tunnel, and whether
// every rule of it requires an Access check.
func protectedRule(t *testing.T, tunnelID, host string) (found, protected bool) {
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
	protected = true
	for _, r := range c.Ingress {
		if ptr.Deref(r.Hostname, "") != host {
			continue
		}
		found = true
		protected = protected && r.OriginRequest != nil && r.OriginRequest.Access != nil && ptr.Deref(r.OriginRequest.Access.Required, false)
	}
	return found, found && protected
}

// A route whose Access annotation becomes unusable keeps its protected
// hostname published with its check (fails closed without taking it down),
// and an unprotected hostname of a route now asking for a check it cannot
// have is unpublished.
func TestAnInvalidAccessAnnotationKeepsProtected(t *testing.T) {
	t.Parallel()
	w := setup(t)
	ns := w.ns
	p.Create(t, &ztv1alpha1.AccessPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "admins"},
		Spec: ztv1alpha1.AccessPolicySpec{ForProvider: ztv1alpha1.AccessPolicyParameters{
			Name: "admins-" + ns, Decision: "allow", Include: []ztv1alpha1.AccessRule{{Email: ptr.To("root@example.com")}},
		}},
	})
	p.Create(t, service(ns, "web", 8080))
	guarded, open := "guarded-"+ns+".example.com", "open-"+ns+".example.com"
	admin := route(ns, ns, "admin", []string{guarded}, pathRule(gwv1.PathMatchPathPrefix, "/", backend("web", 8080)))
	admin.Annotations = map[string]string{v1alpha1.AnnotationAccessPolicies: "admins"}
	p.Create(t, admin)
	site := route(ns, ns, "site", []string{open}, pathRule(gwv1.PathMatchPathPrefix, "/", backend("web", 8080)))
	p.Create(t, site)
	wait.Eventually(t, wait.Patience, guarded+" published behind Access, "+open+" without", func() error {
		if found, protected := protectedRule(t, w.tunnelID, guarded); !found || !protected {
			return fmt.Errorf("%s: rule %v, protected %v", guarded, found, protected)
		}
		if found, _ := protectedRule(t, w.tunnelID, open); !found {
			return fmt.Errorf("%s: no rule", open)
		}
		return nil
	})

	p.Edit(t, admin, func() { admin.Annotations[v1alpha1.AnnotationAccessPolicies] = " " })
	p.Edit(t, site, func() { site.Annotations = map[string]string{v1alpha1.AnnotationAccessPolicies: " "} })
	waitParentConditions(t, admin, "Accepted=False/UnsupportedValue", "ResolvedRefs=True/ResolvedRefs")
	waitParentConditions(t, site, "Accepted=False/UnsupportedValue", "ResolvedRefs=True/ResolvedRefs")
	gone(t, publicHostname(ns, open))
	wait.Eventually(t, wait.Patience, open+" unpublished", func() error {
		if found, _ := protectedRule(t, w.tunnelID, open); found {
			return fmt.Errorf("still has a rule")
		}
		return nil
	})
	// The same reconcile kept the guarded one: it is still there, still
	// behind its check.
	ph := publicHostname(ns, guarded)
	if err := p.Get(ph); err != nil || ph.DeletionTimestamp != nil || ph.Spec.Access == nil {
		t.Fatalf("PublicHostname of %s: %v, deleting %v, access %+v; want it kept with its check", guarded, err, ph.DeletionTimestamp, ph.Spec.Access)
	}
	if found, protected := protectedRule(t, w.tunnelID, guarded); !found || !protected {
		t.Errorf("%s after a bad annotation: rule %v, protected %v; want it kept behind Access", guarded, found, protected)
	}
}

// A route of another namespace names its own namespace's AccessPolicies:
// its unqualified "admins" is its namespace's, never the Gateway's
// namespace's policy of that name. Until that policy is shared with the
// Gateway's namespace (where its PublicHostname is), the hostname is not
// published at all (fails closed); once shared, it is published behind
// the check.
func TestAnotherNamespacesRouteNamesItsOwnPolicies(t *testing.T) {
	t.Parallel()
	w := setup(t, func(gw *gwv1.Gateway) {
		gw.Spec.Listeners[0].AllowedRoutes = &gwv1.AllowedRoutes{Namespaces: &gwv1.RouteNamespaces{From: ptr.To(gwv1.NamespacesFromAll)}}
	})
	ns := w.ns
	team := p.Namespace(t)
	policy := func(ns string) *ztv1alpha1.AccessPolicy {
		return &ztv1alpha1.AccessPolicy{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "admins"},
			Spec: ztv1alpha1.AccessPolicySpec{ForProvider: ztv1alpha1.AccessPolicyParameters{
				Name: "admins-" + ns, Decision: "allow", Include: []ztv1alpha1.AccessRule{{Email: ptr.To("root@example.com")}},
			}},
		}
	}
	// The Gateway's namespace has a policy of the same name, shared with
	// nobody: the route of the other namespace must not get it.
	p.Create(t, policy(ns))
	own := policy(team)
	p.Create(t, own)
	p.Create(t, service(team, "web", 8080))
	host := "tenant-" + ns + ".example.com"
	r := route(team, ns, "site", []string{host}, pathRule(gwv1.PathMatchPathPrefix, "/", backend("web", 8080)))
	r.Annotations = map[string]string{v1alpha1.AnnotationAccessPolicies: "admins"}
	p.Create(t, r)
	waitParentConditions(t, r, "Accepted=True/Accepted", "ResolvedRefs=True/ResolvedRefs")

	ph := publicHostname(ns, host)
	wait.Eventually(t, wait.Patience, "the PublicHostname names "+team+"/admins and says it is not shared", func() error {
		if err := p.Get(ph); err != nil {
			return err
		}
		want := []v1alpha1.AccessPolicyName{{Namespace: team, Name: "admins"}}
		if ph.Spec.Access == nil || !cmp.Equal(ph.Spec.Access.Policies, want) {
			return fmt.Errorf("access %+v, want policies %v", ph.Spec.Access, want)
		}
		for _, c := range ph.Status.Conditions {
			if strings.Contains(c.Message, "is not shared with namespace "+ns) {
				return nil
			}
		}
		return fmt.Errorf("conditions %+v do not say the policy is not shared", ph.Status.Conditions)
	})
	// The PublicHostname has been reconciled and refused: nothing of the
	// hostname is on the tunnel, neither open nor behind the Gateway's
	// namespace's policy.
	if found, _ := protectedRule(t, w.tunnelID, host); found {
		t.Fatalf("%s has a rule on the tunnel while its policy is not shared with namespace %s", host, ns)
	}

	p.Edit(t, own, func() { own.Spec.AllowedNamespaces = &ztv1alpha1.AllowedNamespaces{From: "All"} })
	wait.Eventually(t, wait.Patience, host+" published behind Access once shared", func() error {
		if found, protected := protectedRule(t, w.tunnelID, host); !found || !protected {
			return fmt.Errorf("rule %v, protected %v", found, protected)
		}
		return nil
	})
}
