package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
)

// Origin protocols of a Service origin.
const (
	ProtocolHTTP  = "http"
	ProtocolHTTPS = "https"
	// ProtocolHTTP2 is HTTPS with HTTP/2 to the origin (gRPC): cloudflared
	// speaks HTTP/2 to an origin only over TLS.
	ProtocolHTTP2 = "http2"
	ProtocolTCP   = "tcp"
	ProtocolSSH   = "ssh"
	ProtocolRDP   = "rdp"
)

// Path types of a PublicHostname path.
const (
	PathTypePrefix            = "Prefix"
	PathTypeExact             = "Exact"
	PathTypeRegularExpression = "RegularExpression"
)

// DNS modes of a PublicHostname.
const (
	// DNSManaged: the PublicHostname makes a proxied CNAME record pointing
	// at its tunnel (a DNSRecord managed resource).
	DNSManaged = "Managed"
	// DNSNone: the hostname's DNS is someone else's (ExternalDNS, Terraform,
	// the dashboard); only the tunnel's rule is published.
	DNSNone = "None"
)

// LocalReference names an object in the referrer's namespace.
type LocalReference struct {
	// Name of the object.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// TunnelReference names a CloudflareTunnel: in the referrer's namespace, or
// in another whose tunnel allows the referrer's (spec.allowedNamespaces).
type TunnelReference struct {
	// Name of the CloudflareTunnel.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Namespace of the CloudflareTunnel; defaults to the referrer's. A
	// tunnel of another namespace is used only if it allows this one.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace,omitempty"`
}

// ServiceOrigin is a Service in the PublicHostname's namespace; cloudflared
// reaches it by its cluster DNS name.
type ServiceOrigin struct {
	// Name of the Service.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// Port of the Service: its number, or the name of one of its ports.
	// +kubebuilder:validation:XIntOrString
	Port intstr.IntOrString `json:"port"`

	// Protocol cloudflared speaks to the Service: http, https, http2 (HTTPS
	// with HTTP/2, for gRPC), tcp, ssh or rdp.
	// +optional
	// +kubebuilder:default=http
	// +kubebuilder:validation:Enum=http;https;http2;tcp;ssh;rdp
	Protocol string `json:"protocol,omitempty"`
}

// Origin is where cloudflared sends a hostname's requests: a Service of this
// namespace, or any service cloudflared understands.
// +kubebuilder:validation:XValidation:rule="has(self.service) != has(self.url)",message="set exactly one of service and url"
type Origin struct {
	// Service in this namespace.
	// +optional
	Service *ServiceOrigin `json:"service,omitempty"`

	// URL of a cloudflared service: http://, https://, tcp://, ssh://,
	// rdp:// with a host and port; unix:/path; http_status:<code>; or
	// hello_world.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	URL *string `json:"url,omitempty"`
}

// PathOrigin routes the requests of one path to an origin.
type PathOrigin struct {
	// Path to match. Prefix and Exact paths start with "/"; a Prefix matches
	// whole path segments, as in Kubernetes Ingresses ("/api" matches
	// "/api/v1", not "/apiv1"). RegularExpression is matched as cloudflared
	// does: a Go (RE2) expression, unanchored.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Path string `json:"path"`

	// PathType: Prefix (default), Exact or RegularExpression.
	// +optional
	// +kubebuilder:default=Prefix
	// +kubebuilder:validation:Enum=Prefix;Exact;RegularExpression
	PathType string `json:"pathType,omitempty"`

	// Origin of the path's requests.
	Origin Origin `json:"origin"`
}

// OriginOptions say how cloudflared talks to the hostname's origins. TLS
// verification of HTTPS origins is on unless noTLSVerify turns it off.
type OriginOptions struct {
	// OriginServerName is the name cloudflared expects on the origin's
	// certificate (and sends as SNI).
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	OriginServerName *string `json:"originServerName,omitempty"`

	// MatchSNIToHost sends the request's hostname as SNI and expects it on
	// the origin's certificate.
	// +optional
	MatchSNIToHost *bool `json:"matchSNIToHost,omitempty"`

	// NoTLSVerify accepts any certificate from the origin. Off unless set.
	// +optional
	NoTLSVerify *bool `json:"noTLSVerify,omitempty"`

	// CAPoolSecretRef names a key of a Secret in this namespace holding the
	// PEM certificate authorities the origin's certificate is verified
	// against. The CloudflareTunnel mounts it into cloudflared.
	// +optional
	CAPoolSecretRef *LocalSecretKeySelector `json:"caPoolSecretRef,omitempty"`

	// HTTPHostHeader is the Host header sent to the origin.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	HTTPHostHeader *string `json:"httpHostHeader,omitempty"`

	// ConnectTimeoutSeconds bounds establishing a TCP connection to the
	// origin.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=300
	ConnectTimeoutSeconds *int64 `json:"connectTimeoutSeconds,omitempty"`

	// TLSTimeoutSeconds bounds the TLS handshake with the origin.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=300
	TLSTimeoutSeconds *int64 `json:"tlsTimeoutSeconds,omitempty"`

	// HTTP2Origin makes cloudflared speak HTTP/2 to the origins (gRPC needs
	// it), as a Service origin of protocol http2 does for its own rule.
	// cloudflared speaks HTTP/2 to an origin only over TLS: an http://
	// origin of the hostname is refused.
	// +optional
	HTTP2Origin *bool `json:"http2Origin,omitempty"`
}

// LocalSecretKeySelector selects a key of a Secret in the referrer's
// namespace.
type LocalSecretKeySelector struct {
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	Name string `json:"name"`

	// Key in the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	Key string `json:"key"`
}

// Access makes cloudflared admit only requests that carry a valid Cloudflare
// Access token for one of the audiences: an application's policies apply
// even to a request that reaches the tunnel some other way. Either name the
// policies (managed: the PublicHostname makes the Access application for
// its hostname and publishes its audience tag), or bring the team name and
// audience tags of applications made elsewhere.
// +kubebuilder:validation:XValidation:rule="has(self.policies) != (has(self.teamName) || has(self.audTags))",message="set policies (an Access application made for the hostname), or teamName and audTags (applications made elsewhere), not both"
// +kubebuilder:validation:XValidation:rule="!has(self.teamName) || has(self.audTags)",message="required with teamName: the audience tags of the Access applications made elsewhere",fieldPath=".audTags"
// +kubebuilder:validation:XValidation:rule="!has(self.audTags) || has(self.teamName)",message="required with audTags: the Zero Trust team name",fieldPath=".teamName"
type Access struct {
	// Required denies requests without a valid Access token. Defaults to
	// true; false only checks tokens that are present.
	// +optional
	// +kubebuilder:default=true
	Required *bool `json:"required,omitempty"`

	// Policies are the AccessPolicies, by name and in order (of this
	// namespace, or shared with it by another), of the Access application the PublicHostname makes for its
	// hostname (an AccessApplication it owns). Nothing is published until
	// the application exists and its audience tag is on every rule.
	// +optional
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=50
	// +listType=atomic
	Policies []AccessPolicyName `json:"policies,omitempty"`

	// TeamName is the Zero Trust organisation's team name (the
	// <team>.cloudflareaccess.com subdomain), for applications made
	// elsewhere.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	TeamName string `json:"teamName,omitempty"`

	// AudTags are the audience tags (64 hexadecimal digits each) of Access
	// applications made elsewhere that may reach the hostname.
	// +optional
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:Pattern=`^[0-9a-f]{64}$`
	AudTags []string `json:"audTags,omitempty"`
}

// AccessPolicyName names an AccessPolicy: of the PublicHostname's
// namespace, or of another that shares it with this one.
type AccessPolicyName struct {
	// Name of the AccessPolicy.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Namespace of the AccessPolicy, when it is not the PublicHostname's:
	// a policy a platform team shares (its spec.allowedNamespaces allows
	// this namespace). Unset: this namespace.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Namespace string `json:"namespace,omitempty"`
}

// PublicHostnameSpec is one hostname published on the internet through a
// CloudflareTunnel.
// +kubebuilder:validation:XValidation:rule="has(self.origin) || (has(self.paths) && size(self.paths) > 0)",message="set origin, paths, or both"
// +kubebuilder:validation:XValidation:rule="!has(self.loadBalancing) || !self.hostname.startsWith('*')",message="a wildcard hostname cannot be load-balanced"
// +kubebuilder:validation:XValidation:rule="!has(self.loadBalancing) || size(self.hostname) <= 190",message="a load-balanced hostname has at most 190 characters: its pool's description names it"
// +kubebuilder:validation:XValidation:rule="!has(self.loadBalancing) || !has(self.loadBalancing.monitor) || !has(self.loadBalancing.monitor.connectorOnly) || !self.loadBalancing.monitor.connectorOnly || has(self.loadBalancing.monitor.path)",message="loadBalancing.monitor.connectorOnly needs monitor.path: the path cloudflared answers itself"
type PublicHostnameSpec struct {
	// TunnelRef names the CloudflareTunnel that serves the hostname: in
	// this namespace, or in another whose tunnel allows this one.
	TunnelRef TunnelReference `json:"tunnelRef"`

	// Hostname published, lower case; "*.example.com" publishes every
	// name directly below example.com. Its zone must be in the account.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^(\*\.)?([a-z0-9]([-a-z0-9]*[a-z0-9])?\.)+[a-z]([-a-z0-9]*[a-z0-9])?$`
	Hostname string `json:"hostname"`

	// Origin of the requests no path matches.
	// +optional
	Origin *Origin `json:"origin,omitempty"`

	// Paths route requests by path before origin: the most specific path
	// is tried first.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	// +listType=atomic
	Paths []PathOrigin `json:"paths,omitempty"`

	// OriginRequest options apply to every origin of the hostname.
	// +optional
	OriginRequest *OriginOptions `json:"originRequest,omitempty"`

	// Access, when set, makes cloudflared enforce Cloudflare Access on
	// the hostname.
	// +optional
	Access *Access `json:"access,omitempty"`

	// DNS: Managed (default) makes a proxied CNAME record to the tunnel;
	// None leaves the hostname's DNS to someone else.
	// +optional
	// +kubebuilder:default=Managed
	// +kubebuilder:validation:Enum=Managed;None
	DNS string `json:"dns,omitempty"`

	// LoadBalancing puts the hostname behind a Cloudflare load balancer
	// shared by several clusters: no DNS record is made (the load balancer
	// holds the name), whatever dns says.
	// +optional
	LoadBalancing *LoadBalancing `json:"loadBalancing,omitempty"`

	// Crossplane is written by the provider, not by users: the objects
	// this PublicHostname made, where Crossplane's tools look for a
	// composite's children.
	// +optional
	Crossplane *CompositeCrossplane `json:"crossplane,omitempty"`
}

// PublishedStatus is the CloudflareTunnel's answer to a PublicHostname. The
// CloudflareTunnel writes it; nothing else does.
type PublishedStatus struct {
	// Tunnel is the CloudflareTunnel that answered.
	Tunnel string `json:"tunnel"`
	// Accepted: the hostname is this PublicHostname's on the tunnel.
	Accepted bool `json:"accepted"`
	// Reason and Message say why not, or what was published.
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	// ClaimedBy names the PublicHostname holding the hostname when another
	// of the same namespace does; a holder of another namespace (another
	// tenant) is not named.
	ClaimedBy string `json:"claimedBy,omitempty"`
	// Rules of this PublicHostname in the configuration Cloudflare holds.
	Rules int `json:"rules,omitempty"`
	// ConfigVersion of the tunnel's configuration holding them, once
	// Cloudflare has it.
	ConfigVersion int `json:"configVersion,omitempty"`
	// ObservedGeneration of the PublicHostname the answer is about.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// PublicHostnameStatus is the observed state of a PublicHostname.
type PublicHostnameStatus struct {
	xpv2.ConditionedStatus `json:",inline"`

	// Rules this PublicHostname asks its tunnel to publish: the last valid
	// spec, with Service origins resolved. A spec that is not valid keeps
	// the rules of the last one that was.
	// +optional
	Rules []ztv1alpha1.IngressRule `json:"rules,omitempty"`

	// RulesGeneration is the generation the rules were made from.
	RulesGeneration int64 `json:"rulesGeneration,omitempty"`

	// CAPools the rules name, for the CloudflareTunnel to mount.
	// +optional
	CAPools []LocalSecretKeySelector `json:"caPools,omitempty"`

	// Tunnel is the CloudflareTunnel's answer.
	// +optional
	Tunnel *PublishedStatus `json:"tunnel,omitempty"`

	// DNSRecord is the name of the DNSRecord managed resource made for the
	// hostname.
	DNSRecord string `json:"dnsRecord,omitempty"`

	// LoadBalancing is what a load-balanced hostname made, and its pool's
	// health.
	// +optional
	LoadBalancing *LoadBalancingStatus `json:"loadBalancing,omitempty"`

	// ObservedGeneration is the generation last reconciled.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// +kubebuilder:object:root=true

// A PublicHostname publishes one hostname on the internet through a
// CloudflareTunnel: the tunnel's rule for it, its DNS record, origin options
// and Cloudflare Access enforcement. Annotated Ingresses make them; users may
// too.
// +kubebuilder:printcolumn:name="HOSTNAME",type="string",JSONPath=".spec.hostname"
// +kubebuilder:printcolumn:name="TUNNEL",type="string",JSONPath=".spec.tunnelRef.name"
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="REASON",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].reason",priority=1
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,categories={cloudflare},shortName=cfph
type PublicHostname struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   PublicHostnameSpec   `json:"spec,omitempty"`
	Status PublicHostnameStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// PublicHostnameList contains a list of PublicHostname.
type PublicHostnameList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PublicHostname `json:"items"`
}

// GetCondition of this PublicHostname.
func (p *PublicHostname) GetCondition(ct xpv2.ConditionType) xpv2.Condition {
	return p.Status.GetCondition(ct)
}

// SetConditions of this PublicHostname.
func (p *PublicHostname) SetConditions(cs ...xpv2.Condition) {
	p.Status.SetConditions(cs...)
}
