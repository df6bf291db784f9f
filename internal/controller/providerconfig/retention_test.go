package providerconfig

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
)

func TestSecretNeeded(t *testing.T) {
	token := types.NamespacedName{Namespace: "team", Name: "token"}
	other := types.NamespacedName{Namespace: "team", Name: "other"}
	pc := func(name string) ConfigKey {
		return ConfigKey{Kind: v1alpha1.ProviderConfigKind, Namespace: "team", Name: name}
	}
	cpc := func(name string) ConfigKey { return ConfigKey{Kind: v1alpha1.ClusterProviderConfigKind, Name: name} }
	cases := map[string]struct {
		readers []Reader
		users   map[ConfigKey]int
		want    bool
	}{
		"ReaderInUse":                 {readers: []Reader{{pc("a"), token}}, users: map[ConfigKey]int{pc("a"): 1}, want: true},
		"ReaderUnused":                {readers: []Reader{{pc("a"), token}}, want: false},
		"AnotherReaderStillInUse":     {readers: []Reader{{pc("a"), token}, {pc("b"), token}}, users: map[ConfigKey]int{pc("b"): 2}, want: true},
		"ConfigInUseReadsOtherSecret": {readers: []Reader{{pc("a"), token}, {pc("b"), other}}, users: map[ConfigKey]int{pc("b"): 1}, want: false},
		"ClusterConfigInUse":          {readers: []Reader{{cpc("shared"), token}}, users: map[ConfigKey]int{cpc("shared"): 1}, want: true},
		"SameNameOtherKindInUse":      {readers: []Reader{{cpc("a"), token}}, users: map[ConfigKey]int{pc("a"): 1}, want: false},
		"NoReaders":                   {users: map[ConfigKey]int{pc("a"): 1}, want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := SecretNeeded(token, tc.readers, tc.users); got != tc.want {
				t.Errorf("SecretNeeded(%s) = %t, want %t", token, got, tc.want)
			}
		})
	}
}

func TestConfigOf(t *testing.T) {
	cases := map[string]struct {
		ref  *xpv2.ProviderConfigReference
		want ConfigKey
	}{
		"NoReference":      {want: ConfigKey{Kind: v1alpha1.ClusterProviderConfigKind, Name: "default"}},
		"ClusterConfig":    {ref: &xpv2.ProviderConfigReference{Kind: v1alpha1.ClusterProviderConfigKind, Name: "shared"}, want: ConfigKey{Kind: v1alpha1.ClusterProviderConfigKind, Name: "shared"}},
		"Namespaced":       {ref: &xpv2.ProviderConfigReference{Kind: v1alpha1.ProviderConfigKind, Name: "team"}, want: ConfigKey{Kind: v1alpha1.ProviderConfigKind, Namespace: "ns", Name: "team"}},
		"KindNotDefaulted": {ref: &xpv2.ProviderConfigReference{Name: "shared"}, want: ConfigKey{Kind: v1alpha1.ClusterProviderConfigKind, Name: "shared"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ConfigOf("ns", tc.ref)); diff != "" {
				t.Errorf("ConfigOf(): -want, +got:\n%s", diff)
			}
		})
	}
}
