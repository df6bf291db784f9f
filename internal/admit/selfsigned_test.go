package admit

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/test"
)

func selfSigned(c client.Client, now time.Time) SelfSigned {
	return SelfSigned{Client: c, Namespace: "cloudflare-tunnel-system", Service: "provider-cloudflare-tunnel-webhook",
		Secret: "provider-cloudflare-tunnel-webhook-tls", Configuration: "provider-cloudflare-tunnel", Now: func() time.Time { return now }}
}

// generated is a Secret's data as a SelfSigned at now would write it.
func generated(t *testing.T, now time.Time) map[string][]byte {
	t.Helper()
	d, err := selfSigned(nil, now).generate()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// fakeAPI is the state the mock client reads and the writes it was sent.
type fakeAPI struct {
	secret        map[string][]byte // nil: no Secret
	createErr     error             // the Create of the Secret
	winner        map[string][]byte // the Secret after another replica wrote it first
	vwc           *admissionregistrationv1.ValidatingWebhookConfiguration
	createdSecret map[string][]byte
	createdOwners []metav1.OwnerReference
	patchedSecret map[string][]byte
	patchedVWC    *admissionregistrationv1.ValidatingWebhookConfiguration
}

func (f *fakeAPI) client() *test.MockClient {
	gets := 0
	return &test.MockClient{
		MockGet: func(_ context.Context, key client.ObjectKey, obj client.Object) error {
			switch o := obj.(type) {
			case *corev1.Secret:
				gets++
				data := f.secret
				if gets > 1 && f.winner != nil {
					data = f.winner
				}
				if data == nil {
					return kerrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, key.Name)
				}
				o.Name, o.Namespace, o.ResourceVersion, o.Data = key.Name, key.Namespace, "1", data
				return nil
			case *admissionregistrationv1.ValidatingWebhookConfiguration:
				if f.vwc == nil || f.vwc.Name != key.Name {
					return kerrors.NewNotFound(schema.GroupResource{Resource: "validatingwebhookconfigurations"}, key.Name)
				}
				f.vwc.DeepCopyInto(o)
				return nil
			}
			return nil
		},
		MockCreate: func(_ context.Context, obj client.Object, _ ...client.CreateOption) error {
			f.createdSecret = obj.(*corev1.Secret).Data
			f.createdOwners = obj.GetOwnerReferences()
			return f.createErr
		},
		MockPatch: func(_ context.Context, obj client.Object, _ client.Patch, _ ...client.PatchOption) error {
			switch o := obj.(type) {
			case *corev1.Secret:
				f.patchedSecret = o.Data
			case *admissionregistrationv1.ValidatingWebhookConfiguration:
				f.patchedVWC = o.DeepCopy()
			}
			return nil
		},
	}
}

func configuration(caBundle []byte) *admissionregistrationv1.ValidatingWebhookConfiguration {
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{Webhooks: []admissionregistrationv1.ValidatingWebhook{
		{Name: "cloudflaretunnels.rotation.tunnels.cloudflare.com", ClientConfig: admissionregistrationv1.WebhookClientConfig{CABundle: caBundle}},
		{Name: "tunnels.rotation.tunnels.cloudflare.com", ClientConfig: admissionregistrationv1.WebhookClientConfig{CABundle: caBundle}},
	}}
	vwc.Name, vwc.UID = "provider-cloudflare-tunnel", "vwc-uid"
	return vwc
}

func caBundles(vwc *admissionregistrationv1.ValidatingWebhookConfiguration) []string {
	if vwc == nil {
		return nil
	}
	var out []string
	for _, w := range vwc.Webhooks {
		out = append(out, string(w.ClientConfig.CABundle))
	}
	return out
}

func TestProvision(t *testing.T) {
	now := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	current := generated(t, now)
	expiring := generated(t, now.Add(-certValidity+renewBefore/2))
	other := generated(t, now)

	type want struct {
		served   map[string][]byte // what the webhook serves and whose CA the configuration holds; nil: an error
		created  bool
		replaced bool
		patched  bool // the configuration's caBundle written
		err      string
	}
	cases := map[string]struct {
		api  *fakeAPI
		want want
	}{
		"NoSecretYet": {
			api:  &fakeAPI{vwc: configuration(nil)},
			want: want{created: true, patched: true},
		},
		"SecretUsableAndCAInPlace": {
			api:  &fakeAPI{secret: current, vwc: configuration(current[keyCA])},
			want: want{served: current},
		},
		"SecretUsableCANotYetInPlace": {
			api:  &fakeAPI{secret: current, vwc: configuration(nil)},
			want: want{served: current, patched: true},
		},
		"SecretExpiringSoonIsReplaced": {
			api:  &fakeAPI{secret: expiring, vwc: configuration(expiring[keyCA])},
			want: want{replaced: true, patched: true},
		},
		"AnotherReplicaCreatedItFirst": {
			api:  &fakeAPI{vwc: configuration(nil), createErr: kerrors.NewAlreadyExists(schema.GroupResource{Resource: "secrets"}, "x"), winner: other},
			want: want{served: other, created: true, patched: true},
		},
		"NoConfiguration": {
			api:  &fakeAPI{secret: current},
			want: want{err: "cannot get ValidatingWebhookConfiguration provider-cloudflare-tunnel to set its caBundle"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			err := selfSigned(tc.api.client(), now).Provision(context.Background(), dir)
			if tc.want.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want.err) {
					t.Fatalf("Provision: %v, want an error with %q", err, tc.want.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Provision: %v", err)
			}
			served := tc.want.served
			switch {
			case tc.want.replaced:
				served = tc.api.patchedSecret
			case served == nil:
				served = tc.api.createdSecret
			}
			if got := tc.api.createdSecret != nil; got != tc.want.created {
				t.Errorf("Secret created: %v, want %v", got, tc.want.created)
			}
			if tc.want.created {
				// It goes when the install's configuration does.
				want := []metav1.OwnerReference{{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingWebhookConfiguration", Name: "provider-cloudflare-tunnel", UID: "vwc-uid"}}
				if diff := cmp.Diff(want, tc.api.createdOwners); diff != "" {
					t.Errorf("created Secret's owners (-want +got):\n%s", diff)
				}
			}
			if got := tc.api.patchedSecret != nil; got != tc.want.replaced {
				t.Errorf("Secret replaced: %v, want %v", got, tc.want.replaced)
			}
			for _, k := range []string{keyCert, keyKey} {
				b, err := os.ReadFile(filepath.Join(dir, k))
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(string(served[k]), string(b)); diff != "" {
					t.Errorf("%s served (-want +got):\n%s", k, diff)
				}
			}
			var wantBundles []string
			if tc.want.patched {
				wantBundles = []string{string(served[keyCA]), string(served[keyCA])}
			}
			if diff := cmp.Diff(wantBundles, caBundles(tc.api.patchedVWC)); diff != "" {
				t.Errorf("caBundles written (-want +got):\n%s", diff)
			}
		})
	}
}

// What the API server checks when it calls the webhook: the serving
// certificate chains to the CA in caBundle for the Service's name.
func TestGeneratedCertificateServesTheService(t *testing.T) {
	now := time.Now()
	d := generated(t, now)
	pair, err := tls.X509KeyPair(d[keyCert], d[keyKey])
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(d[keyCA])
	for _, name := range []string{"provider-cloudflare-tunnel-webhook.cloudflare-tunnel-system.svc"} {
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: name, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
			t.Errorf("not valid for %s: %v", name, err)
		}
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: "other.cloudflare-tunnel-system.svc"}); err == nil {
		t.Error("valid for another Service")
	}
}
