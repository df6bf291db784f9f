package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
)

// Credential sources a ProviderConfig supports.
const (
	// CredentialsSourceSecret reads the API token from a Kubernetes Secret.
	CredentialsSourceSecret xpv2.CredentialsSource = "Secret"
	// CredentialsSourceEnvironment reads the API token (and, when spec.accountID
	// is empty, the account ID) from the provider's own environment: the
	// CLOUDFLARE_API_TOKEN and CLOUDFLARE_ACCOUNT_ID variables.
	CredentialsSourceEnvironment xpv2.CredentialsSource = "Environment"
)

// Well-known keys and variable names for Cloudflare credentials.
const (
	DefaultTokenKey     = "CLOUDFLARE_API_TOKEN"
	DefaultAccountIDKey = "CLOUDFLARE_ACCOUNT_ID"
	// EndpointKey in a credentials Secret overrides the API endpoint when
	// spec.endpoint is unset (the variable name cloudflare-go uses).
	EndpointKey = "CLOUDFLARE_BASE_URL"
)

// DefaultEndpoint is Cloudflare's public API.
const DefaultEndpoint = "https://api.cloudflare.com/client/v4/"

// ProviderConfigSpec says which Cloudflare account to manage and how to
// authenticate to it.
type ProviderConfigSpec struct {
	// AccountID is the 32-character Cloudflare account ID every managed
	// resource using this config lives in. When empty it is read from the
	// credentials: the Secret's CLOUDFLARE_ACCOUNT_ID key (source Secret) or
	// the provider's CLOUDFLARE_ACCOUNT_ID environment variable (source
	// Environment).
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9a-f]{32}$`
	AccountID string `json:"accountID,omitempty"`

	// Credentials used to authenticate to the Cloudflare API.
	Credentials ProviderCredentials `json:"credentials"`

	// Endpoint overrides the Cloudflare API base URL, for example to go
	// through a proxy or to use the project's Cloudflare simulator. When
	// unset, a CLOUDFLARE_BASE_URL key in the credentials Secret is used;
	// otherwise https://api.cloudflare.com/client/v4/.
	// +optional
	// +kubebuilder:validation:Pattern=`^https?://[^\s]+$`
	Endpoint *string `json:"endpoint,omitempty"`
}

// ProviderCredentials says where the Cloudflare API token comes from.
// +kubebuilder:validation:XValidation:rule="self.source != 'Secret' || has(self.secretRef)",message="secretRef is required when source is Secret"
type ProviderCredentials struct {
	// Source of the API token: a Kubernetes Secret, or the provider's
	// environment (CLOUDFLARE_API_TOKEN).
	// +kubebuilder:validation:Enum=Secret;Environment
	// +kubebuilder:default=Secret
	Source xpv2.CredentialsSource `json:"source"`

	// SecretRef names the Secret holding the API token. Required when source
	// is Secret.
	// +optional
	SecretRef *SecretKeySelector `json:"secretRef,omitempty"`
}

// SecretKeySelector selects a key of a Secret.
type SecretKeySelector struct {
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`

	// Namespace of the Secret. Required for a ClusterProviderConfig; a
	// namespaced ProviderConfig may only read Secrets in its own namespace
	// and defaults to it.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// Key holding the API token.
	// +optional
	// +kubebuilder:default=CLOUDFLARE_API_TOKEN
	Key string `json:"key,omitempty"`
}

// A ProviderConfigStatus reflects the observed state of a ProviderConfig.
type ProviderConfigStatus struct {
	xpv2.ProviderConfigStatus `json:",inline"`
}

// +kubebuilder:object:root=true

// A ProviderConfig configures how managed resources in its namespace reach
// Cloudflare.
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="ACCOUNT",type="string",JSONPath=".spec.accountID"
// +kubebuilder:printcolumn:name="USERS",type="integer",JSONPath=".status.users"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:printcolumn:name="SECRET-NAME",type="string",JSONPath=".spec.credentials.secretRef.name",priority=1
// +kubebuilder:resource:scope=Namespaced,categories={crossplane,provider,cloudflare}
type ProviderConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ProviderConfigSpec   `json:"spec"`
	Status ProviderConfigStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ProviderConfigList contains a list of ProviderConfig.
type ProviderConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ProviderConfig `json:"items"`
}

// +kubebuilder:object:root=true

// A ClusterProviderConfig configures how managed resources in any namespace
// reach Cloudflare. Managed resources use the ClusterProviderConfig named
// "default" unless they say otherwise.
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="ACCOUNT",type="string",JSONPath=".spec.accountID"
// +kubebuilder:printcolumn:name="USERS",type="integer",JSONPath=".status.users"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:printcolumn:name="SECRET-NAME",type="string",JSONPath=".spec.credentials.secretRef.name",priority=1
// +kubebuilder:resource:scope=Cluster,categories={crossplane,provider,cloudflare}
// +kubebuilder:validation:XValidation:rule="self.spec.credentials.source != 'Secret' || (has(self.spec.credentials.secretRef) && has(self.spec.credentials.secretRef.__namespace__) && size(self.spec.credentials.secretRef.__namespace__) > 0)",message="spec.credentials.secretRef.namespace is required for a ClusterProviderConfig"
type ClusterProviderConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ProviderConfigSpec   `json:"spec"`
	Status ProviderConfigStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ClusterProviderConfigList contains a list of ClusterProviderConfig.
type ClusterProviderConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterProviderConfig `json:"items"`
}

// +kubebuilder:object:root=true

// A ProviderConfigUsage records that a managed resource uses a
// ProviderConfig or ClusterProviderConfig. Both config kinds count these, so a
// config cannot be deleted while anything still uses it.
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:printcolumn:name="CONFIG-KIND",type="string",JSONPath=".providerConfigRef.kind"
// +kubebuilder:printcolumn:name="CONFIG-NAME",type="string",JSONPath=".providerConfigRef.name"
// +kubebuilder:printcolumn:name="RESOURCE-KIND",type="string",JSONPath=".resourceRef.kind"
// +kubebuilder:printcolumn:name="RESOURCE-NAME",type="string",JSONPath=".resourceRef.name"
// +kubebuilder:resource:scope=Namespaced,categories={crossplane,provider,cloudflare}
type ProviderConfigUsage struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	xpv2.TypedProviderConfigUsage `json:",inline"`
}

// +kubebuilder:object:root=true

// ProviderConfigUsageList contains a list of ProviderConfigUsage.
type ProviderConfigUsageList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ProviderConfigUsage `json:"items"`
}
