package accessservicetoken_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/common"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/accessservicetoken"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

// The client secret format Cloudflare issues since 2026-08-26.
var scannable = regexp.MustCompile(`^cfast_[0-9A-Za-z]{48}$`)

func enabledInCloudflare(t *testing.T, id string) bool {
	t.Helper()
	got, err := p.Cloudflare.GetServiceToken(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return got.IsEnabled()
}

// waitLetIn waits until the simulator's Access decision for c at host is
// want.
func waitLetIn(t *testing.T, host string, c credentials, want bool, what string) {
	t.Helper()
	wait.Eventually(t, wait.Patience, what, func() error {
		if ok, why := p.Sim.AccessDecision(host, "/", sim.AccessIdentity{ClientID: c.id, ClientSecret: c.secret}); ok != want {
			return fmt.Errorf("let in: %v (%s)", ok, why)
		}
		return nil
	})
}

// A token turned off by spec.forProvider.enabled stops letting its
// published secret in, without being deleted, and comes back with the
// same secret; one turned off in Cloudflare against the spec is turned on
// again, with a Warning event saying so. The secret published is in the
// format Cloudflare issues now, and lets in.
func TestATokenTurnedOffAndOn(t *testing.T) {
	ns := p.Namespace(t)
	host := "onoff-" + ns + ".example.com"
	tok := serviceToken(ns, "onoff")
	p.Create(t, tok)
	p.WaitReady(t, tok)
	guarded(t, ns, "onoff", host)
	c := waitSecret(t, tok, "credentials published", complete)
	if !scannable.MatchString(c.secret) {
		t.Errorf("the published secret (%d characters) is not in Cloudflare's cfast_ format", len(c.secret))
	}
	waitLetIn(t, host, c, true, "the credentials let in")
	id := meta.GetExternalName(tok)

	p.Edit(t, tok, func() { tok.Spec.ForProvider.Enabled = ptr.To(false) })
	waitLetIn(t, host, c, false, "the credentials refused once the token is off")
	if enabledInCloudflare(t, id) {
		t.Error("the token is still enabled in Cloudflare")
	}
	if got := tokensNamed(t, tok.Spec.ForProvider.Name); len(got) != 1 || got[0].ID != id {
		t.Errorf("tokens named %q: %+v; want the one token, kept", tok.Spec.ForProvider.Name, got)
	}
	p.Edit(t, tok, func() { tok.Spec.ForProvider.Enabled = ptr.To(true) })
	waitLetIn(t, host, c, true, "the same credentials let in once the token is on again")

	if _, err := p.Cloudflare.UpdateServiceToken(context.Background(), id, cloudflare.ServiceTokenInput{Name: tok.Spec.ForProvider.Name, Enabled: ptr.To(false)}); err != nil {
		t.Fatal(err)
	}
	p.WaitWarning(t, ns, tok.Name, string(accessservicetoken.EventTurningOn), "was turned off in Cloudflare")
	waitLetIn(t, host, c, true, "the token turned off in Cloudflare turned on again")
	if secretOf(t, tok) != c {
		t.Error("the published credentials changed")
	}
}

// Cloudflare's cleanup of inactive tokens deletes a token named only
// through an AccessGroup and spares one a policy names directly. The
// AccessServiceToken says so (DeletedInCloudflare; the cleanup is named as
// the likely cause once the organization, read at most every 10 minutes,
// shows it on: TestATokenDeletedInCloudflare) and
// makes nothing while it waits; the group says its token is gone. Set to
// Recreate, it makes a new token with a Warning event, publishes it, and
// the group's serviceTokenRef follows it, so the new secret lets in.
func TestATokenTheCleanupDeletedIsReportedThenMadeAgain(t *testing.T) {
	ns := p.Namespace(t)
	host := "cleanup-" + ns + ".example.com"
	grouped, direct := serviceToken(ns, "grouped"), serviceToken(ns, "direct")
	p.Create(t, grouped)
	p.Create(t, direct)
	p.WaitReady(t, grouped)
	p.WaitReady(t, direct)
	grp := &v1alpha1.AccessGroup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "machines"}}
	grp.Spec.ForProvider = v1alpha1.AccessGroupParameters{Name: "machines-" + ns, Include: []v1alpha1.AccessRule{{ServiceTokenRef: &xpv2.NamespacedReference{Name: grouped.Name}}}}
	p.Create(t, grp)
	p.WaitReady(t, grp)
	viaGroup := &v1alpha1.AccessPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "via-group"}}
	viaGroup.Spec.ForProvider = v1alpha1.AccessPolicyParameters{Name: "via-group-" + ns, Decision: "non_identity", Include: []v1alpha1.AccessRule{{GroupRef: &xpv2.NamespacedReference{Name: grp.Name}}}}
	p.Create(t, viaGroup)
	guarded(t, ns, direct.Name, host) // a policy naming "direct" directly, and the application
	app := &v1alpha1.AccessApplication{}
	app.Namespace, app.Name = ns, direct.Name+"-app"
	if err := p.Get(app); err != nil {
		t.Fatal(err)
	}
	p.Edit(t, app, func() {
		app.Spec.ForProvider.Policies = append(app.Spec.ForProvider.Policies, v1alpha1.AccessApplicationPolicy{PolicyIDRef: &xpv2.NamespacedReference{Name: viaGroup.Name}})
	})
	p.WaitReady(t, viaGroup)
	first := waitSecret(t, grouped, "the grouped token's credentials published", complete)
	waitLetIn(t, host, first, true, "the grouped token let in through its group")
	oldID := meta.GetExternalName(grouped)

	if err := p.Sim.SetServiceTokenInactivity(sim.ServiceTokenInactivity{Enabled: true, InactivityThresholdDays: 30, Action: "delete"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = p.Sim.SetServiceTokenInactivity(sim.ServiceTokenInactivity{InactivityThresholdDays: 90, Action: "disable"})
	})
	advance(t, 31*24*time.Hour)
	cleaned := p.Sim.CleanUpInactiveServiceTokens()
	if !slices.Contains(cleaned, oldID) || slices.Contains(cleaned, meta.GetExternalName(direct)) {
		t.Fatalf("the cleanup took %v; want the grouped token (%s) and not the one a policy names (%s)", cleaned, oldID, meta.GetExternalName(direct))
	}

	p.WaitSynced(t, grouped, "the deletion reported", func(c xpv2.Condition) bool {
		return c.Status == corev1.ConditionFalse && c.Reason == common.ReasonDeletedInCloudflare && contains(c.Message, oldID+" was deleted in Cloudflare", "Recreate")
	})
	if r := grouped.GetCondition(xpv2.TypeReady); r.Status != corev1.ConditionFalse {
		t.Errorf("Ready %+v, want False", r)
	}
	p.WaitWarning(t, ns, grouped.Name, "CannotObserveExternalResource", "was deleted in Cloudflare")
	waitCondition(t, grp, "the group reports its token deleted", func(c xpv2.Condition) bool {
		return c.Status == corev1.ConditionFalse && c.Reason == v1alpha1.ReasonServiceTokenDeleted && contains(c.Message, oldID)
	})
	p.WaitServed(t, 2, "GET", "/service_tokens/"+oldID)
	if got := tokensNamed(t, grouped.Spec.ForProvider.Name); len(got) != 0 {
		t.Errorf("tokens made while waiting: %+v", got)
	}
	if err := p.Get(direct); err != nil || direct.GetCondition(xpv2.TypeSynced).Status != corev1.ConditionTrue {
		t.Errorf("the token a policy names directly: %v %+v", err, direct.GetCondition(xpv2.TypeSynced))
	}

	p.Edit(t, grouped, func() { grouped.Spec.OnDeletedInCloudflare = v1alpha1.OnDeletedInCloudflareRecreate })
	p.WaitWarning(t, ns, grouped.Name, string(accessservicetoken.EventRecreating), "making a new one")
	second := waitSecret(t, grouped, "the new token published", func(c credentials) bool { return complete(c) && c.id != first.id })
	if !scannable.MatchString(second.secret) {
		t.Errorf("the new secret (%d characters) is not in Cloudflare's cfast_ format", len(second.secret))
	}
	p.WaitReady(t, grouped)
	if r := grouped.Status.AtProvider.Replaced; r == nil || r.PreviousID != oldID {
		t.Errorf("status.atProvider.replaced %+v, want the old ID %s", r, oldID)
	}
	waitLetIn(t, host, second, true, "the new token let in through the group, whose reference followed it")
	waitCondition(t, grp, "the group's tokens fine again", func(c xpv2.Condition) bool {
		return c.Status == corev1.ConditionTrue && c.Reason == v1alpha1.ReasonServiceTokensEffective
	})
	if got := tokensNamed(t, grouped.Spec.ForProvider.Name); len(got) != 1 {
		t.Errorf("tokens named %q: %+v; want the one new token", grouped.Spec.ForProvider.Name, got)
	}
	noSecretIn(t, grouped, second.secret)
}

// An Allow policy naming a service token in an organization with strict
// service token authentication (on for good in one made since
// 2026-10-05, as the simulator's is) says its token rules let no token in,
// and shows the setting; a Service Auth policy naming the same token is
// Effective.
func TestAnAllowPolicyNamingATokenUnderStrictAuthentication(t *testing.T) {
	ns := p.Namespace(t)
	tok := serviceToken(ns, "strict")
	p.Create(t, tok)
	p.WaitReady(t, tok)
	policy := func(name, decision string) *v1alpha1.AccessPolicy {
		pol := &v1alpha1.AccessPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		pol.Spec.ForProvider = v1alpha1.AccessPolicyParameters{Name: name + "-" + ns, Decision: decision,
			Include: []v1alpha1.AccessRule{{ServiceTokenRef: &xpv2.NamespacedReference{Name: tok.Name}}}}
		return pol
	}
	allow, service := policy("allow-token", "allow"), policy("service-token", "non_identity")
	p.Create(t, allow)
	p.Create(t, service)
	p.WaitReady(t, allow)
	p.WaitReady(t, service)
	waitCondition(t, allow, "the allow policy's token rules reported empty", func(c xpv2.Condition) bool {
		return c.Status == corev1.ConditionFalse && c.Reason == v1alpha1.ReasonStrictServiceTokenAuth && contains(c.Message, "non_identity")
	})
	if s := allow.Status.AtProvider.StrictServiceTokenAuth; s == nil || !*s {
		t.Errorf("status.atProvider.strictServiceTokenAuth %v, want true", s)
	}
	waitCondition(t, service, "the service auth policy effective", func(c xpv2.Condition) bool {
		return c.Status == corev1.ConditionTrue && c.Reason == v1alpha1.ReasonServiceTokensEffective
	})
}

// conditioned is an AccessPolicy or AccessGroup.
type conditioned interface {
	client.Object
	GetCondition(xpv2.ConditionType) xpv2.Condition
}

// waitCondition waits until the ServiceTokens condition of obj holds ok.
func waitCondition(t *testing.T, obj conditioned, what string, ok func(xpv2.Condition) bool) {
	t.Helper()
	wait.Eventually(t, wait.Patience, what, func() error {
		if err := p.Get(obj); err != nil {
			return err
		}
		if c := obj.GetCondition(v1alpha1.TypeServiceTokens); !ok(c) {
			return fmt.Errorf("ServiceTokens=%s %s: %s", c.Status, c.Reason, c.Message)
		}
		return nil
	})
}

func contains(s string, parts ...string) bool {
	for _, part := range parts {
		if !strings.Contains(s, part) {
			return false
		}
	}
	return true
}
