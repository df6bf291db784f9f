// Package v1alpha1 contains the loadbalancing.tunnels.cloudflare.com managed
// resources: LoadBalancerMonitor, LoadBalancerPool and LoadBalancer.
// +kubebuilder:object:generate=true
// +groupName=loadbalancing.tunnels.cloudflare.com
// +versionName=v1alpha1
package v1alpha1
