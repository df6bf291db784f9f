package accessservicetoken_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/providertest"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

var p *providertest.Provider

// ahead is how far the simulator's clock runs ahead of the real one: a
// test moves it to see a rotated-out secret expire, never sleeping for it.
var ahead atomic.Int64

func simNow() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }

// advance moves the simulator's clock forward by d until the test ends.
func advance(t *testing.T, d time.Duration) {
	ahead.Add(int64(d))
	t.Cleanup(func() { ahead.Add(-int64(d)) })
}

func TestMain(m *testing.M) {
	os.Exit(providertest.RunWithOptions(m, &p, providertest.Options{Now: simNow}))
}

func serviceToken(ns, name string) *v1alpha1.AccessServiceToken {
	cr := &v1alpha1.AccessServiceToken{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	cr.Spec.ForProvider = v1alpha1.AccessServiceTokenParameters{Name: name + "-" + ns, Duration: "8760h"}
	cr.Spec.WriteConnectionSecretToReference = &xpv2.LocalSecretReference{Name: name + "-credentials"}
	return cr
}

// guarded makes a non_identity policy letting the token in (by
// serviceTokenRef) and an application for host using it, and waits for
// both.
func guarded(t *testing.T, ns, token, host string) {
	t.Helper()
	pol := &v1alpha1.AccessPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: token + "-only"}}
	pol.Spec.ForProvider = v1alpha1.AccessPolicyParameters{Name: token + "-only-" + ns, Decision: "non_identity",
		Include: []v1alpha1.AccessRule{{ServiceTokenRef: &xpv2.NamespacedReference{Name: token}}}}
	app := &v1alpha1.AccessApplication{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: token + "-app"}}
	app.Spec.ForProvider = v1alpha1.AccessApplicationParameters{Name: token + "-app-" + ns, Domain: host,
		Policies: []v1alpha1.AccessApplicationPolicy{{PolicyIDRef: &xpv2.NamespacedReference{Name: pol.Name}}}}
	p.Create(t, pol)
	p.Create(t, app)
	p.WaitReady(t, pol)
	p.WaitReady(t, app)
}

type credentials struct{ id, secret string }

func secretOf(t *testing.T, cr *v1alpha1.AccessServiceToken) credentials {
	t.Helper()
	s := &corev1.Secret{}
	key := types.NamespacedName{Namespace: cr.Namespace, Name: cr.Spec.WriteConnectionSecretToReference.Name}
	if err := p.Client.Get(context.Background(), key, s); err != nil {
		t.Fatal(err)
	}
	return credentials{string(s.Data[v1alpha1.KeyServiceTokenClientID]), string(s.Data[v1alpha1.KeyServiceTokenClientSecret])}
}

func waitSecret(t *testing.T, cr *v1alpha1.AccessServiceToken, what string, ok func(credentials) bool) credentials {
	t.Helper()
	var c credentials
	wait.Eventually(t, wait.Patience, what, func() error {
		s := &corev1.Secret{}
		key := types.NamespacedName{Namespace: cr.Namespace, Name: cr.Spec.WriteConnectionSecretToReference.Name}
		if err := p.Client.Get(context.Background(), key, s); err != nil {
			return err
		}
		c = credentials{string(s.Data[v1alpha1.KeyServiceTokenClientID]), string(s.Data[v1alpha1.KeyServiceTokenClientSecret])}
		if !ok(c) {
			_ = p.Get(cr)
			sc := cr.GetCondition(xpv2.TypeSynced)
			return fmt.Errorf("the Secret holds client ID %q and a secret of %d characters (Synced=%s %s: %s; status %+v)", c.id, len(c.secret), sc.Status, sc.Reason, sc.Message, cr.Status.AtProvider)
		}
		return nil
	})
	return c
}

func complete(c credentials) bool { return c.id != "" && c.secret != "" }

func letIn(t *testing.T, host string, c credentials) bool {
	t.Helper()
	ok, why := p.Sim.AccessDecision(host, "/", sim.AccessIdentity{ClientID: c.id, ClientSecret: c.secret})
	t.Logf("client %s at %s: %v (%s)", c.id, host, ok, why)
	return ok
}

// noSecretIn fails if the secret shows in the resource (its status above
// all) as the API server holds it.
func noSecretIn(t *testing.T, cr *v1alpha1.AccessServiceToken, secret string) {
	t.Helper()
	if err := p.Get(cr); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(cr)
	if strings.Contains(string(b), secret) {
		t.Errorf("the AccessServiceToken holds its client secret")
	}
}

func tokensNamed(t *testing.T, name string) []cloudflare.ServiceToken {
	t.Helper()
	all, err := p.Cloudflare.ListServiceTokens(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []cloudflare.ServiceToken
	for _, tok := range all {
		if tok.Name == name {
			out = append(out, tok)
		}
	}
	return out
}

// (a) The token's Secret is let in through a policy that names the token
// by reference, and a wrong secret is not; the secret is in no status.
// (b) A rotation with an overlap: the Secret holds the new secret, the old
// one is still let in during the overlap and refused after it.
func TestATokensSecretIsLetInAndRotatesWithOverlap(t *testing.T) {
	ns := p.Namespace(t)
	host := "ci-" + ns + ".example.com"
	tok := serviceToken(ns, "ci")
	p.Create(t, tok)
	p.WaitReady(t, tok)
	guarded(t, ns, "ci", host)

	first := waitSecret(t, tok, "the client ID and secret published", complete)
	if first.id != tok.Status.AtProvider.ClientID {
		t.Errorf("Secret's client ID %q, status says %q", first.id, tok.Status.AtProvider.ClientID)
	}
	if !letIn(t, host, first) {
		t.Fatal("the published credentials are refused")
	}
	if letIn(t, host, credentials{first.id, strings.Repeat("0", 64)}) {
		t.Error("a wrong secret is let in")
	}
	noSecretIn(t, tok, first.secret)

	p.Edit(t, tok, func() {
		tok.Spec.ForProvider.Rotation = &v1alpha1.AccessServiceTokenRotation{
			// A second ahead: the API server keeps whole seconds, and a
			// request at or before the token's creation is already
			// served by the secret it was made with.
			RequestedAt:                metav1.NewTime(time.Now().Add(time.Second)),
			PreviousSecretExpiresAfter: &metav1.Duration{Duration: time.Hour},
		}
	})
	second := waitSecret(t, tok, "a new secret published", func(c credentials) bool { return complete(c) && c.secret != first.secret })
	if second.id != first.id {
		t.Errorf("client ID changed by a rotation: %q, was %q", second.id, first.id)
	}
	if !letIn(t, host, second) {
		t.Error("the rotated secret is refused")
	}
	if !letIn(t, host, first) {
		t.Error("the replaced secret is refused during the overlap")
	}
	wait.Eventually(t, wait.Patience, "the rotation in status", func() error {
		if err := p.Get(tok); err != nil {
			return err
		}
		if r := tok.Status.AtProvider.Rotation; r == nil || r.PreviousSecretExpiresAt == nil {
			return fmt.Errorf("status.atProvider.rotation %+v", r)
		}
		return nil
	})
	noSecretIn(t, tok, second.secret)

	advance(t, time.Hour+time.Minute)
	if letIn(t, host, first) {
		t.Error("the replaced secret is let in after the overlap")
	}
	if !letIn(t, host, second) {
		t.Error("the rotated secret is refused after the overlap")
	}
	// Polls publish the client ID; they must never empty the secret. They
	// observe tokens from the account's list, so two more lists are two
	// more rounds of polls.
	p.WaitServed(t, 2, "GET", "/service_tokens$")
	if got := secretOf(t, tok); got != second {
		t.Errorf("the Secret changed after polls: client %q, secret of %d characters", got.id, len(got.secret))
	}
}

// (c) A create whose answer is lost leaves a token whose secret no one
// has: it is deleted and a new one made, whose Secret is let in.
func TestALostCreateLeavesNoTokenNobodyCanUse(t *testing.T) {
	ns := p.Namespace(t)
	host := "lost-" + ns + ".example.com"
	lost := p.Sim.LostResponses()["access_service_tokens.create"]
	p.Sim.LoseNext("access_service_tokens.create", 1)
	t.Cleanup(func() { p.Sim.LoseNext("access_service_tokens.create", 0) })
	tok := serviceToken(ns, "lost")
	p.Create(t, tok)
	p.WaitReady(t, tok)
	if n := p.Sim.LostResponses()["access_service_tokens.create"] - lost; n != 1 {
		t.Fatalf("%d create answers lost, want 1: the test did not test a lost create", n)
	}
	named := tokensNamed(t, tok.Spec.ForProvider.Name)
	if len(named) != 1 || named[0].ID != meta.GetExternalName(tok) {
		t.Fatalf("tokens named %q: %+v; want only the resource's (%s): the lost create's deleted", tok.Spec.ForProvider.Name, named, meta.GetExternalName(tok))
	}
	guarded(t, ns, "lost", host)
	if c := waitSecret(t, tok, "credentials published", complete); !letIn(t, host, c) {
		t.Error("the published credentials are refused")
	}
}

// (e) Drift: a name and a duration changed in Cloudflare are corrected,
// and the published secret still works.
func TestADriftedTokenIsCorrected(t *testing.T) {
	ns := p.Namespace(t)
	host := "drift-" + ns + ".example.com"
	tok := serviceToken(ns, "drift")
	p.Create(t, tok)
	p.WaitReady(t, tok)
	guarded(t, ns, "drift", host)
	c := waitSecret(t, tok, "credentials published", complete)
	id := meta.GetExternalName(tok)
	if _, err := p.Cloudflare.UpdateServiceToken(context.Background(), id, cloudflare.ServiceTokenInput{Name: "renamed", Duration: "24h"}); err != nil {
		t.Fatal(err)
	}
	wait.Eventually(t, wait.Patience, "the name and duration corrected", func() error {
		got, err := p.Cloudflare.GetServiceToken(context.Background(), id)
		if err != nil {
			return err
		}
		if got.Name != tok.Spec.ForProvider.Name || got.Duration != "8760h" {
			return fmt.Errorf("name %q, duration %q", got.Name, got.Duration)
		}
		return nil
	})
	if !letIn(t, host, c) || secretOf(t, tok) != c {
		t.Error("the published credentials changed or stopped working after the correction")
	}
}

// An imported token watched with the Observe policy: Ready, its client ID
// published, nothing written to Cloudflare.
func TestAnImportedTokenIsObservedOnly(t *testing.T) {
	ns := p.Namespace(t)
	made, err := p.Cloudflare.CreateServiceToken(context.Background(), cloudflare.ServiceTokenInput{Name: "imported-" + ns})
	if err != nil {
		t.Fatal(err)
	}
	tok := serviceToken(ns, "imported")
	tok.Spec.ForProvider.Name = "different-" + ns
	tok.Spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionObserve}
	meta.SetExternalName(tok, made.ID)
	writes := p.WriteCalls()
	p.Create(t, tok)
	p.WaitReady(t, tok)
	c := waitSecret(t, tok, "the client ID published", func(c credentials) bool { return c.id != "" })
	if c.id != made.ClientID || c.secret != "" {
		t.Errorf("Secret: client %q (want %q), a secret of %d characters (an import's is unknown)", c.id, made.ClientID, len(c.secret))
	}
	if n := p.WriteCalls() - writes; n != 0 {
		t.Errorf("%d writes to Cloudflare for an Observe-only import", n)
	}
	if got, err := p.Cloudflare.GetServiceToken(context.Background(), made.ID); err != nil || got.Name != "imported-"+ns {
		t.Errorf("the imported token: %+v, %v", got, err)
	}
}

// A policy naming another namespace's service token by its raw ID is
// refused (NotAllowed) and never written: it would let that team's
// machines in. The same ID in the token's own namespace is fine.
func TestAnotherNamespacesTokenIsRefusedByID(t *testing.T) {
	owner, other := p.Namespace(t), p.Namespace(t)
	tok := serviceToken(owner, "deployer")
	p.Create(t, tok)
	p.WaitReady(t, tok)
	id := tok.Status.AtProvider.ID
	policy := func(ns string) *v1alpha1.AccessPolicy {
		pol := &v1alpha1.AccessPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "by-id"}}
		pol.Spec.ForProvider = v1alpha1.AccessPolicyParameters{Name: "by-id-" + ns, Decision: "non_identity",
			Include: []v1alpha1.AccessRule{{ServiceTokenID: &id}}}
		return pol
	}
	foreign, own := policy(other), policy(owner)
	p.Create(t, foreign)
	p.Create(t, own)
	p.WaitSynced(t, foreign, "the foreign token refused", func(c xpv2.Condition) bool {
		return c.Status == corev1.ConditionFalse && c.Reason == "NotAllowed" && strings.Contains(c.Message, "AccessServiceToken "+owner+"/deployer")
	})
	p.WaitReady(t, own)
	all, err := p.Cloudflare.ListAccessPolicies(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, pol := range all {
		if pol.Name == "by-id-"+other {
			t.Errorf("a policy naming another namespace's token was written: %+v", pol)
		}
	}
	p.DeleteAndWait(t, foreign)
	p.DeleteAndWait(t, own)
	p.DeleteAndWait(t, tok)
}
