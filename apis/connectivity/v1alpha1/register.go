package v1alpha1

import (
	"reflect"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

// Package type metadata.
const (
	Group   = "connectivity.tunnels.cloudflare.com"
	Version = "v1alpha1"
)

var (
	// SchemeGroupVersion is group version used to register these objects.
	SchemeGroupVersion = schema.GroupVersion{Group: Group, Version: Version}

	// SchemeBuilder is used to add go types to the GroupVersionKind scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: SchemeGroupVersion}
)

// VPCService type metadata.
var (
	VPCServiceKind             = reflect.TypeOf(VPCService{}).Name()
	VPCServiceGroupKind        = schema.GroupKind{Group: Group, Kind: VPCServiceKind}.String()
	VPCServiceGroupVersionKind = SchemeGroupVersion.WithKind(VPCServiceKind)
)

func init() {
	SchemeBuilder.Register(&VPCService{}, &VPCServiceList{})
}
