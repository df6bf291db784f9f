package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/changelog"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	providercontroller "github.com/context-labs/provider-cloudflare-tunnel/internal/controller"
)

// flags are the provider's command-line flags, parsed by the application
// newApp returns.
type flags struct {
	debug            *bool
	leaderElection   *bool
	syncPeriod       *time.Duration
	pollInterval     *time.Duration
	maxReconcileRate *int
	managementPolicy *bool
	metricsAddr      *string
	memoryLimit      *string
	pprofAddr        *string
	healthAddr       *string
	cfRateLimit      *int
	cfRateWindow     *time.Duration
	cfBudgetFraction *float64
	pollStateMetric  *time.Duration
	clusterDomain    *string
	cfBudgetBurst    *int
	dnsBatchWindow   *time.Duration
	dnsBatchSize     *int
	changelogs       *bool
	changelogsSocket *string

	webhook              *bool
	webhookPort          *int
	webhookTLSDir        *string
	webhookSelfSigned    *bool
	webhookService       *string
	webhookConfiguration *string
}

// newApp declares the provider's flags; main parses os.Args with it, tests
// their own arguments.
func newApp() (*kingpin.Application, *flags) {
	app := kingpin.New(filepath.Base(os.Args[0]), "Crossplane provider for Cloudflare Tunnels.").DefaultEnvars()
	return app, &flags{
		debug:            app.Flag("debug", "Run with debug logging.").Short('d').Bool(),
		leaderElection:   app.Flag("leader-election", "Use leader election for the controller manager.").Short('l').Default("false").Envar("LEADER_ELECTION").Bool(),
		syncPeriod:       app.Flag("sync", "How often all resources are re-listed from the API server.").Short('s').Default("1h").Duration(),
		pollInterval:     app.Flag("poll", "How often each managed resource is checked for drift against Cloudflare.").Default("1m").Duration(),
		maxReconcileRate: app.Flag("max-reconcile-rate", "The global maximum rate per second at which resources may be reconciled, and each managed resource controller's reconciles at once (the DNSRecord controller runs at least 200 while DNS writes are batched; Cloudflare calls are bounded by the request budget, not by this).").Default(strconv.Itoa(providercontroller.DefaultMaxReconcileRate)).Int(),
		managementPolicy: app.Flag("enable-management-policies", "Enable support for management policies.").Default("true").Envar("ENABLE_MANAGEMENT_POLICIES").Bool(),
		metricsAddr:      app.Flag("metrics-bind-address", "Address the Prometheus metrics endpoint binds to.").Default(":8080").String(),
		memoryLimit:      app.Flag("memory-limit", "Soft memory limit of the Go runtime (a Kubernetes quantity such as 200Mi; 0 sets none). Default: GOMEMLIMIT if set, else 90% of the container's memory limit, so the collector works harder before the container is OOM-killed.").Default("").String(),
		pprofAddr:        app.Flag("pprof-bind-address", "Address Go's profiling endpoints (/debug/pprof) bind to, for diagnosing memory and CPU; empty (the default) serves none.").Default("").String(),
		healthAddr:       app.Flag("health-probe-bind-address", "Address the health (/healthz) and readiness (/readyz) endpoints bind to.").Default(":8081").String(),
		cfRateLimit:      app.Flag("cloudflare-rate-limit", "Requests Cloudflare allows one API token per --cloudflare-rate-window.").Default("1200").Int(),
		cfRateWindow:     app.Flag("cloudflare-rate-window", "Cloudflare's rate-limit window.").Default("5m").Duration(),
		cfBudgetFraction: app.Flag("cloudflare-budget-fraction", "Share of the token's rate limit this provider may spend (the rest is left to other tools using the token).").Default("0.8").Float64(),
		pollStateMetric:  app.Flag("poll-state-metric", "How often the managed resources' state metrics are recorded.").Default("5s").Duration(),
		clusterDomain:    app.Flag("cluster-domain", "DNS domain of the cluster's Services: cloudflared reaches a Service origin as <service>.<namespace>.svc.<cluster-domain>.").Default("cluster.local").String(),
		cfBudgetBurst:    app.Flag("cloudflare-budget-burst", "Requests that may be sent at once before the budget's rate applies.").Default("10").Int(),
		dnsBatchWindow:   app.Flag("dns-batch-window", "How long a DNS record write waits for others in its zone to share one batch request; 0 sends each write alone.").Default(cloudflare.DefaultDNSBatchWindow.String()).Duration(),
		changelogs:       app.Flag("enable-changelogs", "Record every create, update and delete of a managed resource in Crossplane's change logs: each is sent to the change log service on --changelogs-socket-path (Crossplane's changelogs sidecar).").Default("false").Envar("ENABLE_CHANGE_LOGS").Bool(),
		changelogsSocket: app.Flag("changelogs-socket-path", "Unix socket of the change log service, when --enable-changelogs.").Default(changelog.DefaultSocketPath).Envar("CHANGELOGS_SOCKET_PATH").String(),
		dnsBatchSize:     app.Flag("dns-batch-size", "Most DNS record writes in one batch request (Cloudflare allows 200 on a free zone, 3,500 on paid plans).").Default(strconv.Itoa(cloudflare.DefaultDNSBatchSize)).Int(),

		webhook:              app.Flag("webhook", "Serve the validating admission webhook (it refuses a token rotation request in the future) when it has a serving certificate: --webhook-tls-dir or --webhook-self-signed. --no-webhook serves none; the controllers still refuse such a request.").Default("true").Bool(),
		webhookPort:          app.Flag("webhook-port", "Port the admission webhook serves on.").Default("9443").Int(),
		webhookTLSDir:        app.Flag("webhook-tls-dir", "Directory holding the webhook's serving certificate (tls.crt, tls.key); Crossplane sets TLS_SERVER_CERTS_DIR in the provider's pod.").Default("").Envar("TLS_SERVER_CERTS_DIR").String(),
		webhookSelfSigned:    app.Flag("webhook-self-signed", "Make the webhook's CA and serving certificate (kept in Secret <webhook-service>-tls, shared by the replicas) and put the CA into --webhook-configuration's caBundle: for the plain manifests and the Helm chart.").Default("false").Bool(),
		webhookService:       app.Flag("webhook-service", "Service in front of the webhook, in the pod's namespace (POD_NAMESPACE): the self-signed certificate is for it.").Default("provider-cloudflare-tunnel-webhook").String(),
		webhookConfiguration: app.Flag("webhook-configuration", "ValidatingWebhookConfiguration whose caBundle --webhook-self-signed sets.").Default("provider-cloudflare-tunnel").String(),
	}
}

// validate refuses flag values the provider cannot run with. It returns the
// --memory-limit in bytes, or -1 when none is given.
func (f *flags) validate() (memoryLimit int64, err error) {
	memoryLimit = -1
	if *f.memoryLimit != "" {
		q, err := resource.ParseQuantity(*f.memoryLimit)
		if err != nil || q.Sign() < 0 {
			return 0, fmt.Errorf("--memory-limit %q is not a memory quantity such as 200Mi", *f.memoryLimit)
		}
		memoryLimit = q.Value()
	}
	if *f.cfBudgetFraction <= 0 || *f.cfBudgetFraction > 1 {
		return 0, fmt.Errorf("--cloudflare-budget-fraction must be in (0, 1]")
	}
	if *f.dnsBatchWindow < 0 || *f.dnsBatchSize < 1 {
		return 0, fmt.Errorf("--dns-batch-window must be 0 or more and --dns-batch-size 1 or more")
	}
	if errs := validation.IsDNS1123Subdomain(*f.clusterDomain); len(errs) > 0 {
		return 0, fmt.Errorf("--cluster-domain %q is not a DNS domain: %s", *f.clusterDomain, strings.Join(errs, "; "))
	}
	if *f.webhookSelfSigned && *f.webhookTLSDir != "" {
		return 0, fmt.Errorf("--webhook-self-signed and --webhook-tls-dir (TLS_SERVER_CERTS_DIR) are both given: the webhook's certificate comes from one of them")
	}
	if *f.changelogs && !filepath.IsAbs(*f.changelogsSocket) {
		return 0, fmt.Errorf("--changelogs-socket-path %q is not an absolute path", *f.changelogsSocket)
	}
	if *f.webhookPort < 1 || *f.webhookPort > 65535 {
		return 0, fmt.Errorf("--webhook-port must be a port number")
	}
	return memoryLimit, nil
}

// Where the admission webhook's serving certificate comes from.
const (
	webhookOff        = ""
	webhookFromDir    = "directory"
	webhookSelfSigned = "self-signed"
)

// webhookSource says where the webhook's certificate comes from, or
// webhookOff: without one (the provider run on a workstation, or by the
// e2e suites) it serves none, as before the webhook existed.
func (f *flags) webhookSource() string {
	switch {
	case !*f.webhook:
		return webhookOff
	case *f.webhookTLSDir != "":
		return webhookFromDir
	case *f.webhookSelfSigned:
		return webhookSelfSigned
	}
	return webhookOff
}
