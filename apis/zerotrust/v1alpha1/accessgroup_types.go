package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
)

// AccessGroupParameters are the desired state of an Access group.
type AccessGroupParameters struct {
	// Name of the group. Names are not unique in Cloudflare: a group of
	// this name that this provider did not create is never adopted; import
	// one by setting its ID as external-name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=350
	Name string `json:"name"`

	// Include: a member matches at least one of these.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	Include []AccessRule `json:"include"`

	// Exclude: whoever matches any of these is not a member.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	Exclude []AccessRule `json:"exclude,omitempty"`

	// Require: a member matches every one of these.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	Require []AccessRule `json:"require,omitempty"`
}

// AccessGroupObservation is the observed state of an Access group.
type AccessGroupObservation struct {
	// ID of the group (also its external-name).
	ID string `json:"id,omitempty"`
	// CreatedAt is when it was created.
	CreatedAt *metav1.Time `json:"createdAt,omitempty"`
}

// An AccessGroupSpec defines the desired state of an AccessGroup.
// +kubebuilder:validation:XValidation:rule="!has(self.providerConfigRef) || self.providerConfigRef.kind in ['ProviderConfig', 'ClusterProviderConfig']",message="providerConfigRef.kind is ProviderConfig or ClusterProviderConfig"
type AccessGroupSpec struct {
	xpv2.ManagedResourceSpec `json:",inline"`
	ForProvider              AccessGroupParameters `json:"forProvider"`
}

// An AccessGroupStatus represents the observed state of an AccessGroup.
type AccessGroupStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	AtProvider                 AccessGroupObservation `json:"atProvider,omitempty"`
}

// +kubebuilder:object:root=true

// An AccessGroup is a Cloudflare Access group: a named set of rules (the
// same rules as an AccessPolicy's) that policies name with a group rule
// (groupRef), so one list of people serves many policies. Its
// external-name is the group ID.
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="SYNCED",type="string",JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="EXTERNAL-NAME",type="string",JSONPath=".metadata.annotations.crossplane\\.io/external-name"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,categories={crossplane,managed,cloudflare}
type AccessGroup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   AccessGroupSpec   `json:"spec"`
	Status AccessGroupStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// AccessGroupList contains a list of AccessGroup.
type AccessGroupList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AccessGroup `json:"items"`
}
