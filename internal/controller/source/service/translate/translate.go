// Package translate turns an annotated Service into the private network
// routes of its cluster IPs: a NetworkRoute for <ClusterIP>/32 (and /128 for
// an IPv6 family) through the tunnel the Service names, so enrolled WARP
// clients reach it by address. It is pure: the controller reads the world,
// this package decides.
package translate

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sharing"
)

// Input is what one translation needs.
type Input struct {
	Service *corev1.Service
	// ProviderConfigRef of the tunnel's Tunnel MR, which the routes use too;
	// nil leaves the routes' default.
	ProviderConfigRef *xpv2.ProviderConfigReference
}

// Result is the desired private routes of one Service. Its JSON names
// are those of the golden corpus (testdata/golden).
type Result struct {
	// Wanted: the Service asks for a private route (its annotation is
	// "true"), whether or not one can be made.
	Wanted bool `json:"wanted,omitempty"`
	// Tunnel is the CloudflareTunnel the annotation names; "" when none.
	Tunnel string `json:"tunnel,omitempty"`
	// TunnelNamespace is its namespace: the Service's, or another's that
	// shares it.
	TunnelNamespace string `json:"tunnelNamespace,omitempty"`
	// Routes are the NetworkRoutes wanted, one per cluster IP.
	Routes []*ztv1alpha1.NetworkRoute `json:"routes,omitempty"`
	// Problems are annotations the translation cannot follow (a typo, say),
	// each a Warning event (ReasonInvalidAnnotation) whose message names
	// the annotation (Field). With them, KeepExisting: whatever the Service
	// already routes stays as it is, since bad input never deletes what
	// works.
	Problems     []publish.Problem `json:"problems,omitempty"`
	KeepExisting bool              `json:"keepExisting,omitempty"`
	// NoClusterIP says why the Service has no address of its own to route
	// (a Warning event, ReasonNoClusterIP); "" when it has one.
	NoClusterIP string `json:"noClusterIP,omitempty"`
}

// Reasons of the translation's Warning events.
const (
	ReasonInvalidAnnotation = "InvalidAnnotation"
	ReasonNoClusterIP       = "NoClusterIP"
)

// PrivateRoutes is the desired private routes of in.Service.
func PrivateRoutes(in Input) Result {
	svc := in.Service
	a := svc.Annotations
	var res Result
	switch v, set := a[v1alpha1.AnnotationPrivateRoute]; {
	case !set || strings.EqualFold(strings.TrimSpace(v), "false"):
		return res
	case !strings.EqualFold(strings.TrimSpace(v), "true"):
		return keep(res, v1alpha1.AnnotationPrivateRoute, fmt.Sprintf("annotation %s is %q: it must be \"true\" or \"false\"; nothing is changed until it is", v1alpha1.AnnotationPrivateRoute, v))
	}
	res.Wanted = true
	raw := strings.TrimSpace(a[v1alpha1.AnnotationTunnel])
	if raw == "" {
		return keep(res, v1alpha1.AnnotationTunnel, fmt.Sprintf("annotation %s is required with %s: name a CloudflareTunnel in namespace %s", v1alpha1.AnnotationTunnel, v1alpha1.AnnotationPrivateRoute, svc.Namespace))
	}
	ref, bad := sharing.Parse(raw, svc.Namespace)
	if bad != "" {
		return keep(res, v1alpha1.AnnotationTunnel, fmt.Sprintf("annotation %s: %s; nothing is changed until it names one", v1alpha1.AnnotationTunnel, bad))
	}
	res.Tunnel, res.TunnelNamespace = ref.Name, ref.Namespace
	// Empty is the account's default virtual network, as unset is.
	vnet := strings.TrimSpace(a[v1alpha1.AnnotationVirtualNetwork])
	if vnet != "" && len(validation.IsDNS1123Subdomain(vnet)) > 0 {
		return keep(res, v1alpha1.AnnotationVirtualNetwork, fmt.Sprintf("annotation %s is %q: it must name a VirtualNetwork in namespace %s; nothing is changed until it does", v1alpha1.AnnotationVirtualNetwork, vnet, svc.Namespace))
	}
	ips, why := clusterIPs(svc)
	if why != "" {
		// Not a typo: the Service has no address of its own to route, so
		// nothing is wanted (a route left for an address the Service gave
		// up would send WARP clients to whatever gets it next).
		res.NoClusterIP = why
		return res
	}
	for _, ip := range ips {
		res.Routes = append(res.Routes, route(in, res, vnet, ip))
	}
	return res
}

func keep(res Result, annotation, msg string) Result {
	res.Problems = append(res.Problems, publish.Problem{Field: annotation, Message: msg})
	res.KeepExisting = true
	return res
}

// clusterIPs are a Service's cluster IPs, parsed, sorted and distinct, or
// why it has none to route.
func clusterIPs(svc *corev1.Service) ([]netip.Addr, string) {
	switch {
	case svc.Spec.Type == corev1.ServiceTypeExternalName:
		return nil, fmt.Sprintf("Service %s is of type ExternalName: it has no cluster IP to route privately; nothing is routed (use a ClusterIP Service, or a HostnameRoute for its name)", svc.Name)
	case svc.Spec.ClusterIP == corev1.ClusterIPNone:
		return nil, fmt.Sprintf("Service %s is headless (clusterIP: None): it has no cluster IP to route privately; nothing is routed (route its pods' network with a NetworkRoute, or give it a cluster IP)", svc.Name)
	}
	raw := svc.Spec.ClusterIPs
	if len(raw) == 0 && svc.Spec.ClusterIP != "" {
		raw = []string{svc.Spec.ClusterIP}
	}
	var ips []netip.Addr
	for _, s := range raw {
		ip, err := netip.ParseAddr(s)
		if err != nil || !ip.IsValid() {
			continue
		}
		ips = append(ips, ip.Unmap())
	}
	if len(ips) == 0 {
		return nil, fmt.Sprintf("Service %s has no cluster IP yet: nothing is routed until it has one", svc.Name)
	}
	slices.SortFunc(ips, func(a, b netip.Addr) int { return a.Compare(b) })
	return slices.Compact(ips), ""
}

// HostPrefix is the one-address network of ip: /32 for IPv4, /128 for IPv6.
func HostPrefix(ip netip.Addr) netip.Prefix {
	return netip.PrefixFrom(ip, ip.BitLen())
}

func route(in Input, res Result, vnet string, ip netip.Addr) *ztv1alpha1.NetworkRoute {
	svc := in.Service
	network := HostPrefix(ip).String()
	labels := map[string]string{publish.LabelService: publish.LabelValue(svc.Name), publish.LabelTunnel: publish.LabelValue(res.Tunnel)}
	ref := &xpv2.NamespacedReference{Name: res.Tunnel}
	if res.TunnelNamespace != svc.Namespace {
		labels[publish.LabelTunnelNamespace] = res.TunnelNamespace
		ref.Namespace = res.TunnelNamespace
	}
	r := &ztv1alpha1.NetworkRoute{
		TypeMeta: metav1.TypeMeta{APIVersion: ztv1alpha1.SchemeGroupVersion.String(), Kind: ztv1alpha1.NetworkRouteKind},
		ObjectMeta: metav1.ObjectMeta{
			// The address and the virtual network are in the name: a
			// Service recreated with another IP, or moved to another
			// virtual network, gets a new route, and the old one goes,
			// never both kept (a route cannot be moved across virtual
			// networks reliably: with none named, its virtual network is
			// filled in from Cloudflare).
			Name:      publish.ObjectName(svc.Name, publish.KindNetworkRoute, network+"@"+vnet),
			Namespace: svc.Namespace,
			Labels:    labels,
			// Not blocking the owner's deletion: that would need the
			// right to set finalizers on Services, and nothing waits for
			// a Service's foreground deletion.
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "Service", Name: svc.Name, UID: svc.UID, Controller: ptr.To(true),
			}},
		},
		Spec: ztv1alpha1.NetworkRouteSpec{
			ManagedResourceSpec: xpv2.ManagedResourceSpec{ProviderConfigReference: in.ProviderConfigRef.DeepCopy()},
			ForProvider: ztv1alpha1.NetworkRouteParameters{
				Network:     network,
				TunnelIDRef: ref,
				Comment:     ptr.To(Comment(svc)),
			},
		},
	}
	if vnet != "" {
		r.Spec.ForProvider.VirtualNetworkIDRef = &xpv2.NamespacedReference{Name: vnet}
	}
	return r
}

// Comment is a route's comment: the Service it routes, cut to fit.
func Comment(svc *corev1.Service) string {
	c := "Service " + svc.Namespace + "/" + svc.Name
	if len(c) > 50 {
		c = c[:49] + "~"
	}
	return c
}
