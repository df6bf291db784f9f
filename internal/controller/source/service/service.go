// Package service makes what annotated Services ask of a tunnel: one
// NetworkRoute per cluster IP (private-route), and a private hostname route,
// optionally a Workers VPC service and a public hostname, exactly as for an
// Ingress whose one backend is the Service. It deletes them with the
// annotations or the Service. The translation is the pure
// internal/controller/source/service/translate; this controller reads the world and converges.
package service

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"

	connv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/connectivity/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/handshake/target"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/expose"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/service/translate"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/metrics"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sharing"
)

const name = "service"

// Options of the Service controller, set at setup.
type Options struct {
	// ClusterDomain of Service DNS names; "" is cluster.local.
	ClusterDomain string
	// Metrics count the Services by what became of them; nil counts none.
	Metrics *metrics.Metrics
}

// Setup adds the Service controller.
func Setup(mgr ctrl.Manager, o controller.Options, opts Options) error {
	r := &Reconciler{kube: mgr.GetClient(), log: o.Logger.WithValues("controller", name), record: event.NewAPIRecorder(mgr.GetEventRecorderFor(name)), metrics: opts.Metrics, clusterDomain: opts.ClusterDomain}
	made := handler.EnqueueRequestsFromMapFunc(serviceOfRoute)
	return ctrl.NewControllerManagedBy(mgr).
		Named(name).
		WithOptions(o.ForControllerRuntime()).
		For(&corev1.Service{}).
		// What was made for a Service changing (Synced, deleted by hand)
		// and, on start, all of it: a Service deleted while the provider
		// was down has its objects removed then.
		Watches(&ztv1alpha1.NetworkRoute{}, made).
		Watches(&ztv1alpha1.HostnameRoute{}, made).
		Watches(&connv1alpha1.VPCService{}, made).
		Watches(&v1alpha1.PublicHostname{}, made).
		// A tunnel appearing or going moves its Services on.
		Watches(&v1alpha1.CloudflareTunnel{}, handler.EnqueueRequestsFromMapFunc(r.servicesOfTunnel), builder.WithPredicates(target.Changed())).
		// A namespace's labels decide which shared tunnels it may use.
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(r.sharedServicesIn), builder.WithPredicates(predicate.LabelChangedPredicate{})).
		Complete(ratelimiter.NewReconciler(name, errors.WithSilentRequeueOnConflict(r), o.GlobalRateLimiter))
}

// SetupGated adds the Service controller once the kinds it reads and
// writes exist.
func SetupGated(mgr ctrl.Manager, o controller.Options, opts Options) error {
	o.Gate.Register(func() {
		if err := Setup(mgr, o, opts); err != nil {
			o.Logger.Info("Cannot set up Service controller", "error", err)
		}
	}, v1alpha1.CloudflareTunnelGroupVersionKind, ztv1alpha1.NetworkRouteGroupVersionKind,
		ztv1alpha1.HostnameRouteGroupVersionKind, connv1alpha1.VPCServiceGroupVersionKind, v1alpha1.PublicHostnameGroupVersionKind)
	return nil
}

// Reconciler converges what Services ask of their tunnels.
type Reconciler struct {
	kube          client.Client
	log           logging.Logger
	record        event.Recorder
	metrics       *metrics.Metrics
	clusterDomain string
	// reported is the failure last repeated on a Service for each object
	// made for it (by UID), so each is said once, not on every reconcile.
	reported sync.Map
}

// serviceOfRoute maps an object made for a Service to that Service.
func serviceOfRoute(_ context.Context, o client.Object) []reconcile.Request {
	c := metav1.GetControllerOf(o)
	if c == nil || c.Kind != "Service" || c.APIVersion != "v1" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: c.Name}}}
}

// servicesOfTunnel are the Services naming a tunnel: of its namespace, or
// of any namespace it may be shared with.
func (r *Reconciler) servicesOfTunnel(ctx context.Context, o client.Object) []reconcile.Request {
	l := &corev1.ServiceList{}
	if err := r.kube.List(ctx, l, client.UnsafeDisableDeepCopy); err != nil {
		r.log.Debug("cannot list the Services of a tunnel", "error", err)
		return nil
	}
	var reqs []reconcile.Request
	for _, s := range l.Items {
		if a, ok := s.Annotations[v1alpha1.AnnotationTunnel]; ok && sharing.Names(a, s.Namespace, o.GetNamespace(), o.GetName()) {
			reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: s.Namespace, Name: s.Name}})
		}
	}
	return reqs
}

// sharedServicesIn are the Services of a namespace naming a tunnel of
// another.
func (r *Reconciler) sharedServicesIn(ctx context.Context, o client.Object) []reconcile.Request {
	l := &corev1.ServiceList{}
	if err := r.kube.List(ctx, l, client.InNamespace(o.GetName()), client.UnsafeDisableDeepCopy); err != nil {
		return nil
	}
	var reqs []reconcile.Request
	for _, s := range l.Items {
		if a, ok := s.Annotations[v1alpha1.AnnotationTunnel]; ok && sharing.CrossNamespace(a, s.Namespace) {
			reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: s.Namespace, Name: s.Name}})
		}
	}
	return reqs
}

// sourceKind labels Services in the provider's source metrics.
const sourceKind = "Service"

// Reconcile converges one Service's private routes and exposed objects:
// drop what it no longer asks for, read its tunnel, translate and converge
// the rest, report.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	svc := &corev1.Service{}
	if err := r.kube.Get(ctx, req.NamespacedName, svc); err != nil {
		if !kerrors.IsNotFound(err) {
			return reconcile.Result{}, errors.Wrap(err, "cannot get Service")
		}
		// Gone: what was made for it goes too (no finalizer on Services,
		// so this also runs for a Service deleted while the provider was
		// down).
		r.metrics.ForgetSource(sourceKind, req.NamespacedName)
		return reconcile.Result{}, r.release(ctx, ownerOf(nil, req.Namespace, req.Name))
	}
	o := ownerOf(svc, svc.Namespace, svc.Name)
	if meta.WasDeleted(svc) {
		r.metrics.ForgetSource(sourceKind, req.NamespacedName)
		return reconcile.Result{}, r.release(ctx, o)
	}
	tgt, terr := r.target(ctx, svc)
	w, err := r.wanted(ctx, o, svc, tgt)
	if err != nil || !w.routes && !w.exposure {
		return reconcile.Result{}, err
	}
	if refusal, ok := target.Refused(terr); ok {
		return r.refused(ctx, o, refusal)
	}
	if terr != nil {
		return reconcile.Result{}, terr
	}
	if !tgt.Made {
		// Its credentials (the provider config everything made for the
		// tunnel uses) are the Tunnel's: wait for the CloudflareTunnel to
		// say them rather than use the default credentials meanwhile (its
		// status change brings the Service back).
		r.metrics.SetSource(sourceKind, req.NamespacedName, metrics.SourceProblem)
		return reconcile.Result{}, nil
	}
	conflict, err := r.publish(ctx, o, svc, tgt, w)
	if err != nil {
		return reconcile.Result{}, err
	}
	r.metrics.SetSource(sourceKind, req.NamespacedName, metrics.StateOf(w.problem, conflict))
	return reconcile.Result{}, nil
}

// wants is what a Service asks of its tunnel.
type wants struct {
	// routes: routes for its cluster IPs; exposure: objects by name.
	routes, exposure bool
	// problem: its annotations have a problem, reported.
	problem bool
	// The translations, made once with the tunnel as it resolved (its ID
	// and credentials empty when it did not).
	translated translate.Result
	exposed    translate.Exposure
}

// wanted reads what the Service asks for, repeats its problems, and
// deletes what it no longer asks for (while its annotations are bad, its
// routes stay as they are).
func (r *Reconciler) wanted(ctx context.Context, o source.Owner, svc *corev1.Service, tgt target.Target) (wants, error) {
	routes := translate.PrivateRoutes(translate.Input{Service: svc, ProviderConfigRef: tgt.ProviderConfig})
	exposure := translate.Expose(translate.ExposeInput{Service: svc, ClusterDomain: r.clusterDomain, Tunnel: expose.Tunnel{
		Name: tgt.Ref.Name, Namespace: tgt.Ref.Namespace, TunnelID: tgt.ID, ProviderConfigRef: tgt.ProviderConfig, AdoptByName: tgt.AdoptByName,
	}})
	w := wants{
		routes: !routes.KeepExisting && routes.Wanted && len(routes.Routes) > 0, exposure: exposure.Wanted,
		problem: r.reportProblems(svc, routes, exposure), translated: routes, exposed: exposure,
	}
	key := client.ObjectKeyFromObject(svc)
	if !routes.Wanted && !exposure.Wanted {
		r.metrics.ForgetSource(sourceKind, key)
	} else {
		r.metrics.SetSource(sourceKind, key, metrics.StateOf(w.problem, false))
	}
	if !routes.KeepExisting && !w.routes {
		if err := r.convergeRoutes(ctx, o, nil); err != nil {
			return w, err
		}
	}
	if !w.exposure {
		if _, _, err := r.convergeExposure(ctx, o, exposed{}); err != nil {
			return w, err
		}
	}
	return w, nil
}

// reasonInvalidTunnel: the tunnel annotation does not parse (reported by
// the translations).
const reasonInvalidTunnel = "InvalidTunnelAnnotation"

// target is the tunnel the Service's annotation names, or a
// *target.Refusal (a Service that names none is refused as invalid: the
// translations say what it lacks, if it asks for anything).
func (r *Reconciler) target(ctx context.Context, svc *corev1.Service) (target.Target, error) {
	ann, ok := svc.Annotations[v1alpha1.AnnotationTunnel]
	if !ok {
		return target.Target{}, &target.Refusal{Reason: reasonInvalidTunnel, Message: "no " + v1alpha1.AnnotationTunnel + " annotation"}
	}
	ref, bad := sharing.Parse(ann, svc.Namespace)
	if bad != "" {
		return target.Target{}, &target.Refusal{Reason: reasonInvalidTunnel, Message: bad}
	}
	return target.Resolve(ctx, r.kube, svc.Namespace, ref)
}

// refused says why the Service gets nothing through its tunnel, and does
// what that reason asks: what the Service has stays (a typo must not take
// routes down), but for a tunnel that does not allow its namespace.
func (r *Reconciler) refused(ctx context.Context, o source.Owner, why *target.Refusal) (reconcile.Result, error) {
	svc := o.Object.(*corev1.Service)
	key := client.ObjectKeyFromObject(svc)
	switch why.Reason {
	case reasonInvalidTunnel:
		return reconcile.Result{}, nil
	case target.ReasonNotShared:
		r.warn(svc, why.Reason, fmt.Sprintf("annotation %s: %s; nothing is made through it, and what this Service had there is removed", v1alpha1.AnnotationTunnel, why.Message))
		r.metrics.SetSource(sourceKind, key, metrics.SourceProblem)
		return reconcile.Result{RequeueAfter: time.Minute}, r.release(ctx, o)
	case target.ReasonDeleting:
		r.warn(svc, why.Reason, fmt.Sprintf("%s; remove the %s annotation or name another tunnel", why.Message, v1alpha1.AnnotationTunnel))
		r.metrics.SetSource(sourceKind, key, metrics.SourceProblem)
		return reconcile.Result{RequeueAfter: 30 * time.Second}, nil
	}
	r.warn(svc, why.Reason, fmt.Sprintf("annotation %s: %s (name a tunnel of another namespace as <namespace>/<name>); nothing is created, and whatever this Service already has stays as it is until it names a tunnel that exists", v1alpha1.AnnotationTunnel, why.Message))
	r.metrics.SetSource(sourceKind, key, metrics.SourceProblem)
	return reconcile.Result{RequeueAfter: time.Minute}, nil
}

// publish converges what the Service asks of tgt and says whether another
// holds one of its names or hostnames.
func (r *Reconciler) publish(ctx context.Context, o source.Owner, svc *corev1.Service, tgt target.Target, w wants) (bool, error) {
	if w.routes {
		if err := r.convergeRoutes(ctx, o, w.translated.Routes); err != nil {
			return false, err
		}
	}
	if !w.exposure {
		return false, nil
	}
	exposure := w.exposed
	yielded, err := source.YieldedBy(ctx, r.kube, o)
	if err != nil {
		return false, err
	}
	r.reportYielded(svc, exposure.Hostnames, yielded)
	undecided, err := source.UndecidedBy(ctx, r.kube, o, source.ClaimedHostnames(exposure.Published))
	if err != nil {
		return false, err
	}
	kept, taken, err := r.convergeExposure(ctx, o, desiredExposure(exposure, yielded, undecided))
	if err != nil {
		return false, err
	}
	r.reportExposureFailures(svc, source.TunnelOf(tgt.Tunnel), kept)
	return taken || len(yielded) > 0, nil
}

// reportProblems repeats the translations' problems as Warning events and
// says whether there were any.
func (r *Reconciler) reportProblems(svc *corev1.Service, routes translate.Result, exposure translate.Exposure) bool {
	for _, p := range routes.Problems {
		r.warn(svc, translate.ReasonInvalidAnnotation, p.Message)
	}
	if routes.NoClusterIP != "" {
		r.warn(svc, translate.ReasonNoClusterIP, routes.NoClusterIP)
	}
	for _, p := range exposure.Problems {
		r.warn(svc, translate.ReasonInvalidAnnotation, p.String())
	}
	for _, n := range exposure.Notes {
		r.warn(svc, n.Reason, n.String())
	}
	return len(routes.Problems) > 0 || routes.NoClusterIP != "" || routes.KeepExisting || len(exposure.Problems) > 0
}

// release deletes everything made for the Service o (and for any earlier
// Service of its name).
func (r *Reconciler) release(ctx context.Context, o source.Owner) error {
	if err := r.convergeRoutes(ctx, o, nil); err != nil {
		return err
	}
	_, _, err := r.convergeExposure(ctx, o, exposed{})
	return err
}

func (r *Reconciler) warn(svc *corev1.Service, reason, msg string) {
	r.record.Event(svc, event.Warning(event.Reason(reason), errors.New(msg)))
}

// ownerOf is svc as the owner of what is made for it. Services carry no
// finalizer: a Service gone is an owner without UID, whose objects are
// found by the label naming it and released.
func ownerOf(svc *corev1.Service, ns, svcName string) source.Owner {
	o := source.Owner{APIVersion: "v1", Kind: sourceKind, Namespace: ns, Name: svcName,
		Select: client.MatchingLabels{publish.LabelService: publish.LabelValue(svcName)}}
	if svc != nil {
		o.Object, o.UID = svc, svc.UID
	}
	return o
}

// routeChildren converges a Service's NetworkRoutes.
func (r *Reconciler) routeChildren() *source.Converger {
	return &source.Converger{Kube: r.kube, Record: r.record,
		Kinds: func() []client.ObjectList { return []client.ObjectList{&ztv1alpha1.NetworkRouteList{}} },
		Copy: func(cur, want source.Owned) bool {
			return CopySpec(cur.(*ztv1alpha1.NetworkRoute), want.(*ztv1alpha1.NetworkRoute))
		},
	}
}

// convergeRoutes applies want, deletes the Service's other routes and
// repeats the failures of those it keeps on the Service.
func (r *Reconciler) convergeRoutes(ctx context.Context, o source.Owner, want []*ztv1alpha1.NetworkRoute) error {
	d := source.Desired{}
	for _, w := range want {
		d.Objects = append(d.Objects, w)
	}
	out, err := r.routeChildren().Converge(ctx, o, d)
	r.forget(out.Released)
	if len(out.Taken) > 0 {
		// After the translation's own state: this one stands.
		r.metrics.SetSource(sourceKind, types.NamespacedName{Namespace: o.Namespace, Name: o.Name}, metrics.SourceConflict)
	}
	if err != nil || len(want) == 0 {
		return err
	}
	for _, m := range out.Children {
		r.reportFailure(o.Object, m.(*ztv1alpha1.NetworkRoute))
	}
	return nil
}

// forget drops what was said about objects released.
func (r *Reconciler) forget(ms []source.Owned) {
	for _, m := range ms {
		r.reported.Delete(m.GetUID())
	}
}

// CopySpec sets cur to want's labels, owner, and desired fields, keeping
// what the managed reconciler added (IDs its references resolved to). It
// reports whether anything changed.
func CopySpec(cur, want *ztv1alpha1.NetworkRoute) bool {
	before := cur.DeepCopy()
	cur.SetLabels(want.GetLabels())
	w, c := want.Spec.ForProvider, &cur.Spec.ForProvider
	c.Network, c.Comment = w.Network, w.Comment
	if !equality.Semantic.DeepEqual(c.TunnelIDRef, w.TunnelIDRef) {
		c.TunnelIDRef, c.TunnelID = w.TunnelIDRef, nil
	}
	if !equality.Semantic.DeepEqual(c.VirtualNetworkIDRef, w.VirtualNetworkIDRef) {
		// Named, changed or dropped (back to the default): resolve again.
		c.VirtualNetworkIDRef, c.VirtualNetworkID = w.VirtualNetworkIDRef, nil
	}
	cur.Spec.ProviderConfigReference = want.Spec.ProviderConfigReference
	return !equality.Semantic.DeepEqual(before, cur)
}

// reportFailure repeats a route's failure (an overlap with someone else's
// route, a virtual network that does not exist) on the Service, once per
// distinct message.
func (r *Reconciler) reportFailure(svc client.Object, rt *ztv1alpha1.NetworkRoute) {
	c := rt.GetCondition(xpv2.TypeSynced)
	if c.Status != corev1.ConditionFalse || c.Message == "" {
		r.reported.Delete(rt.UID)
		return
	}
	if last, ok := r.reported.Load(rt.UID); ok && last == c.Message {
		return
	}
	r.reported.Store(rt.UID, c.Message)
	r.record.Event(svc, event.Warning("NetworkRouteFailed", errors.New(fmt.Sprintf("NetworkRoute %s (%s): %s", rt.Name, rt.Spec.ForProvider.Network, c.Message))))
}
