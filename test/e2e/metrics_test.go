package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	lbv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/loadbalancing/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/providertest"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

// scrape reads a provider's Prometheus endpoint as Prometheus would.
func scrape(url string) (map[string]*dto.MetricFamily, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	return p.TextToMetricFamilies(resp.Body)
}

// sample is the sum of a family's series whose labels include want.
func sample(fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	f, ok := fams[name]
	if !ok {
		return 0, false
	}
	var sum float64
	found := false
	for _, m := range f.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range want {
			if labels[k] != v {
				match = false
			}
		}
		if !match {
			continue
		}
		found = true
		switch {
		case m.Counter != nil:
			sum += m.GetCounter().GetValue()
		case m.Gauge != nil:
			sum += m.GetGauge().GetValue()
		case m.Histogram != nil:
			sum += float64(m.GetHistogram().GetSampleCount())
		}
	}
	return sum, found
}

func mustSample(t *testing.T, fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	t.Helper()
	v, ok := sample(fams, name, want)
	if !ok {
		t.Fatalf("no %s%v in the provider's metrics", name, want)
	}
	return v
}

// documentedMetrics reads the metric names docs/metrics.md lists: the
// first column of its tables, in backquotes.
func documentedMetrics(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(env.root, "docs", "metrics.md"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z_:][a-z0-9_:]*)`").FindAllStringSubmatch(string(raw), -1) {
		out = append(out, m[1])
	}
	if len(out) < 10 {
		t.Fatalf("docs/metrics.md documents %d metrics", len(out))
	}
	return out
}

// loadBalancing makes, in ns, a pool of one raw address and a load balancer
// serving from it, both Ready.
func loadBalancing(t *testing.T, ns string) (*lbv1alpha1.LoadBalancerPool, *lbv1alpha1.LoadBalancer) {
	t.Helper()
	ctx := context.Background()
	pool := &lbv1alpha1.LoadBalancerPool{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pool"}}
	pool.Spec.ForProvider = lbv1alpha1.LoadBalancerPoolParameters{Name: "metrics-" + ns,
		Origins: []lbv1alpha1.PoolOrigin{{Name: "dc", Address: ptr.To("origin.example.net")}}}
	lb := &lbv1alpha1.LoadBalancer{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "lb"}}
	lb.Spec.ForProvider = lbv1alpha1.LoadBalancerParameters{Hostname: "lb-" + ns + "." + zone,
		DefaultPoolsRefs: []xpv2.NamespacedReference{{Name: "pool"}}, FallbackPoolRef: &xpv2.NamespacedReference{Name: "pool"}}
	for _, o := range []client.Object{pool, lb} {
		if err := env.kube.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	wait.Eventually(t, 3*time.Minute, "the pool and the load balancer Ready", func() error {
		for _, o := range []interface {
			client.Object
			GetCondition(xpv2.ConditionType) xpv2.Condition
		}{pool, lb} {
			if err := env.kube.Get(ctx, client.ObjectKeyFromObject(o), o); err != nil {
				return err
			}
			if c := o.GetCondition(xpv2.TypeReady); c.Status != corev1.ConditionTrue {
				return fmt.Errorf("%T %s not Ready: %s", o, o.GetName(), o.GetCondition(xpv2.TypeSynced).Message)
			}
		}
		return nil
	})
	return pool, lb
}

// deleteLoadBalancing deletes the load balancer, then its pool, and waits
// until the account holds neither.
func deleteLoadBalancing(t *testing.T, pool *lbv1alpha1.LoadBalancerPool, lb *lbv1alpha1.LoadBalancer) {
	t.Helper()
	for _, o := range []client.Object{lb, pool} {
		if err := env.kube.Delete(context.Background(), o); err != nil {
			t.Error(err)
		}
	}
	wait.Eventually(t, 3*time.Minute, "the pool and the load balancer gone", func() error {
		if _, pools, lbs := env.sim.LoadBalancingObjects(); pools+lbs > 0 {
			return fmt.Errorf("%d pools, %d load balancers left", pools, lbs)
		}
		return nil
	})
}

// TestMetricsAreDocumented: every metric docs/metrics.md documents is served
// by the provider binary. The test makes what the rarer ones need itself —
// a hand edit in Cloudflare (the drift histogram) and a deletion (the
// deletion histogram) — so it holds when run alone.
func TestMetricsAreDocumented(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t, "metrics")
	workload(t, ns, "edge", 1) // one public Ingress with a VPC service
	// The tunnel, and the Ingress's hostname route, VPC service and record.
	wait.Eventually(t, 3*time.Minute, "every managed resource Ready", allReady(t, ns, 1+1+1+1))
	cft := &v1alpha1.CloudflareTunnel{}
	if err := env.kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: "edge"}, cft); err != nil {
		t.Fatal(err)
	}
	env.sim.SetConnectors(cft.Status.TunnelID, 1)

	host := "app-00-" + ns + "." + zone
	id, content, _ := record(host)
	// Observed up to date at least once (by a listing begun since), so the
	// repair below is drift.
	providertest.WaitServed(t, env.sim, 2, http.MethodGet, "/zones/"+sim.ZoneID(zone)+"/dns_records$")
	rec, err := env.cf.GetDNSRecord(ctx, sim.ZoneID(zone), id)
	if err != nil {
		t.Fatal(err)
	}
	rec.Content = "drifted.example.net"
	if _, err := env.cf.UpdateDNSRecord(ctx, sim.ZoneID(zone), id, *rec); err != nil {
		t.Fatal(err)
	}
	wait.Eventually(t, 2*poll+30*time.Second, "the hand edit undone", func() error {
		if _, c, n := record(host); n != 1 || c != content {
			return fmt.Errorf("%d records, content %q, want %q", n, c, content)
		}
		return nil
	})
	deleteNamespace(t, ns, cft.Status.TunnelID, nil)
	// The load-balancing gauges have a series per pool and load balancer
	// whose health Cloudflare reports.
	pool, lb := loadBalancing(t, namespace(t, "metrics-lb"))
	defer deleteLoadBalancing(t, pool, lb)

	wait.Eventually(t, time.Minute, "every documented metric served", func() error {
		fams, err := scrape(env.metricsURL)
		if err != nil {
			return err
		}
		var missing []string
		for _, name := range documentedMetrics(t) {
			if _, ok := fams[name]; !ok {
				missing = append(missing, name)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("documented in docs/metrics.md but not served: %v", missing)
		}
		return nil
	})
}
