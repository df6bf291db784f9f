package v1alpha1

import xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

// Condition types of a PublicHostname besides Ready, which the sources that
// make PublicHostnames read.
const (
	// TypeValid: the spec resolves to rules the tunnel can publish.
	TypeValid xpv2.ConditionType = "Valid"
	// TypeAccepted: the CloudflareTunnel publishes the hostname for this
	// PublicHostname (its answer in status.tunnel).
	TypeAccepted xpv2.ConditionType = "Accepted"
	// TypeDNSReady: the hostname's DNS points at the tunnel.
	TypeDNSReady xpv2.ConditionType = "DNSReady"
)

// Reasons of a PublicHostname's conditions that the sources above it decide
// on.
const (
	// ReasonHostnameConflict (Accepted=False): the tunnel publishes the
	// hostname for an older claim; this one waits in line.
	ReasonHostnameConflict xpv2.ConditionReason = "HostnameConflict"
	// ReasonWaitingForTunnel (Accepted=False): the tunnel has not answered
	// the claim yet; a source's private route for the hostname waits.
	ReasonWaitingForTunnel xpv2.ConditionReason = "WaitingForTunnel"
	// ReasonDNSReady (DNSReady=True): the DNS record is in Cloudflare.
	ReasonDNSReady xpv2.ConditionReason = "RecordReady"
	// ReasonDNSRefused (DNSReady=False, and Valid=False): the DNS record
	// was refused for a reason its DNSRecord does not type. A typed
	// refusal carries the DNSRecord's own Synced reason instead (the
	// reasons of package apis/common: NameTaken, Conflict, NotAllowed,
	// CloudflareRefused).
	ReasonDNSRefused xpv2.ConditionReason = "RecordRefused"
)

// ReasonTunnelNameTaken (a CloudflareTunnel's Ready=False): its Cloudflare
// tunnel name is someone else's tunnel; spec.tunnelName is immutable, so it
// stays so until the CloudflareTunnel is made anew.
const ReasonTunnelNameTaken xpv2.ConditionReason = "TunnelNameTaken"
