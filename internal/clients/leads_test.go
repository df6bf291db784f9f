package clients

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func slice(service, managedBy string, addresses ...string) discoveryv1.EndpointSlice {
	s := discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{discoveryv1.LabelServiceName: service}}}
	if managedBy != "" {
		s.Labels[discoveryv1.LabelManagedBy] = managedBy
	}
	for _, a := range addresses {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{a}})
	}
	return s
}

func service(name string, selector map[string]string) corev1.Service {
	return corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.ServiceSpec{Selector: selector}}
}

// TestPodAddresses: only what the endpoint controller found for a Service
// with a selector is a Pod's address; a slice labelled as the controller's
// for a Service it does not look after (no selector, or no such Service)
// is someone's writing.
func TestPodAddresses(t *testing.T) {
	app := map[string]string{"app": "web"}
	services := []corev1.Service{service("web", app), service("by-hand", nil)}
	slices := []discoveryv1.EndpointSlice{
		slice("web", endpointController, "10.244.0.5", "10.244.0.6"),
		slice("web", "someone", "10.9.9.1"),
		slice("by-hand", endpointController, "10.9.9.2"),
		slice("by-hand", "", "10.244.0.5"),
		slice("gone", endpointController, "10.9.9.3"),
	}
	want := map[string]bool{"10.244.0.5": true, "10.244.0.6": true}
	if diff := cmp.Diff(want, PodAddresses(services, slices)); diff != "" {
		t.Errorf("PodAddresses -want +got:\n%s", diff)
	}
}

// TestHandMadeAddresses: every slice of a Service without a selector is
// hand-made; a selector's are only those the endpoint controller did not
// make.
func TestHandMadeAddresses(t *testing.T) {
	cases := map[string]struct {
		svc  corev1.Service
		want []string
	}{
		"a selector":  {svc: service("web", map[string]string{"app": "web"}), want: []string{"10.9.9.1"}},
		"no selector": {svc: service("web", nil), want: []string{"10.244.0.5", "10.9.9.1"}},
	}
	slices := []discoveryv1.EndpointSlice{slice("web", endpointController, "10.244.0.5"), slice("web", "someone", "10.9.9.1")}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, HandMadeAddresses(&tc.svc, slices)); diff != "" {
				t.Errorf("-want +got:\n%s", diff)
			}
		})
	}
}
