package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
)

// MaxCommentLength leaves room in Cloudflare's 100-character comment limit
// (free zones) for the ownership marker the provider appends.
const MaxCommentLength = 50

// DNSRecordParameters are the desired state of a DNS record.
// +kubebuilder:validation:XValidation:rule="!(has(self.zoneId) && has(self.zoneName))",message="set zoneId or zoneName, not both"
// +kubebuilder:validation:XValidation:rule="!has(self.proxied) || !self.proxied || self.type in ['A', 'AAAA', 'CNAME']",message="only A, AAAA and CNAME records can be proxied"
// +kubebuilder:validation:XValidation:rule="!has(self.proxied) || !self.proxied || !has(self.ttl) || self.ttl == 1",message="a proxied record's ttl is 1 (automatic): leave ttl unset or set it to 1"
// +kubebuilder:validation:XValidation:rule="!has(self.zoneName) || (self.name.endsWith('.') ? self.name : self.name + '.').lowerAscii() == (self.zoneName.endsWith('.') ? self.zoneName : self.zoneName + '.').lowerAscii() || (self.name.endsWith('.') ? self.name : self.name + '.').lowerAscii().endsWith('.' + (self.zoneName.endsWith('.') ? self.zoneName : self.zoneName + '.').lowerAscii())",message="name must be zoneName or a name below it"
// +kubebuilder:validation:XValidation:rule="self.type != 'CNAME' || self.content.matches('^([A-Za-z0-9_]([-A-Za-z0-9_]{0,61}[A-Za-z0-9_])?[.])*[A-Za-z0-9_]([-A-Za-z0-9_]{0,61}[A-Za-z0-9_])?[.]?$')",message="a CNAME's content is a hostname"
type DNSRecordParameters struct {
	// ZoneID of the zone the record is in. When neither zoneId nor zoneName
	// is set, the zone is the account's zone whose name is the longest
	// suffix of the record name.
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9a-f]{32}$`
	ZoneID *string `json:"zoneId,omitempty"`

	// ZoneName of the zone the record is in, e.g. "example.com".
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^([A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?[.])*[A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?[.]?$`
	ZoneName *string `json:"zoneName,omitempty"`

	// Name of the record, fully qualified, e.g. "app.example.com" or
	// "*.example.com"; labels may hold underscores ("_dmarc.example.com").
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:Pattern=`^([*][.])?([A-Za-z0-9_]([-A-Za-z0-9_]{0,61}[A-Za-z0-9_])?[.])*[A-Za-z0-9_]([-A-Za-z0-9_]{0,61}[A-Za-z0-9_])?[.]?$`
	Name string `json:"name"`

	// Type of the record.
	// +kubebuilder:validation:Enum=A;AAAA;CNAME;TXT;MX;NS;CAA;SRV;PTR;HTTPS;SVCB
	Type string `json:"type"`

	// Content of the record: an address, a target hostname (for a tunnel,
	// "<tunnel ID>.cfargotunnel.com"), or text.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	Content string `json:"content"`

	// Proxied through Cloudflare (A, AAAA and CNAME only). Defaults to
	// Cloudflare's default (false) and is late-initialised from it.
	// +optional
	Proxied *bool `json:"proxied,omitempty"`

	// TTL in seconds; 1 means automatic (always the case when proxied).
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=86400
	TTL *int64 `json:"ttl,omitempty"`

	// Comment stored with the record. The provider appends an ownership
	// marker, so at most 50 characters are yours.
	// +optional
	// +kubebuilder:validation:MaxLength=50
	Comment *string `json:"comment,omitempty"`

	// Tags ("name:value") stored with the record (not available on every plan).
	// +optional
	Tags []string `json:"tags,omitempty"`
}

// DNSRecordObservation is the observed state of a DNS record.
type DNSRecordObservation struct {
	// ID of the record (also its external-name).
	ID string `json:"id,omitempty"`
	// ZoneID of the zone the record is in.
	ZoneID string `json:"zoneId,omitempty"`
	// ZoneName of the zone the record is in.
	ZoneName string `json:"zoneName,omitempty"`
	// Name as Cloudflare stores it.
	Name string `json:"name,omitempty"`
	// Proxied as Cloudflare reports it.
	Proxied bool `json:"proxied,omitempty"`
	// TTL as Cloudflare reports it.
	TTL int64 `json:"ttl,omitempty"`
	// CreatedOn is when the record was created.
	CreatedOn *metav1.Time `json:"createdOn,omitempty"`
	// ModifiedOn is when the record last changed.
	ModifiedOn *metav1.Time `json:"modifiedOn,omitempty"`
}

// A DNSRecordSpec defines the desired state of a DNSRecord.
// +kubebuilder:validation:XValidation:rule="!has(self.providerConfigRef) || self.providerConfigRef.kind in ['ProviderConfig', 'ClusterProviderConfig']",message="providerConfigRef.kind is ProviderConfig or ClusterProviderConfig"
type DNSRecordSpec struct {
	xpv2.ManagedResourceSpec `json:",inline"`
	ForProvider              DNSRecordParameters `json:"forProvider"`
}

// A DNSRecordStatus represents the observed state of a DNSRecord.
type DNSRecordStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	AtProvider                 DNSRecordObservation `json:"atProvider,omitempty"`
}

// +kubebuilder:object:root=true

// A DNSRecord is a DNS record in a Cloudflare zone. Records it creates carry
// an ownership marker in their comment; it never overwrites or deletes a
// record it did not create unless that record was explicitly imported by
// setting its ID as the external-name.
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="SYNCED",type="string",JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="EXTERNAL-NAME",type="string",JSONPath=".metadata.annotations.crossplane\\.io/external-name"
// +kubebuilder:printcolumn:name="NAME",type="string",JSONPath=".spec.forProvider.name"
// +kubebuilder:printcolumn:name="TYPE",type="string",JSONPath=".spec.forProvider.type"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,categories={crossplane,managed,cloudflare}
type DNSRecord struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   DNSRecordSpec   `json:"spec"`
	Status DNSRecordStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// DNSRecordList contains a list of DNSRecord.
type DNSRecordList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []DNSRecord `json:"items"`
}
