package annotation

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"k8s.io/utils/ptr"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
)

// The limits of spec.loadBalancing, checked here as the API server checks
// them on a PublicHostname, so a bad annotation is a Problem naming it
// rather than a PublicHostname the API server refuses.
var (
	poolName      = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,100}$`)
	expectedCodes = regexp.MustCompile(`^[1-5]([0-9]{2}|xx)$`)
)

const (
	maxPools        = 20
	maxMonitorPath  = 1024
	minIntervalSecs = 5
	maxIntervalSecs = 3600
)

// unbalanced ends every load-balancing problem: what is kept meanwhile.
const unbalanced = "; nothing new is published for the hostname until it is corrected (what it publishes stays)"

// HasLoadBalancing says whether any lb-* annotation is present.
func HasLoadBalancing(ann map[string]string) bool {
	for _, k := range v1alpha1.LBAnnotations {
		if _, ok := ann[k]; ok {
			return true
		}
	}
	return false
}

// LoadBalancing parses the lb-* annotations into a PublicHostname's
// spec.loadBalancing: lb-pool (required once any is present) names this
// cluster's pool; lb-monitor-path, -connector-only, -expected-codes and
// -interval its probe; lb-pools, lb-fallback-pool and lb-steering the load
// balancer this cluster makes. Nil with no Problem: no lb-* annotation.
// Nil with a Problem: one cannot be used, and the caller publishes nothing
// new, as for any bad annotation — never the hostname with a CNAME instead
// of the load balancer asked for, or without the pool.
func (r *Reader) LoadBalancing() *v1alpha1.LoadBalancing {
	if !HasLoadBalancing(r.ann) {
		return nil
	}
	before := len(r.Problems)
	lb := &v1alpha1.LoadBalancing{Pool: r.pool()}
	lb.Monitor = r.monitor()
	lb.LoadBalancer = r.loadBalancer(lb.Pool)
	if len(r.Problems) > before {
		return nil
	}
	return lb
}

// pool is lb-pool; "" with a Problem when it is missing or bad.
func (r *Reader) pool() string {
	v, ok := r.ann[v1alpha1.AnnotationLBPool]
	if !ok {
		r.problem(v1alpha1.AnnotationLBPool, "required with the other lb-* annotations: the name of this cluster's pool, unique in the account"+unbalanced)
		return ""
	}
	name := strings.TrimSpace(v)
	if !poolName.MatchString(name) {
		r.problem(v1alpha1.AnnotationLBPool, "%s is not a pool name (1-100 letters, digits, '_', '.' and '-')"+unbalanced, publish.Clip(v))
		return ""
	}
	return name
}

// monitor is the lb-monitor-* annotations; nil when none is set.
func (r *Reader) monitor() *v1alpha1.HostnameMonitor {
	m := &v1alpha1.HostnameMonitor{}
	if v, ok := r.ann[v1alpha1.AnnotationLBMonitorPath]; ok {
		p := strings.TrimSpace(v)
		if !strings.HasPrefix(p, "/") || len(p) > maxMonitorPath || strings.ContainsFunc(p, func(c rune) bool { return c <= ' ' || c == 0x7f }) {
			r.problem(v1alpha1.AnnotationLBMonitorPath, "%s is not a path to probe (it starts with '/', has no spaces, at most %d characters)"+unbalanced, publish.Clip(v), maxMonitorPath)
		} else {
			m.Path = ptr.To(p)
		}
	}
	if v, ok := r.ann[v1alpha1.AnnotationLBMonitorExpectedCodes]; ok {
		c := strings.ToLower(strings.TrimSpace(v))
		if !expectedCodes.MatchString(c) {
			r.problem(v1alpha1.AnnotationLBMonitorExpectedCodes, "%s is not an HTTP status code or range such as 200 or 2xx"+unbalanced, publish.Clip(v))
		} else {
			m.ExpectedCodes = ptr.To(c)
		}
	}
	m.Interval = r.interval()
	if _, ok := r.ann[v1alpha1.AnnotationLBMonitorConnectorOnly]; ok {
		only := r.Bool(v1alpha1.AnnotationLBMonitorConnectorOnly)
		m.ConnectorOnly = ptr.Deref(only, false)
		if m.ConnectorOnly && !hasKey(r.ann, v1alpha1.AnnotationLBMonitorPath) {
			r.problem(v1alpha1.AnnotationLBMonitorConnectorOnly, "needs %s: the path cloudflared answers itself for the probe (a path the application does not serve, such as /cf-probe)"+unbalanced, v1alpha1.AnnotationLBMonitorPath)
		}
	}
	if *m == (v1alpha1.HostnameMonitor{}) {
		return nil
	}
	return m
}

// interval is lb-monitor-interval: a duration ("30s", "1m") or a number of
// seconds, whole seconds from 5 to 3600.
func (r *Reader) interval() *int64 {
	v, ok := r.ann[v1alpha1.AnnotationLBMonitorInterval]
	if !ok {
		return nil
	}
	s := strings.TrimSpace(v)
	d, err := time.ParseDuration(s)
	if err != nil {
		d, err = time.ParseDuration(s + "s")
	}
	if err != nil || d%time.Second != 0 || d < minIntervalSecs*time.Second || d > maxIntervalSecs*time.Second {
		r.problem(v1alpha1.AnnotationLBMonitorInterval, "must be a whole number of seconds from 5s to 3600s (for example \"30s\"), not %s"+unbalanced, publish.Clip(v))
		return nil
	}
	return ptr.To(int64(d / time.Second))
}

// loadBalancer is lb-pools with lb-fallback-pool and lb-steering; nil when
// lb-pools is absent (another cluster holds the load balancer), and then
// the other two are Problems.
func (r *Reader) loadBalancer(own string) *v1alpha1.HostnameLoadBalancer {
	list, ok := r.ann[v1alpha1.AnnotationLBPools]
	if !ok {
		for _, k := range []string{v1alpha1.AnnotationLBFallbackPool, v1alpha1.AnnotationLBSteering} {
			if hasKey(r.ann, k) {
				r.problem(k, "set only with %s, in the one cluster that makes the load balancer"+unbalanced, v1alpha1.AnnotationLBPools)
			}
		}
		return nil
	}
	lb := &v1alpha1.HostnameLoadBalancer{Pools: r.pools(list, own)}
	if v, ok := r.ann[v1alpha1.AnnotationLBFallbackPool]; ok {
		name := strings.TrimSpace(v)
		if !slices.Contains(lb.Pools, name) {
			r.problem(v1alpha1.AnnotationLBFallbackPool, "%s is not one of %s"+unbalanced, publish.Clip(v), v1alpha1.AnnotationLBPools)
		}
		lb.FallbackPool = ptr.To(name)
	}
	if v, ok := r.ann[v1alpha1.AnnotationLBSteering]; ok {
		policy := strings.ToLower(strings.TrimSpace(v))
		if !slices.Contains(v1alpha1.SteeringPolicies, policy) {
			r.problem(v1alpha1.AnnotationLBSteering, "must be one of %s, not %s"+unbalanced, strings.Join(v1alpha1.SteeringPolicies, ", "), publish.Clip(v))
		}
		lb.SteeringPolicy = ptr.To(policy)
	}
	return lb
}

// pools reads lb-pools: pool names, comma-separated, in failover order,
// each once, this cluster's own among them.
func (r *Reader) pools(list, own string) []string {
	var pools []string
	for _, name := range strings.Split(list, ",") {
		if name = strings.TrimSpace(name); name == "" {
			continue
		}
		switch {
		case !poolName.MatchString(name):
			r.problem(v1alpha1.AnnotationLBPools, "%s is not a pool name (1-100 letters, digits, '_', '.' and '-')"+unbalanced, publish.Clip(name))
		case slices.Contains(pools, name):
			r.problem(v1alpha1.AnnotationLBPools, "names %s twice: a load balancer lists each pool once"+unbalanced, publish.Clip(name))
		default:
			pools = append(pools, name)
		}
	}
	switch {
	case len(pools) > maxPools:
		r.problem(v1alpha1.AnnotationLBPools, "names %d pools, more than the %d a load balancer takes"+unbalanced, len(pools), maxPools)
	case own != "" && !slices.Contains(pools, own):
		r.problem(v1alpha1.AnnotationLBPools, "must list this cluster's own pool %s (%s) among the pools, in its place in the failover order"+unbalanced, own, v1alpha1.AnnotationLBPool)
	}
	return pools
}

func hasKey(ann map[string]string, k string) bool {
	_, ok := ann[k]
	return ok
}

// maxLoadBalancedHostname is the longest hostname a PublicHostname may
// load-balance: its pool's description names it.
const maxLoadBalancedHostname = 190

// LoadBalancedHostnames says why the hostnames a source publishes cannot
// be load-balanced under one pool, "" when they can: exactly one (a pool
// serves one hostname), not a wildcard (a load balancer holds one name),
// short enough for the pool's description. kind names the source.
func LoadBalancedHostnames(hosts []string, kind string) string {
	switch {
	case len(hosts) != 1:
		return fmt.Sprintf("the %s publishes %d hostnames (%s), and a pool serves one: load-balance one hostname per %s", kind, len(hosts), publish.Clip(strings.Join(hosts, ", ")), kind)
	case strings.HasPrefix(hosts[0], "*"):
		return fmt.Sprintf("%s is a wildcard, which a load balancer cannot hold: name the hostname", publish.Clip(hosts[0]))
	case len(hosts[0]) > maxLoadBalancedHostname:
		return fmt.Sprintf("hostname %s is longer than the %d characters a load-balanced hostname may have (its pool's description names it)", publish.Clip(hosts[0]), maxLoadBalancedHostname)
	}
	return ""
}

// RouteLoadBalancing is the load balancing a Gateway API route's lb-*
// annotations ask for its hostnames (the routes of a native Gateway and
// those a GatewayBinding publishes read them alike), or why they cannot be
// used: an annotation that cannot be used, or hostnames that cannot be
// load-balanced (LoadBalancedHostnames). A route with a problem publishes
// nothing new, and what its hostnames publish stays as it is: never a
// CNAME instead of the load balancer asked for, nor a working hostname
// taken down by a typo.
func RouteLoadBalancing(ann map[string]string, hosts []string) (*v1alpha1.LoadBalancing, string) {
	r := Read(ann)
	lb := r.LoadBalancing()
	if problem := r.ProblemText(); problem != "" {
		return nil, problem
	}
	if lb == nil || len(hosts) == 0 {
		return lb, ""
	}
	if why := LoadBalancedHostnames(hosts, "route"); why != "" {
		return nil, fmt.Sprintf("annotation %s: %s; nothing of the route is published, and its hostnames stay as they are published", v1alpha1.AnnotationLBPool, why)
	}
	return lb, ""
}
