package mr

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/origin"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/metrics"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/ownership"
)

// Connection is what an external client is built from: the Cloudflare
// client, the Kubernetes client, and the resolved provider config, whose
// Owner is always set (the config's owner ID, else the cluster's).
type Connection struct {
	Cloudflare cloudflare.API
	Kube       client.Client
	Config     clients.Config
	Metrics    *metrics.Metrics // nil records none
	// PollInterval is the controller's drift-check poll.
	PollInterval time.Duration
	// Recorder records events on the resource, for what an external
	// client does that crossplane-runtime's own events do not say.
	Recorder event.Recorder
}

// Identity is mg's identity for ownership markers.
func (c Connection) Identity(kind string, mg resource.Managed) ownership.Identity {
	return ownership.Identity{Owner: c.Config.Owner, Kind: kind, Namespace: mg.GetNamespace(), Name: mg.GetName(), UID: mg.GetUID()}
}

// clusterOwner reads the cluster's default owner ID once: from the
// kube-system namespace's UID, directly from the API server (one get on
// first connect; the provider is allowed that one namespace and does not
// watch namespaces).
type clusterOwner struct {
	reader client.Reader
	mu     sync.Mutex
	id     string
}

func (o *clusterOwner) get(ctx context.Context) (string, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.id != "" {
		return o.id, nil
	}
	ns := &corev1.Namespace{}
	if err := o.reader.Get(ctx, types.NamespacedName{Name: "kube-system"}, ns); err != nil {
		return "", errors.Wrap(err, "cannot read the kube-system namespace for the cluster's default owner ID (set spec.ownerID on the provider config instead)")
	}
	o.id = ownership.ClusterOwner(ns.GetUID())
	return o.id, nil
}

// withOwner fills cfg's Owner with the cluster's when the config sets none.
func (o *clusterOwner) withOwner(ctx context.Context, cfg *clients.Config) error {
	if cfg.Owner != "" {
		return nil
	}
	id, err := o.get(ctx)
	cfg.Owner = id
	return err
}

// guardrails refuses, before anything reaches Cloudflare, a resource its
// provider config's guardrails do not allow: a namespace a
// ClusterProviderConfig does not serve, or a hostname outside its allowed
// suffixes (a DNSRecord's zone is checked by its client, which resolves
// it). A refused resource that is being deleted lets go without touching
// Cloudflare: what it made before the rule is left alone.
type guardrails[T resource.ModernManaged] struct {
	managed.TypedExternalClient[T]
	// kube reads where the Services an origin names lead.
	kube      client.Reader
	config    clients.Config
	hostnames func(T) []string
	networks  func(T) []string
	// origins and the cluster domain their Service names end in.
	origins       func(T) []string
	clusterDomain string
}

func (g *guardrails[T]) Observe(ctx context.Context, mg T) (managed.ExternalObservation, error) {
	if err := g.check(ctx, mg); err != nil {
		if meta.WasDeleted(mg) {
			return managed.ExternalObservation{ResourceExists: false}, nil
		}
		return managed.ExternalObservation{}, err
	}
	return g.TypedExternalClient.Observe(ctx, mg)
}

func (g *guardrails[T]) check(ctx context.Context, mg T) error {
	if err := g.config.CheckNamespace(mg.GetNamespace()); err != nil {
		return err
	}
	if g.hostnames != nil {
		for _, h := range g.hostnames(mg) {
			if err := g.config.CheckHostname(h); err != nil {
				return err
			}
		}
	}
	if g.networks != nil {
		for _, n := range g.networks(mg) {
			if err := g.config.CheckNetwork(n); err != nil {
				return err
			}
		}
	}
	if g.origins != nil {
		// Followed to where each Service leads: an ExternalName Service,
		// or endpoints written by hand, are judged by their target here
		// as at the PublicHostname, so a Tunnel written by hand passes
		// only what allow.origins lets through.
		look := clients.ServiceLeads(ctx, g.kube)
		for _, o := range g.origins(mg) {
			if err := g.config.FollowOrigin(o, origin.Source{ClusterDomain: g.clusterDomain}, look); err != nil {
				return err
			}
		}
	}
	return nil
}
