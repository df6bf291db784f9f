package accessgroup_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/accesspolicy/rules"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/providertest"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

var p *providertest.Provider

func TestMain(m *testing.M) { os.Exit(providertest.Run(m, &p)) }

func group(ns, name string, include ...v1alpha1.AccessRule) *v1alpha1.AccessGroup {
	g := &v1alpha1.AccessGroup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	g.Spec.ForProvider = v1alpha1.AccessGroupParameters{Name: name + "-" + ns, Include: include}
	return g
}

// allowGroup is an allow policy whose one rule names the group by
// reference.
func allowGroup(ns, name, groupName string) *v1alpha1.AccessPolicy {
	pol := &v1alpha1.AccessPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	pol.Spec.ForProvider = v1alpha1.AccessPolicyParameters{Name: name + "-" + ns, Decision: "allow",
		Include: []v1alpha1.AccessRule{{GroupRef: &xpv2.NamespacedReference{Name: groupName}}}}
	return pol
}

func application(ns, name, host, policy string) *v1alpha1.AccessApplication {
	app := &v1alpha1.AccessApplication{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	app.Spec.ForProvider = v1alpha1.AccessApplicationParameters{Name: name + "-" + ns, Domain: host,
		Policies: []v1alpha1.AccessApplicationPolicy{{PolicyIDRef: &xpv2.NamespacedReference{Name: policy}}}}
	return app
}

func allowed(t *testing.T, host, email string) bool {
	t.Helper()
	ok, why := p.Sim.AccessDecision(host, "/", sim.AccessIdentity{Email: email})
	t.Logf("%s at %s: %v (%s)", email, host, ok, why)
	return ok
}

func policiesNamed(t *testing.T, name string) int {
	t.Helper()
	all, err := p.Cloudflare.ListAccessPolicies(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, pol := range all {
		if pol.Name == name {
			n++
		}
	}
	return n
}

// (d) A policy names a group by reference (groupRef): the group's members
// are let in, others not; a member added to the group is let in, and one
// removed in Cloudflare by hand is put back. A policy whose group does not
// exist yet is not written (fail closed) until the group is made.
func TestAPolicyLetsInAGroupsMembers(t *testing.T) {
	ns := p.Namespace(t)
	host := "sre-" + ns + ".example.com"
	pol := allowGroup(ns, "sre-only", "sre")
	p.Create(t, pol)
	p.WaitSynced(t, pol, "the policy waiting for its group", func(c xpv2.Condition) bool { return c.Status == corev1.ConditionFalse })
	if n := policiesNamed(t, pol.Spec.ForProvider.Name); n != 0 {
		t.Fatalf("%d policies written before their group exists", n)
	}
	sre := group(ns, "sre", v1alpha1.AccessRule{Email: ptr.To("ada@example.com")})
	p.Create(t, sre)
	p.WaitReady(t, sre)
	p.WaitReady(t, pol)
	app := application(ns, "sre-app", host, "sre-only")
	p.Create(t, app)
	p.WaitReady(t, app)
	if !allowed(t, host, "ada@example.com") || allowed(t, host, "bob@example.com") {
		t.Fatal("the group does not decide who gets in")
	}
	if got := *pol.Spec.ForProvider.Include[0].GroupID; got != meta.GetExternalName(sre) {
		t.Errorf("groupId %q, want the group's ID %s", got, meta.GetExternalName(sre))
	}

	p.Edit(t, sre, func() {
		sre.Spec.ForProvider.Include = append(sre.Spec.ForProvider.Include, v1alpha1.AccessRule{Email: ptr.To("bob@example.com")})
	})
	wait.Eventually(t, wait.Patience, "bob let in once added", func() error {
		if !allowed(t, host, "bob@example.com") {
			return fmt.Errorf("bob refused")
		}
		return nil
	})

	id := meta.GetExternalName(sre)
	if _, err := p.Cloudflare.UpdateAccessGroup(context.Background(), id, cloudflare.AccessGroupInput{Name: sre.Spec.ForProvider.Name, Include: rules.Rules([]v1alpha1.AccessRule{{Email: ptr.To("mallory@example.com")}})}); err != nil {
		t.Fatal(err)
	}
	wait.Eventually(t, wait.Patience, "the group's members restored", func() error {
		if allowed(t, host, "mallory@example.com") || !allowed(t, host, "ada@example.com") {
			return fmt.Errorf("not yet")
		}
		return nil
	})
	p.DeleteAndWait(t, app)
	p.DeleteAndWait(t, pol)
	p.DeleteAndWait(t, sre)
	if _, err := p.Cloudflare.GetAccessGroup(context.Background(), id); !cloudflare.IsNotFound(err) {
		t.Errorf("group %s after its deletion: %v", id, err)
	}
}

// (e) A group made elsewhere is imported by its ID as external-name: no
// second group is made, and it is brought to the spec; one of the same
// name made elsewhere without it is never adopted.
func TestAGroupIsImportedByExternalName(t *testing.T) {
	ctx := context.Background()
	ns := p.Namespace(t)
	name := "imported-" + ns
	in := cloudflare.AccessGroupInput{Name: name, Include: rules.Rules([]v1alpha1.AccessRule{{Email: ptr.To("old@example.com")}})}
	made, err := p.Cloudflare.CreateAccessGroup(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	other, err := p.Cloudflare.CreateAccessGroup(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	g := group(ns, "imported", v1alpha1.AccessRule{Email: ptr.To("new@example.com")})
	g.Spec.ForProvider.Name = name
	meta.SetExternalName(g, made.ID)
	p.Create(t, g)
	p.WaitReady(t, g)
	if g.Status.AtProvider.ID != made.ID || meta.GetExternalName(g) != made.ID {
		t.Fatalf("status %+v, external-name %q; want the imported group %s", g.Status.AtProvider, meta.GetExternalName(g), made.ID)
	}
	wait.Eventually(t, wait.Patience, "the imported group brought to the spec", func() error {
		got, err := p.Cloudflare.GetAccessGroup(ctx, made.ID)
		if err != nil {
			return err
		}
		if want := rules.Canonical(rules.Rules(g.Spec.ForProvider.Include)); rules.Canonical(got.Include) != want {
			return fmt.Errorf("include %s, want %s", rules.Canonical(got.Include), want)
		}
		return nil
	})
	got, err := p.Cloudflare.GetAccessGroup(ctx, other.ID)
	if err != nil || rules.Canonical(got.Include) != rules.Canonical(in.Include) {
		t.Errorf("the other group of the same name was touched: %+v, %v", got, err)
	}
	p.DeleteAndWait(t, g)
	if err := p.Cloudflare.DeleteAccessGroup(ctx, other.ID); err != nil {
		t.Fatal(err)
	}
}
