// Package poolhealth decides what Cloudflare's pool health means for the
// status of a LoadBalancerPool (Pool) and of a LoadBalancer (Serving):
// pure functions of what the pool health endpoint reported.
package poolhealth

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/loadbalancing/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
)

// Pool is what a pool's status says of the health Cloudflare reports:
// the summary (nil when Cloudflare reports none) and the Healthy
// condition. An origin is healthy when every region finds it so; its
// failure reason and response code come from the first region that does
// not (or the first region, when all do).
func Pool(h *cloudflare.PoolHealth) (*v1alpha1.PoolHealth, xpv2.Condition) {
	if h == nil || len(h.Regions) == 0 {
		return nil, HealthUnknown("Cloudflare reports no health for this pool: a pool without a monitor is never probed, and a new one not yet")
	}
	out := &v1alpha1.PoolHealth{Healthy: true, Origins: origins(h.Regions)}
	healthyRegions := 0
	for _, r := range h.Regions {
		if r.Healthy {
			healthyRegions++
			continue
		}
		out.Healthy = false
		if r.Region != "" {
			out.UnhealthyRegions = append(out.UnhealthyRegions, r.Region)
		}
	}
	switch {
	case out.Healthy:
		return out, condition(corev1.ConditionTrue, v1alpha1.ReasonPoolHealthy, "Cloudflare's monitors find the pool healthy")
	case healthyRegions > 0:
		return out, condition(corev1.ConditionFalse, v1alpha1.ReasonPoolDegraded, fmt.Sprintf("unhealthy in %s (their traffic goes to the next pool); %s", strings.Join(out.UnhealthyRegions, ", "), failures(out.Origins)))
	}
	return out, condition(corev1.ConditionFalse, v1alpha1.ReasonPoolUnhealthy, "fewer healthy origins than minimumOrigins: "+failures(out.Origins))
}

// HealthUnknown is the Healthy condition while the health is not known.
func HealthUnknown(why string) xpv2.Condition {
	return condition(corev1.ConditionUnknown, v1alpha1.ReasonHealthUnknown, why)
}

func condition(s corev1.ConditionStatus, r xpv2.ConditionReason, msg string) xpv2.Condition {
	return xpv2.Condition{Type: v1alpha1.TypeHealthy, Status: s, Reason: r, Message: msg, LastTransitionTime: metav1.Now()}
}

// origins merges each origin's verdicts over the regions, in the order
// the origins first appear.
func origins(regions []cloudflare.RegionHealth) []v1alpha1.OriginHealth {
	var out []v1alpha1.OriginHealth
	at := map[string]int{}
	for _, r := range regions {
		for _, o := range r.Origins {
			i, seen := at[o.Address]
			if !seen {
				at[o.Address] = len(out)
				out = append(out, v1alpha1.OriginHealth{Address: o.Address, Healthy: o.Healthy, FailureReason: failureReason(o), ResponseCode: o.ResponseCode})
				continue
			}
			if out[i].Healthy && !o.Healthy {
				out[i] = v1alpha1.OriginHealth{Address: o.Address, FailureReason: failureReason(o), ResponseCode: o.ResponseCode}
			}
		}
	}
	return out
}

// failureReason keeps Cloudflare's reason for an unhealthy origin only: a
// healthy one's is "No failures".
func failureReason(o cloudflare.OriginHealth) string {
	if o.Healthy {
		return ""
	}
	return o.FailureReason
}

func failures(origins []v1alpha1.OriginHealth) string {
	var parts []string
	for _, o := range origins {
		if o.Healthy {
			continue
		}
		part := o.Address
		if o.FailureReason != "" {
			part += ": " + o.FailureReason
		}
		if o.ResponseCode != nil {
			part += fmt.Sprintf(" (HTTP %d)", *o.ResponseCode)
		}
		parts = append(parts, part)
	}
	if len(parts) == 0 {
		return "no origin is reported unhealthy"
	}
	return "unhealthy origins: " + strings.Join(parts, "; ")
}
