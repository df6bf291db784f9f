// Package apis contains the Kubernetes API of provider-cloudflare-tunnel.
package apis

import (
	"k8s.io/apimachinery/pkg/runtime"

	connectivityv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/connectivity/v1alpha1"
	dnsv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/dns/v1alpha1"
	loadbalancingv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/loadbalancing/v1alpha1"
	tunnelsv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	zerotrustv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
)

// AddToSchemes may be used to add all resources defined in the project to a Scheme.
var AddToSchemes = runtime.SchemeBuilder{
	tunnelsv1alpha1.SchemeBuilder.AddToScheme,
	zerotrustv1alpha1.SchemeBuilder.AddToScheme,
	connectivityv1alpha1.SchemeBuilder.AddToScheme,
	dnsv1alpha1.SchemeBuilder.AddToScheme,
	loadbalancingv1alpha1.SchemeBuilder.AddToScheme,
}

// AddToScheme adds all resources to the Scheme.
func AddToScheme(s *runtime.Scheme) error {
	return AddToSchemes.AddToScheme(s)
}
