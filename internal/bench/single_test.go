package bench_test

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/bench"
)

// singleTimeout is how long one single change may take before the run
// fails.
const singleTimeout = 5 * time.Minute

// The hops of one added Ingress, in the order they usually happen: the
// objects the bench's watch saw appear and turn Ready, and what the
// simulated account held (polled every singlePoll).
var addHops = []string{
	"PublicHostname created",
	"HostnameRoute created", "VPCService created",
	"Cloudflare: route", "Cloudflare: VPC service",
	"HostnameRoute Ready", "VPCService Ready",
	"Cloudflare: rule", "PublicHostname answered",
	"DNSRecord created", "Cloudflare: DNS record", "DNSRecord Ready",
	"all Ready",
}

// The hops of one deleted Ingress.
var deleteHops = []string{
	"Cloudflare: DNS record gone", "DNSRecord gone",
	"Cloudflare: rule gone",
	"Cloudflare: route gone", "HostnameRoute gone",
	"Cloudflare: VPC service gone", "VPCService gone",
	"all gone",
}

// singlePoll is how often a single change's account is read.
const singlePoll = 100 * time.Millisecond

// singles are the single-change latencies of a run: BENCH_SINGLES Ingresses
// added one at a time at steady state, BENCH_SINGLE_GAP apart, then deleted
// the same way; each hop counted from the change.
type singles struct {
	add, del []bench.Hop
	// What the controllers and the budget did during the changes (from each
	// change until it was done), summed over the changes.
	addWork, delWork     bench.Works
	addBudget, delBudget bench.Budget
}

// scrape is one reading of the provider's metrics.
type scrape struct {
	budget bench.Budget
	work   bench.Works
}

// scrape reads the provider's budget and controller metrics; zero if it
// cannot.
func (r *run) scrape() scrape {
	resp, err := http.Get(r.metricsURL)
	if err != nil {
		return scrape{}
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return scrape{}
	}
	b, _ := bench.ParseBudget(bytes.NewReader(body))
	w, _ := bench.ParseWork(bytes.NewReader(body))
	return scrape{budget: b, work: w}
}

// during adds what happened between before and now to work and budget.
func (r *run) during(before scrape, work *bench.Works, budget *bench.Budget) {
	now := r.scrape()
	*work = work.Add(now.work.Sub(before.work))
	d := now.budget.Sub(before.budget)
	*budget = bench.Budget{Requests: budget.Requests + d.Requests, WaitSeconds: budget.WaitSeconds + d.WaitSeconds, RateLimited: budget.RateLimited + d.RateLimited}
}

func singleName(k int) string { return fmt.Sprintf("one-%d", k) }

func singleHost(k int) string { return singleName(k) + ".example.com" }

func singleVPC(k int) string { return "bench-" + singleName(k) }

// singleChanges adds r.s.singles Ingresses one at a time, each once the
// one before is Ready and r.s.gap has passed, then deletes them the same
// way.
func (r *run) singleChanges(ctx context.Context) (singles, error) {
	out := singles{add: newHops(addHops), del: newHops(deleteHops), addWork: bench.Works{}, delWork: bench.Works{}}
	for k := range r.s.singles {
		time.Sleep(r.s.gap) // changes a user makes apart, not a burst
		before := r.scrape()
		at := time.Now()
		if err := createSingle(ctx, r.env.Client, k); err != nil {
			return out, err
		}
		cf, err := r.waitSingle(at, k, func(p bench.Presence) bool {
			ev := r.tracker.eventsOf(singleName(k))
			_, a := ev["HostnameRoute Ready"]
			_, b := ev["VPCService Ready"]
			_, c := ev["DNSRecord Ready"]
			return a && b && c && p.Rule
		}, map[string]func(bench.Presence) bool{
			"Cloudflare: route":       func(p bench.Presence) bool { return p.Route },
			"Cloudflare: VPC service": func(p bench.Presence) bool { return p.Service },
			"Cloudflare: rule":        func(p bench.Presence) bool { return p.Rule },
			"Cloudflare: DNS record":  func(p bench.Presence) bool { return p.Record },
		})
		if err != nil {
			return out, errors.Wrapf(err, "single add %d", k)
		}
		r.during(before, &out.addWork, &out.addBudget)
		ev := r.tracker.eventsOf(singleName(k))
		record(out.add, at, ev, cf, "all Ready", "HostnameRoute Ready", "VPCService Ready", "DNSRecord Ready")
		r.logf("single add %d: all Ready after %s", k, round(last(out.add).Times[len(last(out.add).Times)-1]))
	}
	for k := range r.s.singles {
		time.Sleep(r.s.gap) // changes a user makes apart, not a burst
		before := r.scrape()
		at := time.Now()
		ing := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: singleName(k)}}
		if err := r.env.Client.Delete(ctx, ing); err != nil {
			return out, err
		}
		cf, err := r.waitSingle(at, k, func(p bench.Presence) bool {
			ev := r.tracker.eventsOf(singleName(k))
			_, a := ev["HostnameRoute gone"]
			_, b := ev["VPCService gone"]
			_, c := ev["DNSRecord gone"]
			return a && b && c && p == bench.Presence{}
		}, map[string]func(bench.Presence) bool{
			"Cloudflare: route gone":       func(p bench.Presence) bool { return !p.Route },
			"Cloudflare: VPC service gone": func(p bench.Presence) bool { return !p.Service },
			"Cloudflare: rule gone":        func(p bench.Presence) bool { return !p.Rule },
			"Cloudflare: DNS record gone":  func(p bench.Presence) bool { return !p.Record },
		})
		if err != nil {
			return out, errors.Wrapf(err, "single delete %d", k)
		}
		r.during(before, &out.delWork, &out.delBudget)
		ev := r.tracker.eventsOf(singleName(k))
		record(out.del, at, ev, cf, "all gone", "HostnameRoute gone", "VPCService gone", "DNSRecord gone", "Cloudflare: route gone", "Cloudflare: VPC service gone", "Cloudflare: rule gone", "Cloudflare: DNS record gone")
		r.logf("single delete %d: all gone after %s", k, round(last(out.del).Times[len(last(out.del).Times)-1]))
		if err := client.IgnoreNotFound(r.env.Client.Delete(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: singleName(k)}})); err != nil {
			return out, err
		}
	}
	return out, nil
}

// waitSingle polls the account every singlePoll until done, and returns
// when each of the account's hops was first seen.
func (r *run) waitSingle(at time.Time, k int, done func(bench.Presence) bool, hops map[string]func(bench.Presence) bool) (map[string]time.Time, error) {
	seen := map[string]time.Time{}
	deadline := at.Add(singleTimeout)
	for {
		p := bench.PresenceOf(r.sim.Snapshot(), singleHost(k), singleVPC(k))
		now := time.Now()
		for name, reached := range hops {
			if _, ok := seen[name]; !ok && reached(p) {
				seen[name] = now
			}
		}
		if done(p) {
			return seen, nil
		}
		if now.After(deadline) {
			return seen, errors.Errorf("not done after %s: account %+v, events %v", singleTimeout, p, r.tracker.eventsOf(singleName(k)))
		}
		time.Sleep(singlePoll) // the resolution of the hop times measured
	}
}

func newHops(names []string) []bench.Hop {
	out := make([]bench.Hop, len(names))
	for i, n := range names {
		out[i].Name = n
	}
	return out
}

func last(hs []bench.Hop) bench.Hop { return hs[len(hs)-1] }

// record adds one change's hop times to hs; the total (the last hop,
// named total) is the latest of the hops named in of.
func record(hs []bench.Hop, at time.Time, events, account map[string]time.Time, total string, of ...string) {
	when := func(name string) (time.Time, bool) {
		if t, ok := account[name]; ok {
			return t, true
		}
		t, ok := events[name]
		return t, ok
	}
	var end time.Time
	for _, n := range of {
		if t, ok := when(n); ok && t.After(end) {
			end = t
		}
	}
	for i := range hs {
		if hs[i].Name == total {
			hs[i].Times = append(hs[i].Times, end.Sub(at))
			continue
		}
		if t, ok := when(hs[i].Name); ok {
			hs[i].Times = append(hs[i].Times, max(t.Sub(at), 0))
		}
	}
}

// createSingle applies the k-th single Ingress and its Service, like the
// scenario's.
func createSingle(ctx context.Context, c client.Client, k int) error {
	name := singleName(k)
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec:       corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}}},
	}
	ing := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Annotations: map[string]string{
			v1alpha1.AnnotationTunnel:     tunnelName,
			v1alpha1.AnnotationPublic:     "true",
			v1alpha1.AnnotationVPCService: singleVPC(k),
		}},
		Spec: networkingv1.IngressSpec{
			IngressClassName: ptr.To("cloudflare"),
			Rules: []networkingv1.IngressRule{{Host: singleHost(k), IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
				Paths: []networkingv1.HTTPIngressPath{{Path: "/", PathType: ptr.To(networkingv1.PathTypePrefix), Backend: networkingv1.IngressBackend{
					Service: &networkingv1.IngressServiceBackend{Name: name, Port: networkingv1.ServiceBackendPort{Number: 80}},
				}}},
			}}}},
		},
	}
	for _, o := range []client.Object{svc, ing} {
		if err := c.Create(ctx, o); err != nil {
			return errors.Wrapf(err, "cannot create %T %s", o, o.GetName())
		}
	}
	return nil
}

// report writes the single changes' hops: median and p95 of each, counted
// from the change.
func (s singles) report(w *reportWriter, n int, gap time.Duration) {
	if len(s.add) == 0 {
		return
	}
	k := len(last(s.add).Times)
	w.f("\n#### Single changes at steady N = %d\n\n", n)
	w.f("%d Ingresses added one at a time (each %s after the one before was Ready), then deleted the same way; each hop from the change, median / p95 (nearest rank) over the changes that reached it.\n\n", k, gap)
	for _, part := range []struct {
		name string
		hops []bench.Hop
	}{{"add", s.add}, {"delete", s.del}} {
		w.f("| %s: hop | median | p95 | seen |\n|---|---|---|---|\n", part.name)
		for _, h := range part.hops {
			sp := h.Spread()
			name := h.Name
			if strings.HasPrefix(name, "all ") {
				name = "**" + name + "**"
			}
			w.f("| %s | %s | %s | %d |\n", name, msRound(sp.Median), msRound(sp.P95), sp.N)
		}
		w.f("\n")
	}
	s.reportWork(w, k)
}

// reportWork writes where the changes' time went: each controller's
// reconciles during the changes (from each change until it was done), the
// mean wait of an item in its queue and the mean reconcile; then the
// requests and their mean wait for the budget.
func (s singles) reportWork(w *reportWriter, k int) {
	if k == 0 {
		return
	}
	w.f("Where the time went, over the %d changes (from each change until it was done; every controller's work counts, polls of the objects already there included): reconciles per change, the mean wait of an item in the controller's queue, the mean reconcile.\n\n", k)
	w.f("| controller | add: reconciles per change | queue wait | reconcile | delete: reconciles per change | queue wait | reconcile |\n|---|---|---|---|---|---|---|\n")
	names := slices.Collect(maps.Keys(s.addWork.Add(s.delWork)))
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Compare(s.addWork[b].Dequeued+s.delWork[b].Dequeued, s.addWork[a].Dequeued+s.delWork[a].Dequeued)
	})
	for _, n := range names {
		a, d := s.addWork[n], s.delWork[n]
		w.f("| %s | %.1f | %s | %s | %.1f | %s | %s |\n", n,
			float64(a.Reconciles)/float64(k), a.MeanQueue().Round(time.Millisecond), a.MeanReconcile().Round(time.Millisecond),
			float64(d.Reconciles)/float64(k), d.MeanQueue().Round(time.Millisecond), d.MeanReconcile().Round(time.Millisecond))
	}
	for _, b := range []struct {
		name   string
		budget bench.Budget
	}{{"add", s.addBudget}, {"delete", s.delBudget}} {
		wait := time.Duration(0)
		if b.budget.Requests > 0 {
			wait = time.Duration(b.budget.WaitSeconds / float64(b.budget.Requests) * float64(time.Second))
		}
		w.f("\n%s: %.1f requests per change through the budget, mean wait for it %s, 429s %.0f.", b.name, float64(b.budget.Requests)/float64(k), wait.Round(time.Millisecond), b.budget.RateLimited)
	}
	w.f("\n\n")
}

// msRound rounds a hop's time to 100 ms.
func msRound(d time.Duration) time.Duration { return d.Round(100 * time.Millisecond) }
