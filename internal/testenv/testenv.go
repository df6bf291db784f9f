// Package testenv starts a real kube-apiserver and etcd (built from Go
// modules by hack/envtest-bins.sh), installs the provider's CRDs and runs the
// provider's controllers against them, for integration tests.
package testenv

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/testr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/feature"
	"github.com/crossplane/crossplane-runtime/v2/pkg/gate"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/customresourcesgate"

	"github.com/context-labs/provider-cloudflare-tunnel/apis"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/kubecache"
)

// RepoRoot is the repository's root directory: the nearest folder holding
// go.mod above the working directory (go test runs a package's tests in its
// folder). It does not read source file paths, which make test's -trimpath
// removes so that a clone at another path reuses the build cache.
func RepoRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		panic(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			panic("no go.mod in " + dir + " or above: run the tests inside the repository")
		}
		dir = parent
	}
}

// Env is a running control plane.
type Env struct {
	env    *envtest.Environment
	Config *rest.Config
	Client client.Client
	Scheme *kruntime.Scheme
}

// Scheme returns a scheme with Kubernetes' and the provider's types.
func Scheme() *kruntime.Scheme {
	s := kruntime.NewScheme()
	for _, add := range []func(*kruntime.Scheme) error{clientgoscheme.AddToScheme, apis.AddToScheme, apiextensionsv1.AddToScheme, gwv1.Install, gwv1beta1.Install} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}

// assets finds the control plane binaries: KUBEBUILDER_ASSETS if set, else
// the project's build script (which returns at once when they are cached).
func assets() (string, error) {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir, nil
	}
	dir, err := hackScript("envtest-bins.sh")
	return dir, errors.Wrap(err, "cannot build the envtest control plane (run make envtest-assets)")
}

// hackScript runs one of the project's hack/ scripts that build or fetch
// something into a cache and print its path (each returns at once when
// cached), and returns that path.
func hackScript(name string) (string, error) {
	cmd := exec.Command("bash", filepath.Join(RepoRoot(), "hack", name))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// Start starts kube-apiserver and etcd with the provider's CRDs installed. A
// missing control plane is a failure, never a skip: a test suite that passes
// without its control plane proves nothing.
func Start() (*Env, error) {
	ctrl.SetLogger(logr.Discard())
	dir, err := assets()
	if err != nil {
		return nil, err
	}
	s := Scheme()
	e := &envtest.Environment{
		BinaryAssetsDirectory: dir,
		CRDDirectoryPaths:     []string{filepath.Join(RepoRoot(), "package", "crds")},
		ErrorIfCRDPathMissing: true,
		Scheme:                s,
		// envtest waits 10 s for the CRDs to be served; a control plane
		// starting beside a dozen others on two cores took longer
		// (internal/admit failed "waiting for CRDs to appear as API
		// resources" under make test with an integration run beside it).
		CRDInstallOptions: envtest.CRDInstallOptions{MaxTime: 2 * time.Minute},
	}
	cfg, err := e.Start()
	if err != nil {
		// A half-started control plane would outlive the test binary.
		_ = e.Stop()
		return nil, fmt.Errorf("cannot start envtest: %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		_ = e.Stop()
		return nil, err
	}
	return &Env{env: e, Config: cfg, Client: c, Scheme: s}, nil
}

// Stop stops the control plane.
func (e *Env) Stop() error { return e.env.Stop() }

// WriteKubeconfig writes a kubeconfig file for the control plane's admin
// user to path, for a process of its own (the provider binary) to connect
// as KUBECONFIG.
func (e *Env) WriteKubeconfig(path string) error {
	return errors.Wrap(clientcmd.WriteToFile(Kubeconfig(e.Config), path), "cannot write kubeconfig")
}

// Kubeconfig is a kubeconfig with one context: cfg's server, CA and
// credentials (client certificate and key, or bearer token), inline.
func Kubeconfig(cfg *rest.Config) clientcmdapi.Config {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData, CertificateAuthority: cfg.CAFile}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{
		ClientCertificateData: cfg.CertData, ClientCertificate: cfg.CertFile,
		ClientKeyData: cfg.KeyData, ClientKey: cfg.KeyFile,
		Token: cfg.BearerToken,
	}
	kc.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "admin"}
	kc.CurrentContext = "envtest"
	return *kc
}

// Run is for TestMain: it starts the control plane, runs the tests, stops it.
func Run(m *testing.M, env **Env) int {
	e, err := Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL: control plane:", err)
		return 1
	}
	*env = e
	code := m.Run()
	if err := e.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "cannot stop control plane:", err)
	}
	return code
}

// ControllerOptions are the crossplane controller options tests use; they
// match main's, with a short poll so tests converge quickly.
func ControllerOptions(log logging.Logger) controller.Options {
	o := controller.Options{
		Logger:                  log,
		MaxConcurrentReconciles: 5,
		PollInterval:            2 * time.Second,
		GlobalRateLimiter:       ratelimiter.NewGlobal(1000),
		Features:                &feature.Flags{},
		Gate:                    new(gate.Gate[schema.GroupVersionKind]),
	}
	o.Features.Enable(feature.EnableBetaManagementPolicies)
	return o
}

// ShutdownTimeout bounds how long a test's manager takes to stop.
const ShutdownTimeout = 2 * time.Minute

// StartManager builds a manager the way main does (gated controllers behind
// the CRD gate), lets setup register controllers, and runs it until the test
// ends. opts change the manager's options (a test serving webhooks gives it
// a webhook server).
func (e *Env) StartManager(t *testing.T, setup func(ctrl.Manager, controller.Options) error, opts ...func(*ctrl.Options)) ctrl.Manager {
	t.Helper()
	mo := ctrl.Options{
		Scheme:     e.Scheme,
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Cache:      kubecache.Options(nil),
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
		// ShutdownTimeout: a stop waits for the reconciles in flight. On a
		// loaded CI machine (two control planes and the race build on 2
		// cores) the config package's stop once took longer than
		// controller-runtime's 30 s; a runnable that never stops still
		// fails the test, after ShutdownTimeout.
		GracefulShutdownTimeout: ptr.To(ShutdownTimeout),
	}
	for _, o := range opts {
		o(&mo)
	}
	mgr, err := ctrl.NewManager(e.Config, mo)
	if err != nil {
		t.Fatalf("cannot create manager: %v", err)
	}
	o := ControllerOptions(logging.NewLogrLogger(testLogger(t)))
	if err := customresourcesgate.Setup(mgr, o); err != nil {
		t.Fatalf("cannot set up CRD gate: %v", err)
	}
	if err := setup(mgr, o); err != nil {
		t.Fatalf("cannot set up controllers: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("manager stopped: %v\n%s", err, Goroutines())
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return mgr
}

// Goroutines are this process's goroutines, identical stacks grouped: what a
// runnable that does not stop is waiting for.
func Goroutines() string {
	var b strings.Builder
	if err := pprof.Lookup("goroutine").WriteTo(&b, 1); err != nil {
		return "(no goroutine dump: " + err.Error() + ")"
	}
	return b.String()
}

func testLogger(t *testing.T) logr.Logger {
	if os.Getenv("TEST_VERBOSE_LOGS") == "" {
		return logr.Discard()
	}
	return testr.New(t)
}

// ThirdPartyCRDs is the directory of the third-party CRDs tests install
// (gateway-api/, external-dns/ and prometheus-operator/), taken from their
// Go modules by hack/thirdparty-crds.sh, which returns at once when they
// are cached.
func ThirdPartyCRDs() (string, error) {
	dir, err := hackScript("thirdparty-crds.sh")
	return dir, errors.Wrap(err, "cannot fetch the third-party CRDs")
}

// Helm is the path of the helm binary: HELM if set (make test sets it),
// else the project's build script's (which returns at once when cached).
func Helm() (string, error) {
	if bin := os.Getenv("HELM"); bin != "" {
		return bin, nil
	}
	bin, err := hackScript("helm.sh")
	return bin, errors.Wrap(err, "cannot build helm (run make helm)")
}

// InstallThirdPartyCRDs installs one directory of ThirdPartyCRDs
// ("gateway-api", "external-dns" or "prometheus-operator") and waits until the API server serves
// it: tests install them while the provider runs, as a user would.
func (e *Env) InstallThirdPartyCRDs(t *testing.T, which string) {
	t.Helper()
	dir, err := ThirdPartyCRDs()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := envtest.InstallCRDs(e.Config, envtest.CRDInstallOptions{Paths: []string{filepath.Join(dir, which)}, ErrorIfPathMissing: true, Scheme: e.Scheme}); err != nil {
		t.Fatalf("cannot install the %s CRDs: %v", which, err)
	}
}
