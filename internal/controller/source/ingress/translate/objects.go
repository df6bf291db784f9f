package translate

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	connv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/connectivity/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/annotation"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
)

func (t *translator) meta(kind, key string) metav1.ObjectMeta {
	o := t.owner()
	return metav1.ObjectMeta{
		Name:      MRName(o.Name, o.KindPrefix+kind, key),
		Namespace: t.ing.Namespace,
		Labels:    t.labels(o),
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion:         o.APIVersion,
			Kind:               o.Kind,
			Name:               o.Name,
			UID:                o.UID,
			Controller:         ptr.To(true),
			BlockOwnerDeletion: ptr.To(o.BlockOwnerDeletion),
		}},
	}
}

// otherNamespace is the tunnel's namespace when it is not the source's
// (a shared tunnel), else "".
func (t *translator) otherNamespace() string {
	if t.tunnelNamespace == t.ing.Namespace {
		return ""
	}
	return t.tunnelNamespace
}

// labels of an object made for the source: its owner and its tunnel (with
// the tunnel's namespace when it is another's, so that tunnel finds it).
func (t *translator) labels(o Owner) map[string]string {
	l := map[string]string{o.Label: LabelValue(o.Name), LabelTunnel: LabelValue(t.tunnel)}
	if ns := t.otherNamespace(); ns != "" {
		l[publish.LabelTunnelNamespace] = ns
	}
	return l
}

// owner is what the objects are made for: Input.Owner, or the Ingress.
func (t *translator) owner() Owner {
	if t.in.Owner != nil {
		return *t.in.Owner
	}
	return Owner{APIVersion: networkingv1.SchemeGroupVersion.String(), Kind: "Ingress", Name: t.ing.Name, UID: t.ing.UID, Label: LabelIngress, BlockOwnerDeletion: true}
}

func (t *translator) spec() xpv2.ManagedResourceSpec {
	return xpv2.ManagedResourceSpec{ProviderConfigReference: t.in.Tunnel.ProviderConfigRef.DeepCopy()}
}

// tunnelRef resolves Always so a recreated Tunnel's new ID propagates.
func (t *translator) tunnelRef() *xpv2.NamespacedReference {
	return &xpv2.NamespacedReference{Name: t.tunnel, Namespace: t.otherNamespace(), Policy: &xpv2.Policy{Resolve: ptr.To(xpv2.ResolvePolicyAlways)}}
}

func (t *translator) route(hostname string) *ztv1alpha1.HostnameRoute {
	return &ztv1alpha1.HostnameRoute{
		TypeMeta:   metav1.TypeMeta{APIVersion: ztv1alpha1.SchemeGroupVersion.String(), Kind: ztv1alpha1.HostnameRouteKind},
		ObjectMeta: t.meta(KindHostnameRoute, hostname),
		Spec: ztv1alpha1.HostnameRouteSpec{
			ManagedResourceSpec: t.spec(),
			ForProvider:         ztv1alpha1.HostnameRouteParameters{Hostname: hostname, TunnelIDRef: t.tunnelRef()},
		},
	}
}

func (t *translator) vpcServiceMR(name string, port int64, hostname string) *connv1alpha1.VPCService {
	return &connv1alpha1.VPCService{
		TypeMeta:   metav1.TypeMeta{APIVersion: connv1alpha1.SchemeGroupVersion.String(), Kind: connv1alpha1.VPCServiceKind},
		ObjectMeta: t.meta(KindVPCService, name),
		Spec: connv1alpha1.VPCServiceSpec{
			ManagedResourceSpec: t.spec(),
			ForProvider: connv1alpha1.VPCServiceParameters{
				Name:    name,
				Type:    "tcp",
				TCPPort: ptr.To(port),
				Host: connv1alpha1.ServiceHost{
					Hostname:        ptr.To(hostname),
					ResolverNetwork: &connv1alpha1.ResolverNetwork{TunnelIDRef: t.tunnelRef()},
				},
			},
			AdoptByName: t.in.Tunnel.AdoptByName,
		},
	}
}

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

// clip quotes user input for a message, shortened so that huge annotation
// values cannot blow up events and conditions.
func clip(s string) string { return annotation.Clip(s) }

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
