package ingress_test

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/kubecache"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

// TestKubectlAppliedSourcesKeepTheirAnnotation: the provider's cache
// (internal/kubecache) holds Ingresses and Services without kubectl's
// last-applied annotation, and the provider's writes to them (the Ingress's
// finalizer and address) leave the stored annotation as kubectl wrote it: a
// later kubectl apply still sees what it applied. It runs here, beside the
// Ingress source's other tests of a running provider, so that kubecache's
// own tests need no control plane.
func TestKubectlAppliedSourcesKeepTheirAnnotation(t *testing.T) {
	ns := p.Namespace(t)
	cr := &v1alpha1.CloudflareTunnel{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "edge"},
		Spec:       v1alpha1.CloudflareTunnelSpec{TunnelName: ptr.To("edge-" + ns), Replicas: ptr.To[int32](1)},
	}
	p.Create(t, cr)
	const lastApplied = `{"apiVersion":"v1","kind":"Thing","metadata":{"name":"as-kubectl-wrote-it"}}` + "\n"
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web", Annotations: map[string]string{kubecache.LastApplied: lastApplied}},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(80)}}},
	}
	p.Create(t, svc)
	ing := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web", Annotations: map[string]string{
			v1alpha1.AnnotationTunnel: "edge", v1alpha1.AnnotationPublic: "true", kubecache.LastApplied: lastApplied,
		}},
		Spec: networkingv1.IngressSpec{IngressClassName: ptr.To("cloudflare"), Rules: []networkingv1.IngressRule{{
			Host: "kept-" + ns + ".example.com",
			IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
				Path: "/", PathType: ptr.To(networkingv1.PathTypePrefix),
				Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}},
			}}}},
		}}},
	}
	p.Create(t, ing)
	wait.Eventually(t, wait.Patience, "the provider's finalizer and address on the Ingress", func() error {
		if err := p.Get(ing); err != nil {
			return err
		}
		if len(ing.Finalizers) == 0 || len(ing.Status.LoadBalancer.Ingress) == 0 {
			return fmt.Errorf("finalizers %v, address %v", ing.Finalizers, ing.Status.LoadBalancer.Ingress)
		}
		return nil
	})
	if got := ing.Annotations[kubecache.LastApplied]; got != lastApplied {
		t.Errorf("Ingress %s annotation after the provider's writes: %q, want %q", kubecache.LastApplied, got, lastApplied)
	}
	if err := p.Get(svc); err != nil {
		t.Fatal(err)
	}
	if got := svc.Annotations[kubecache.LastApplied]; got != lastApplied {
		t.Errorf("Service %s annotation: %q, want %q", kubecache.LastApplied, got, lastApplied)
	}

	// Released, the provider removes its finalizer the same way.
	p.DeleteAndWait(t, ing)
}
