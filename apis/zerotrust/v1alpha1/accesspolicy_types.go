package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
)

// AccessRule is one condition of an Access policy: exactly one field is set.
// A policy lets a request in when any include rule matches, every require
// rule matches and no exclude rule matches.
// A group or a service token may be named by ID, by reference or by
// selector (the reference resolved sets the ID beside it): each counts as
// one kind.
// +kubebuilder:validation:XValidation:rule="[has(self.email), has(self.emailDomain), has(self.everyone), has(self.ipRange), has(self.country), has(self.groupId) || has(self.groupRef) || has(self.groupSelector), has(self.identityProviderGroup), has(self.serviceTokenId) || has(self.serviceTokenRef) || has(self.serviceTokenSelector), has(self.anyValidServiceToken)].filter(x, x).size() == 1",message="set exactly one of email, emailDomain, everyone, ipRange, country, groupId (or groupRef, groupSelector), identityProviderGroup, serviceTokenId (or serviceTokenRef, serviceTokenSelector), anyValidServiceToken"
type AccessRule struct {
	// Email matches one email address.
	// +optional
	// +kubebuilder:validation:MaxLength=320
	// +kubebuilder:validation:Pattern=`^[^@\s]+@[^@\s]+$`
	Email *string `json:"email,omitempty"`

	// EmailDomain matches every address of a domain, e.g. "example.com".
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^([A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?[.])+[A-Za-z]{2,63}$`
	EmailDomain *string `json:"emailDomain,omitempty"`

	// Everyone matches every identity that logs in (true is the only value).
	// +optional
	// +kubebuilder:validation:XValidation:rule="self",message="everyone can only be true"
	Everyone *bool `json:"everyone,omitempty"`

	// IPRange matches requests from an address range in CIDR notation.
	// +optional
	// +kubebuilder:validation:MaxLength=43
	// +kubebuilder:validation:XValidation:rule="isCIDR(self)",message="ipRange must be a CIDR, e.g. 192.0.2.0/24"
	IPRange *string `json:"ipRange,omitempty"`

	// Country matches requests from a country: its ISO 3166-1 alpha-2 code.
	// +optional
	// +kubebuilder:validation:Pattern=`^[A-Z]{2}$`
	Country *string `json:"country,omitempty"`

	// GroupID matches the members of an Access group, by its ID.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +crossplane:generate:reference:type=AccessGroup
	// +crossplane:generate:reference:refFieldName=GroupRef
	// +crossplane:generate:reference:selectorFieldName=GroupSelector
	GroupID *string `json:"groupId,omitempty"`

	// GroupRef references an AccessGroup in this namespace to set groupId.
	// +optional
	GroupRef *xpv2.NamespacedReference `json:"groupRef,omitempty"`

	// GroupSelector selects an AccessGroup in this namespace to set
	// groupId.
	// +optional
	GroupSelector *xpv2.NamespacedSelector `json:"groupSelector,omitempty"`

	// IdentityProviderGroup matches the members of a group of an identity
	// provider (an Okta or Azure AD group, say).
	// +optional
	IdentityProviderGroup *AccessIdentityProviderGroup `json:"identityProviderGroup,omitempty"`

	// ServiceTokenID matches requests that present one service token, by
	// its ID.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +crossplane:generate:reference:type=AccessServiceToken
	// +crossplane:generate:reference:refFieldName=ServiceTokenRef
	// +crossplane:generate:reference:selectorFieldName=ServiceTokenSelector
	ServiceTokenID *string `json:"serviceTokenId,omitempty"`

	// ServiceTokenRef references an AccessServiceToken in this namespace to
	// set serviceTokenId.
	// +optional
	ServiceTokenRef *xpv2.NamespacedReference `json:"serviceTokenRef,omitempty"`

	// ServiceTokenSelector selects an AccessServiceToken in this namespace
	// to set serviceTokenId.
	// +optional
	ServiceTokenSelector *xpv2.NamespacedSelector `json:"serviceTokenSelector,omitempty"`

	// AnyValidServiceToken matches requests that present any of the
	// account's service tokens (true is the only value).
	// +optional
	// +kubebuilder:validation:XValidation:rule="self",message="anyValidServiceToken can only be true"
	AnyValidServiceToken *bool `json:"anyValidServiceToken,omitempty"`
}

// AccessIdentityProviderGroup is a group of an identity provider.
type AccessIdentityProviderGroup struct {
	// Type of the identity provider: okta (the group's name), azureAD (the
	// group's object ID) or gsuite (the group's email address).
	// +kubebuilder:validation:Enum=okta;azureAD;gsuite
	Type string `json:"type"`
	// IdentityProviderID is the ID of the identity provider in Cloudflare.
	// +kubebuilder:validation:MinLength=1
	IdentityProviderID string `json:"identityProviderId"`
	// Group: its name, object ID or email address, as Type says.
	// +kubebuilder:validation:MinLength=1
	Group string `json:"group"`
}

// AccessPolicyParameters are the desired state of a reusable Access policy.
type AccessPolicyParameters struct {
	// Name of the policy. Names are not unique in Cloudflare: a policy of
	// this name that this provider did not create is never adopted; import
	// one by setting its ID as external-name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=350
	Name string `json:"name"`

	// Decision when the rules match: allow (after login), deny, bypass (no
	// login, no check), or non_identity (service tokens and other
	// non-identity rules only, no login).
	// +kubebuilder:validation:Enum=allow;deny;bypass;non_identity
	Decision string `json:"decision"`

	// Include: a request must match at least one of these.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	Include []AccessRule `json:"include"`

	// Exclude: a request that matches any of these is not let in by this
	// policy.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	Exclude []AccessRule `json:"exclude,omitempty"`

	// Require: a request must match every one of these.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	Require []AccessRule `json:"require,omitempty"`

	// SessionDuration of a login this policy lets in, e.g. "24h" or "30m";
	// unset uses the application's.
	// +optional
	// +kubebuilder:validation:Pattern=`^([0-9]+(h|m|s|ms|us|µs|ns))+$`
	SessionDuration *string `json:"sessionDuration,omitempty"`
}

// AccessPolicyObservation is the observed state of a reusable Access policy.
type AccessPolicyObservation struct {
	// ID of the policy (also its external-name).
	ID string `json:"id,omitempty"`
	// CreatedAt is when it was created.
	CreatedAt *metav1.Time `json:"createdAt,omitempty"`
	// StrictServiceTokenAuth is the organization's strict service token
	// authentication, read (at most every 10 minutes) for an Allow policy
	// whose rules name service tokens: when true, those rules let no
	// service token in (see the ServiceTokens condition).
	// +optional
	StrictServiceTokenAuth *bool `json:"strictServiceTokenAuth,omitempty"`
}

// An AccessPolicySpec defines the desired state of an AccessPolicy.
// +kubebuilder:validation:XValidation:rule="!has(self.providerConfigRef) || self.providerConfigRef.kind in ['ProviderConfig', 'ClusterProviderConfig']",message="providerConfigRef.kind is ProviderConfig or ClusterProviderConfig"
type AccessPolicySpec struct {
	xpv2.ManagedResourceSpec `json:",inline"`
	ForProvider              AccessPolicyParameters `json:"forProvider"`

	// AllowedNamespaces are the namespaces besides this one whose
	// AccessApplications (and the PublicHostnames, Ingresses, Services and
	// GatewayBindings that make them) may use this policy, as a
	// CloudflareTunnel is shared: a platform team keeps an org-wide policy
	// in its namespace and names who may use it. Unset: this namespace
	// only. Taking a namespace out does not unprotect what already uses the
	// policy there: those applications report NotAllowed and keep their
	// last policies until they name another.
	// +optional
	AllowedNamespaces *AllowedNamespaces `json:"allowedNamespaces,omitempty"`
}

// An AccessPolicyStatus represents the observed state of an AccessPolicy.
type AccessPolicyStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	AtProvider                 AccessPolicyObservation `json:"atProvider,omitempty"`
}

// +kubebuilder:object:root=true

// An AccessPolicy is a reusable Cloudflare Access policy: who may reach the
// applications that use it. Its external-name is the policy ID. Applications
// name it by reference (AccessApplication spec.forProvider.policies), so
// one policy serves many hostnames.
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="SYNCED",type="string",JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="EXTERNAL-NAME",type="string",JSONPath=".metadata.annotations.crossplane\\.io/external-name"
// +kubebuilder:printcolumn:name="DECISION",type="string",JSONPath=".spec.forProvider.decision"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,categories={crossplane,managed,cloudflare}
type AccessPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   AccessPolicySpec   `json:"spec"`
	Status AccessPolicyStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// AccessPolicyList contains a list of AccessPolicy.
type AccessPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AccessPolicy `json:"items"`
}
