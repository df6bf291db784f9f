package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
)

// GatewayParametersSpec are the settings of the CloudflareTunnel made for
// a Gateway of this provider's GatewayClass, and of its hostnames' DNS. The
// connector fields are a CloudflareTunnelSpec's, with the same defaults and
// validation; they are copied rather than shared so that CloudflareTunnel's
// own schema stays as it is.
// +kubebuilder:validation:XValidation:rule="!has(self.providerConfigRef) || self.providerConfigRef.kind in ['ProviderConfig', 'ClusterProviderConfig']",message="providerConfigRef.kind is ProviderConfig or ClusterProviderConfig"
type GatewayParametersSpec struct {
	// Replicas of cloudflared (a CloudflareTunnel's spec.replicas).
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=32
	Replicas *int32 `json:"replicas,omitempty"`

	// Image of cloudflared (a CloudflareTunnel's spec.image).
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

	// Affinity for the cloudflared pods.
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`

	// Resources of the cloudflared container.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`

	// Connector tunes the cloudflared Deployment further (a
	// CloudflareTunnel's spec.connector).
	// +optional
	Connector *ConnectorSpec `json:"connector,omitempty"`

	// DeleteTunnelOnRemove deletes the Cloudflare tunnel when the Gateway
	// is deleted; false leaves (orphans) it in Cloudflare. Defaults to true.
	// +optional
	DeleteTunnelOnRemove *bool `json:"deleteTunnelOnRemove,omitempty"`

	// ProviderConfigRef names the config whose credentials the tunnel
	// uses; the ClusterProviderConfig "default" when unset. A Gateway whose
	// listeners admit routes of other namespaces shares its tunnel with
	// them, and a shared tunnel needs a ClusterProviderConfig.
	// +optional
	ProviderConfigRef *xpv2.ProviderConfigReference `json:"providerConfigRef,omitempty"`

	// DNS of the hostnames the Gateway's routes publish: DNSRecord (the
	// default), ExternalDNS or None.
	// +optional
	DNS *BindingDNS `json:"dns,omitempty"`
	// AddressDomain gives each Gateway using these parameters a hostname
	// of its own, <gateway name>.<gateway namespace>.<addressDomain>, as
	// its address: a route that names no hostname, attached to a listener
	// that names none, is published on it (with its DNS record, as any
	// hostname). Unset, a Gateway's address is <tunnel ID>.cfargotunnel.com
	// and such a route publishes nothing: Cloudflare's edge reaches a
	// tunnel only through a hostname of the account's zones. HTTPS to the
	// address needs an edge certificate covering two levels below the
	// domain (Universal SSL covers one).
	// +optional
	// +kubebuilder:validation:MaxLength=200
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?\.)+[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	AddressDomain *string `json:"addressDomain,omitempty"`
}

// ConnectorSet says whether any setting of the tunnel itself (anything but
// dns) is set.
func (s *GatewayParametersSpec) ConnectorSet() bool {
	return s.Replicas != nil || s.Image != nil || len(s.NodeSelector) > 0 || len(s.Tolerations) > 0 || s.Affinity != nil ||
		s.Resources != nil || s.Connector != nil || s.DeleteTunnelOnRemove != nil || s.ProviderConfigRef != nil
}

// +kubebuilder:object:root=true

// GatewayParameters are the settings a Gateway of this provider's
// GatewayClass makes its CloudflareTunnel with, and the DNS mode of its
// hostnames. A Gateway names them in spec.infrastructure.parametersRef, or
// its GatewayClass in spec.parametersRef; the Gateway's win, whole (their
// fields are not merged with the class's).
// +kubebuilder:printcolumn:name="REPLICAS",type="integer",JSONPath=".spec.replicas"
// +kubebuilder:printcolumn:name="DNS",type="string",JSONPath=".spec.dns.mode"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:resource:scope=Namespaced,categories={cloudflare},shortName=cfgwp
type GatewayParameters struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec GatewayParametersSpec `json:"spec"`
}

// +kubebuilder:object:root=true

// GatewayParametersList contains a list of GatewayParameters.
type GatewayParametersList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []GatewayParameters `json:"items"`
}
