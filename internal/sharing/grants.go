package sharing

import (
	"slices"

	gwv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
)

// From is the kind of object, and its namespace, that refers to a Service
// of another namespace.
type From struct {
	Group, Kind, Namespace string
}

// ServiceGranted says whether a ReferenceGrant of the Service's namespace lets
// GatewayBindings of namespace from use the Service named name.
func ServiceGranted(grants []gwv1beta1.ReferenceGrant, from, name string) bool {
	return ServiceGrantedTo(grants, From{Group: v1alpha1.Group, Kind: v1alpha1.GatewayBindingKind, Namespace: from}, name)
}

// ServiceGrantedTo says whether a ReferenceGrant of the Service's namespace
// lets objects of from's kind and namespace use the Service named name.
func ServiceGrantedTo(grants []gwv1beta1.ReferenceGrant, from From, name string) bool {
	return CoreGrantedTo(grants, from, "Service", name)
}

// CoreGrantedTo says whether a ReferenceGrant of the object's namespace lets
// objects of from's kind and namespace use the core object (a Service, a
// Secret) of the kind named name.
func CoreGrantedTo(grants []gwv1beta1.ReferenceGrant, from From, kind, name string) bool {
	for _, g := range grants {
		fromOK := slices.ContainsFunc(g.Spec.From, func(f gwv1beta1.ReferenceGrantFrom) bool {
			return string(f.Group) == from.Group && string(f.Kind) == from.Kind && string(f.Namespace) == from.Namespace
		})
		toOK := slices.ContainsFunc(g.Spec.To, func(t gwv1beta1.ReferenceGrantTo) bool {
			return t.Group == "" && string(t.Kind) == kind && (t.Name == nil || *t.Name == "" || string(*t.Name) == name)
		})
		if fromOK && toOK {
			return true
		}
	}
	return false
}
