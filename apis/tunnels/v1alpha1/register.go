package v1alpha1

import (
	"reflect"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

// Package type metadata.
const (
	Group   = "tunnels.cloudflare.com"
	Version = "v1alpha1"
)

var (
	// SchemeGroupVersion is group version used to register these objects.
	SchemeGroupVersion = schema.GroupVersion{Group: Group, Version: Version}

	// SchemeBuilder is used to add go types to the GroupVersionKind scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: SchemeGroupVersion}
)

// ProviderConfig type metadata.
var (
	ProviderConfigKind             = reflect.TypeOf(ProviderConfig{}).Name()
	ProviderConfigGroupKind        = schema.GroupKind{Group: Group, Kind: ProviderConfigKind}.String()
	ProviderConfigGroupVersionKind = SchemeGroupVersion.WithKind(ProviderConfigKind)
)

// ClusterProviderConfig type metadata.
var (
	ClusterProviderConfigKind             = reflect.TypeOf(ClusterProviderConfig{}).Name()
	ClusterProviderConfigGroupKind        = schema.GroupKind{Group: Group, Kind: ClusterProviderConfigKind}.String()
	ClusterProviderConfigGroupVersionKind = SchemeGroupVersion.WithKind(ClusterProviderConfigKind)
)

// ProviderConfigUsage type metadata.
var (
	ProviderConfigUsageKind                 = reflect.TypeOf(ProviderConfigUsage{}).Name()
	ProviderConfigUsageGroupVersionKind     = SchemeGroupVersion.WithKind(ProviderConfigUsageKind)
	ProviderConfigUsageListKind             = reflect.TypeOf(ProviderConfigUsageList{}).Name()
	ProviderConfigUsageListGroupVersionKind = SchemeGroupVersion.WithKind(ProviderConfigUsageListKind)
)

// CloudflareTunnel type metadata.
var (
	CloudflareTunnelKind             = reflect.TypeOf(CloudflareTunnel{}).Name()
	CloudflareTunnelGroupKind        = schema.GroupKind{Group: Group, Kind: CloudflareTunnelKind}.String()
	CloudflareTunnelGroupVersionKind = SchemeGroupVersion.WithKind(CloudflareTunnelKind)
)

// PublicHostname type metadata.
var (
	PublicHostnameKind             = reflect.TypeOf(PublicHostname{}).Name()
	PublicHostnameGroupKind        = schema.GroupKind{Group: Group, Kind: PublicHostnameKind}.String()
	PublicHostnameGroupVersionKind = SchemeGroupVersion.WithKind(PublicHostnameKind)
)

// GatewayBinding type metadata.
var (
	GatewayBindingKind             = reflect.TypeOf(GatewayBinding{}).Name()
	GatewayBindingGroupKind        = schema.GroupKind{Group: Group, Kind: GatewayBindingKind}.String()
	GatewayBindingGroupVersionKind = SchemeGroupVersion.WithKind(GatewayBindingKind)
)

// GatewayParameters type metadata.
var (
	GatewayParametersKind             = reflect.TypeOf(GatewayParameters{}).Name()
	GatewayParametersGroupKind        = schema.GroupKind{Group: Group, Kind: GatewayParametersKind}.String()
	GatewayParametersGroupVersionKind = SchemeGroupVersion.WithKind(GatewayParametersKind)
)

func init() {
	SchemeBuilder.Register(&CloudflareTunnel{}, &CloudflareTunnelList{})
	SchemeBuilder.Register(&GatewayBinding{}, &GatewayBindingList{})
	SchemeBuilder.Register(&GatewayParameters{}, &GatewayParametersList{})
	SchemeBuilder.Register(&PublicHostname{}, &PublicHostnameList{})
	SchemeBuilder.Register(&ProviderConfig{}, &ProviderConfigList{})
	SchemeBuilder.Register(&ClusterProviderConfig{}, &ClusterProviderConfigList{})
	SchemeBuilder.Register(&ProviderConfigUsage{}, &ProviderConfigUsageList{})
}

// AnnotationUnwantedSince marks a PublicHostname its source no longer
// wants, with the time (RFC 3339) it was first found so. Such a hostname
// publishes no rules; its DNS record and its claim on the tunnel stay for a
// short grace (the source's), so a hostname wanted again at once (an object
// replaced, a route moved) is not taken off DNS and made again. The source
// removes it when it wants the hostname again, and deletes the
// PublicHostname once the grace has passed.
const AnnotationUnwantedSince = "tunnels.cloudflare.com/unwanted-since"

// Ingress annotations the translator reads.
const (
	// AnnotationTunnel names the CloudflareTunnel (in the Ingress's
	// namespace) an Ingress is exposed through.
	AnnotationTunnel = "tunnels.cloudflare.com/tunnel"
	// AnnotationVPCService names the Workers VPC service to create.
	AnnotationVPCService = "tunnels.cloudflare.com/vpc-service"
	// AnnotationVPCPort overrides the VPC service's port.
	AnnotationVPCPort = "tunnels.cloudflare.com/vpc-port"
	// AnnotationPublic "true" exposes the hostnames publicly (DNS + tunnel ingress rules).
	AnnotationPublic = "tunnels.cloudflare.com/public"
	// AnnotationHostname overrides the hostname(s) routed.
	AnnotationHostname = "tunnels.cloudflare.com/hostname"
	// AnnotationPrivateRoute on a Service ("true") routes its cluster IPs
	// (a /32, and a /128 for IPv6) through the tunnel to WARP clients.
	AnnotationPrivateRoute = "tunnels.cloudflare.com/private-route"
	// AnnotationVirtualNetwork on a Service names the VirtualNetwork, in its
	// namespace, its private route belongs to; unset is the account's
	// default virtual network.
	AnnotationVirtualNetwork = "tunnels.cloudflare.com/virtual-network"
	// AnnotationDNS on a public Ingress says who writes its hostnames' DNS
	// records: DNSRecord (default), ExternalDNS (one DNSEndpoint for
	// external-dns) or None.
	AnnotationDNS = "tunnels.cloudflare.com/dns"
	// AnnotationExternalDNSProxiedKey overrides the provider-specific
	// property of the Ingress's DNSEndpoint that marks records proxied.
	AnnotationExternalDNSProxiedKey = "tunnels.cloudflare.com/external-dns-proxied-key"
	// AnnotationPort on a Service names or numbers the port its VPC service
	// and public hostname reach; a Service with one port needs none.
	AnnotationPort = "tunnels.cloudflare.com/port"
	// AnnotationProtocol on a Service is how cloudflared speaks to it:
	// http, https, http2, tcp, ssh or rdp (default: the port's appProtocol
	// or name, else http).
	AnnotationProtocol = "tunnels.cloudflare.com/protocol"

	// Origin options of a public Ingress's hostnames (PublicHostname
	// spec.originRequest and the Service origins' protocol).
	AnnotationOriginProtocol       = "tunnels.cloudflare.com/origin-protocol"
	AnnotationOriginServerName     = "tunnels.cloudflare.com/origin-server-name"
	AnnotationOriginMatchSNIToHost = "tunnels.cloudflare.com/origin-match-sni-to-host"
	AnnotationOriginNoTLSVerify    = "tunnels.cloudflare.com/origin-no-tls-verify"
	AnnotationOriginCASecret       = "tunnels.cloudflare.com/origin-ca-secret"
	AnnotationOriginHostHeader     = "tunnels.cloudflare.com/origin-host-header"
	AnnotationOriginConnectTimeout = "tunnels.cloudflare.com/origin-connect-timeout"
	AnnotationOriginTLSTimeout     = "tunnels.cloudflare.com/origin-tls-timeout"

	// Cloudflare Access enforcement of a public Ingress's hostnames
	// (PublicHostname spec.access). Any of them turns it on; then the team
	// and at least one audience tag are required.
	AnnotationAccessTeam     = "tunnels.cloudflare.com/access-team"
	AnnotationAccessAudTags  = "tunnels.cloudflare.com/access-aud"
	AnnotationAccessRequired = "tunnels.cloudflare.com/access-required"
	// AnnotationAccessPolicies names AccessPolicy objects of the namespace,
	// comma-separated and in order: each hostname gets an Access
	// application made for it with those policies (PublicHostname
	// spec.access.policies), instead of a team and audience tags.
	AnnotationAccessPolicies = "tunnels.cloudflare.com/access-policies"

	// Load balancing of a public source's hostname (PublicHostname
	// spec.loadBalancing, see docs/multi-cluster-failover.md). lb-pool
	// names this cluster's pool and turns it on; the lb-monitor-* tune the
	// pool's probe; lb-pools (the load balancer's pools in failover order)
	// makes the load balancer in this cluster, with lb-fallback-pool and
	// lb-steering. The source must publish exactly one hostname: a pool
	// serves one.
	AnnotationLBPool                 = "tunnels.cloudflare.com/lb-pool"
	AnnotationLBMonitorPath          = "tunnels.cloudflare.com/lb-monitor-path"
	AnnotationLBMonitorConnectorOnly = "tunnels.cloudflare.com/lb-monitor-connector-only"
	AnnotationLBMonitorExpectedCodes = "tunnels.cloudflare.com/lb-monitor-expected-codes"
	AnnotationLBMonitorInterval      = "tunnels.cloudflare.com/lb-monitor-interval"
	AnnotationLBPools                = "tunnels.cloudflare.com/lb-pools"
	AnnotationLBFallbackPool         = "tunnels.cloudflare.com/lb-fallback-pool"
	AnnotationLBSteering             = "tunnels.cloudflare.com/lb-steering"
)

// LBAnnotations are the load-balancing annotations, in the order they are
// documented.
var LBAnnotations = []string{AnnotationLBPool, AnnotationLBMonitorPath, AnnotationLBMonitorConnectorOnly, AnnotationLBMonitorExpectedCodes,
	AnnotationLBMonitorInterval, AnnotationLBPools, AnnotationLBFallbackPool, AnnotationLBSteering}

// SteeringPolicies a load balancer takes (HostnameLoadBalancer
// steeringPolicy).
var SteeringPolicies = []string{"off", "random", "dynamic_latency", "proximity", "least_outstanding_requests", "least_connections"}

// DefaultCAKey is the key of an origin CA Secret named without one.
const DefaultCAKey = "ca.crt"
