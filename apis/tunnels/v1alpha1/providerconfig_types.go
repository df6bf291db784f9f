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

	// OwnerID names this installation in the ownership markers the
	// provider writes into the Cloudflare objects it creates (DNS record and
	// hostname route comments), with the managed resource's kind,
	// namespace and name. A marker is how the provider proves an object is
	// its own: with the same owner ID, a cluster rebuilt from the same
	// manifests finds its objects again; with another, it never takes
	// them. Default: derived from the kube-system namespace's UID, unique
	// to this cluster (so a rebuilt cluster differs). Set it to recover
	// after a rebuild, and never share it between clusters that are
	// meant to stay apart. Changing it rewrites the markers of objects
	// the provider already manages.
	// +optional
	// +kubebuilder:validation:MaxLength=20
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`
	OwnerID string `json:"ownerID,omitempty"`

	// Allow limits what the managed resources using this config may
	// publish or route, and, for a ClusterProviderConfig, which
	// namespaces may use it. A resource outside the limits is refused
	// before any write to Cloudflare; what it already made is left alone.
	// +optional
	Allow *Allowances `json:"allow,omitempty"`
}

// Allowances are a provider config's tenant guardrails. An empty list
// allows everything of its kind.
type Allowances struct {
	// Zones lists the DNS zones (by name, e.g. example.com) in which
	// DNSRecords may be managed.
	// +optional
	// +listType=set
	// +kubebuilder:validation:items:MaxLength=253
	Zones []string `json:"zones,omitempty"`

	// HostnameSuffixes lists the domains under which hostnames may be
	// published or routed: DNSRecord names, HostnameRoute hostnames and
	// the hostnames of a Tunnel's configuration. "apps.example.com" allows
	// itself and every name below it (x.apps.example.com,
	// *.apps.example.com), never xapps.example.com.
	// +optional
	// +listType=set
	// +kubebuilder:validation:items:MaxLength=253
	HostnameSuffixes []string `json:"hostnameSuffixes,omitempty"`

	// Namespaces lists the namespaces whose managed resources may use this
	// config. Only a ClusterProviderConfig takes it: a ProviderConfig
	// serves its own namespace alone.
	// +optional
	// +listType=set
	// +kubebuilder:validation:items:MaxLength=63
	Namespaces []string `json:"namespaces,omitempty"`

	// Origins lists what a published hostname may send its requests to
	// beyond the default, which is: Services of the publishing resource's
	// own namespace (by Service reference or by their cluster DNS name,
	// <name>.<namespace>.svc[.cluster.local]), http_status:<code> and
	// hello_world. An entry is a hostname, which allows itself and every
	// name below it ("internal.example.com"), or a CIDR, which allows IP
	// addresses inside it ("10.20.0.0/16"). Link-local and cloud metadata
	// addresses (169.254.0.0/16, fe80::/10, metadata.google.internal, ...)
	// are never allowed.
	// +optional
	// +listType=set
	// +kubebuilder:validation:items:MaxLength=253
	Origins []string `json:"origins,omitempty"`

	// Networks lists the CIDRs inside which NetworkRoutes may route
	// ("10.0.0.0/8" allows 10.1.2.3/32 and 10.1.0.0/16), each route judged
	// by them alone. Empty bounds what a namespace routes: one route at
	// most a /8 of IPv4 or a /16 of IPv6, the namespace's routes through
	// this config together at most two of those per family (the oldest
	// keep theirs), and a NAT64 (64:ff9b::/96, 64:ff9b:1::/48) or
	// IPv4-mapped route counted as the IPv4 addresses it reaches; only an
	// entry allows more.
	// +optional
	// +listType=set
	// +kubebuilder:validation:items:MaxLength=43
	Networks []string `json:"networks,omitempty"`

	// DefaultVirtualNetwork says whether a VirtualNetwork using this config
	// may make itself the account's default virtual network, which moves
	// every route and WARP client that names none. Default: true for a
	// ClusterProviderConfig, false for a ProviderConfig (a namespace's
	// team should not move the whole account's default).
	// +optional
	DefaultVirtualNetwork *bool `json:"defaultVirtualNetwork,omitempty"`
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
// +kubebuilder:validation:XValidation:rule="!has(self.spec.allow) || !has(self.spec.allow.namespaces) || size(self.spec.allow.namespaces) == 0",message="spec.allow.namespaces is for a ClusterProviderConfig: a ProviderConfig serves its own namespace alone"
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
