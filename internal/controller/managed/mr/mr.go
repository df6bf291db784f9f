// Package mr wires the provider's managed resources onto crossplane-runtime's
// managed reconciler the same way for every kind: Cloudflare IDs as
// external-names, usage tracking, connecting through the client layer,
// same-namespace references only, and management policies.
package mr

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	kmeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/feature"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	"github.com/crossplane/crossplane-runtime/v2/pkg/statemetrics"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/common"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/index"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/metrics"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sharing"
)

// ReconcileTimeout bounds one managed resource reconcile, time queued for
// the Cloudflare request budget included.
const ReconcileTimeout = 5 * time.Minute

// DefaultCreationGracePeriod is how long after a create an Observe that
// finds nothing is taken for Cloudflare's eventual consistency rather than a
// deletion, unless Settings say otherwise.
const DefaultCreationGracePeriod = 30 * time.Second

// Settings are what every managed resource controller is set up with.
type Settings struct {
	// Cloudflare are the options of every Cloudflare client: the shared
	// request budget, the observation caches, the transport, the
	// environment credentials come from. Their ObservationTTL is set per
	// controller (half its poll interval).
	Cloudflare cloudflare.Options
	// CreationGracePeriod; 0 is DefaultCreationGracePeriod.
	CreationGracePeriod time.Duration
	// ClusterDomain of the cluster's Service DNS names, which the allowed
	// origins guardrail recognises; "" is cluster.local.
	ClusterDomain string
	// Metrics are the provider's own metrics; nil records none.
	Metrics *metrics.Metrics
}

// Kind describes one managed resource kind to Setup.
type Kind[T resource.ModernManaged] struct {
	GVK     schema.GroupVersionKind
	NewObj  func() T
	NewList func() client.ObjectList
	// External builds the kind's external client from a connection.
	External func(c Connection) managed.TypedExternalClient[T]
	// References lists the namespaces of the kind's references and
	// selectors, so references into other namespaces can be refused.
	References func(mg T) []*string
	// TunnelRefs are the kind's references to Tunnels: one may name a
	// Tunnel of another namespace when its CloudflareTunnel is shared with
	// the resource's namespace (spec.allowedNamespaces).
	TunnelRefs func(mg T) []*xpv2.NamespacedReference
	// AccessPolicyRefs are the kind's references to AccessPolicies: one
	// may name a policy of another namespace that is shared with the
	// resource's namespace (the AccessPolicy's spec.allowedNamespaces).
	AccessPolicyRefs func(mg T) []*xpv2.NamespacedReference
	// AccessPolicyIDs lists the Access policy IDs the resource uses, so a
	// policy another namespace manages and does not share is refused.
	AccessPolicyIDs func(mg T) []string
	// AccessGroupIDs and AccessServiceTokenIDs list the Access group and
	// service token IDs the resource's rules name, so one another
	// namespace manages is refused (neither is shared).
	AccessGroupIDs, AccessServiceTokenIDs func(mg T) []string
	// TunnelIDs lists the tunnel IDs the resource points Cloudflare at, so a
	// tunnel another namespace manages can be refused (tenancy.go).
	TunnelIDs func(mg T) []string
	// VirtualNetworkIDs lists the virtual network IDs the resource puts
	// routes into, so one another namespace manages can be refused.
	VirtualNetworkIDs func(mg T) []string
	// Hostnames lists the hostnames the resource publishes or routes, for
	// the provider config's allowed hostname suffixes.
	Hostnames func(mg T) []string
	// EdgeHostnames lists the hostnames the resource puts an edge object
	// on (an Access application's domain and destinations): one another
	// namespace holds is refused (holder.go).
	EdgeHostnames func(mg T) []string
	// Origins lists the origins the resource's rules send requests to,
	// for the provider config's allowed origins. Whose rules they are is
	// not known at this layer (a tunnel's configuration holds every
	// namespace's it serves), so any namespace's Services pass here; the
	// PublicHostname checks the namespace.
	Origins func(mg T) []string
	// Networks lists the CIDRs the resource routes, for the provider
	// config's allowed networks.
	Networks func(mg T) []string
	// StoredForm puts fields whose in-memory form would not be written
	// back as the API server stores them into that form
	// (rotation.KeepStoredZero), on every object the managed reconciler
	// reads or writes (storedform.go); nil for a kind that has none.
	StoredForm func(mg T)
	// FollowReferences clears the IDs of references whose target now
	// holds another Cloudflare object than the one resolved (a service
	// token made again in place of one deleted in Cloudflare), so that
	// resolution sets the new ID; references otherwise keep an ID once
	// resolved. Nil for a kind without such references.
	FollowReferences func(ctx context.Context, kube client.Reader, mg T) error
	// ObservedID is the ID of the Cloudflare object the resource's status
	// says it observed as its own, so that naming an ID (by hand, or
	// adopting it) is told apart from holding it (tenancy.go). Nil for a
	// kind whose status does not record it.
	ObservedID func(mg T) string
}

// Setup adds a managed reconciler for the kind.
func Setup[T resource.ModernManaged](mgr ctrl.Manager, o controller.Options, s Settings, k Kind[T]) error {
	grace := s.CreationGracePeriod
	if grace == 0 {
		grace = DefaultCreationGracePeriod
	}
	cfOpts := s.Cloudflare
	// Half a poll: an observation is never more than one poll stale, so
	// drift is still seen within one poll.
	cfOpts.ObservationTTL = o.PollInterval / 2
	name := managed.ControllerName(k.GVK.GroupKind().String())
	kube := mgr.GetClient()
	owner := &clusterOwner{reader: mgr.GetAPIReader()}
	recorder := event.NewAPIRecorder(mgr.GetEventRecorderFor(name))
	deleted := &deletedHere{}
	written := &writtenHere{}
	conn := managed.TypedExternalConnectorFn[T](func(ctx context.Context, mg T) (managed.TypedExternalClient[T], error) {
		c, cfg, err := cloudflare.Connect(ctx, kube, resource.NewProviderConfigUsageTracker(kube, &v1alpha1.ProviderConfigUsage{}), mg, cfOpts)
		if err != nil {
			return nil, note(ctx, mg.GetCondition(xpv2.TypeSynced), err)
		}
		if err := owner.withOwner(ctx, cfg); err != nil {
			return nil, note(ctx, mg.GetCondition(xpv2.TypeSynced), err)
		}
		ext := k.External(Connection{Cloudflare: c, Kube: kube, Config: *cfg, Metrics: s.Metrics, PollInterval: o.PollInterval, Recorder: recorder})
		guarded := &tenancyGuard[T]{TypedExternalClient: ext, kube: kube, kind: k.GVK.Kind, newList: k.NewList, tunnelIDs: k.TunnelIDs, virtualNetworkIDs: k.VirtualNetworkIDs, accessPolicyIDs: k.AccessPolicyIDs, accessGroupIDs: k.AccessGroupIDs, accessServiceTokenIDs: k.AccessServiceTokenIDs, observedID: observedIDOf(k.ObservedID), settle: 2 * o.PollInterval}
		railed := &guardrails[T]{TypedExternalClient: guarded, kube: kube, config: *cfg, hostnames: k.Hostnames, networks: k.Networks, origins: k.Origins, clusterDomain: s.ClusterDomain}
		var edge managed.TypedExternalClient[T] = railed
		if k.EdgeHostnames != nil {
			edge = &holderGuard[T]{TypedExternalClient: railed, kube: kube, kind: k.GVK.Kind, config: *cfg, hostnames: k.EdgeHostnames, observedID: observedIDOf(k.ObservedID)}
		}
		return &notesReasons[T]{&recordsWrites[T]{TypedExternalClient: &confirmsDeletes[T]{TypedExternalClient: edge, deleted: deleted}, written: written}}, nil
	})

	opts := []managed.ReconcilerOption{
		managed.WithTypedExternalConnector[T](conn),
		// Cloudflare assigns IDs: the external-name stays empty until
		// Create (or adoption in Observe) sets it.
		managed.WithInitializers(),
		// Observe and Create adopt what a crashed create left behind (by
		// natural key and ownership marker), so an unknown create outcome
		// heals itself instead of waiting for a human.
		managed.WithDeterministicExternalName(true),
		managed.WithReferenceResolver(sameNamespaceResolver(kube, k.References, sharedRefs[T]{tunnels: k.TunnelRefs, policies: k.AccessPolicyRefs, follow: k.FollowReferences})),
		managed.WithPollInterval(o.PollInterval),
		// A write may queue for the shared request budget behind every
		// other controller's workers (3 kinds x 100 at 3.2 requests a
		// second is about 94 s); crossplane-runtime's 1 minute would end
		// such a reconcile just before its turn and retry it from the
		// back of the queue.
		managed.WithTimeout(ReconcileTimeout),
		managed.WithCreationGracePeriod(grace),
		managed.WithLogger(o.Logger.WithValues("controller", name)),
		managed.WithRecorder(recorder),
	}
	if o.Features.Enabled(feature.EnableBetaManagementPolicies) {
		opts = append(opts, managed.WithManagementPolicies())
	}
	if o.Features.Enabled(feature.EnableAlphaChangeLogs) && o.ChangeLogOptions != nil {
		// Every create, update and delete goes to the change log
		// (internal/changelog).
		opts = append(opts, managed.WithChangeLogger(o.ChangeLogOptions.ChangeLogger))
	}
	if m := o.MetricOptions; m != nil {
		// crossplane-runtime's managed-resource metrics: time to first
		// ready and to deletion, drift, and resources by state.
		opts = append(opts, managed.WithMetricRecorder(m.MRMetrics))
		if m.MRStateMetrics != nil {
			rec := statemetrics.NewMRStateRecorder(listsWithoutCopies{kube}, o.Logger.WithValues("controller", name), m.MRStateMetrics, k.NewList().(resource.ManagedList), m.PollStateMetricInterval)
			if err := mgr.Add(rec); err != nil {
				return errors.Wrap(err, "cannot add the managed resource state metrics recorder")
			}
		}
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), k.NewObj(), ExternalNameIndex, externalNames); err != nil {
		return errors.Wrapf(err, "cannot index %s by external-name", k.GVK.Kind)
	}
	if k.Hostnames != nil {
		if err := mgr.GetFieldIndexer().IndexField(context.Background(), k.NewObj(), HostnameIndex, hostnameValues(k.Hostnames)); err != nil {
			return errors.Wrapf(err, "cannot index %s by hostname", k.GVK.Kind)
		}
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), k.NewObj(), index.Controller, index.ControllerUID); err != nil {
		return errors.Wrapf(err, "cannot index %s by controller", k.GVK.Kind)
	}
	// Its status writes put the reasons noted in the reconcile on Synced
	// (reasons.go).
	r := managed.NewReconciler(storedFormManager[T]{Manager: reasonsManager{mgr}, form: k.StoredForm}, resource.ManagedKind(k.GVK), opts...)
	return ctrl.NewControllerManagedBy(mgr).
		Named(name).
		WithOptions(o.ForControllerRuntime()).
		WithEventFilter(resource.DesiredStateChanged()).
		Watches(k.NewObj(), newcomersLast{EventHandler: &handler.EnqueueRequestForObject{}}).
		Complete(ratelimiter.NewReconciler(name, errors.WithSilentRequeueOnConflict(prioritised{Reconciler: typedReasons{r}, written: written, poll: o.PollInterval}), o.GlobalRateLimiter))
}

// observedIDOf adapts a kind's ObservedID to any managed resource.
func observedIDOf[T resource.ModernManaged](f func(T) string) func(resource.Managed) string {
	if f == nil {
		return nil
	}
	return func(m resource.Managed) string {
		t, ok := m.(T)
		if !ok {
			return ""
		}
		return f(t)
	}
}

// SetupGated registers Setup to run once the kind's CRD is established and
// the API server's discovery serves it (see KindServed).
func SetupGated[T resource.ModernManaged](mgr ctrl.Manager, o controller.Options, s Settings, k Kind[T]) error {
	o.Gate.Register(func() {
		go func() {
			if err := KindServed(mgr.GetRESTMapper(), k.GVK, kindServedWithin, time.Sleep); err != nil {
				o.Logger.Info("Cannot set up managed resource controller", "kind", k.GVK.Kind, "error", err)
				return
			}
			if err := Setup(mgr, o, s, k); err != nil {
				o.Logger.Info("Cannot set up managed resource controller", "kind", k.GVK.Kind, "error", err)
			}
		}()
	}, k.GVK)
	return nil
}

// kindServedWithin bounds the wait for discovery to serve a kind whose CRD
// was just established.
const kindServedWithin = time.Minute

// KindServed waits until the REST mapper maps gvk. A CRD established (the
// gate's signal) can still be missing from the API server's discovery for a
// moment, and the mapper, which rediscovers on a miss, then answers "no
// match": the controller would never start (its field indexes need the
// mapping) until the provider restarts.
func KindServed(m kmeta.RESTMapper, gvk schema.GroupVersionKind, within time.Duration, sleep func(time.Duration)) error {
	const every = 500 * time.Millisecond
	for waited := time.Duration(0); ; waited += every {
		_, err := m.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err == nil || !kmeta.IsNoMatchError(err) || waited >= within {
			return errors.Wrapf(err, "the API server does not serve %s", gvk)
		}
		sleep(every)
	}
}

// sharedRefs are a kind's references to objects another namespace may share
// with the resource's: Tunnels (their CloudflareTunnel's
// spec.allowedNamespaces) and AccessPolicies (their own).
type sharedRefs[T resource.ModernManaged] struct {
	tunnels, policies func(T) []*xpv2.NamespacedReference
	// follow is the kind's FollowReferences.
	follow func(context.Context, client.Reader, T) error
}

// check refuses a reference into another namespace that does not share
// what it names with ns.
func (s sharedRefs[T]) check(ctx context.Context, kube client.Reader, ns string, mg T) error {
	if s.tunnels != nil {
		for _, ref := range s.tunnels(mg) {
			if err := sharedTunnelRef(ctx, kube, ns, ref); err != nil {
				return err
			}
		}
	}
	if s.policies != nil {
		for _, ref := range s.policies(mg) {
			if err := sharedPolicyRef(ctx, kube, ns, ref); err != nil {
				return err
			}
		}
	}
	return nil
}

// sameNamespaceResolver refuses references into other namespaces before
// resolving: the provider can read every namespace, its users should not be
// able to borrow another team's tunnel or policy through it. The exceptions
// are what another namespace shares with the resource's (shared).
func sameNamespaceResolver[T resource.ModernManaged](kube client.Client, refs func(T) []*string, shared sharedRefs[T]) managed.ReferenceResolver {
	simple := unchangedFirst{kube: kube, writer: managed.NewAPISimpleReferenceResolver(kube)}
	resolve := func(ctx context.Context, mg resource.Managed) error {
		t, ok := mg.(T)
		if !ok {
			return simple.ResolveReferences(ctx, mg)
		}
		if refs != nil {
			for _, ns := range refs(t) {
				if ns != nil && *ns != "" && *ns != mg.GetNamespace() {
					return &ReferenceNotAllowedError{Detail: fmt.Sprintf("%q is not %q", *ns, mg.GetNamespace())}
				}
			}
		}
		if err := shared.check(ctx, kube, mg.GetNamespace(), t); err != nil {
			return err
		}
		if shared.follow != nil {
			if err := shared.follow(ctx, kube, t); err != nil {
				return err
			}
		}
		return simple.ResolveReferences(ctx, mg)
	}
	return managed.ReferenceResolverFn(func(ctx context.Context, mg resource.Managed) error {
		before := mg.GetCondition(xpv2.TypeSynced)
		return note(ctx, before, resolve(ctx, mg))
	})
}

// ReferenceNotAllowedError refuses a reference into another namespace.
type ReferenceNotAllowedError struct {
	// Detail says which reference, and why.
	Detail string
}

func (e *ReferenceNotAllowedError) Error() string {
	return "references to other namespaces are not allowed: " + e.Detail
}

// ConditionReason of a reference refused: NotAllowed.
func (e *ReferenceNotAllowedError) ConditionReason() xpv2.ConditionReason {
	return common.ReasonNotAllowed
}

// referencer is a managed resource with references (the generated
// ResolveReferences).
type referencer interface {
	ResolveReferences(ctx context.Context, r client.Reader) error
}

// unchangedFirst resolves references as crossplane-runtime's
// APISimpleReferenceResolver does, cheaply in the usual case of nothing to
// change: that resolver compares the resource before and after with go-cmp
// and reads each referenced Tunnel whole (a copy of its configuration
// document, a rule per hostname), which at 3,000 managed resources was a
// fifth of the provider's steady-state CPU. Here a copy is resolved first,
// reading Tunnels without their configuration (references extract only the
// external-name), and compared with apimachinery's semantic equality; only
// a resource whose references resolve to something new goes to writer,
// which resolves again and writes the change.
type unchangedFirst struct {
	kube   client.Reader
	writer managed.ReferenceResolver
}

func (u unchangedFirst) ResolveReferences(ctx context.Context, mg resource.Managed) error {
	if _, ok := mg.(referencer); !ok {
		return nil
	}
	resolved, ok := mg.DeepCopyObject().(referencer)
	if !ok {
		return u.writer.ResolveReferences(ctx, mg)
	}
	if err := resolved.ResolveReferences(ctx, tunnelsWithoutConfig{u.kube}); err != nil {
		return errors.Wrap(err, "cannot resolve references")
	}
	if equality.Semantic.DeepEqual(resolved, mg) {
		return nil
	}
	return u.writer.ResolveReferences(ctx, mg)
}

// tunnelsWithoutConfig reads Tunnels without their configuration document
// (getTunnel) and everything else as it is.
type tunnelsWithoutConfig struct{ client.Reader }

func (r tunnelsWithoutConfig) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	tun, ok := obj.(*ztv1alpha1.Tunnel)
	if !ok || len(opts) > 0 {
		return r.Reader.Get(ctx, key, obj, opts...)
	}
	got, err := getTunnel(ctx, r.Reader, key)
	if err != nil {
		return err
	}
	*tun = *got
	return nil
}

// sharedTunnelRef refuses a reference to a Tunnel of another namespace
// unless its CloudflareTunnel is shared with ns.
func sharedTunnelRef(ctx context.Context, kube client.Reader, ns string, ref *xpv2.NamespacedReference) error {
	if ref == nil || ref.Namespace == "" || ref.Namespace == ns {
		return nil
	}
	tun, err := getTunnel(ctx, kube, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name})
	if err != nil {
		// A Tunnel that is not there shares nothing; resolution says so.
		return errors.Wrapf(client.IgnoreNotFound(err), "cannot get Tunnel %s/%s", ref.Namespace, ref.Name)
	}
	shared, err := sharedWith(kube, ns, false)(ctx, tun)
	if err != nil {
		return err
	}
	if !shared {
		return &ReferenceNotAllowedError{Detail: fmt.Sprintf("Tunnel %s/%s is not shared with namespace %q (its CloudflareTunnel's spec.allowedNamespaces)", ref.Namespace, ref.Name, ns)}
	}
	return nil
}

// sharedPolicyRef refuses a reference to an AccessPolicy of another
// namespace unless the policy is shared with ns.
func sharedPolicyRef(ctx context.Context, kube client.Reader, ns string, ref *xpv2.NamespacedReference) error {
	if ref == nil || ref.Namespace == "" || ref.Namespace == ns {
		return nil
	}
	p := &ztv1alpha1.AccessPolicy{}
	if err := kube.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, p); err != nil {
		// A policy that is not there shares nothing; resolution says so.
		return errors.Wrapf(client.IgnoreNotFound(err), "cannot get AccessPolicy %s/%s", ref.Namespace, ref.Name)
	}
	labels, err := namespaceLabels(ctx, kube, ns)
	if err != nil {
		return err
	}
	if !sharing.AllowedBy(p.Spec.AllowedNamespaces, p.Namespace, ns, labels) {
		return &ReferenceNotAllowedError{Detail: fmt.Sprintf("AccessPolicy %s/%s is not shared with namespace %q (its spec.allowedNamespaces)", ref.Namespace, ref.Name, ns)}
	}
	return nil
}

// RefNamespace returns a reference's namespace field, if any.
func RefNamespace(r *xpv2.NamespacedReference) *string {
	if r == nil {
		return nil
	}
	return &r.Namespace
}

// SelectorNamespace returns a selector's namespace field, if any.
func SelectorNamespace(s *xpv2.NamespacedSelector) *string {
	if s == nil {
		return nil
	}
	return &s.Namespace
}

// Time converts an optional API time for status.
func Time(t *time.Time) *metav1.Time {
	if t == nil || t.IsZero() {
		return nil
	}
	mt := metav1.NewTime(*t)
	return &mt
}

// Lookup is how an external client finds its resource's Cloudflare object.
type Lookup[O any] struct {
	// Get reads the object by its ID, the resource's external-name.
	Get func(ctx context.Context, id string) (*O, error)
	// Find looks the object up by its natural key and returns it only with
	// proof that the resource made it (its ownership marker); nil when
	// there is none.
	Find func(ctx context.Context) (*O, error)
	// ID is the object's ID, for the external-name of one Find found.
	ID func(*O) string
	// Deleted reports a (soft-)deleted object, which Cloudflare may still
	// return by ID.
	Deleted func(*O) bool
}

// Locate returns the resource's live Cloudflare object, or nil when there is
// none (never created, or deleted in Cloudflare). Without an external-name
// it asks Find, and sets the external-name of what Find proves is the
// resource's (adopted: a create whose response was lost, or an object an
// earlier version made).
func Locate[O any](ctx context.Context, mg resource.Managed, l Lookup[O]) (obj *O, adopted bool, err error) {
	id := meta.GetExternalName(mg)
	if id == "" {
		o, err := l.Find(ctx)
		if err != nil || o == nil {
			return nil, false, err
		}
		meta.SetExternalName(mg, l.ID(o))
		return o, true, nil
	}
	o, err := l.Get(ctx, id)
	if cloudflare.IsNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if l.Deleted(o) {
		return nil, false, nil
	}
	return o, false, nil
}

// listsWithoutCopies lists from the cache without copying the objects, for
// a reader that only counts them: crossplane-runtime's state metrics list
// the whole kind every --poll-state-metric (5 s).
type listsWithoutCopies struct{ client.Client }

func (c listsWithoutCopies) List(ctx context.Context, l client.ObjectList, opts ...client.ListOption) error {
	return c.Client.List(ctx, l, append(opts, client.UnsafeDisableDeepCopy)...)
}
