package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
)

// Keys of an AccessServiceToken's connection Secret: the headers a client
// sends to present the token.
const (
	// KeyServiceTokenClientID is the token's client ID.
	KeyServiceTokenClientID = "CF-Access-Client-Id"
	// KeyServiceTokenClientSecret is the token's client secret. Cloudflare
	// shows it only when the token is made and when it is rotated.
	KeyServiceTokenClientSecret = "CF-Access-Client-Secret"
)

// AccessServiceTokenRotation asks for a new client secret.
type AccessServiceTokenRotation struct {
	// RequestedAt asks for a client secret issued at or after this time:
	// a time after the last rotation rotates the secret, once; a time at
	// or before it is already served. A time more than 5 minutes ahead of
	// the provider's clock is refused, not served: at admission by the
	// provider's webhook, else by the condition. A time before
	// 2020-01-01T00:00:00Z (such as 0001-01-01T00:00:00Z, which reads as
	// unset) is refused by the API server. An unchanged value is always
	// admitted. An RFC 3339 time, e.g. 2026-12-02T10:00:00Z: the current
	// time is the value to set.
	// +kubebuilder:validation:XValidation:rule="self >= timestamp('2020-01-01T00:00:00Z')",message="requestedAt must be 2020-01-01T00:00:00Z or later: an earlier time (0001-01-01T00:00:00Z is an unset time) asks for no rotation that can be meant. Set it to the current time to rotate now"
	RequestedAt metav1.Time `json:"requestedAt"`

	// PreviousSecretExpiresAfter is how long after a rotation the replaced
	// secret is still accepted, so clients can move to the new one, e.g.
	// "1h". Unset (or 0s): the replaced secret stops at once.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(h|m|s))+$`
	PreviousSecretExpiresAfter *metav1.Duration `json:"previousSecretExpiresAfter,omitempty"`
}

// AccessServiceTokenParameters are the desired state of an Access service
// token.
type AccessServiceTokenParameters struct {
	// Name of the token. Names are not unique in Cloudflare: a token of
	// this name that this provider did not create is never adopted; import
	// one by setting its ID as external-name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=350
	Name string `json:"name"`

	// Duration the token is valid for from its creation (or its last
	// refresh), in hours, minutes and seconds, e.g. "8760h" (a year,
	// Cloudflare's default), or "forever".
	// +optional
	// +kubebuilder:default="8760h"
	// +kubebuilder:validation:Pattern=`^(forever|([0-9]+(h|m|s))+)$`
	Duration string `json:"duration,omitempty"`

	// Rotation asks for a new client secret, with an overlap during which
	// the replaced one is still accepted.
	// +optional
	Rotation *AccessServiceTokenRotation `json:"rotation,omitempty"`

	// Enabled turns the token off (false) without deleting it: it then
	// authenticates with neither its secret nor one a rotation replaced,
	// and is turned on again, secret unchanged, by setting true. Turned
	// off or on in Cloudflare, it is put back as set here, as any drift
	// (including a token Cloudflare's cleanup of inactive tokens turned
	// off, which a Warning event then reports).
	// +optional
	// +kubebuilder:default=true
	Enabled *bool `json:"enabled,omitempty"`

	// RefreshBefore extends the token's expiry by its duration (Cloudflare's
	// refresh; the secret is kept) once it expires in less than this, e.g.
	// "720h". Unset: the token is never refreshed and expires.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(h|m|s))+$`
	RefreshBefore *metav1.Duration `json:"refreshBefore,omitempty"`
}

// AccessServiceTokenRotationObservation is the last rotation of the
// client secret.
type AccessServiceTokenRotationObservation struct {
	// RequestedAt is the request (spec.forProvider.rotation) served.
	RequestedAt metav1.Time `json:"requestedAt"`
	// RotatedAt is when Cloudflare issued the new secret.
	RotatedAt metav1.Time `json:"rotatedAt"`
	// PreviousSecretExpiresAt is when the replaced secret stops being
	// accepted.
	// +optional
	PreviousSecretExpiresAt *metav1.Time `json:"previousSecretExpiresAt,omitempty"`
}

// AccessServiceTokenObservation is the observed state of an Access service
// token. It never holds the client secret.
type AccessServiceTokenObservation struct {
	// ID of the token (also its external-name).
	ID string `json:"id,omitempty"`
	// ClientID is the token's client ID (CF-Access-Client-Id).
	ClientID string `json:"clientId,omitempty"`
	// Duration as Cloudflare holds it.
	Duration string `json:"duration,omitempty"`
	// ExpiresAt is when the token expires; unset for one that never does.
	ExpiresAt *metav1.Time `json:"expiresAt,omitempty"`
	// CreatedAt is when it was created.
	CreatedAt *metav1.Time `json:"createdAt,omitempty"`
	// LastRefreshedAt is when the provider last extended the expiry.
	// +optional
	LastRefreshedAt *metav1.Time `json:"lastRefreshedAt,omitempty"`
	// Rotation is the last rotation of the client secret.
	// +optional
	Rotation *AccessServiceTokenRotationObservation `json:"rotation,omitempty"`
	// Enabled is whether the token may authenticate.
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
	// LastSeenAt is when the token last authenticated, as Cloudflare
	// reports it: what Cloudflare's cleanup of inactive tokens goes by.
	// +optional
	LastSeenAt *metav1.Time `json:"lastSeenAt,omitempty"`
	// Replaced is the last token this resource made in place of one
	// deleted in Cloudflare (spec.onDeletedInCloudflare: Recreate).
	// +optional
	Replaced *AccessServiceTokenReplacement `json:"replaced,omitempty"`
}

// AccessServiceTokenReplacement records a token made in place of one
// deleted in Cloudflare.
type AccessServiceTokenReplacement struct {
	// PreviousID is the ID of the token that was deleted in Cloudflare.
	PreviousID string `json:"previousId"`
	// At is when the provider made the new token.
	At metav1.Time `json:"at"`
}

// What an AccessServiceToken does when its token is deleted in
// Cloudflare (spec.onDeletedInCloudflare).
const (
	// OnDeletedInCloudflareWait reports the token gone and makes nothing.
	OnDeletedInCloudflareWait = "Wait"
	// OnDeletedInCloudflareRecreate makes a new token and publishes it.
	OnDeletedInCloudflareRecreate = "Recreate"
)

// An AccessServiceTokenSpec defines the desired state of an
// AccessServiceToken.
// +kubebuilder:validation:XValidation:rule="!has(self.providerConfigRef) || self.providerConfigRef.kind in ['ProviderConfig', 'ClusterProviderConfig']",message="providerConfigRef.kind is ProviderConfig or ClusterProviderConfig"
type AccessServiceTokenSpec struct {
	xpv2.ManagedResourceSpec `json:",inline"`
	ForProvider              AccessServiceTokenParameters `json:"forProvider"`

	// OnDeletedInCloudflare is what the provider does when the token it
	// made is deleted in Cloudflare: by hand, or by Cloudflare's cleanup
	// of inactive tokens, which spares only tokens a policy names
	// directly (a token named through an AccessGroup can go). Wait (the
	// default): Synced=False with reason DeletedInCloudflare and a Warning
	// event; the policies and groups naming it say so; nothing is made
	// until this is set to Recreate. Recreate: a new token is made, with a
	// new client ID and secret published to the connection Secret, and a
	// Warning event says so; rules that name it by serviceTokenRef follow
	// the new ID, rules naming the old ID do not. Never silent either way.
	// +optional
	// +kubebuilder:default=Wait
	// +kubebuilder:validation:Enum=Wait;Recreate
	OnDeletedInCloudflare string `json:"onDeletedInCloudflare,omitempty"`
}

// An AccessServiceTokenStatus represents the observed state of an
// AccessServiceToken.
type AccessServiceTokenStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	AtProvider                 AccessServiceTokenObservation `json:"atProvider,omitempty"`
}

// +kubebuilder:object:root=true

// An AccessServiceToken is a Cloudflare Access service token: a client ID
// and secret a machine presents (CF-Access-Client-Id and
// CF-Access-Client-Secret headers) where a policy's serviceToken rule lets
// it in. The client ID and secret are written to the connection Secret
// (spec.writeConnectionSecretToRef); Cloudflare shows the secret only when
// the token is made and when it is rotated. Its external-name is the token
// ID; an imported token's secret is unknown until it is rotated.
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="SYNCED",type="string",JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="EXTERNAL-NAME",type="string",JSONPath=".metadata.annotations.crossplane\\.io/external-name"
// +kubebuilder:printcolumn:name="ENABLED",type="boolean",JSONPath=".status.atProvider.enabled"
// +kubebuilder:printcolumn:name="EXPIRES",type="string",JSONPath=".status.atProvider.expiresAt"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,categories={crossplane,managed,cloudflare}
type AccessServiceToken struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   AccessServiceTokenSpec   `json:"spec"`
	Status AccessServiceTokenStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// AccessServiceTokenList contains a list of AccessServiceToken.
type AccessServiceTokenList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AccessServiceToken `json:"items"`
}
