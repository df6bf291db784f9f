package gatewaybinding_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/gatewaybinding"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

// accessPolicy makes an AccessPolicy of ns letting in whom rule names.
func accessPolicy(t *testing.T, ns, name string, rule ztv1alpha1.AccessRule) {
	t.Helper()
	p.Create(t, &ztv1alpha1.AccessPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: ztv1alpha1.AccessPolicySpec{ForProvider: ztv1alpha1.AccessPolicyParameters{
			Name: name + "-" + ns, Decision: "allow", Include: []ztv1alpha1.AccessRule{rule},
		}},
	})
}

// audiences are the Access audience tags on each of host's rules in the
// tunnel's configuration, "" for a rule without an Access check.
func audiences(t *testing.T, tunnelID, host string) []string {
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
	var out []string
	for _, r := range c.Ingress {
		if ptr.Deref(r.Hostname, "") != host {
			continue
		}
		aud := ""
		if r.OriginRequest != nil && r.OriginRequest.Access != nil && len(r.OriginRequest.Access.AudTag) == 1 && ptr.Deref(r.OriginRequest.Access.Required, false) {
			aud = r.OriginRequest.Access.AudTag[0]
		}
		out = append(out, aud)
	}
	return out
}

// protectedBy waits until every rule of host carries one audience tag, and
// returns it.
func protectedBy(t *testing.T, tunnelID, host string) string {
	t.Helper()
	var aud string
	wait.Eventually(t, wait.Patience, host+" published behind its application", func() error {
		auds := audiences(t, tunnelID, host)
		if len(auds) == 0 {
			return fmt.Errorf("no rule")
		}
		for _, a := range auds {
			if a == "" {
				t.Fatalf("%s published without its Access check: %v", host, auds)
			}
		}
		aud = auds[0]
		return nil
	})
	return aud
}

// lets says who Access lets into host and who it refuses.
func lets(t *testing.T, host string, in, out string) {
	t.Helper()
	for email, want := range map[string]bool{in: true, out: false} {
		if got, why := p.Sim.AccessDecision(host, "/", sim.AccessIdentity{Email: email}); got != want {
			t.Errorf("%s: %s let in: %v (%s), want %v", host, email, got, why, want)
		}
	}
}

// The binding's spec.access protects every hostname it publishes, each
// behind an Access application of its own; a route's annotation naming
// other policies cannot swap it (an application lets in whoever any of its
// policies admits): its hostname keeps the binding's check, and the binding
// says so; a bad annotation is told on the binding and publishes nothing
// without its check, keeping what was protected.
func TestABindingsHostnamesBehindAccess(t *testing.T) {
	t.Parallel() // each in its own namespace, after TestWaitsForGatewayAPI
	w := setup(t)
	ns := w.ns
	accessPolicy(t, ns, "staff", ztv1alpha1.AccessRule{EmailDomain: ptr.To("example.com")})
	accessPolicy(t, ns, "admins", ztv1alpha1.AccessRule{Email: ptr.To("root@example.com")})
	shopHost, adminHost, newHost := "shop-"+ns+".example.com", "admin-ui-"+ns+".example.com", "new-"+ns+".example.com"
	createRoute(t, route(ns, "shop", "web", shopHost), true)
	admin := route(ns, "admin", "web", adminHost)
	admin.Annotations = map[string]string{v1alpha1.AnnotationAccessPolicies: "admins"}
	createRoute(t, admin, true)
	b := binding(ns, func(b *v1alpha1.GatewayBinding) {
		b.Spec.Access = &v1alpha1.Access{Policies: []v1alpha1.AccessPolicyName{{Name: "staff"}}}
	})
	p.Create(t, b)

	waitCondition(t, b, gatewaybinding.TypeProgrammed, corev1.ConditionFalse, gatewaybinding.ReasonAccessWeakeningRefused)
	waitEvent(t, ns, b.Name, gatewaybinding.ReasonAccessWeakeningRefused, "HTTPRoute/admin")
	shopAud, adminAud := protectedBy(t, w.tunnelID, shopHost), protectedBy(t, w.tunnelID, adminHost)
	if shopAud == adminAud {
		t.Errorf("both hostnames carry the audience %s: each needs an application of its own", shopAud)
	}
	lets(t, shopHost, "ada@example.com", "eve@example.net")  // the binding's staff policy
	lets(t, adminHost, "ada@example.com", "eve@example.net") // still the binding's, not the route's admins

	// A bad annotation on the admin route, and a new route with one: told
	// on the binding, and nothing goes out without its check.
	p.Edit(t, admin, func() { admin.Annotations[v1alpha1.AnnotationAccessPolicies] = " " })
	answer(t, admin, true)
	fresh := route(ns, "fresh", "web", newHost)
	fresh.Annotations = map[string]string{v1alpha1.AnnotationAccessPolicies: "Not_A_Policy"}
	createRoute(t, fresh, true)
	wait.Eventually(t, wait.Patience, "both bad annotations told on Programmed", func() error {
		c := get(t, b).GetCondition(gatewaybinding.TypeProgrammed)
		if c.Status != corev1.ConditionFalse || string(c.Reason) != gatewaybinding.ReasonInvalidAnnotation {
			return fmt.Errorf("Programmed=%s %s: %s", c.Status, c.Reason, c.Message)
		}
		for _, want := range []string{"HTTPRoute/admin", "HTTPRoute/fresh", v1alpha1.AnnotationAccessPolicies} {
			if !strings.Contains(c.Message, want) {
				return fmt.Errorf("Programmed message %q does not name %s", c.Message, want)
			}
		}
		return nil
	})
	waitEvent(t, ns, b.Name, gatewaybinding.ReasonInvalidAnnotation, v1alpha1.AnnotationAccessPolicies)
	p.WaitServed(t, 3, "GET", w.tunnelID+"/configurations$") // the tunnel's rules read at three more polls
	if auds := audiences(t, w.tunnelID, adminHost); len(auds) == 0 || auds[0] != adminAud {
		t.Errorf("%s rules carry %v after a bad annotation, want them kept with %s", adminHost, auds, adminAud)
	}
	lets(t, adminHost, "ada@example.com", "eve@example.net")
	if auds := audiences(t, w.tunnelID, newHost); len(auds) > 0 || slices.Contains(publicHostnames(t, b), newHost) {
		t.Errorf("%s published (rules %v, PublicHostnames %v) with a bad Access annotation", newHost, auds, publicHostnames(t, b))
	}
	for _, h := range get(t, b).Status.Hostnames {
		if h.Route == "HTTPRoute/fresh" && h.State != v1alpha1.HostnameInvalid {
			t.Errorf("%s of HTTPRoute/fresh is %s, want %s", h.Hostname, h.State, v1alpha1.HostnameInvalid)
		}
	}

	// Fixed: the new route's hostname goes out behind its own application,
	// with the binding's policies said again.
	p.Edit(t, fresh, func() { fresh.Annotations[v1alpha1.AnnotationAccessPolicies] = "staff" })
	answer(t, fresh, true)
	p.Edit(t, admin, func() { admin.Annotations = nil })
	answer(t, admin, true)
	waitCondition(t, b, xpv2.TypeReady, corev1.ConditionTrue, "Available")
	if protectedBy(t, w.tunnelID, newHost) == shopAud {
		t.Errorf("%s shares %s's application", newHost, shopHost)
	}
	lets(t, newHost, "ada@example.com", "eve@example.net")
}

// A route's access-policies with access-required "false" (a variation of
// the team and audience opting out) under a binding that requires
// its policies: the hostname is published with the binding's required
// check and no other, told on the binding (Programmed=False,
// AccessWeakeningRefused, and a Warning event naming the route); never
// open. Dropping the annotation clears it.
func TestARouteCannotLowerTheBindingsAccess(t *testing.T) {
	t.Parallel() // each in its own namespace, after TestWaitsForGatewayAPI
	w := setup(t)
	ns := w.ns
	accessPolicy(t, ns, "staff", ztv1alpha1.AccessRule{EmailDomain: ptr.To("example.com")})
	accessPolicy(t, ns, "everyone", ztv1alpha1.AccessRule{Everyone: ptr.To(true)})
	host := "optout-" + ns + ".example.com"
	r := route(ns, "optout", "web", host)
	r.Annotations = map[string]string{v1alpha1.AnnotationAccessPolicies: "everyone", v1alpha1.AnnotationAccessRequired: "false"}
	createRoute(t, r, true)
	b := binding(ns, func(b *v1alpha1.GatewayBinding) {
		b.Spec.Access = &v1alpha1.Access{Policies: []v1alpha1.AccessPolicyName{{Name: "staff"}}}
	})
	p.Create(t, b)

	waitCondition(t, b, gatewaybinding.TypeProgrammed, corev1.ConditionFalse, gatewaybinding.ReasonAccessWeakeningRefused)
	waitEvent(t, ns, b.Name, gatewaybinding.ReasonAccessWeakeningRefused, "HTTPRoute/optout")
	protectedBy(t, w.tunnelID, host) // fails at once on a rule without a required check
	lets(t, host, "ada@example.com", "eve@example.net")
	phs := publicHostnames(t, b)
	if len(phs) != 1 {
		t.Fatalf("PublicHostnames %v, want one", phs)
	}
	wait.Eventually(t, wait.Patience, host+" Published with the binding's check", func() error {
		if s := states(get(t, b))["HTTPRoute/optout "+host]; s != v1alpha1.HostnamePublished {
			return fmt.Errorf("%s is %s", host, s)
		}
		return nil
	})
	protectedBy(t, w.tunnelID, host)

	p.Edit(t, r, func() { r.Annotations = nil })
	answer(t, r, true)
	waitCondition(t, b, xpv2.TypeReady, corev1.ConditionTrue, "Available")
	lets(t, host, "ada@example.com", "eve@example.net")
}

// Two routes of a binding naming one hostname with different Access checks:
// the hostname is the older route's, published with its check; the newer
// route cannot freeze or change it, and the binding says so
// (Programmed=False, HostnameConflict, and an event).
func TestANewerRouteDisagreeingOnAccessLosesTheHostname(t *testing.T) {
	t.Parallel() // each in its own namespace, after TestWaitsForGatewayAPI
	w := setup(t)
	ns := w.ns
	accessPolicy(t, ns, "staff", ztv1alpha1.AccessRule{EmailDomain: ptr.To("example.com")})
	host, other := "both-"+ns+".example.com", "other-"+ns+".example.com"
	// No spec.access: each route's own check stands (annotation.Inherit).
	older := route(ns, "older", "web", host, other)
	older.Annotations = map[string]string{v1alpha1.AnnotationAccessPolicies: "staff"}
	createRoute(t, older, true)
	b := binding(ns)
	p.Create(t, b)
	waitCondition(t, b, xpv2.TypeReady, corev1.ConditionTrue, "Available")
	protectedBy(t, w.tunnelID, host)

	younger := route(ns, "younger", "web", host)
	younger.Annotations = map[string]string{v1alpha1.AnnotationAccessPolicies: "admins"}
	createRoute(t, younger, true)
	waitCondition(t, b, gatewaybinding.TypeProgrammed, corev1.ConditionFalse, gatewaybinding.ReasonHostnameConflict)
	waitEvent(t, ns, b.Name, "HostnameConflict", "another Access check")
	want := map[string]string{"HTTPRoute/older " + host: v1alpha1.HostnamePublished, "HTTPRoute/younger " + host: v1alpha1.HostnameConflict, "HTTPRoute/older " + other: v1alpha1.HostnamePublished}
	if diff := cmp.Diff(want, states(get(t, b))); diff != "" {
		t.Errorf("hostname states (-want +got):\n%s", diff)
	}
	// The younger route's check is not published: the hostname keeps the
	// older route's.
	p.WaitServed(t, 3, "GET", w.tunnelID+"/configurations$")
	lets(t, host, "ada@example.com", "eve@example.net")
	for _, a := range audiences(t, w.tunnelID, host) {
		if a == "" {
			t.Fatalf("%s published without its Access check", host)
		}
	}
}

// A hostname published without Access whose route then asks for a check it
// cannot have (a bad annotation) is taken down, not left open: only a
// protected hostname is kept while its route's annotation is fixed.
func TestABadAnnotationTakesAnOpenHostnameDown(t *testing.T) {
	t.Parallel() // each in its own namespace, after TestWaitsForGatewayAPI
	w := setup(t)
	host := "open-" + w.ns + ".example.com"
	r := route(w.ns, "open", "web", host)
	createRoute(t, r, true)
	b := binding(w.ns)
	p.Create(t, b)
	waitCondition(t, b, xpv2.TypeReady, corev1.ConditionTrue, "Available")
	if auds := audiences(t, w.tunnelID, host); len(auds) != 1 || auds[0] != "" {
		t.Fatalf("%s rules %v, want one without Access", host, auds)
	}

	// Both kinds of Access at once: refused.
	p.Edit(t, r, func() {
		r.Annotations = map[string]string{v1alpha1.AnnotationAccessPolicies: "staff", v1alpha1.AnnotationAccessTeam: "acme"}
	})
	waitCondition(t, b, gatewaybinding.TypeProgrammed, corev1.ConditionFalse, gatewaybinding.ReasonInvalidAnnotation)
	waitEvent(t, w.ns, b.Name, gatewaybinding.ReasonInvalidAnnotation, "not both")
	wait.Eventually(t, wait.Patience, host+" taken down", func() error {
		if auds := audiences(t, w.tunnelID, host); len(auds) > 0 {
			return fmt.Errorf("rules %v", auds)
		}
		if got := publicHostnames(t, b); len(got) > 0 {
			return fmt.Errorf("PublicHostnames %v", got)
		}
		return nil
	})
}
