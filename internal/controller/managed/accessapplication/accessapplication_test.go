package accessapplication_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/common"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/mr"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/providertest"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

var p *providertest.Provider

func TestMain(m *testing.M) { os.Exit(providertest.Run(m, &p)) }

func policy(ns, name string, include ...v1alpha1.AccessRule) *v1alpha1.AccessPolicy {
	return &v1alpha1.AccessPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.AccessPolicySpec{ForProvider: v1alpha1.AccessPolicyParameters{
			Name: name + "-" + ns, Decision: "allow", Include: include,
		}},
	}
}

func application(ns, name, host string, policies ...string) *v1alpha1.AccessApplication {
	app := &v1alpha1.AccessApplication{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       v1alpha1.AccessApplicationSpec{ForProvider: v1alpha1.AccessApplicationParameters{Name: name + "-" + ns, Domain: host}},
	}
	for _, pol := range policies {
		app.Spec.ForProvider.Policies = append(app.Spec.ForProvider.Policies, v1alpha1.AccessApplicationPolicy{PolicyIDRef: &xpv2.NamespacedReference{Name: pol}})
	}
	return app
}

func cfApp(t *testing.T, id string) *cloudflare.AccessApplication {
	t.Helper()
	a, err := p.Cloudflare.GetAccessApplication(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func appsFor(t *testing.T, host string) []cloudflare.AccessApplication {
	t.Helper()
	all, err := p.Cloudflare.ListAccessApplications(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []cloudflare.AccessApplication
	for _, a := range all {
		if strings.EqualFold(a.Domain, host) {
			out = append(out, a)
		}
	}
	return out
}

func allowed(t *testing.T, host, email string) bool {
	t.Helper()
	ok, why := p.Sim.AccessDecision(host, "/", sim.AccessIdentity{Email: email})
	t.Logf("%s at %s: %v (%s)", email, host, ok, why)
	return ok
}

var audRe = regexp.MustCompile(`^[0-9a-f]{64}$`)

// A hand-made application with two policies: made with both, in order;
// its audience tag and the team domain in status; what the policies mean
// checked by the simulator's evaluation of them, not only that they were
// written; drift in a policy and in the application repaired.
func TestAnApplicationWithTwoPolicies(t *testing.T) {
	ns := p.Namespace(t)
	host := "grafana-" + ns + ".example.com"
	staff := policy(ns, "staff", v1alpha1.AccessRule{EmailDomain: ptr.To("example.com")})
	staff.Spec.ForProvider.Exclude = []v1alpha1.AccessRule{{Email: ptr.To("mallory@example.com")}}
	ada := policy(ns, "ada", v1alpha1.AccessRule{Email: ptr.To("ada@example.org")})
	app := application(ns, "grafana", host, "staff", "ada")
	p.Create(t, staff)
	p.Create(t, ada)
	p.Create(t, app)
	p.WaitReady(t, staff)
	p.WaitReady(t, ada)
	p.WaitReady(t, app)

	at := app.Status.AtProvider
	if !audRe.MatchString(at.AUD) || !strings.HasSuffix(at.TeamDomain, ".cloudflareaccess.com") || at.ID != meta.GetExternalName(app) {
		t.Fatalf("status.atProvider = %+v: want the audience tag, the team domain and the ID", at)
	}
	if want := []string{staff.Status.AtProvider.ID, ada.Status.AtProvider.ID}; !slices.Equal(at.PolicyIDs, want) {
		t.Errorf("policyIds %v, want %v (list order)", at.PolicyIDs, want)
	}
	for email, want := range map[string]bool{"bob@example.com": true, "ada@example.org": true, "mallory@example.com": false, "eve@example.net": false} {
		if got := allowed(t, host, email); got != want {
			t.Errorf("%s let in: %v, want %v", email, got, want)
		}
	}

	t.Run("APolicyEditedByHandIsRepaired", func(t *testing.T) {
		id := staff.Status.AtProvider.ID
		held, err := p.Cloudflare.GetAccessPolicy(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		in := cloudflare.AccessPolicyInput{Name: held.Name, Decision: held.Decision, Include: held.Include, Require: held.Require} // the exclusion dropped
		if _, err := p.Cloudflare.UpdateAccessPolicy(context.Background(), id, in); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		wait.Eventually(t, wait.Patience, "the exclusion restored", func() error {
			if allowed(t, host, "mallory@example.com") {
				return fmt.Errorf("mallory is let in")
			}
			return nil
		})
		if d := time.Since(start); d > p.DriftBound(0) {
			t.Errorf("repaired after %v, past the promised %v", d, p.DriftBound(0))
		}
	})

	t.Run("APolicyDetachedByHandIsRepaired", func(t *testing.T) {
		held := cfApp(t, at.ID)
		in := cloudflare.AccessApplicationInput{Name: held.Name, Domain: held.Domain, Destinations: held.Destinations, AppLauncherVisible: held.AppLauncherVisible, Policies: held.Policies[1:]}
		if _, err := p.Cloudflare.UpdateAccessApplication(context.Background(), at.ID, in); err != nil {
			t.Fatal(err)
		}
		wait.Eventually(t, wait.Patience, "both policies attached again", func() error {
			if got := cfApp(t, at.ID).Policies; len(got) != 2 {
				return fmt.Errorf("policies %+v", got)
			}
			return nil
		})
		if !allowed(t, host, "bob@example.com") {
			t.Error("staff not let in after the repair")
		}
	})

	t.Run("DeletedInCloudflareIsMadeAgainWithANewAudience", func(t *testing.T) {
		if err := p.Cloudflare.DeleteAccessApplication(context.Background(), at.ID); err != nil {
			t.Fatal(err)
		}
		wait.Eventually(t, wait.Patience, "a new application in status", func() error {
			if err := p.Get(app); err != nil {
				return err
			}
			if n := app.Status.AtProvider; n.ID == at.ID || !audRe.MatchString(n.AUD) || n.AUD == at.AUD {
				return fmt.Errorf("status %+v", n)
			}
			return nil
		})
		if apps := appsFor(t, host); len(apps) != 1 || apps[0].ID != meta.GetExternalName(app) {
			t.Errorf("applications for %s: %+v", host, apps)
		}
	})

	t.Run("APolicyInUseIsDeletedOnlyAfterItsApplication", func(t *testing.T) {
		if err := p.Client.Delete(context.Background(), ada); err != nil {
			t.Fatal(err)
		}
		p.WaitSynced(t, ada, "the deletion waiting, naming the application", func(c xpv2.Condition) bool {
			return c.Status == corev1.ConditionFalse && c.Reason == common.ReasonPolicyInUse && strings.Contains(c.Message, "AccessApplication "+ns+"/grafana")
		})
		p.WaitWarning(t, ns, ada.Name, "CannotDeleteExternalResource", "grafana")
		if _, err := p.Cloudflare.GetAccessPolicy(context.Background(), ada.Status.AtProvider.ID); err != nil {
			t.Fatalf("the policy in use is gone from Cloudflare: %v", err)
		}
		if !allowed(t, host, "ada@example.org") {
			t.Error("the policy in use stopped deciding")
		}
		p.DeleteAndWait(t, app)
		if apps := appsFor(t, host); len(apps) != 0 {
			t.Errorf("applications left: %+v", apps)
		}
		for _, pol := range []*v1alpha1.AccessPolicy{staff, ada} {
			id := pol.Status.AtProvider.ID
			p.DeleteAndWait(t, pol)
			if _, err := p.Cloudflare.GetAccessPolicy(context.Background(), id); !cloudflare.IsNotFound(err) {
				t.Errorf("policy %s after its AccessPolicy's deletion: %v", id, err)
			}
		}
	})
}

// An application whose policy does not exist yet is not made: one without
// it would let in, or keep out, whom the policy decides. Made once the
// policy is.
func TestAnApplicationWaitsForItsPolicies(t *testing.T) {
	ns := p.Namespace(t)
	host := "wait-" + ns + ".example.com"
	app := application(ns, "waits", host, "later")
	p.Create(t, app)
	p.WaitSynced(t, app, "the missing policy reported", func(c xpv2.Condition) bool {
		return c.Status == corev1.ConditionFalse && strings.Contains(c.Message, "later")
	})
	if apps := appsFor(t, host); len(apps) != 0 {
		t.Fatalf("made without its policy: %+v", apps)
	}
	pol := policy(ns, "later", v1alpha1.AccessRule{Email: ptr.To("ada@example.org")})
	p.Create(t, pol)
	p.WaitReady(t, app)
	if !allowed(t, host, "ada@example.org") || allowed(t, host, "bob@example.org") {
		t.Error("the policy does not decide who gets in")
	}
	p.DeleteAndWait(t, app)
	p.DeleteAndWait(t, pol)
}

// An application made elsewhere for the same hostname is reported and left
// alone, never adopted; one a lost create of this resource left is.
func TestOnlyAnApplicationThisResourceMadeIsAdopted(t *testing.T) {
	ctx := context.Background()
	ns := p.Namespace(t)
	pol := policy(ns, "everyone", v1alpha1.AccessRule{Everyone: ptr.To(true)})
	p.Create(t, pol)
	p.WaitReady(t, pol)
	in := func(host string) cloudflare.AccessApplicationInput {
		return cloudflare.AccessApplicationInput{Name: "app-" + ns, Domain: host, AppLauncherVisible: true,
			Destinations: []cloudflare.AccessDestination{{Type: "public", URI: host}},
			Policies:     []cloudflare.AccessPolicyRef{{ID: pol.Status.AtProvider.ID, Precedence: 1}}}
	}

	t.Run("MadeElsewhereBefore", func(t *testing.T) {
		host := "elsewhere-" + ns + ".example.com"
		foreign, err := p.Cloudflare.CreateAccessApplication(ctx, in(host))
		if err != nil {
			t.Fatal(err)
		}
		app := application(ns, "app", host, "everyone")
		app.Spec.ForProvider.Name = "app-" + ns
		// Its create began after the foreign one was made, by more than
		// the clock-skew allowance.
		meta.SetExternalCreatePending(app, foreign.CreatedAt.Add(mr.CreateSkew+time.Second))
		p.Create(t, app)
		// Cloudflare lets one application guard a hostname: the other
		// one's is reported, never adopted.
		p.WaitSynced(t, app, "the hostname reported taken", func(c xpv2.Condition) bool {
			return c.Status == corev1.ConditionFalse && c.Reason == common.ReasonNameTaken && strings.Contains(c.Message, foreign.ID)
		})
		if meta.GetExternalName(app) != "" || len(appsFor(t, host)) != 1 {
			t.Fatalf("external-name %q, applications %+v: the one made elsewhere must stay the only one, not adopted", meta.GetExternalName(app), appsFor(t, host))
		}
		p.DeleteAndWait(t, app)
		if _, err := p.Cloudflare.GetAccessApplication(ctx, foreign.ID); err != nil {
			t.Errorf("the application made elsewhere is gone: %v", err)
		}
		if err := p.Cloudflare.DeleteAccessApplication(ctx, foreign.ID); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("LeftByALostCreate", func(t *testing.T) {
		host := "lost-" + ns + ".example.com"
		pending := time.Now()
		lost, err := p.Cloudflare.CreateAccessApplication(ctx, in(host))
		if err != nil {
			t.Fatal(err)
		}
		app := application(ns, "lost", host, "everyone")
		app.Spec.ForProvider.Name = "app-" + ns
		meta.SetExternalCreatePending(app, pending)
		p.Create(t, app)
		p.WaitReady(t, app)
		if meta.GetExternalName(app) != lost.ID || len(appsFor(t, host)) != 1 {
			t.Fatalf("external-name %q, want the lost create's %s; applications %+v", meta.GetExternalName(app), lost.ID, appsFor(t, host))
		}
		p.DeleteAndWait(t, app)
	})
	p.DeleteAndWait(t, pol)
}

// sharedNamespace is a fresh namespace labelled team=<team>, which a
// policy's sharing selector may pick.
func sharedNamespace(t *testing.T, team string) string {
	t.Helper()
	ns := p.Namespace(t)
	n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
	p.Edit(t, n, func() { n.Labels = map[string]string{"team": team} })
	return ns
}

// A platform team's policy, shared with the namespaces a selector picks, is
// used by reference from one of them; another namespace is refused it by
// reference and by raw ID, and nothing is made there. Taking the namespace
// out of the sharing keeps the application as it is (still protected by
// the policy), reported NotAllowed.
func TestAPolicySharedWithChosenNamespaces(t *testing.T) {
	platform := p.Namespace(t)
	apps := sharedNamespace(t, "apps")
	other := sharedNamespace(t, "other")
	staff := policy(platform, "staff", v1alpha1.AccessRule{EmailDomain: ptr.To("example.com")})
	staff.Spec.AllowedNamespaces = &v1alpha1.AllowedNamespaces{From: v1alpha1.NamespacesFromSelector, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "apps"}}}
	p.Create(t, staff)
	p.WaitReady(t, staff)
	ref := func(app *v1alpha1.AccessApplication) *v1alpha1.AccessApplication {
		app.Spec.ForProvider.Policies[0].PolicyIDRef.Namespace = platform
		return app
	}

	allowedHost := "shared-" + apps + ".example.com"
	used := ref(application(apps, "dashboard", allowedHost, "staff"))
	p.Create(t, used)
	p.WaitReady(t, used)
	if !allowed(t, allowedHost, "bob@example.com") || allowed(t, allowedHost, "eve@example.net") {
		t.Error("the shared policy does not decide who gets in")
	}

	refusedHost := "refused-" + other + ".example.com"
	byRef := ref(application(other, "by-ref", refusedHost, "staff"))
	p.Create(t, byRef)
	p.WaitSynced(t, byRef, "the reference refused", func(c xpv2.Condition) bool {
		return c.Status == corev1.ConditionFalse && c.Reason == common.ReasonNotAllowed && strings.Contains(c.Message, "not shared with namespace")
	})
	byID := application(other, "by-id", "id-"+refusedHost)
	byID.Spec.ForProvider.Policies = []v1alpha1.AccessApplicationPolicy{{PolicyID: ptr.To(staff.Status.AtProvider.ID)}}
	p.Create(t, byID)
	p.WaitSynced(t, byID, "the raw ID refused", func(c xpv2.Condition) bool {
		return c.Status == corev1.ConditionFalse && c.Reason == common.ReasonNotAllowed && strings.Contains(c.Message, "AccessPolicy "+platform+"/staff")
	})
	if n := len(appsFor(t, refusedHost)) + len(appsFor(t, "id-"+refusedHost)); n != 0 {
		t.Fatalf("%d applications made with a policy not shared with their namespace", n)
	}

	t.Run("NoLongerSharedKeepsWhatIsThere", func(t *testing.T) {
		p.Edit(t, staff, func() { staff.Spec.AllowedNamespaces = nil })
		p.WaitSynced(t, used, "the reference refused now", func(c xpv2.Condition) bool {
			return c.Status == corev1.ConditionFalse && c.Reason == common.ReasonNotAllowed
		})
		if got := appsFor(t, allowedHost); len(got) != 1 || len(got[0].Policies) != 1 || got[0].Policies[0].ID != staff.Status.AtProvider.ID {
			t.Errorf("applications %+v: want the one made, still on the policy", got)
		}
		if !allowed(t, allowedHost, "bob@example.com") || allowed(t, allowedHost, "eve@example.net") {
			t.Error("the application stopped being protected by the policy")
		}
	})

	for _, app := range []*v1alpha1.AccessApplication{used, byRef, byID} {
		p.DeleteAndWait(t, app)
	}
	p.DeleteAndWait(t, staff)
}
