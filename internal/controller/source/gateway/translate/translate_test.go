package translate

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
)

// Translate's cases are the golden corpus (golden_test.go); these builders
// serve the fuzz tests and what the corpus cannot say.

func gateway(edit ...func(*gwv1.Gateway)) *gwv1.Gateway {
	gw := &gwv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Namespace: "edge", Name: "public", UID: "gw-uid", Generation: 2},
		Spec: gwv1.GatewaySpec{GatewayClassName: "cloudflare", Listeners: []gwv1.Listener{
			{Name: "http", Port: 80, Protocol: gwv1.HTTPProtocolType},
		}},
	}
	for _, e := range edit {
		e(gw)
	}
	return gw
}

func service(ns, name string, port int32) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: port}}}}
}

func services(ss ...*corev1.Service) map[types.NamespacedName]*corev1.Service {
	out := map[types.NamespacedName]*corev1.Service{}
	for _, s := range ss {
		out[types.NamespacedName{Namespace: s.Namespace, Name: s.Name}] = s
	}
	return out
}

func backendRef(name string, port int32) gwv1.HTTPBackendRef {
	return gwv1.HTTPBackendRef{BackendRef: gwv1.BackendRef{BackendObjectReference: gwv1.BackendObjectReference{Name: gwv1.ObjectName(name), Port: ptr.To(gwv1.PortNumber(port))}}}
}

func pathRule(t gwv1.PathMatchType, value string, b gwv1.HTTPBackendRef) gwv1.HTTPRouteRule {
	return gwv1.HTTPRouteRule{Matches: []gwv1.HTTPRouteMatch{{Path: &gwv1.HTTPPathMatch{Type: ptr.To(t), Value: ptr.To(value)}}}, BackendRefs: []gwv1.HTTPBackendRef{b}}
}

func httpRoute(ns, name string, age int, hosts []string, rules ...gwv1.HTTPRouteRule) gwv1.HTTPRoute {
	r := gwv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Generation: 1, CreationTimestamp: metav1.NewTime(time.Unix(1000-int64(age), 0))}}
	r.Spec.ParentRefs = []gwv1.ParentReference{{Name: "public", Namespace: ptr.To(gwv1.Namespace("edge"))}}
	for _, h := range hosts {
		r.Spec.Hostnames = append(r.Spec.Hostnames, gwv1.Hostname(h))
	}
	r.Spec.Rules = rules
	return r
}

func allRoutes(gw *gwv1.Gateway) {
	gw.Spec.Listeners[0].AllowedRoutes = &gwv1.AllowedRoutes{Namespaces: &gwv1.RouteNamespaces{From: ptr.To(gwv1.NamespacesFromAll)}}
}

// Protected: a held PublicHostname stays only while it requires an Access
// check (a protected hostname is never taken down by a typo, an open one
// never left open).
func TestProtected(t *testing.T) {
	protected := &v1alpha1.PublicHostname{Spec: v1alpha1.PublicHostnameSpec{Access: &v1alpha1.Access{}}}
	optional := &v1alpha1.PublicHostname{Spec: v1alpha1.PublicHostnameSpec{Access: &v1alpha1.Access{Required: ptr.To(false)}}}
	if !Protected(protected) || Protected(optional) || Protected(&v1alpha1.PublicHostname{}) {
		t.Error("Protected: want true only for a required check")
	}
}
