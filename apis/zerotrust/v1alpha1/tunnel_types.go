package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
)

// TunnelParameters are the desired state of a Cloudflare Tunnel (cfd_tunnel).
type TunnelParameters struct {
	// Name of the tunnel in Cloudflare, unique among the account's live
	// tunnels. If a live tunnel of this name already exists, it is adopted.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	Name string `json:"name"`

	// ConfigSrc says where the tunnel's ingress configuration lives:
	// "cloudflare" (remotely, managed through the API) or "local" (a file
	// next to cloudflared). Cannot be changed after creation.
	// +optional
	// +kubebuilder:default=cloudflare
	// +kubebuilder:validation:Enum=cloudflare;local
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="configSrc is immutable"
	ConfigSrc *string `json:"configSrc,omitempty"`

	// Config is the tunnel's remote configuration. When set, this resource
	// owns the whole remote configuration document and keeps it equal to
	// this field; when unset, the document is left alone.
	// +optional
	Config *TunnelConfig `json:"config,omitempty"`

	// TokenRotation rotates the tunnel secret, and with it the run token
	// published to writeConnectionSecretToRef, once for each requestedAt
	// after the last rotation. Connectors already connected stay connected; new ones
	// must use the new token.
	// +optional
	TokenRotation *TokenRotation `json:"tokenRotation,omitempty"`
}

// TokenRotation asks for a new tunnel secret. Any change to a time from
// 2020 on and not in the future is admitted (a mistyped time can be
// corrected); the provider decides what it does, and the TokenRotation
// condition says so.
type TokenRotation struct {
	// RequestedAt asks for a run token issued at or after this time: a
	// time after the last rotation rotates the tunnel secret, once; a time
	// at or before it is already served. A time more than 5 minutes ahead
	// of the provider's clock is refused, not served: at admission by the
	// provider's webhook, else by the condition. An unchanged value is
	// always admitted. A time before 2020-01-01T00:00:00Z (such as
	// 0001-01-01T00:00:00Z, which reads as unset) is refused by the API
	// server. An RFC 3339 time, e.g. 2026-12-02T10:00:00Z: the current time
	// is the value to set.
	// +kubebuilder:validation:XValidation:rule="self >= timestamp('2020-01-01T00:00:00Z')",message="requestedAt must be 2020-01-01T00:00:00Z or later: an earlier time (0001-01-01T00:00:00Z is an unset time) asks for no rotation that can be meant. Set it to the current time to rotate now"
	RequestedAt metav1.Time `json:"requestedAt"`

	// RolledOutAt says every connector now runs the new token (a
	// CloudflareTunnel sets it once its Deployment has rolled out onto
	// it): the connectors that were connected when the rotation began are
	// then removed from Cloudflare. Unset, they are left alone.
	// +optional
	RolledOutAt *metav1.Time `json:"rolledOutAt,omitempty"`
}

// TunnelConfig is a tunnel's remote configuration document.
// +kubebuilder:validation:XValidation:rule="!has(self.ingress[size(self.ingress) - 1].hostname) && !has(self.ingress[size(self.ingress) - 1].path)",message="the last ingress rule must be a catch-all without hostname or path, e.g. {service: http_status:404}"
type TunnelConfig struct {
	// Ingress rules, matched in order; the last must be a catch-all.
	// A CloudflareTunnel puts one rule per public host and path of all its
	// Ingresses here; 5000 keeps the object well inside etcd's size limit.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=5000
	Ingress []IngressRule `json:"ingress"`

	// OriginRequest settings applied to every rule unless a rule overrides them.
	// +optional
	OriginRequest *OriginRequest `json:"originRequest,omitempty"`
}

// IngressRule routes matching requests to a service.
type IngressRule struct {
	// Hostname to match; "*.example.com" matches subdomains. Omit in the
	// catch-all rule.
	// +optional
	Hostname *string `json:"hostname,omitempty"`

	// Path is a regular expression the request path must match.
	// +optional
	Path *string `json:"path,omitempty"`

	// Service to proxy to, e.g. "http://web.default.svc.cluster.local:80",
	// "tcp://db:5432" or "http_status:404".
	// +kubebuilder:validation:MinLength=1
	Service string `json:"service"`

	// OriginRequest settings for this rule.
	// +optional
	OriginRequest *OriginRequest `json:"originRequest,omitempty"`
}

// OriginRequest configures how cloudflared talks to the origin. Field names
// are Cloudflare's.
type OriginRequest struct {
	// Timeout for establishing a new TCP connection to the origin, in seconds.
	// +optional
	ConnectTimeout *int64 `json:"connectTimeout,omitempty"`
	// Timeout for completing a TLS handshake with the origin, in seconds.
	// +optional
	TLSTimeout *int64 `json:"tlsTimeout,omitempty"`
	// TCP keep-alive interval, in seconds.
	// +optional
	TCPKeepAlive *int64 `json:"tcpKeepAlive,omitempty"`
	// Maximum idle keep-alive connections to the origin.
	// +optional
	KeepAliveConnections *int64 `json:"keepAliveConnections,omitempty"`
	// Idle keep-alive connection timeout, in seconds.
	// +optional
	KeepAliveTimeout *int64 `json:"keepAliveTimeout,omitempty"`
	// Disable Happy Eyeballs (IPv6 → IPv4 fallback).
	// +optional
	NoHappyEyeballs *bool `json:"noHappyEyeballs,omitempty"`
	// Disable TLS certificate verification of the origin.
	// +optional
	NoTLSVerify *bool `json:"noTLSVerify,omitempty"`
	// Host header sent to the origin.
	// +optional
	HTTPHostHeader *string `json:"httpHostHeader,omitempty"`
	// Hostname the origin's certificate is expected to have.
	// +optional
	OriginServerName *string `json:"originServerName,omitempty"`
	// Send the request's hostname as SNI and expect it on the origin's
	// certificate.
	// +optional
	MatchSNIToHost *bool `json:"matchSNItoHost,omitempty"`
	// Path to a CA bundle for verifying the origin's certificate.
	// +optional
	CAPool *string `json:"caPool,omitempty"`
	// Disable chunked transfer encoding.
	// +optional
	DisableChunkedEncoding *bool `json:"disableChunkedEncoding,omitempty"`
	// Connect to the origin with HTTP/2.
	// +optional
	HTTP2Origin *bool `json:"http2Origin,omitempty"`
	// cloudflared's built-in proxy type: "" or "socks".
	// +optional
	ProxyType *string `json:"proxyType,omitempty"`
	// Access makes cloudflared check each request's Cloudflare Access token
	// (the Cf-Access-Jwt-Assertion header).
	// +optional
	Access *OriginAccess `json:"access,omitempty"`
}

// OriginAccess is cloudflared's Access check of a rule. Field names are
// Cloudflare's.
type OriginAccess struct {
	// Deny requests without a valid Access token.
	// +optional
	Required *bool `json:"required,omitempty"`
	// Zero Trust team name.
	// +kubebuilder:validation:MinLength=1
	TeamName string `json:"teamName"`
	// Audience tags of the Access applications allowed.
	// +kubebuilder:validation:MinItems=1
	AudTag []string `json:"audTag"`
}

// TunnelObservation is the observed state of a tunnel.
type TunnelObservation struct {
	// ID of the tunnel (also its external-name).
	ID string `json:"id,omitempty"`
	// AccountTag is the account the tunnel belongs to.
	AccountTag string `json:"accountTag,omitempty"`
	// Status: inactive (never run), degraded, healthy or down.
	Status string `json:"status,omitempty"`
	// Connections is the number of active edge connections of the tunnel's
	// connectors (typically 4 per cloudflared replica).
	Connections int `json:"connections,omitempty"`
	// Connectors is the number of cloudflared instances connected (with
	// at least one edge connection).
	Connectors int `json:"connectors,omitempty"`
	// ConnectorDetails are the cloudflared instances Cloudflare lists for
	// the tunnel, as last read (see ConnectorsObservedAt).
	// +optional
	// +listType=atomic
	ConnectorDetails []ConnectorObservation `json:"connectorDetails,omitempty"`
	// ConnectorsObservedAt is when Cloudflare's list of connectors was
	// last read. It is read when the tunnel's status or its active or
	// inactive times change, after a configuration change, every poll
	// while the tunnel is degraded or a connector lags the configuration,
	// and otherwise every fifth poll.
	// +optional
	ConnectorsObservedAt *metav1.Time `json:"connectorsObservedAt,omitempty"`
	// ConnectorsOnLatestConfig is how many connected connectors run
	// configuration version RemoteConfigVersion, when this resource
	// manages the remote configuration.
	// +optional
	ConnectorsOnLatestConfig int `json:"connectorsOnLatestConfig,omitempty"`
	// CreatedAt is when the tunnel was created.
	CreatedAt *metav1.Time `json:"createdAt,omitempty"`
	// DeletedAt is when the tunnel was deleted.
	DeletedAt *metav1.Time `json:"deletedAt,omitempty"`
	// ConnsActiveAt is when the tunnel last became active.
	ConnsActiveAt *metav1.Time `json:"connsActiveAt,omitempty"`
	// ConnsInactiveAt is when the tunnel last became inactive.
	ConnsInactiveAt *metav1.Time `json:"connsInactiveAt,omitempty"`
	// RemoteConfigVersion is the version of the remote configuration
	// document, when this resource manages it.
	RemoteConfigVersion int `json:"remoteConfigVersion,omitempty"`
	// TokenRotation is the state of the last token rotation.
	// +optional
	TokenRotation *TokenRotationObservation `json:"tokenRotation,omitempty"`
}

// TokenRotationObservation is the state of a token rotation.
type TokenRotationObservation struct {
	// RequestedAt is the request (spec.forProvider.tokenRotation) served.
	RequestedAt metav1.Time `json:"requestedAt"`
	// RotatedAt is when Cloudflare's new token was read to be published.
	// Unset while the rotation is under way: it is retried until then.
	// +optional
	RotatedAt *metav1.Time `json:"rotatedAt,omitempty"`
	// ReplacedTokenChecksum is the SHA-256 (hex) of the run token the
	// rotation replaces (not the token): by it an interrupted rotation
	// tells whether Cloudflare took the new secret, and whether the
	// connection Secret still holds the old token.
	// +optional
	ReplacedTokenChecksum string `json:"replacedTokenChecksum,omitempty"`
	// StaleConnectors are the connectors connected when the rotation began
	// (with the replaced token), removed from Cloudflare once
	// spec.forProvider.tokenRotation.rolledOutAt says the rollout is done.
	// +optional
	// +listType=atomic
	StaleConnectors []string `json:"staleConnectors,omitempty"`
	// StaleConnectorsRemovedAt is when they were removed.
	// +optional
	StaleConnectorsRemovedAt *metav1.Time `json:"staleConnectorsRemovedAt,omitempty"`
}

// ConnectorObservation is one cloudflared instance connected to a tunnel.
type ConnectorObservation struct {
	// ID of the connector (Cloudflare's client_id).
	ID string `json:"id"`
	// Version of cloudflared.
	// +optional
	Version string `json:"version,omitempty"`
	// ConfigVersion is the remote configuration version it last applied.
	// +optional
	ConfigVersion int `json:"configVersion,omitempty"`
	// RunAt is when it started.
	// +optional
	RunAt *metav1.Time `json:"runAt,omitempty"`
	// Connections it holds to Cloudflare's edge (4 when healthy).
	Connections int `json:"connections"`
}

// A TunnelSpec defines the desired state of a Tunnel.
// +kubebuilder:validation:XValidation:rule="!has(self.providerConfigRef) || self.providerConfigRef.kind in ['ProviderConfig', 'ClusterProviderConfig']",message="providerConfigRef.kind is ProviderConfig or ClusterProviderConfig"
type TunnelSpec struct {
	xpv2.ManagedResourceSpec `json:",inline"`
	ForProvider              TunnelParameters `json:"forProvider"`

	// AdoptByName lets this resource take over an existing tunnel of the
	// desired name that it cannot prove it created (tunnels carry no
	// ownership marker): after a cluster was rebuilt from the same
	// manifests, to recover its own tunnel. Off by default, because a name
	// alone does not say who made an object, and adopting one made
	// elsewhere publishes its run token, rewrites its configuration and deletes it with this resource. To take over one particular tunnel, set its ID as the
	// crossplane.io/external-name annotation instead.
	// +optional
	AdoptByName bool `json:"adoptByName,omitempty"`
}

// A TunnelStatus represents the observed state of a Tunnel.
type TunnelStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	AtProvider                 TunnelObservation `json:"atProvider,omitempty"`
}

// +kubebuilder:object:root=true

// A Tunnel is a Cloudflare Tunnel (cfd_tunnel). Its external-name is the
// tunnel ID. writeConnectionSecretToRef receives the run token (key
// "token"), "tunnelID" and "accountID".
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="SYNCED",type="string",JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="EXTERNAL-NAME",type="string",JSONPath=".metadata.annotations.crossplane\\.io/external-name"
// +kubebuilder:printcolumn:name="STATUS",type="string",JSONPath=".status.atProvider.status"
// +kubebuilder:printcolumn:name="CONNECTORS",type="integer",JSONPath=".status.atProvider.connectors"
// +kubebuilder:printcolumn:name="CONNECTIONS",type="integer",JSONPath=".status.atProvider.connections"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,categories={crossplane,managed,cloudflare}
type Tunnel struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   TunnelSpec   `json:"spec"`
	Status TunnelStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// TunnelList contains a list of Tunnel.
type TunnelList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Tunnel `json:"items"`
}
