// Package metrics holds the provider's own Prometheus metrics beyond
// crossplane-runtime's managed-resource metrics and the Cloudflare request
// budget's (internal/clients/cloudflare/budget): what the sources translate,
// how the tunnels' configuration writes are coalesced, and which published
// hostnames Cloudflare Access guards. docs/metrics.md
// documents every metric the provider serves.
//
// Every method is safe on a nil receiver and then does nothing, so
// controllers set up without metrics (most tests) need no stand-in.
package metrics

import (
	"sort"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
)

// SourceState is what became of one source object (an Ingress, a Service, a
// GatewayBinding) the last time it was translated.
type SourceState string

// Source states.
const (
	// SourceTranslated: everything it asks for is written to the layer below.
	SourceTranslated SourceState = "translated"
	// SourceConflict: a hostname or object it wants belongs to another source
	// or was not made for it, and is left alone.
	SourceConflict SourceState = "conflict"
	// SourceProblem: invalid or incomplete input (an annotation, a
	// reference, a missing tunnel); a Warning event says what to fix.
	SourceProblem SourceState = "problem"
)

// StateOf is a source's state: a problem outranks a conflict, which
// outranks translated.
func StateOf(problem, conflict bool) SourceState {
	switch {
	case problem:
		return SourceProblem
	case conflict:
		return SourceConflict
	default:
		return SourceTranslated
	}
}

// HostnameAccess is what guards one PublicHostname's rules.
type HostnameAccess string

// Hostname Access states.
const (
	// HostnameOther: neither (no required Access check asked for, or not
	// published for another reason). Not counted.
	HostnameOther HostnameAccess = "other"
	// HostnameProtected: its rules are published with a required Access
	// check.
	HostnameProtected HostnameAccess = "protected"
	// HostnameWaitingForAccess: it asks for a managed Access check whose
	// AccessPolicy or AccessApplication does not exist yet, so it is not
	// published (it fails closed).
	HostnameWaitingForAccess HostnameAccess = "waiting"
)

// Metrics are the provider's own metrics. Make one with New and register
// it once.
type Metrics struct {
	mu      sync.Mutex
	sources map[sourceKey]SourceState
	kinds   map[string]bool // every kind ever seen, so its counts fall to zero rather than vanish
	access  map[types.NamespacedName]HostnameAccess
	// poolHealthy and onFallback are per LoadBalancerPool and
	// LoadBalancer, while their health is known (loadbalancing.go).
	poolHealthy map[types.NamespacedName]bool
	onFallback  map[types.NamespacedName]bool

	configWrites *prometheus.CounterVec
	configHeld   prometheus.Counter
}

type sourceKey struct {
	kind string
	name types.NamespacedName
}

var descSources = prometheus.NewDesc("cloudflare_tunnel_sources",
	"Source objects (Ingress, Service, GatewayBinding, and the HTTPRoutes and GRPCRoutes of native Gateways) the provider translates, by kind and by what became of them the last time: translated, conflict or problem.",
	[]string{"kind", "state"}, nil)

var (
	descProtected = prometheus.NewDesc("cloudflare_tunnel_public_hostnames_protected",
		"PublicHostnames whose rules are published with a required Cloudflare Access check.", nil, nil)
	descWaitingForAccess = prometheus.NewDesc("cloudflare_tunnel_public_hostnames_waiting_for_access",
		"PublicHostnames not published because the AccessPolicy or the Access application their check needs does not exist yet.", nil, nil)
)

// New returns the provider's metrics.
func New() *Metrics {
	m := &Metrics{
		sources:     map[sourceKey]SourceState{},
		kinds:       map[string]bool{},
		access:      map[types.NamespacedName]HostnameAccess{},
		poolHealthy: map[types.NamespacedName]bool{},
		onFallback:  map[types.NamespacedName]bool{},
		configWrites: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cloudflare_tunnel_configuration_writes_total",
			Help: "Writes of a tunnel's remote configuration (its published hostnames) to Cloudflare, by outcome (success, error).",
		}, []string{"outcome"}),
		configHeld: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "cloudflare_tunnel_configuration_changes_coalesced_total",
			Help: "Writes of a tunnel's configuration held back by the batch window so that the changes arriving meanwhile go out in that one write.",
		}),
	}
	// Both outcomes exist from the start: an alert on errors without
	// successes must see a success count of zero, not no series at all.
	for _, o := range []string{"success", "error"} {
		m.configWrites.WithLabelValues(o)
	}
	return m
}

// SetSource records what became of a source object.
func (m *Metrics) SetSource(kind string, name types.NamespacedName, s SourceState) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sources[sourceKey{kind, name}] = s
	m.kinds[kind] = true
}

// ForgetSource drops a source object that is gone or no longer ours.
func (m *Metrics) ForgetSource(kind string, name types.NamespacedName) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.sources, sourceKey{kind, name})
}

// SetHostnameAccess records what guards a PublicHostname.
func (m *Metrics) SetHostnameAccess(name types.NamespacedName, a HostnameAccess) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.access[name] = a
}

// ForgetHostname drops a PublicHostname that is gone or being deleted.
func (m *Metrics) ForgetHostname(name types.NamespacedName) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.access, name)
}

// ConfigurationWritten counts one write of a tunnel's configuration.
func (m *Metrics) ConfigurationWritten(err error) {
	if m == nil {
		return
	}
	outcome := "success"
	if err != nil {
		outcome = "error"
	}
	m.configWrites.WithLabelValues(outcome).Inc()
}

// ConfigurationHeld counts a configuration change held back by the batch
// window.
func (m *Metrics) ConfigurationHeld() {
	if m == nil {
		return
	}
	m.configHeld.Inc()
}

// Describe implements prometheus.Collector.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	ch <- descSources
	ch <- descProtected
	ch <- descWaitingForAccess
	ch <- descPoolHealthy
	ch <- descOnFallback
	m.configWrites.Describe(ch)
	m.configHeld.Describe(ch)
}

// Collect implements prometheus.Collector. Every state of every kind ever
// seen is reported, zeros included, so a count that falls to zero (the last
// Ingress deleted) reads as zero rather than vanishing.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	m.configWrites.Collect(ch)
	m.configHeld.Collect(ch)
	for _, c := range m.sourceCounts() {
		ch <- prometheus.MustNewConstMetric(descSources, prometheus.GaugeValue, float64(c.n), c.kind, string(c.state))
	}
	// Both always, zeros included: an alert on waiting hostnames must see
	// zero, not no series.
	counts := m.accessCounts()
	ch <- prometheus.MustNewConstMetric(descProtected, prometheus.GaugeValue, float64(counts[HostnameProtected]))
	ch <- prometheus.MustNewConstMetric(descWaitingForAccess, prometheus.GaugeValue, float64(counts[HostnameWaitingForAccess]))
	m.collectLoadBalancing(ch)
}

func (m *Metrics) accessCounts() map[HostnameAccess]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[HostnameAccess]int{}
	for _, a := range m.access {
		out[a]++
	}
	return out
}

type sourceCount struct {
	kind  string
	state SourceState
	n     int
}

func (m *Metrics) sourceCounts() []sourceCount {
	m.mu.Lock()
	counts := map[string]map[SourceState]int{}
	for kind := range m.kinds {
		counts[kind] = map[SourceState]int{}
	}
	for k, s := range m.sources {
		counts[k.kind][s]++
	}
	m.mu.Unlock()
	var out []sourceCount
	for kind, byState := range counts {
		for _, s := range []SourceState{SourceTranslated, SourceConflict, SourceProblem} {
			out = append(out, sourceCount{kind: kind, state: s, n: byState[s]})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].kind != out[j].kind {
			return out[i].kind < out[j].kind
		}
		return out[i].state < out[j].state
	})
	return out
}
