package publichostname_test

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/common"
	lbv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/loadbalancing/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/composite/publichostname"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/handshake/target"
)

func lbHostname(mutate func(*v1alpha1.LoadBalancing)) *v1alpha1.PublicHostname {
	ph := hostname("team", "app", "app.example.com")
	ph.Spec.LoadBalancing = &v1alpha1.LoadBalancing{Pool: "app-eu"}
	if mutate != nil {
		mutate(ph.Spec.LoadBalancing)
	}
	return ph
}

var lbTarget = target.Target{Made: true, ID: "de5136fc-0000-4000-8000-000000000001", ProviderConfig: &xpv2.ProviderConfigReference{Kind: "ClusterProviderConfig", Name: "default"}}

func TestDesiredLoadBalancingChildren(t *testing.T) {
	ph := lbHostname(func(lb *v1alpha1.LoadBalancing) {
		lb.LoadBalancer = &v1alpha1.HostnameLoadBalancer{Pools: []string{"app-eu", "app-us"}, SteeringPolicy: ptr.To("random")}
	})
	mon := publichostname.DesiredMonitor(ph, lbTarget).Spec.ForProvider
	if mon.Type != "https" || ptr.Deref(mon.Path, "") != "/" || ptr.Deref(mon.Host, "") != "app.example.com" {
		t.Errorf("default monitor = %+v, want https / with Host app.example.com", mon)
	}
	pool := publichostname.DesiredPool(ph, lbTarget).Spec.ForProvider
	o := pool.Origins
	if pool.Name != "app-eu" || len(o) != 1 || ptr.Deref(o[0].TunnelID, "") != lbTarget.ID || ptr.Deref(o[0].Host, "") != "app.example.com" || pool.MonitorIDRef.Name != "app" {
		t.Errorf("pool = %+v, want app-eu of the tunnel with Host app.example.com and monitor app", pool)
	}
	if h, ok := lbv1alpha1.DescribedHostname(ptr.Deref(pool.Description, "")); !ok || h != "app.example.com" {
		t.Errorf("pool description %q does not name the hostname", ptr.Deref(pool.Description, ""))
	}
	lb := publichostname.DesiredLoadBalancer(ph, lbTarget).Spec.ForProvider
	if lb.Hostname != "app.example.com" || len(lb.PoolNames) != 2 || ptr.Deref(lb.FallbackPoolName, "") != "app-us" || ptr.Deref(lb.SteeringPolicy, "") != "random" || len(lb.DefaultPools) != 0 {
		t.Errorf("load balancer = %+v, want pools by name, fallback the last", lb)
	}
	ph.Spec.LoadBalancing.LoadBalancer.FallbackPool = ptr.To("app-eu")
	if fb := publichostname.DesiredLoadBalancer(ph, lbTarget).Spec.ForProvider.FallbackPoolName; ptr.Deref(fb, "") != "app-eu" {
		t.Errorf("fallback = %v, want the one named", fb)
	}
}

func TestWithConnectorProbe(t *testing.T) {
	cases := map[string]struct {
		monitor   *v1alpha1.HostnameMonitor
		wantProbe bool
	}{
		"no monitor":               {},
		"the application's answer": {monitor: &v1alpha1.HostnameMonitor{Path: ptr.To("/healthz")}},
		"connector only":           {monitor: &v1alpha1.HostnameMonitor{Path: ptr.To("/cf-probe"), ConnectorOnly: true}, wantProbe: true},
		"connector only, no path":  {monitor: &v1alpha1.HostnameMonitor{ConnectorOnly: true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ph := lbHostname(func(lb *v1alpha1.LoadBalancing) { lb.Monitor = tc.monitor })
			got := publichostname.WithConnectorProbe(ph.Spec)
			probe := len(got.Paths) == 1 && got.Paths[0].Path == "/cf-probe" && got.Paths[0].PathType == v1alpha1.PathTypeExact && ptr.Deref(got.Paths[0].Origin.URL, "") == "http_status:200"
			if probe != tc.wantProbe || (!tc.wantProbe && len(got.Paths) != 0) {
				t.Errorf("paths = %+v, want the probe rule: %t", got.Paths, tc.wantProbe)
			}
			if len(ph.Spec.Paths) != 0 {
				t.Error("the spec itself was changed")
			}
		})
	}
}

// made is a managed resource made in Cloudflare (external-name, Ready),
// with extra conditions.
func made[T resource.Managed](obj T, ok bool, cs ...xpv2.Condition) T {
	obj.SetName("app")
	if ok {
		meta.SetExternalName(obj, "id-1")
		obj.SetConditions(xpv2.Available(), xpv2.ReconcileSuccess())
	}
	obj.SetConditions(cs...)
	return obj
}

func TestLoadBalancedCondition(t *testing.T) {
	refused := xpv2.ReconcileError(errors.New("refused"))
	refused.Reason, refused.Message = common.ReasonNotAllowed, "not allowed: hostname app.example.com is held by DNS CNAME record r1"
	taken := xpv2.ReconcileError(errors.New("refused"))
	taken.Reason, taken.Message = common.ReasonNameTaken, "name taken: pool p1"
	passing := xpv2.ReconcileError(errors.New("refused"))
	passing.Reason = common.ReasonRateLimited
	notProven := xpv2.Condition{Type: lbv1alpha1.TypePoolsProven, Status: corev1.ConditionFalse, Reason: lbv1alpha1.ReasonPoolNotProven, Message: `pool "app-x": no pool of that name`}
	withLB := &v1alpha1.LoadBalancing{Pool: "app-eu", LoadBalancer: &v1alpha1.HostnameLoadBalancer{Pools: []string{"app-eu"}}}
	poolOnly := &v1alpha1.LoadBalancing{Pool: "app-eu"}
	cases := map[string]struct {
		spec      *v1alpha1.LoadBalancing
		mon       *lbv1alpha1.LoadBalancerMonitor
		pool      *lbv1alpha1.LoadBalancerPool
		lb        *lbv1alpha1.LoadBalancer
		want      xpv2.ConditionReason
		wantDNSOK bool
	}{
		"pool only, made":         {spec: poolOnly, mon: made(&lbv1alpha1.LoadBalancerMonitor{}, true), pool: made(&lbv1alpha1.LoadBalancerPool{}, true), want: v1alpha1.ReasonLoadBalanced, wantDNSOK: true},
		"pool waiting":            {spec: poolOnly, mon: made(&lbv1alpha1.LoadBalancerMonitor{}, true), pool: made(&lbv1alpha1.LoadBalancerPool{}, false), want: v1alpha1.ReasonWaitingForPool},
		"pool rate limited":       {spec: poolOnly, mon: made(&lbv1alpha1.LoadBalancerMonitor{}, true), pool: made(&lbv1alpha1.LoadBalancerPool{}, false, passing), want: v1alpha1.ReasonWaitingForPool},
		"pool name taken":         {spec: poolOnly, mon: made(&lbv1alpha1.LoadBalancerMonitor{}, true), pool: made(&lbv1alpha1.LoadBalancerPool{}, false, taken), want: v1alpha1.ReasonPoolRefused},
		"load balancer not yet":   {spec: withLB, mon: made(&lbv1alpha1.LoadBalancerMonitor{}, true), pool: made(&lbv1alpha1.LoadBalancerPool{}, true), want: v1alpha1.ReasonWaitingForLoadBalancer},
		"load balancer made":      {spec: withLB, mon: made(&lbv1alpha1.LoadBalancerMonitor{}, true), pool: made(&lbv1alpha1.LoadBalancerPool{}, true), lb: made(&lbv1alpha1.LoadBalancer{}, true), want: v1alpha1.ReasonLoadBalanced, wantDNSOK: true},
		"load balancer refused":   {spec: withLB, mon: made(&lbv1alpha1.LoadBalancerMonitor{}, true), pool: made(&lbv1alpha1.LoadBalancerPool{}, true), lb: made(&lbv1alpha1.LoadBalancer{}, false, refused), want: v1alpha1.ReasonLoadBalancerRefused},
		"a pool named not proven": {spec: withLB, mon: made(&lbv1alpha1.LoadBalancerMonitor{}, true), pool: made(&lbv1alpha1.LoadBalancerPool{}, true), lb: made(&lbv1alpha1.LoadBalancer{}, true, notProven), want: v1alpha1.ReasonPoolNotProven, wantDNSOK: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := publichostname.LoadBalancedCondition(tc.spec, tc.mon, tc.pool, tc.lb)
			if c.Reason != tc.want || (c.Status == corev1.ConditionTrue) != (tc.want == v1alpha1.ReasonLoadBalanced) {
				t.Fatalf("LoadBalanced = %s %s: %s, want %s", c.Status, c.Reason, c.Message, tc.want)
			}
			dns := publichostname.LoadBalancedDNS(tc.spec, c, tc.pool, tc.lb)
			if (dns.Status == corev1.ConditionTrue) != tc.wantDNSOK || dns.Type != v1alpha1.TypeDNSReady {
				t.Errorf("DNSReady = %s %s: %s, want true: %t", dns.Status, dns.Reason, dns.Message, tc.wantDNSOK)
			}
		})
	}
}

func TestPoolHealthEvent(t *testing.T) {
	const (
		healthy, unhealthy, unknown = publichostname.PoolHealthy, publichostname.PoolUnhealthy, publichostname.PoolUnknown
	)
	cases := map[string]struct {
		before, now string
		want        event.Type // "" when no event
		reason      event.Reason
	}{
		"TurnsUnhealthy":         {before: healthy, now: unhealthy, want: event.TypeWarning, reason: publichostname.ReasonPoolUnhealthy},
		"UnhealthyAtFirstReport": {before: unknown, now: unhealthy, want: event.TypeWarning, reason: publichostname.ReasonPoolUnhealthy},
		"StaysUnhealthy":         {before: unhealthy, now: unhealthy},
		"HealthyAgain":           {before: unhealthy, now: healthy, want: event.TypeNormal, reason: publichostname.ReasonPoolHealthy},
		"HealthyAtFirstReport":   {before: unknown, now: healthy},
		"StaysHealthy":           {before: healthy, now: healthy},
		"NoLongerReported":       {before: unhealthy, now: unknown},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e, ok := publichostname.PoolHealthEvent("app-eu", tc.before, tc.now, "the tunnel has no connections to Cloudflare")
			if ok != (tc.want != "") || e.Type != tc.want || e.Reason != tc.reason {
				t.Fatalf("PoolHealthEvent(%s → %s) = %+v, %v; want %q %q", tc.before, tc.now, e, ok, tc.want, tc.reason)
			}
			if ok && !strings.Contains(e.Message, "app-eu") {
				t.Errorf("message %q does not name the pool", e.Message)
			}
			if tc.want == event.TypeWarning && !strings.Contains(e.Message, "no connections") {
				t.Errorf("message %q does not say why", e.Message)
			}
		})
	}
}
