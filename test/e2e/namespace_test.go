package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/providerconfig"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

// TestNamespaceDeletion deletes a team's namespace with everything in it —
// its token Secret, the ProviderConfig reading it, a CloudflareTunnel and
// Ingresses — in one `kubectl delete namespace`, with the cluster's real
// namespace controller. Every Cloudflare object made for the namespace must
// be deleted and the namespace must finish terminating.
func TestNamespaceDeletion(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t, "teardown")
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team-token"},
		StringData: map[string]string{"CLOUDFLARE_API_TOKEN": env.token, "CLOUDFLARE_ACCOUNT_ID": env.account},
	}
	pc := &v1alpha1.ProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team"},
		Spec: v1alpha1.ProviderConfigSpec{
			Credentials: v1alpha1.ProviderCredentials{Source: "Secret", SecretRef: &v1alpha1.SecretKeySelector{Name: secret.Name}},
			Endpoint:    ptr.To(env.simURL),
		},
	}
	for _, o := range []client.Object{secret, pc} {
		if err := env.kube.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	workload(t, ns, "edge", 2, &xpv2.ProviderConfigReference{Kind: v1alpha1.ProviderConfigKind, Name: pc.Name})
	wait.Eventually(t, 3*time.Minute, "every managed resource Ready", allReady(t, ns, 1+2+2+1))
	var ids []string
	for _, m := range managed(t, ns) {
		ids = append(ids, meta.GetExternalName(m))
	}
	cft := &v1alpha1.CloudflareTunnel{}
	if err := env.kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: "edge"}, cft); err != nil {
		t.Fatal(err)
	}
	env.sim.SetConnectors(cft.Status.TunnelID, 2)
	wait.Eventually(t, time.Minute, "the token Secret kept for its users", func() error {
		if err := env.kube.Get(ctx, client.ObjectKeyFromObject(secret), secret); err != nil {
			return err
		}
		if !slices.Contains(secret.Finalizers, providerconfig.FinalizerCredentialsInUse) {
			return fmt.Errorf("finalizers %v", secret.Finalizers)
		}
		return nil
	})

	start := time.Now()
	deleteNamespace(t, ns, cft.Status.TunnelID, ids)
	t.Logf("namespace with %d managed resources deleted, Cloudflare objects included, in %s", len(ids), time.Since(start).Round(time.Second))
}

// TestClusterConfigDeletedBeforeItsUsersNamespace is one `kubectl delete -f`
// of a file holding a ClusterProviderConfig and a namespace using it: the
// config goes first (Terminating, in use), then the namespace, whose usage
// records vanish at once. The config must still serve the namespace's
// managed resources until every Cloudflare object made for it is deleted,
// and go after them.
func TestClusterConfigDeletedBeforeItsUsersNamespace(t *testing.T) {
	ctx := context.Background()
	secretNS := namespace(t, "shared-credentials")
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: secretNS, Name: "token"},
		StringData: map[string]string{"CLOUDFLARE_API_TOKEN": env.token, "CLOUDFLARE_ACCOUNT_ID": env.account},
	}
	cpc := &v1alpha1.ClusterProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "shared"},
		Spec: v1alpha1.ProviderConfigSpec{
			Credentials: v1alpha1.ProviderCredentials{Source: "Secret", SecretRef: &v1alpha1.SecretKeySelector{Namespace: secretNS, Name: secret.Name}},
			Endpoint:    ptr.To(env.simURL),
		},
	}
	for _, o := range []client.Object{secret, cpc} {
		if err := env.kube.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	ns := namespace(t, "shared-users")
	workload(t, ns, "edge", 1, &xpv2.ProviderConfigReference{Kind: v1alpha1.ClusterProviderConfigKind, Name: cpc.Name})
	wait.Eventually(t, 3*time.Minute, "every managed resource Ready", allReady(t, ns, 1+1+1+1))
	var ids []string
	for _, m := range managed(t, ns) {
		ids = append(ids, meta.GetExternalName(m))
	}
	cft := &v1alpha1.CloudflareTunnel{}
	if err := env.kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: "edge"}, cft); err != nil {
		t.Fatal(err)
	}
	env.sim.SetConnectors(cft.Status.TunnelID, 2)
	wait.Eventually(t, time.Minute, "the config kept for its users", func() error {
		if err := env.kube.Get(ctx, client.ObjectKeyFromObject(cpc), cpc); err != nil {
			return err
		}
		if !slices.Contains(cpc.Finalizers, providerconfig.FinalizerCredentialsInUse) {
			return fmt.Errorf("finalizers %v", cpc.Finalizers)
		}
		return nil
	})

	if err := env.kube.Delete(ctx, cpc); err != nil {
		t.Fatal(err)
	}
	deleteNamespace(t, ns, cft.Status.TunnelID, ids)
	wait.Eventually(t, 2*time.Minute, "the config gone after its last user", func() error {
		if err := env.kube.Get(ctx, client.ObjectKeyFromObject(cpc), cpc); !kerrors.IsNotFound(err) {
			return fmt.Errorf("still there: finalizers %v (%v)", cpc.Finalizers, err)
		}
		return nil
	})
}

// deleteNamespace deletes ns with the cluster's namespace controller,
// playing cloudflared disconnecting once the CloudflareTunnel "edge" has
// removed its Deployment (KWOK runs no container), and checks that the
// namespace finishes terminating and none of the Cloudflare objects ids is
// still live.
func deleteNamespace(t *testing.T, ns, tunnelID string, ids []string) {
	t.Helper()
	env.deleteNamespace(t, ns, "edge", tunnelID, ids)
}

// deleteNamespace is the package-level deleteNamespace in h's cluster, for
// the CloudflareTunnel named tunnel.
func (h *harness) deleteNamespace(t *testing.T, ns, tunnel, tunnelID string, ids []string) {
	t.Helper()
	ctx := context.Background()
	if err := h.kube.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	wait.Eventually(t, 3*time.Minute, "the cloudflared Deployment gone", func() error {
		if err := h.kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: tunnel + "-cloudflared"}, &appsv1.Deployment{}); !kerrors.IsNotFound(err) {
			return fmt.Errorf("still there (%v)", err)
		}
		return nil
	})
	h.sim.SetConnectors(tunnelID, 0)
	wait.Eventually(t, 3*time.Minute, "the namespace gone", func() error {
		n := &corev1.Namespace{}
		if err := h.kube.Get(ctx, client.ObjectKey{Name: ns}, n); !kerrors.IsNotFound(err) {
			return fmt.Errorf("still there: phase %s, conditions %v (%v)", n.Status.Phase, n.Status.Conditions, err)
		}
		return nil
	})
	live := liveIDs()
	for _, id := range ids {
		if live[id] {
			t.Errorf("Cloudflare object %s of the deleted namespace is still live", id)
		}
	}
}
