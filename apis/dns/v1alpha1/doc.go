// Package v1alpha1 contains the dns.tunnels.cloudflare.com managed
// resources: DNSRecord.
// +kubebuilder:object:generate=true
// +groupName=dns.tunnels.cloudflare.com
// +versionName=v1alpha1
package v1alpha1
