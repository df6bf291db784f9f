package sharing

import (
	"slices"

	gwv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
)

// ServiceGranted says whether a ReferenceGrant of the Service's namespace lets
// GatewayBindings of namespace from use the Service named name.
func ServiceGranted(grants []gwv1beta1.ReferenceGrant, from, name string) bool {
	for _, g := range grants {
		fromOK := slices.ContainsFunc(g.Spec.From, func(f gwv1beta1.ReferenceGrantFrom) bool {
			return string(f.Group) == v1alpha1.Group && string(f.Kind) == v1alpha1.GatewayBindingKind && string(f.Namespace) == from
		})
		toOK := slices.ContainsFunc(g.Spec.To, func(t gwv1beta1.ReferenceGrantTo) bool {
			return t.Group == "" && t.Kind == "Service" && (t.Name == nil || *t.Name == "" || string(*t.Name) == name)
		})
		if fromOK && toOK {
			return true
		}
	}
	return false
}
