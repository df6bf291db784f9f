package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
)

// NetworkRouteParameters are the desired state of a private network route.
type NetworkRouteParameters struct {
	// Network routed through the tunnel: a CIDR such as "10.96.0.12/32" or
	// "fd00:10:96::/112". Cloudflare stores it masked ("10.1.2.3/16" is
	// "10.1.0.0/16"); it is compared in that form.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=49
	// +kubebuilder:validation:XValidation:rule="isCIDR(self)",message="network must be a CIDR, such as 10.96.0.12/32 or fd00:10:96::/112"
	Network string `json:"network"`

	// TunnelID is the ID of the tunnel the network is routed to.
	// +optional
	// +crossplane:generate:reference:type=Tunnel
	TunnelID *string `json:"tunnelId,omitempty"`

	// TunnelIDRef references a Tunnel in this namespace to set tunnelId.
	// +optional
	TunnelIDRef *xpv2.NamespacedReference `json:"tunnelIdRef,omitempty"`

	// TunnelIDSelector selects a Tunnel in this namespace to set tunnelId.
	// +optional
	// +kubebuilder:validation:XValidation:rule="!has(self.__namespace__) || size(self.__namespace__) == 0",message="tunnelIdSelector may only select Tunnels in the route's own namespace"
	TunnelIDSelector *xpv2.NamespacedSelector `json:"tunnelIdSelector,omitempty"`

	// VirtualNetworkID is the ID of the virtual network the route belongs
	// to. Unset, the route goes to the account's default virtual network
	// when it is made (status.atProvider.virtualNetworkId says which), and
	// stays there when the account's default changes.
	// +optional
	// +crossplane:generate:reference:type=VirtualNetwork
	VirtualNetworkID *string `json:"virtualNetworkId,omitempty"`

	// VirtualNetworkIDRef references a VirtualNetwork in this namespace to
	// set virtualNetworkId.
	// +optional
	VirtualNetworkIDRef *xpv2.NamespacedReference `json:"virtualNetworkIdRef,omitempty"`

	// VirtualNetworkIDSelector selects a VirtualNetwork in this namespace
	// to set virtualNetworkId.
	// +optional
	// +kubebuilder:validation:XValidation:rule="!has(self.__namespace__) || size(self.__namespace__) == 0",message="virtualNetworkIdSelector may only select VirtualNetworks in the route's own namespace"
	VirtualNetworkIDSelector *xpv2.NamespacedSelector `json:"virtualNetworkIdSelector,omitempty"`

	// Comment stored with the route, before this provider's ownership
	// marker (Cloudflare allows 100 characters in all).
	// +optional
	// +kubebuilder:validation:MaxLength=50
	Comment *string `json:"comment,omitempty"`
}

// NetworkRouteObservation is the observed state of a network route.
type NetworkRouteObservation struct {
	// ID of the route (also its external-name).
	ID string `json:"id,omitempty"`
	// Network as Cloudflare stores it.
	Network string `json:"network,omitempty"`
	// TunnelID the route points at.
	TunnelID string `json:"tunnelId,omitempty"`
	// TunnelName of that tunnel.
	TunnelName string `json:"tunnelName,omitempty"`
	// VirtualNetworkID the route belongs to.
	VirtualNetworkID string `json:"virtualNetworkId,omitempty"`
	// VirtualNetworkName of that virtual network.
	VirtualNetworkName string `json:"virtualNetworkName,omitempty"`
	// CreatedAt is when the route was created.
	CreatedAt *metav1.Time `json:"createdAt,omitempty"`
}

// A NetworkRouteSpec defines the desired state of a NetworkRoute.
// +kubebuilder:validation:XValidation:rule="!has(self.providerConfigRef) || self.providerConfigRef.kind in ['ProviderConfig', 'ClusterProviderConfig']",message="providerConfigRef.kind is ProviderConfig or ClusterProviderConfig"
// +kubebuilder:validation:XValidation:rule="has(self.forProvider.tunnelId) || has(self.forProvider.tunnelIdRef) || has(self.forProvider.tunnelIdSelector)",message="one of forProvider.tunnelId, tunnelIdRef or tunnelIdSelector is required"
type NetworkRouteSpec struct {
	xpv2.ManagedResourceSpec `json:",inline"`
	ForProvider              NetworkRouteParameters `json:"forProvider"`
}

// A NetworkRouteStatus represents the observed state of a NetworkRoute.
type NetworkRouteStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	AtProvider                 NetworkRouteObservation `json:"atProvider,omitempty"`
}

// +kubebuilder:object:root=true

// A NetworkRoute routes a private network (a CIDR) through a Cloudflare
// Tunnel, so enrolled WARP clients reach its addresses through the tunnel.
// Its external-name is the route ID. A network that overlaps a route this
// provider did not create, in the same virtual network, is refused.
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="SYNCED",type="string",JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="EXTERNAL-NAME",type="string",JSONPath=".metadata.annotations.crossplane\\.io/external-name"
// +kubebuilder:printcolumn:name="NETWORK",type="string",JSONPath=".spec.forProvider.network"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,categories={crossplane,managed,cloudflare}
type NetworkRoute struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   NetworkRouteSpec   `json:"spec"`
	Status NetworkRouteStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// NetworkRouteList contains a list of NetworkRoute.
type NetworkRouteList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NetworkRoute `json:"items"`
}
