package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
)

// DefaultCloudflaredImage is the pinned cloudflared a CloudflareTunnel runs
// unless spec.image says otherwise (private hostname routes need
// MinimumCloudflaredVersion or later).
const DefaultCloudflaredImage = "cloudflare/cloudflared:2026.10.0"

// CloudflareTunnelSpec is a running tunnel: the Cloudflare tunnel and the
// cloudflared Deployment that serves it.
// +kubebuilder:validation:XValidation:rule="!(has(self.providerConfigRef) && has(self.credentialsSecretRef))",message="set providerConfigRef or credentialsSecretRef, not both"
// +kubebuilder:validation:XValidation:rule="!has(self.providerConfigRef) || self.providerConfigRef.kind in ['ProviderConfig', 'ClusterProviderConfig']",message="providerConfigRef.kind is ProviderConfig or ClusterProviderConfig"
// +kubebuilder:validation:XValidation:rule="!has(self.allowedNamespaces) || self.allowedNamespaces.from == 'Same' || (!has(self.credentialsSecretRef) && (!has(self.providerConfigRef) || self.providerConfigRef.kind == 'ClusterProviderConfig'))",message="a tunnel shared with other namespaces takes its credentials from a ClusterProviderConfig (the default, or providerConfigRef of kind ClusterProviderConfig): a namespace's ProviderConfig or credentialsSecretRef serves that namespace only"
type CloudflareTunnelSpec struct {
	// TunnelName is the tunnel's name in Cloudflare. Defaults to
	// metadata.name. Immutable: it may be set to its default, or unset
	// when equal to it, but not changed.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	TunnelName *string `json:"tunnelName,omitempty"`

	// AdoptByName takes over an existing Cloudflare tunnel named
	// tunnelName that this provider cannot prove it created (tunnels carry
	// no ownership marker), and, for the Ingresses published through this
	// tunnel, existing VPC services of their vpc-service names. It is for
	// recovering after the cluster was rebuilt from the same manifests. Off
	// by default: a name alone does not say who made a tunnel, and taking
	// over one made elsewhere publishes its run token into this namespace,
	// rewrites its configuration and deletes it with this CloudflareTunnel.
	// +optional
	AdoptByName bool `json:"adoptByName,omitempty"`

	// AllowedNamespaces says whose sources (Ingresses, Services,
	// PublicHostnames) may use this tunnel: its own namespace's (the
	// default), every namespace's, or those a label selector picks. They
	// name it "<namespace>/<name>"; what they make stays in their own
	// namespace. A tunnel used from other namespaces must take its
	// credentials from a ClusterProviderConfig, which their resources can
	// use too.
	// +optional
	AllowedNamespaces *ztv1alpha1.AllowedNamespaces `json:"allowedNamespaces,omitempty"`

	// Replicas of cloudflared. Each replica opens four connections to
	// Cloudflare's edge; two or more keep the tunnel up through node
	// maintenance (a PodDisruptionBudget is created for them).
	// +optional
	// +kubebuilder:default=2
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=32
	Replicas *int32 `json:"replicas,omitempty"`

	// Image of cloudflared. Defaults to a pinned official release. An
	// official image tagged older than 2025.7.0 (the first that resolves
	// private hostname routes) is refused.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:Pattern=`^[^\s]+$`
	Image *string `json:"image,omitempty"`

	// NodeSelector for the cloudflared pods.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// Tolerations for the cloudflared pods.
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// Affinity for the cloudflared pods. Without it, pods are spread across
	// nodes (preferred anti-affinity on the node hostname).
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`

	// Resources of the cloudflared container.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`

	// Connector tunes the cloudflared Deployment further: protocol, extra
	// flags, scheduling, pod metadata and a validated pod template patch.
	// +optional
	Connector *ConnectorSpec `json:"connector,omitempty"`

	// DeleteTunnelOnRemove deletes the Cloudflare tunnel when this object is
	// deleted; false leaves (orphans) it in Cloudflare.
	// +optional
	// +kubebuilder:default=true
	DeleteTunnelOnRemove *bool `json:"deleteTunnelOnRemove,omitempty"`

	// ProviderConfigRef names the config whose credentials the tunnel and
	// every resource created for it (Ingress-derived ones included) use.
	// Defaults to the ClusterProviderConfig "default".
	// +optional
	ProviderConfigRef *xpv2.ProviderConfigReference `json:"providerConfigRef,omitempty"`

	// TokenRotation requests a new run token: the tunnel secret is rotated
	// in Cloudflare, the token Secret updated, the connectors rolled onto
	// it with no moment without a ready replica, and the connectors that
	// ran with the old token removed from Cloudflare afterwards.
	// +optional
	TokenRotation *TokenRotationRequest `json:"tokenRotation,omitempty"`

	// CredentialsSecretRef names a Secret in this namespace with
	// CLOUDFLARE_API_TOKEN and CLOUDFLARE_ACCOUNT_ID, and optionally
	// CLOUDFLARE_BASE_URL (an API endpoint: a proxy, or the simulator); a
	// ProviderConfig for it is managed for this tunnel.
	// +optional
	CredentialsSecretRef *xpv2.LocalSecretReference `json:"credentialsSecretRef,omitempty"`

	// Crossplane is written by the provider, not by users: the objects
	// this CloudflareTunnel made, where Crossplane's tools look for a
	// composite's children.
	// +optional
	Crossplane *CompositeCrossplane `json:"crossplane,omitempty"`
}

// Which namespaces may use a tunnel (the zerotrust group's values, which
// an AccessPolicy shares the same way).
const (
	NamespacesFromSame     = ztv1alpha1.NamespacesFromSame
	NamespacesFromAll      = ztv1alpha1.NamespacesFromAll
	NamespacesFromSelector = ztv1alpha1.NamespacesFromSelector
)

// AllowedNamespaces are the namespaces whose sources may use a tunnel. The
// type lives in the zerotrust group, whose AccessPolicy is shared the same
// way (that group cannot import this one).
type AllowedNamespaces = ztv1alpha1.AllowedNamespaces

// TokenRotationRequest asks for a token rotation. Any change to a time
// from 2020 on and not in the future is admitted (a mistyped time can be
// corrected); the provider decides what it does, and the TokenRotation
// condition says so.
type TokenRotationRequest struct {
	// RequestedAt asks for a run token issued at or after this time: a
	// time after the last rotation rotates the token, once; a time at or
	// before it is already served (the condition says so). A time more
	// than 5 minutes ahead of the provider's clock is refused, not served
	// (a mistyped year would otherwise rotate at once and stand for every
	// later request): the provider's admission webhook refuses it, and
	// where the webhook does not run the condition does. An unchanged
	// value is always admitted. A time before 2020-01-01T00:00:00Z (such
	// as 0001-01-01T00:00:00Z, which reads as unset) asks for nothing that
	// can be meant and is refused by the API server. An RFC 3339 time, e.g.
	// 2026-12-02T10:00:00Z: the current time is the value to set.
	// +kubebuilder:validation:XValidation:rule="self >= timestamp('2020-01-01T00:00:00Z')",message="requestedAt must be 2020-01-01T00:00:00Z or later: an earlier time (0001-01-01T00:00:00Z is an unset time) asks for no rotation that can be meant. Set it to the current time to rotate now"
	RequestedAt metav1.Time `json:"requestedAt"`
}

// CloudflareTunnelStatus is the observed state of a CloudflareTunnel.
type CloudflareTunnelStatus struct {
	xpv2.ConditionedStatus `json:",inline"`

	// TunnelID of the Cloudflare tunnel.
	TunnelID string `json:"tunnelID,omitempty"`

	// ProviderConfigRef is the provider config the tunnel's Tunnel managed
	// resource uses, and every object made for the tunnel must: set once
	// the Tunnel is made, before Cloudflare has given it an ID. Sources
	// (Ingresses, Services, GatewayBindings) and PublicHostnames wait for
	// it rather than use the default credentials meanwhile.
	// +optional
	ProviderConfigRef *xpv2.ProviderConfigReference `json:"providerConfigRef,omitempty"`

	// Connections to Cloudflare's edge, as Cloudflare reports them.
	Connections int `json:"connections,omitempty"`

	// TunnelStatus is Cloudflare's view of the tunnel: healthy, degraded
	// (serving, but at least one edge connection has failed), down (it had
	// connections and has none) or inactive (never run).
	// +optional
	TunnelStatus string `json:"tunnelStatus,omitempty"`

	// Connectors is how many cloudflared instances Cloudflare sees
	// connected; the Degraded condition compares it with spec.replicas.
	// +optional
	Connectors int `json:"connectors,omitempty"`

	// ConnectorsOnLatestConfig is how many of them run the tunnel's current
	// remote configuration version.
	// +optional
	ConnectorsOnLatestConfig int `json:"connectorsOnLatestConfig,omitempty"`

	// TokenRotatedAt is when the run token was last rotated (Cloudflare's
	// new token read, to be published to the token Secret).
	// +optional
	TokenRotatedAt *metav1.Time `json:"tokenRotatedAt,omitempty"`

	// ObservedGeneration is the generation last reconciled.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// +kubebuilder:object:root=true

// A CloudflareTunnel is a running, hardened Cloudflare Tunnel: a Tunnel
// managed resource, its token Secret and a cloudflared Deployment.
// +kubebuilder:printcolumn:name="TUNNEL-ID",type="string",JSONPath=".status.tunnelID"
// +kubebuilder:printcolumn:name="STATUS",type="string",JSONPath=".status.tunnelStatus"
// +kubebuilder:printcolumn:name="CONNECTORS",type="integer",JSONPath=".status.connectors"
// +kubebuilder:printcolumn:name="CONNECTIONS",type="integer",JSONPath=".status.connections"
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="DEGRADED",type="string",JSONPath=".status.conditions[?(@.type=='Degraded')].status"
// +kubebuilder:printcolumn:name="REASON",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].reason",priority=1
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,categories={cloudflare},shortName=cft
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 63",message="metadata.name is at most 63 characters: it labels the cloudflared Deployment"
// +kubebuilder:validation:XValidation:rule="(has(self.spec.tunnelName) ? self.spec.tunnelName : self.metadata.name) == (has(oldSelf.spec.tunnelName) ? oldSelf.spec.tunnelName : oldSelf.metadata.name)",message="tunnelName is immutable (it defaults to metadata.name): delete this CloudflareTunnel and create a new one to use another Cloudflare tunnel"
type CloudflareTunnel struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   CloudflareTunnelSpec   `json:"spec,omitempty"`
	Status CloudflareTunnelStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// CloudflareTunnelList contains a list of CloudflareTunnel.
type CloudflareTunnelList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []CloudflareTunnel `json:"items"`
}

// GetCondition of this CloudflareTunnel.
func (c *CloudflareTunnel) GetCondition(ct xpv2.ConditionType) xpv2.Condition {
	return c.Status.GetCondition(ct)
}

// SetConditions of this CloudflareTunnel.
func (c *CloudflareTunnel) SetConditions(cs ...xpv2.Condition) {
	c.Status.SetConditions(cs...)
}
