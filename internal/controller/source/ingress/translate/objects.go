package translate

import (
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"

	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
)

// TunnelConfig aggregates the public rules of Ingresses on one tunnel into
// its whole remote configuration, as the CloudflareTunnel does with the
// published hostnames they make (publish.TunnelConfig).
func TunnelConfig(rules ...[]ztv1alpha1.IngressRule) *ztv1alpha1.TunnelConfig {
	return publish.TunnelConfig(rules...)
}

// MRName names an object made from an Ingress: "<ingress>-<kind>-<hash>"
// (publish.ObjectName).
func MRName(ingress, kind, key string) string { return publish.ObjectName(ingress, kind, key) }

// LabelValue is v when it is a valid label value, else a sanitised,
// truncated form with a hash suffix (publish.LabelValue).
func LabelValue(v string) string { return publish.LabelValue(v) }

// ServicesByName indexes a namespace's Services for Input.Services.
func ServicesByName(l *corev1.ServiceList) map[string]*corev1.Service {
	m := make(map[string]*corev1.Service, len(l.Items))
	for i := range l.Items {
		m[l.Items[i].Name] = &l.Items[i]
	}
	return m
}

// BackendServices names the Services an Ingress's backends refer to, each
// once: the only Services Translate looks at.
func BackendServices(ing *networkingv1.Ingress) []string {
	seen := map[string]bool{}
	var out []string
	add := func(b *networkingv1.IngressBackend) {
		if b != nil && b.Service != nil && b.Service.Name != "" && !seen[b.Service.Name] {
			seen[b.Service.Name] = true
			out = append(out, b.Service.Name)
		}
	}
	add(ing.Spec.DefaultBackend)
	for _, r := range ing.Spec.Rules {
		if r.HTTP == nil {
			continue
		}
		for i := range r.HTTP.Paths {
			add(&r.HTTP.Paths[i].Backend)
		}
	}
	return out
}
