package v1alpha1

import (
	"reflect"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

// Package type metadata.
const (
	Group   = "loadbalancing.tunnels.cloudflare.com"
	Version = "v1alpha1"
)

var (
	// SchemeGroupVersion is group version used to register these objects.
	SchemeGroupVersion = schema.GroupVersion{Group: Group, Version: Version}

	// SchemeBuilder is used to add go types to the GroupVersionKind scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: SchemeGroupVersion}
)

// LoadBalancerMonitor type metadata.
var (
	LoadBalancerMonitorKind             = reflect.TypeOf(LoadBalancerMonitor{}).Name()
	LoadBalancerMonitorGroupKind        = schema.GroupKind{Group: Group, Kind: LoadBalancerMonitorKind}.String()
	LoadBalancerMonitorGroupVersionKind = SchemeGroupVersion.WithKind(LoadBalancerMonitorKind)
)

// LoadBalancerPool type metadata.
var (
	LoadBalancerPoolKind             = reflect.TypeOf(LoadBalancerPool{}).Name()
	LoadBalancerPoolGroupKind        = schema.GroupKind{Group: Group, Kind: LoadBalancerPoolKind}.String()
	LoadBalancerPoolGroupVersionKind = SchemeGroupVersion.WithKind(LoadBalancerPoolKind)
)

// LoadBalancer type metadata.
var (
	LoadBalancerKind             = reflect.TypeOf(LoadBalancer{}).Name()
	LoadBalancerGroupKind        = schema.GroupKind{Group: Group, Kind: LoadBalancerKind}.String()
	LoadBalancerGroupVersionKind = SchemeGroupVersion.WithKind(LoadBalancerKind)
)

func init() {
	SchemeBuilder.Register(&LoadBalancerMonitor{}, &LoadBalancerMonitorList{})
	SchemeBuilder.Register(&LoadBalancerPool{}, &LoadBalancerPoolList{})
	SchemeBuilder.Register(&LoadBalancer{}, &LoadBalancerList{})
}
