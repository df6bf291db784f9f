package kubecache

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
)

var fields = []metav1.ManagedFieldsEntry{{Manager: "kubectl-client-side-apply", Operation: metav1.ManagedFieldsOperationUpdate, FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{}}`)}}}

func withMeta(o client.Object) client.Object {
	o.SetName("x")
	o.SetManagedFields(fields)
	o.SetAnnotations(map[string]string{LastApplied: `{"kind":"x"}`, "tunnels.cloudflare.com/tunnel": "edge"})
	return o
}

func TestTransform(t *testing.T) {
	type kept struct {
		ManagedFields bool
		LastApplied   bool
		Other         bool
	}
	cases := map[string]struct {
		obj  client.Object
		want kept
	}{
		// Read and written back by nothing: both go.
		"Ingress":   {obj: &networkingv1.Ingress{}, want: kept{Other: true}},
		"Service":   {obj: &corev1.Service{}, want: kept{Other: true}},
		"Secret":    {obj: &corev1.Secret{}, want: kept{Other: true}},
		"Namespace": {obj: &corev1.Namespace{}, want: kept{Other: true}},
		"HTTPRoute": {obj: &gwv1.HTTPRoute{}, want: kept{Other: true}},
		// The CloudflareTunnel controller reads their managedFields.
		"Deployment": {obj: &appsv1.Deployment{}, want: kept{ManagedFields: true, Other: true}},
		// Updated whole by the provider: an update without the annotation
		// would remove it.
		"ManagedResource": {obj: &ztv1alpha1.Tunnel{}, want: kept{LastApplied: true, Other: true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out, err := Transform(withMeta(tc.obj))
			if err != nil {
				t.Fatal(err)
			}
			o := out.(client.Object)
			_, la := o.GetAnnotations()[LastApplied]
			got := kept{ManagedFields: o.GetManagedFields() != nil, LastApplied: la, Other: o.GetAnnotations()["tunnels.cloudflare.com/tunnel"] == "edge"}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("-want +got:\n%s", diff)
			}
		})
	}
	t.Run("OnlyTheAnnotation", func(t *testing.T) {
		s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{LastApplied: "{}"}}}
		if _, _ = Transform(s); s.Annotations != nil {
			t.Errorf("annotations %v, want none", s.Annotations)
		}
	})
	t.Run("Tombstone", func(t *testing.T) {
		in := toolscache.DeletedFinalStateUnknown{Key: "ns/x", Obj: &corev1.Service{}}
		if out, err := Transform(in); err != nil || out != in {
			t.Errorf("Transform(tombstone) = %v, %v; want it unchanged", out, err)
		}
	})
}

// fieldsV1 is the managedFields set an update of everything in v makes, in
// the API server's form ("f:" keys down to the leaves; list items keyed by
// position here, by key there: the same size to within a few bytes).
func fieldsV1(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range t {
			out["f:"+k] = fieldsV1(e)
		}
		return out
	case []any:
		out := map[string]any{}
		for i, e := range t {
			out[fmt.Sprintf("i:%d", i)] = fieldsV1(e)
		}
		return out
	default:
		return map[string]any{}
	}
}

func entry(manager, sub string, of map[string]any) metav1.ManagedFieldsEntry {
	raw, err := json.Marshal(fieldsV1(of))
	if err != nil {
		panic(err)
	}
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: ptr.To(metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))), FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: raw}, Subresource: sub}
}

// applied is obj as kubectl apply leaves it: its last-applied annotation
// (everything the user wrote), and managedFields of kubectl's update, the
// provider's (finalizers) and its status writes, when given.
func applied(t testing.TB, obj client.Object, provider, status map[string]any) client.Object {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	delete(u, "status")
	raw, err := json.Marshal(u)
	if err != nil {
		t.Fatal(err)
	}
	a := obj.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[LastApplied] = string(raw) + "\n"
	obj.SetAnnotations(a)
	meta := u["metadata"].(map[string]any)
	delete(meta, "name")
	delete(meta, "namespace")
	mf := []metav1.ManagedFieldsEntry{entry("kubectl-client-side-apply", "", map[string]any{"metadata": meta, "spec": u["spec"]})}
	if provider != nil {
		mf = append(mf, entry("provider-cloudflare-tunnel", "", provider))
	}
	if status != nil {
		mf = append(mf, entry("provider-cloudflare-tunnel", "status", status))
	}
	obj.SetManagedFields(mf)
	return obj
}

// typical are objects as a cluster holds them: a kubectl-applied public
// Ingress of two hosts and two paths (with its address and the provider's
// finalizer), the Service behind it, and a credentials Secret.
func typical(t testing.TB) map[string]client.Object {
	path := func(p, svc string, port int32) networkingv1.HTTPIngressPath {
		return networkingv1.HTTPIngressPath{Path: p, PathType: ptr.To(networkingv1.PathTypePrefix), Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: svc, Port: networkingv1.ServiceBackendPort{Number: port}}}}
	}
	rule := func(host string) networkingv1.IngressRule {
		return networkingv1.IngressRule{Host: host, IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{path("/api", "api", 8080), path("/", "web", 80)}}}}
	}
	om := func(name string, ann map[string]string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: "team-a", UID: "0d9f3c5e-8a34-4b52-9d7e-2a4c1f7e6b10", ResourceVersion: "123456789", Generation: 1,
			CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), Labels: map[string]string{"app.kubernetes.io/name": "shop", "app.kubernetes.io/part-of": "shop"}, Annotations: ann}
	}
	ing := &networkingv1.Ingress{
		ObjectMeta: om("shop", map[string]string{"tunnels.cloudflare.com/tunnel": "edge", "tunnels.cloudflare.com/public": "true"}),
		Spec:       networkingv1.IngressSpec{IngressClassName: ptr.To("cloudflare"), Rules: []networkingv1.IngressRule{rule("shop.example.com"), rule("www.shop.example.com")}},
	}
	ing = applied(t, ing, map[string]any{"metadata": map[string]any{"finalizers": []any{"x"}}}, map[string]any{"status": map[string]any{"loadBalancer": map[string]any{"ingress": []any{"x"}}}}).(*networkingv1.Ingress)
	ing.Finalizers = []string{"tunnels.cloudflare.com/ingress"}
	ing.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{Hostname: "6f1c2a44-5b0e-4c39-9a8d-0e1f2b3c4d5e.cfargotunnel.com"}}

	svc := &corev1.Service{
		ObjectMeta: om("web", nil),
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app.kubernetes.io/name": "shop"},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}},
		},
	}
	svc = applied(t, svc, nil, nil).(*corev1.Service)
	// What the API server defaults, written by no one's apply.
	svc.Spec.ClusterIP, svc.Spec.ClusterIPs, svc.Spec.Type = "10.96.12.34", []string{"10.96.12.34"}, corev1.ServiceTypeClusterIP
	svc.Spec.SessionAffinity, svc.Spec.IPFamilies, svc.Spec.IPFamilyPolicy = corev1.ServiceAffinityNone, []corev1.IPFamily{corev1.IPv4Protocol}, ptr.To(corev1.IPFamilyPolicySingleStack)
	svc.Spec.InternalTrafficPolicy = ptr.To(corev1.ServiceInternalTrafficPolicyCluster)

	sec := &corev1.Secret{ObjectMeta: om("cloudflare", nil), Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"token": []byte(strings.Repeat("t", 40))}}
	sec = applied(t, sec, nil, nil).(*corev1.Secret)
	return map[string]client.Object{"Ingress": ing, "Service": svc, "Secret": sec}
}

// BenchmarkCachedObject reports the size of typical objects as the cache
// holds them, before and after Transform, as encoded JSON (the cache holds
// decoded objects; their memory follows the same proportions).
func BenchmarkCachedObject(b *testing.B) {
	objs := typical(b)
	kinds := make([]string, 0, len(objs))
	for k := range objs {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, kind := range kinds {
		obj := objs[kind]
		b.Run(kind, func(b *testing.B) {
			before := size(b, obj)
			var after int
			for b.Loop() {
				c := obj.DeepCopyObject()
				out, err := Transform(c)
				if err != nil {
					b.Fatal(err)
				}
				after = size(b, out)
			}
			b.ReportMetric(float64(before), "bytes-before")
			b.ReportMetric(float64(after), "bytes-after")
		})
	}
}

func size(t testing.TB, o any) int {
	raw, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	return len(raw)
}
