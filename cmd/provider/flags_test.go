package main

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	providercontroller "github.com/context-labs/provider-cloudflare-tunnel/internal/controller"
)

// settings is what the flags hold, dereferenced for comparison.
type settings struct {
	Debug, LeaderElection, ManagementPolicy, ChangeLogs            bool
	Sync, Poll, RateWindow, PollStateMetric, DNSBatchWindow        time.Duration
	MaxReconcileRate, RateLimit, BudgetBurst, DNSBatchSize         int
	MetricsAddr, MemoryLimit, PprofAddr, HealthAddr, ClusterDomain string
	ChangeLogsSocket                                               string
	BudgetFraction                                                 float64
}

func parse(t *testing.T, args ...string) *flags {
	t.Helper()
	app, f := newApp()
	if _, err := app.Parse(args); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return f
}

func (f *flags) settings() settings {
	return settings{
		Debug: *f.debug, LeaderElection: *f.leaderElection, ManagementPolicy: *f.managementPolicy,
		Sync: *f.syncPeriod, Poll: *f.pollInterval, RateWindow: *f.cfRateWindow, PollStateMetric: *f.pollStateMetric, DNSBatchWindow: *f.dnsBatchWindow,
		MaxReconcileRate: *f.maxReconcileRate, RateLimit: *f.cfRateLimit, BudgetBurst: *f.cfBudgetBurst, DNSBatchSize: *f.dnsBatchSize,
		MetricsAddr: *f.metricsAddr, MemoryLimit: *f.memoryLimit, PprofAddr: *f.pprofAddr, HealthAddr: *f.healthAddr, ClusterDomain: *f.clusterDomain,
		BudgetFraction: *f.cfBudgetFraction, ChangeLogs: *f.changelogs, ChangeLogsSocket: *f.changelogsSocket,
	}
}

// TestFlagDefaults: the defaults docs/ and the chart describe, and that
// they pass validation with no memory limit of their own.
func TestFlagDefaults(t *testing.T) {
	f := parse(t)
	want := settings{
		ManagementPolicy: true,
		Sync:             time.Hour, Poll: time.Minute, RateWindow: 5 * time.Minute, PollStateMetric: 5 * time.Second, DNSBatchWindow: cloudflare.DefaultDNSBatchWindow,
		MaxReconcileRate: providercontroller.DefaultMaxReconcileRate, RateLimit: 1200, BudgetBurst: 10, DNSBatchSize: cloudflare.DefaultDNSBatchSize,
		MetricsAddr: ":8080", HealthAddr: ":8081", ClusterDomain: "cluster.local",
		BudgetFraction: 0.8,
		// Change logs are off unless asked for; the socket is where
		// Crossplane's documented sidecar listens.
		ChangeLogsSocket: "/var/run/changelogs/changelogs.sock",
	}
	if diff := cmp.Diff(want, f.settings()); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	if limit, err := f.validate(); err != nil || limit != -1 {
		t.Errorf("validate() = %d, %v; want -1 (none given), nil", limit, err)
	}
}

func TestFlagValidation(t *testing.T) {
	cases := map[string]struct {
		args      []string
		wantLimit int64
		wantErr   string // the refusal's start; "" when accepted
	}{
		"AMemoryLimit":                  {args: []string{"--memory-limit=200Mi"}, wantLimit: 200 << 20},
		"AZeroMemoryLimitSetsNone":      {args: []string{"--memory-limit=0"}, wantLimit: 0},
		"ANegativeMemoryLimit":          {args: []string{"--memory-limit=-1Mi"}, wantErr: `--memory-limit "-1Mi" is not a memory quantity such as 200Mi`},
		"AMemoryLimitThatIsNoQuantity":  {args: []string{"--memory-limit=lots"}, wantErr: `--memory-limit "lots" is not a memory quantity such as 200Mi`},
		"TheWholeBudget":                {args: []string{"--cloudflare-budget-fraction=1"}, wantLimit: -1},
		"NoBudget":                      {args: []string{"--cloudflare-budget-fraction=0"}, wantErr: "--cloudflare-budget-fraction must be in (0, 1]"},
		"MoreThanTheWholeBudget":        {args: []string{"--cloudflare-budget-fraction=1.01"}, wantErr: "--cloudflare-budget-fraction must be in (0, 1]"},
		"ANegativeBudget":               {args: []string{"--cloudflare-budget-fraction=-0.5"}, wantErr: "--cloudflare-budget-fraction must be in (0, 1]"},
		"NoDNSBatchWindow":              {args: []string{"--dns-batch-window=0"}, wantLimit: -1},
		"ANegativeDNSBatchWindow":       {args: []string{"--dns-batch-window=-1s"}, wantErr: "--dns-batch-window must be 0 or more and --dns-batch-size 1 or more"},
		"ADNSBatchOfOne":                {args: []string{"--dns-batch-size=1"}, wantLimit: -1},
		"AnEmptyDNSBatch":               {args: []string{"--dns-batch-size=0"}, wantErr: "--dns-batch-window must be 0 or more and --dns-batch-size 1 or more"},
		"AnotherClusterDomain":          {args: []string{"--cluster-domain=k8s.example.internal"}, wantLimit: -1},
		"AClusterDomainWithAnUpperCase": {args: []string{"--cluster-domain=Cluster.local"}, wantErr: `--cluster-domain "Cluster.local" is not a DNS domain: `},
		"AnEmptyClusterDomain":          {args: []string{"--cluster-domain="}, wantErr: `--cluster-domain "" is not a DNS domain: `},
		"WebhookSelfSigned":             {args: []string{"--webhook-self-signed"}, wantLimit: -1},
		"WebhookBothCertificates":       {args: []string{"--webhook-self-signed", "--webhook-tls-dir=/tls/server"}, wantErr: "--webhook-self-signed and --webhook-tls-dir (TLS_SERVER_CERTS_DIR) are both given"},
		"WebhookPortZero":               {args: []string{"--webhook-port=0"}, wantErr: "--webhook-port must be a port number"},
		"ChangeLogs":                    {args: []string{"--enable-changelogs"}, wantLimit: -1},
		"ChangeLogsOnAnotherSocket":     {args: []string{"--enable-changelogs", "--changelogs-socket-path=/tmp/cl.sock"}, wantLimit: -1},
		"ChangeLogsOnARelativeSocket":   {args: []string{"--enable-changelogs", "--changelogs-socket-path=cl.sock"}, wantErr: `--changelogs-socket-path "cl.sock" is not an absolute path`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			limit, err := parse(t, tc.args...).validate()
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.wantErr)):
				t.Errorf("error %v, want %q", err, tc.wantErr)
			case tc.wantErr == "" && limit != tc.wantLimit:
				t.Errorf("memory limit %d, want %d", limit, tc.wantLimit)
			}
		})
	}
}

// TestWebhookSource: the webhook is served only with a certificate, so a
// provider run without one (on a workstation, by the e2e suites) behaves
// as before the webhook existed; --no-webhook turns it off either way.
func TestWebhookSource(t *testing.T) {
	t.Setenv("TLS_SERVER_CERTS_DIR", "")
	cases := map[string]struct {
		args []string
		env  string // TLS_SERVER_CERTS_DIR, as Crossplane sets it
		want string
	}{
		"NoCertificate":              {want: webhookOff},
		"CrossplaneMountsOne":        {env: "/tls/server", want: webhookFromDir},
		"ADirectory":                 {args: []string{"--webhook-tls-dir=/certs"}, want: webhookFromDir},
		"SelfSigned":                 {args: []string{"--webhook-self-signed"}, want: webhookSelfSigned},
		"DisabledWithCrossplanes":    {args: []string{"--no-webhook"}, env: "/tls/server", want: webhookOff},
		"DisabledWithSelfSigned":     {args: []string{"--no-webhook", "--webhook-self-signed"}, want: webhookOff},
		"DisabledWithoutCertificate": {args: []string{"--no-webhook"}, want: webhookOff},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Setenv("TLS_SERVER_CERTS_DIR", tc.env)
			if got := parse(t, tc.args...).webhookSource(); got != tc.want {
				t.Errorf("webhookSource() = %q, want %q", got, tc.want)
			}
		})
	}
}
