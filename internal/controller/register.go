// Package controller wires every controller of the provider.
package controller

import (
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/composite/cloudflaretunnel"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/composite/publichostname"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/accessapplication"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/accessgroup"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/accesspolicy"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/accessservicetoken"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/dnsrecord"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/hostnameroute"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/loadbalancer"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/loadbalancermonitor"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/loadbalancerpool"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/mr"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/networkroute"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/tunnel"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/virtualnetwork"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/vpcservice"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/providerconfig"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/quietstatus"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/gateway"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/gatewaybinding"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/ingress"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/service"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/metrics"
)

// DefaultMaxReconcileRate is --max-reconcile-rate's default: reconciles per
// second across all controllers (and, derived from it, the Kubernetes API
// client's rate). Crossplane's usual 10 is sized to protect a cloud API from
// per-resource reads; here the Cloudflare budget does that and observing
// costs no call (the account-wide cache), so the limit is only Kubernetes
// work. 1,000 Ingresses make about 3,000 managed resources; polled every
// minute they need 50 reconciles a second, and convergence needs headroom
// above that.
const DefaultMaxReconcileRate = 100

// KubeWorkers is how many reconciles at once each controller runs that
// talks only to Kubernetes: the provider configs', the CloudflareTunnel's
// and the sources' (Ingress, Service, PublicHostname, GatewayBinding).
// Their reconciles read the cache and write a few objects, milliseconds
// each, so ten of them outrun the shared --max-reconcile-rate. The managed
// resources keep --max-reconcile-rate workers: theirs wait their turn in
// the Cloudflare budget, and a resource that needs no request (a poll, a
// confirmation) must find a worker free while others wait. Every worker is
// a goroutine with its stack from start to stop (about 9 KiB each, and the
// collector's headroom grows with them): 100 for each of eleven controllers
// that never use more than a few were 1,100 of the process's 2,100.
const KubeWorkers = 10

// kubeOnly are the options of a controller that talks only to Kubernetes.
func kubeOnly(o controller.Options) controller.Options {
	o.MaxConcurrentReconciles = min(o.MaxConcurrentReconciles, KubeWorkers)
	return o
}

// DNSRecordWorkers is the most workers the DNSRecord controller runs
// beyond --max-reconcile-rate when DNS writes are batched: a free zone's
// batch. Each worker waits for its record's batch, so the workers bound
// how large a batch can grow; a large change whose records arrive a few a
// second then goes out in full batches, not in one per window.
const DNSRecordWorkers = cloudflare.DefaultDNSBatchSize

// dnsRecordWorkers are the options of the DNSRecord controller, and how
// many of its writes can wait for batches at once: --max-reconcile-rate
// workers, or as many as a batch holds (up to DNSRecordWorkers) when
// batching is on.
func dnsRecordWorkers(o controller.Options, b cloudflare.DNSBatching) (controller.Options, cloudflare.DNSBatching) {
	if b.Enabled() {
		o.MaxConcurrentReconciles = max(o.MaxConcurrentReconciles, min(b.BatchSize(), DNSRecordWorkers))
		b.Writers = o.MaxConcurrentReconciles
	}
	return o, b
}

// Settings are the provider's own settings, beyond crossplane-runtime's
// controller options, passed to the controllers that use them: nothing is
// kept in package variables.
type Settings struct {
	// ClusterDomain of the cluster's Service DNS names (cluster.local
	// unless the cluster was set up otherwise).
	ClusterDomain string
	// Managed are the managed resource controllers' settings: the
	// Cloudflare client options (request budget, observation caches,
	// transport, environment) and the creation grace period.
	Managed mr.Settings
	// ConfigBatchWindow of CloudflareTunnels' configuration writes; 0 is
	// cloudflaretunnel.DefaultConfigBatchWindow.
	ConfigBatchWindow time.Duration
	// Metrics are the provider's own metrics (docs/metrics.md); nil
	// records none.
	Metrics *metrics.Metrics
	// WriteUnchangedStatus turns off quietstatus: every status write is
	// sent, even one that changes nothing (as crossplane-runtime's managed
	// reconciler does every poll). Only tests that prove the quiet client
	// makes the difference set it.
	WriteUnchangedStatus bool
}

// SetupGated registers every controller to start once its CRDs are
// established (Crossplane's safe-start). Call it before the manager starts:
// the indexes must exist before any controller starts the informers they
// index.
func SetupGated(mgr ctrl.Manager, o controller.Options, s Settings) error {
	if !s.WriteUnchangedStatus {
		// Every controller's client skips status writes that change
		// nothing (docs/reliability.md, "A quiet provider").
		mgr = quietstatus.Manager(mgr)
	}
	if err := ingress.Index(mgr); err != nil {
		return err
	}
	if err := publichostname.Index(mgr); err != nil {
		return err
	}
	managed := s.Managed
	managed.Metrics = s.Metrics
	managed.ClusterDomain = s.ClusterDomain
	// Every client shares the account's batcher, so every controller's
	// options carry the DNSRecord controller's writers.
	dnsOpts, batching := dnsRecordWorkers(o, managed.Cloudflare.DNSBatching)
	managed.Cloudflare.DNSBatching = batching
	if err := dnsrecord.SetupGated(mgr, dnsOpts, managed); err != nil {
		return err
	}
	for _, setup := range []func(ctrl.Manager, controller.Options, mr.Settings) error{
		accessapplication.SetupGated,
		accessgroup.SetupGated,
		accesspolicy.SetupGated,
		accessservicetoken.SetupGated,
		hostnameroute.SetupGated,
		loadbalancer.SetupGated,
		loadbalancermonitor.SetupGated,
		loadbalancerpool.SetupGated,
		networkroute.SetupGated,
		tunnel.SetupGated,
		virtualnetwork.SetupGated,
		vpcservice.SetupGated,
	} {
		if err := setup(mgr, o, managed); err != nil {
			return err
		}
	}
	kube := kubeOnly(o)
	if err := providerconfig.SetupGated(mgr, kube, s.Managed.Cloudflare.Env); err != nil {
		return err
	}
	if err := cloudflaretunnel.SetupGated(mgr, kube, cloudflaretunnel.Options{ConfigBatchWindow: s.ConfigBatchWindow, Metrics: s.Metrics}); err != nil {
		return err
	}
	if err := publichostname.SetupGated(mgr, kube, publichostname.Options{ClusterDomain: s.ClusterDomain, Metrics: s.Metrics}); err != nil {
		return err
	}
	if err := service.SetupGated(mgr, kube, service.Options{ClusterDomain: s.ClusterDomain, Metrics: s.Metrics}); err != nil {
		return err
	}
	if err := gatewaybinding.SetupGated(mgr, kube, gatewaybinding.Options{ClusterDomain: s.ClusterDomain, Metrics: s.Metrics}); err != nil {
		return err
	}
	if err := gateway.SetupGated(mgr, kube, gateway.Options{ClusterDomain: s.ClusterDomain, Metrics: s.Metrics}); err != nil {
		return err
	}
	return ingress.SetupGated(mgr, kube, ingress.Options{ClusterDomain: s.ClusterDomain, Metrics: s.Metrics})
}
