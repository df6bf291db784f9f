package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
)

var (
	descPoolHealthy = prometheus.NewDesc("cloudflare_tunnel_load_balancer_pool_healthy",
		"1 when Cloudflare's monitors find the LoadBalancerPool healthy in every region, 0 when not; absent while Cloudflare reports no health for it.",
		[]string{"namespace", "name"}, nil)
	descOnFallback = prometheus.NewDesc("cloudflare_tunnel_load_balancer_on_fallback",
		"1 when no default pool of the LoadBalancer is healthy in some region, so its fallback pool serves there; 0 when a default pool serves everywhere; absent while the pools' health is not known.",
		[]string{"namespace", "name"}, nil)
)

// SetPoolHealthy records a LoadBalancerPool's health; known false drops
// its series (nothing to alert on while Cloudflare reports nothing).
func (m *Metrics) SetPoolHealthy(name types.NamespacedName, healthy, known bool) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	setOrForget(m.poolHealthy, name, healthy, known)
}

// SetOnFallback records whether a LoadBalancer's fallback pool serves;
// known false drops its series.
func (m *Metrics) SetOnFallback(name types.NamespacedName, onFallback, known bool) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	setOrForget(m.onFallback, name, onFallback, known)
}

func setOrForget(m map[types.NamespacedName]bool, name types.NamespacedName, v, known bool) {
	if !known {
		delete(m, name)
		return
	}
	m[name] = v
}

func (m *Metrics) collectLoadBalancing(ch chan<- prometheus.Metric) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for name, healthy := range m.poolHealthy {
		ch <- prometheus.MustNewConstMetric(descPoolHealthy, prometheus.GaugeValue, one(healthy), name.Namespace, name.Name)
	}
	for name, on := range m.onFallback {
		ch <- prometheus.MustNewConstMetric(descOnFallback, prometheus.GaugeValue, one(on), name.Namespace, name.Name)
	}
}

func one(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
