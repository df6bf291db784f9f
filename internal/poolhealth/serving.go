package poolhealth

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/loadbalancing/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
)

// LoadBalancer is what Serving decides from: the load balancer's pools
// and steering, and each pool's health by ID (absent or nil: not known).
type LoadBalancer struct {
	DefaultPools   []string
	FallbackPool   string
	SteeringPolicy string
	Health         map[string]*cloudflare.PoolHealth
}

// Served is which pools serve the load balancer's traffic now.
type Served struct {
	// Pool serves everywhere: with steering off, the first default pool
	// healthy in every region, every earlier one unhealthy in every
	// region; under any policy, the fallback pool when no default pool
	// is healthy anywhere. "" when that is not derived.
	Pool string
	// HealthyPools are the default pools healthy in every region, in
	// order.
	HealthyPools []string
	// FallbackRegions are the regions where no default pool is healthy.
	FallbackRegions []string
}

// Serving derives which pool serves from the pools' health, and the
// Healthy condition: False when the fallback pool serves (everywhere:
// ServingFromFallback; in some regions: PartlyServingFromFallback), True
// when a default pool serves everywhere, Unknown while a default pool's
// health is not known and no default pool is healthy. A region where a
// pool reports nothing counts that pool unhealthy there.
func Serving(lb LoadBalancer) (Served, xpv2.Condition) {
	var out Served
	unknown := []string{}
	for _, id := range lb.DefaultPools {
		switch h := lb.Health[id]; {
		case h == nil || len(h.Regions) == 0:
			unknown = append(unknown, id)
		case healthyEverywhere(h):
			out.HealthyPools = append(out.HealthyPools, id)
		}
	}
	if len(out.HealthyPools) > 0 {
		out.Pool = firstInOrder(lb, out.HealthyPools[0])
		return out, condition(corev1.ConditionTrue, v1alpha1.ReasonServingFromDefaultPool, "default pools healthy everywhere: "+strings.Join(out.HealthyPools, ", "))
	}
	if len(unknown) > 0 {
		return out, HealthUnknown("no default pool is known healthy, and Cloudflare reports no health for " + strings.Join(unknown, ", "))
	}
	regions, fallback := fallbackRegions(lb)
	if len(regions) == 0 {
		return out, HealthUnknown("the load balancer has no default pool")
	}
	out.FallbackRegions = named(fallback)
	if len(fallback) == 0 {
		return out, condition(corev1.ConditionTrue, v1alpha1.ReasonServingFromDefaultPool, "every region has a healthy default pool, though none is healthy in all")
	}
	if len(fallback) < len(regions) {
		return out, condition(corev1.ConditionFalse, v1alpha1.ReasonPartlyServingFromFallback, fmt.Sprintf("no default pool is healthy in %s: the fallback pool %s serves there", strings.Join(out.FallbackRegions, ", "), lb.FallbackPool))
	}
	out.Pool = lb.FallbackPool
	return out, condition(corev1.ConditionFalse, v1alpha1.ReasonServingFromFallback, fmt.Sprintf("every default pool is unhealthy: the fallback pool %s serves, healthy or not", lb.FallbackPool))
}

// firstInOrder is pool when steering is off and it is the first default
// pool not unhealthy everywhere; else "" (another policy chooses among the
// healthy pools by latency, geography or chance, and a pool healthy in
// some regions serves those).
func firstInOrder(lb LoadBalancer, pool string) string {
	if lb.SteeringPolicy != "" && lb.SteeringPolicy != "off" {
		return ""
	}
	for _, id := range lb.DefaultPools {
		if id == pool {
			return pool
		}
		if h := lb.Health[id]; h == nil || len(h.Regions) == 0 || healthySomewhere(h) {
			return ""
		}
	}
	return ""
}

func healthyEverywhere(h *cloudflare.PoolHealth) bool {
	return !slices.ContainsFunc(h.Regions, func(r cloudflare.RegionHealth) bool { return !r.Healthy })
}

func healthySomewhere(h *cloudflare.PoolHealth) bool {
	return slices.ContainsFunc(h.Regions, func(r cloudflare.RegionHealth) bool { return r.Healthy })
}

// fallbackRegions are every region a default pool reports, sorted, and
// those where none is healthy.
func fallbackRegions(lb LoadBalancer) (all, fallback []string) {
	healthy := map[string]bool{}
	for _, id := range lb.DefaultPools {
		for _, r := range lb.Health[id].Regions {
			healthy[r.Region] = healthy[r.Region] || r.Healthy
		}
	}
	for r, ok := range healthy {
		all = append(all, r)
		if !ok {
			fallback = append(fallback, r)
		}
	}
	slices.Sort(all)
	slices.Sort(fallback)
	return all, fallback
}

// named drops the unnamed region of an answer that names none.
func named(regions []string) []string {
	return slices.DeleteFunc(slices.Clone(regions), func(r string) bool { return r == "" })
}
