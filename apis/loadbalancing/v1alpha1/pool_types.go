package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
)

// TunnelOriginReference names a CloudflareTunnel in the pool's namespace.
type TunnelOriginReference struct {
	// Name of the CloudflareTunnel.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// PoolOrigin is one origin of a pool: a tunnel (by reference to its
// CloudflareTunnel, or by ID) or a raw address.
// +kubebuilder:validation:XValidation:rule="has(self.address) != (has(self.tunnelRef) || has(self.tunnelId))",message="set one of tunnelRef (or tunnelId) and address"
type PoolOrigin struct {
	// Name of the origin, unique in the pool.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`

	// TunnelRef names a CloudflareTunnel in this namespace: the origin is
	// its tunnel, <tunnel ID>.cfargotunnel.com, read from the
	// CloudflareTunnel's status.tunnelID once it has one.
	// +optional
	TunnelRef *TunnelOriginReference `json:"tunnelRef,omitempty"`

	// TunnelID of the tunnel the origin is (set from tunnelRef, or by
	// hand). A tunnel another namespace manages is refused.
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`
	TunnelID *string `json:"tunnelId,omitempty"`

	// Address of an origin that is not a tunnel: a hostname or an IP.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Address *string `json:"address,omitempty"`

	// Host header Cloudflare sends to the origin. A tunnel routes by it:
	// set it to the hostname the tunnel serves (Cloudflare's guide for
	// tunnels in pools).
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Host *string `json:"host,omitempty"`

	// Weight of the origin among the pool's, 0 to 100 (Cloudflare's weight
	// of 0.00 to 1.00, in hundredths); default 100. 0 sends it no traffic.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	Weight *int64 `json:"weight,omitempty"`

	// Enabled origins receive traffic and are probed; default true.
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
}

// LoadBalancerPoolParameters are the desired state of a Load Balancing pool.
// +kubebuilder:validation:XValidation:rule="!has(self.minimumOrigins) || self.minimumOrigins <= size(self.origins)",message="minimumOrigins cannot exceed the number of origins"
// +kubebuilder:validation:XValidation:rule="self.origins.all(o, self.origins.exists_one(p, p.name == o.name))",message="origin names must be unique"
type LoadBalancerPoolParameters struct {
	// Name of the pool, unique in the account. A pool of this name that
	// this provider did not create is never adopted; import one by setting
	// its ID as external-name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=100
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_.-]+$`
	Name string `json:"name"`

	// Description stored with the pool, before this provider's ownership
	// marker.
	// +optional
	// +kubebuilder:validation:MaxLength=200
	Description *string `json:"description,omitempty"`

	// Enabled pools serve traffic; default true.
	// +optional
	Enabled *bool `json:"enabled,omitempty"`

	// MinimumOrigins that must be healthy for the pool to serve; default 1.
	// +optional
	// +kubebuilder:validation:Minimum=1
	MinimumOrigins *int64 `json:"minimumOrigins,omitempty"`

	// MonitorID of the monitor probing the origins, when it is not named
	// by monitorIdRef or monitorIdSelector (which are read at every
	// reconcile, not written here). Without a monitor, Cloudflare counts
	// every enabled origin healthy.
	// +optional
	MonitorID *string `json:"monitorId,omitempty"`

	// MonitorIDRef references a LoadBalancerMonitor in this namespace to
	// set monitorId.
	// +optional
	MonitorIDRef *xpv2.NamespacedReference `json:"monitorIdRef,omitempty"`

	// MonitorIDSelector selects a LoadBalancerMonitor in this namespace to
	// set monitorId.
	// +optional
	// +kubebuilder:validation:XValidation:rule="!has(self.__namespace__) || size(self.__namespace__) == 0",message="monitorIdSelector may only select LoadBalancerMonitors in the pool's own namespace"
	MonitorIDSelector *xpv2.NamespacedSelector `json:"monitorIdSelector,omitempty"`

	// Origins of the pool.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=20
	Origins []PoolOrigin `json:"origins"`
}

// LoadBalancerPoolObservation is the observed state of a pool.
type LoadBalancerPoolObservation struct {
	// ID of the pool (also its external-name).
	ID string `json:"id,omitempty"`
	// Addresses of the pool's origins as Cloudflare holds them.
	Addresses []string `json:"addresses,omitempty"`
	// CreatedOn is when the pool was created.
	CreatedOn *metav1.Time `json:"createdOn,omitempty"`
	// Health as Cloudflare's pool health endpoint last reported it; unset
	// while it reports none. The Healthy condition says the same in a
	// word.
	// +optional
	Health *PoolHealth `json:"health,omitempty"`
}

// A LoadBalancerPoolSpec defines the desired state of a LoadBalancerPool.
// +kubebuilder:validation:XValidation:rule="!has(self.providerConfigRef) || self.providerConfigRef.kind in ['ProviderConfig', 'ClusterProviderConfig']",message="providerConfigRef.kind is ProviderConfig or ClusterProviderConfig"
type LoadBalancerPoolSpec struct {
	xpv2.ManagedResourceSpec `json:",inline"`
	ForProvider              LoadBalancerPoolParameters `json:"forProvider"`
}

// A LoadBalancerPoolStatus represents the observed state of a LoadBalancerPool.
type LoadBalancerPoolStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	AtProvider                 LoadBalancerPoolObservation `json:"atProvider,omitempty"`
}

// +kubebuilder:object:root=true

// A LoadBalancerPool is a Cloudflare Load Balancing pool: origins (tunnels
// by reference to their CloudflareTunnel, or raw addresses) probed by a
// monitor. Its external-name is the pool ID; pools it creates carry an
// ownership marker in their description.
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="SYNCED",type="string",JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="EXTERNAL-NAME",type="string",JSONPath=".metadata.annotations.crossplane\\.io/external-name"
// +kubebuilder:printcolumn:name="POOL",type="string",JSONPath=".spec.forProvider.name"
// +kubebuilder:printcolumn:name="HEALTHY",type="string",JSONPath=".status.conditions[?(@.type=='Healthy')].status"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,categories={crossplane,managed,cloudflare}
type LoadBalancerPool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   LoadBalancerPoolSpec   `json:"spec"`
	Status LoadBalancerPoolStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// LoadBalancerPoolList contains a list of LoadBalancerPool.
type LoadBalancerPoolList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []LoadBalancerPool `json:"items"`
}
