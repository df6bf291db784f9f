package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
)

// AccessApplicationPolicy is one reusable policy an application uses.
// +kubebuilder:validation:XValidation:rule="has(self.policyId) || has(self.policyIdRef) || has(self.policyIdSelector)",message="set policyId, policyIdRef or policyIdSelector"
type AccessApplicationPolicy struct {
	// PolicyID is the ID of a reusable Access policy.
	// +optional
	// +crossplane:generate:reference:type=AccessPolicy
	PolicyID *string `json:"policyId,omitempty"`

	// PolicyIDRef references an AccessPolicy to set policyId: one of this
	// namespace, or of another namespace that shares it with this one (its
	// spec.allowedNamespaces).
	// +optional
	PolicyIDRef *xpv2.NamespacedReference `json:"policyIdRef,omitempty"`

	// PolicyIDSelector selects an AccessPolicy in this namespace to set
	// policyId.
	// +optional
	PolicyIDSelector *xpv2.NamespacedSelector `json:"policyIdSelector,omitempty"`

	// Precedence orders the application's policies: lower first. Unset
	// means the policy's place in the list (1, 2, ...).
	// +optional
	// +kubebuilder:validation:Minimum=1
	Precedence *int64 `json:"precedence,omitempty"`
}

// AccessApplicationParameters are the desired state of a self-hosted Access
// application.
// +kubebuilder:validation:XValidation:rule="!has(self.destinations) || self.destinations.all(d, d.split('/')[0] == self.domain.split('/')[0] || d.split('/')[0].endsWith('.' + self.domain.split('/')[0]))",message="destinations must be the domain's hostname or below it"
type AccessApplicationParameters struct {
	// Name of the application, as the App Launcher shows it. Names are not
	// unique in Cloudflare: an application of this name that this provider
	// did not create is never adopted; import one by setting its ID as
	// external-name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=350
	Name string `json:"name"`

	// Domain is the hostname, optionally with a path, the application
	// protects, e.g. "grafana.example.com" or "example.com/admin". A
	// leading "*." protects the names one level below ("*.example.com":
	// a.example.com, not a.b.example.com nor example.com), as Cloudflare
	// Access matches a wildcard.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=500
	// +kubebuilder:validation:Pattern=`^([*][.])?([A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?[.])+[A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?(/[^\s]*)?$`
	Domain string `json:"domain"`

	// Destinations are more hostnames (with optional paths, an optional
	// leading "*.") the application protects besides its domain.
	// +optional
	// +kubebuilder:validation:MaxItems=50
	// +kubebuilder:validation:items:MaxLength=500
	// +kubebuilder:validation:items:Pattern=`^([*][.])?([A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?[.])+[A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?(/[^\s]*)?$`
	Destinations []string `json:"destinations,omitempty"`

	// SessionDuration of a login, e.g. "24h" (Cloudflare's default).
	// +optional
	// +kubebuilder:validation:Pattern=`^([0-9]+(h|m|s|ms|us|µs|ns))+$`
	SessionDuration *string `json:"sessionDuration,omitempty"`

	// AllowedIdentityProviders are the IDs of the identity providers users
	// may log in with; empty allows every one the account has.
	// +optional
	// +kubebuilder:validation:MaxItems=50
	AllowedIdentityProviders []string `json:"allowedIdentityProviders,omitempty"`

	// AutoRedirectToIdentity skips the identity provider selection page
	// when exactly one is allowed.
	// +optional
	AutoRedirectToIdentity *bool `json:"autoRedirectToIdentity,omitempty"`

	// AppLauncherVisible shows the application in the App Launcher.
	// +optional
	AppLauncherVisible *bool `json:"appLauncherVisible,omitempty"`

	// Policies the application uses, in order. An application without
	// policies lets no one in.
	// +optional
	// +kubebuilder:validation:MaxItems=50
	Policies []AccessApplicationPolicy `json:"policies,omitempty"`
}

// AccessApplicationObservation is the observed state of an Access
// application.
type AccessApplicationObservation struct {
	// ID of the application (also its external-name).
	ID string `json:"id,omitempty"`
	// AUD is the application's audience tag: cloudflared checks that the
	// Access token of each request carries it.
	AUD string `json:"aud,omitempty"`
	// TeamDomain is the account's Access domain,
	// <team>.cloudflareaccess.com, where cloudflared fetches the keys that
	// sign Access tokens.
	TeamDomain string `json:"teamDomain,omitempty"`
	// Domain as Cloudflare stores it.
	Domain string `json:"domain,omitempty"`
	// PolicyIDs are the IDs of the policies the application uses, by
	// precedence.
	PolicyIDs []string `json:"policyIds,omitempty"`
	// CreatedAt is when it was created.
	CreatedAt *metav1.Time `json:"createdAt,omitempty"`
}

// An AccessApplicationSpec defines the desired state of an
// AccessApplication.
// +kubebuilder:validation:XValidation:rule="!has(self.providerConfigRef) || self.providerConfigRef.kind in ['ProviderConfig', 'ClusterProviderConfig']",message="providerConfigRef.kind is ProviderConfig or ClusterProviderConfig"
type AccessApplicationSpec struct {
	xpv2.ManagedResourceSpec `json:",inline"`
	ForProvider              AccessApplicationParameters `json:"forProvider"`
}

// An AccessApplicationStatus represents the observed state of an
// AccessApplication.
type AccessApplicationStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	AtProvider                 AccessApplicationObservation `json:"atProvider,omitempty"`
}

// +kubebuilder:object:root=true

// An AccessApplication is a self-hosted Cloudflare Access application: the
// hostnames (and paths) Access guards, and the policies that say who gets
// through. Its status carries the audience tag and the team domain that
// cloudflared's origin check needs. Its external-name is the application ID.
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="SYNCED",type="string",JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="EXTERNAL-NAME",type="string",JSONPath=".metadata.annotations.crossplane\\.io/external-name"
// +kubebuilder:printcolumn:name="DOMAIN",type="string",JSONPath=".spec.forProvider.domain"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,categories={crossplane,managed,cloudflare}
type AccessApplication struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   AccessApplicationSpec   `json:"spec"`
	Status AccessApplicationStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// AccessApplicationList contains a list of AccessApplication.
type AccessApplicationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AccessApplication `json:"items"`
}
