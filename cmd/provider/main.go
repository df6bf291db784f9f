// Command provider runs provider-cloudflare-tunnel's controllers.
package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"go.uber.org/zap/zapcore"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/feature"
	"github.com/crossplane/crossplane-runtime/v2/pkg/gate"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/customresourcesgate"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/statemetrics"

	"github.com/context-labs/provider-cloudflare-tunnel/apis"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare/budget"
	providercontroller "github.com/context-labs/provider-cloudflare-tunnel/internal/controller"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/mr"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/kubecache"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/lazylog"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/memlimit"
	providermetrics "github.com/context-labs/provider-cloudflare-tunnel/internal/metrics"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/version"
)

func main() {
	var (
		app              = kingpin.New(filepath.Base(os.Args[0]), "Crossplane provider for Cloudflare Tunnels.").DefaultEnvars()
		debug            = app.Flag("debug", "Run with debug logging.").Short('d').Bool()
		leaderElection   = app.Flag("leader-election", "Use leader election for the controller manager.").Short('l').Default("false").Envar("LEADER_ELECTION").Bool()
		syncPeriod       = app.Flag("sync", "How often all resources are re-listed from the API server.").Short('s').Default("1h").Duration()
		pollInterval     = app.Flag("poll", "How often each managed resource is checked for drift against Cloudflare.").Default("1m").Duration()
		maxReconcileRate = app.Flag("max-reconcile-rate", "The global maximum rate per second at which resources may be reconciled, and each managed resource controller's reconciles at once (the DNSRecord controller runs at least 200 while DNS writes are batched; Cloudflare calls are bounded by the request budget, not by this).").Default(strconv.Itoa(providercontroller.DefaultMaxReconcileRate)).Int()
		managementPolicy = app.Flag("enable-management-policies", "Enable support for management policies.").Default("true").Envar("ENABLE_MANAGEMENT_POLICIES").Bool()
		metricsAddr      = app.Flag("metrics-bind-address", "Address the Prometheus metrics endpoint binds to.").Default(":8080").String()
		memoryLimit      = app.Flag("memory-limit", "Soft memory limit of the Go runtime (a Kubernetes quantity such as 200Mi; 0 sets none). Default: GOMEMLIMIT if set, else 90% of the container's memory limit, so the collector works harder before the container is OOM-killed.").Default("").String()
		pprofAddr        = app.Flag("pprof-bind-address", "Address Go's profiling endpoints (/debug/pprof) bind to, for diagnosing memory and CPU; empty (the default) serves none.").Default("").String()
		healthAddr       = app.Flag("health-probe-bind-address", "Address the health (/healthz) and readiness (/readyz) endpoints bind to.").Default(":8081").String()
		cfRateLimit      = app.Flag("cloudflare-rate-limit", "Requests Cloudflare allows one API token per --cloudflare-rate-window.").Default("1200").Int()
		cfRateWindow     = app.Flag("cloudflare-rate-window", "Cloudflare's rate-limit window.").Default("5m").Duration()
		cfBudgetFraction = app.Flag("cloudflare-budget-fraction", "Share of the token's rate limit this provider may spend (the rest is left to other tools using the token).").Default("0.8").Float64()
		pollStateMetric  = app.Flag("poll-state-metric", "How often the managed resources' state metrics are recorded.").Default("5s").Duration()
		clusterDomain    = app.Flag("cluster-domain", "DNS domain of the cluster's Services: cloudflared reaches a Service origin as <service>.<namespace>.svc.<cluster-domain>.").Default("cluster.local").String()
		cfBudgetBurst    = app.Flag("cloudflare-budget-burst", "Requests that may be sent at once before the budget's rate applies.").Default("10").Int()
		dnsBatchWindow   = app.Flag("dns-batch-window", "How long a DNS record write waits for others in its zone to share one batch request; 0 sends each write alone.").Default(cloudflare.DefaultDNSBatchWindow.String()).Duration()
		dnsBatchSize     = app.Flag("dns-batch-size", "Most DNS record writes in one batch request (Cloudflare allows 200 on a free zone, 3,500 on paid plans).").Default(strconv.Itoa(cloudflare.DefaultDNSBatchSize)).Int()
	)
	kingpin.MustParse(app.Parse(os.Args[1:]))

	zl := zap.New(zap.UseDevMode(*debug), func(o *zap.Options) {
		if !*debug {
			lvl := zapcore.InfoLevel
			o.Level = &lvl
		}
	})
	// Values added to the logger cost nothing until a line is written
	// (internal/lazylog): the managed reconciler adds four every reconcile.
	log := lazylog.New(logging.NewLogrLogger(zl.WithName("provider-cloudflare-tunnel")))
	ctrl.SetLogger(zl)
	log.Info("Starting", "version", version.Version, "sync-period", syncPeriod.String(), "poll-interval", pollInterval.String(), "max-reconcile-rate", *maxReconcileRate)

	explicit := int64(-1)
	if *memoryLimit != "" {
		q, err := resource.ParseQuantity(*memoryLimit)
		if err != nil || q.Sign() < 0 {
			kingpin.Fatalf("--memory-limit %q is not a memory quantity such as 200Mi", *memoryLimit)
		}
		explicit = q.Value()
	}
	if limit := memlimit.Apply(explicit); limit > 0 {
		log.Info("Soft memory limit set", "bytes", limit)
	}
	if p := memlimit.ApplyGCPercent(); p > 0 {
		log.Info("Collector target set (GOGC unset)", "percent", p)
	}

	if *cfBudgetFraction <= 0 || *cfBudgetFraction > 1 {
		kingpin.Fatalf("--cloudflare-budget-fraction must be in (0, 1]")
	}
	if *dnsBatchWindow < 0 || *dnsBatchSize < 1 {
		kingpin.Fatalf("--dns-batch-window must be 0 or more and --dns-batch-size 1 or more")
	}
	// One budget per API token and one observation cache per account,
	// shared by every controller in the process.
	budgets := budget.NewRegistry(budget.Options{Limit: *cfRateLimit, Window: *cfRateWindow, Fraction: *cfBudgetFraction, Burst: *cfBudgetBurst})

	cfg, err := ctrl.GetConfig()
	kingpin.FatalIfError(err, "Cannot get API server rest config")

	mgr, err := ctrl.NewManager(ratelimiter.LimitRESTConfig(cfg, *maxReconcileRate), ctrl.Options{
		// Caches without the metadata the provider never reads.
		Cache:            kubecache.Options(syncPeriod),
		LeaderElection:   *leaderElection,
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
		Metrics:                       metricsserver.Options{BindAddress: *metricsAddr},
		HealthProbeBindAddress:        *healthAddr,
		PprofBindAddress:              *pprofAddr,
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

	mrMetrics, stateMetrics := managed.NewMRMetricRecorder(), statemetrics.NewMRStateMetrics()
	// Every metric the provider serves is documented in docs/metrics.md.
	own := providermetrics.New()
	metrics.Registry.MustRegister(mrMetrics, stateMetrics, budgets, own)
	o := controller.Options{
		MetricOptions: &controller.MetricOptions{
			PollStateMetricInterval: *pollStateMetric,
			MRMetrics:               mrMetrics,
			MRStateMetrics:          stateMetrics,
		},
		Logger:                  log,
		MaxConcurrentReconciles: *maxReconcileRate,
		PollInterval:            *pollInterval,
		GlobalRateLimiter:       ratelimiter.NewGlobal(*maxReconcileRate),
		Features:                &feature.Flags{},
		Gate:                    new(gate.Gate[schema.GroupVersionKind]),
	}
	if *managementPolicy {
		o.Features.Enable(feature.EnableBetaManagementPolicies)
		log.Info("Beta feature enabled", "flag", feature.EnableBetaManagementPolicies)
	}

	// safe-start: controllers start only once their CRDs are established, so
	// a package whose managed resources are not activated does not crash.
	kingpin.FatalIfError(customresourcesgate.Setup(mgr, o), "Cannot setup CRD gate")
	if errs := validation.IsDNS1123Subdomain(*clusterDomain); len(errs) > 0 {
		kingpin.Fatalf("--cluster-domain %q is not a DNS domain: %s", *clusterDomain, strings.Join(errs, "; "))
	}
	kingpin.FatalIfError(providercontroller.SetupGated(mgr, o, providercontroller.Settings{
		ClusterDomain: *clusterDomain,
		Metrics:       own,
		Managed: mr.Settings{Cloudflare: cloudflare.Options{
			Budgets: budgets, Caches: cloudflare.NewCaches(), Env: os.LookupEnv,
			DNSBatching: cloudflare.DNSBatching{Window: *dnsBatchWindow, Size: *dnsBatchSize},
		}},
	}), "Cannot setup controllers")
	kingpin.FatalIfError(mgr.Start(ctrl.SetupSignalHandler()), "Cannot start controller manager")
}
