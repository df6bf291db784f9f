package config

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
)

func TestSecretNeeded(t *testing.T) {
	reads := func(name, secret string) v1alpha1.ProviderConfig {
		return v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.ProviderConfigSpec{
			Credentials: v1alpha1.ProviderCredentials{Source: v1alpha1.CredentialsSourceSecret, SecretRef: &v1alpha1.SecretKeySelector{Name: secret}},
		}}
	}
	fromEnv := v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "env"}, Spec: v1alpha1.ProviderConfigSpec{
		Credentials: v1alpha1.ProviderCredentials{Source: v1alpha1.CredentialsSourceEnvironment},
	}}
	cases := map[string]struct {
		pcs   []v1alpha1.ProviderConfig
		inUse []string
		want  bool
	}{
		"ReaderInUse":                 {pcs: []v1alpha1.ProviderConfig{reads("a", "token")}, inUse: []string{"a"}, want: true},
		"ReaderUnused":                {pcs: []v1alpha1.ProviderConfig{reads("a", "token")}, want: false},
		"AnotherReaderStillInUse":     {pcs: []v1alpha1.ProviderConfig{reads("a", "token"), reads("b", "token")}, inUse: []string{"b"}, want: true},
		"ConfigInUseReadsOtherSecret": {pcs: []v1alpha1.ProviderConfig{reads("a", "token"), reads("b", "other")}, inUse: []string{"b"}, want: false},
		"EnvironmentConfigInUse":      {pcs: []v1alpha1.ProviderConfig{fromEnv, reads("a", "token")}, inUse: []string{"env"}, want: false},
		"NoConfigs":                   {want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			inUse := func(pc string) bool {
				for _, n := range tc.inUse {
					if n == pc {
						return true
					}
				}
				return false
			}
			if got := SecretNeeded("token", tc.pcs, inUse); got != tc.want {
				t.Errorf("SecretNeeded(token) = %t, want %t", got, tc.want)
			}
		})
	}
}
