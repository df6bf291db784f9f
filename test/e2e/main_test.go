// Package e2e runs the provider the way production does — its own binary, as
// its own process, with only its ServiceAccount's RBAC — against a realistic
// local cluster (kube-apiserver, etcd, kube-controller-manager,
// kube-scheduler and KWOK fake nodes, so Deployments roll out and garbage
// collection runs) and the Cloudflare simulator, and injects what production
// throws at it: Cloudflare errors, lost responses, latency and rate limiting,
// the provider being killed mid-write, hand edits on both sides, and checks
// that no token leaks.
//
// `make e2e` runs it; it needs the local cluster binaries (E2E_CLUSTER_BINS,
// from hack/local-cluster-bins.sh). Without them TestMain says so and
// returns, so `go test ./...` does not start a cluster.
package e2e

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare/budget"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/process"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

const (
	// providerNamespace and providerSA are where cluster/install puts the provider.
	providerNamespace = "cloudflare-tunnel-system"
	providerSA        = "provider-cloudflare-tunnel"
	zone              = "example.com"
	// poll is the provider's --poll: hand edits must be undone within it.
	poll = 10 * time.Second
)

// env is the shared harness: one cluster, one simulator, one provider.
var env *harness

type harness struct {
	root, out  string
	bins       string
	cluster    string // the local cluster's state directory
	kubeconfig string // admin
	kube       client.Client
	clientset  *kubernetes.Clientset
	restCfg    *rest.Config
	sim        *sim.Server
	simURL     string
	// simLog records which installation sent each write to the simulator:
	// each cluster's provider reaches it on a listener of its own.
	simLog      *simLog
	token       string
	account     string
	cf          *cloudflare.Client // the test's own view of the account, behind the provider's back
	provider    *providerProcess
	saToken     string
	saRESTCfg   *rest.Config
	saClientset *kubernetes.Clientset
	metricsURL  string // the provider's Prometheus endpoint
	// manifests is the tree whose package/crds and cluster/install boot
	// installs, and bin the provider binary it runs; "" is this tree and
	// its build. An upgrade test boots a previous version's.
	manifests, bin string
	// budgetFraction is the provider's --cloudflare-budget-fraction; ""
	// keeps its default.
	budgetFraction string
}

func (h *harness) manifestRoot() string {
	if h.manifests != "" {
		return h.manifests
	}
	return h.root
}

func TestMain(m *testing.M) {
	flag.Parse()
	bins := os.Getenv("E2E_CLUSTER_BINS")
	if bins == "" {
		fmt.Println("e2e: E2E_CLUSTER_BINS is not set; `make e2e` builds the local cluster and runs this suite")
		os.Exit(0)
	}
	h, err := start(bins)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: cannot start:", err)
		if h != nil {
			h.stop()
		}
		os.Exit(1)
	}
	env = h
	code := m.Run()
	// After every test, in whatever order they ran (-shuffle).
	if !withinRateLimit(h.sim) {
		code = 1
	}
	if failures := secretsNeverLeak(); len(failures) > 0 {
		fmt.Println("--- FAIL: secrets never leak (checked after every test)")
		for _, f := range failures {
			fmt.Println("    " + f)
		}
		fmt.Println("FAIL")
		code = 1
	}
	h.stop()
	os.Exit(code)
}

// withinRateLimit reports the most requests the suite's token sent in one
// of Cloudflare's rate-limit windows, and whether the limit was never
// exceeded (an excess blocks every call for five minutes).
func withinRateLimit(s *sim.Server) bool {
	peak, blocks := s.RateWindowPeak()
	fmt.Printf("e2e: at most %d requests in one %v rate-limit window (Cloudflare allows %d); exceeded %d times\n", peak, sim.CloudflareRateWindow, sim.CloudflareRateLimit, blocks)
	if blocks > 0 {
		fmt.Println("--- FAIL: the suite exceeded Cloudflare's rate limit")
		fmt.Println("FAIL")
	}
	return blocks == 0
}

func run(dir string, envv []string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), envv...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		return stdout.String(), fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(stdout.String()), nil
}

func start(bins string) (*harness, error) {
	root := testenv.RepoRoot()
	h := &harness{root: root, out: filepath.Join(root, "_output", "e2e"), bins: bins}
	if err := os.RemoveAll(h.out); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(h.out, 0o755); err != nil {
		return nil, err
	}
	ctx := context.Background()

	// The provider binary, built as `make build` does.
	fmt.Println("e2e: building the provider")
	if _, err := process.BuildProvider(root, h.out); err != nil {
		return nil, err
	}

	// Cloudflare: the simulator on loopback, with a foreign zone record etc.
	// added by the tests themselves.
	h.token = "e2e-api-token-" + randomHex(16)
	h.account = randomHex(16)
	// Cloudflare's own rate limit, with its five-minute penalty: the suite
	// must live within it, as a user's cluster does (TestMain checks it was
	// never exceeded).
	h.sim = sim.New(sim.Options{Token: h.token, AccountID: h.account, Zones: []string{zone}, RateLimit: sim.CloudflareRateLimit, RateWindow: sim.CloudflareRateWindow})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return h, err
	}
	h.simLog = newSimLog()
	go func() { _ = http.Serve(l, h.simLog.serve("cluster", h.sim)) }()
	h.simURL = "http://" + l.Addr().String() + "/client/v4/"
	// The test's own view of the account reaches the simulator apart from
	// the provider, so that the log counts only the provider's requests.
	own, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return h, err
	}
	go func() { _ = http.Serve(own, h.simLog.serve("test", h.sim)) }()
	h.cf = cloudflare.New(clients.Config{Token: h.token, AccountID: h.account, Endpoint: "http://" + own.Addr().String() + "/client/v4/"}, cloudflare.Options{
		Budgets: budget.NewRegistry(budget.Options{Limit: 1000000}),
	})
	return h, h.boot(ctx, "cluster", 2)
}

// boot starts a local cluster named name (its state in h.out/name), installs
// the provider as docs/install.md says for plain manifests, configures it for the
// simulated account and runs the provider binary with its ServiceAccount's
// token. A second harness sharing h's simulator is a second cluster on the
// same Cloudflare account.
func (h *harness) boot(ctx context.Context, name string, nodes int) error {
	if err := h.startCluster(name, nodes); err != nil {
		return err
	}
	if err := h.installPlain(ctx, name); err != nil {
		return err
	}
	// No --leader-election: a killed process keeps its lease until it
	// expires (a minute), which would stall every restart the fault tests
	// make; the lease permissions are checked by the access reviews instead.
	args := []string{"--debug", "--poll", poll.String()}
	if h.budgetFraction != "" {
		args = append(args, "--cloudflare-budget-fraction", h.budgetFraction)
	}
	return h.runProvider(ctx, name, providerNamespace, providerSA, args)
}

// startCluster starts a local cluster named name (its state in
// h.out/name) and connects the harness's admin clients to it.
func (h *harness) startCluster(name string, nodes int) error {
	h.cluster = filepath.Join(h.out, name)
	fmt.Println("e2e: starting the local cluster", name)
	kc, err := run(h.root, []string{"CLUSTER_DIR=" + h.cluster, "BIN_DIR=" + h.bins, fmt.Sprintf("KWOK_NODES=%d", nodes)}, "bash", "hack/local-cluster-up.sh")
	if err != nil {
		return err
	}
	h.kubeconfig = kc
	if h.restCfg, err = clientcmd.BuildConfigFromFlags("", kc); err != nil {
		return err
	}
	h.restCfg.QPS, h.restCfg.Burst = 50, 100
	if h.kube, err = client.New(h.restCfg, client.Options{Scheme: testenv.Scheme()}); err != nil {
		return err
	}
	h.clientset, err = kubernetes.NewForConfig(h.restCfg)
	return err
}

// applyInstall applies the CRDs and cluster/install: for this tree, by the
// commands docs/install.md gives a plain-manifest user ("With plain
// manifests"), so the guide is what is tested; for a previous release, its
// own files.
func (h *harness) applyInstall() error {
	if h.manifests != "" {
		if _, err := h.kubectl("apply", "--server-side", "-f", filepath.Join(h.manifests, "package", "crds")); err != nil {
			return err
		}
		if err := h.waitCRDsEstablished(); err != nil {
			return err
		}
		_, err := h.kubectl("apply", "-k", filepath.Join(h.manifests, "cluster", "install"))
		return err
	}
	guide, err := os.ReadFile(filepath.Join(h.root, "docs", "install.md"))
	if err != nil {
		return err
	}
	cmds, err := shellCommands(string(guide), "## With plain manifests")
	if err != nil {
		return fmt.Errorf("docs/install.md: %w", err)
	}
	for _, argv := range cmds {
		if argv[0] != "kubectl" {
			return fmt.Errorf("docs/install.md: a command the suite cannot run: %q", argv)
		}
		if out, err := h.kubectl(argv[1:]...); err != nil {
			return fmt.Errorf("%s: %w\n%s", strings.Join(argv, " "), err, out)
		}
		if slices.Contains(argv, "package/crds") {
			if err := h.waitCRDsEstablished(); err != nil {
				return err
			}
		}
	}
	return nil
}

// installPlain installs the provider as docs/install.md says for plain
// manifests: the CRDs, then cluster/install (namespace, ServiceAccount,
// RBAC, Deployment, IngressClass), then credentials for the simulated
// account as examples/provider/config.yaml shows them. The Deployment's pod
// is a KWOK fake, so the provider itself runs on the host (runProvider).
func (h *harness) installPlain(ctx context.Context, name string) error {
	fmt.Println("e2e: installing CRDs and cluster/install in", name)
	if err := h.applyInstall(); err != nil {
		return err
	}
	if err := h.kube.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: providerNamespace, Name: "cloudflare-credentials"},
		StringData: map[string]string{"CLOUDFLARE_API_TOKEN": h.token, "CLOUDFLARE_ACCOUNT_ID": h.account},
	}); err != nil {
		return err
	}
	return h.kube.Create(ctx, &v1alpha1.ClusterProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "default"},
		Spec: v1alpha1.ProviderConfigSpec{
			Credentials: v1alpha1.ProviderCredentials{Source: "Secret", SecretRef: &v1alpha1.SecretKeySelector{Namespace: providerNamespace, Name: "cloudflare-credentials"}},
			Endpoint:    ptr.To(h.simURL),
		},
	})
}

// waitCRDsEstablished waits until every CRD is served. Right after an
// apply a CRD may have no conditions yet, which kubectl wait reports as an
// error rather than waiting.
func (h *harness) waitCRDsEstablished() error {
	return wait.Until(2*time.Minute, func() error {
		_, err := h.kubectl("wait", "--for=condition=Established", "crd", "--all", "--timeout=20s")
		return err
	})
}

// runProvider runs the provider binary on the host as the ServiceAccount
// ns/sa — a token of it, nothing more — with args, plus a metrics and a
// health address of its own.
func (h *harness) runProvider(ctx context.Context, name, ns, sa string, args []string) error {
	tr, err := h.clientset.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authv1.TokenRequest{
		Spec: authv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3 * 3600)},
	}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	h.saToken = tr.Status.Token
	h.saRESTCfg = &rest.Config{Host: h.restCfg.Host, BearerToken: h.saToken, TLSClientConfig: rest.TLSClientConfig{CAData: h.restCfg.CAData, CAFile: h.restCfg.CAFile}}
	if h.saClientset, err = kubernetes.NewForConfig(h.saRESTCfg); err != nil {
		return err
	}
	saKubeconfig := filepath.Join(h.out, name+"-provider.kubeconfig")
	if err := writeTokenKubeconfig(saKubeconfig, h.restCfg, h.saToken); err != nil {
		return err
	}
	// A fixed port (free now) so the metrics stay reachable across the
	// restarts the fault tests make.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	metricsAddr := l.Addr().String()
	_ = l.Close()
	h.metricsURL = "http://" + metricsAddr + "/metrics"
	bin := h.bin
	if bin == "" {
		bin = filepath.Join(h.out, "provider")
	}
	h.provider = &providerProcess{process.Process{
		Bin:  bin,
		Log:  filepath.Join(h.out, strings.TrimPrefix(name+"-", "cluster-")+"provider.log"),
		Args: append(slices.Clone(args), "--metrics-bind-address", metricsAddr, "--health-probe-bind-address", "127.0.0.1:0"),
		Env:  []string{"KUBECONFIG=" + saKubeconfig, "POD_NAMESPACE=" + ns},
	}}
	return h.provider.start()
}

// second boots another cluster, with its own provider, on h's simulated
// account. It is stopped when the test ends.
func (h *harness) second(t *testing.T, name string) *harness {
	t.Helper()
	// Two installations on one token share its rate limit: the first keeps
	// its default 80%, this one takes 15%, as docs/operate.md advises.
	b := &harness{root: h.root, out: h.out, bins: h.bins, sim: h.sim, simLog: h.simLog, simURL: h.simListener(t, name), token: h.token, account: h.account, cf: h.cf, budgetFraction: "0.15"}
	t.Cleanup(b.stop)
	if err := b.boot(context.Background(), name, 1); err != nil {
		t.Fatal(err)
	}
	return b
}

func (h *harness) stop() {
	if h.provider != nil {
		h.provider.stop()
	}
	if h.kubeconfig != "" {
		_, _ = run(h.root, []string{"CLUSTER_DIR=" + h.cluster, "FAST=1"}, "bash", "hack/local-cluster-down.sh")
	}
}

func (h *harness) kubectl(args ...string) (string, error) {
	return run(h.root, []string{"KUBECONFIG=" + h.kubeconfig}, filepath.Join(h.bins, "kubectl"), append([]string{"--cache-dir", filepath.Join(h.out, "kubectl-cache")}, args...)...)
}

// applyYAML creates every document of a multi-document manifest.
func (h *harness) applyYAML(t *testing.T, manifest string) {
	t.Helper()
	dec := yaml.NewYAMLOrJSONDecoder(strings.NewReader(manifest), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if err.Error() == "EOF" {
				return
			}
			t.Fatalf("decode manifest: %v", err)
		}
		if len(u.Object) == 0 {
			continue
		}
		if err := h.kube.Create(context.Background(), u); err != nil && !kerrors.IsAlreadyExists(err) {
			t.Fatalf("create %s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
}

func writeTokenKubeconfig(path string, admin *rest.Config, token string) error {
	ca := admin.CAData
	if len(ca) == 0 && admin.CAFile != "" {
		var err error
		if ca, err = os.ReadFile(admin.CAFile); err != nil {
			return err
		}
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["local"] = &clientcmdapi.Cluster{Server: admin.Host, CertificateAuthorityData: ca}
	cfg.AuthInfos["provider"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["provider"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: "provider"}
	cfg.CurrentContext = "provider"
	return clientcmd.WriteToFile(*cfg, path)
}

// providerProcess is the provider binary run as its own process
// (internal/testenv/process), restarted by the fault tests.
type providerProcess struct {
	process.Process
}

func (p *providerProcess) start() error { return p.Start() }

// kill stops the process at once, whatever it was doing.
func (p *providerProcess) kill() { p.Kill() }

func (p *providerProcess) restart() error {
	p.kill()
	return p.start()
}

func (p *providerProcess) stop() { p.Stop(10 * time.Second) }

func (p *providerProcess) pid() int { return p.Pid() }

// restartRandomly kills and restarts the provider every min..max until stop
// is closed; it returns how many restarts it made.
func (p *providerProcess) restartRandomly(t *testing.T, stop <-chan struct{}, minEvery, maxEvery time.Duration) <-chan int {
	done := make(chan int, 1)
	go func() {
		n := 0
		for {
			d := minEvery + time.Duration(rand.Int64N(int64(maxEvery-minEvery)))
			select {
			case <-stop:
				done <- n
				return
			case <-time.After(d):
			}
			if err := p.restart(); err != nil {
				t.Errorf("restart provider: %v", err)
			}
			n++
		}
	}()
	return done
}

func randomHex(n int) string {
	const digits = "0123456789abcdef"
	b := make([]byte, 2*n)
	for i := range b {
		b[i] = digits[rand.IntN(16)]
	}
	return string(b)
}

// namespace creates a fresh namespace enforcing the restricted Pod Security
// Standard: every pod the provider makes there must pass it.
func namespace(t *testing.T, name string) string { t.Helper(); return env.namespace(t, name) }

// namespace is the package-level namespace, in h's cluster.
func (h *harness) namespace(t *testing.T, name string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
		"pod-security.kubernetes.io/enforce": "restricted",
		"pod-security.kubernetes.io/warn":    "restricted",
	}}}
	if err := h.kube.Create(context.Background(), ns); err != nil {
		t.Fatalf("create namespace %s: %v", name, err)
	}
	return name
}
