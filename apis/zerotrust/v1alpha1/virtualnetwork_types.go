package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
)

// VirtualNetworkParameters are the desired state of a virtual network.
type VirtualNetworkParameters struct {
	// Name of the virtual network, unique among the account's live virtual
	// networks. A live one of this name that this provider did not create
	// is never adopted: import it by setting its ID as external-name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Name string `json:"name"`

	// Comment stored with the virtual network, before this provider's
	// ownership marker.
	// +optional
	// +kubebuilder:validation:MaxLength=50
	Comment *string `json:"comment,omitempty"`

	// IsDefaultNetwork makes this the account's default virtual network:
	// routes that name no virtual network go to it. An account has exactly
	// one default, so setting it takes the flag from the current default;
	// the account's default cannot be deleted (make another one the default
	// first). Unset leaves the flag as Cloudflare has it.
	// +optional
	IsDefaultNetwork *bool `json:"isDefaultNetwork,omitempty"`
}

// VirtualNetworkObservation is the observed state of a virtual network.
type VirtualNetworkObservation struct {
	// ID of the virtual network (also its external-name).
	ID string `json:"id,omitempty"`
	// Name as Cloudflare stores it.
	Name string `json:"name,omitempty"`
	// IsDefaultNetwork says whether it is the account's default.
	IsDefaultNetwork bool `json:"isDefaultNetwork,omitempty"`
	// CreatedAt is when it was created.
	CreatedAt *metav1.Time `json:"createdAt,omitempty"`
	// DefaultTakenBy is the virtual network that became the account's
	// default after this one held it (another installation, or a hand
	// edit): while it is set, this one does not take the default back.
	// Set isDefaultNetwork to false, then to true again, to take it back.
	// +optional
	DefaultTakenBy string `json:"defaultTakenBy,omitempty"`
}

// A VirtualNetworkSpec defines the desired state of a VirtualNetwork.
// +kubebuilder:validation:XValidation:rule="!has(self.providerConfigRef) || self.providerConfigRef.kind in ['ProviderConfig', 'ClusterProviderConfig']",message="providerConfigRef.kind is ProviderConfig or ClusterProviderConfig"
type VirtualNetworkSpec struct {
	xpv2.ManagedResourceSpec `json:",inline"`
	ForProvider              VirtualNetworkParameters `json:"forProvider"`
}

// A VirtualNetworkStatus represents the observed state of a VirtualNetwork.
type VirtualNetworkStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	AtProvider                 VirtualNetworkObservation `json:"atProvider,omitempty"`
}

// +kubebuilder:object:root=true

// A VirtualNetwork is a Cloudflare Zero Trust virtual network: a separate
// address space for private network routes, so two networks with
// overlapping CIDRs (two clusters' Service ranges, say) can both be routed.
// Its external-name is the virtual network ID. Deleting one that routes
// still use waits, and says which.
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="SYNCED",type="string",JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="EXTERNAL-NAME",type="string",JSONPath=".metadata.annotations.crossplane\\.io/external-name"
// +kubebuilder:printcolumn:name="DEFAULT",type="boolean",JSONPath=".status.atProvider.isDefaultNetwork"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,categories={crossplane,managed,cloudflare}
type VirtualNetwork struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   VirtualNetworkSpec   `json:"spec"`
	Status VirtualNetworkStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// VirtualNetworkList contains a list of VirtualNetwork.
type VirtualNetworkList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VirtualNetwork `json:"items"`
}
