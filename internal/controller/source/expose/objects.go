package expose

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	connv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/connectivity/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
)

// meta names an object made for the source (publish.ObjectName), labels it
// and makes the source its controller.
func (t *translator) meta(kind, key string) metav1.ObjectMeta {
	o := t.in.Owner
	return metav1.ObjectMeta{
		Name:      publish.ObjectName(o.Name, o.KindPrefix+kind, key),
		Namespace: t.in.Namespace,
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
	if t.tunnelNamespace == t.in.Namespace {
		return ""
	}
	return t.tunnelNamespace
}

// labels of an object made for the source: its owner and its tunnel (with
// the tunnel's namespace when it is another's, so that tunnel finds it).
func (t *translator) labels(o Owner) map[string]string {
	l := map[string]string{o.Label: publish.LabelValue(o.Name), publish.LabelTunnel: publish.LabelValue(t.tunnel)}
	if ns := t.otherNamespace(); ns != "" {
		l[publish.LabelTunnelNamespace] = ns
	}
	return l
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
		ObjectMeta: t.meta(publish.KindHostnameRoute, hostname),
		Spec: ztv1alpha1.HostnameRouteSpec{
			ManagedResourceSpec: t.spec(),
			ForProvider:         ztv1alpha1.HostnameRouteParameters{Hostname: hostname, TunnelIDRef: t.tunnelRef()},
		},
	}
}

func (t *translator) vpcServiceMR(name string, port int64, hostname string) *connv1alpha1.VPCService {
	return &connv1alpha1.VPCService{
		TypeMeta:   metav1.TypeMeta{APIVersion: connv1alpha1.SchemeGroupVersion.String(), Kind: connv1alpha1.VPCServiceKind},
		ObjectMeta: t.meta(publish.KindVPCService, name),
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
