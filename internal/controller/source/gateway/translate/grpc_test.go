package translate

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

func grpcBackend(name string, port int32) gwv1.GRPCBackendRef {
	return gwv1.GRPCBackendRef{BackendRef: gwv1.BackendRef{BackendObjectReference: gwv1.BackendObjectReference{Name: gwv1.ObjectName(name), Port: ptr.To(gwv1.PortNumber(port))}}}
}

func grpcRule(matches []gwv1.GRPCRouteMatch, refs ...gwv1.GRPCBackendRef) gwv1.GRPCRouteRule {
	return gwv1.GRPCRouteRule{Matches: matches, BackendRefs: refs}
}

func grpcRoute(ns, name string, age int, hosts []string, rules ...gwv1.GRPCRouteRule) gwv1.GRPCRoute {
	r := gwv1.GRPCRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Generation: 1, CreationTimestamp: metav1.NewTime(time.Unix(1000-int64(age), 0))}}
	r.Spec.ParentRefs = []gwv1.ParentReference{{Name: "public", Namespace: ptr.To(gwv1.Namespace("edge"))}}
	for _, h := range hosts {
		r.Spec.Hostnames = append(r.Spec.Hostnames, gwv1.Hostname(h))
	}
	r.Spec.Rules = rules
	return r
}
