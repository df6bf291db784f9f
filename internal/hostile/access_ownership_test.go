package hostile

// Issue 48: only the holder of a hostname puts an Access application on it.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/common"
	tv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/handshake"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

func accessOwnershipEntries() []entry {
	return []entry{
		{name: "AccessApplication/APathOfAHostnameAnotherNamespaceHolds", answer: custom, run: gatesAnotherNamespacesHostname},
		{name: "Ingress/AccessPoliciesOnAHostnameItLost", answer: custom, run: protectsAHostnameItLost},
		{name: "Ingress/AccessPoliciesTakenOff", answer: custom, run: takesAccessOff},
		{name: "Tunnel/ARuleForAnotherNamespacesProtectedHostname", answer: custom, run: rulesAProtectedHostname},
	}
}

// cloudflareApps are the Access applications whose domain is host or a
// path of it.
func cloudflareApps(t *testing.T, host string) []string {
	t.Helper()
	all, err := p.Cloudflare.ListAccessApplications(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, a := range all {
		if d := strings.ToLower(a.Domain); d == host || strings.HasPrefix(d, host+"/") {
			out = append(out, a.ID)
		}
	}
	return out
}

// staffPolicy makes an AccessPolicy of the corpus namespace.
func (c *corpus) staffPolicy(t *testing.T, name string) *ztv1alpha1.AccessPolicy {
	pol := &ztv1alpha1.AccessPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: c.ns, Name: name},
		Spec:       ztv1alpha1.AccessPolicySpec{ForProvider: ztv1alpha1.AccessPolicyParameters{Name: name + "-" + c.ns, Decision: "allow", Include: []ztv1alpha1.AccessRule{{EmailDomain: ptr.To("example.com")}}}},
	}
	p.Create(t, pol)
	return pol
}

// gatesAnotherNamespacesHostname: an AccessApplication for a path of the
// healthy Ingress's hostname, which another namespace publishes: refused
// NotAllowed, naming neither that namespace nor its objects, never made.
func gatesAnotherNamespacesHostname(t *testing.T, c *corpus) string {
	app := &ztv1alpha1.AccessApplication{
		ObjectMeta: metav1.ObjectMeta{Namespace: c.ns, Name: "gate-theirs"},
		Spec:       ztv1alpha1.AccessApplicationSpec{ForProvider: ztv1alpha1.AccessApplicationParameters{Name: "gate-theirs", Domain: c.h.host + "/login"}},
	}
	p.Create(t, app)
	var cond xpv2.Condition
	wait.Eventually(t, 60*time.Second, "Synced=False NotAllowed", func() error {
		if err := p.Get(app); err != nil {
			return err
		}
		if cond = app.GetCondition(xpv2.TypeSynced); cond.Status != corev1.ConditionFalse || cond.Reason != common.ReasonNotAllowed {
			return fmt.Errorf("Synced=%s %s: %s", cond.Status, cond.Reason, cond.Message)
		}
		return nil
	})
	if strings.Contains(strings.ReplaceAll(cond.Message, c.h.host, ""), c.h.ns) {
		t.Errorf("the refusal names the holder's namespace: %s", cond.Message)
	}
	if ids := cloudflareApps(t, c.h.host); len(ids) != 0 || meta.GetExternalName(app) != "" {
		return c.knownBug(t, "an Access application was made on another namespace's hostname: %v", ids)
	}
	p.DeleteAndWait(t, app)
	return "Synced=False NotAllowed: " + oneLine(cond.Message)
}

// protectsAHostnameItLost: an Ingress asking for managed Access on a
// hostname whose DNS record was made elsewhere (by hand, before it): the
// record is refused, and its PublicHostname waits for the hostname and
// makes no application.
func protectsAHostnameItLost(t *testing.T, c *corpus) string {
	host := "lost-" + c.ns + ".example.com"
	foreign, err := p.Cloudflare.CreateDNSRecord(context.Background(), sim.ZoneID("example.com"), cloudflare.DNSRecord{Name: host, Type: "CNAME", Content: "legacy.example.net", TTL: 300, Comment: "managed by hand"})
	if err != nil {
		t.Fatal(err)
	}
	c.made[foreign.ID] = true
	defer func() {
		if err := p.Cloudflare.DeleteDNSRecord(context.Background(), sim.ZoneID("example.com"), foreign.ID); err != nil {
			t.Error(err)
		}
	}()
	pol := c.staffPolicy(t, "lost-staff")
	ing := c.ingress("protect-theirs", ann(tv1alpha1.AnnotationPublic, "true", tv1alpha1.AnnotationAccessPolicies, "lost-staff"), func(i *networkingv1.Ingress) {
		i.Spec.DefaultBackend = nil
		i.Spec.Rules = []networkingv1.IngressRule{hostRule(host, "/", networkingv1.PathTypePrefix, backend("web", number(80)))}
	})
	p.Create(t, ing)
	var valid xpv2.Condition
	var ph tv1alpha1.PublicHostname
	wait.Eventually(t, 90*time.Second, "its PublicHostname waiting for the hostname", func() error {
		l := &tv1alpha1.PublicHostnameList{}
		if err := p.Client.List(context.Background(), l, client.InNamespace(c.ns)); err != nil {
			return err
		}
		for _, x := range l.Items {
			if metav1.IsControlledBy(&x, ing) {
				ph = x
				if valid = x.GetCondition(tv1alpha1.TypeValid); valid.Reason == handshake.ReasonWaitingForHostname && strings.Contains(valid.Message, "DNS record is refused") {
					return nil
				}
				return fmt.Errorf("Valid=%s %s: %s", valid.Status, valid.Reason, valid.Message)
			}
		}
		return fmt.Errorf("no PublicHostname of the Ingress yet")
	})
	apps := &ztv1alpha1.AccessApplicationList{}
	if err := p.Client.List(context.Background(), apps, client.InNamespace(c.ns)); err != nil {
		t.Fatal(err)
	}
	answer := "Valid=False WaitingForHostname: " + oneLine(valid.Message)
	for _, a := range apps.Items {
		if metav1.IsControlledBy(&a, &ph) {
			answer = c.knownBug(t, "PublicHostname %s made AccessApplication %s for a hostname it does not hold", ph.Name, a.Name)
		}
	}
	if ids := cloudflareApps(t, host); len(ids) != 0 {
		answer = c.knownBug(t, "Access applications on a hostname whose DNS is another's: %v", ids)
	}
	p.DeleteAndWait(t, ing)
	p.DeleteAndWait(t, pol)
	c.allowMade(host)
	return answer
}

// takesAccessOff: an Ingress protected by a policy loses the annotation:
// the application goes from Kubernetes and Cloudflare, none leaked, and
// the policy is free to delete.
func takesAccessOff(t *testing.T, c *corpus) string {
	host := "unguard-" + c.ns + ".example.com"
	pol := c.staffPolicy(t, "unguard-staff")
	ing := c.ingress("unguard", ann(tv1alpha1.AnnotationPublic, "true", tv1alpha1.AnnotationAccessPolicies, "unguard-staff"), func(i *networkingv1.Ingress) {
		i.Spec.DefaultBackend = nil
		i.Spec.Rules = []networkingv1.IngressRule{hostRule(host, "/", networkingv1.PathTypePrefix, backend("web", number(80)))}
	})
	p.Create(t, ing)
	wait.Eventually(t, 90*time.Second, "the application made", func() error {
		if len(cloudflareApps(t, host)) != 1 {
			return fmt.Errorf("no application for %s yet", host)
		}
		return nil
	})
	p.Edit(t, ing, func() { delete(ing.Annotations, tv1alpha1.AnnotationAccessPolicies) })
	answer := "application deleted after the unprotected rules were published"
	wait.Eventually(t, 90*time.Second, "the application gone", func() error {
		if ids := cloudflareApps(t, host); len(ids) != 0 {
			return fmt.Errorf("applications left for %s: %v", host, ids)
		}
		return nil
	})
	p.DeleteAndWait(t, pol)
	p.DeleteAndWait(t, ing)
	wait.Eventually(t, 60*time.Second, "the Ingress's objects removed", func() error {
		if len(p.Records(t, host)) != 0 || strings.Contains(p.TunnelConfig(t, c.edgeID), host) {
			return fmt.Errorf("%s still published", host)
		}
		return nil
	})
	c.allowMade(host)
	return answer
}

// protectedIngress publishes host from the corpus namespace with managed
// Access by a policy of the namespace, and returns the Ingress, the policy
// and the application's ID once Cloudflare has it.
func (c *corpus) protectedIngress(t *testing.T, name, host string) (*networkingv1.Ingress, *ztv1alpha1.AccessPolicy, string) {
	pol := c.staffPolicy(t, name+"-staff")
	ing := c.ingress(name, ann(tv1alpha1.AnnotationPublic, "true", tv1alpha1.AnnotationAccessPolicies, name+"-staff"), func(i *networkingv1.Ingress) {
		i.Spec.DefaultBackend = nil
		i.Spec.Rules = []networkingv1.IngressRule{hostRule(host, "/", networkingv1.PathTypePrefix, backend("web", number(80)))}
	})
	p.Create(t, ing)
	var id string
	wait.Eventually(t, 90*time.Second, "the application made and the hostname published", func() error {
		ids := cloudflareApps(t, host)
		if len(ids) != 1 || len(p.Records(t, host)) != 1 {
			return fmt.Errorf("applications %v and %d records for %s", ids, len(p.Records(t, host)), host)
		}
		id = ids[0]
		return nil
	})
	return ing, pol, id
}

// rulesAProtectedHostname: another namespace makes a Tunnel whose
// configuration has a rule for a hostname the corpus namespace publishes
// with Access, and waits until Cloudflare serves it. The DNS record that
// answers for the name is the publisher's: its application stays, and its
// users are still let in.
func rulesAProtectedHostname(t *testing.T, c *corpus) string {
	host := "ruled-" + c.ns + ".example.com"
	ing, pol, appID := c.protectedIngress(t, "ruled", host)
	tun := &ztv1alpha1.Tunnel{
		ObjectMeta: metav1.ObjectMeta{Namespace: c.bare, Name: "ruled-squat"},
		Spec: ztv1alpha1.TunnelSpec{ForProvider: ztv1alpha1.TunnelParameters{Name: "ruled-squat-" + c.bare, Config: &ztv1alpha1.TunnelConfig{Ingress: []ztv1alpha1.IngressRule{
			{Hostname: ptr.To(host), Service: "http://web." + c.bare + ".svc.cluster.local:80"}, catchAll(),
		}}}},
	}
	p.Create(t, tun)
	wait.Eventually(t, 90*time.Second, "the other namespace's rule served", func() error {
		if err := p.Get(tun); err != nil {
			return err
		}
		if s := tun.GetCondition(xpv2.TypeSynced); tun.Status.AtProvider.RemoteConfigVersion == 0 || s.Status != corev1.ConditionTrue {
			return fmt.Errorf("config version %d, Synced=%s %s", tun.Status.AtProvider.RemoteConfigVersion, s.Status, s.Message)
		}
		return nil
	})
	// Evidence of time for the application's 2 s poll: the account's
	// tunnels listed five more times.
	p.WaitServed(t, 5, "GET", "/cfd_tunnel$")
	answer := "the publisher's application kept, Synced; its users let in"
	if ids := cloudflareApps(t, host); len(ids) != 1 || ids[0] != appID {
		answer = c.knownBug(t, "a rule on another namespace's tunnel took the application of a protected hostname: %v, was %s", ids, appID)
	}
	if ok, why := p.Sim.AccessDecision(host, "/", sim.AccessIdentity{Email: "bob@example.com"}); !ok {
		answer = c.knownBug(t, "the publisher's users are shut out of %s: %s", host, why)
	}
	p.DeleteAndWait(t, tun)
	p.DeleteAndWait(t, ing)
	p.DeleteAndWait(t, pol)
	c.allowMade(host, "ruled-squat-")
	return answer
}
