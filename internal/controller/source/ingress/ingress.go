// Package ingress translates Ingresses of class "cloudflare" into managed
// resources (hostname routes, VPC services, DNS records) on the tunnel they
// name. It writes only Kubernetes objects; the managed resources talk to
// Cloudflare. The translation itself is the pure internal/controller/source/ingress/translate.
package ingress

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	connv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/connectivity/v1alpha1"
	dnsv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/dns/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/handshake"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/handshake/target"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/index"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/expose"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/ingress/translate"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/hostname"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/metrics"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sharing"
)

// Class and controller names this provider answers to.
const (
	ClassName       = "cloudflare"
	ControllerName  = "tunnels.cloudflare.com/ingress-controller"
	legacyClassKey  = "kubernetes.io/ingress.class"
	defaultClassKey = "ingressclass.kubernetes.io/is-default-class"
	finalizer       = "tunnels.cloudflare.com/ingress"
)

// Options of the translator, set at setup.
type Options struct {
	// ClusterDomain of Service DNS names; "" is cluster.local.
	ClusterDomain string
	// Metrics count the Ingresses by what became of them; nil counts none.
	Metrics *metrics.Metrics
}

// Setup adds the Ingress translator.
func Setup(mgr ctrl.Manager, o controller.Options, opts Options) error {
	name := "ingress"
	r := &Reconciler{kube: mgr.GetClient(), log: o.Logger.WithValues("controller", name), record: event.NewAPIRecorder(mgr.GetEventRecorderFor(name)), clusterDomain: opts.ClusterDomain, metrics: opts.Metrics}
	return ctrl.NewControllerManagedBy(mgr).
		Named(name).
		WithOptions(o.ForControllerRuntime()).
		For(&networkingv1.Ingress{}).
		Owns(&ztv1alpha1.HostnameRoute{}).
		Owns(&connv1alpha1.VPCService{}).
		Owns(&v1alpha1.PublicHostname{}).
		// A public claim losing or holding moves the hostname's private
		// route to whoever holds it: every Ingress routing it looks again.
		Watches(&v1alpha1.PublicHostname{}, handler.EnqueueRequestsFromMapFunc(r.ingressesRouting), builder.WithPredicates(acceptedChanged())).
		// The DNS records an Ingress made before PublicHostnames existed,
		// until its PublicHostnames take them over.
		Owns(&dnsv1alpha1.DNSRecord{}).
		// A tunnel appearing, or getting its ID, moves its Ingresses on.
		// Its connections coming or going are said on public Ingresses.
		Watches(&v1alpha1.CloudflareTunnel{}, handler.EnqueueRequestsFromMapFunc(r.ingressesOfTunnel), builder.WithPredicates(predicate.Or(target.Changed(), connectionChanged()))).
		// A backend Service appearing, changing its ports or going away
		// changes the rules and VPC services of the Ingresses naming it.
		Watches(&corev1.Service{}, handler.EnqueueRequestsFromMapFunc(r.ingressesOfService)).
		// A namespace's labels decide which shared tunnels it may use.
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(r.sharedIngressesIn), builder.WithPredicates(predicate.LabelChangedPredicate{})).
		Complete(ratelimiter.NewReconciler(name, errors.WithSilentRequeueOnConflict(r), o.GlobalRateLimiter))
}

// SetupGated adds the translator once the kinds it writes exist.
func SetupGated(mgr ctrl.Manager, o controller.Options, opts Options) error {
	o.Gate.Register(func() {
		if err := Setup(mgr, o, opts); err != nil {
			o.Logger.Info("Cannot set up Ingress controller", "error", err)
		}
	}, v1alpha1.CloudflareTunnelGroupVersionKind, v1alpha1.PublicHostnameGroupVersionKind, ztv1alpha1.HostnameRouteGroupVersionKind,
		connv1alpha1.VPCServiceGroupVersionKind, dnsv1alpha1.DNSRecordGroupVersionKind)
	return nil
}

// Reconciler reconciles Ingresses.
type Reconciler struct {
	kube          client.Client
	log           logging.Logger
	record        event.Recorder
	clusterDomain string
	metrics       *metrics.Metrics
	// reported is the failure last repeated on an Ingress for each managed
	// resource (by UID), so each is repeated once, not on every reconcile:
	// client-go drops an object's events past a burst of 25 (then one per
	// five minutes), and the repeats would crowd out the failures that
	// matter, such as a name another installation holds.
	reported sync.Map
	// endpoints says, by Ingress UID, whether the Ingress may have a
	// DNSEndpoint (see dropDNSEndpoint).
	endpoints sync.Map
	// endpointKindMissingUntil (a time.Time) is when to look for the
	// DNSEndpoint kind again, after a lookup found it not installed.
	endpointKindMissingUntil atomic.Value
}

// Ours says whether an Ingress is of this provider's class: by
// spec.ingressClassName, the legacy annotation, or — with no class at all —
// a default IngressClass whose controller is this provider.
func Ours(ing *networkingv1.Ingress, classes []networkingv1.IngressClass) bool {
	if c := ing.Spec.IngressClassName; c != nil {
		if *c == ClassName {
			return true
		}
		for _, ic := range classes {
			if ic.Name == *c {
				return ic.Spec.Controller == ControllerName
			}
		}
		return false
	}
	if c, ok := ing.Annotations[legacyClassKey]; ok {
		return c == ClassName
	}
	for _, ic := range classes {
		if ic.Spec.Controller == ControllerName && ic.Annotations[defaultClassKey] == "true" {
			return true
		}
	}
	return false
}

// sourceKind labels Ingresses in the provider's source metrics.
const sourceKind = "Ingress"

// Reconcile converges an Ingress's managed resources: read its tunnel,
// translate, converge what it makes, report.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	ing := &networkingv1.Ingress{}
	if err := r.kube.Get(ctx, req.NamespacedName, ing); err != nil {
		if kerrors.IsNotFound(err) {
			r.metrics.ForgetSource(sourceKind, req.NamespacedName)
		}
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	ours, err := r.ours(ctx, ing)
	if err != nil {
		return reconcile.Result{}, err
	}
	if !ours || meta.WasDeleted(ing) {
		r.metrics.ForgetSource(sourceKind, req.NamespacedName)
		if !ours && !controllerutil.ContainsFinalizer(ing, finalizer) {
			return reconcile.Result{}, nil
		}
		// Released (deleted, or no longer of our class): remove exactly
		// what it created, and let go only once Cloudflare confirms.
		return r.release(ctx, ing)
	}
	if err := r.addFinalizer(ctx, ing); err != nil {
		return reconcile.Result{}, err
	}
	tgt, err := r.target(ctx, ing)
	if refusal, ok := target.Refused(err); ok {
		return r.refused(ctx, ing, refusal)
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	if !tgt.Made {
		return r.awaitTunnel(ing, tgt), nil
	}
	res, err := r.translate(ctx, ing, tgt)
	if err != nil {
		return reconcile.Result{}, err
	}
	d, err := r.desired(ctx, ing, res)
	if err != nil {
		return reconcile.Result{}, err
	}
	ms, recheck, err := r.converge(ctx, ing, d)
	if err != nil {
		return reconcile.Result{}, err
	}
	result, err := r.report(ctx, ing, res, d, ms, tgt)
	return soonest(result, recheck), err
}

// soonest is res, looking again after recheck (a parked hostname's grace
// ending) if that is sooner.
func soonest(res reconcile.Result, recheck time.Duration) reconcile.Result {
	if recheck > 0 && (res.RequeueAfter == 0 || recheck < res.RequeueAfter) {
		res.RequeueAfter = recheck
	}
	return res
}

// ours says whether the Ingress is of this provider's class.
func (r *Reconciler) ours(ctx context.Context, ing *networkingv1.Ingress) (bool, error) {
	classes := &networkingv1.IngressClassList{}
	if err := r.kube.List(ctx, classes); err != nil {
		return false, errors.Wrap(err, "cannot list IngressClasses")
	}
	return Ours(ing, classes.Items), nil
}

func (r *Reconciler) addFinalizer(ctx context.Context, ing *networkingv1.Ingress) error {
	if controllerutil.ContainsFinalizer(ing, finalizer) {
		return nil
	}
	orig := ing.DeepCopy()
	controllerutil.AddFinalizer(ing, finalizer)
	return errors.Wrap(r.kube.Patch(ctx, ing, finalizerPatch(orig)), "cannot add finalizer")
}

// Reasons an Ingress names no tunnel it can use, besides target's.
const (
	reasonMissingTunnel = "MissingTunnelAnnotation"
	reasonInvalid       = "InvalidIngress"
)

// target is the tunnel the Ingress's annotation names, or a
// *target.Refusal.
func (r *Reconciler) target(ctx context.Context, ing *networkingv1.Ingress) (target.Target, error) {
	name := ing.Annotations[v1alpha1.AnnotationTunnel]
	if strings.TrimSpace(name) == "" {
		return target.Target{}, &target.Refusal{Reason: reasonMissingTunnel, Message: fmt.Sprintf("annotation %s is required: name a CloudflareTunnel in namespace %s", v1alpha1.AnnotationTunnel, ing.Namespace)}
	}
	ref, bad := sharing.Parse(name, ing.Namespace)
	if bad != "" {
		return target.Target{}, &target.Refusal{Reason: reasonInvalid, Message: v1alpha1.AnnotationTunnel + ": " + bad}
	}
	return target.Resolve(ctx, r.kube, ing.Namespace, ref)
}

// refused says why the Ingress publishes through no tunnel, and does what
// that reason asks.
func (r *Reconciler) refused(ctx context.Context, ing *networkingv1.Ingress, why *target.Refusal) (reconcile.Result, error) {
	r.metrics.SetSource(sourceKind, client.ObjectKeyFromObject(ing), metrics.SourceProblem)
	switch why.Reason {
	case reasonMissingTunnel:
		// The annotation was removed (or never set): nothing is wanted.
		r.warn(ing, why.Reason, why.Message)
		recheck, err := r.unpublish(ctx, ing)
		return soonest(reconcile.Result{}, recheck), err
	case target.ReasonNotShared:
		// Policy, not a typo: nothing goes through a tunnel that does not
		// allow this namespace, and what went through it is unpublished.
		r.warn(ing, why.Reason, fmt.Sprintf("annotation %s: %s; nothing is published through it, and what this Ingress published there is removed", v1alpha1.AnnotationTunnel, why.Message))
		recheck, err := r.unpublish(ctx, ing)
		return soonest(reconcile.Result{RequeueAfter: time.Minute}, recheck), err
	case target.ReasonNotFound:
		// Nothing is created, and nothing made earlier is touched: the
		// tunnel it was on keeps its rules (a typo must not take a
		// working site down).
		r.warn(ing, why.Reason, fmt.Sprintf("annotation %s: %s (name a tunnel of another namespace as <namespace>/<name>); nothing is created, and whatever this Ingress already publishes stays as it is until it names a tunnel that exists", v1alpha1.AnnotationTunnel, why.Message))
		return reconcile.Result{RequeueAfter: time.Minute}, nil
	case target.ReasonDeleting:
		// A tunnel on its way out takes no new work; what is there stays
		// (the tunnel's deletion waits for its Ingresses).
		r.warn(ing, why.Reason, fmt.Sprintf("%s; remove the %s annotation or name another tunnel", why.Message, v1alpha1.AnnotationTunnel))
		return reconcile.Result{RequeueAfter: 30 * time.Second}, nil
	}
	// A typo keeps what works, as any bad annotation does.
	r.warn(ing, why.Reason, why.Message)
	return reconcile.Result{}, nil
}

// translate reads the backend Services and translates the Ingress for tgt,
// repeating its problems and notes on it.
func (r *Reconciler) translate(ctx context.Context, ing *networkingv1.Ingress, tgt target.Target) (expose.Result, error) {
	// Only the Services the backends name: listing the namespace would copy
	// every Service on each reconcile, which grows with the cluster.
	services := map[string]*corev1.Service{}
	for _, name := range translate.BackendServices(ing) {
		svc := &corev1.Service{}
		if err := r.kube.Get(ctx, types.NamespacedName{Namespace: ing.Namespace, Name: name}, svc); err != nil {
			if kerrors.IsNotFound(err) {
				continue
			}
			return expose.Result{}, errors.Wrap(err, "cannot get Service")
		}
		services[name] = svc
	}
	res := translate.Translate(translate.Input{
		Ingress:       ing,
		Tunnel:        expose.Tunnel{Name: tgt.Ref.Name, Namespace: tgt.Ref.Namespace, TunnelID: tgt.ID, ProviderConfigRef: tgt.ProviderConfig, AdoptByName: tgt.AdoptByName},
		Services:      services,
		ClusterDomain: r.clusterDomain,
	})
	for _, p := range res.Problems {
		r.warn(ing, reasonInvalid, p.String())
	}
	for _, n := range res.Notes {
		r.warn(ing, n.Reason, n.String())
	}
	return res, nil
}

// desired is what the Ingress should have: no hostname an older Ingress
// claims, no private route a lost public claim yielded. Bad input must not
// cost what already works: with a problem in the Ingress, the valid private
// routes and VPC services are made and updated but nothing is deleted, and
// its public hostnames stay as they are (a hostname is published whole,
// with its origin options and Access check, or keeps what it had).
func (r *Reconciler) desired(ctx context.Context, ing *networkingv1.Ingress, res expose.Result) (desired, error) {
	lost, err := lostHostnames(ctx, r.kube, ing, res.Hostnames)
	if err != nil {
		return desired{}, err
	}
	for h, winner := range lost {
		r.warn(ing, "HostnameConflict", conflictMessage(h, res.Written[h], winner, ing.Namespace))
	}
	yielded, err := source.YieldedBy(ctx, r.kube, ownerOf(ing))
	if err != nil {
		return desired{}, err
	}
	r.reportYielded(ing, res.Hostnames, yielded)
	undecided, err := source.UndecidedBy(ctx, r.kube, ownerOf(ing), source.ClaimedHostnames(res.Published))
	if err != nil {
		return desired{}, err
	}
	r.metrics.SetSource(sourceKind, client.ObjectKeyFromObject(ing), metrics.StateOf(len(res.Problems) > 0, len(lost)+len(yielded) > 0))
	d := desiredFrom(res, lost, yielded, len(res.Problems) == 0)
	d.keepExisting = len(res.Problems) > 0
	d.undecided = undecided
	d.objs = slices.DeleteFunc(d.objs, d.awaits)
	return d, nil
}

// report writes what the Ingress's objects say back where its author and
// ExternalDNS look: its DNSEndpoint, its address, its objects' failures.
func (r *Reconciler) report(ctx context.Context, ing *networkingv1.Ingress, res expose.Result, d desired, ms []Owned, tgt target.Target) (reconcile.Result, error) {
	result := reconcile.Result{}
	if !d.keepExisting {
		written, err := r.applyDNSEndpoint(ctx, ing, res, ms, tgt.ID)
		if err != nil {
			return reconcile.Result{}, err
		}
		if !written {
			// Nothing watches for the DNSEndpoint kind being installed.
			result.RequeueAfter = 10 * time.Second
		}
	}
	if err := r.updateAddress(ctx, ing, Address(ms, res.Public, tgt.ID)); err != nil {
		return reconcile.Result{}, err
	}
	r.reportManagedFailures(ing, source.TunnelOf(tgt.Tunnel), ms)
	r.reportConnection(ing, res.Public && tgt.ID != "", tgt.Tunnel)
	return result, nil
}

// awaitTunnel: until the CloudflareTunnel says which provider config its
// objects use, nothing is made or changed for it (made with the default
// credentials meanwhile, they would be written twice, or moved to other
// credentials); a tunnel that will not get there without its author acting
// is said on the Ingress. The CloudflareTunnel's status change brings the
// Ingress back.
func (r *Reconciler) awaitTunnel(ing *networkingv1.Ingress, tgt target.Target) reconcile.Result {
	r.reportManagedFailures(ing, source.TunnelOf(tgt.Tunnel), nil)
	return reconcile.Result{}
}

// unpublish takes down everything the Ingress published: its objects, its
// DNSEndpoint and its address. It says when to look again for a parked
// hostname's grace to end.
func (r *Reconciler) unpublish(ctx context.Context, ing *networkingv1.Ingress) (time.Duration, error) {
	_, recheck, err := r.converge(ctx, ing, desired{})
	if err != nil {
		return 0, err
	}
	if err := r.dropDNSEndpoint(ctx, ing); err != nil {
		return 0, err
	}
	return recheck, r.updateAddress(ctx, ing, "")
}

func (r *Reconciler) warn(ing *networkingv1.Ingress, reason, msg string) {
	r.record.Event(ing, event.Warning(event.Reason(reason), errors.New(msg)))
}

// Owned is what an Ingress makes: managed resources and PublicHostnames.
type Owned = source.Owned

func managedItems(l client.ObjectList) []Owned {
	var out []Owned
	for _, m := range l.(resource.ManagedList).GetItems() {
		out = append(out, m)
	}
	return out
}

// desired is the set of objects an Ingress should have.
type desired struct {
	objs []Owned
	// keepExisting: delete nothing that is no longer desired...
	keepExisting bool
	// ...but the private routes of these hostnames, which the Ingress
	// yielded to the holder of their public claim: bad input must not keep
	// a route that is someone else's.
	yielded map[string]string
	// undecided: hostnames whose public claim is not answered yet; their
	// private route waits for the answer (source.Undecided), one made
	// already stays.
	undecided map[string]bool
}

// awaits says whether m is a private route that waits for its hostname's
// public claim to be answered.
func (d desired) awaits(m Owned) bool { return source.AwaitedRoute(d.undecided, d.yielded, m) }

// drops says whether m goes even when existing objects are kept.
func (d desired) drops(m Owned) bool { return source.YieldedRoute(d.yielded, m) }

// desiredFrom is what an Ingress should have: nothing for the hostnames an
// older Ingress claims (lost), and no private route for those whose public
// claim lost (yielded): their PublicHostnames stay, waiting in line.
func desiredFrom(res expose.Result, lost, yielded map[string]string, publish bool) desired {
	d := desired{yielded: yielded}
	for _, o := range res.Routes {
		h := hostname.Normalize(o.Spec.ForProvider.Hostname)
		if _, l := lost[h]; l {
			continue
		}
		if _, y := yielded[h]; !y {
			d.objs = append(d.objs, o)
		}
	}
	for _, o := range res.Services {
		if _, l := lost[hostname.Normalize(deref(o.Spec.ForProvider.Host.Hostname))]; !l {
			d.objs = append(d.objs, o)
		}
	}
	for _, o := range res.Published {
		if _, l := lost[hostname.Normalize(o.Spec.Hostname)]; !l && publish {
			d.objs = append(d.objs, o)
		}
	}
	return d
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// hostnameIndex indexes tunnel-annotated Ingresses by the hostnames they
// route, so a claim check looks up only the Ingresses sharing a hostname
// instead of translating every Ingress in the cluster on each reconcile.
const hostnameIndex = "tunnels.cloudflare.com/hostname"

// serviceIndex indexes Ingresses by the Services their backends name, so a
// Service's change requeues exactly the Ingresses (and tunnels) using it.
const serviceIndex = "tunnels.cloudflare.com/backend-service"

// children converges what an Ingress makes: managed resources and
// PublicHostnames, found by the controller index (an Ingress's finalizer
// releases its children before it goes, so no earlier Ingress of its name
// leaves any).
func (r *Reconciler) children() *source.Converger {
	return &source.Converger{Kube: r.kube, Record: r.record, Grace: source.ReleaseGrace, Kinds: func() []client.ObjectList {
		// DNSRecords are the PublicHostnames' now; an Ingress still controls
		// the ones it made before published hostnames existed until its
		// PublicHostnames take them over.
		return []client.ObjectList{&ztv1alpha1.HostnameRouteList{}, &connv1alpha1.VPCServiceList{}, &dnsv1alpha1.DNSRecordList{}, &v1alpha1.PublicHostnameList{}}
	}}
}

func ownerOf(ing *networkingv1.Ingress) source.Owner {
	return source.OwnerOf(ing, networkingv1.SchemeGroupVersion.String(), sourceKind, index.Controlled(string(ing.UID)))
}

// converge creates and updates the desired managed resources and deletes
// the ones this Ingress made that are no longer wanted. It returns what the
// Ingress has after, and when to look again for a parked hostname's grace
// to end.
func (r *Reconciler) converge(ctx context.Context, ing *networkingv1.Ingress, d desired) ([]Owned, time.Duration, error) {
	out, err := r.children().Converge(ctx, ownerOf(ing), source.Desired{Objects: d.objs, Keep: func(m Owned) bool {
		return d.keepExisting && !d.drops(m) || handedOver(m, d.objs) || d.awaits(m)
	}})
	if len(out.Taken) > 0 {
		// After the translation's own state: this one stands.
		r.metrics.SetSource(sourceKind, client.ObjectKeyFromObject(ing), metrics.SourceConflict)
	}
	return out.Children, out.RecheckAfter, err
}

// handedOver says whether m is a DNS record this Ingress made before
// published hostnames existed, for a hostname one of its PublicHostnames now
// publishes: that PublicHostname takes the record over, so it is not deleted
// (and recreated, which would take the hostname off the internet).
func handedOver(m client.Object, wanted []Owned) bool {
	rec, ok := m.(*dnsv1alpha1.DNSRecord)
	if !ok {
		return false
	}
	for _, o := range wanted {
		if ph, ok := o.(*v1alpha1.PublicHostname); ok && strings.EqualFold(ph.Spec.Hostname, rec.Spec.ForProvider.Name) {
			return true
		}
	}
	return false
}

// release deletes everything the Ingress made and removes the finalizer
// once it is all gone (each managed resource's own finalizer waits for
// Cloudflare to confirm).
func (r *Reconciler) release(ctx context.Context, ing *networkingv1.Ingress) (reconcile.Result, error) {
	gone, err := r.children().Release(ctx, ownerOf(ing))
	if err != nil {
		return reconcile.Result{}, err
	}
	if !gone {
		// Each one's deletion brings this back (the watch on what it
		// owns); this is only a safety net. Every 2 s, 1,000 sources
		// being deleted took most of the reconcile rate the managed
		// resources needed to delete.
		return reconcile.Result{RequeueAfter: handshake.ReleaseRecheck}, nil
	}
	if err := r.deleteDNSEndpoint(ctx, ing); err != nil {
		return reconcile.Result{}, err
	}
	r.endpoints.Delete(ing.UID)
	if err := r.updateAddress(ctx, ing, ""); err != nil && !meta.WasDeleted(ing) {
		return reconcile.Result{}, err
	}
	orig := ing.DeepCopy()
	controllerutil.RemoveFinalizer(ing, finalizer)
	return reconcile.Result{}, errors.Wrap(client.IgnoreNotFound(r.kube.Patch(ctx, ing, finalizerPatch(orig))), "cannot remove finalizer")
}

// finalizerPatch writes an Ingress's finalizers changed from orig: a merge
// patch, refused like an update if the Ingress changed since it was read.
// Not an update: the cached Ingress has no kubectl last-applied annotation
// (internal/kubecache drops it), and an update would remove it from the
// Ingress (a status update too: for Ingresses it writes metadata).
func finalizerPatch(orig *networkingv1.Ingress) client.Patch {
	return client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})
}
