package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
)

// VPCServiceParameters are the desired state of a Workers VPC service.
// +kubebuilder:validation:XValidation:rule="self.type != 'http' || has(self.httpPort) || has(self.httpsPort)",message="an http service needs httpPort or httpsPort"
// +kubebuilder:validation:XValidation:rule="self.type != 'tcp' || !has(self.httpPort) && !has(self.httpsPort)",message="a tcp service takes tcpPort, not httpPort or httpsPort"
type VPCServiceParameters struct {
	// Name of the service, unique in the account; Workers bind it by ID.
	// If a service of this name already exists, it is adopted.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	Name string `json:"name"`

	// Type of the service.
	// +kubebuilder:validation:Enum=tcp;http
	Type string `json:"type"`

	// TCPPort of a tcp service.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	TCPPort *int64 `json:"tcpPort,omitempty"`

	// HTTPPort of an http service.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	HTTPPort *int64 `json:"httpPort,omitempty"`

	// HTTPSPort of an http service.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	HTTPSPort *int64 `json:"httpsPort,omitempty"`

	// AppProtocol of a tcp service, when Workers should speak it.
	// +optional
	// +kubebuilder:validation:Enum=postgresql;mysql
	AppProtocol *string `json:"appProtocol,omitempty"`

	// Host is where the service is: a hostname resolved inside a tunnel's
	// network, or an IPv4/IPv6 address on it.
	Host ServiceHost `json:"host"`

	// TLSSettings for connecting to the service.
	// +optional
	TLSSettings *TLSSettings `json:"tlsSettings,omitempty"`
}

// ServiceHost is a hostname with resolverNetwork, or an address with network.
// +kubebuilder:validation:XValidation:rule="has(self.hostname) ? (has(self.resolverNetwork) && !has(self.network) && !has(self.ipv4) && !has(self.ipv6)) : ((has(self.ipv4) || has(self.ipv6)) && has(self.network) && !has(self.resolverNetwork))",message="host is either {hostname, resolverNetwork} or {ipv4 and/or ipv6, network}"
type ServiceHost struct {
	// Hostname of the service, resolved by cloudflared inside the network,
	// e.g. "redis.team-a.svc.cluster.local".
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^([A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?[.])*[A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?[.]?$`
	Hostname *string `json:"hostname,omitempty"`
	// IPv4 address of the service.
	// +optional
	// +kubebuilder:validation:Format=ipv4
	IPv4 *string `json:"ipv4,omitempty"`
	// IPv6 address of the service.
	// +optional
	// +kubebuilder:validation:Format=ipv6
	IPv6 *string `json:"ipv6,omitempty"`
	// Network an address is reached through.
	// +optional
	Network *ServiceNetwork `json:"network,omitempty"`
	// ResolverNetwork a hostname is resolved and reached through.
	// +optional
	ResolverNetwork *ResolverNetwork `json:"resolverNetwork,omitempty"`
}

// ServiceNetwork is the tunnel an address is reached through.
// +kubebuilder:validation:XValidation:rule="has(self.tunnelId) || has(self.tunnelIdRef) || has(self.tunnelIdSelector)",message="one of tunnelId, tunnelIdRef or tunnelIdSelector is required"
type ServiceNetwork struct {
	// TunnelID of the tunnel.
	// +optional
	// +crossplane:generate:reference:type=github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1.Tunnel
	TunnelID *string `json:"tunnelId,omitempty"`
	// TunnelIDRef references a Tunnel in this namespace to set tunnelId.
	// +optional
	TunnelIDRef *xpv2.NamespacedReference `json:"tunnelIdRef,omitempty"`
	// TunnelIDSelector selects a Tunnel in this namespace to set tunnelId.
	// +optional
	// +kubebuilder:validation:XValidation:rule="!has(self.__namespace__) || size(self.__namespace__) == 0",message="tunnelIdSelector may only select Tunnels in the service's own namespace"
	TunnelIDSelector *xpv2.NamespacedSelector `json:"tunnelIdSelector,omitempty"`
}

// ResolverNetwork is the tunnel a hostname is resolved and reached through.
// +kubebuilder:validation:XValidation:rule="has(self.tunnelId) || has(self.tunnelIdRef) || has(self.tunnelIdSelector)",message="one of tunnelId, tunnelIdRef or tunnelIdSelector is required"
type ResolverNetwork struct {
	// TunnelID of the tunnel.
	// +optional
	// +crossplane:generate:reference:type=github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1.Tunnel
	TunnelID *string `json:"tunnelId,omitempty"`
	// TunnelIDRef references a Tunnel in this namespace to set tunnelId.
	// +optional
	TunnelIDRef *xpv2.NamespacedReference `json:"tunnelIdRef,omitempty"`
	// TunnelIDSelector selects a Tunnel in this namespace to set tunnelId.
	// +optional
	// +kubebuilder:validation:XValidation:rule="!has(self.__namespace__) || size(self.__namespace__) == 0",message="tunnelIdSelector may only select Tunnels in the service's own namespace"
	TunnelIDSelector *xpv2.NamespacedSelector `json:"tunnelIdSelector,omitempty"`
	// ResolverIPs are DNS resolvers to use instead of cloudflared's.
	// +optional
	ResolverIPs []string `json:"resolverIps,omitempty"`
}

// TLSSettings for connecting to a service.
type TLSSettings struct {
	// CertVerificationMode of the service's certificate.
	// +optional
	// +kubebuilder:validation:Enum=verify_full;verify_ca;disabled
	CertVerificationMode *string `json:"certVerificationMode,omitempty"`
}

// VPCServiceObservation is the observed state of a VPC service.
type VPCServiceObservation struct {
	// ServiceID (also the external-name); Workers bind the service with it.
	ServiceID string `json:"serviceId,omitempty"`
	// CreatedAt is when the service was created.
	CreatedAt *metav1.Time `json:"createdAt,omitempty"`
	// UpdatedAt is when the service last changed.
	UpdatedAt *metav1.Time `json:"updatedAt,omitempty"`
}

// A VPCServiceSpec defines the desired state of a VPCService.
// +kubebuilder:validation:XValidation:rule="!has(self.providerConfigRef) || self.providerConfigRef.kind in ['ProviderConfig', 'ClusterProviderConfig']",message="providerConfigRef.kind is ProviderConfig or ClusterProviderConfig"
type VPCServiceSpec struct {
	xpv2.ManagedResourceSpec `json:",inline"`
	ForProvider              VPCServiceParameters `json:"forProvider"`

	// AdoptByName lets this resource take over an existing VPC service of the
	// desired name that it cannot prove it created (VPC services carry no
	// ownership marker): after a cluster was rebuilt from the same
	// manifests, to recover its own VPC service. Off by default, because a name
	// alone does not say who made an object, and adopting one made
	// elsewhere rewrites what the Workers bound to it reach and deletes it with this resource. To take over one particular VPC service, set its ID as the
	// crossplane.io/external-name annotation instead.
	// +optional
	AdoptByName bool `json:"adoptByName,omitempty"`
}

// A VPCServiceStatus represents the observed state of a VPCService.
type VPCServiceStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	AtProvider                 VPCServiceObservation `json:"atProvider,omitempty"`
}

// +kubebuilder:object:root=true

// A VPCService is a Workers VPC directory service: a service behind a
// Cloudflare Tunnel that Workers can bind to ({type: vpc_service,
// service_id}). Its external-name is the service ID.
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="SYNCED",type="string",JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="EXTERNAL-NAME",type="string",JSONPath=".metadata.annotations.crossplane\\.io/external-name"
// +kubebuilder:printcolumn:name="SERVICE",type="string",JSONPath=".spec.forProvider.name"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,categories={crossplane,managed,cloudflare}
type VPCService struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   VPCServiceSpec   `json:"spec"`
	Status VPCServiceStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// VPCServiceList contains a list of VPCService.
type VPCServiceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VPCService `json:"items"`
}
