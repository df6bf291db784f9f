package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
)

// DNS modes of a GatewayBinding (and of the Ingress annotation
// tunnels.cloudflare.com/dns).
const (
	// DNSModeDNSRecord: this provider's DNSRecord managed resources, one
	// proxied CNAME per hostname.
	DNSModeDNSRecord = "DNSRecord"
	// DNSModeExternalDNS: one ExternalDNS DNSEndpoint object for an
	// installed external-dns to publish.
	DNSModeExternalDNS = "ExternalDNS"
	// DNSModeNone: nothing is written; status lists the records needed.
	DNSModeNone = "None"
)

// DefaultExternalDNSProxiedKey is the provider-specific property that makes
// external-dns's Cloudflare provider create a proxied record, as
// external-dns v0.20 names it (older releases read other spellings, and
// newer ones follow --annotation-prefix).
const DefaultExternalDNSProxiedKey = "external-dns.alpha.kubernetes.io/cloudflare-proxied"

// GatewayListenerReference names a Gateway in the binding's namespace and
// one of its listeners.
type GatewayListenerReference struct {
	// Name of the Gateway.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// SectionName is the name of the Gateway's listener whose routes are
	// published.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	SectionName string `json:"sectionName"`
}

// GatewayServiceOrigin is the Gateway implementation's in-cluster Service
// (Traefik's, Envoy Gateway's, ...): cloudflared sends every published
// hostname's requests there, and the Gateway implementation routes them.
type GatewayServiceOrigin struct {
	// Name of the Service.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// Namespace of the Service; the binding's own when unset. Another
	// namespace must allow it with a Gateway API ReferenceGrant from
	// GatewayBindings of this namespace to the Service.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Namespace string `json:"namespace,omitempty"`

	// Port of the Service: its number, or the name of one of its ports.
	// +kubebuilder:validation:XIntOrString
	Port intstr.IntOrString `json:"port"`

	// Protocol cloudflared speaks to the Service: http or https.
	// +optional
	// +kubebuilder:default=http
	// +kubebuilder:validation:Enum=http;https
	Protocol string `json:"protocol,omitempty"`
}

// GatewayOrigin is where cloudflared sends the binding's requests.
type GatewayOrigin struct {
	// Service of the Gateway implementation.
	Service GatewayServiceOrigin `json:"service"`
}

// ExternalDNSOptions shape the DNSEndpoint written in ExternalDNS mode.
type ExternalDNSOptions struct {
	// ProxiedKey is the provider-specific property that marks a record
	// proxied for external-dns's Cloudflare provider. Defaults to
	// external-dns.alpha.kubernetes.io/cloudflare-proxied.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	ProxiedKey string `json:"proxiedKey,omitempty"`
}

// BindingDNS says who writes the published hostnames' DNS records.
type BindingDNS struct {
	// Mode: DNSRecord (default) makes this provider's DNSRecords;
	// ExternalDNS writes one DNSEndpoint for external-dns; None writes
	// nothing and lists the records needed in status.
	// +optional
	// +kubebuilder:default=DNSRecord
	// +kubebuilder:validation:Enum=DNSRecord;ExternalDNS;None
	Mode string `json:"mode,omitempty"`

	// ExternalDNS options, used in ExternalDNS mode.
	// +optional
	ExternalDNS *ExternalDNSOptions `json:"externalDNS,omitempty"`
}

// GatewayBindingSpec binds one listener of a Gateway to a CloudflareTunnel.
type GatewayBindingSpec struct {
	// TunnelRef names the CloudflareTunnel that publishes the hostnames: in
	// this namespace, or in another whose tunnel allows this one
	// (spec.allowedNamespaces).
	TunnelRef TunnelReference `json:"tunnelRef"`

	// GatewayRef names the Gateway (in this namespace) and its listener.
	GatewayRef GatewayListenerReference `json:"gatewayRef"`

	// Origin is the Gateway implementation's Service.
	Origin GatewayOrigin `json:"origin"`

	// OriginRequest options of cloudflared's requests to the origin. TLS
	// verification of an https origin is on unless noTLSVerify turns it off.
	// +optional
	OriginRequest *OriginOptions `json:"originRequest,omitempty"`

	// DNS of the published hostnames.
	// +optional
	DNS BindingDNS `json:"dns,omitempty"`

	// Access is the Cloudflare Access check of every hostname the binding
	// publishes, as a PublicHostname's: name AccessPolicies (of this
	// namespace, or shared with it by another) and each hostname gets an
	// Access application made for it
	// and is published only with its audience tag. A route's
	// tunnels.cloudflare.com/access-policies annotation (or access-team and
	// access-aud) stands for that route's hostnames only when it lets in
	// nobody this check keeps out; no annotation value lowers it.
	// +optional
	Access *Access `json:"access,omitempty"`
}

// States of a bound hostname.
const (
	// HostnamePublished: in the tunnel's configuration, with its DNS as the
	// binding's mode wants.
	HostnamePublished = "Published"
	// HostnamePending: being published.
	HostnamePending = "Pending"
	// HostnameConflict: another source published it first, or an older
	// route of the binding asks for another Access check or load balancing.
	HostnameConflict = "Conflict"
	// HostnameNotSupported: a route kind the binding does not publish (a
	// GRPCRoute), or a route and listener that name no hostname at all;
	// reported, never published.
	HostnameNotSupported = "NotSupported"
	// HostnameInvalid: its route has an annotation that cannot be used
	// (an Access or lb-* annotation, say); nothing new is published for the
	// route, and what it published stays as it was.
	HostnameInvalid = "Invalid"
)

// BoundHostname is one hostname of the routes attached to the listener.
type BoundHostname struct {
	// Hostname of the route.
	Hostname string `json:"hostname"`
	// Route that names it: "<Kind>/<name>".
	Route string `json:"route"`
	// State: Published, Pending, NotAccepted, Conflict, NotSupported or
	// Invalid.
	State string `json:"state"`
	// Message says why, when it is not Published.
	Message string `json:"message,omitempty"`
	// PublicHostname made for it.
	PublicHostname string `json:"publicHostname,omitempty"`
	// CNAME the hostname's DNS record needs: a proxied CNAME to this
	// target, once the tunnel has an ID. Empty for a load-balanced
	// hostname: its load balancer holds the name.
	CNAME string `json:"cname,omitempty"`
}

// GatewayBindingStatus is the observed state of a GatewayBinding.
type GatewayBindingStatus struct {
	xpv2.ConditionedStatus `json:",inline"`

	// Hostnames of the routes attached to the listener, and what became of
	// each.
	// +optional
	// +listType=atomic
	Hostnames []BoundHostname `json:"hostnames,omitempty"`

	// DNSEndpoint written in ExternalDNS mode.
	// +optional
	DNSEndpoint string `json:"dnsEndpoint,omitempty"`

	// ObservedGeneration is the generation last reconciled.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// +kubebuilder:object:root=true

// A GatewayBinding publishes, through a CloudflareTunnel, the concrete
// hostnames of the HTTPRoutes attached to one listener of a Gateway that the
// Gateway's own controller has accepted. Every hostname's requests go to the
// Gateway implementation's Service, which does the routing. Its status is
// its own: the routes' status belongs to the Gateway's controller.
// +kubebuilder:printcolumn:name="GATEWAY",type="string",JSONPath=".spec.gatewayRef.name"
// +kubebuilder:printcolumn:name="LISTENER",type="string",JSONPath=".spec.gatewayRef.sectionName"
// +kubebuilder:printcolumn:name="TUNNEL",type="string",JSONPath=".spec.tunnelRef.name"
// +kubebuilder:printcolumn:name="PROGRAMMED",type="string",JSONPath=".status.conditions[?(@.type=='Programmed')].status"
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="REASON",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].reason",priority=1
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,categories={cloudflare},shortName=cfgwb
type GatewayBinding struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   GatewayBindingSpec   `json:"spec"`
	Status GatewayBindingStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// GatewayBindingList contains a list of GatewayBinding.
type GatewayBindingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []GatewayBinding `json:"items"`
}

// GetCondition of this GatewayBinding.
func (b *GatewayBinding) GetCondition(ct xpv2.ConditionType) xpv2.Condition {
	return b.Status.GetCondition(ct)
}

// SetConditions of this GatewayBinding.
func (b *GatewayBinding) SetConditions(cs ...xpv2.Condition) {
	b.Status.SetConditions(cs...)
}
