package publichostname_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/composite/publichostname"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/handshake"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

func accessPolicy(ns, name string, include ...ztv1alpha1.AccessRule) *ztv1alpha1.AccessPolicy {
	return &ztv1alpha1.AccessPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       ztv1alpha1.AccessPolicySpec{ForProvider: ztv1alpha1.AccessPolicyParameters{Name: name + "-" + ns, Decision: "allow", Include: include}},
	}
}

// protected says every rule of host on the tunnel requires an Access token
// of audience aud ("" any).
func protected(t *testing.T, tunnelID, host, aud string) error {
	t.Helper()
	c, _ := config(t, tunnelID)
	rs := rulesFor(c, host)
	if len(rs) == 0 {
		return fmt.Errorf("no rules for %s", host)
	}
	for _, r := range rs {
		a := r.OriginRequest
		if a == nil || a.Access == nil || !ptr.Deref(a.Access.Required, false) || len(a.Access.AudTag) != 1 || (aud != "" && a.Access.AudTag[0] != aud) {
			return fmt.Errorf("rule %+v: not protected by audience %q", r, aud)
		}
	}
	return nil
}

func lettingIn(t *testing.T, host, email string) bool {
	t.Helper()
	ok, why := p.Sim.AccessDecision(host, "/", sim.AccessIdentity{Email: email})
	t.Logf("Access decision for %s at %s: %v (%s)", email, host, ok, why)
	return ok
}

// Managed Access: a PublicHostname that names its policies gets an Access
// application made for its hostname; nothing is published before the
// policies and the application exist; then every rule carries the
// application's audience tag and the team, the DNS record follows the
// rules, and the simulator's evaluation lets in whom the policies name. An
// application deleted in Cloudflare is made again and its new audience
// published; the PublicHostname's deletion takes the application with it.
func TestManagedAccess(t *testing.T) {
	ns, tunnelID := setup(t)
	host := "guarded-" + ns + ".example.com"
	ph := hostname(ns, "guarded", host, func(ph *v1alpha1.PublicHostname) {
		ph.Spec.Access = &v1alpha1.Access{Policies: []v1alpha1.AccessPolicyName{{Name: "staff"}}}
	})
	// Every write from here to the end is checked: no moment with DNS
	// sending the hostname to a rule without the Access check.
	watch := p.Sim.WatchExposure(host)
	p.Create(t, ph)

	// Fails closed: the policy does not exist yet.
	wait.Eventually(t, wait.Patience, "waiting for the policy", func() error {
		if err := p.Get(ph); err != nil {
			return err
		}
		if c := ph.GetCondition(v1alpha1.TypeValid); c.Reason != publichostname.ReasonWaitingForAccessPolicy || !strings.Contains(c.Message, "spec.access.policies[0]") {
			return fmt.Errorf("Valid %s %s: %s", c.Status, c.Reason, c.Message)
		}
		return nil
	})
	waitEvent(t, ns, "guarded", string(publichostname.ReasonWaitingForAccessPolicy), "staff")
	p.WaitServed(t, 4, "GET", "/cfd_tunnel$") // past the configuration batch window
	if c, _ := config(t, tunnelID); len(rulesFor(c, host)) != 0 || len(records(t, host)) != 0 {
		t.Fatalf("published before its Access policy exists: rules %+v, records %+v", rulesFor(c, host), records(t, host))
	}

	staff := accessPolicy(ns, "staff", ztv1alpha1.AccessRule{EmailDomain: ptr.To("example.com")})
	p.Create(t, staff)
	waitReady(t, ph)
	app := &ztv1alpha1.AccessApplication{}
	if err := p.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: publichostname.ApplicationName(ph)}, app); err != nil {
		t.Fatal(err)
	}
	if !metav1.IsControlledBy(app, ph) || app.Spec.ForProvider.Domain != host {
		t.Errorf("AccessApplication %+v: want one for %s controlled by the PublicHostname", app.ObjectMeta, host)
	}
	first := app.Status.AtProvider.AUD
	if err := protected(t, tunnelID, host, first); err != nil {
		t.Fatal(err)
	}
	if c, _ := config(t, tunnelID); !strings.HasSuffix(app.Status.AtProvider.TeamDomain, ".cloudflareaccess.com") || rulesFor(c, host)[0].OriginRequest.Access.TeamName+".cloudflareaccess.com" != app.Status.AtProvider.TeamDomain {
		t.Errorf("team %q in the rules, application's team domain %q", rulesFor(c, host)[0].OriginRequest.Access.TeamName, app.Status.AtProvider.TeamDomain)
	}
	if len(records(t, host)) != 1 {
		t.Errorf("DNS records %+v, want one", records(t, host))
	}
	if !lettingIn(t, host, "bob@example.com") || lettingIn(t, host, "eve@example.net") {
		t.Error("the application does not let in exactly whom the policy names")
	}

	t.Run("AnApplicationDeletedInCloudflareIsMadeAgainAndItsAudiencePublished", func(t *testing.T) {
		if err := p.Cloudflare.DeleteAccessApplication(context.Background(), app.Status.AtProvider.ID); err != nil {
			t.Fatal(err)
		}
		wait.Eventually(t, wait.Patience, "the new audience on every rule", func() error {
			if err := p.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: app.Name}, app); err != nil {
				return err
			}
			if a := app.Status.AtProvider.AUD; a == "" || a == first {
				return fmt.Errorf("application's audience %q", a)
			}
			return protected(t, tunnelID, host, app.Status.AtProvider.AUD)
		})
	})

	t.Run("DeletionTakesTheRecordThenTheRulesThenTheApplication", func(t *testing.T) {
		id := app.Status.AtProvider.ID
		order := p.Sim.WatchExposure(host)
		// The configuration write that takes the rules out fails twice:
		// the application must wait for it, not race it.
		p.Sim.FailNext("tunnels.configurations.update", 2)
		t.Cleanup(func() { p.Sim.FailNext("tunnels.configurations.update", 0) })
		p.DeleteAndWait(t, ph)
		if len(records(t, host)) != 0 {
			t.Errorf("DNS records left: %+v", records(t, host))
		}
		if _, err := p.Cloudflare.GetAccessApplication(context.Background(), id); err == nil {
			t.Errorf("Access application %s left in Cloudflare", id)
		}
		if c, _ := config(t, tunnelID); len(rulesFor(c, host)) != 0 {
			t.Errorf("the PublicHostname is gone, its rules are not: %+v", rulesFor(c, host))
		}
		writes, _ := p.Sim.StopWatch(order)
		if stale := order.Stale(); writes < 3 || len(stale) != 0 {
			t.Errorf("%d writes checked; the application went before the rules naming its audience: %q", writes, stale)
		}
	})
	if writes, exposed := p.Sim.StopWatch(watch); writes < 6 || len(exposed) != 0 {
		t.Errorf("%d writes checked; the hostname was reachable without its Access check: %q", writes, exposed)
	}
	p.DeleteAndWait(t, staff)
}

// Asking for Access takes off rules published without it until the
// application exists: never published without the check it asks for.
func TestTurningAccessOnTakesOffUnprotectedRules(t *testing.T) {
	ns, tunnelID := setup(t)
	host := "later-" + ns + ".example.com"
	ph := hostname(ns, "later", host)
	p.Create(t, ph)
	waitReady(t, ph)
	p.Edit(t, ph, func() {
		ph.Spec.Access = &v1alpha1.Access{Policies: []v1alpha1.AccessPolicyName{{Name: "missing"}}}
	})
	wait.Eventually(t, wait.Patience, "the unprotected rules gone", func() error {
		if c, _ := config(t, tunnelID); len(rulesFor(c, host)) != 0 {
			return fmt.Errorf("rules still published: %+v", rulesFor(c, host))
		}
		return nil
	})
	if err := p.Get(ph); err != nil {
		t.Fatal(err)
	}
	if c := ph.GetCondition(xpv2.TypeReady); c.Status == corev1.ConditionTrue {
		t.Errorf("Ready while nothing is published: %s", c.Message)
	}
	p.DeleteAndWait(t, ph)
}

// A platform team's policy, shared with namespaces labelled team=apps, is
// used by a PublicHostname of such a namespace by naming its namespace;
// one the platform team does not share is refused, naming the field, and
// nothing is published for that hostname.
func TestAPolicySharedByAPlatformTeam(t *testing.T) {
	platform := p.Namespace(t)
	ns, tunnelID := setup(t)
	n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
	p.Edit(t, n, func() { n.Labels = map[string]string{"team": "apps"} })
	employees := accessPolicy(platform, "employees", ztv1alpha1.AccessRule{EmailDomain: ptr.To("example.com")})
	employees.Spec.AllowedNamespaces = &ztv1alpha1.AllowedNamespaces{From: ztv1alpha1.NamespacesFromSelector, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "apps"}}}
	private := accessPolicy(platform, "private", ztv1alpha1.AccessRule{Email: ptr.To("root@example.com")})
	p.Create(t, employees)
	p.Create(t, private)

	host := "shared-" + ns + ".example.com"
	ph := hostname(ns, "shared", host, func(ph *v1alpha1.PublicHostname) {
		ph.Spec.Access = &v1alpha1.Access{Policies: []v1alpha1.AccessPolicyName{{Name: "employees", Namespace: platform}}}
	})
	p.Create(t, ph)
	waitReady(t, ph)
	if err := protected(t, tunnelID, host, ""); err != nil {
		t.Fatal(err)
	}
	if !lettingIn(t, host, "bob@example.com") || lettingIn(t, host, "eve@example.net") {
		t.Error("the shared policy does not decide who gets in")
	}

	refusedHost := "unshared-" + ns + ".example.com"
	refused := hostname(ns, "unshared", refusedHost, func(ph *v1alpha1.PublicHostname) {
		ph.Spec.Access = &v1alpha1.Access{Policies: []v1alpha1.AccessPolicyName{{Name: "private", Namespace: platform}}}
	})
	p.Create(t, refused)
	wait.Eventually(t, wait.Patience, "the unshared policy refused", func() error {
		if err := p.Get(refused); err != nil {
			return err
		}
		if c := refused.GetCondition(v1alpha1.TypeValid); c.Status != corev1.ConditionFalse || c.Reason != handshake.ReasonInvalid || !strings.Contains(c.Message, "spec.access.policies[0]") || !strings.Contains(c.Message, "not shared with namespace "+ns) {
			return fmt.Errorf("Valid %s %s: %s", c.Status, c.Reason, c.Message)
		}
		return nil
	})
	waitEvent(t, ns, "unshared", string(handshake.ReasonInvalid), "not shared")
	p.WaitServed(t, 4, "GET", "/cfd_tunnel$") // past the configuration batch window
	if c, _ := config(t, tunnelID); len(rulesFor(c, refusedHost)) != 0 || len(records(t, refusedHost)) != 0 {
		t.Fatalf("published with a policy not shared with it: rules %+v, records %+v", rulesFor(c, refusedHost), records(t, refusedHost))
	}
	app := &ztv1alpha1.AccessApplication{}
	if err := p.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: publichostname.ApplicationName(refused)}, app); err == nil {
		t.Errorf("an AccessApplication was made with a policy not shared: %+v", app.Spec.ForProvider)
	}

	p.DeleteAndWait(t, refused)
	p.DeleteAndWait(t, ph)
	p.DeleteAndWait(t, employees)
	p.DeleteAndWait(t, private)
}
