// Package conformance runs Gateway API's official conformance suite
// (sigs.k8s.io/gateway-api/conformance, the version in this module's go.mod)
// against the provider's `cloudflare` GatewayClass. `make conformance`
// (hack/conformance.sh) starts what it needs — the local cluster, the
// Cloudflare simulator with its edge, and the provider binary — and runs
// this test; the suite's requests go to the simulator's edge, which serves
// them as Cloudflare's edge and cloudflared would, to the suite's echo
// servers run here as local processes (the cluster's nodes run no
// containers).
//
// It is its own Go module because the suite needs Kubernetes 0.36 and
// controller-runtime 0.24, while the provider is built on what
// crossplane-runtime supports.
package conformance

import (
	"context"
	"net"
	"os"
	"testing"
	"time"

	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/gateway-api/conformance"
	confv1 "sigs.k8s.io/gateway-api/conformance/apis/v1"
	"sigs.k8s.io/gateway-api/conformance/utils/roundtripper"
	"sigs.k8s.io/gateway-api/conformance/utils/suite"
	"sigs.k8s.io/gateway-api/pkg/features"
)

// settings are what hack/conformance.sh hands the test.
type settings struct {
	edge, sim, echo, report, version, workDir, clusterDomain string
}

func settingsFromEnv(t *testing.T) settings {
	t.Helper()
	s := settings{
		edge:          os.Getenv("CONFORMANCE_EDGE_ADDR"),
		sim:           os.Getenv("CONFORMANCE_SIM_BASE"),
		echo:          os.Getenv("CONFORMANCE_ECHO_BASIC"),
		report:        os.Getenv("CONFORMANCE_REPORT"),
		version:       os.Getenv("CONFORMANCE_VERSION"),
		workDir:       os.Getenv("CONFORMANCE_WORK_DIR"),
		clusterDomain: os.Getenv("CONFORMANCE_CLUSTER_DOMAIN"),
	}
	if s.edge == "" || s.sim == "" || s.echo == "" || s.report == "" || s.workDir == "" {
		t.Fatal("run it with `make conformance`: CONFORMANCE_EDGE_ADDR, CONFORMANCE_SIM_BASE, CONFORMANCE_ECHO_BASIC, CONFORMANCE_REPORT and CONFORMANCE_WORK_DIR are unset")
	}
	if s.clusterDomain == "" {
		s.clusterDomain = "cluster.local"
	}
	if s.version == "" {
		s.version = "dev"
	}
	return s
}

func TestConformance(t *testing.T) {
	s := settingsFromEnv(t)
	opts := conformance.DefaultOptions(t)
	opts.GatewayClassName = GatewayClass
	opts.SupportedFeatures = SupportedFeatures
	opts.ConformanceProfiles = Profiles
	opts.SkipTests = skippedNames()
	opts.ReportOutputPath = s.report
	opts.CleanupBaseResources = true
	opts.Implementation = confv1.Implementation{
		Organization: "context-labs",
		Project:      "provider-cloudflare-tunnel",
		URL:          "https://github.com/context-labs/provider-cloudflare-tunnel",
		Version:      s.version,
		Contact:      []string{"https://github.com/context-labs/provider-cloudflare-tunnel/issues"},
	}
	opts.RoundTripper = &roundtripper.DefaultRoundTripper{
		Debug:         opts.Debug,
		TimeoutConfig: opts.TimeoutConfig,
		// Every Gateway address is a hostname of the account's zone: the
		// request goes to Cloudflare's edge, here the simulator's.
		CustomDialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, s.edge)
		},
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{}, 2)
	t.Cleanup(func() { cancel(); <-done; <-done })
	dyn, err := dynamic.NewForConfig(opts.RestConfig)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		newBackends(opts.Clientset, s.echo, s.sim, s.clusterDomain, s.workDir, t.Logf).run(ctx, time.Second)
		done <- struct{}{}
	}()
	go func() {
		(&connectors{kube: dyn, sim: s.sim, logf: t.Logf}).run(ctx, time.Second)
		done <- struct{}{}
	}()

	conformance.RunConformanceWithOptions(t, opts)
}

// GatewayClass is the provider's class, as hack/conformance.sh makes it.
const GatewayClass = "cloudflare"

// Profiles the provider is judged by.
var Profiles = []suite.ConformanceProfileName{suite.GatewayHTTPConformanceProfileName}

// SupportedFeatures are what the provider declares: the suite runs the
// tests of these (and of the profiles' core) and skips the rest.
var SupportedFeatures = []features.FeatureName{
	features.SupportGateway,
	features.SupportHTTPRoute,
	features.SupportReferenceGrant,
}
