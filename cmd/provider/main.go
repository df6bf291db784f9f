// Command provider runs provider-cloudflare-tunnel's controllers.
package main

import (
	"context"
	"os"
	"strings"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"go.uber.org/zap/zapcore"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/feature"
	"github.com/crossplane/crossplane-runtime/v2/pkg/gate"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/customresourcesgate"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/statemetrics"

	"github.com/context-labs/provider-cloudflare-tunnel/apis"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/admit"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/changelog"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare/budget"
	providercontroller "github.com/context-labs/provider-cloudflare-tunnel/internal/controller"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/mr"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/kubecache"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/lazylog"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/memlimit"
	providermetrics "github.com/context-labs/provider-cloudflare-tunnel/internal/metrics"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/version"
)

func main() {
	app, f := newApp()
	kingpin.MustParse(app.Parse(os.Args[1:]))
	// Every refusal comes before anything starts.
	explicit, err := f.validate()
	if err != nil {
		kingpin.Fatalf("%s", err)
	}

	zl := zap.New(zap.UseDevMode(*f.debug), func(o *zap.Options) {
		if !*f.debug {
			lvl := zapcore.InfoLevel
			o.Level = &lvl
		}
	})
	// Values added to the logger cost nothing until a line is written
	// (internal/lazylog): the managed reconciler adds four every reconcile.
	log := lazylog.New(logging.NewLogrLogger(zl.WithName("provider-cloudflare-tunnel")))
	ctrl.SetLogger(zl)
	log.Info("Starting", "version", version.Version, "sync-period", f.syncPeriod.String(), "poll-interval", f.pollInterval.String(), "max-reconcile-rate", *f.maxReconcileRate)

	if limit := memlimit.Apply(explicit); limit > 0 {
		log.Info("Soft memory limit set", "bytes", limit)
	}
	if p := memlimit.ApplyGCPercent(); p > 0 {
		log.Info("Collector target set (GOGC unset)", "percent", p)
	}

	// One budget per API token and one observation cache per account,
	// shared by every controller in the process.
	budgets := budget.NewRegistry(budget.Options{Limit: *f.cfRateLimit, Window: *f.cfRateWindow, Fraction: *f.cfBudgetFraction, Burst: *f.cfBudgetBurst})

	cfg, err := ctrl.GetConfig()
	kingpin.FatalIfError(err, "Cannot get API server rest config")

	certDir, err := webhookCertDir(f, cfg)
	kingpin.FatalIfError(err, "Cannot provision the admission webhook's certificate")

	mgr, err := ctrl.NewManager(ratelimiter.LimitRESTConfig(cfg, *f.maxReconcileRate), ctrl.Options{
		// Caches without the metadata the provider never reads.
		Cache:            kubecache.Options(f.syncPeriod),
		LeaderElection:   *f.leaderElection,
		LeaderElectionID: "crossplane-leader-election-provider-cloudflare-tunnel",
		// In a pod the lease goes to the pod's namespace; out of cluster
		// (a provider run on a workstation or by make e2e-crossplane)
		// POD_NAMESPACE names it.
		LeaderElectionNamespace:    os.Getenv("POD_NAMESPACE"),
		LeaderElectionResourceLock: resourcelock.LeasesResourceLock,
		// The process exits right after the manager stops, so giving the
		// lease back is safe, and an upgraded or rescheduled pod takes over
		// at once instead of waiting out the lease.
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 func() *time.Duration { d := 60 * time.Second; return &d }(),
		RenewDeadline:                 func() *time.Duration { d := 50 * time.Second; return &d }(),
		Metrics:                       metricsserver.Options{BindAddress: *f.metricsAddr},
		HealthProbeBindAddress:        *f.healthAddr,
		PprofBindAddress:              *f.pprofAddr,
		// Started only when admit.Setup registers the webhook's handlers.
		WebhookServer: webhook.NewServer(webhook.Options{Port: *f.webhookPort, CertDir: certDir}),
	})
	kingpin.FatalIfError(err, "Cannot create controller manager")
	kingpin.FatalIfError(clientgoscheme.AddToScheme(mgr.GetScheme()), "Cannot add Kubernetes APIs to scheme")
	kingpin.FatalIfError(apis.AddToScheme(mgr.GetScheme()), "Cannot add provider APIs to scheme")
	kingpin.FatalIfError(apiextensionsv1.AddToScheme(mgr.GetScheme()), "Cannot add CustomResourceDefinition API to scheme")
	// Gateway API kinds the GatewayBinding controller reads (it starts only
	// once their CRDs are installed).
	kingpin.FatalIfError(gwv1.Install(mgr.GetScheme()), "Cannot add Gateway API to scheme")
	kingpin.FatalIfError(gwv1beta1.Install(mgr.GetScheme()), "Cannot add Gateway API v1beta1 to scheme")
	kingpin.FatalIfError(mgr.AddHealthzCheck("healthz", healthz.Ping), "Cannot add health check")
	kingpin.FatalIfError(mgr.AddReadyzCheck("readyz", healthz.Ping), "Cannot add readiness check")
	if src := f.webhookSource(); src != webhookOff {
		kingpin.FatalIfError(admit.Setup(mgr, time.Now), "Cannot set up the admission webhook")
		// Not ready (no Service endpoint) until it serves.
		kingpin.FatalIfError(mgr.AddReadyzCheck("webhook", mgr.GetWebhookServer().StartedChecker()), "Cannot add the webhook's readiness check")
		log.Info("Admission webhook served", "port", *f.webhookPort, "certificate", src)
	} else {
		log.Info("Admission webhook not served (no certificate: --webhook-tls-dir or --webhook-self-signed; or --no-webhook); the controllers still refuse a rotation request in the future")
	}

	mrMetrics, stateMetrics := managed.NewMRMetricRecorder(), statemetrics.NewMRStateMetrics()
	// Every metric the provider serves is documented in docs/metrics.md.
	own := providermetrics.New()
	metrics.Registry.MustRegister(mrMetrics, stateMetrics, budgets, own)
	o := controller.Options{
		MetricOptions: &controller.MetricOptions{
			PollStateMetricInterval: *f.pollStateMetric,
			MRMetrics:               mrMetrics,
			MRStateMetrics:          stateMetrics,
		},
		Logger:                  log,
		MaxConcurrentReconciles: *f.maxReconcileRate,
		PollInterval:            *f.pollInterval,
		GlobalRateLimiter:       ratelimiter.NewGlobal(*f.maxReconcileRate),
		Features:                &feature.Flags{},
		Gate:                    new(gate.Gate[schema.GroupVersionKind]),
	}
	if *f.managementPolicy {
		o.Features.Enable(feature.EnableBetaManagementPolicies)
		log.Info("Beta feature enabled", "flag", feature.EnableBetaManagementPolicies)
	}
	if *f.changelogs {
		logger, closeLog, err := changelog.Logger(*f.changelogsSocket, "provider-cloudflare-tunnel:"+version.Version)
		kingpin.FatalIfError(err, "Cannot set up change logs")
		defer func() { _ = closeLog() }()
		o.Features.Enable(feature.EnableAlphaChangeLogs)
		o.ChangeLogOptions = &controller.ChangeLogOptions{ChangeLogger: logger}
		log.Info("Alpha feature enabled", "flag", feature.EnableAlphaChangeLogs, "socket", *f.changelogsSocket)
	}

	// safe-start: controllers start only once their CRDs are established, so
	// a package whose managed resources are not activated does not crash.
	kingpin.FatalIfError(customresourcesgate.Setup(mgr, o), "Cannot setup CRD gate")
	kingpin.FatalIfError(providercontroller.SetupGated(mgr, o, providercontroller.Settings{
		ClusterDomain: *f.clusterDomain,
		Metrics:       own,
		Managed: mr.Settings{Cloudflare: cloudflare.Options{
			Budgets: budgets, Caches: cloudflare.NewCaches(), Env: os.LookupEnv,
			DNSBatching: cloudflare.DNSBatching{Window: *f.dnsBatchWindow, Size: *f.dnsBatchSize},
		}},
	}), "Cannot setup controllers")
	kingpin.FatalIfError(mgr.Start(ctrl.SetupSignalHandler()), "Cannot start controller manager")
}

// webhookCertDir is the directory of the webhook's serving certificate:
// --webhook-tls-dir, or a new one holding the self-signed certificate
// (provisioned before anything starts, so the server finds it).
func webhookCertDir(f *flags, cfg *rest.Config) (string, error) {
	if f.webhookSource() != webhookSelfSigned {
		return *f.webhookTLSDir, nil
	}
	ns, err := podNamespace()
	if err != nil {
		return "", err
	}
	c, err := client.New(cfg, client.Options{Scheme: clientgoscheme.Scheme})
	if err != nil {
		return "", errors.Wrap(err, "cannot create a client")
	}
	dir, err := os.MkdirTemp("", "webhook-certs-")
	if err != nil {
		return "", errors.Wrap(err, "cannot make a directory for the certificate")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := admit.SelfSigned{Client: c, Namespace: ns, Service: *f.webhookService, Secret: *f.webhookService + "-tls", Configuration: *f.webhookConfiguration, Now: time.Now}
	return dir, s.Provision(ctx, dir)
}

// podNamespace is the namespace the provider runs in: POD_NAMESPACE, else
// its ServiceAccount's.
func podNamespace() (string, error) {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns, nil
	}
	b, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
	if err != nil {
		return "", errors.Wrap(err, "cannot tell the pod's namespace: set POD_NAMESPACE")
	}
	return strings.TrimSpace(string(b)), nil
}
