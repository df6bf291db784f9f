package bench_test

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	connv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/connectivity/v1alpha1"
	dnsv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/dns/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/bench"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/mr"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/process"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/providertest"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

// Cloudflare's real limit, which the simulator enforces, and the provider's
// default budget (its flags' defaults: 80% of it, burst 10).
const (
	cfLimit       = 1200
	cfWindow      = 5 * time.Minute
	budgetRate    = cfLimit * 0.8 / 300 // requests per second: 3.2
	budgetBurst   = 10
	namespace     = "bench"
	tunnelName    = "edge"
	phaseDeadline = 60 * time.Minute
	// batchOp is the simulator's name of Cloudflare's DNS batch operation
	// (POST /zones/{zone_id}/dns_records/batch): one request however many
	// records it carries.
	batchOp = "dns_records.batch"
)

// defaultArgs are each default variant's flags on top of the provider's
// defaults.
var defaultArgs = map[string][]string{
	"batching": nil,
	"single":   {"--dns-batch-window=0"},
}

// TestMain only parses flags: the benchmark starts its own control planes,
// simulators and provider processes, and `go test ./...` passes through at
// once.
func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(m.Run())
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

// envCount is envInt that also takes 0 (none).
func envCount(name string, def int) (int, error) {
	if os.Getenv(name) == "0" {
		return 0, nil
	}
	return envInt(name, def)
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

// variant is one provider configuration the benchmark runs.
type variant struct {
	name string
	args []string
}

var variantName = regexp.MustCompile(`^[a-z0-9][a-z0-9_]*$`)

// variants reads BENCH_VARIANTS (names, comma-separated; default
// "batching,single") and each one's extra provider flags from
// BENCH_ARGS_<NAME> (split on spaces; set but empty means none), else the
// variant's defaults.
func variants() ([]variant, error) {
	names := os.Getenv("BENCH_VARIANTS")
	if names == "" {
		names = "batching,single"
	}
	var out []variant
	for n := range strings.SplitSeq(names, ",") {
		n = strings.TrimSpace(n)
		if !variantName.MatchString(n) {
			return nil, fmt.Errorf("BENCH_VARIANTS: %q is not a variant name (lower-case letters, digits, _)", n)
		}
		if slices.ContainsFunc(out, func(v variant) bool { return v.name == n }) {
			return nil, fmt.Errorf("BENCH_VARIANTS: %q twice", n)
		}
		v := variant{name: n, args: defaultArgs[n]}
		if a, ok := os.LookupEnv("BENCH_ARGS_" + strings.ToUpper(n)); ok {
			v.args = strings.Fields(a)
		}
		out = append(out, v)
	}
	return out, nil
}

// settings are what every variant shares.
type settings struct {
	n      int
	steady time.Duration
	poll   time.Duration // 0: the provider's default
	bin    string
	dir    string
	commit string // of the tree the provider was built from
	// policies is the number of AccessPolicies the Ingresses share
	// (BENCH_ACCESS_POLICIES): each Ingress names one, so each hostname
	// is protected by an Access application of its own. 0: none.
	policies int
	// singles is the number of single changes at steady state
	// (BENCH_SINGLES): Ingresses added one at a time, then deleted one at
	// a time, gap (BENCH_SINGLE_GAP) apart. 0: none.
	singles int
	gap     time.Duration
}

// BenchmarkScale runs, for each variant at the same time, one
// CloudflareTunnel with BENCH_N public Ingresses, each with a VPC service,
// against a rate-limited simulator of its own, served by the provider
// binary as a process of its own on a control plane of its own: time to
// Ready (every Ingress's), requests, steady-state polling, the provider
// process's memory and CPU, and teardown. It runs once whatever b.N is
// (make bench passes -benchtime=1x).
func BenchmarkScale(b *testing.B) {
	var s settings
	var err error
	if s.n, err = envInt("BENCH_N", 100); err != nil {
		b.Fatal(err)
	}
	if s.steady, err = envDuration("BENCH_STEADY", 5*time.Minute); err != nil {
		b.Fatal(err)
	}
	if s.poll, err = envDuration("BENCH_POLL", 0); err != nil {
		b.Fatal(err)
	}
	if s.singles, err = envCount("BENCH_SINGLES", 10); err != nil {
		b.Fatal(err)
	}
	if s.gap, err = envDuration("BENCH_SINGLE_GAP", 10*time.Second); err != nil {
		b.Fatal(err)
	}
	if os.Getenv("BENCH_ACCESS_POLICIES") != "" {
		if s.policies, err = envInt("BENCH_ACCESS_POLICIES", 0); err != nil {
			b.Fatal(err)
		}
	}
	vs, err := variants()
	if err != nil {
		b.Fatal(err)
	}
	s.dir = b.TempDir()
	if d := os.Getenv("BENCH_OUT"); d != "" {
		s.dir = d
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	s.commit = commit()
	fmt.Printf("bench: building the provider at %s into %s\n", s.commit, s.dir)
	if s.bin, err = process.BuildProvider(testenv.RepoRoot(), s.dir); err != nil {
		b.Fatal(err)
	}
	for _, v := range vs {
		fmt.Printf("bench: variant %s: provider flags %s\n", v.name, strings.Join(providerArgs(s, v, "<metrics>"), " "))
	}
	fmt.Printf("bench: N=%d, steady window %s, budget %.1f req/s burst %d, simulator limit %d/%s; logs in %s (BENCH_OUT keeps them)\n",
		s.n, s.steady, budgetRate, budgetBurst, cfLimit, cfWindow, s.dir)

	b.ResetTimer()
	results := make([]*result, len(vs))
	errs := make([]error, len(vs))
	var wg sync.WaitGroup
	for i, v := range vs {
		wg.Go(func() { results[i], errs[i] = runVariant(s, v) })
	}
	wg.Wait()
	b.StopTimer()

	failed := false
	for i, err := range errs {
		if err != nil {
			failed = true
			b.Errorf("variant %s: %v (provider log: %s)", vs[i].name, err, providerLog(s, vs[i]))
		}
	}
	if failed {
		return
	}
	for _, r := range results {
		for _, p := range r.problems {
			b.Errorf("variant %s: %s", r.v.name, p)
		}
	}
	report(s, results)
	for _, r := range results {
		r.metrics(b)
	}
	b.ReportMetric(0, "ns/op")
}

func providerLog(s settings, v variant) string { return filepath.Join(s.dir, v.name+"-provider.log") }

// providerArgs are the provider's flags for a variant: its defaults (the
// production poll, --max-reconcile-rate and budget), a metrics address for
// the benchmark to read the budget from, no health endpoint, BENCH_POLL,
// and the variant's own.
func providerArgs(s settings, v variant, metricsAddr string) []string {
	args := []string{"--metrics-bind-address=" + metricsAddr, "--health-probe-bind-address=0"}
	if s.poll > 0 {
		args = append(args, "--poll="+s.poll.String())
	}
	return append(args, v.args...)
}

// run is one variant's control plane, simulator and provider process.
type run struct {
	v          variant
	s          settings
	env        *testenv.Env
	sim        *sim.Server
	proc       *process.Process
	metricsURL string
	tracker    *tracker
}

func (r *run) logf(format string, args ...any) {
	fmt.Printf("bench[%s]: %s\n", r.v.name, fmt.Sprintf(format, args...))
}

// runVariant sets up one variant, runs the scenario, and tears it all down.
func runVariant(s settings, v variant) (*result, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := &run{v: v, s: s}

	env, err := testenv.Start()
	if err != nil {
		return nil, err
	}
	r.env = env
	// The readiness watch ends before its control plane.
	defer func() { cancel(); _ = env.Stop() }()

	// Cloudflare's limit: 1,200 requests per 5 minutes per token, and a
	// 5-minute block once exceeded. No contract checker: the integration
	// tests check the contract.
	r.sim = sim.New(sim.Options{
		Token: providertest.Token, AccountID: providertest.AccountID, Zones: providertest.Zones,
		RateLimit: cfLimit, RateWindow: cfWindow, RatePenalty: cfWindow,
	})
	srv := httptest.NewServer(r.sim)
	defer srv.Close()
	if err := providertest.InstallDefaultConfig(ctx, env.Client, srv.URL+"/client/v4/"); err != nil {
		return nil, err
	}
	kubeconfig := filepath.Join(s.dir, v.name+".kubeconfig")
	if err := env.WriteKubeconfig(kubeconfig); err != nil {
		return nil, err
	}
	metricsAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	r.metricsURL = "http://" + metricsAddr + "/metrics"
	r.proc = &process.Process{Bin: s.bin, Args: providerArgs(s, v, metricsAddr), Env: []string{"KUBECONFIG=" + kubeconfig}, Log: providerLog(s, v)}
	if err := r.proc.Start(); err != nil {
		return nil, err
	}
	defer r.proc.Stop(30 * time.Second)
	if err := r.waitProvider(); err != nil {
		return nil, err
	}
	if r.tracker, err = startTracker(ctx, env); err != nil {
		return nil, err
	}
	return r.scenario(ctx)
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", errors.Wrap(err, "cannot find a free port")
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String(), nil
}

// waitProvider waits until the provider serves its metrics (its manager
// runs), or fails when the process exits (an unknown flag, say).
func (r *run) waitProvider() error {
	exited := false
	err := wait.Until(2*time.Minute, func() error {
		select {
		case <-r.proc.Exited():
			exited = true
			return nil
		default:
		}
		resp, err := http.Get(r.metricsURL)
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return errors.Errorf("metrics answer %s", resp.Status)
		}
		return nil
	})
	if exited {
		return errors.Errorf("the provider exited at start: %v", r.proc.Err())
	}
	return errors.Wrap(err, "the provider serves no metrics two minutes after its start")
}

// budget reads the provider's budget metrics; zero if it cannot.
func (r *run) budget() bench.Budget {
	resp, err := http.Get(r.metricsURL)
	if err != nil {
		return bench.Budget{}
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := bench.ParseBudget(resp.Body)
	return b
}

// phase is what one phase of a run measured.
type phase struct {
	name   string
	wall   time.Duration
	stats  bench.Stats
	budget bench.Budget
	usage  bench.PhaseUsage
}

// result is what one variant measured.
type result struct {
	v                     variant
	n                     int
	policies              int    // AccessPolicies shared by the n hostnames; 0: none
	startRSS, startPeak   uint64 // the provider's RSS and peak before the run
	applied               time.Duration
	readyAt, configAt     time.Duration
	ingressReady          bench.Spread
	conv, steady, del     phase
	single                phase
	singles               singles
	gap                   time.Duration // between single changes
	perMinute             []int
	ingressesGone         time.Duration
	converged, afterwards bench.Live
	problems              []string
}

// scenario is the run: create and converge, steady state, deletion.
func (r *run) scenario(ctx context.Context) (*result, error) {
	n, c := r.s.n, r.env.Client
	res := &result{v: r.v, n: n, policies: r.s.policies, gap: r.s.gap}
	pid := r.proc.Pid()
	if p, err := bench.ReadProc(pid); err == nil {
		res.startRSS, res.startPeak = p.RSS, p.PeakRSS
	}
	sampler, err := bench.StartProcSampler(pid, time.Second)
	if err != nil {
		return nil, err
	}
	defer sampler.Stop()
	r.sim.ResetStats()
	mark := struct {
		at     time.Time
		stats  bench.Stats
		budget bench.Budget
	}{time.Now(), bench.Stats(r.sim.Stats()), r.budget()}
	endPhase := func(name string) (phase, error) {
		now, st, bu := time.Now(), bench.Stats(r.sim.Stats()), r.budget()
		u, err := sampler.Phase()
		if err != nil {
			return phase{}, errors.Wrapf(err, "cannot read the provider process after %s (it exited: %v)", name, r.proc.Err())
		}
		ph := phase{name: name, wall: now.Sub(mark.at), stats: st.Sub(mark.stats), budget: bu.Sub(mark.budget), usage: u}
		mark.at, mark.stats, mark.budget = now, st, bu
		return ph, nil
	}
	r.tracker.begin(mark.at)

	// --- create and converge ---------------------------------------------
	if err := create(ctx, c, n, r.s.policies); err != nil {
		return nil, err
	}
	res.applied = time.Since(mark.at)
	lastLog := time.Now()
	deadline := time.Now().Add(phaseDeadline)
	for {
		st := r.tracker.state()
		live := bench.Count(r.sim.Snapshot())
		el := time.Since(mark.at)
		if res.readyAt == 0 && st.allReady(n) {
			res.readyAt = el
		}
		if res.configAt == 0 && live.ConfigHostnames == n {
			res.configAt = el
		}
		if res.readyAt != 0 && res.configAt != 0 {
			break
		}
		if time.Since(lastLog) >= 15*time.Second {
			req, rl := bench.Stats(r.sim.Stats()).Sub(mark.stats).Total()
			r.logf("%4.0fs %s; %d/%d Ingresses Ready; %d hostnames in tunnel config; %d requests, %d 429s", el.Seconds(), st, st.ingressesReady, n, live.ConfigHostnames, req, rl)
			lastLog = time.Now()
		}
		select {
		case <-r.proc.Exited():
			return nil, errors.Errorf("the provider exited while converging: %v", r.proc.Err())
		default:
		}
		if time.Now().After(deadline) {
			return nil, errors.Errorf("not converged after %s: %s; %s; not ready: %s", phaseDeadline, st, live, strings.Join(st.notReady, "; "))
		}
		time.Sleep(time.Second) // the resolution of the times measured
	}
	if res.conv, err = endPhase("converge"); err != nil {
		return nil, err
	}
	ready := r.tracker.ingressReadyTimes()
	res.ingressReady = bench.SpreadOf(ready)
	if len(ready) != n {
		res.problems = append(res.problems, fmt.Sprintf("%d of %d Ingresses were seen Ready (their route, VPC service and DNS record Ready and Synced, by the %s label)", len(ready), n, publish.LabelIngress))
	}
	res.converged = bench.Count(r.sim.Snapshot())
	r.logf("converged: every managed resource Ready at %s, all %d hostnames in the tunnel configuration at %s", round(res.readyAt), n, round(res.configAt))
	if l := res.converged; l.Tunnels != 1 || l.Routes != n || l.Services != n || l.Records != n || len(l.Duplicates) > 0 || l.CIDRRoutes != 0 {
		res.problems = append(res.problems, fmt.Sprintf("after convergence the account holds %s; want 1 tunnel and exactly %d routes, services and records, no duplicates", l, n))
	}
	if k, l := r.s.policies, res.converged; k > 0 && (l.AccessApps != n || l.AccessPolicies != k || l.AccessProtected != n) {
		res.problems = append(res.problems, fmt.Sprintf("after convergence the account holds %d Access applications and %d policies, and %d hostnames are protected on every rule; want %d, %d and %d", l.AccessApps, l.AccessPolicies, l.AccessProtected, n, k, n))
	}

	// --- steady state ------------------------------------------------------
	if r.s.steady > 0 {
		r.logf("steady state for %s", r.s.steady)
		end := time.Now().Add(r.s.steady)
		prev := bench.Stats(r.sim.Stats())
		for time.Now().Before(end) {
			time.Sleep(min(time.Minute, time.Until(end))) // the steady state is measured over time
			cur := bench.Stats(r.sim.Stats())
			req, _ := cur.Sub(prev).Total()
			res.perMinute = append(res.perMinute, req)
			prev = cur
			r.logf("steady: %d requests in the last interval", req)
		}
	}
	if res.steady, err = endPhase("steady"); err != nil {
		return nil, err
	}

	// --- single changes ----------------------------------------------------
	if r.s.singles > 0 {
		r.logf("%d single adds, then %d single deletes, %s apart", r.s.singles, r.s.singles, r.s.gap)
		if res.singles, err = r.singleChanges(ctx); err != nil {
			return nil, err
		}
		if res.single, err = endPhase("single changes"); err != nil {
			return nil, err
		}
	}

	// --- delete ------------------------------------------------------------
	r.logf("deleting every Ingress, then the CloudflareTunnel")
	ings := &networkingv1.IngressList{}
	if err := c.List(ctx, ings, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	for i := range ings.Items {
		if err := c.Delete(ctx, &ings.Items[i]); client.IgnoreNotFound(err) != nil {
			return nil, err
		}
	}
	if err := r.waitGone(ctx, "Ingresses and their managed resources", func() (int, error) {
		left := 0
		for _, l := range []client.ObjectList{&networkingv1.IngressList{}, &ztv1alpha1.HostnameRouteList{}, &connv1alpha1.VPCServiceList{}, &dnsv1alpha1.DNSRecordList{}, &ztv1alpha1.AccessApplicationList{}} {
			if err := c.List(ctx, l, client.InNamespace(namespace)); err != nil {
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
	}); err != nil {
		return nil, err
	}
	res.ingressesGone = time.Since(mark.at)
	if err := deletePolicies(ctx, c); err != nil {
		return nil, err
	}
	if err := r.waitGone(ctx, "the AccessPolicies", func() (int, error) {
		l := &ztv1alpha1.AccessPolicyList{}
		err := c.List(ctx, l, client.InNamespace(namespace))
		return len(l.Items), err
	}); err != nil {
		return nil, err
	}
	if err := c.Delete(ctx, &v1alpha1.CloudflareTunnel{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: tunnelName}}); err != nil {
		return nil, err
	}
	if err := r.waitGone(ctx, "the CloudflareTunnel and its Tunnel", func() (int, error) {
		left := 0
		for _, o := range []client.Object{&v1alpha1.CloudflareTunnel{}, &ztv1alpha1.Tunnel{}} {
			err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: tunnelName}, o)
			switch {
			case err == nil:
				left++
			case !kerrors.IsNotFound(err):
				return 0, err
			}
		}
		return left, nil
	}); err != nil {
		return nil, err
	}
	if res.del, err = endPhase("delete"); err != nil {
		return nil, err
	}
	res.afterwards = bench.Count(r.sim.Snapshot())
	if res.afterwards.Leftovers() != 0 {
		res.problems = append(res.problems, fmt.Sprintf("after deletion the account still holds %s", res.afterwards))
	}
	r.logf("done")
	return res, nil
}

// waitGone polls left until it reports nothing left.
func (r *run) waitGone(_ context.Context, what string, left func() (int, error)) error {
	lastLog := time.Now()
	var failed error
	err := wait.Until(phaseDeadline, func() error {
		n, err := left()
		if err != nil {
			failed = err
			return nil
		}
		if n > 0 && time.Since(lastLog) >= 15*time.Second {
			r.logf("waiting for %s: %d objects left", what, n)
			lastLog = time.Now()
		}
		if n > 0 {
			return errors.Errorf("%d objects left", n)
		}
		return nil
	})
	if failed != nil {
		return failed
	}
	return errors.Wrapf(err, "%s not gone after %s; account holds %s", what, phaseDeadline, bench.Count(r.sim.Snapshot()))
}

// deletePolicies deletes the scenario's AccessPolicies, once the
// applications that used them are gone.
func deletePolicies(ctx context.Context, c client.Client) error {
	return client.IgnoreNotFound(c.DeleteAllOf(ctx, &ztv1alpha1.AccessPolicy{}, client.InNamespace(namespace)))
}

// policyName is the i-th shared AccessPolicy.
func policyName(i int) string { return fmt.Sprintf("policy-%d", i) }

// create applies the scenario: one CloudflareTunnel and n public Ingresses,
// each on its own Service, host app-<i>.example.com and VPC service; with
// policies > 0, that many AccessPolicies, the i-th Ingress protected by
// policy i mod policies.
func create(ctx context.Context, c client.Client, n, policies int) error {
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}},
		&v1alpha1.CloudflareTunnel{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: tunnelName},
			Spec:       v1alpha1.CloudflareTunnelSpec{TunnelName: ptr.To("bench-" + tunnelName), Replicas: ptr.To[int32](1)},
		},
	}
	for i := range policies {
		objs = append(objs, &ztv1alpha1.AccessPolicy{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: policyName(i)},
			Spec: ztv1alpha1.AccessPolicySpec{ForProvider: ztv1alpha1.AccessPolicyParameters{Name: "bench " + policyName(i), Decision: "allow",
				Include: []ztv1alpha1.AccessRule{{EmailDomain: ptr.To(fmt.Sprintf("team-%d.example.com", i))}}}},
		})
	}
	for i := range n {
		name := fmt.Sprintf("app-%d", i)
		ann := map[string]string{
			v1alpha1.AnnotationTunnel:     tunnelName,
			v1alpha1.AnnotationPublic:     "true",
			v1alpha1.AnnotationVPCService: fmt.Sprintf("bench-%d", i),
		}
		if policies > 0 {
			ann[v1alpha1.AnnotationAccessPolicies] = policyName(i % policies)
		}
		objs = append(objs, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
			// Headless: envtest's service IP range has room for ~250.
			Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}}},
		}, &networkingv1.Ingress{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Annotations: ann},
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
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil {
			return errors.Wrapf(err, "cannot create %T %s", o, o.GetName())
		}
	}
	return nil
}

// The managed-resource kinds an Ingress of the scenario makes, one each.
var kinds = []struct {
	name, hop string
	obj       client.Object
}{{"routes", "HostnameRoute", &ztv1alpha1.HostnameRoute{}}, {"VPC services", "VPCService", &connv1alpha1.VPCService{}}, {"DNS records", "DNSRecord", &dnsv1alpha1.DNSRecord{}}}

// tracker watches the managed resources and records when each Ingress
// first became Ready: its route, VPC service and DNS record (found by their
// publish.LabelIngress label) all Ready and Synced at once — the
// benchmark's readiness, per Ingress.
type tracker struct {
	mu    sync.Mutex
	start time.Time
	// mrs is every managed resource seen, by kind index and name.
	mrs map[[2]string]mrState
	// byIngress are the Ready flags of an Ingress's resources, by kind
	// index.
	byIngress  map[string]map[int]bool
	firstReady map[string]time.Duration
	// events are, by Ingress, when each of its objects was first seen,
	// first Ready, and gone ("route created", "route Ready", "route
	// gone", "PublicHostname created"): the hops of a single change.
	events map[string]map[string]time.Time
}

type mrState struct {
	ingress string
	kind    int
	ready   bool
	why     string
}

func startTracker(ctx context.Context, env *testenv.Env) (*tracker, error) {
	t := &tracker{mrs: map[[2]string]mrState{}, byIngress: map[string]map[int]bool{}, firstReady: map[string]time.Duration{}, events: map[string]map[string]time.Time{}, start: time.Now()}
	c, err := cache.New(env.Config, cache.Options{Scheme: env.Scheme, DefaultNamespaces: map[string]cache.Config{namespace: {}}})
	if err != nil {
		return nil, errors.Wrap(err, "cannot make the readiness cache")
	}
	go func() { _ = c.Start(ctx) }()
	for k, kd := range kinds {
		inf, err := c.GetInformer(ctx, kd.obj)
		if err != nil {
			return nil, errors.Wrapf(err, "cannot watch %s", kd.name)
		}
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    func(o any) { t.observe(k, o, false) },
			UpdateFunc: func(_, o any) { t.observe(k, o, false) },
			DeleteFunc: func(o any) { t.observe(k, o, true) },
		}); err != nil {
			return nil, errors.Wrapf(err, "cannot watch %s", kd.name)
		}
	}
	inf, err := c.GetInformer(ctx, &v1alpha1.PublicHostname{})
	if err != nil {
		return nil, errors.Wrap(err, "cannot watch PublicHostnames")
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(o any) {
			if ph, ok := o.(*v1alpha1.PublicHostname); ok {
				t.event(ph.GetLabels()[publish.LabelIngress], "PublicHostname created", time.Now())
			}
		},
		UpdateFunc: func(_, o any) {
			if ph, ok := o.(*v1alpha1.PublicHostname); ok && ph.Status.Tunnel != nil && ph.Status.Tunnel.Accepted && ph.Status.Tunnel.Rules > 0 {
				t.event(ph.GetLabels()[publish.LabelIngress], "PublicHostname answered", time.Now())
			}
		},
	}); err != nil {
		return nil, errors.Wrap(err, "cannot watch PublicHostnames")
	}
	return t, nil
}

// event records the first time the Ingress's object reached a hop.
func (t *tracker) event(ingress, hop string, at time.Time) {
	if ingress == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.eventLocked(ingress, hop, at)
}

func (t *tracker) eventLocked(ingress, hop string, at time.Time) {
	ev := t.events[ingress]
	if ev == nil {
		ev = map[string]time.Time{}
		t.events[ingress] = ev
	}
	if _, seen := ev[hop]; !seen {
		ev[hop] = at
	}
}

// eventsOf are the hops the Ingress's objects reached, and when.
func (t *tracker) eventsOf(ingress string) map[string]time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	return maps.Clone(t.events[ingress])
}

// begin sets the run's start, from which Ready times count.
func (t *tracker) begin(at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.start = at
}

func (t *tracker) observe(kind int, o any, deleted bool) {
	if d, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
		o, deleted = d.Obj, true
	}
	m, ok := o.(resource.Managed)
	if !ok {
		return
	}
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	key := [2]string{strconv.Itoa(kind), m.GetName()}
	ingress := m.GetLabels()[publish.LabelIngress]
	if deleted {
		delete(t.mrs, key)
		t.eventLocked(ingress, kinds[kind].hop+" gone", now)
		return
	}
	rc, sc := m.GetCondition(xpv2.TypeReady), m.GetCondition(xpv2.TypeSynced)
	st := mrState{ingress: ingress, kind: kind, ready: rc.Status == corev1.ConditionTrue && sc.Status == corev1.ConditionTrue}
	t.eventLocked(ingress, kinds[kind].hop+" created", now)
	if st.ready {
		t.eventLocked(ingress, kinds[kind].hop+" Ready", now)
	}
	if !st.ready {
		st.why = fmt.Sprintf("%s: Ready=%s %s, Synced=%s %s %s", m.GetName(), rc.Status, rc.Reason, sc.Status, sc.Reason, sc.Message)
	}
	t.mrs[key] = st
	if st.ingress == "" {
		return
	}
	ing := t.byIngress[st.ingress]
	if ing == nil {
		ing = map[int]bool{}
		t.byIngress[st.ingress] = ing
	}
	ing[kind] = st.ready
	if _, seen := t.firstReady[st.ingress]; seen {
		return
	}
	for k := range kinds {
		if !ing[k] {
			return
		}
	}
	t.firstReady[st.ingress] = now.Sub(t.start)
}

// readinessState counts the managed resources of each kind, and the Ready
// ones.
type readinessState struct {
	total, ready   [3]int
	ingressesReady int
	notReady       []string // a few examples, for a timeout message
}

func (t *tracker) state() readinessState {
	t.mu.Lock()
	defer t.mu.Unlock()
	var s readinessState
	for _, m := range t.mrs {
		s.total[m.kind]++
		if m.ready {
			s.ready[m.kind]++
		} else if len(s.notReady) < 5 {
			s.notReady = append(s.notReady, m.why)
		}
	}
	s.ingressesReady = len(t.firstReady)
	return s
}

func (s readinessState) allReady(n int) bool {
	for k := range kinds {
		if s.total[k] != n || s.ready[k] != n {
			return false
		}
	}
	return true
}

func (s readinessState) String() string {
	var parts []string
	for k, kd := range kinds {
		parts = append(parts, fmt.Sprintf("%s %d/%d Ready", kd.name, s.ready[k], s.total[k]))
	}
	return strings.Join(parts, ", ")
}

// ingressReadyTimes are the Ingresses' first-Ready times.
func (t *tracker) ingressReadyTimes() []time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]time.Duration, 0, len(t.firstReady))
	for _, d := range t.firstReady {
		out = append(out, d)
	}
	return out
}

// derived are a result's figures computed from its measurements.
type derived struct {
	convReq, conv429, steadyReq, steady429, delReq, del429 int
	configWrites, delConfigWrites                          int
	dnsConv, dnsDel                                        int // DNS write requests: creates (or deletes) plus batches
	floor, floorSingle, delFloor, delFloorSingle           bench.Minimum
	budgetTime, floorTime                                  time.Duration
	steadyPerMin, steadyCPU                                float64 // requests per minute; % of one core
	medianPct                                              float64 // median Ingress Ready as % of time to Ready
	peakRSS                                                uint64
	rateLimited                                            int
}

func (r *result) derive() derived {
	var d derived
	d.convReq, d.conv429 = r.conv.stats.Total()
	d.steadyReq, d.steady429 = r.steady.stats.Total()
	d.delReq, d.del429 = r.del.stats.Total()
	d.configWrites = r.conv.stats.Requests("tunnels.configurations.update")
	d.delConfigWrites = r.del.stats.Requests("tunnels.configurations.update")
	d.dnsConv = r.conv.stats.Requests("dns_records.create") + r.conv.stats.Requests(batchOp)
	d.dnsDel = r.del.stats.Requests("dns_records.delete") + r.del.stats.Requests(batchOp)
	apps := 0
	if r.policies > 0 {
		apps = r.n
	}
	d.floor = bench.MinimumRequests(r.n, bench.DefaultDNSBatchSize, d.configWrites).WithAccess(apps, r.policies)
	d.floorSingle = bench.MinimumRequests(r.n, 1, d.configWrites).WithAccess(apps, r.policies)
	d.delFloor = bench.DeletionMinimum(r.n, bench.DefaultDNSBatchSize, d.delConfigWrites).WithAccessDeletion(apps, r.policies)
	d.delFloorSingle = bench.DeletionMinimum(r.n, 1, d.delConfigWrites).WithAccessDeletion(apps, r.policies)
	d.budgetTime = bench.BudgetTime(d.convReq, budgetRate, budgetBurst)
	d.floorTime = bench.BudgetTime(d.floor.Total, budgetRate, budgetBurst)
	if r.steady.wall > 0 {
		d.steadyPerMin = float64(d.steadyReq) / r.steady.wall.Minutes()
		d.steadyCPU = 100 * r.steady.usage.CPU().Seconds() / r.steady.wall.Seconds()
	}
	if r.readyAt > 0 {
		d.medianPct = 100 * r.ingressReady.Median.Seconds() / r.readyAt.Seconds()
	}
	d.peakRSS = max(r.conv.usage.PeakRSS, r.steady.usage.PeakRSS, r.del.usage.PeakRSS)
	d.rateLimited = d.conv429 + d.steady429 + d.del429
	return d
}

func ratio(a, b int) float64 { return float64(a) / float64(max(b, 1)) }

func dratio(a, b time.Duration) float64 {
	if b <= 0 {
		return 0
	}
	return a.Seconds() / b.Seconds()
}

func (r *result) metrics(b *testing.B) {
	d := r.derive()
	m := func(v float64, unit string) { b.ReportMetric(v, unit+"-"+r.v.name) }
	m(r.readyAt.Seconds(), "s-ready")
	m(float64(d.convReq), "requests")
	m(ratio(d.convReq, d.floor.Total), "x-floor")
	m(dratio(r.readyAt, d.budgetTime), "x-budget-time")
	m(r.ingressReady.Median.Seconds(), "s-ingress-median")
	m(float64(d.rateLimited), "429s")
	m(d.steadyPerMin, "steady-req/min")
	m(d.steadyCPU, "steady-cpu-%")
	m(r.del.wall.Seconds(), "s-delete")
	m(float64(d.delReq), "delete-requests")
	m(float64(r.afterwards.Leftovers()), "leftovers")
	m(bench.MB(d.peakRSS), "MiB-rss-peak")
	if len(r.singles.add) > 0 {
		m(last(r.singles.add).Spread().Median.Seconds(), "s-single-add-p50")
		m(last(r.singles.add).Spread().P95.Seconds(), "s-single-add-p95")
		m(last(r.singles.del).Spread().Median.Seconds(), "s-single-delete-p50")
		m(last(r.singles.del).Spread().P95.Seconds(), "s-single-delete-p95")
	}
}

// report prints every variant's figures, then a side-by-side table.
func report(s settings, rs []*result) {
	w := &reportWriter{}
	w.f("\n## Scale benchmark: 1 CloudflareTunnel, %d public Ingresses with a VPC service each; variants %s\n\n", s.n, strings.Join(names(rs), ", "))
	w.f("- machine: %d CPUs (nproc), %s memory, %s %s/%s; the variants ran at the same time\n", runtime.NumCPU(), memTotal(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	w.f("- commit: %s (when the provider was built)\n", s.commit)
	w.f("- each variant: its own envtest control plane, simulator (Cloudflare's limit %d/%s, 5m penalty, no contract checker) and provider process (cmd/provider)\n", cfLimit, cfWindow)
	poll := "the default (1m)"
	if s.poll > 0 {
		poll = s.poll.String()
	}
	w.f("- provider defaults: budget %.1f req/s burst %d; poll %s; max-reconcile-rate %d; creation grace period %s\n", budgetRate, budgetBurst, poll, controller.DefaultMaxReconcileRate, mr.DefaultCreationGracePeriod)
	for _, r := range rs {
		w.f("- variant %s: extra flags %s\n", r.v.name, flags(r.v))
	}
	for _, r := range rs {
		r.report(w)
	}
	side(w, rs)
}

func names(rs []*result) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.v.name
	}
	return out
}

func (r *result) report(w *reportWriter) {
	d := r.derive()
	n := r.n
	w.f("\n### Variant %s\n\n#### Convergence\n\n", r.v.name)
	w.f("| measure | value |\n|---|---|\n")
	w.f("| objects applied (1 CloudflareTunnel, %d Services, %d Ingresses) | %s |\n", n, n, round(r.applied))
	w.f("| every HostnameRoute, VPCService and DNSRecord Ready and Synced | **%s** |\n", round(r.readyAt))
	w.f("| all %d hostnames in the tunnel's configuration | %s |\n", n, round(r.configAt))
	w.f("| Ingresses Ready (first / median / p95 / last) | %s / **%s** / %s / %s (%d seen) |\n", round(r.ingressReady.First), round(r.ingressReady.Median), round(r.ingressReady.P95), round(r.ingressReady.Last), r.ingressReady.N)
	w.f("| median Ingress Ready, share of the time to Ready | **%.0f%%** |\n", d.medianPct)
	w.f("| Cloudflare requests until then | **%d** (%.2f per Ingress) |\n", d.convReq, ratio(d.convReq, n))
	w.f("| DNS write requests (record creates + batches) | %d (%d batches) |\n", d.dnsConv, r.conv.stats.Requests(batchOp))
	if r.policies > 0 {
		w.f("| Access: every hostname protected by an application of its own, %d shared AccessPolicies | floor adds %d (N applications + %d policies + the organization's team domain) |\n", r.policies, d.floor.Access, r.policies)
	}
	w.f("| floor, DNS batched (2N + ⌈N/%d⌉ + tunnel + zone list + %d config writes + Access) | %d — measured is **%.2f×** |\n", bench.DefaultDNSBatchSize, d.floor.ConfigWrites, d.floor.Total, ratio(d.convReq, d.floor.Total))
	w.f("| floor, one request per record (3N + …) | %d — measured is %.2f× |\n", d.floorSingle.Total, ratio(d.convReq, d.floorSingle.Total))
	w.f("| 429 answers / other non-2xx | %d / %d |\n", d.conv429, r.conv.stats.Errors())
	w.f("| time the budget needs for the measured requests ((req − %d) ÷ %.1f/s) | %s — time to Ready is **%.2f×** |\n", budgetBurst, budgetRate, round(d.budgetTime), dratio(r.readyAt, d.budgetTime))
	w.f("| time the budget needs for the batched floor | %s — time to Ready is %.2f× |\n", round(d.floorTime), dratio(r.readyAt, d.floorTime))
	w.f("| budget: requests through it / summed wait | %d / %s |\n", r.conv.budget.Requests, round(time.Duration(r.conv.budget.WaitSeconds*float64(time.Second))))
	w.f("| provider CPU (user+sys) | %s (%s + %s) |\n", round(r.conv.usage.CPU()), round(r.conv.usage.User), round(r.conv.usage.Sys))
	w.f("| provider peak RSS / RSS at the end (before: %.0f MiB, peak at start %.0f MiB) | **%.0f** / %.0f MiB%s |\n", bench.MB(r.startRSS), bench.MB(r.startPeak), bench.MB(r.conv.usage.PeakRSS), bench.MB(r.conv.usage.RSS), sampledNote(r.conv.usage))
	w.f("| account after convergence | %s |\n", r.converged)
	w.f("\nRequests by operation until convergence:\n\n```\n")
	r.conv.stats.Table(w)
	w.f("```\n\n#### Steady state\n\n")
	w.f("| measure | value |\n|---|---|\n")
	w.f("| window | %s |\n", round(r.steady.wall))
	w.f("| requests | %d (**%.1f per minute**, %.2f per Ingress per minute) |\n", d.steadyReq, d.steadyPerMin, d.steadyPerMin/float64(n))
	w.f("| per interval | %v |\n", r.perMinute)
	w.f("| 429 answers | %d |\n", d.steady429)
	w.f("| provider CPU | %s, **%.1f%% of one core** |\n", round(r.steady.usage.CPU()), d.steadyCPU)
	w.f("| provider peak RSS / RSS at the end | **%.0f** / %.0f MiB%s |\n", bench.MB(r.steady.usage.PeakRSS), bench.MB(r.steady.usage.RSS), sampledNote(r.steady.usage))
	if d.steadyReq > 0 {
		w.f("\nRequests by operation in the steady window:\n\n```\n")
		r.steady.stats.Table(w)
		w.f("```\n")
	}
	r.singles.report(w, n, r.gap)
	if total, _ := r.single.stats.Total(); total > 0 {
		w.f("Requests by operation during the single changes (%s):\n\n```\n", round(r.single.wall))
		r.single.stats.Table(w)
		w.f("```\n")
	}
	w.f("\n#### Deletion\n\n")
	w.f("| measure | value |\n|---|---|\n")
	w.f("| every Ingress and managed resource gone | %s |\n", round(r.ingressesGone))
	w.f("| then the CloudflareTunnel and its Tunnel gone | **%s** in all |\n", round(r.del.wall))
	w.f("| Cloudflare requests | **%d** |\n", d.delReq)
	w.f("| floor, DNS batched (2N + ⌈N/%d⌉ + %d config writes + tunnel + Access) | %d — measured is **%.2f×** |\n", bench.DefaultDNSBatchSize, d.delFloor.ConfigWrites, d.delFloor.Total, ratio(d.delReq, d.delFloor.Total))
	w.f("| floor, one request per record | %d — measured is %.2f× |\n", d.delFloorSingle.Total, ratio(d.delReq, d.delFloorSingle.Total))
	w.f("| 429 answers | %d |\n", d.del429)
	w.f("| provider CPU / peak RSS | %s / %.0f MiB%s |\n", round(r.del.usage.CPU()), bench.MB(r.del.usage.PeakRSS), sampledNote(r.del.usage))
	w.f("| account afterwards | %s |\n", r.afterwards)
	w.f("\nRequests by operation during deletion:\n\n```\n")
	r.del.stats.Table(w)
	w.f("```\n\n#### Targets (issue 21)\n\n")
	w.f("- requests until Ready ≤ 1.05× the batched floor: %s (%.2f×)\n", verdict(float64(d.convReq) <= 1.05*float64(d.floor.Total)), ratio(d.convReq, d.floor.Total))
	w.f("- time to Ready ≤ 1.1× the budget's time for those requests: %s (%.2f×)\n", verdict(r.readyAt.Seconds() <= 1.1*d.budgetTime.Seconds()), dratio(r.readyAt, d.budgetTime))
	w.f("- median Ingress Ready ≤ 60%% of the time to Ready: %s (%.0f%%); the first within 15s: %s (%s)\n", verdict(d.medianPct <= 60), d.medianPct, verdict(r.ingressReady.N > 0 && r.ingressReady.First <= 15*time.Second), round(r.ingressReady.First))
	w.f("- deletion ≤ 1.05× its batched floor: %s (%.2f×)\n", verdict(float64(d.delReq) <= 1.05*float64(d.delFloor.Total)), ratio(d.delReq, d.delFloor.Total))
	w.f("- provider peak RSS ≤ 200 MiB: %s (%.0f MiB); steady-state CPU ≤ 5%% of a core: %s (%.1f%%)\n", verdict(bench.MB(d.peakRSS) <= 200), bench.MB(d.peakRSS), verdict(d.steadyCPU <= 5), d.steadyCPU)
	w.f("- 0 × 429, 0 duplicates, 0 left: %s (%d, %d, %d)\n", verdict(d.rateLimited == 0 && len(r.converged.Duplicates) == 0 && r.afterwards.Leftovers() == 0), d.rateLimited, len(r.converged.Duplicates), r.afterwards.Leftovers())
}

// flags renders a variant's extra flags for the report.
func flags(v variant) string {
	if len(v.args) == 0 {
		return "none"
	}
	return "`" + strings.Join(v.args, " ") + "`"
}

func sampledNote(u bench.PhaseUsage) string {
	if u.PeakExact {
		return ""
	}
	return " (peak sampled each second: VmHWM could not be reset)"
}

// side prints the variants' headline figures in columns.
func side(w *reportWriter, rs []*result) {
	ds := make([]derived, len(rs))
	for i, r := range rs {
		ds[i] = r.derive()
	}
	w.f("\n### Side by side\n\n| measure |")
	for _, r := range rs {
		w.f(" %s |", r.v.name)
	}
	w.f("\n|---|%s\n", strings.Repeat("---|", len(rs)))
	row := func(name string, cell func(r *result, d derived) string) {
		w.f("| %s |", name)
		for i, r := range rs {
			w.f(" %s |", cell(r, ds[i]))
		}
		w.f("\n")
	}
	row("extra flags", func(r *result, _ derived) string { return flags(r.v) })
	row("time to Ready (every managed resource)", func(r *result, _ derived) string { return round(r.readyAt).String() })
	row("Ingress Ready first / median / p95 / last", func(r *result, _ derived) string {
		s := r.ingressReady
		return fmt.Sprintf("%s / %s / %s / %s", round(s.First), round(s.Median), round(s.P95), round(s.Last))
	})
	row("single add / delete at steady N, p50 / p95", func(r *result, _ derived) string {
		if len(r.singles.add) == 0 {
			return "-"
		}
		a, d := last(r.singles.add).Spread(), last(r.singles.del).Spread()
		return fmt.Sprintf("%s / %s, %s / %s", msRound(a.Median), msRound(a.P95), msRound(d.Median), msRound(d.P95))
	})
	row("median Ingress Ready, % of time to Ready", func(_ *result, d derived) string { return fmt.Sprintf("%.0f%%", d.medianPct) })
	row("requests until Ready", func(_ *result, d derived) string { return strconv.Itoa(d.convReq) })
	row("DNS write requests (batches)", func(r *result, d derived) string {
		return fmt.Sprintf("%d (%d)", d.dnsConv, r.conv.stats.Requests(batchOp))
	})
	row("configuration writes", func(_ *result, d derived) string { return strconv.Itoa(d.configWrites) })
	row("× batched floor", func(_ *result, d derived) string {
		return fmt.Sprintf("%.2f× of %d", ratio(d.convReq, d.floor.Total), d.floor.Total)
	})
	row("× per-record floor", func(_ *result, d derived) string {
		return fmt.Sprintf("%.2f× of %d", ratio(d.convReq, d.floorSingle.Total), d.floorSingle.Total)
	})
	row("time to Ready × budget time for its requests", func(r *result, d derived) string {
		return fmt.Sprintf("%.2f× of %s", dratio(r.readyAt, d.budgetTime), round(d.budgetTime))
	})
	row("time to Ready × budget time for the batched floor", func(r *result, d derived) string {
		return fmt.Sprintf("%.2f× of %s", dratio(r.readyAt, d.floorTime), round(d.floorTime))
	})
	row("provider CPU until Ready", func(r *result, _ derived) string { return round(r.conv.usage.CPU()).String() })
	row("provider peak RSS (converge / steady / delete)", func(r *result, _ derived) string {
		return fmt.Sprintf("%.0f / %.0f / %.0f MiB", bench.MB(r.conv.usage.PeakRSS), bench.MB(r.steady.usage.PeakRSS), bench.MB(r.del.usage.PeakRSS))
	})
	row("steady requests per minute", func(_ *result, d derived) string { return fmt.Sprintf("%.1f", d.steadyPerMin) })
	row("steady CPU, % of one core", func(_ *result, d derived) string { return fmt.Sprintf("%.1f%%", d.steadyCPU) })
	row("deletion time", func(r *result, _ derived) string { return round(r.del.wall).String() })
	row("deletion requests × batched floor", func(_ *result, d derived) string {
		return fmt.Sprintf("%d, %.2f× of %d", d.delReq, ratio(d.delReq, d.delFloor.Total), d.delFloor.Total)
	})
	row("429s / duplicates / left", func(r *result, d derived) string {
		return fmt.Sprintf("%d / %d / %d", d.rateLimited, len(r.converged.Duplicates), r.afterwards.Leftovers())
	})
	if len(rs) == 2 {
		a, b := ds[0], ds[1]
		w.f("\n%s sent %.2f× the requests until Ready of %s, and took %.2f× its time.\n", rs[0].v.name, ratio(a.convReq, b.convReq), rs[1].v.name, dratio(rs[0].readyAt, rs[1].readyAt))
	}
}

// reportWriter writes the report to stdout.
type reportWriter struct{}

func (reportWriter) Write(p []byte) (int, error) { return os.Stdout.Write(p) }

func (w *reportWriter) f(format string, args ...any) { fmt.Fprintf(w, format, args...) }

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

func TestVariants(t *testing.T) {
	cases := map[string]struct {
		env     map[string]string
		want    []variant
		wantErr bool
	}{
		"the defaults": {
			want: []variant{{name: "batching"}, {name: "single", args: []string{"--dns-batch-window=0"}}},
		},
		"set but empty args mean none": {
			env:  map[string]string{"BENCH_ARGS_SINGLE": ""},
			want: []variant{{name: "batching"}, {name: "single", args: []string{}}},
		},
		"own variants and args": {
			env:  map[string]string{"BENCH_VARIANTS": "fast, slow_poll", "BENCH_ARGS_SLOW_POLL": " --poll=5m  --debug "},
			want: []variant{{name: "fast"}, {name: "slow_poll", args: []string{"--poll=5m", "--debug"}}},
		},
		"a name twice":       {env: map[string]string{"BENCH_VARIANTS": "a,a"}, wantErr: true},
		"an upper-case name": {env: map[string]string{"BENCH_VARIANTS": "Single"}, wantErr: true},
		"an empty name":      {env: map[string]string{"BENCH_VARIANTS": "a,,b"}, wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			for _, k := range []string{"BENCH_VARIANTS", "BENCH_ARGS_BATCHING", "BENCH_ARGS_SINGLE", "BENCH_ARGS_SLOW_POLL"} {
				if v, ok := tc.env[k]; ok {
					t.Setenv(k, v)
				} else {
					t.Setenv(k, "")
					_ = os.Unsetenv(k)
				}
			}
			got, err := variants()
			if (err != nil) != tc.wantErr {
				t.Fatalf("variants(): error %v, want error %t", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(variant{}), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("variants(): -want +got:\n%s", diff)
			}
		})
	}
}
