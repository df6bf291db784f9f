package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
)

// HostnameRouteParameters are the desired state of a private hostname route.
type HostnameRouteParameters struct {
	// Hostname routed through the tunnel, e.g.
	// "redis.team-a.svc.cluster.local". Cloudflare stores it lower-case,
	// without surrounding dots and without a leading "*." label; it is
	// compared in that form. One leading "*." label is allowed; "*" is no
	// other label.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^([*][.])?([A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?[.])*[A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?[.]?$`
	Hostname string `json:"hostname"`

	// TunnelID is the ID of the tunnel the hostname is routed to.
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

	// Comment stored with the route.
	// +optional
	// +kubebuilder:validation:MaxLength=100
	Comment *string `json:"comment,omitempty"`
}

// HostnameRouteObservation is the observed state of a hostname route.
type HostnameRouteObservation struct {
	// ID of the route (also its external-name).
	ID string `json:"id,omitempty"`
	// Hostname as Cloudflare stores it.
	Hostname string `json:"hostname,omitempty"`
	// TunnelID the route points at.
	TunnelID string `json:"tunnelId,omitempty"`
	// TunnelName of that tunnel.
	TunnelName string `json:"tunnelName,omitempty"`
	// CreatedAt is when the route was created.
	CreatedAt *metav1.Time `json:"createdAt,omitempty"`
}

// A HostnameRouteSpec defines the desired state of a HostnameRoute.
// +kubebuilder:validation:XValidation:rule="!has(self.providerConfigRef) || self.providerConfigRef.kind in ['ProviderConfig', 'ClusterProviderConfig']",message="providerConfigRef.kind is ProviderConfig or ClusterProviderConfig"
// +kubebuilder:validation:XValidation:rule="has(self.forProvider.tunnelId) || has(self.forProvider.tunnelIdRef) || has(self.forProvider.tunnelIdSelector)",message="one of forProvider.tunnelId, tunnelIdRef or tunnelIdSelector is required"
type HostnameRouteSpec struct {
	xpv2.ManagedResourceSpec `json:",inline"`
	ForProvider              HostnameRouteParameters `json:"forProvider"`
}

// A HostnameRouteStatus represents the observed state of a HostnameRoute.
type HostnameRouteStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	AtProvider                 HostnameRouteObservation `json:"atProvider,omitempty"`
}

// +kubebuilder:object:root=true

// A HostnameRoute routes a private hostname to a Cloudflare Tunnel, so WARP
// clients reach it through the tunnel (cloudflared resolves the hostname
// inside the cluster). Its external-name is the route ID.
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="SYNCED",type="string",JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="EXTERNAL-NAME",type="string",JSONPath=".metadata.annotations.crossplane\\.io/external-name"
// +kubebuilder:printcolumn:name="HOSTNAME",type="string",JSONPath=".spec.forProvider.hostname"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,categories={crossplane,managed,cloudflare}
type HostnameRoute struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   HostnameRouteSpec   `json:"spec"`
	Status HostnameRouteStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// HostnameRouteList contains a list of HostnameRoute.
type HostnameRouteList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []HostnameRoute `json:"items"`
}
