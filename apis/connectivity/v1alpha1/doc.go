// Package v1alpha1 contains the connectivity.tunnels.cloudflare.com managed
// resources: VPCService (Workers VPC directory services).
// +kubebuilder:object:generate=true
// +groupName=connectivity.tunnels.cloudflare.com
// +versionName=v1alpha1
package v1alpha1
