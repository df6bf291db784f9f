package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
)

// TypeHealthy is the condition saying whether traffic reaches healthy
// origins: on a LoadBalancerPool, whether Cloudflare's monitors find the
// pool healthy; on a LoadBalancer, whether a default pool serves (False
// while traffic is on the fallback pool). Ready keeps meaning "exists as
// desired": a pool can be Ready and unhealthy.
const TypeHealthy xpv2.ConditionType = "Healthy"

// Reasons of the Healthy condition, which other layers (and alerts) read
// instead of the message.
const (
	// ReasonPoolHealthy: every region that probes the pool finds at least
	// minimumOrigins of its enabled origins healthy.
	ReasonPoolHealthy xpv2.ConditionReason = "PoolHealthy"
	// ReasonPoolDegraded: some regions find the pool healthy, others do
	// not; their traffic goes to the next pool.
	ReasonPoolDegraded xpv2.ConditionReason = "PoolDegraded"
	// ReasonPoolUnhealthy: no region finds the pool healthy.
	ReasonPoolUnhealthy xpv2.ConditionReason = "PoolUnhealthy"
	// ReasonHealthUnknown: Cloudflare reported no health (a pool without
	// a monitor is not probed, a new pool is not probed yet) or the
	// health could not be read.
	ReasonHealthUnknown xpv2.ConditionReason = "HealthUnknown"
	// ReasonServingFromDefaultPool: a default pool is healthy everywhere
	// it is probed, so the fallback pool serves nobody.
	ReasonServingFromDefaultPool xpv2.ConditionReason = "ServingFromDefaultPool"
	// ReasonServingFromFallback: in every region that reported, no
	// default pool is healthy: the fallback pool serves.
	ReasonServingFromFallback xpv2.ConditionReason = "ServingFromFallback"
	// ReasonPartlyServingFromFallback: in some regions no default pool is
	// healthy, and the fallback pool serves those.
	ReasonPartlyServingFromFallback xpv2.ConditionReason = "PartlyServingFromFallback"
)

// PoolHealth is a pool's health as Cloudflare's pool health endpoint
// reported it at the last poll.
type PoolHealth struct {
	// Healthy is true when every region that probes the pool finds it
	// healthy.
	Healthy bool `json:"healthy"`
	// UnhealthyRegions are the regions (Cloudflare's names) that find it
	// unhealthy.
	// +optional
	UnhealthyRegions []string `json:"unhealthyRegions,omitempty"`
	// Origins are the probed origins, by address.
	// +optional
	Origins []OriginHealth `json:"origins,omitempty"`
}

// OriginHealth is one origin's health, over every region that probes it.
type OriginHealth struct {
	// Address of the origin, as the pool holds it.
	Address string `json:"address"`
	// Healthy is true when every region finds it healthy.
	Healthy bool `json:"healthy"`
	// FailureReason Cloudflare gives, from the first region that finds it
	// unhealthy.
	// +optional
	FailureReason string `json:"failureReason,omitempty"`
	// ResponseCode of the last probe, from that region (or the first,
	// when healthy); unset when the probe got no HTTP answer.
	// +optional
	ResponseCode *int64 `json:"responseCode,omitempty"`
}
