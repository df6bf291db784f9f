package bench_test

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	connv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/connectivity/v1alpha1"
	dnsv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/dns/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/bench"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare/budget"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/mr"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/providertest"
)

// Cloudflare's real limit, which the simulator enforces, and the provider's
// default budget (budget.Options defaults: 80% of it, burst 10).
const (
	cfLimit       = 1200
	cfWindow      = 5 * time.Minute
	budgetRate    = cfLimit * 0.8 / 300 // requests per second: 3.2
	budgetBurst   = 10
	namespace     = "bench"
	tunnelName    = "edge"
	phaseDeadline = 60 * time.Minute
)

var p *providertest.Provider

// TestMain starts the control plane, simulator and provider only when this
// benchmark is asked for, so `go test ./...` (make test) passes through at
// once.
func TestMain(m *testing.M) {
	flag.Parse()
	if !benchmarkSelected() {
		os.Exit(m.Run())
	}
	poll, err := envDuration("BENCH_POLL", time.Minute)
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		os.Exit(1)
	}
	os.Exit(providertest.RunWithOptions(m, &p, providertest.Options{
		// Cloudflare's limit: 1,200 requests per 5 minutes per token, and a
		// 5-minute block once exceeded.
		RateLimit: cfLimit, RateWindow: cfWindow, RatePenalty: cfWindow,
		// The provider's own default budget, exactly as main uses it.
		Budgets: budget.NewRegistry(budget.Options{}),
		// The contract checker holds Cloudflare's whole OpenAPI document in
		// memory, which would swamp the memory figures; the integration
		// tests check the contract.
		SkipContract: true,
		// Production's grace period, poll and --max-reconcile-rate.
		CreationGracePeriod: mr.DefaultCreationGracePeriod,
		PollInterval:        poll,
		MaxReconcileRate:    controller.DefaultMaxReconcileRate,
	}))
}

// benchmarkSelected reports whether -test.bench selects BenchmarkScale.
func benchmarkSelected() bool {
	f := flag.Lookup("test.bench")
	if f == nil || f.Value.String() == "" {
		return false
	}
	re, err := regexp.Compile(strings.Split(f.Value.String(), "/")[0])
	return err != nil || re.MatchString("BenchmarkScale")
}

func envInt(name string, def int) (int, error) {
	v := os.Getenv(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%s=%q: want a positive integer", name, v)
	}
	return n, nil
}

func envDuration(name string, def time.Duration) (time.Duration, error) {
	v := os.Getenv(name)
	if v == "" {
		return def, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%s=%q: want a duration such as 5m", name, v)
	}
	return d, nil
}

// cpu is a CPU-time reading of this process.
type cpu struct{ user, sys time.Duration }

func readCPU() cpu {
	u, s := bench.CPUTime()
	return cpu{u, s}
}

func (c cpu) sub(o cpu) cpu        { return cpu{c.user - o.user, c.sys - o.sys} }
func (c cpu) total() time.Duration { return c.user + c.sys }

// phase is what one phase of the run measured.
type phase struct {
	name   string
	wall   time.Duration
	stats  bench.Stats
	budget bench.Budget
	cpu    cpu
	mem    bench.Mem
}

// BenchmarkScale runs one CloudflareTunnel with BENCH_N public Ingresses,
// each with a VPC service, against the rate-limited simulator: time to
// Ready, requests, steady-state polling, memory, CPU and teardown. It runs
// once whatever b.N is (make bench passes -benchtime=1x).
func BenchmarkScale(b *testing.B) {
	n, err := envInt("BENCH_N", 100)
	if err != nil {
		b.Fatal(err)
	}
	steady, err := envDuration("BENCH_STEADY", 5*time.Minute)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	out := os.Stdout

	baseline := bench.Now()
	mem := bench.StartMemSampler(time.Second)
	defer mem.Stop()
	p.Sim.ResetStats()
	var phases []phase
	mark := struct {
		at     time.Time
		stats  bench.Stats
		budget bench.Budget
		cpu    cpu
	}{time.Now(), bench.Stats(p.Sim.Stats()), bench.ReadBudget(), readCPU()}
	cpuStart := mark.cpu
	endPhase := func(name string) phase {
		now, st, bu, c := time.Now(), bench.Stats(p.Sim.Stats()), bench.ReadBudget(), readCPU()
		ph := phase{name: name, wall: now.Sub(mark.at), stats: st.Sub(mark.stats), budget: bu.Sub(mark.budget), cpu: c.sub(mark.cpu), mem: mem.Phase()}
		mark.at, mark.stats, mark.budget, mark.cpu = now, st, bu, c
		phases = append(phases, ph)
		return ph
	}
	b.ResetTimer()

	// --- create ---------------------------------------------------------
	fmt.Fprintf(out, "bench: N=%d, poll %s, steady window %s, budget %.1f req/s burst %d, simulator limit %d/%s\n",
		n, pollInterval(), steady, budgetRate, budgetBurst, cfLimit, cfWindow)
	create(ctx, b, n)
	applied := time.Since(mark.at)

	var readyAt, configAt time.Duration
	lastLog := time.Now()
	deadline := time.Now().Add(phaseDeadline)
	for {
		st := readiness(ctx, b)
		live := bench.Count(p.Sim.Snapshot())
		el := time.Since(mark.at)
		if readyAt == 0 && st.allReady(n) {
			readyAt = el
		}
		if configAt == 0 && live.ConfigHostnames == n {
			configAt = el
		}
		if readyAt != 0 && configAt != 0 {
			break
		}
		if time.Since(lastLog) >= 15*time.Second {
			req, rl := bench.Stats(p.Sim.Stats()).Sub(mark.stats).Total()
			fmt.Fprintf(out, "bench: %4.0fs %s; %d hostnames in tunnel config; %d requests, %d 429s\n", el.Seconds(), st, live.ConfigHostnames, req, rl)
			lastLog = time.Now()
		}
		if time.Now().After(deadline) {
			b.Fatalf("not converged after %s: %s; %s; not ready: %s", phaseDeadline, st, live, strings.Join(st.notReady, "; "))
		}
		time.Sleep(time.Second)
	}
	conv := endPhase("converge")
	liveConverged := bench.Count(p.Sim.Snapshot())
	fmt.Fprintf(out, "bench: converged: every managed resource Ready at %s, all %d hostnames in the tunnel configuration at %s\n", round(readyAt), n, round(configAt))
	if liveConverged.Tunnels != 1 || liveConverged.Routes != n || liveConverged.Services != n || liveConverged.Records != n || len(liveConverged.Duplicates) > 0 || liveConverged.CIDRRoutes != 0 {
		b.Errorf("after convergence the account holds %s; want 1 tunnel and exactly %d routes, services and records, no duplicates", liveConverged, n)
	}

	// --- steady state ---------------------------------------------------
	var perMinute []int
	if steady > 0 {
		fmt.Fprintf(out, "bench: steady state for %s\n", steady)
		end := time.Now().Add(steady)
		prev := bench.Stats(p.Sim.Stats())
		for time.Now().Before(end) {
			time.Sleep(min(time.Minute, time.Until(end)))
			cur := bench.Stats(p.Sim.Stats())
			r, _ := cur.Sub(prev).Total()
			perMinute = append(perMinute, r)
			prev = cur
			fmt.Fprintf(out, "bench: steady: %d requests in the last interval\n", r)
		}
	}
	stdy := endPhase("steady")

	// --- delete ---------------------------------------------------------
	fmt.Fprintln(out, "bench: deleting every Ingress, then the CloudflareTunnel")
	ings := &networkingv1.IngressList{}
	if err := p.Client.List(ctx, ings, client.InNamespace(namespace)); err != nil {
		b.Fatal(err)
	}
	for i := range ings.Items {
		if err := p.Client.Delete(ctx, &ings.Items[i]); client.IgnoreNotFound(err) != nil {
			b.Fatal(err)
		}
	}
	waitGone(b, "Ingresses and their managed resources", func() (int, error) {
		left := 0
		for _, l := range []client.ObjectList{&networkingv1.IngressList{}, &ztv1alpha1.HostnameRouteList{}, &connv1alpha1.VPCServiceList{}, &dnsv1alpha1.DNSRecordList{}} {
			if err := p.Client.List(ctx, l, client.InNamespace(namespace)); err != nil {
				return 0, err
			}
			switch l := l.(type) {
			case *networkingv1.IngressList:
				left += len(l.Items)
			case resource.ManagedList:
				left += len(l.GetItems())
			}
		}
		return left, nil
	})
	ingressesGone := time.Since(mark.at)
	if err := p.Client.Delete(ctx, &v1alpha1.CloudflareTunnel{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: tunnelName}}); err != nil {
		b.Fatal(err)
	}
	waitGone(b, "the CloudflareTunnel and its Tunnel", func() (int, error) {
		left := 0
		for _, o := range []client.Object{&v1alpha1.CloudflareTunnel{}, &ztv1alpha1.Tunnel{}} {
			err := p.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: tunnelName}, o)
			switch {
			case err == nil:
				left++
			case !kerrors.IsNotFound(err):
				return 0, err
			}
		}
		return left, nil
	})
	del := endPhase("delete")
	liveAfter := bench.Count(p.Sim.Snapshot())
	if liveAfter.Leftovers() != 0 {
		b.Errorf("after deletion the account still holds %s", liveAfter)
	}
	b.StopTimer()

	// --- report ---------------------------------------------------------
	cpuAll := readCPU().sub(cpuStart)
	peak := mem.Peak()
	convReq, conv429 := conv.stats.Total()
	stdyReq, stdy429 := stdy.stats.Total()
	delReq, del429 := del.stats.Total()
	minimum := bench.MinimumRequests(n, 1)
	batches := conv.stats.Requests("tunnels.configurations.update")
	minBatches := bench.MinimumRequests(n, max(batches, 1))
	steadyPerMin := 0.0
	if stdy.wall > 0 {
		steadyPerMin = float64(stdyReq) / stdy.wall.Minutes()
	}
	budgetTime := time.Duration(float64(max(convReq-budgetBurst, 0)) / budgetRate * float64(time.Second))
	minTime := time.Duration(float64(max(minimum.Total-budgetBurst, 0)) / budgetRate * float64(time.Second))

	r := &report{w: out}
	r.f("\n## Scale benchmark: 1 CloudflareTunnel, %d public Ingresses with a VPC service each\n\n", n)
	r.f("- machine: %d CPUs (nproc), %s memory, %s %s/%s\n", runtime.NumCPU(), memTotal(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	r.f("- commit: %s\n", commit())
	r.f("- settings: Cloudflare limit %d/%s (simulated, 5m penalty); the default budget %.1f req/s burst %d; poll %s; max-reconcile-rate %d; creation grace period %s; contract checker off\n",
		cfLimit, cfWindow, budgetRate, budgetBurst, pollInterval(), controller.DefaultMaxReconcileRate, mr.DefaultCreationGracePeriod)
	r.f("\n### Convergence\n\n")
	r.f("| measure | value |\n|---|---|\n")
	r.f("| objects applied (1 CloudflareTunnel, %d Services, %d Ingresses) | %s |\n", n, n, round(applied))
	r.f("| every HostnameRoute, VPCService and DNSRecord Ready and Synced | **%s** |\n", round(readyAt))
	r.f("| all %d hostnames in the tunnel's configuration | %s |\n", n, round(configAt))
	r.f("| Cloudflare requests until then | **%d** (%.2f per Ingress) |\n", convReq, float64(convReq)/float64(n))
	r.f("| minimum possible (3N creates + tunnel + token + zone list + 1 config write) | %d — measured is %.2f× |\n", minimum.Total, float64(convReq)/float64(minimum.Total))
	r.f("| minimum with the measured %d configuration writes | %d — measured is %.2f× |\n", batches, minBatches.Total, float64(convReq)/float64(minBatches.Total))
	r.f("| 429 answers | %d |\n", conv429)
	r.f("| other non-2xx answers | %d |\n", conv.stats.Errors())
	r.f("| time the budget needs for the measured requests ((req − %d burst) ÷ %.1f/s) | %s (measured %s; the budget accounts for %.0f%% of it) |\n",
		budgetBurst, budgetRate, round(budgetTime), round(conv.wall), 100*budgetTime.Seconds()/conv.wall.Seconds())
	r.f("| time the budget needs for the minimum | %s |\n", round(minTime))
	r.f("| budget: requests through it / summed wait | %d / %s (mean %.1fs per request) |\n", conv.budget.Requests, round(time.Duration(conv.budget.WaitSeconds*float64(time.Second))), conv.budget.WaitSeconds/float64(max(conv.budget.Requests, 1)))
	r.f("| provider process CPU (user+sys) | %s (%s + %s) |\n", round(conv.cpu.total()), round(conv.cpu.user), round(conv.cpu.sys))
	r.f("| peak HeapInuse / Sys (baseline before creating: %.0f / %.0f MiB) | %.0f / %.0f MiB |\n", bench.MB(baseline.HeapInuse), bench.MB(baseline.Sys), bench.MB(conv.mem.HeapInuse), bench.MB(conv.mem.Sys))
	r.f("| account after convergence | %s |\n", liveConverged)
	r.f("\nRequests by operation until convergence:\n\n```\n")
	conv.stats.Table(out)
	r.f("```\n\n### Steady state\n\n")
	r.f("| measure | value |\n|---|---|\n")
	r.f("| window | %s |\n", round(stdy.wall))
	r.f("| requests | %d (**%.1f per minute**, %.2f per Ingress per minute) |\n", stdyReq, steadyPerMin, steadyPerMin/float64(n))
	r.f("| per interval | %v |\n", perMinute)
	r.f("| 429 answers | %d |\n", stdy429)
	r.f("| provider process CPU | %s (%.1f ms per second) |\n", round(stdy.cpu.total()), 1000*stdy.cpu.total().Seconds()/max(stdy.wall.Seconds(), 1))
	r.f("| peak HeapInuse / Sys | %.0f / %.0f MiB |\n", bench.MB(stdy.mem.HeapInuse), bench.MB(stdy.mem.Sys))
	if stdyReq > 0 {
		r.f("\nRequests by operation in the steady window:\n\n```\n")
		stdy.stats.Table(out)
		r.f("```\n")
	}
	r.f("\n### Deletion\n\n")
	r.f("| measure | value |\n|---|---|\n")
	r.f("| every Ingress and managed resource gone | %s |\n", round(ingressesGone))
	r.f("| then the CloudflareTunnel and its Tunnel gone | **%s** in all |\n", round(del.wall))
	r.f("| Cloudflare requests | %d (minimum %d deletes) |\n", delReq, minimum.Deletes)
	r.f("| 429 answers | %d |\n", del429)
	r.f("| account afterwards | %s |\n", liveAfter)
	r.f("\nRequests by operation during deletion:\n\n```\n")
	del.stats.Table(out)
	r.f("```\n\n### Whole run\n\n")
	r.f("- provider process CPU (user+sys): %s; peak HeapInuse %.0f MiB, peak Sys %.0f MiB\n", round(cpuAll.total()), bench.MB(peak.HeapInuse), bench.MB(peak.Sys))
	r.f("- 429 answers: %d (the provider's budget counted %.0f)\n", conv429+stdy429+del429, conv.budget.RateLimited+stdy.budget.RateLimited+del.budget.RateLimited)
	r.f("- targets: steady state ≤ 10 req/min: %s; requests ≤ 1.25× minimum: %s; zero 429s: %s; zero leftovers: %s\n",
		verdict(steadyPerMin <= 10), verdict(float64(convReq) <= 1.25*float64(minimum.Total)), verdict(conv429+stdy429+del429 == 0), verdict(liveAfter.Leftovers() == 0))

	b.ReportMetric(0, "ns/op")
	b.ReportMetric(readyAt.Seconds(), "s-ready")
	b.ReportMetric(configAt.Seconds(), "s-configured")
	b.ReportMetric(float64(convReq), "requests")
	b.ReportMetric(float64(convReq)/float64(n), "requests/ingress")
	b.ReportMetric(float64(convReq)/float64(minimum.Total), "x-minimum")
	b.ReportMetric(float64(conv429+stdy429+del429), "429s")
	b.ReportMetric(steadyPerMin, "steady-req/min")
	b.ReportMetric(del.wall.Seconds(), "s-delete")
	b.ReportMetric(float64(delReq), "delete-requests")
	b.ReportMetric(float64(liveAfter.Leftovers()), "leftovers")
	b.ReportMetric(bench.MB(peak.HeapInuse), "MiB-heap-peak")
	b.ReportMetric(bench.MB(peak.Sys), "MiB-sys-peak")
	b.ReportMetric(cpuAll.total().Seconds(), "s-cpu")
}

func pollInterval() time.Duration {
	d, _ := envDuration("BENCH_POLL", time.Minute)
	return d
}

// create applies the scenario: one CloudflareTunnel and n public Ingresses,
// each on its own Service, host app-<i>.example.com and VPC service.
func create(ctx context.Context, b *testing.B, n int) {
	b.Helper()
	must := func(o client.Object) {
		if err := p.Client.Create(ctx, o); err != nil {
			b.Fatalf("cannot create %T %s: %v", o, o.GetName(), err)
		}
	}
	must(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}})
	must(&v1alpha1.CloudflareTunnel{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: tunnelName},
		Spec:       v1alpha1.CloudflareTunnelSpec{TunnelName: ptr.To("bench-" + tunnelName), Replicas: ptr.To[int32](1)},
	})
	for i := range n {
		name := fmt.Sprintf("app-%d", i)
		must(&corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
			// Headless: envtest's service IP range has room for ~250.
			Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}}},
		})
		must(&networkingv1.Ingress{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Annotations: map[string]string{
				v1alpha1.AnnotationTunnel:     tunnelName,
				v1alpha1.AnnotationPublic:     "true",
				v1alpha1.AnnotationVPCService: fmt.Sprintf("bench-%d", i),
			}},
			Spec: networkingv1.IngressSpec{
				IngressClassName: ptr.To("cloudflare"),
				Rules: []networkingv1.IngressRule{{Host: name + ".example.com", IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
					Paths: []networkingv1.HTTPIngressPath{{Path: "/", PathType: ptr.To(networkingv1.PathTypePrefix), Backend: networkingv1.IngressBackend{
						Service: &networkingv1.IngressServiceBackend{Name: name, Port: networkingv1.ServiceBackendPort{Number: 80}},
					}}},
				}}}},
			},
		})
	}
}

// kindReadiness counts one managed-resource kind.
type kindReadiness struct {
	name         string
	total, ready int
}

type readinessState struct {
	kinds    []kindReadiness
	notReady []string // a few examples, for a timeout message
}

func (s readinessState) allReady(n int) bool {
	for _, k := range s.kinds {
		if k.total != n || k.ready != n {
			return false
		}
	}
	return len(s.kinds) > 0
}

func (s readinessState) String() string {
	var parts []string
	for _, k := range s.kinds {
		parts = append(parts, fmt.Sprintf("%s %d/%d Ready", k.name, k.ready, k.total))
	}
	return strings.Join(parts, ", ")
}

// readiness lists the managed resources the Ingresses made and counts the
// Ready and Synced ones.
func readiness(ctx context.Context, b *testing.B) readinessState {
	b.Helper()
	var st readinessState
	for _, k := range []struct {
		name string
		list client.ObjectList
	}{{"routes", &ztv1alpha1.HostnameRouteList{}}, {"VPC services", &connv1alpha1.VPCServiceList{}}, {"DNS records", &dnsv1alpha1.DNSRecordList{}}} {
		if err := p.Client.List(ctx, k.list, client.InNamespace(namespace)); err != nil {
			b.Fatal(err)
		}
		kr := kindReadiness{name: k.name}
		for _, m := range k.list.(resource.ManagedList).GetItems() {
			kr.total++
			r, s := m.GetCondition(xpv2.TypeReady), m.GetCondition(xpv2.TypeSynced)
			if r.Status == corev1.ConditionTrue && s.Status == corev1.ConditionTrue {
				kr.ready++
			} else if len(st.notReady) < 5 {
				st.notReady = append(st.notReady, fmt.Sprintf("%s: Ready=%s %s, Synced=%s %s %s", m.GetName(), r.Status, r.Reason, s.Status, s.Reason, s.Message))
			}
		}
		st.kinds = append(st.kinds, kr)
	}
	return st
}

// waitGone polls left until it reports nothing left.
func waitGone(b *testing.B, what string, left func() (int, error)) {
	b.Helper()
	deadline := time.Now().Add(phaseDeadline)
	lastLog := time.Now()
	for {
		n, err := left()
		if err != nil {
			b.Fatal(err)
		}
		if n == 0 {
			return
		}
		if time.Since(lastLog) >= 15*time.Second {
			fmt.Fprintf(os.Stdout, "bench: waiting for %s: %d objects left\n", what, n)
			lastLog = time.Now()
		}
		if time.Now().After(deadline) {
			b.Fatalf("%s not gone after %s: %d objects left; account holds %s", what, phaseDeadline, n, bench.Count(p.Sim.Snapshot()))
		}
		time.Sleep(time.Second)
	}
}

type report struct{ w *os.File }

func (r *report) f(format string, args ...any) { fmt.Fprintf(r.w, format, args...) }

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}

func round(d time.Duration) time.Duration {
	if d >= 10*time.Second {
		return d.Round(time.Second)
	}
	return d.Round(100 * time.Millisecond)
}

// memTotal is the machine's memory from /proc/meminfo.
func memTotal() string {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return "unknown"
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			if err == nil {
				return fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
			}
		}
	}
	return "unknown"
}

// commit is the short HEAD commit, with "dirty" when the tree has changes;
// BENCH_COMMIT overrides it (for a tree exported without .git).
func commit() string {
	if c := os.Getenv("BENCH_COMMIT"); c != "" {
		return c
	}
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	c := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "status", "--porcelain").Output(); err == nil && len(strings.TrimSpace(string(st))) > 0 {
		c += " dirty"
	}
	return c
}
