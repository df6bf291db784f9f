package v1alpha1

import (
	"reflect"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

// Package type metadata.
const (
	Group   = "zerotrust.tunnels.cloudflare.com"
	Version = "v1alpha1"
)

var (
	// SchemeGroupVersion is group version used to register these objects.
	SchemeGroupVersion = schema.GroupVersion{Group: Group, Version: Version}

	// SchemeBuilder is used to add go types to the GroupVersionKind scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: SchemeGroupVersion}
)

// Tunnel type metadata.
var (
	TunnelKind             = reflect.TypeOf(Tunnel{}).Name()
	TunnelGroupKind        = schema.GroupKind{Group: Group, Kind: TunnelKind}.String()
	TunnelGroupVersionKind = SchemeGroupVersion.WithKind(TunnelKind)
)

// HostnameRoute type metadata.
var (
	HostnameRouteKind             = reflect.TypeOf(HostnameRoute{}).Name()
	HostnameRouteGroupKind        = schema.GroupKind{Group: Group, Kind: HostnameRouteKind}.String()
	HostnameRouteGroupVersionKind = SchemeGroupVersion.WithKind(HostnameRouteKind)
)

// NetworkRoute type metadata.
var (
	NetworkRouteKind             = reflect.TypeOf(NetworkRoute{}).Name()
	NetworkRouteGroupKind        = schema.GroupKind{Group: Group, Kind: NetworkRouteKind}.String()
	NetworkRouteGroupVersionKind = SchemeGroupVersion.WithKind(NetworkRouteKind)
)

// VirtualNetwork type metadata.
var (
	VirtualNetworkKind             = reflect.TypeOf(VirtualNetwork{}).Name()
	VirtualNetworkGroupKind        = schema.GroupKind{Group: Group, Kind: VirtualNetworkKind}.String()
	VirtualNetworkGroupVersionKind = SchemeGroupVersion.WithKind(VirtualNetworkKind)
)

// AccessPolicy type metadata.
var (
	AccessPolicyKind             = reflect.TypeOf(AccessPolicy{}).Name()
	AccessPolicyGroupKind        = schema.GroupKind{Group: Group, Kind: AccessPolicyKind}.String()
	AccessPolicyGroupVersionKind = SchemeGroupVersion.WithKind(AccessPolicyKind)
)

// AccessApplication type metadata.
var (
	AccessApplicationKind             = reflect.TypeOf(AccessApplication{}).Name()
	AccessApplicationGroupKind        = schema.GroupKind{Group: Group, Kind: AccessApplicationKind}.String()
	AccessApplicationGroupVersionKind = SchemeGroupVersion.WithKind(AccessApplicationKind)
)

// AccessGroup type metadata.
var (
	AccessGroupKind             = reflect.TypeOf(AccessGroup{}).Name()
	AccessGroupGroupKind        = schema.GroupKind{Group: Group, Kind: AccessGroupKind}.String()
	AccessGroupGroupVersionKind = SchemeGroupVersion.WithKind(AccessGroupKind)
)

// AccessServiceToken type metadata.
var (
	AccessServiceTokenKind             = reflect.TypeOf(AccessServiceToken{}).Name()
	AccessServiceTokenGroupKind        = schema.GroupKind{Group: Group, Kind: AccessServiceTokenKind}.String()
	AccessServiceTokenGroupVersionKind = SchemeGroupVersion.WithKind(AccessServiceTokenKind)
)

func init() {
	SchemeBuilder.Register(&Tunnel{}, &TunnelList{})
	SchemeBuilder.Register(&HostnameRoute{}, &HostnameRouteList{})
	SchemeBuilder.Register(&NetworkRoute{}, &NetworkRouteList{})
	SchemeBuilder.Register(&VirtualNetwork{}, &VirtualNetworkList{})
	SchemeBuilder.Register(&AccessPolicy{}, &AccessPolicyList{})
	SchemeBuilder.Register(&AccessApplication{}, &AccessApplicationList{})
	SchemeBuilder.Register(&AccessGroup{}, &AccessGroupList{})
	SchemeBuilder.Register(&AccessServiceToken{}, &AccessServiceTokenList{})
}
