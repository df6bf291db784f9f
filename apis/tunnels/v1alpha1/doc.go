// Package v1alpha1 contains the tunnels.cloudflare.com API: the provider's
// configuration kinds (ProviderConfig, ClusterProviderConfig,
// ProviderConfigUsage).
// +kubebuilder:object:generate=true
// +groupName=tunnels.cloudflare.com
// +versionName=v1alpha1
package v1alpha1
