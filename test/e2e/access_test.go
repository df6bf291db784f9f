package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/common"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

// TestAHostnameProtectedByASharedPolicyThroughTheBinary: a platform team's
// AccessPolicy, shared with namespaces by label, protects a PublicHostname of
// another namespace through the provider binary (its RBAC for the Access
// kinds and for reading namespaces' labels): the application made, every
// rule checked, the DNS record never meeting a rule without the check, and
// the simulator's evaluation letting in exactly whom the policy names. The
// policy's deletion waits while the application uses it; the namespace's
// deletion takes the application, then the policy can go.
func TestAHostnameProtectedByASharedPolicyThroughTheBinary(t *testing.T) {
	ctx := context.Background()
	platform := namespace(t, "access-platform")
	ns := namespace(t, "access-app")
	n := &corev1.Namespace{}
	if err := env.kube.Get(ctx, client.ObjectKey{Name: ns}, n); err != nil {
		t.Fatal(err)
	}
	n.Labels["access.example.com/employees"] = "true"
	if err := env.kube.Update(ctx, n); err != nil {
		t.Fatal(err)
	}
	create := func(o client.Object) {
		t.Helper()
		if err := env.kube.Create(ctx, o); err != nil {
			t.Fatalf("create %T %s: %v", o, o.GetName(), err)
		}
	}
	employees := &ztv1alpha1.AccessPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: platform, Name: "employees"},
		Spec: ztv1alpha1.AccessPolicySpec{
			AllowedNamespaces: &ztv1alpha1.AllowedNamespaces{From: ztv1alpha1.NamespacesFromSelector, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"access.example.com/employees": "true"}}},
			ForProvider:       ztv1alpha1.AccessPolicyParameters{Name: "e2e employees " + platform, Decision: "allow", Include: []ztv1alpha1.AccessRule{{EmailDomain: ptr.To("example.com")}}},
		},
	}
	create(employees)
	create(&v1alpha1.CloudflareTunnel{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "edge"},
		Spec:       v1alpha1.CloudflareTunnelSpec{TunnelName: ptr.To("e2e-" + ns), Replicas: ptr.To[int32](1)},
	})
	host := "protected-" + ns + "." + zone
	watch := env.sim.WatchExposure(host)
	ph := &v1alpha1.PublicHostname{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "dashboard"},
		Spec: v1alpha1.PublicHostnameSpec{
			TunnelRef: v1alpha1.TunnelReference{Name: "edge"},
			Hostname:  host,
			Origin:    &v1alpha1.Origin{Service: &v1alpha1.ServiceOrigin{Name: "web", Port: intstr.FromInt32(80)}},
			Access:    &v1alpha1.Access{Policies: []v1alpha1.AccessPolicyName{{Name: "employees", Namespace: platform}}},
		},
	}
	create(ph)
	publicHostnameReady(t, ph)
	for email, want := range map[string]bool{"bob@example.com": true, "eve@example.net": false} {
		if got, why := env.sim.AccessDecision(host, "/", sim.AccessIdentity{Email: email}); got != want {
			t.Errorf("%s let in: %v (%s), want %v", email, got, why, want)
		}
	}

	t.Run("ThePolicyWaitsForItsApplication", func(t *testing.T) {
		if err := env.kube.Delete(ctx, employees); err != nil {
			t.Fatal(err)
		}
		wait.Eventually(t, 2*time.Minute, "PolicyInUse counting the application of the other namespace, never naming it", func() error {
			if err := env.kube.Get(ctx, client.ObjectKeyFromObject(employees), employees); err != nil {
				return err
			}
			if c := employees.GetCondition(xpv2.TypeSynced); c.Reason != common.ReasonPolicyInUse || !strings.Contains(c.Message, "1 AccessApplication(s) of other namespaces") || strings.Contains(c.Message, ns) {
				return fmt.Errorf("Synced=%s %s: %s", c.Status, c.Reason, c.Message)
			}
			return nil
		})
		if got, _ := env.sim.AccessDecision(host, "/", sim.AccessIdentity{Email: "bob@example.com"}); !got {
			t.Error("the policy waiting for deletion stopped letting its people in")
		}
	})

	cft := &v1alpha1.CloudflareTunnel{}
	if err := env.kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: "edge"}, cft); err != nil {
		t.Fatal(err)
	}
	env.deleteNamespace(t, ns, "edge", cft.Status.TunnelID, nil)
	if writes, exposed := env.sim.StopWatch(watch); writes == 0 || len(exposed) != 0 {
		t.Errorf("%d writes checked; reachable without its Access check: %q", writes, exposed)
	}
	wait.Eventually(t, 2*time.Minute, "the policy gone once its application is", func() error {
		if err := env.kube.Get(ctx, client.ObjectKeyFromObject(employees), employees); !kerrors.IsNotFound(err) {
			return fmt.Errorf("still there (%v)", err)
		}
		return nil
	})
	for _, a := range env.sim.Snapshot().Access.Applications {
		if strings.EqualFold(a.Domain, host) {
			t.Errorf("Access application %s for %s left behind", a.ID, host)
		}
	}
	for _, p := range env.sim.Snapshot().Access.Policies {
		if p.Name == employees.Spec.ForProvider.Name {
			t.Errorf("Access policy %s left behind", p.ID)
		}
	}
}

// TestACIJobsServiceTokenThroughTheBinary: a CI job's way in. An
// AccessServiceToken writes its client ID and secret to a Secret; a
// non_identity policy names it by reference and protects a PublicHostname.
// The simulator lets the Secret's credentials in and refuses a wrong secret
// and a person; a rotation with an overlap publishes a new secret while the
// old one still works. The suite's leak check (TestMain) then looks for
// every client secret issued in the provider's log, events and statuses.
func TestACIJobsServiceTokenThroughTheBinary(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t, "access-ci")
	create := func(o client.Object) {
		t.Helper()
		if err := env.kube.Create(ctx, o); err != nil {
			t.Fatalf("create %T %s: %v", o, o.GetName(), err)
		}
	}
	tok := &ztv1alpha1.AccessServiceToken{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ci"}}
	tok.Spec.ForProvider = ztv1alpha1.AccessServiceTokenParameters{Name: "e2e ci " + ns, Duration: "8760h"}
	tok.Spec.WriteConnectionSecretToReference = &xpv2.LocalSecretReference{Name: "ci-credentials"}
	create(tok)
	create(&ztv1alpha1.AccessPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ci-only"},
		Spec: ztv1alpha1.AccessPolicySpec{ForProvider: ztv1alpha1.AccessPolicyParameters{Name: "e2e ci only " + ns, Decision: "non_identity",
			Include: []ztv1alpha1.AccessRule{{ServiceTokenRef: &xpv2.NamespacedReference{Name: "ci"}}}}},
	})
	create(&v1alpha1.CloudflareTunnel{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "edge"},
		Spec:       v1alpha1.CloudflareTunnelSpec{TunnelName: ptr.To("e2e-" + ns), Replicas: ptr.To[int32](1)},
	})
	host := "ci-" + ns + "." + zone
	watch := env.sim.WatchExposure(host)
	ph := &v1alpha1.PublicHostname{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "artifacts"},
		Spec: v1alpha1.PublicHostnameSpec{
			TunnelRef: v1alpha1.TunnelReference{Name: "edge"},
			Hostname:  host,
			Origin:    &v1alpha1.Origin{Service: &v1alpha1.ServiceOrigin{Name: "artifacts", Port: intstr.FromInt32(80)}},
			Access:    &v1alpha1.Access{Policies: []v1alpha1.AccessPolicyName{{Name: "ci-only"}}},
		},
	}
	create(ph)
	publicHostnameReady(t, ph)
	credentials := func(what string, ok func(id, secret string) bool) (string, string) {
		t.Helper()
		var id, secret string
		wait.Eventually(t, 2*time.Minute, what, func() error {
			s := &corev1.Secret{}
			if err := env.kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ci-credentials"}, s); err != nil {
				return err
			}
			id, secret = string(s.Data[ztv1alpha1.KeyServiceTokenClientID]), string(s.Data[ztv1alpha1.KeyServiceTokenClientSecret])
			if !ok(id, secret) {
				return fmt.Errorf("the Secret holds client ID %q and a secret of %d characters", id, len(secret))
			}
			return nil
		})
		return id, secret
	}
	letIn := func(who sim.AccessIdentity) bool {
		ok, why := env.sim.AccessDecision(host, "/", who)
		t.Logf("%s%s: %v (%s)", who.ClientID, who.Email, ok, why)
		return ok
	}
	id, first := credentials("the client ID and secret published", func(id, secret string) bool { return id != "" && secret != "" })
	if !letIn(sim.AccessIdentity{ClientID: id, ClientSecret: first}) {
		t.Fatal("the Secret's credentials are refused")
	}
	if letIn(sim.AccessIdentity{ClientID: id, ClientSecret: strings.Repeat("0", 64)}) || letIn(sim.AccessIdentity{Email: "bob@example.com"}) {
		t.Error("a wrong secret or a person is let in by a service-token-only policy")
	}

	edit(t, ctx, env.kube, tok, client.ObjectKeyFromObject(tok), func(tok *ztv1alpha1.AccessServiceToken) {
		tok.Spec.ForProvider.Rotation = &ztv1alpha1.AccessServiceTokenRotation{
			// A second ahead: the API server keeps whole seconds.
			RequestedAt:                metav1.NewTime(time.Now().Add(time.Second)),
			PreviousSecretExpiresAfter: &metav1.Duration{Duration: time.Hour},
		}
	})
	rotatedID, second := credentials("a new secret published", func(id, secret string) bool { return secret != "" && secret != first })
	if rotatedID != id {
		t.Errorf("a rotation changed the client ID: %q, was %q", rotatedID, id)
	}
	if !letIn(sim.AccessIdentity{ClientID: id, ClientSecret: second}) || !letIn(sim.AccessIdentity{ClientID: id, ClientSecret: first}) {
		t.Error("during the overlap both the new and the replaced secret must be let in")
	}

	cft := &v1alpha1.CloudflareTunnel{}
	if err := env.kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: "edge"}, cft); err != nil {
		t.Fatal(err)
	}
	env.deleteNamespace(t, ns, "edge", cft.Status.TunnelID, nil)
	if writes, exposed := env.sim.StopWatch(watch); writes == 0 || len(exposed) != 0 {
		t.Errorf("%d writes checked; reachable without its Access check: %q", writes, exposed)
	}
	snap := env.sim.Snapshot()
	for _, tk := range snap.Access.ServiceTokens {
		if tk.Name == tok.Spec.ForProvider.Name {
			t.Errorf("service token %s left behind", tk.ID)
		}
	}
}

// publicHostnameReady waits for ph to be Ready, reading it back into ph.
func publicHostnameReady(t *testing.T, ph *v1alpha1.PublicHostname) {
	t.Helper()
	wait.Eventually(t, 3*time.Minute, "the PublicHostname Ready", func() error {
		if err := env.kube.Get(context.Background(), client.ObjectKeyFromObject(ph), ph); err != nil {
			return err
		}
		if c := ph.GetCondition(xpv2.TypeReady); c.Status != corev1.ConditionTrue {
			return fmt.Errorf("Ready=%s %s: %s", c.Status, c.Reason, c.Message)
		}
		return nil
	})
}
