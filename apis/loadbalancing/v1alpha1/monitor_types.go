package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
)

// LoadBalancerMonitorParameters are the desired state of a Load Balancing
// health monitor.
// +kubebuilder:validation:XValidation:rule="self.type == 'tcp' ? has(self.port) : true",message="a tcp monitor needs a port"
// +kubebuilder:validation:XValidation:rule="self.type == 'tcp' ? !has(self.path) && !has(self.expectedCodes) && !has(self.host) : true",message="path, expectedCodes and host are for http and https monitors only"
// +kubebuilder:validation:XValidation:rule="!has(self.interval) || !has(self.timeout) || self.timeout < self.interval",message="timeout must be shorter than interval"
type LoadBalancerMonitorParameters struct {
	// Type of the probe. A tunnel origin (<tunnel ID>.cfargotunnel.com) is
	// probed over http or https only: Cloudflare documents that TCP
	// monitors do not work on tunnel origins, and a LoadBalancerPool with
	// tunnel origins refuses a tcp monitor.
	// +kubebuilder:validation:Enum=http;https;tcp
	Type string `json:"type"`

	// Description stored with the monitor, before this provider's
	// ownership marker.
	// +optional
	// +kubebuilder:validation:MaxLength=200
	Description *string `json:"description,omitempty"`

	// Path the probe requests (http and https); default "/".
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^/`
	Path *string `json:"path,omitempty"`

	// ExpectedCodes the origin answers when healthy (http and https): a
	// code or a range such as "2xx"; default "200".
	// +optional
	// +kubebuilder:validation:Pattern=`^[1-5]([0-9]{2}|xx)$`
	ExpectedCodes *string `json:"expectedCodes,omitempty"`

	// Method of the probe: GET or HEAD for http and https (default GET),
	// connection_established for tcp (the default there).
	// +optional
	// +kubebuilder:validation:Enum=GET;HEAD;connection_established
	Method *string `json:"method,omitempty"`

	// Host header of the probe (http and https). A tunnel origin routes by
	// it: set it to the hostname the tunnel serves, or the probe reaches
	// the tunnel's catch-all rule.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Host *string `json:"host,omitempty"`

	// Port to probe; required for tcp, default 80 (http) or 443 (https).
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port *int64 `json:"port,omitempty"`

	// Interval between probes in seconds; default 60.
	// +optional
	// +kubebuilder:validation:Minimum=5
	// +kubebuilder:validation:Maximum=3600
	Interval *int64 `json:"interval,omitempty"`

	// Timeout of one probe in seconds; default 5.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10
	Timeout *int64 `json:"timeout,omitempty"`

	// Retries after a timeout before an origin is unhealthy; default 2.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=5
	Retries *int64 `json:"retries,omitempty"`
}

// LoadBalancerMonitorObservation is the observed state of a monitor.
type LoadBalancerMonitorObservation struct {
	// ID of the monitor (also its external-name).
	ID string `json:"id,omitempty"`
	// CreatedOn is when the monitor was created.
	CreatedOn *metav1.Time `json:"createdOn,omitempty"`
}

// A LoadBalancerMonitorSpec defines the desired state of a LoadBalancerMonitor.
// +kubebuilder:validation:XValidation:rule="!has(self.providerConfigRef) || self.providerConfigRef.kind in ['ProviderConfig', 'ClusterProviderConfig']",message="providerConfigRef.kind is ProviderConfig or ClusterProviderConfig"
type LoadBalancerMonitorSpec struct {
	xpv2.ManagedResourceSpec `json:",inline"`
	ForProvider              LoadBalancerMonitorParameters `json:"forProvider"`
}

// A LoadBalancerMonitorStatus represents the observed state of a LoadBalancerMonitor.
type LoadBalancerMonitorStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	AtProvider                 LoadBalancerMonitorObservation `json:"atProvider,omitempty"`
}

// +kubebuilder:object:root=true

// A LoadBalancerMonitor is a Cloudflare Load Balancing health monitor: how
// the origins of the pools that name it are probed. Its external-name is
// the monitor ID. Monitors have no name, so the provider proves which it
// made by the ownership marker in the description; import one by setting
// its ID as external-name.
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="SYNCED",type="string",JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="EXTERNAL-NAME",type="string",JSONPath=".metadata.annotations.crossplane\\.io/external-name"
// +kubebuilder:printcolumn:name="TYPE",type="string",JSONPath=".spec.forProvider.type"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,categories={crossplane,managed,cloudflare}
type LoadBalancerMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   LoadBalancerMonitorSpec   `json:"spec"`
	Status LoadBalancerMonitorStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// LoadBalancerMonitorList contains a list of LoadBalancerMonitor.
type LoadBalancerMonitorList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []LoadBalancerMonitor `json:"items"`
}
