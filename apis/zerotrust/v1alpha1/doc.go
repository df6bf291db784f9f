// Package v1alpha1 contains the zerotrust.tunnels.cloudflare.com managed
// resources: Tunnel and HostnameRoute.
// +kubebuilder:object:generate=true
// +groupName=zerotrust.tunnels.cloudflare.com
// +versionName=v1alpha1
package v1alpha1
