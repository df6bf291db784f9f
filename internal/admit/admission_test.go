package admit_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"

	tunnelsv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	zerotrustv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/admit"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/rotation"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Run(m, &env)) }

// installedConfiguration is cluster/install's ValidatingWebhookConfiguration
// (rules, matchConditions, failure policy and paths as users get them),
// pointed at url instead of the in-cluster Service: the API server here
// runs on this machine, not in a cluster.
func installedConfiguration(t *testing.T, url string) *admissionregistrationv1.ValidatingWebhookConfiguration {
	t.Helper()
	f, err := os.Open(filepath.Join(testenv.RepoRoot(), "cluster", "install", "webhook.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
	for {
		u := map[string]any{}
		if err := d.Decode(&u); err != nil {
			t.Fatalf("no ValidatingWebhookConfiguration in cluster/install/webhook.yaml: %v", err)
		}
		if u["kind"] != "ValidatingWebhookConfiguration" {
			continue
		}
		vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u, vwc); err != nil {
			t.Fatal(err)
		}
		for i := range vwc.Webhooks {
			cc := &vwc.Webhooks[i].ClientConfig
			cc.URL = ptrTo(url + *cc.Service.Path)
			cc.Service = nil
		}
		return vwc
	}
}

func ptrTo[T any](v T) *T { return &v }

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestFutureRotationRefusedAtAdmission: with cluster/install's webhook
// configuration, its certificate provisioned by admit.SelfSigned against
// the real API server, and the provider's handlers served, the API server
// refuses a CloudflareTunnel or Tunnel whose rotation request is in 2099,
// with the message the user acts on; admits a current one; and lets an
// object stored with a future request before the webhook existed take an
// unrelated edit.
func TestFutureRotationRefusedAtAdmission(t *testing.T) {
	ctx := context.Background()
	c := env.Client
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "admit-"}}
	if err := c.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	future := metav1.NewTime(time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC))
	cft := func(name string, at metav1.Time) *tunnelsv1alpha1.CloudflareTunnel {
		return &tunnelsv1alpha1.CloudflareTunnel{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: name},
			Spec:       tunnelsv1alpha1.CloudflareTunnelSpec{TokenRotation: &tunnelsv1alpha1.TokenRotationRequest{RequestedAt: at}},
		}
	}

	// Stored before the webhook existed.
	stored := cft("stored-before", future)
	if err := c.Create(ctx, stored); err != nil {
		t.Fatalf("without the webhook a future request is admitted (the controller refuses it): %v", err)
	}

	port := freePort(t)
	vwc := installedConfiguration(t, "https://127.0.0.1:"+strconv.Itoa(port))
	if err := c.Create(ctx, vwc); err != nil {
		t.Fatalf("cannot install the webhook configuration: %v", err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), vwc) })

	dir := t.TempDir()
	ss := admit.SelfSigned{Client: c, Namespace: ns.Name, Service: "provider-cloudflare-tunnel-webhook", Secret: "provider-cloudflare-tunnel-webhook-tls",
		Configuration: vwc.Name, Hosts: []string{"127.0.0.1"}, Now: time.Now}
	if err := ss.Provision(ctx, dir); err != nil {
		t.Fatalf("Provision: %v", err)
	}
	sec := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: ss.Secret}, sec); err != nil {
		t.Fatalf("the certificate Secret: %v", err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(vwc), vwc); err != nil {
		t.Fatal(err)
	}
	for _, w := range vwc.Webhooks {
		if string(w.ClientConfig.CABundle) != string(sec.Data["ca.crt"]) {
			t.Errorf("webhook %s caBundle is not the Secret's CA", w.Name)
		}
	}
	if o := sec.OwnerReferences; len(o) != 1 || o[0].UID != vwc.UID {
		t.Errorf("the certificate Secret's owners %+v, want the configuration (uid %s): it would outlive the install", o, vwc.UID)
	}

	env.StartManager(t, func(mgr ctrl.Manager, _ controller.Options) error { return admit.Setup(mgr, time.Now) },
		func(o *ctrl.Options) {
			o.WebhookServer = webhook.NewServer(webhook.Options{Host: "127.0.0.1", Port: port, CertDir: dir})
		})

	refusal := "spec.tokenRotation.requestedAt 2099-01-01T00:00:00Z is more than 5m0s ahead of the provider's clock"
	// Served once the API server's dry run is refused by it (the API
	// server admits while it cannot reach the webhook: Ignore).
	wait.Eventually(t, 30*time.Second, "the webhook serving", func() error {
		err := c.Create(ctx, cft("probe", future), client.DryRunAll)
		if err == nil || !strings.Contains(err.Error(), refusal) {
			return fmt.Errorf("dry run of a 2099 request: %v", err)
		}
		return nil
	})

	t.Run("CloudflareTunnelInTheFutureRefused", func(t *testing.T) {
		err := c.Create(ctx, cft("future", future))
		if err == nil {
			t.Fatal("a 2099 request was admitted")
		}
		t.Logf("refused: %v", err)
		for _, want := range []string{`denied the request`, refusal, "a mistyped time? Set it to the current time ("} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("refusal %q lacks %q", err, want)
			}
		}
	})
	t.Run("CloudflareTunnelNowAdmitted", func(t *testing.T) {
		if err := c.Create(ctx, cft("now", metav1.Now())); err != nil {
			t.Errorf("a current request was refused: %v", err)
		}
	})
	t.Run("StoredFutureTakesUnrelatedEdits", func(t *testing.T) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(stored), stored); err != nil {
			t.Fatal(err)
		}
		stored.Labels = map[string]string{"team": "edge"}
		stored.Spec.Replicas = ptrTo(int32(3))
		if err := c.Update(ctx, stored); err != nil {
			t.Errorf("an unrelated edit of an object holding a stored future request was refused: %v", err)
		}
	})
	t.Run("StoredFutureChangedToAnotherFutureRefused", func(t *testing.T) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(stored), stored); err != nil {
			t.Fatal(err)
		}
		stored.Spec.TokenRotation.RequestedAt = metav1.NewTime(future.AddDate(-1, 0, 0))
		if err := c.Update(ctx, stored); err == nil || !strings.Contains(err.Error(), "2098-01-01T00:00:00Z is more than 5m0s ahead") {
			t.Errorf("a change to another future request: %v, want refused", err)
		}
	})
	t.Run("StoredFutureCorrectedToNow", func(t *testing.T) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(stored), stored); err != nil {
			t.Fatal(err)
		}
		stored.Spec.TokenRotation.RequestedAt = metav1.Now()
		if err := c.Update(ctx, stored); err != nil {
			t.Errorf("the correction to the current time was refused: %v", err)
		}
	})

	tunnel := func(name string, at metav1.Time) *zerotrustv1alpha1.Tunnel {
		tu := &zerotrustv1alpha1.Tunnel{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: name}}
		tu.Spec.ForProvider.Name = name
		tu.Spec.ForProvider.TokenRotation = &zerotrustv1alpha1.TokenRotation{RequestedAt: at}
		return tu
	}
	t.Run("TunnelInTheFutureRefused", func(t *testing.T) {
		err := c.Create(ctx, tunnel("future", future))
		if err == nil || !strings.Contains(err.Error(), "spec.forProvider.tokenRotation.requestedAt 2099-01-01T00:00:00Z is more than 5m0s ahead") {
			t.Errorf("a Tunnel with a 2099 request: %v, want refused", err)
		}
	})
	t.Run("TunnelNowAdmitted", func(t *testing.T) {
		if err := c.Create(ctx, tunnel("now", metav1.Now())); err != nil {
			t.Errorf("a Tunnel with a current request was refused: %v", err)
		}
	})
	t.Run("ServiceTokenInTheFutureRefused", func(t *testing.T) {
		err := c.Create(ctx, serviceToken(ns.Name, "future", future))
		if err == nil || !strings.Contains(err.Error(), "spec.forProvider.rotation.requestedAt 2099-01-01T00:00:00Z is more than 5m0s ahead") {
			t.Errorf("an AccessServiceToken with a 2099 request: %v, want refused", err)
		}
	})
	t.Run("ServiceTokenNowAdmitted", func(t *testing.T) {
		if err := c.Create(ctx, serviceToken(ns.Name, "now", metav1.Now())); err != nil {
			t.Errorf("an AccessServiceToken with a current request was refused: %v", err)
		}
	})
}

func serviceToken(ns, name string, at metav1.Time) *zerotrustv1alpha1.AccessServiceToken {
	st := &zerotrustv1alpha1.AccessServiceToken{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	st.Spec.ForProvider.Name = name
	st.Spec.ForProvider.Rotation = &zerotrustv1alpha1.AccessServiceTokenRotation{RequestedAt: at}
	return st
}

// TestUnmeantRotationTimesRefusedAtAdmission: the API server itself (the
// CRDs' CEL rules, no webhook) refuses a rotation request before
// rotation.Earliest — the zero time, which the controllers would read as
// unset and write back as null — on every kind that takes one, and admits
// rotation.Earliest itself.
func TestUnmeantRotationTimesRefusedAtAdmission(t *testing.T) {
	ctx := context.Background()
	c := env.Client
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "unmeant-"}}
	if err := c.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]func(name string, at metav1.Time) client.Object{
		"CloudflareTunnel": func(name string, at metav1.Time) client.Object {
			return &tunnelsv1alpha1.CloudflareTunnel{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: name},
				Spec:       tunnelsv1alpha1.CloudflareTunnelSpec{TokenRotation: &tunnelsv1alpha1.TokenRotationRequest{RequestedAt: at}},
			}
		},
		"Tunnel": func(name string, at metav1.Time) client.Object {
			tu := &zerotrustv1alpha1.Tunnel{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: name}}
			tu.Spec.ForProvider.Name = name
			tu.Spec.ForProvider.TokenRotation = &zerotrustv1alpha1.TokenRotation{RequestedAt: at}
			return tu
		},
		"AccessServiceToken": func(name string, at metav1.Time) client.Object { return serviceToken(ns.Name, name, at) },
	}
	// The zero time as a user types it: metav1.Time would send null.
	zero := func(obj client.Object) client.Object {
		u := &unstructured.Unstructured{}
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			t.Fatal(err)
		}
		u.SetUnstructuredContent(m)
		gvk, err := apiutil.GVKForObject(obj, c.Scheme())
		if err != nil {
			t.Fatal(err)
		}
		u.SetGroupVersionKind(gvk)
		for _, path := range [][]string{{"spec", "tokenRotation"}, {"spec", "forProvider", "tokenRotation"}, {"spec", "forProvider", "rotation"}} {
			if _, ok, _ := unstructured.NestedMap(m, path...); ok {
				if err := unstructured.SetNestedField(u.Object, "0001-01-01T00:00:00Z", append(path, "requestedAt")...); err != nil {
					t.Fatal(err)
				}
			}
		}
		return u
	}
	for kind, obj := range kinds {
		t.Run(kind, func(t *testing.T) {
			err := c.Create(ctx, zero(obj("zero", metav1.Now())))
			if err == nil || !strings.Contains(err.Error(), "requestedAt must be 2020-01-01T00:00:00Z or later") {
				t.Errorf("the zero time: %v, want refused", err)
			}
			err = c.Create(ctx, obj("before", metav1.NewTime(rotation.Earliest.Add(-time.Second))))
			if err == nil || !strings.Contains(err.Error(), "requestedAt must be "+rotation.Earliest.Format(time.RFC3339)+" or later") {
				t.Errorf("a second before rotation.Earliest: %v, want refused", err)
			}
			if err := c.Create(ctx, obj("earliest", metav1.NewTime(rotation.Earliest))); err != nil {
				t.Errorf("rotation.Earliest itself was refused: %v", err)
			}
		})
	}
}
