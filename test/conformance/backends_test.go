package conformance

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// TestOriginsOf: a Service with a cluster IP leads from its port to its
// pods' target port; a headless one's name leads to its pods, so only the
// port they listen on leads anywhere, with a selector or with endpoints
// written by hand.
func TestOriginsOf(t *testing.T) {
	pod := corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-1", UID: "u1", Labels: map[string]string{"app": "web"}},
		Status:     corev1.PodStatus{PodIPs: []corev1.PodIP{{IP: "10.0.0.5"}}},
	}
	port := []corev1.ServicePort{{Name: "first-port", Port: 8080, TargetPort: intstr.FromInt32(3000)}}
	svc := func(name, clusterIP string, selector map[string]string) corev1.Service {
		return corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Spec: corev1.ServiceSpec{ClusterIP: clusterIP, Selector: selector, Ports: port}}
	}
	c := cluster{
		pods: []corev1.Pod{pod},
		services: []corev1.Service{
			svc("cluster-ip", "", map[string]string{"app": "web"}),
			svc("headless", corev1.ClusterIPNone, map[string]string{"app": "web"}),
			svc("headless-by-hand", corev1.ClusterIPNone, nil),
		},
		slices: []discoveryv1.EndpointSlice{{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "by-hand", Labels: map[string]string{discoveryv1.LabelServiceName: "headless-by-hand"}},
			Endpoints:  []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.5"}}},
			Ports:      []discoveryv1.EndpointPort{{Name: ptr.To("first-port"), Port: ptr.To[int32](3000)}},
		}},
	}
	running := map[types.UID]*echoProcess{"u1": {ports: map[int32]int{3000: 41000}}}
	want := map[string]string{
		"cluster-ip.ns.svc.cluster.local:8080":       "127.0.0.1:41000",
		"headless.ns.svc.cluster.local:3000":         "127.0.0.1:41000",
		"headless-by-hand.ns.svc.cluster.local:3000": "127.0.0.1:41000",
	}
	if diff := cmp.Diff(want, originsOf(c, running, "cluster.local")); diff != "" {
		t.Errorf("originsOf -want +got:\n%s", diff)
	}
}
