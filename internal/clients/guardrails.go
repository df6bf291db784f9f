package clients

import (
	"context"
	"fmt"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
)

// GuardrailsOf reads the guardrails of the provider config ref names (a
// ProviderConfig of namespace ns, or a ClusterProviderConfig) without its
// credentials, for a layer that writes no Cloudflare object but must refuse
// what the managed resources below it would be refused: the Config it
// returns has Source, Allow and Namespaced, and no token. A config that does
// not exist has no allowances: the defaults, the strictest rules, apply
// until it does (the managed resources cannot write without it anyway).
func GuardrailsOf(ctx context.Context, kube client.Reader, ref xpv2.ProviderConfigReference, ns string) (Config, error) {
	switch ref.Kind {
	case v1alpha1.ProviderConfigKind:
		c := Config{Source: fmt.Sprintf("ProviderConfig %s/%s", ns, ref.Name), Namespaced: true}
		pc := &v1alpha1.ProviderConfig{}
		err := kube.Get(ctx, types.NamespacedName{Namespace: ns, Name: ref.Name}, pc)
		return withAllow(c, pc.Spec.Allow, err)
	case v1alpha1.ClusterProviderConfigKind:
		c := Config{Source: "ClusterProviderConfig " + ref.Name}
		cpc := &v1alpha1.ClusterProviderConfig{}
		err := kube.Get(ctx, types.NamespacedName{Name: ref.Name}, cpc)
		return withAllow(c, cpc.Spec.Allow, err)
	}
	return Config{}, credErr(ReasonUnsupportedRefKind, "providerConfigRef kind %q is not supported: use ProviderConfig or ClusterProviderConfig", ref.Kind)
}

func withAllow(c Config, allow *v1alpha1.Allowances, err error) (Config, error) {
	switch {
	case kerrors.IsNotFound(err):
		return c, nil
	case err != nil:
		return Config{}, errors.Wrapf(err, "cannot get %s", c.Source)
	case allow != nil:
		c.Allow = *allow
	}
	return c, nil
}
