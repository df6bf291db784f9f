package gatewayapi

import (
	"k8s.io/utils/ptr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// GRPCServiceBackends are the Services a GRPCRoute's rules name, as
// ServiceBackends are an HTTPRoute's.
func GRPCServiceBackends(r *gwv1.GRPCRoute) []ServiceBackend {
	var out []ServiceBackend
	for _, rule := range r.Spec.Rules {
		for _, b := range rule.BackendRefs {
			if ptr.Deref(b.Group, "") != "" || ptr.Deref(b.Kind, "Service") != "Service" {
				continue
			}
			out = append(out, ServiceBackend{Namespace: string(ptr.Deref(b.Namespace, gwv1.Namespace(r.Namespace))), Name: string(b.Name)})
		}
	}
	return out
}
