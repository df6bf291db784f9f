package publichostname_test

// Who may put an Access application on a hostname: only its holder, the
// PublicHostname whose claim won and whose DNS record is its own.

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/common"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/composite/publichostname"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/handshake"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

// appsFor are the Access applications Cloudflare has whose domain is
// host, or a path under it.
func appsFor(t *testing.T, host string) []cloudflare.AccessApplication {
	t.Helper()
	all, err := p.Cloudflare.ListAccessApplications(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []cloudflare.AccessApplication
	for _, a := range all {
		if d := strings.ToLower(a.Domain); d == host || strings.HasPrefix(d, host+"/") {
			out = append(out, a)
		}
	}
	return out
}

// noApplication fails unless the PublicHostname has no AccessApplication.
func noApplication(t *testing.T, ph *v1alpha1.PublicHostname) {
	t.Helper()
	app := &ztv1alpha1.AccessApplication{}
	err := p.Client.Get(context.Background(), types.NamespacedName{Namespace: ph.Namespace, Name: publichostname.ApplicationName(ph)}, app)
	if !kerrors.IsNotFound(err) {
		t.Errorf("PublicHostname %s, which does not hold its hostname, has AccessApplication %+v (error %v)", ph.Name, app.Spec.ForProvider, err)
	}
}

// The newer of two claims on one tunnel, both asking for managed Access
// with different policies, makes no application: the older one's policies
// alone decide who gets in, and the newer is told it waits for the
// hostname. Its own Ready says why (the claim), not the application.
func TestTheLoserOfAClaimMakesNoAccessApplication(t *testing.T) {
	ns, _ := setup(t)
	staff := accessPolicy(ns, "staff", ztv1alpha1.AccessRule{EmailDomain: ptr.To("example.com")})
	outsiders := accessPolicy(ns, "outsiders", ztv1alpha1.AccessRule{EmailDomain: ptr.To("example.net")})
	p.Create(t, staff)
	p.Create(t, outsiders)
	host := "held-" + ns + ".example.com"
	withPolicy := func(name string) func(*v1alpha1.PublicHostname) {
		return func(ph *v1alpha1.PublicHostname) {
			ph.Spec.Access = &v1alpha1.Access{Policies: []v1alpha1.AccessPolicyName{{Name: name}}}
		}
	}
	first := hostname(ns, "first", host, withPolicy("staff"))
	p.Create(t, first)
	waitReady(t, first)
	wait.NextSecond()
	second := hostname(ns, "second", host, withPolicy("outsiders"))
	p.Create(t, second)

	wait.Eventually(t, wait.Patience, "the newer claim waiting for the hostname, told why", func() error {
		if err := p.Get(second); err != nil {
			return err
		}
		v, r := second.GetCondition(v1alpha1.TypeValid), second.GetCondition(xpv2.TypeReady)
		if v.Reason != handshake.ReasonWaitingForHostname || !strings.Contains(v.Message, "HostnameConflict") {
			return fmt.Errorf("Valid=%s %s: %s", v.Status, v.Reason, v.Message)
		}
		if r.Status != corev1.ConditionFalse || r.Reason != v1alpha1.ReasonHostnameConflict {
			return fmt.Errorf("Ready=%s %s: %s", r.Status, r.Reason, r.Message)
		}
		return nil
	})
	noApplication(t, second)
	if apps := appsFor(t, host); len(apps) != 1 {
		t.Errorf("Access applications for %s: %+v, want the holder's only", host, apps)
	}
	if !lettingIn(t, host, "bob@example.com") || lettingIn(t, host, "eve@example.net") {
		t.Error("the loser's policy decides who gets into the holder's hostname")
	}
	p.DeleteAndWait(t, second)
	p.DeleteAndWait(t, first)
	p.DeleteAndWait(t, staff)
	p.DeleteAndWait(t, outsiders)
}

// A name whose DNS record was made elsewhere before the PublicHostname
// asked for it (by hand, no ownership marker): the record is refused, and
// no Access application is made for a hostname whose DNS is another's.
func TestARecordMadeElsewhereMeansNoAccessApplication(t *testing.T) {
	ns, _ := setup(t)
	host := "taken-" + ns + ".example.com"
	if _, err := p.Cloudflare.CreateDNSRecord(context.Background(), sim.ZoneID("example.com"), cloudflare.DNSRecord{Name: host, Type: "CNAME", Content: "legacy.example.net", TTL: 300, Comment: "managed by hand"}); err != nil {
		t.Fatal(err)
	}
	staff := accessPolicy(ns, "staff", ztv1alpha1.AccessRule{EmailDomain: ptr.To("example.com")})
	p.Create(t, staff)
	ph := hostname(ns, "taken", host, func(ph *v1alpha1.PublicHostname) {
		ph.Spec.Access = &v1alpha1.Access{Policies: []v1alpha1.AccessPolicyName{{Name: "staff"}}}
	})
	p.Create(t, ph)
	wait.Eventually(t, wait.Patience, "the record refused, Access waiting for the hostname", func() error {
		if err := p.Get(ph); err != nil {
			return err
		}
		d, v := ph.GetCondition(v1alpha1.TypeDNSReady), ph.GetCondition(v1alpha1.TypeValid)
		if d.Status != corev1.ConditionFalse || d.Reason != common.ReasonNameTaken {
			return fmt.Errorf("DNSReady=%s %s: %s", d.Status, d.Reason, d.Message)
		}
		if v.Reason != handshake.ReasonWaitingForHostname || !strings.Contains(v.Message, "refused") {
			return fmt.Errorf("Valid=%s %s: %s", v.Status, v.Reason, v.Message)
		}
		return nil
	})
	noApplication(t, ph)
	if apps := appsFor(t, host); len(apps) != 0 {
		t.Errorf("Access applications for a hostname whose DNS is another's: %+v", apps)
	}
	p.DeleteAndWait(t, ph)
	p.DeleteAndWait(t, staff)
}

// Access taken off a protected hostname: the rules without the check are
// published first, then the application goes from Kubernetes and
// Cloudflare (no rule ever names an audience no application has), and
// nothing is left to keep its policy in use.
func TestRemovingAccessDeletesTheApplicationAfterTheCheck(t *testing.T) {
	ns, tunnelID := setup(t)
	staff := accessPolicy(ns, "staff", ztv1alpha1.AccessRule{EmailDomain: ptr.To("example.com")})
	p.Create(t, staff)
	host := "opened-" + ns + ".example.com"
	ph := hostname(ns, "opened", host, func(ph *v1alpha1.PublicHostname) {
		ph.Spec.Access = &v1alpha1.Access{Policies: []v1alpha1.AccessPolicyName{{Name: "staff"}}}
	})
	p.Create(t, ph)
	waitReady(t, ph)
	app := &ztv1alpha1.AccessApplication{}
	if err := p.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: publichostname.ApplicationName(ph)}, app); err != nil {
		t.Fatal(err)
	}
	id := meta.GetExternalName(app)
	order := p.Sim.WatchExposure(host)
	p.Edit(t, ph, func() { ph.Spec.Access = nil })
	wait.Eventually(t, wait.Patience, "the application gone from Kubernetes and Cloudflare", func() error {
		err := p.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: app.Name}, &ztv1alpha1.AccessApplication{})
		if !kerrors.IsNotFound(err) {
			return fmt.Errorf("AccessApplication %s still there (%v)", app.Name, err)
		}
		if _, err := p.Cloudflare.GetAccessApplication(context.Background(), id); err == nil {
			return fmt.Errorf("Access application %s still in Cloudflare", id)
		}
		return nil
	})
	waitReady(t, ph)
	if c, _ := config(t, tunnelID); len(rulesFor(c, host)) == 0 || rulesFor(c, host)[0].OriginRequest != nil && rulesFor(c, host)[0].OriginRequest.Access != nil {
		t.Errorf("rules %+v, want published without an Access check", rulesFor(c, host))
	}
	if writes, _ := p.Sim.StopWatch(order); len(order.Stale()) != 0 {
		t.Errorf("%d writes checked; the application went before the rules naming its audience: %q", writes, order.Stale())
	}
	p.DeleteAndWait(t, staff) // not held in use by a leaked application
	p.DeleteAndWait(t, ph)
}

// A tenant's AccessApplication made for a path of a hostname nobody held
// yet is taken back once another namespace publishes that hostname: the
// tenant's application is refused NotAllowed without naming the holder,
// deleted from Cloudflare, and the holder's own application protects it.
func TestAnApplicationOnAHostnameAnotherNamespaceComesToHoldIsRefused(t *testing.T) {
	ns, tunnelID := setup(t)
	tenant := p.Namespace(t)
	host := "squat-" + ns + ".example.com"
	squat := &ztv1alpha1.AccessApplication{
		ObjectMeta: metav1.ObjectMeta{Namespace: tenant, Name: "squat"},
		Spec:       ztv1alpha1.AccessApplicationSpec{ForProvider: ztv1alpha1.AccessApplicationParameters{Name: "squat", Domain: host + "/admin"}},
	}
	p.Create(t, squat)
	wait.Eventually(t, wait.Patience, "the tenant's application made while nobody holds the hostname", func() error {
		if err := p.Get(squat); err != nil {
			return err
		}
		if meta.GetExternalName(squat) == "" || squat.GetCondition(xpv2.TypeReady).Status != corev1.ConditionTrue {
			return fmt.Errorf("not made yet: %+v", squat.GetCondition(xpv2.TypeSynced))
		}
		return nil
	})
	squatID := meta.GetExternalName(squat)

	staff := accessPolicy(ns, "staff", ztv1alpha1.AccessRule{EmailDomain: ptr.To("example.com")})
	p.Create(t, staff)
	ph := hostname(ns, "owner", host, func(ph *v1alpha1.PublicHostname) {
		ph.Spec.Access = &v1alpha1.Access{Policies: []v1alpha1.AccessPolicyName{{Name: "staff"}}}
	})
	p.Create(t, ph)
	wait.Eventually(t, wait.Patience, "the tenant's application refused NotAllowed", func() error {
		if err := p.Get(squat); err != nil {
			return err
		}
		c := squat.GetCondition(xpv2.TypeSynced)
		if c.Status != corev1.ConditionFalse || c.Reason != common.ReasonNotAllowed || !strings.Contains(c.Message, "held by another namespace") {
			return fmt.Errorf("Synced=%s %s: %s", c.Status, c.Reason, c.Message)
		}
		if other := strings.ReplaceAll(c.Message, host, ""); strings.Contains(other, ns) || strings.Contains(other, "owner") {
			return fmt.Errorf("the refusal names the holder: %s", c.Message)
		}
		return nil
	})
	waitReady(t, ph)
	if _, err := p.Cloudflare.GetAccessApplication(context.Background(), squatID); err == nil {
		t.Errorf("the tenant's application %s still gates the holder's hostname", squatID)
	}
	if err := protected(t, tunnelID, host, ""); err != nil {
		t.Error(err)
	}
	if !lettingIn(t, host, "bob@example.com") {
		t.Error("the holder's users are not let in")
	}
	p.DeleteAndWait(t, squat)
	p.DeleteAndWait(t, ph)
	p.DeleteAndWait(t, staff)
}

// A protected hostname whose spec then names a policy that does not exist
// keeps its last rules, each with its Access check, and says so: not
// "nothing is published" while Cloudflare still serves them.
func TestAProtectedHostnameWaitingSaysItsCheckedRulesStay(t *testing.T) {
	ns, tunnelID := setup(t)
	staff := accessPolicy(ns, "staff", ztv1alpha1.AccessRule{EmailDomain: ptr.To("example.com")})
	p.Create(t, staff)
	host := "kept-" + ns + ".example.com"
	ph := hostname(ns, "kept", host, func(ph *v1alpha1.PublicHostname) {
		ph.Spec.Access = &v1alpha1.Access{Policies: []v1alpha1.AccessPolicyName{{Name: "staff"}}}
	})
	p.Create(t, ph)
	waitReady(t, ph)
	p.Edit(t, ph, func() {
		ph.Spec.Access.Policies = append(ph.Spec.Access.Policies, v1alpha1.AccessPolicyName{Name: "missing"})
	})
	wait.Eventually(t, wait.Patience, "Valid saying the checked rules stay", func() error {
		if err := p.Get(ph); err != nil {
			return err
		}
		c := ph.GetCondition(v1alpha1.TypeValid)
		if c.Reason != publichostname.ReasonWaitingForAccessPolicy || !strings.Contains(c.Message, "the last rules, each with its Access check, stay published") || strings.Contains(c.Message, "nothing is published") {
			return fmt.Errorf("Valid=%s %s: %s", c.Status, c.Reason, c.Message)
		}
		return nil
	})
	if err := protected(t, tunnelID, host, ""); err != nil {
		t.Error(err)
	}
	p.DeleteAndWait(t, ph)
	p.DeleteAndWait(t, staff)
}

// Another namespace's tunnel with a rule for a protected hostname, made and
// served in Cloudflare, does not take the hostname from the namespace whose
// DNS record answers for it: the holder's application stays made and
// Synced (its users are still let in with its policies), and the holder may
// add another one on a path.
func TestAnotherNamespacesTunnelRuleDoesNotTakeAHeldHostname(t *testing.T) {
	ns, tunnelID := setup(t)
	squatter := p.Namespace(t)
	host := "ruled-" + ns + ".example.com"
	staff := accessPolicy(ns, "staff", ztv1alpha1.AccessRule{EmailDomain: ptr.To("example.com")})
	p.Create(t, staff)
	ph := hostname(ns, "owner", host, func(ph *v1alpha1.PublicHostname) {
		ph.Spec.Access = &v1alpha1.Access{Policies: []v1alpha1.AccessPolicyName{{Name: "staff"}}}
	})
	p.Create(t, ph)
	waitReady(t, ph)
	app := &ztv1alpha1.AccessApplication{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: publichostname.ApplicationName(ph)}}
	if err := p.Get(app); err != nil {
		t.Fatal(err)
	}
	appID := meta.GetExternalName(app)

	tun := &ztv1alpha1.Tunnel{
		ObjectMeta: metav1.ObjectMeta{Namespace: squatter, Name: "squat"},
		Spec: ztv1alpha1.TunnelSpec{ForProvider: ztv1alpha1.TunnelParameters{Name: "squat-" + squatter, Config: &ztv1alpha1.TunnelConfig{Ingress: []ztv1alpha1.IngressRule{
			{Hostname: ptr.To(host), Service: "http://web." + squatter + ".svc.cluster.local:80"}, {Service: "http_status:404"},
		}}}},
	}
	p.Create(t, tun)
	wait.Eventually(t, wait.Patience, "the squatter's tunnel made and its rule served", func() error {
		if err := p.Get(tun); err != nil {
			return err
		}
		if s := tun.GetCondition(xpv2.TypeSynced); meta.GetExternalName(tun) == "" || tun.Status.AtProvider.RemoteConfigVersion == 0 || s.Status != corev1.ConditionTrue {
			return fmt.Errorf("external-name %q, config version %d, Synced=%s %s", meta.GetExternalName(tun), tun.Status.AtProvider.RemoteConfigVersion, s.Status, s.Message)
		}
		return nil
	})
	// Evidence that the holder's application was reconciled since: three
	// more polls of the account's tunnels, each of which the application's
	// two-second poll keeps pace with.
	p.WaitServed(t, 3, "GET", "/cfd_tunnel$")
	p.WaitServed(t, 2, "GET", "/cfd_tunnel$")
	if err := p.Get(app); err != nil {
		t.Fatal(err)
	}
	if c := app.GetCondition(xpv2.TypeSynced); c.Status != corev1.ConditionTrue || meta.GetExternalName(app) != appID {
		t.Errorf("the holder's application: external-name %q (was %s), Synced=%s %s: %s", meta.GetExternalName(app), appID, c.Status, c.Reason, c.Message)
	}
	if _, err := p.Cloudflare.GetAccessApplication(context.Background(), appID); err != nil {
		t.Errorf("the holder's application %s is gone from Cloudflare: %v", appID, err)
	}
	if err := protected(t, tunnelID, host, ""); err != nil {
		t.Error(err)
	}
	if !lettingIn(t, host, "bob@example.com") {
		t.Error("the holder's users are shut out")
	}

	admin := &ztv1alpha1.AccessApplication{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "admin"},
		Spec:       ztv1alpha1.AccessApplicationSpec{ForProvider: ztv1alpha1.AccessApplicationParameters{Name: "admin", Domain: host + "/admin"}},
	}
	p.Create(t, admin)
	wait.Eventually(t, wait.Patience, "the holder's second application made", func() error {
		if err := p.Get(admin); err != nil {
			return err
		}
		if c := admin.GetCondition(xpv2.TypeReady); meta.GetExternalName(admin) == "" || c.Status != corev1.ConditionTrue {
			return fmt.Errorf("not made: %+v", admin.GetCondition(xpv2.TypeSynced))
		}
		return nil
	})
	p.DeleteAndWait(t, admin)
	p.DeleteAndWait(t, tun)
	p.DeleteAndWait(t, ph)
	p.DeleteAndWait(t, staff)
}
