// Package v1alpha1 contains the zerotrust.tunnels.cloudflare.com managed
// resources: Tunnel, HostnameRoute, NetworkRoute, VirtualNetwork, and the
// Cloudflare Access AccessPolicy and AccessApplication.
// +kubebuilder:object:generate=true
// +groupName=zerotrust.tunnels.cloudflare.com
// +versionName=v1alpha1
package v1alpha1
