package clients

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
)

// secrets is a client.Reader holding Secrets by namespace/name. It records
// every key asked for, so a test can show a refused Secret was never read,
// and fails every Get with err when set.
type secrets struct {
	data  map[client.ObjectKey]map[string]string
	err   error
	asked []string
}

func (s *secrets) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	s.asked = append(s.asked, key.String())
	if s.err != nil {
		return s.err
	}
	sec, ok := obj.(*corev1.Secret)
	if !ok {
		return errors.New("only Secrets are read while resolving credentials")
	}
	d, ok := s.data[key]
	if !ok {
		return kerrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, key.Name)
	}
	sec.Data = map[string][]byte{}
	for k, v := range d {
		sec.Data[k] = []byte(v)
	}
	return nil
}

func (s *secrets) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return errors.New("resolving credentials never lists")
}

// env is an Env over a map.
func env(vars map[string]string) Env {
	return func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	}
}

func TestResolveSpec(t *testing.T) {
	const (
		token   = "tok-0123456789abcdef"
		account = "0123456789abcdef0123456789abcdef"
		other   = "fedcba9876543210fedcba9876543210"
		proxy   = "https://proxy.example.com/client/v4/"
		sim     = "http://sim.example.com/client/v4/"
	)
	teamA := client.ObjectKey{Namespace: "team-a", Name: "cf"}
	teamB := client.ObjectKey{Namespace: "team-b", Name: "cf"}
	blank := client.ObjectKey{Namespace: "team-a", Name: "blank"}
	stored := map[client.ObjectKey]map[string]string{
		teamA: {v1alpha1.DefaultTokenKey: token + "\n", "alt": token},
		teamB: {v1alpha1.DefaultTokenKey: token, v1alpha1.DefaultAccountIDKey: " " + other + "\n", v1alpha1.EndpointKey: sim},
		blank: {v1alpha1.DefaultTokenKey: "  \n"},
	}
	fromSecret := func(ref v1alpha1.SecretKeySelector) v1alpha1.ProviderCredentials {
		return v1alpha1.ProviderCredentials{Source: v1alpha1.CredentialsSourceSecret, SecretRef: &ref}
	}
	environment := v1alpha1.ProviderCredentials{Source: v1alpha1.CredentialsSourceEnvironment}
	allow := &v1alpha1.Allowances{HostnameSuffixes: []string{"apps.example.com"}}

	cases := map[string]struct {
		spec       v1alpha1.ProviderConfigSpec
		namespace  string // "" for a ClusterProviderConfig
		env        map[string]string
		getErr     error
		want       *Config
		wantReason string // "" with an error: not a CredentialsError
		wantErr    bool
		wantAsked  []string
	}{
		"ASecretInItsOwnNamespace": {
			spec:      v1alpha1.ProviderConfigSpec{AccountID: account, OwnerID: "prod", Allow: allow, Credentials: fromSecret(v1alpha1.SecretKeySelector{Name: "cf"})},
			namespace: "team-a",
			want:      &Config{Token: token, AccountID: account, Endpoint: v1alpha1.DefaultEndpoint, Owner: "prod", Allow: *allow, Namespaced: true},
			wantAsked: []string{"team-a/cf"},
		},
		"ItsOwnNamespaceNamed": {
			spec:      v1alpha1.ProviderConfigSpec{AccountID: account, Credentials: fromSecret(v1alpha1.SecretKeySelector{Name: "cf", Namespace: "team-a"})},
			namespace: "team-a",
			want:      &Config{Token: token, AccountID: account, Endpoint: v1alpha1.DefaultEndpoint, Namespaced: true},
			wantAsked: []string{"team-a/cf"},
		},
		"AnEmptySourceIsSecret": {
			spec:      v1alpha1.ProviderConfigSpec{AccountID: account, Credentials: v1alpha1.ProviderCredentials{SecretRef: &v1alpha1.SecretKeySelector{Name: "cf"}}},
			namespace: "team-a",
			want:      &Config{Token: token, AccountID: account, Endpoint: v1alpha1.DefaultEndpoint, Namespaced: true},
			wantAsked: []string{"team-a/cf"},
		},
		"ANamespacedConfigIsRefusedAnotherNamespacesSecret": {
			// The tenancy boundary: team-a's config never reads team-b's
			// Secret, so the Secret is not even asked for.
			spec:       v1alpha1.ProviderConfigSpec{AccountID: account, Credentials: fromSecret(v1alpha1.SecretKeySelector{Name: "cf", Namespace: "team-b"})},
			namespace:  "team-a",
			wantReason: ReasonInvalidCredentials,
		},
		"AClusterConfigReadsTheNamespaceItNames": {
			spec:      v1alpha1.ProviderConfigSpec{Credentials: fromSecret(v1alpha1.SecretKeySelector{Name: "cf", Namespace: "team-b"})},
			want:      &Config{Token: token, AccountID: other, Endpoint: sim},
			wantAsked: []string{"team-b/cf"},
		},
		"AClusterConfigMustNameTheNamespace": {
			spec:       v1alpha1.ProviderConfigSpec{AccountID: account, Credentials: fromSecret(v1alpha1.SecretKeySelector{Name: "cf"})},
			wantReason: ReasonInvalidCredentials,
		},
		"SourceSecretWithoutARef": {
			spec:       v1alpha1.ProviderConfigSpec{AccountID: account, Credentials: v1alpha1.ProviderCredentials{Source: v1alpha1.CredentialsSourceSecret}},
			namespace:  "team-a",
			wantReason: ReasonInvalidCredentials,
		},
		"AMissingSecret": {
			spec:       v1alpha1.ProviderConfigSpec{AccountID: account, Credentials: fromSecret(v1alpha1.SecretKeySelector{Name: "gone"})},
			namespace:  "team-a",
			wantReason: ReasonSecretNotFound,
			wantAsked:  []string{"team-a/gone"},
		},
		"AnotherGetFailureIsNotACredentialsProblem": {
			// A forbidden or timed-out Get is retried, not reported as a
			// condition the user should fix.
			spec:      v1alpha1.ProviderConfigSpec{AccountID: account, Credentials: fromSecret(v1alpha1.SecretKeySelector{Name: "cf"})},
			namespace: "team-a",
			getErr:    kerrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "cf", errors.New("no")),
			wantErr:   true,
			wantAsked: []string{"team-a/cf"},
		},
		"AMissingKey": {
			spec:       v1alpha1.ProviderConfigSpec{AccountID: account, Credentials: fromSecret(v1alpha1.SecretKeySelector{Name: "cf", Key: "nope"})},
			namespace:  "team-a",
			wantReason: ReasonSecretKeyMissing,
			wantAsked:  []string{"team-a/cf"},
		},
		"ABlankKeyIsMissing": {
			spec:       v1alpha1.ProviderConfigSpec{AccountID: account, Credentials: fromSecret(v1alpha1.SecretKeySelector{Name: "blank"})},
			namespace:  "team-a",
			wantReason: ReasonSecretKeyMissing,
			wantAsked:  []string{"team-a/blank"},
		},
		"AKeyOtherThanTheDefault": {
			spec:      v1alpha1.ProviderConfigSpec{AccountID: account, Credentials: fromSecret(v1alpha1.SecretKeySelector{Name: "cf", Key: "alt"})},
			namespace: "team-a",
			want:      &Config{Token: token, AccountID: account, Endpoint: v1alpha1.DefaultEndpoint, Namespaced: true},
			wantAsked: []string{"team-a/cf"},
		},
		"TheSpecsAccountIDAndEndpointWinOverTheSecrets": {
			spec:      v1alpha1.ProviderConfigSpec{AccountID: account, Endpoint: ptr.To(proxy), Credentials: fromSecret(v1alpha1.SecretKeySelector{Name: "cf", Namespace: "team-b"})},
			want:      &Config{Token: token, AccountID: account, Endpoint: proxy},
			wantAsked: []string{"team-b/cf"},
		},
		"AnEmptyEndpointIsUnset": {
			spec:      v1alpha1.ProviderConfigSpec{Endpoint: ptr.To(""), Credentials: fromSecret(v1alpha1.SecretKeySelector{Name: "cf", Namespace: "team-b"})},
			want:      &Config{Token: token, AccountID: other, Endpoint: sim},
			wantAsked: []string{"team-b/cf"},
		},
		"NoAccountIDInTheSpecOrTheSecret": {
			spec:       v1alpha1.ProviderConfigSpec{Credentials: fromSecret(v1alpha1.SecretKeySelector{Name: "cf"})},
			namespace:  "team-a",
			wantReason: ReasonAccountIDMissing,
			wantAsked:  []string{"team-a/cf"},
		},
		"TheEnvironmentWithBothVariables": {
			spec: v1alpha1.ProviderConfigSpec{Credentials: environment},
			env:  map[string]string{v1alpha1.DefaultTokenKey: " " + token + "\n", v1alpha1.DefaultAccountIDKey: other},
			want: &Config{Token: token, AccountID: other, Endpoint: v1alpha1.DefaultEndpoint},
		},
		"TheEnvironmentWithTheSpecsAccountID": {
			spec: v1alpha1.ProviderConfigSpec{AccountID: account, Endpoint: ptr.To(proxy), Credentials: environment},
			env:  map[string]string{v1alpha1.DefaultTokenKey: token, v1alpha1.DefaultAccountIDKey: other},
			want: &Config{Token: token, AccountID: account, Endpoint: proxy},
		},
		"TheEnvironmentWithoutAToken": {
			spec:       v1alpha1.ProviderConfigSpec{AccountID: account, Credentials: environment},
			env:        map[string]string{v1alpha1.DefaultAccountIDKey: other},
			wantReason: ReasonEnvironmentMissing,
		},
		"TheEnvironmentWithABlankToken": {
			spec:       v1alpha1.ProviderConfigSpec{AccountID: account, Credentials: environment},
			env:        map[string]string{v1alpha1.DefaultTokenKey: " "},
			wantReason: ReasonEnvironmentMissing,
		},
		"TheEnvironmentWithoutAnAccountID": {
			spec:       v1alpha1.ProviderConfigSpec{Credentials: environment},
			env:        map[string]string{v1alpha1.DefaultTokenKey: token},
			wantReason: ReasonAccountIDMissing,
		},
		"AnUnknownSource": {
			spec:       v1alpha1.ProviderConfigSpec{AccountID: account, Credentials: v1alpha1.ProviderCredentials{Source: "Filesystem"}},
			namespace:  "team-a",
			wantReason: ReasonInvalidCredentials,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			kube := &secrets{data: stored, err: tc.getErr}
			got, err := ResolveSpec(context.Background(), kube, tc.spec, tc.namespace, env(tc.env))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
			switch {
			case tc.want != nil && err != nil:
				t.Errorf("error %v, want none", err)
			case tc.want == nil && err == nil:
				t.Error("no error, want one")
			case err != nil && Reason(err) != tc.wantReason:
				t.Errorf("reason %q (%v), want %q", Reason(err), err, tc.wantReason)
			case err != nil && tc.wantReason == "" && !tc.wantErr:
				t.Errorf("an error without a reason the test did not expect: %v", err)
			}
			if err != nil && strings.Contains(err.Error(), token) {
				t.Errorf("the error shows the token: %v", err)
			}
			if diff := cmp.Diff(tc.wantAsked, kube.asked); diff != "" {
				t.Errorf("Secrets read (-want +got):\n%s", diff)
			}
		})
	}
}

// TestResolveSpecReadsTheProcessEnvironmentByDefault: a nil Env is the
// provider's own environment.
func TestResolveSpecReadsTheProcessEnvironmentByDefault(t *testing.T) {
	t.Setenv(v1alpha1.DefaultTokenKey, "from-the-process")
	t.Setenv(v1alpha1.DefaultAccountIDKey, "0123456789abcdef0123456789abcdef")
	spec := v1alpha1.ProviderConfigSpec{Credentials: v1alpha1.ProviderCredentials{Source: v1alpha1.CredentialsSourceEnvironment}}
	got, err := ResolveSpec(context.Background(), &secrets{}, spec, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Token != "from-the-process" || got.AccountID != "0123456789abcdef0123456789abcdef" {
		t.Errorf("resolved %v, want the process's variables", got)
	}
}

// TestConfigRedactsTheToken: a Config may be logged with %v, %+v, %s or %#v.
func TestConfigRedactsTheToken(t *testing.T) {
	c := Config{Token: "tok-secret", AccountID: "acc"}
	for _, s := range []string{fmt.Sprintf("%v", c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c), fmt.Sprint(&c)} {
		if strings.Contains(s, "tok-secret") || !strings.Contains(s, "acc") {
			t.Errorf("formatted config %q: want the account and no token", s)
		}
	}
}
