package providerconfig

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource/fake"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Run(m, &env)) }

const (
	account = "0123456789abcdef0123456789abcdef"
	token   = "test-token-value"
)

// managed is a stand-in managed resource: the config controllers and the
// usage tracker only need its metadata, kind and providerConfigRef.
type managed struct {
	fake.ModernManaged
	kind metav1.TypeMeta
}

func (m *managed) GetObjectKind() schema.ObjectKind { return &m.kind }

func newManaged(ns, name string, ref *xpv2.ProviderConfigReference) *managed {
	m := &managed{kind: metav1.TypeMeta{APIVersion: "zerotrust.tunnels.cloudflare.com/v1alpha1", Kind: "Tunnel"}}
	m.SetNamespace(ns)
	m.SetName(name)
	m.SetUID(types.UID(fmt.Sprintf("00000000-0000-0000-0000-%012d", time.Now().UnixNano()%1e12)))
	m.SetProviderConfigReference(ref)
	return m
}

func createNamespace(t *testing.T, ctx context.Context) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "cfg-"}}
	if err := env.Client.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

func tokenSecret(ns, name string, data map[string]string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, StringData: data}
}

func readyCondition(ctx context.Context, obj client.Object) (xpv2.Condition, error) {
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		return xpv2.Condition{}, err
	}
	return obj.(resource.Conditioned).GetCondition(xpv2.TypeReady), nil
}

func wantReady(ctx context.Context, obj client.Object, status corev1.ConditionStatus, reason string) func() error {
	return func() error {
		c, err := readyCondition(ctx, obj)
		if err != nil {
			return err
		}
		if c.Status != status || string(c.Reason) != reason {
			return fmt.Errorf("Ready is %s/%s (%q), want %s/%s", c.Status, c.Reason, c.Message, status, reason)
		}
		return nil
	}
}

// setup is SetupGated with credentials from the process's environment.
func setup(mgr ctrl.Manager, o controller.Options) error { return SetupGated(mgr, o, nil) }

func TestProviderConfigsAgainstAPIServer(t *testing.T) {
	ctx := context.Background()
	env.StartManager(t, setup)
	ns := createNamespace(t, ctx)
	secretNS := createNamespace(t, ctx)

	mustCreate := func(o client.Object) {
		t.Helper()
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatalf("cannot create %T %s: %v", o, o.GetName(), err)
		}
	}
	mustCreate(tokenSecret(secretNS, "cf", map[string]string{"CLOUDFLARE_API_TOKEN": token}))
	mustCreate(tokenSecret(ns, "cf", map[string]string{"CLOUDFLARE_API_TOKEN": token, "CLOUDFLARE_ACCOUNT_ID": account}))

	endpoint := "http://127.0.0.1:8787/client/v4/"
	cpc := &v1alpha1.ClusterProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "cfg-test-" + ns},
		Spec: v1alpha1.ProviderConfigSpec{
			AccountID: account,
			Endpoint:  &endpoint,
			Credentials: v1alpha1.ProviderCredentials{
				Source:    v1alpha1.CredentialsSourceSecret,
				SecretRef: &v1alpha1.SecretKeySelector{Namespace: secretNS, Name: "cf"},
			},
		},
	}
	mustCreate(cpc)
	// The account ID comes from the Secret's CLOUDFLARE_ACCOUNT_ID key.
	pc := &v1alpha1.ProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team-a"},
		Spec: v1alpha1.ProviderConfigSpec{Credentials: v1alpha1.ProviderCredentials{
			Source:    v1alpha1.CredentialsSourceSecret,
			SecretRef: &v1alpha1.SecretKeySelector{Name: "cf"},
		}},
	}
	mustCreate(pc)

	t.Run("DefaultsAreApplied", func(t *testing.T) {
		got := &v1alpha1.ProviderConfig{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(pc), got); err != nil {
			t.Fatal(err)
		}
		if got.Spec.Credentials.SecretRef.Key != v1alpha1.DefaultTokenKey {
			t.Errorf("secretRef.key defaulted to %q, want %q", got.Spec.Credentials.SecretRef.Key, v1alpha1.DefaultTokenKey)
		}
	})

	t.Run("CredentialsResolveToReady", func(t *testing.T) {
		wait.Eventually(t, 30*time.Second, "ClusterProviderConfig Ready", wantReady(ctx, &v1alpha1.ClusterProviderConfig{ObjectMeta: cpc.ObjectMeta}, corev1.ConditionTrue, string(ReasonCredentialsAvailable)))
		wait.Eventually(t, 30*time.Second, "ProviderConfig Ready", wantReady(ctx, &v1alpha1.ProviderConfig{ObjectMeta: pc.ObjectMeta}, corev1.ConditionTrue, string(ReasonCredentialsAvailable)))
	})

	tracker := resource.NewProviderConfigUsageTracker(env.Client, &v1alpha1.ProviderConfigUsage{})

	t.Run("ConfigForResolvesBothKinds", func(t *testing.T) {
		got, err := clients.ConfigFor(ctx, env.Client, tracker, newManaged(ns, "via-cluster", &xpv2.ProviderConfigReference{Kind: "ClusterProviderConfig", Name: cpc.Name}), nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := (clients.Config{Token: token, AccountID: account, Endpoint: endpoint, Source: "ClusterProviderConfig " + cpc.Name}); !cmp.Equal(*got, want, cmpopts.EquateEmpty()) {
			t.Errorf("ConfigFor(CPC) = %v, want %v", got, want)
		}
		got, err = clients.ConfigFor(ctx, env.Client, tracker, newManaged(ns, "via-namespaced", &xpv2.ProviderConfigReference{Kind: "ProviderConfig", Name: "team-a"}), nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := (clients.Config{Token: token, AccountID: account, Endpoint: v1alpha1.DefaultEndpoint, Source: "ProviderConfig " + ns + "/team-a", Namespaced: true}); !cmp.Equal(*got, want, cmpopts.EquateEmpty()) {
			t.Errorf("ConfigFor(PC) = %v, want %v", got, want)
		}
		if strings.Contains(fmt.Sprintf("%v %+v %#v %s", got, got, got, got), token) {
			t.Error("formatting a Config printed the token")
		}
	})

	t.Run("UsageBlocksDeletionUntilGone", func(t *testing.T) {
		for _, c := range []client.Object{&v1alpha1.ClusterProviderConfig{ObjectMeta: cpc.ObjectMeta}, &v1alpha1.ProviderConfig{ObjectMeta: pc.ObjectMeta}} {
			wait.Eventually(t, 30*time.Second, "one user counted on "+c.GetName(), func() error {
				if err := env.Client.Get(ctx, client.ObjectKeyFromObject(c), c); err != nil {
					return err
				}
				if u := c.(resource.UserCounter).GetUsers(); u != 1 {
					return fmt.Errorf("users = %d, want 1", u)
				}
				return nil
			})
			if err := env.Client.Delete(ctx, c); err != nil {
				t.Fatal(err)
			}
			wait.Eventually(t, 30*time.Second, c.GetName()+" Terminating because in use", func() error {
				if err := env.Client.Get(ctx, client.ObjectKeyFromObject(c), c); err != nil {
					return err
				}
				cond := c.(resource.Conditioned).GetCondition("Terminating")
				if c.GetDeletionTimestamp() == nil || cond.Reason != "InUse" {
					return fmt.Errorf("deletionTimestamp=%v Terminating=%s/%s", c.GetDeletionTimestamp(), cond.Status, cond.Reason)
				}
				return nil
			})
			// It stays while in use: the condition above is the controller's
			// answer to the deletion, written where it would have let go.
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(c), c); err != nil {
				t.Fatalf("%s was deleted while still in use: %v", c.GetName(), err)
			}
		}

		// envtest runs no garbage collector: play it, removing the usages
		// as Kubernetes would once their managed resources are gone.
		if err := env.Client.DeleteAllOf(ctx, &v1alpha1.ProviderConfigUsage{}, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		for _, c := range []client.Object{&v1alpha1.ClusterProviderConfig{ObjectMeta: cpc.ObjectMeta}, &v1alpha1.ProviderConfig{ObjectMeta: pc.ObjectMeta}} {
			wait.Eventually(t, 30*time.Second, c.GetName()+" deleted once unused", func() error {
				err := env.Client.Get(ctx, client.ObjectKeyFromObject(c), c)
				if kerrors.IsNotFound(err) {
					return nil
				}
				return fmt.Errorf("still there (err=%v)", err)
			})
		}
	})
}

func TestMissingCredentialsAreReported(t *testing.T) {
	ctx := context.Background()
	env.StartManager(t, setup)
	ns := createNamespace(t, ctx)

	missing := &v1alpha1.ProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "missing-secret"},
		Spec: v1alpha1.ProviderConfigSpec{AccountID: account, Credentials: v1alpha1.ProviderCredentials{
			Source: v1alpha1.CredentialsSourceSecret, SecretRef: &v1alpha1.SecretKeySelector{Name: "not-yet"},
		}},
	}
	wrongKey := &v1alpha1.ProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "wrong-key"},
		Spec: v1alpha1.ProviderConfigSpec{AccountID: account, Credentials: v1alpha1.ProviderCredentials{
			Source: v1alpha1.CredentialsSourceSecret, SecretRef: &v1alpha1.SecretKeySelector{Name: "other", Key: "token"},
		}},
	}
	noAccount := &v1alpha1.ProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "no-account"},
		Spec: v1alpha1.ProviderConfigSpec{Credentials: v1alpha1.ProviderCredentials{
			Source: v1alpha1.CredentialsSourceSecret, SecretRef: &v1alpha1.SecretKeySelector{Name: "other"},
		}},
	}
	for _, o := range []client.Object{
		tokenSecret(ns, "other", map[string]string{"CLOUDFLARE_API_TOKEN": token}),
		missing, wrongKey, noAccount,
	} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}

	wait.Eventually(t, 30*time.Second, "missing Secret reported", wantReady(ctx, missing.DeepCopy(), corev1.ConditionFalse, clients.ReasonSecretNotFound))
	wait.Eventually(t, 30*time.Second, "missing key reported", wantReady(ctx, wrongKey.DeepCopy(), corev1.ConditionFalse, clients.ReasonSecretKeyMissing))
	wait.Eventually(t, 30*time.Second, "missing account reported", wantReady(ctx, noAccount.DeepCopy(), corev1.ConditionFalse, clients.ReasonAccountIDMissing))

	wait.Eventually(t, 30*time.Second, "a Warning event naming the missing Secret", func() error {
		evs := &corev1.EventList{}
		if err := env.Client.List(ctx, evs, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, e := range evs.Items {
			if e.InvolvedObject.Name == missing.Name && e.Type == corev1.EventTypeWarning && e.Reason == clients.ReasonSecretNotFound && strings.Contains(e.Message, "not-yet") {
				if strings.Contains(e.Message, token) {
					return fmt.Errorf("event leaks the token: %q", e.Message)
				}
				return nil
			}
		}
		return fmt.Errorf("no Warning event among %d events", len(evs.Items))
	})

	// A managed resource using the broken config gets the same clear reason.
	_, err := clients.ConfigFor(ctx, env.Client, nil, newManaged(ns, "mr", &xpv2.ProviderConfigReference{Kind: "ProviderConfig", Name: missing.Name}), nil)
	if clients.Reason(err) != clients.ReasonSecretNotFound {
		t.Errorf("ConfigFor with a missing Secret: reason %q (%v), want %s", clients.Reason(err), err, clients.ReasonSecretNotFound)
	}

	// Creating the Secret fixes the config without touching it: the
	// controller watches the Secrets configs read.
	if err := env.Client.Create(ctx, tokenSecret(ns, "not-yet", map[string]string{"CLOUDFLARE_API_TOKEN": token})); err != nil {
		t.Fatal(err)
	}
	wait.Eventually(t, 30*time.Second, "config Ready once its Secret exists", wantReady(ctx, missing.DeepCopy(), corev1.ConditionTrue, string(ReasonCredentialsAvailable)))
}

func TestEnvironmentCredentials(t *testing.T) {
	ctx := context.Background()
	environ := func(k string) (string, bool) {
		v, ok := map[string]string{"CLOUDFLARE_API_TOKEN": token, "CLOUDFLARE_ACCOUNT_ID": account}[k]
		return v, ok
	}
	spec := v1alpha1.ProviderConfigSpec{Credentials: v1alpha1.ProviderCredentials{Source: v1alpha1.CredentialsSourceEnvironment}}
	got, err := clients.ResolveSpec(ctx, env.Client, spec, "", environ)
	if err != nil {
		t.Fatal(err)
	}
	if want := (clients.Config{Token: token, AccountID: account, Endpoint: v1alpha1.DefaultEndpoint}); !cmp.Equal(*got, want, cmpopts.EquateEmpty()) {
		t.Errorf("ResolveSpec(Environment) = %v, want %v", got, want)
	}
	empty := func(string) (string, bool) { return "", false }
	if _, err := clients.ResolveSpec(ctx, env.Client, spec, "", empty); clients.Reason(err) != clients.ReasonEnvironmentMissing {
		t.Errorf("empty environment: reason %q, want %s", clients.Reason(err), clients.ReasonEnvironmentMissing)
	}
}

func TestAPIServerRejectsInvalidConfigs(t *testing.T) {
	ctx := context.Background()
	ns := createNamespace(t, ctx)
	cases := map[string]struct {
		obj  client.Object
		want string
	}{
		"ClusterConfigSecretWithoutNamespace": {
			obj: &v1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "no-ns"}, Spec: v1alpha1.ProviderConfigSpec{
				Credentials: v1alpha1.ProviderCredentials{Source: v1alpha1.CredentialsSourceSecret, SecretRef: &v1alpha1.SecretKeySelector{Name: "cf"}},
			}},
			want: "namespace is required",
		},
		"SecretSourceWithoutSecretRef": {
			obj: &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "no-ref"}, Spec: v1alpha1.ProviderConfigSpec{
				Credentials: v1alpha1.ProviderCredentials{Source: v1alpha1.CredentialsSourceSecret},
			}},
			want: "secretRef is required",
		},
		"BadAccountID": {
			obj: &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bad-account"}, Spec: v1alpha1.ProviderConfigSpec{
				AccountID:   "not-an-account",
				Credentials: v1alpha1.ProviderCredentials{Source: v1alpha1.CredentialsSourceEnvironment},
			}},
			want: "spec.accountID",
		},
		"UnsupportedSource": {
			obj: &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bad-source"}, Spec: v1alpha1.ProviderConfigSpec{
				Credentials: v1alpha1.ProviderCredentials{Source: "Filesystem"},
			}},
			want: "spec.credentials.source",
		},
		"BadEndpoint": {
			obj: &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bad-endpoint"}, Spec: v1alpha1.ProviderConfigSpec{
				Endpoint:    ptr.To("ftp://example"),
				Credentials: v1alpha1.ProviderCredentials{Source: v1alpha1.CredentialsSourceEnvironment},
			}},
			want: "spec.endpoint",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := env.Client.Create(ctx, tc.obj)
			if !kerrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Create: got %v, want an Invalid error mentioning %q", err, tc.want)
			}
		})
	}
}
