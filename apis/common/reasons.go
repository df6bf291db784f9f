// Package common holds what the provider's API groups share: the reasons a
// managed resource (Tunnel, HostnameRoute, VPCService, DNSRecord,
// NetworkRoute, VirtualNetwork) gives for Synced=False. The composites and
// sources above the managed resources decide on these reasons, never on a
// condition's message.
package common

import xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

// Reasons of a managed resource's Synced=False. A failure none of them
// describes keeps crossplane-runtime's ReconcileError.
const (
	// ReasonNameTaken: an object with the resource's name or natural key
	// (a tunnel or VPC service name, a hostname's route, a DNS record)
	// exists in Cloudflare and was not created by this resource; it is
	// left alone.
	ReasonNameTaken xpv2.ConditionReason = "NameTaken"
	// ReasonConflict: another managed resource already holds the
	// Cloudflare object (or the one thing of the account, such as its
	// default virtual network) this resource asks for.
	ReasonConflict xpv2.ConditionReason = "Conflict"
	// ReasonNotAllowed: the provider config's guardrails or the tenancy
	// rules refuse what the resource asks for; nothing was written.
	ReasonNotAllowed xpv2.ConditionReason = "NotAllowed"
	// ReasonRateLimited: Cloudflare answered 429; the request is retried.
	ReasonRateLimited xpv2.ConditionReason = "RateLimited"
	// ReasonTransient: a failure a retry outlives: a Cloudflare server
	// error, a timeout, a network error.
	ReasonTransient xpv2.ConditionReason = "Transient"
	// ReasonUnresolvedReference: a reference the resource's Cloudflare
	// object depends on (a group or service token an Access rule names)
	// has no ID yet; nothing is written until it has, so a rule never
	// loses its meaning.
	ReasonUnresolvedReference xpv2.ConditionReason = "UnresolvedReference"
	// ReasonRefused: Cloudflare refused the request (a 4xx answer: an
	// invalid value, a missing permission).
	ReasonRefused xpv2.ConditionReason = "CloudflareRefused"
	// ReasonPermissionDenied: the API token may no longer read the
	// resource's Cloudflare object: Cloudflare's list of its kind leaves it
	// out (lists show only what a token may read, per tunnel since
	// 2026-05-21) and a get by ID is refused with 403. It is not taken for
	// deleted and nothing is created in its place; the message names the
	// permission to grant.
	ReasonPermissionDenied xpv2.ConditionReason = "PermissionDenied"
	// ReasonPolicyInUse: an AccessPolicy being deleted is still used by
	// Access applications; its deletion waits until they no longer use it.
	ReasonPolicyInUse xpv2.ConditionReason = "PolicyInUse"
	// ReasonDeletedInCloudflare: the Cloudflare object this resource made
	// and observed was deleted there (an AccessServiceToken, by hand or by
	// Cloudflare's cleanup of inactive tokens), and the resource is set to
	// wait for the user rather than make another.
	ReasonDeletedInCloudflare xpv2.ConditionReason = "DeletedInCloudflare"
	// ReasonInUse: an object being deleted is still used by others (a
	// Load Balancing monitor by pools, a pool by load balancers); its
	// deletion waits until they no longer use it.
	ReasonInUse xpv2.ConditionReason = "InUse"
	// ReasonUnsupported: the spec asks for something Cloudflare documents
	// as not working (a TCP monitor on tunnel origins); nothing is written
	// until it changes.
	ReasonUnsupported xpv2.ConditionReason = "Unsupported"
)

// Taken says whether a reason reports an object that is someone else's:
// waiting will not change it.
func Taken(r xpv2.ConditionReason) bool {
	return r == ReasonNameTaken || r == ReasonConflict
}

// Passing says whether a reason reports a failure that a retry outlives.
func Passing(r xpv2.ConditionReason) bool {
	return r == ReasonRateLimited || r == ReasonTransient
}
