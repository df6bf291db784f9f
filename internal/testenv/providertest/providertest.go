// Package providertest runs the whole provider for integration tests: a
// real kube-apiserver and etcd, the Cloudflare simulator (every call checked
// against Cloudflare's OpenAPI document), a ClusterProviderConfig "default"
// pointing at it, and the provider's real controllers, wired as main wires
// them.
package providertest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/feature"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/customresourcesgate"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare/budget"
	providercontroller "github.com/context-labs/provider-cloudflare-tunnel/internal/controller"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/mr"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/kubecache"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/ownership"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim/contract"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

// Fixed test identities.
const (
	Token     = "integration-test-token"
	AccountID = "0123456789abcdef0123456789abcdef"
)

// Zones the simulated account holds.
var Zones = []string{"example.com", "dev.example.com", "example.org"}

// Provider is a running provider against the simulator.
type Provider struct {
	*testenv.Env
	Sim *sim.Server
	// Cloudflare is a client of the simulated account, for tests to set up
	// and inspect Cloudflare state behind the provider's back.
	Cloudflare *cloudflare.Client
	contract   *contract.Transport
	requests   *kubeRequests
	// Poll is the managed resources' drift-check poll interval.
	Poll time.Duration
	// Endpoint is the simulator's API base URL ("http://…/client/v4/").
	Endpoint string
}

// Run is for TestMain: it starts everything, runs the tests, and fails if
// any Cloudflare call broke the API contract.
func Run(m *testing.M, p **Provider) int { return RunWithOptions(m, p, Options{}) }

// Options tune RunWithOptions. The zero value is Run: no simulated rate
// limit, a generous request budget, every call checked against the API
// contract, a 1s creation grace period and testenv.ControllerOptions (2s
// poll).
type Options struct {
	// RateLimit turns on the simulator's per-token rate limit: requests per
	// RateWindow (Cloudflare's is 1,200 per 5 minutes), refused for
	// RatePenalty once exceeded. 0 leaves it off.
	RateLimit   int
	RateWindow  time.Duration // default 5m
	RatePenalty time.Duration // default RateWindow

	// ListLag, ConnectorLinger and LegacyTunnelConnections are the
	// simulator's switches of the same names (sim.Options): lists that
	// miss young objects, connectors that linger after they stop (tunnel
	// deletes refused with 1022 meanwhile), the pre-2026-10 tunnel shape.
	ListLag                 time.Duration
	ConnectorLinger         time.Duration
	LegacyTunnelConnections bool

	// Budgets is the request budget the provider's clients spend; nil means
	// a generous one that never throttles. budget.NewRegistry with zero
	// Options is the provider's real, default budget.
	Budgets *budget.Registry

	// SkipContract sends calls straight to the simulator instead of checking
	// each against Cloudflare's OpenAPI document first.
	SkipContract bool

	// CreationGracePeriod of the managed resources; 0 means 1s.
	CreationGracePeriod time.Duration

	// PollInterval replaces the controller options' 2s drift-check poll.
	PollInterval time.Duration

	// MaxReconcileRate, when > 0, wires what main's --max-reconcile-rate
	// does: that many concurrent reconciles per controller, that many
	// reconciles per second globally, and the API server client's rate
	// derived from it (ratelimiter.LimitRESTConfig).
	MaxReconcileRate int

	// ClusterDomain replaces --cluster-domain; "" is cluster.local.
	ClusterDomain string

	// ConfigBatchWindow of CloudflareTunnels; 0 is the provider's default.
	ConfigBatchWindow time.Duration

	// DNSBatching of DNS record writes; nil is the provider's default
	// (--dns-batch-window, --dns-batch-size).
	DNSBatching *cloudflare.DNSBatching

	// Now is the simulator's clock (sim.Options.Now); nil is time.Now. A
	// test moves it to see what time does (a rotated-out secret expiring)
	// without sleeping. The provider keeps the real clock.
	Now func() time.Time

	// WriteUnchangedStatus turns the provider's quiet status client off
	// (controller.Settings.WriteUnchangedStatus), to show what it saves.
	WriteUnchangedStatus bool

	// ChangeLogger, when set, is what main's --enable-changelogs wires:
	// every managed resource's creates, updates and deletes go to it.
	ChangeLogger managed.ChangeLogger
}

// RunWithOptions is Run with the simulator's rate limit, the request budget
// and the controllers' options set by o.
func RunWithOptions(m *testing.M, p **Provider, o Options) int {
	env, err := testenv.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL: control plane:", err)
		return 1
	}
	defer func() { _ = env.Stop() }()

	var ct *contract.Transport
	var transport http.RoundTripper
	if !o.SkipContract {
		v, err := contract.Load()
		if err != nil {
			fmt.Fprintln(os.Stderr, "FAIL: cannot load Cloudflare's OpenAPI document:", err)
			return 1
		}
		ct = &contract.Transport{Next: http.DefaultTransport, V: v}
		transport = ct
	}
	s := sim.New(sim.Options{
		Token: Token, AccountID: AccountID, Zones: Zones,
		RateLimit: o.RateLimit, RateWindow: o.RateWindow, RatePenalty: o.RatePenalty,
		ListLag: o.ListLag, ConnectorLinger: o.ConnectorLinger, LegacyTunnelConnections: o.LegacyTunnelConnections,
		Now: o.Now,
	})
	srv := httptest.NewServer(s)
	defer srv.Close()
	budgets := o.Budgets
	if budgets == nil {
		// Generous budget: these tests prove behaviour, not throttling.
		budgets = budget.NewRegistry(budget.Options{Limit: 1_000_000, Burst: 1000})
	}
	grace := time.Second
	if o.CreationGracePeriod > 0 {
		grace = o.CreationGracePeriod
	}
	managed := mr.Settings{
		Cloudflare:          cloudflare.Options{Transport: transport, Budgets: budgets, Caches: cloudflare.NewCaches(), DNSBatching: cloudflare.DefaultDNSBatching()},
		CreationGracePeriod: grace,
	}
	if o.DNSBatching != nil {
		managed.Cloudflare.DNSBatching = *o.DNSBatching
	}

	endpoint := srv.URL + "/client/v4/"
	prov := &Provider{
		Env: env, Sim: s, contract: ct, Endpoint: endpoint,
		// Same token, so its calls spend the same budget and count against
		// the same simulated rate limit as the provider's.
		Cloudflare: cloudflare.New(clientsConfig(endpoint), cloudflare.Options{Transport: transport, Budgets: budgets}),
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := InstallDefaultConfig(ctx, env.Client, endpoint); err != nil {
		fmt.Fprintln(os.Stderr, "FAIL: cannot create the default ClusterProviderConfig:", err)
		return 1
	}
	done, err := prov.startManager(ctx, o, managed)
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL: cannot start the provider:", err)
		return 1
	}
	*p = prov
	code := m.Run()
	cancel()
	<-done
	if ct == nil {
		return code
	}
	if vs := ct.Violations(); len(vs) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: %d Cloudflare API contract violations:\n%s\n", len(vs), strings.Join(vs, "\n"))
		return 1
	}
	return code
}

// InstallDefaultConfig creates what a provider needs to reach the simulated
// account at endpoint: the crossplane-system namespace, a Secret holding
// Token and the ClusterProviderConfig "default" for AccountID, through c.
func InstallDefaultConfig(ctx context.Context, c client.Client, endpoint string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "crossplane-system"}}
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "cloudflare"},
		StringData: map[string]string{v1alpha1.DefaultTokenKey: Token},
	}
	cpc := &v1alpha1.ClusterProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "default"},
		Spec: v1alpha1.ProviderConfigSpec{
			AccountID: AccountID,
			Endpoint:  ptr.To(endpoint),
			Credentials: v1alpha1.ProviderCredentials{
				Source:    v1alpha1.CredentialsSourceSecret,
				SecretRef: &v1alpha1.SecretKeySelector{Namespace: ns.Name, Name: sec.Name},
			},
		},
	}
	for _, o := range []client.Object{ns, sec, cpc} {
		if err := c.Create(ctx, o); err != nil {
			return errors.Wrapf(err, "cannot create %T %s", o, o.GetName())
		}
	}
	return nil
}

func (p *Provider) startManager(ctx context.Context, opts Options, managed mr.Settings) (<-chan struct{}, error) {
	cfg := rest.CopyConfig(p.Config)
	if opts.MaxReconcileRate > 0 {
		cfg = ratelimiter.LimitRESTConfig(cfg, opts.MaxReconcileRate)
	}
	// Count the requests the provider sends to the API server.
	p.requests = &kubeRequests{byCall: map[string]int{}}
	cfg.Wrap(p.requests.wrap)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:     p.Scheme,
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Cache:      kubecache.Options(nil),
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
		// As testenv.StartManager's, for the same reason.
		GracefulShutdownTimeout: ptr.To(testenv.ShutdownTimeout),
	})
	if err != nil {
		return nil, err
	}
	log := logging.NewNopLogger()
	if os.Getenv("TEST_VERBOSE_LOGS") != "" {
		log = logging.NewLogrLogger(funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{Verbosity: 1}))
	}
	o := testenv.ControllerOptions(log)
	if opts.PollInterval > 0 {
		o.PollInterval = opts.PollInterval
	}
	p.Poll = o.PollInterval
	if opts.MaxReconcileRate > 0 {
		o.MaxConcurrentReconciles = opts.MaxReconcileRate
		o.GlobalRateLimiter = ratelimiter.NewGlobal(opts.MaxReconcileRate)
	}
	if opts.ChangeLogger != nil {
		o.Features.Enable(feature.EnableAlphaChangeLogs)
		o.ChangeLogOptions = &controller.ChangeLogOptions{ChangeLogger: opts.ChangeLogger}
	}
	if err := customresourcesgate.Setup(mgr, o); err != nil {
		return nil, err
	}
	if err := providercontroller.SetupGated(mgr, o, providercontroller.Settings{ClusterDomain: opts.ClusterDomain, Managed: managed, ConfigBatchWindow: opts.ConfigBatchWindow, WriteUnchangedStatus: opts.WriteUnchangedStatus}); err != nil {
		return nil, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "manager stopped:", err, "\n"+testenv.Goroutines())
		}
	}()
	return done, nil
}

// Namespace creates a fresh namespace for one test.
func (p *Provider) Namespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-"))[:min(len(t.Name()), 40)] + "-"}}
	if err := p.Client.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// Create creates obj and fails the test on error.
func (p *Provider) Create(t *testing.T, obj client.Object) {
	t.Helper()
	if err := p.Client.Create(context.Background(), obj); err != nil {
		t.Fatalf("cannot create %T %s: %v", obj, obj.GetName(), err)
	}
}

// Get refreshes obj.
func (p *Provider) Get(obj client.Object) error {
	return p.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)
}

// Edit reads obj, applies edit and writes it back, reading again when the
// controllers wrote it in between (their status writes move its version).
func (p *Provider) Edit(t *testing.T, obj client.Object, edit func(), opts ...client.UpdateOption) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := p.Get(obj); err != nil {
			return err
		}
		edit()
		return p.Client.Update(context.Background(), obj, opts...)
	})
	if err != nil {
		t.Fatalf("cannot edit %T %s: %v", obj, obj.GetName(), err)
	}
}

// WaitReady waits until the managed resource is Ready and Synced.
func (p *Provider) WaitReady(t *testing.T, mg resource.Managed) {
	t.Helper()
	wait.Eventually(t, wait.Patience, mg.GetName()+" Ready and Synced", func() error {
		if err := p.Get(mg); err != nil {
			return err
		}
		r, s := mg.GetCondition(xpv2.TypeReady), mg.GetCondition(xpv2.TypeSynced)
		if r.Status != corev1.ConditionTrue || s.Status != corev1.ConditionTrue {
			return fmt.Errorf("Ready=%s (%s) Synced=%s (%s: %s)", r.Status, r.Reason, s.Status, s.Reason, s.Message)
		}
		return nil
	})
}

// WaitCondition waits until cond holds for the managed resource's Synced
// condition and returns its message.
func (p *Provider) WaitSynced(t *testing.T, mg resource.Managed, what string, cond func(xpv2.Condition) bool) xpv2.Condition {
	t.Helper()
	var got xpv2.Condition
	wait.Eventually(t, wait.Patience, what, func() error {
		if err := p.Get(mg); err != nil {
			return err
		}
		got = mg.GetCondition(xpv2.TypeSynced)
		if !cond(got) {
			return fmt.Errorf("Synced=%s %s: %s", got.Status, got.Reason, got.Message)
		}
		return nil
	})
	return got
}

// DeleteAndWait deletes the managed resource and waits until it is gone
// from the API server (its finalizer removed after Cloudflare deletion).
func (p *Provider) DeleteAndWait(t *testing.T, mg client.Object) {
	t.Helper()
	if err := p.Client.Delete(context.Background(), mg); client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	wait.Eventually(t, wait.Patience, mg.GetName()+" deleted", func() error {
		if err := p.Get(mg); err == nil {
			return fmt.Errorf("still exists")
		} else if client.IgnoreNotFound(err) != nil {
			return err
		}
		return nil
	})
}

// WaitServed waits until the simulator has served k more API calls with
// method ("" for any) whose path contains part (sim.Server.Served) than
// when it was called: the evidence that the provider looked again, which a
// test asserting that nothing happens waits for instead of sleeping. The
// provider observes each kind from one account-wide list at most every half
// poll (cloudflare.CachedClient), so for an object it holds, part is
// usually its collection, anchored ("/zerotrust/routes/hostname$": lists
// only): k lists of it are at least (k-1) half polls in which every
// resource of the kind was due its poll; for an object it looks up on its
// own, part is its ID. A resource that is refused is retried with
// backoff (1 s doubling to 60 s), not polled, so k = 2 there can take a
// minute or two.
func (p *Provider) WaitServed(t *testing.T, k int, method, part string) {
	t.Helper()
	WaitServed(t, p.Sim, k, method, part)
}

// WaitServed is Provider.WaitServed for a simulator a test runs without a
// Provider (test/e2e runs the provider's binary against one).
func WaitServed(t *testing.T, s *sim.Server, k int, method, part string) {
	t.Helper()
	from := s.Served(method, part)
	wait.Eventually(t, 150*time.Second, fmt.Sprintf("%d more %s calls about %s", k, method, part), func() error {
		if n := s.Served(method, part) - from; n < k {
			return fmt.Errorf("%d so far", n)
		}
		return nil
	})
}

// DriftBound is how soon docs/managed-resources.md promises drift is corrected: an
// observation is at most half a poll old and the next poll acts on it, so
// within one and a half polls, plus held, the longest the repairing write
// may wait to be sent (a DNS batch window), and a second of slack for the
// reconcile itself and the test's own 100 ms checks.
func (p *Provider) DriftBound(held time.Duration) time.Duration {
	return p.Poll*3/2 + held + time.Second
}

// WriteCalls counts the write calls (anything but GET) the simulator has
// received, across all operations.
func (p *Provider) WriteCalls() int {
	n := 0
	for op, st := range p.Sim.Stats() {
		if !isRead(op) {
			n += st.Requests
		}
	}
	return n
}

func isRead(op string) bool {
	for _, suffix := range []string{".get", ".list", ".token", ".connections.get", ".configurations.get"} {
		if strings.HasSuffix(op, suffix) {
			return true
		}
	}
	return false
}

func clientsConfig(endpoint string) clients.Config {
	return clients.Config{Token: Token, AccountID: AccountID, Endpoint: endpoint}
}

// Mark is the ownership marker the provider writes for mg (of the given
// kind) under a provider config without an ownerID: the cluster's default
// owner, from the kube-system namespace's UID.
func (p *Provider) Mark(t *testing.T, kind string, mg client.Object) ownership.Mark {
	t.Helper()
	ns := &corev1.Namespace{}
	if err := p.Client.Get(context.Background(), types.NamespacedName{Name: "kube-system"}, ns); err != nil {
		t.Fatal(err)
	}
	return ownership.Identity{Owner: ownership.ClusterOwner(ns.GetUID()), Kind: kind, Namespace: mg.GetNamespace(), Name: mg.GetName()}.Mark()
}

// ClusterConfig creates a ClusterProviderConfig for one test: the default
// one's account, endpoint and credentials, changed by edit. It is deleted
// when the test ends.
func (p *Provider) ClusterConfig(t *testing.T, name string, edit func(*v1alpha1.ProviderConfigSpec)) *v1alpha1.ClusterProviderConfig {
	t.Helper()
	ctx := context.Background()
	def := &v1alpha1.ClusterProviderConfig{}
	if err := p.Client.Get(ctx, types.NamespacedName{Name: "default"}, def); err != nil {
		t.Fatal(err)
	}
	cpc := &v1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: *def.Spec.DeepCopy()}
	if edit != nil {
		edit(&cpc.Spec)
	}
	p.Create(t, cpc)
	t.Cleanup(func() { _ = p.Client.Delete(context.Background(), cpc) })
	return cpc
}

// WaitWarning waits for a Warning event of reason on the object name in ns
// whose message contains contains.
func (p *Provider) WaitWarning(t *testing.T, ns, name, reason, contains string) {
	t.Helper()
	wait.Eventually(t, wait.Patience, fmt.Sprintf("Warning %s on %s mentioning %q", reason, name, contains), func() error {
		evs := &corev1.EventList{}
		if err := p.Client.List(context.Background(), evs, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, e := range evs.Items {
			if e.InvolvedObject.Name == name && e.Type == corev1.EventTypeWarning && e.Reason == reason && strings.Contains(e.Message, contains) {
				return nil
			}
		}
		return fmt.Errorf("not yet")
	})
}

// Requests counts the requests the provider has sent to the API server
// with method to path (an object's API path), refused ones included.
func (p *Provider) Requests(method, path string) int {
	p.requests.mu.Lock()
	defer p.requests.mu.Unlock()
	return p.requests.byCall[method+" "+path]
}

// StatusWrites counts the status writes (PUT or PATCH of a status
// subresource) the provider has sent to the API server, by object: its API
// path without the /status suffix.
func (p *Provider) StatusWrites() map[string]int {
	p.requests.mu.Lock()
	defer p.requests.mu.Unlock()
	out := map[string]int{}
	for call, n := range p.requests.byCall {
		method, path, _ := strings.Cut(call, " ")
		if (method == http.MethodPut || method == http.MethodPatch) && strings.HasSuffix(path, "/status") {
			out[strings.TrimSuffix(path, "/status")] += n
		}
	}
	return out
}

// kubeRequests counts the requests of the provider's API server client,
// by method and path, as they leave it.
type kubeRequests struct {
	mu     sync.Mutex
	byCall map[string]int
}

func (k *kubeRequests) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		k.mu.Lock()
		k.byCall[req.Method+" "+req.URL.Path]++
		k.mu.Unlock()
		return next.RoundTrip(req)
	})
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
