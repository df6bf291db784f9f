package providerconfig

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

func clusterConfig(name, secretNS string) *v1alpha1.ClusterProviderConfig {
	return &v1alpha1.ClusterProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.ProviderConfigSpec{AccountID: account, Credentials: v1alpha1.ProviderCredentials{
			Source: v1alpha1.CredentialsSourceSecret, SecretRef: &v1alpha1.SecretKeySelector{Namespace: secretNS, Name: "cf"},
		}},
	}
}

func hasFinalizer(ctx context.Context, o client.Object, want bool) func() error {
	return func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(o), o); err != nil {
			return err
		}
		if got := slices.Contains(o.GetFinalizers(), FinalizerCredentialsInUse); got != want {
			return fmt.Errorf("%s finalizers %v: has %s = %t, want %t", o.GetName(), o.GetFinalizers(), FinalizerCredentialsInUse, got, want)
		}
		return nil
	}
}

func gone(ctx context.Context, o client.Object) func() error {
	return func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(o), o); !kerrors.IsNotFound(err) {
			return fmt.Errorf("%s still there (finalizers %v, err %v)", o.GetName(), o.GetFinalizers(), err)
		}
		return nil
	}
}

// TestTerminatingClusterConfigOutlivesItsUsers is `kubectl delete -f` of a
// file holding a ClusterProviderConfig and the namespace using it: the
// config is deleted first and stays Terminating because it is in use; then
// the namespace's deletion removes the usage records at once, before the
// managed resources have deleted their Cloudflare objects. The config and
// its Secret must stay until the last managed resource naming it is gone.
func TestTerminatingClusterConfigOutlivesItsUsers(t *testing.T) {
	ctx := context.Background()
	env.StartManager(t, setup)
	ns := createNamespace(t, ctx)
	secretNS := createNamespace(t, ctx)
	secret := tokenSecret(secretNS, "cf", map[string]string{"CLOUDFLARE_API_TOKEN": token})
	cpc := clusterConfig("shared-"+ns, secretNS)
	ref := &xpv2.ProviderConfigReference{Kind: v1alpha1.ClusterProviderConfigKind, Name: cpc.Name}
	// A real managed resource (no controller runs for it here), and the
	// usage record crossplane-runtime's tracker would write for it.
	route := &ztv1alpha1.HostnameRoute{
		TypeMeta:   metav1.TypeMeta{APIVersion: ztv1alpha1.SchemeGroupVersion.String(), Kind: ztv1alpha1.HostnameRouteKind},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "user"},
		Spec: ztv1alpha1.HostnameRouteSpec{
			ManagedResourceSpec: xpv2.ManagedResourceSpec{ProviderConfigReference: ref},
			ForProvider:         ztv1alpha1.HostnameRouteParameters{Hostname: "user.internal", TunnelID: ptr.To("00000000-0000-0000-0000-000000000001")},
		},
	}
	for _, o := range []client.Object{secret, cpc, route} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatalf("cannot create %s: %v", o.GetName(), err)
		}
	}
	// Create cleared the type; the usage's owner reference needs it.
	route.SetGroupVersionKind(ztv1alpha1.HostnameRouteGroupVersionKind)
	if err := resource.NewProviderConfigUsageTracker(env.Client, &v1alpha1.ProviderConfigUsage{}).Track(ctx, route); err != nil {
		t.Fatal(err)
	}
	wait.Eventually(t, 30*time.Second, "the config kept for its user", hasFinalizer(ctx, cpc, true))
	wait.Eventually(t, 30*time.Second, "the config's Secret kept for its user", hasFinalizer(ctx, secret, true))

	if err := env.Client.Delete(ctx, cpc); err != nil {
		t.Fatal(err)
	}
	// The namespace goes: its usage records first (envtest runs no
	// namespace controller, so the test plays it).
	if err := env.Client.DeleteAllOf(ctx, &v1alpha1.ProviderConfigUsage{}, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(ctx, secret); err != nil {
		t.Fatal(err)
	}
	// crossplane-runtime's own in-use finalizer follows the usage records:
	// once it has gone, only FinalizerCredentialsInUse holds the config.
	wait.Eventually(t, 30*time.Second, "crossplane-runtime's in-use finalizer released", func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(cpc), cpc); err != nil {
			return err
		}
		if slices.Contains(cpc.GetFinalizers(), "in-use.crossplane.io") {
			return fmt.Errorf("finalizers %v", cpc.GetFinalizers())
		}
		return nil
	})
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(cpc), cpc); err != nil {
		t.Fatalf("the Terminating ClusterProviderConfig was released while a managed resource still names it: %v", err)
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(secret), secret); err != nil {
		t.Fatalf("the Secret of a config in use was released: %v", err)
	}
	if _, err := clients.ResolveSpec(ctx, env.Client, cpc.Spec, "", nil); err != nil {
		t.Errorf("the managed resource can no longer resolve its credentials: %v", err)
	}

	// The last user is gone from Kubernetes (its own finalizer waits for
	// Cloudflare): both are released.
	if err := env.Client.Delete(ctx, route); err != nil {
		t.Fatal(err)
	}
	wait.Eventually(t, time.Minute, "the config released once unused", gone(ctx, cpc))
	wait.Eventually(t, time.Minute, "the Secret released once unused", gone(ctx, secret))
}

// TestTerminatingConfigReportsItsCredentials: a config Terminating because
// it is in use still says whether its credentials resolve.
func TestTerminatingConfigReportsItsCredentials(t *testing.T) {
	ctx := context.Background()
	env.StartManager(t, setup)
	ns := createNamespace(t, ctx)
	secretNS := createNamespace(t, ctx)
	secret := tokenSecret(secretNS, "cf", map[string]string{"CLOUDFLARE_API_TOKEN": token})
	cpc := clusterConfig("stale-"+ns, secretNS)
	for _, o := range []client.Object{secret, cpc} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	// A user known only by its usage record keeps the config Terminating.
	user := newManaged(ns, "user", &xpv2.ProviderConfigReference{Kind: v1alpha1.ClusterProviderConfigKind, Name: cpc.Name})
	if err := resource.NewProviderConfigUsageTracker(env.Client, &v1alpha1.ProviderConfigUsage{}).Track(ctx, user); err != nil {
		t.Fatal(err)
	}
	wait.Eventually(t, 30*time.Second, "Ready", wantReady(ctx, cpc.DeepCopy(), corev1.ConditionTrue, string(ReasonCredentialsAvailable)))
	wait.Eventually(t, 30*time.Second, "the user counted", func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(cpc), cpc); err != nil {
			return err
		}
		if u := cpc.GetUsers(); u != 1 {
			return fmt.Errorf("users = %d, want 1", u)
		}
		return nil
	})
	if err := env.Client.Delete(ctx, cpc); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(ctx, secret); err != nil {
		t.Fatal(err)
	}
	wait.Eventually(t, 30*time.Second, "the missing Secret reported on the Terminating config", wantReady(ctx, cpc.DeepCopy(), corev1.ConditionFalse, clients.ReasonSecretNotFound))
	if err := env.Client.DeleteAllOf(ctx, &v1alpha1.ProviderConfigUsage{}, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	wait.Eventually(t, 30*time.Second, "the config deleted once unused", gone(ctx, cpc))
}
