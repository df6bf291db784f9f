package poolhealth

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/loadbalancing/v1alpha1"
	cf "github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
)

func up(addr string) cf.OriginHealth {
	return cf.OriginHealth{Address: addr, Healthy: true, FailureReason: "No failures", ResponseCode: ptr.To[int64](200)}
}

func down(addr, why string, code *int64) cf.OriginHealth {
	return cf.OriginHealth{Address: addr, FailureReason: why, ResponseCode: code}
}

func region(name string, healthy bool, origins ...cf.OriginHealth) cf.RegionHealth {
	return cf.RegionHealth{Region: name, Healthy: healthy, Origins: origins}
}

func pool(regions ...cf.RegionHealth) *cf.PoolHealth {
	return &cf.PoolHealth{PoolID: "p", Regions: regions}
}

func TestPool(t *testing.T) {
	type want struct {
		health *v1alpha1.PoolHealth
		status corev1.ConditionStatus
		reason xpv2.ConditionReason
	}
	for name, c := range map[string]struct {
		in   *cf.PoolHealth
		want want
	}{
		"nothing read": {nil, want{nil, corev1.ConditionUnknown, v1alpha1.ReasonHealthUnknown}},
		"never probed": {pool(), want{nil, corev1.ConditionUnknown, v1alpha1.ReasonHealthUnknown}},
		"healthy": {pool(region("", true, up("a"), down("b", "HTTP timeout", nil))), want{
			&v1alpha1.PoolHealth{Healthy: true, Origins: []v1alpha1.OriginHealth{{Address: "a", Healthy: true, ResponseCode: ptr.To[int64](200)}, {Address: "b", FailureReason: "HTTP timeout"}}},
			corev1.ConditionTrue, v1alpha1.ReasonPoolHealthy}},
		"unhealthy, the reason and code kept": {pool(region("", false, down("a", "Response code mismatch error", ptr.To[int64](503)))), want{
			&v1alpha1.PoolHealth{Origins: []v1alpha1.OriginHealth{{Address: "a", FailureReason: "Response code mismatch error", ResponseCode: ptr.To[int64](503)}}},
			corev1.ConditionFalse, v1alpha1.ReasonPoolUnhealthy}},
		"degraded: one region of two": {pool(region("Amsterdam, NL", true, up("a")), region("Singapore, SG", false, down("a", "TCP connection failed", nil))), want{
			&v1alpha1.PoolHealth{UnhealthyRegions: []string{"Singapore, SG"}, Origins: []v1alpha1.OriginHealth{{Address: "a", FailureReason: "TCP connection failed"}}},
			corev1.ConditionFalse, v1alpha1.ReasonPoolDegraded}},
		"unhealthy in every region": {pool(region("Amsterdam, NL", false, down("a", "x", nil)), region("Singapore, SG", false, down("a", "y", nil))), want{
			&v1alpha1.PoolHealth{UnhealthyRegions: []string{"Amsterdam, NL", "Singapore, SG"}, Origins: []v1alpha1.OriginHealth{{Address: "a", FailureReason: "x"}}},
			corev1.ConditionFalse, v1alpha1.ReasonPoolUnhealthy}},
	} {
		t.Run(name, func(t *testing.T) {
			got, cond := Pool(c.in)
			if diff := cmp.Diff(c.want.health, got); diff != "" {
				t.Errorf("health (-want +got):\n%s", diff)
			}
			if cond.Type != v1alpha1.TypeHealthy || cond.Status != c.want.status || cond.Reason != c.want.reason || cond.Message == "" {
				t.Errorf("condition %+v, want %s/%s with a message", cond, c.want.status, c.want.reason)
			}
		})
	}
}

func TestPoolMessageNamesTheFailures(t *testing.T) {
	_, cond := Pool(pool(region("", false, down("t.cfargotunnel.com", "Response code mismatch error", ptr.To[int64](404)))))
	if want := "unhealthy origins: t.cfargotunnel.com: Response code mismatch error (HTTP 404)"; !cmp.Equal(cond.Message, "fewer healthy origins than minimumOrigins: "+want) {
		t.Errorf("message %q", cond.Message)
	}
}

func TestServing(t *testing.T) {
	healthy := pool(region("", true, up("a")))
	unhealthy := pool(region("", false, down("a", "x", nil)))
	ams := func(ok bool) cf.RegionHealth { return region("Amsterdam, NL", ok) }
	sin := func(ok bool) cf.RegionHealth { return region("Singapore, SG", ok) }
	for name, c := range map[string]struct {
		steering string
		health   map[string]*cf.PoolHealth
		want     Served
		status   corev1.ConditionStatus
		reason   xpv2.ConditionReason
	}{
		"the first pool serves": {"off", map[string]*cf.PoolHealth{"a": healthy, "b": healthy},
			Served{Pool: "a", HealthyPools: []string{"a", "b"}}, corev1.ConditionTrue, v1alpha1.ReasonServingFromDefaultPool},
		"the first down, the second serves": {"", map[string]*cf.PoolHealth{"a": unhealthy, "b": healthy},
			Served{Pool: "b", HealthyPools: []string{"b"}}, corev1.ConditionTrue, v1alpha1.ReasonServingFromDefaultPool},
		"every default pool down: the fallback": {"off", map[string]*cf.PoolHealth{"a": unhealthy, "b": unhealthy},
			Served{Pool: "fb"}, corev1.ConditionFalse, v1alpha1.ReasonServingFromFallback},
		"the fallback under random steering too": {"random", map[string]*cf.PoolHealth{"a": unhealthy, "b": unhealthy},
			Served{Pool: "fb"}, corev1.ConditionFalse, v1alpha1.ReasonServingFromFallback},
		"random steering: which healthy pool is not derived": {"random", map[string]*cf.PoolHealth{"a": healthy, "b": healthy},
			Served{HealthyPools: []string{"a", "b"}}, corev1.ConditionTrue, v1alpha1.ReasonServingFromDefaultPool},
		"the first unknown: the second may not serve": {"off", map[string]*cf.PoolHealth{"b": healthy},
			Served{HealthyPools: []string{"b"}}, corev1.ConditionTrue, v1alpha1.ReasonServingFromDefaultPool},
		"one unknown, the other down: unknown": {"off", map[string]*cf.PoolHealth{"a": pool(), "b": unhealthy},
			Served{}, corev1.ConditionUnknown, v1alpha1.ReasonHealthUnknown},
		"the first degraded: no single serving pool": {"off", map[string]*cf.PoolHealth{"a": pool(ams(true), sin(false)), "b": pool(ams(true), sin(true))},
			Served{HealthyPools: []string{"b"}}, corev1.ConditionTrue, v1alpha1.ReasonServingFromDefaultPool},
		"a region without a healthy default pool": {"off", map[string]*cf.PoolHealth{"a": pool(ams(true), sin(false)), "b": pool(ams(false), sin(false))},
			Served{FallbackRegions: []string{"Singapore, SG"}}, corev1.ConditionFalse, v1alpha1.ReasonPartlyServingFromFallback},
		"pools healthy in different regions only": {"off", map[string]*cf.PoolHealth{"a": pool(ams(true), sin(false)), "b": pool(ams(false), sin(true))},
			Served{}, corev1.ConditionTrue, v1alpha1.ReasonServingFromDefaultPool},
		"every region down": {"off", map[string]*cf.PoolHealth{"a": pool(ams(false), sin(false)), "b": pool(ams(false))},
			Served{Pool: "fb", FallbackRegions: []string{"Amsterdam, NL", "Singapore, SG"}}, corev1.ConditionFalse, v1alpha1.ReasonServingFromFallback},
	} {
		t.Run(name, func(t *testing.T) {
			got, cond := Serving(LoadBalancer{DefaultPools: []string{"a", "b"}, FallbackPool: "fb", SteeringPolicy: c.steering, Health: c.health})
			if diff := cmp.Diff(c.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("served (-want +got):\n%s", diff)
			}
			if cond.Type != v1alpha1.TypeHealthy || cond.Status != c.status || cond.Reason != c.reason || cond.Message == "" {
				t.Errorf("condition %+v, want %s/%s with a message", cond, c.status, c.reason)
			}
		})
	}
}
