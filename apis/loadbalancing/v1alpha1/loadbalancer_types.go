package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
)

// LoadBalancerParameters are the desired state of a zone's load balancer.
// +kubebuilder:validation:XValidation:rule="has(self.defaultPools) || has(self.defaultPoolsRefs) || has(self.defaultPoolsSelector) || has(self.poolNames)",message="one of defaultPools, defaultPoolsRefs, defaultPoolsSelector or poolNames is required"
// +kubebuilder:validation:XValidation:rule="has(self.fallbackPool) || has(self.fallbackPoolRef) || has(self.fallbackPoolSelector) || has(self.poolNames)",message="one of fallbackPool, fallbackPoolRef or fallbackPoolSelector is required (or poolNames, whose last proven pool is the fallback by default)"
// +kubebuilder:validation:XValidation:rule="!has(self.poolNames) || !(has(self.defaultPools) || has(self.defaultPoolsRefs) || has(self.defaultPoolsSelector) || has(self.fallbackPool) || has(self.fallbackPoolRef) || has(self.fallbackPoolSelector))",message="poolNames and fallbackPoolName name every pool: set no defaultPools or fallbackPool beside them"
// +kubebuilder:validation:XValidation:rule="!has(self.fallbackPoolName) || (has(self.poolNames) && self.fallbackPoolName in self.poolNames)",message="fallbackPoolName must be one of poolNames"
// +kubebuilder:validation:XValidation:rule="!has(self.sessionAffinity) || self.sessionAffinity in ['none', 'ip_cookie'] || !has(self.proxied) || self.proxied",message="cookie and header session affinity need a proxied load balancer (proxied defaults to true)"
type LoadBalancerParameters struct {
	// Hostname the load balancer answers for, fully qualified, e.g.
	// "app.example.com". Its zone is the account's zone whose name is the
	// longest suffix of it. A DNS record or load balancer of this hostname
	// that this provider did not make is never replaced: the resource is
	// refused instead.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^([A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?[.])+[A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?$`
	Hostname string `json:"hostname"`

	// Description stored with the load balancer, before this provider's
	// ownership marker.
	// +optional
	// +kubebuilder:validation:MaxLength=200
	Description *string `json:"description,omitempty"`

	// DefaultPools are the pool IDs in failover order.
	// +optional
	// +crossplane:generate:reference:type=LoadBalancerPool
	DefaultPools []string `json:"defaultPools,omitempty"`

	// DefaultPoolsRefs reference LoadBalancerPools in this namespace to set
	// defaultPools, in this order.
	// +optional
	DefaultPoolsRefs []xpv2.NamespacedReference `json:"defaultPoolsRefs,omitempty"`

	// DefaultPoolsSelector selects LoadBalancerPools in this namespace to
	// set defaultPools (in no particular order: use defaultPoolsRefs when
	// the order matters, as it does with steering off).
	// +optional
	// +kubebuilder:validation:XValidation:rule="!has(self.__namespace__) || size(self.__namespace__) == 0",message="defaultPoolsSelector may only select LoadBalancerPools in the load balancer's own namespace"
	DefaultPoolsSelector *xpv2.NamespacedSelector `json:"defaultPoolsSelector,omitempty"`

	// FallbackPool is the pool used when no default pool is healthy.
	// +optional
	// +crossplane:generate:reference:type=LoadBalancerPool
	FallbackPool *string `json:"fallbackPool,omitempty"`

	// FallbackPoolRef references a LoadBalancerPool in this namespace to
	// set fallbackPool.
	// +optional
	FallbackPoolRef *xpv2.NamespacedReference `json:"fallbackPoolRef,omitempty"`

	// FallbackPoolSelector selects a LoadBalancerPool in this namespace to
	// set fallbackPool.
	// +optional
	// +kubebuilder:validation:XValidation:rule="!has(self.__namespace__) || size(self.__namespace__) == 0",message="fallbackPoolSelector may only select LoadBalancerPools in the load balancer's own namespace"
	FallbackPoolSelector *xpv2.NamespacedSelector `json:"fallbackPoolSelector,omitempty"`

	// PoolNames name the default pools by their name in Cloudflare, in
	// failover order, instead of by ID or reference: pools of this
	// installation or of another (another cluster's provider) made for
	// this hostname by a load-balanced PublicHostname. A pool is listed
	// only with proof that it serves this hostname: its ownership marker
	// is this provider's, its description names the hostname, every
	// origin is a tunnel (<tunnel ID>.cfargotunnel.com) with the hostname
	// as its Host header, and each such tunnel's configuration has a rule
	// for the hostname. A pool without proof is left out, and the
	// PoolsProven condition names it. Pools named here are only read,
	// never written.
	// +optional
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:items:MaxLength=100
	// +listType=atomic
	PoolNames []string `json:"poolNames,omitempty"`

	// FallbackPoolName names the fallback pool among poolNames, with the
	// same proof; default (or when it has no proof) the last proven of
	// poolNames.
	// +optional
	// +kubebuilder:validation:MaxLength=100
	FallbackPoolName *string `json:"fallbackPoolName,omitempty"`

	// SteeringPolicy picks the pool: off (the first healthy default pool,
	// failover), random, dynamic_latency (the fastest by the monitors'
	// round trips), geo (by region; pools per region are not modelled
	// here, so every region uses defaultPools), proximity,
	// least_outstanding_requests, least_connections; default off.
	// +optional
	// +kubebuilder:validation:Enum=off;random;dynamic_latency;geo;proximity;least_outstanding_requests;least_connections
	SteeringPolicy *string `json:"steeringPolicy,omitempty"`

	// SessionAffinity keeps a client on one origin: none (default), cookie,
	// ip_cookie, header. Cookie and header affinity need proxied.
	// +optional
	// +kubebuilder:validation:Enum=none;cookie;ip_cookie;header
	SessionAffinity *string `json:"sessionAffinity,omitempty"`

	// SessionAffinityTTL in seconds; Cloudflare's default when unset.
	// +optional
	// +kubebuilder:validation:Minimum=1800
	// +kubebuilder:validation:Maximum=604800
	SessionAffinityTTL *int64 `json:"sessionAffinityTTL,omitempty"`

	// Proxied through Cloudflare (the tunnels of a pool need it: only
	// proxied traffic reaches <tunnel ID>.cfargotunnel.com); default true.
	// +optional
	Proxied *bool `json:"proxied,omitempty"`

	// Enabled load balancers answer for the hostname; default true.
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
}

// LoadBalancerObservation is the observed state of a load balancer.
type LoadBalancerObservation struct {
	// ID of the load balancer (also its external-name).
	ID string `json:"id,omitempty"`
	// ZoneID of the zone the load balancer is in.
	ZoneID string `json:"zoneId,omitempty"`
	// ZoneName of that zone.
	ZoneName string `json:"zoneName,omitempty"`
	// CreatedOn is when the load balancer was created.
	CreatedOn *metav1.Time `json:"createdOn,omitempty"`
	// ServingPool is the ID of the pool that serves now, derived from the
	// pools' health in order: the first default pool healthy everywhere,
	// else the fallback pool. Derived with steering off only: another
	// policy picks among the healthy pools by latency, geography or
	// chance, which is not derived (see healthyPools). Unset while the
	// health of a pool it depends on is unknown.
	// +optional
	ServingPool string `json:"servingPool,omitempty"`
	// HealthyPools are the default pools Cloudflare reports healthy in
	// every region, in order.
	// +optional
	HealthyPools []string `json:"healthyPools,omitempty"`
	// FallbackRegions are the regions in which no default pool is
	// healthy, so the fallback pool serves them.
	// +optional
	FallbackRegions []string `json:"fallbackRegions,omitempty"`
}

// A LoadBalancerSpec defines the desired state of a LoadBalancer.
// +kubebuilder:validation:XValidation:rule="!has(self.providerConfigRef) || self.providerConfigRef.kind in ['ProviderConfig', 'ClusterProviderConfig']",message="providerConfigRef.kind is ProviderConfig or ClusterProviderConfig"
type LoadBalancerSpec struct {
	xpv2.ManagedResourceSpec `json:",inline"`
	ForProvider              LoadBalancerParameters `json:"forProvider"`
}

// A LoadBalancerStatus represents the observed state of a LoadBalancer.
type LoadBalancerStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	AtProvider                 LoadBalancerObservation `json:"atProvider,omitempty"`
}

// +kubebuilder:object:root=true

// A LoadBalancer is a Cloudflare load balancer: a hostname of a zone
// served by pools in failover order (or by another steering policy), with
// a fallback pool. Its external-name is the load balancer ID; load
// balancers it creates carry an ownership marker in their description.
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="SYNCED",type="string",JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="EXTERNAL-NAME",type="string",JSONPath=".metadata.annotations.crossplane\\.io/external-name"
// +kubebuilder:printcolumn:name="HOSTNAME",type="string",JSONPath=".spec.forProvider.hostname"
// +kubebuilder:printcolumn:name="HEALTHY",type="string",JSONPath=".status.conditions[?(@.type=='Healthy')].status"
// +kubebuilder:printcolumn:name="SERVING",type="string",JSONPath=".status.atProvider.servingPool"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,categories={crossplane,managed,cloudflare}
type LoadBalancer struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   LoadBalancerSpec   `json:"spec"`
	Status LoadBalancerStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// LoadBalancerList contains a list of LoadBalancer.
type LoadBalancerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []LoadBalancer `json:"items"`
}
