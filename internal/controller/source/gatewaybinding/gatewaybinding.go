// Package gatewaybinding publishes a Gateway listener's accepted HTTPRoute
// hostnames through a CloudflareTunnel: it writes one PublicHostname per
// hostname (and, in ExternalDNS mode, one DNSEndpoint) and reports on the
// GatewayBinding. It never writes a route's status, which belongs to the
// Gateway's own controller. The translation is the pure
// internal/controller/source/gatewaybinding/translate; this controller reads the world and converges.
package gatewaybinding

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	kmeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/handshake"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/handshake/target"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/externaldns"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/gatewaybinding/translate"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/metrics"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sharing"
)

const (
	name      = "gatewaybinding"
	finalizer = "tunnels.cloudflare.com/gateway-binding"
)

// Gateway API kinds the binding reads; it starts once they are installed.
var (
	GatewayGroupVersionKind        = gwv1.SchemeGroupVersion.WithKind("Gateway")
	GatewayClassGroupVersionKind   = gwv1.SchemeGroupVersion.WithKind("GatewayClass")
	HTTPRouteGroupVersionKind      = gwv1.SchemeGroupVersion.WithKind("HTTPRoute")
	ReferenceGrantGroupVersionKind = gwv1beta1.SchemeGroupVersion.WithKind("ReferenceGrant")
)

// Options of the controller, set at setup.
type Options struct {
	// ClusterDomain of Service DNS names; "" is cluster.local.
	ClusterDomain string
	// Metrics count the bindings by what became of them; nil counts none.
	Metrics *metrics.Metrics
}

// Setup adds the GatewayBinding controller.
func Setup(mgr ctrl.Manager, o controller.Options, opts Options) error {
	r := &Reconciler{kube: mgr.GetClient(), log: o.Logger.WithValues("controller", name), record: event.NewAPIRecorder(mgr.GetEventRecorderFor(name)), clusterDomain: opts.ClusterDomain, metrics: opts.Metrics}
	b := ctrl.NewControllerManagedBy(mgr)
	if _, err := mgr.GetRESTMapper().RESTMapping(schema.GroupKind{Group: gwv1.GroupName, Kind: "GRPCRoute"}, gwv1.GroupVersion.Version); err == nil {
		// Reported as not supported; an optional kind, watched when
		// installed with the others.
		b = b.Watches(&gwv1.GRPCRoute{}, handler.EnqueueRequestsFromMapFunc(r.inNamespace))
	}
	return b.
		Named(name).
		WithOptions(o.ForControllerRuntime()).
		For(&v1alpha1.GatewayBinding{}).
		Owns(&v1alpha1.PublicHostname{}).
		Watches(&gwv1.Gateway{}, handler.EnqueueRequestsFromMapFunc(r.inNamespace)).
		Watches(&gwv1.HTTPRoute{}, handler.EnqueueRequestsFromMapFunc(r.inNamespace)).
		Watches(&gwv1.GatewayClass{}, handler.EnqueueRequestsFromMapFunc(r.all)).
		// A grant or an origin Service of another namespace moves the
		// bindings that use that namespace.
		Watches(&gwv1beta1.ReferenceGrant{}, handler.EnqueueRequestsFromMapFunc(r.usingNamespace)).
		Watches(&corev1.Service{}, handler.EnqueueRequestsFromMapFunc(r.usingNamespace)).
		Watches(&v1alpha1.CloudflareTunnel{}, handler.EnqueueRequestsFromMapFunc(r.ofTunnel), builder.WithPredicates(target.Changed())).
		// A namespace's labels decide which shared tunnels it may use.
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(r.sharedIn), builder.WithPredicates(predicate.LabelChangedPredicate{})).
		Complete(ratelimiter.NewReconciler(name, errors.WithSilentRequeueOnConflict(r), o.GlobalRateLimiter))
}

// SetupGated adds the controller once its own kinds and the Gateway API
// kinds it reads are installed: a cluster without Gateway API runs every
// other controller as before.
func SetupGated(mgr ctrl.Manager, o controller.Options, opts Options) error {
	o.Gate.Register(func() {
		if err := Setup(mgr, o, opts); err != nil {
			o.Logger.Info("Cannot set up GatewayBinding controller", "error", err)
		}
	}, v1alpha1.GatewayBindingGroupVersionKind, v1alpha1.PublicHostnameGroupVersionKind, v1alpha1.CloudflareTunnelGroupVersionKind,
		GatewayGroupVersionKind, GatewayClassGroupVersionKind, HTTPRouteGroupVersionKind, ReferenceGrantGroupVersionKind)
	return nil
}

// Reconciler reconciles GatewayBindings.
type Reconciler struct {
	// kube reads through the manager's cache. GRPCRoutes are read through
	// it too, but not watched: the kind may not be installed (the list
	// then fails at once with no match, and the cache starts an informer
	// once it is).
	kube          client.Client
	log           logging.Logger
	record        event.Recorder
	clusterDomain string
	metrics       *metrics.Metrics
}

func (r *Reconciler) bindings(ctx context.Context, opts ...client.ListOption) []v1alpha1.GatewayBinding {
	l := &v1alpha1.GatewayBindingList{}
	if err := r.kube.List(ctx, l, opts...); err != nil {
		r.log.Debug("cannot list GatewayBindings", "error", err)
		return nil
	}
	return l.Items
}

func requests(bs []v1alpha1.GatewayBinding, keep func(*v1alpha1.GatewayBinding) bool) []reconcile.Request {
	var reqs []reconcile.Request
	for i := range bs {
		if keep(&bs[i]) {
			reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: bs[i].Namespace, Name: bs[i].Name}})
		}
	}
	return reqs
}

func (r *Reconciler) inNamespace(ctx context.Context, o client.Object) []reconcile.Request {
	return requests(r.bindings(ctx, client.InNamespace(o.GetNamespace())), func(*v1alpha1.GatewayBinding) bool { return true })
}

// ofTunnel are the bindings naming a tunnel, of any namespace it may be
// shared with.
func (r *Reconciler) ofTunnel(ctx context.Context, o client.Object) []reconcile.Request {
	return requests(r.bindings(ctx), func(b *v1alpha1.GatewayBinding) bool {
		return bindingTunnel(b) == sharing.Ref{Namespace: o.GetNamespace(), Name: o.GetName()}
	})
}

// sharedIn are the bindings of a namespace naming another's tunnel.
func (r *Reconciler) sharedIn(ctx context.Context, o client.Object) []reconcile.Request {
	return requests(r.bindings(ctx, client.InNamespace(o.GetName())), func(b *v1alpha1.GatewayBinding) bool {
		return bindingTunnel(b).Namespace != b.Namespace
	})
}

func (r *Reconciler) all(ctx context.Context, _ client.Object) []reconcile.Request {
	return requests(r.bindings(ctx), func(*v1alpha1.GatewayBinding) bool { return true })
}

func (r *Reconciler) usingNamespace(ctx context.Context, o client.Object) []reconcile.Request {
	return requests(r.bindings(ctx), func(b *v1alpha1.GatewayBinding) bool {
		return b.Namespace == o.GetNamespace() || b.Spec.Origin.Service.Namespace == o.GetNamespace()
	})
}

// Reconcile converges one binding's PublicHostnames and DNS.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	res, err := r.reconcile(ctx, req)
	if err != nil {
		// controller-runtime's own log of it is not the provider's.
		r.log.Debug("Cannot reconcile", "request", req, "error", err)
	}
	return res, err
}

func (r *Reconciler) reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	b := &v1alpha1.GatewayBinding{}
	if err := r.kube.Get(ctx, req.NamespacedName, b); err != nil {
		if kerrors.IsNotFound(err) {
			r.metrics.ForgetSource(sourceKind, req.NamespacedName)
		}
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if meta.WasDeleted(b) {
		r.metrics.ForgetSource(sourceKind, req.NamespacedName)
		return r.release(ctx, b)
	}
	if err := r.addFinalizer(ctx, b); err != nil {
		return reconcile.Result{}, err
	}
	in, err := r.read(ctx, b)
	if err != nil {
		return reconcile.Result{}, err
	}
	res := translate.Translate(in)
	tunnelID, tunnelCond, err := r.tunnel(ctx, b)
	if err != nil {
		return reconcile.Result{}, err
	}
	switch {
	case tunnelCond.Reason == target.ReasonNotShared:
		// Policy: nothing of this namespace goes through that tunnel.
		res.Accepted, res.KeepExisting, res.Published, res.Hostnames = tunnelCond, false, nil, nil
		res.KeepRoutes, res.Held, res.Kept = nil, translate.Held{}, nil
	case !tunnelCond.OK:
		// A typo must not take a working site down: nothing is created,
		// and what the binding publishes stays.
		res.Accepted, res.KeepExisting, res.Published = tunnelCond, true, nil
	}
	if res.KeepExisting {
		res.Published = nil
	}
	phs, nameTaken, err := r.converge(ctx, b, res)
	if err != nil {
		return reconcile.Result{}, err
	}
	obs := Observe(append(res.Hostnames, keptHostnames(phs, res)...), phs, b.Spec.DNS.Mode, tunnelID)
	obs.Programmed = withRefused(obs.Programmed, res.Refused)
	dns, err := r.applyDNS(ctx, b, obs, tunnelID, res.KeepExisting)
	if err != nil {
		return reconcile.Result{}, err
	}
	r.report(b, res, obs)
	r.metrics.SetSource(sourceKind, req.NamespacedName, sourceState(res, obs, nameTaken))
	return r.writeStatus(ctx, b, res, obs, dns)
}

func (r *Reconciler) addFinalizer(ctx context.Context, b *v1alpha1.GatewayBinding) error {
	if controllerutil.ContainsFinalizer(b, finalizer) {
		return nil
	}
	controllerutil.AddFinalizer(b, finalizer)
	return errors.Wrap(r.kube.Update(ctx, b), "cannot add finalizer")
}

// writeStatus writes the binding's status, and looks again soon while
// anything is not ready.
func (r *Reconciler) writeStatus(ctx context.Context, b *v1alpha1.GatewayBinding, res translate.Result, obs Observation, dns translate.Condition) (reconcile.Result, error) {
	setStatus(b, res, obs, dns)
	if err := r.kube.Status().Update(ctx, b); err != nil {
		return reconcile.Result{}, errors.Wrap(err, "cannot update GatewayBinding status")
	}
	if !dns.OK || !obs.Programmed.OK || !res.ResolvedRefs.OK || !res.Accepted.OK {
		// The PublicHostnames' changes requeue the binding; a missing CRD
		// installed later does not.
		return reconcile.Result{RequeueAfter: 10 * time.Second}, nil
	}
	return reconcile.Result{}, nil
}

// read gathers what the translation needs.
func (r *Reconciler) read(ctx context.Context, b *v1alpha1.GatewayBinding) (translate.Input, error) {
	in := translate.Input{Binding: b, ClusterDomain: r.clusterDomain}
	gw := &gwv1.Gateway{}
	if err := r.kube.Get(ctx, types.NamespacedName{Namespace: b.Namespace, Name: b.Spec.GatewayRef.Name}, gw); err == nil {
		in.Gateway = gw
	} else if !kerrors.IsNotFound(err) {
		return in, errors.Wrap(err, "cannot get Gateway")
	}
	if in.Gateway != nil {
		gc := &gwv1.GatewayClass{}
		if err := r.kube.Get(ctx, types.NamespacedName{Name: string(in.Gateway.Spec.GatewayClassName)}, gc); err == nil {
			in.Class = gc
		} else if !kerrors.IsNotFound(err) {
			return in, errors.Wrap(err, "cannot get GatewayClass")
		}
	}
	routes := &gwv1.HTTPRouteList{}
	if err := r.kube.List(ctx, routes, client.InNamespace(b.Namespace)); err != nil {
		return in, errors.Wrap(err, "cannot list HTTPRoutes")
	}
	in.HTTPRoutes = routes.Items
	grpc := &gwv1.GRPCRouteList{}
	if err := r.kube.List(ctx, grpc, client.InNamespace(b.Namespace)); err == nil {
		in.GRPCRoutes = grpc.Items
	} else if !kmeta.IsNoMatchError(err) && !kerrors.IsNotFound(err) {
		return in, errors.Wrap(err, "cannot list GRPCRoutes")
	}
	ns := b.Spec.Origin.Service.Namespace
	if ns == "" {
		ns = b.Namespace
	}
	svc := &corev1.Service{}
	if err := r.kube.Get(ctx, types.NamespacedName{Namespace: ns, Name: b.Spec.Origin.Service.Name}, svc); err == nil {
		in.OriginService = svc
	} else if !kerrors.IsNotFound(err) {
		return in, errors.Wrap(err, "cannot get the origin Service")
	}
	if ns != b.Namespace {
		grants := &gwv1beta1.ReferenceGrantList{}
		if err := r.kube.List(ctx, grants, client.InNamespace(ns)); err != nil {
			return in, errors.Wrap(err, "cannot list ReferenceGrants")
		}
		in.Grants = grants.Items
	}
	return in, nil
}

// tunnel is the binding's tunnel's ID ("" until Cloudflare has made it)
// and whether the binding may publish through it: a tunnel that does not
// exist or is being deleted takes nothing new, and one of another namespace
// that does not allow the binding's (target.ReasonNotShared) takes away
// what the binding published through it.
func (r *Reconciler) tunnel(ctx context.Context, b *v1alpha1.GatewayBinding) (string, translate.Condition, error) {
	tgt, err := target.Resolve(ctx, r.kube, b.Namespace, bindingTunnel(b))
	refusal, refused := target.Refused(err)
	if !refused {
		return tgt.ID, translate.Condition{OK: err == nil}, err
	}
	msg := refusal.Message
	switch refusal.Reason {
	case target.ReasonNotFound:
		msg += " (name another namespace's tunnel with spec.tunnelRef.namespace); nothing is created, and whatever the binding already publishes stays as it is"
	case target.ReasonNotShared:
		msg += "; nothing is published through it, and what this binding published there is removed"
	}
	return "", translate.Condition{Reason: refusal.Reason, Message: msg}, nil
}

// bindingTunnel is the tunnel a binding names.
func bindingTunnel(b *v1alpha1.GatewayBinding) sharing.Ref {
	ns := b.Spec.TunnelRef.Namespace
	if ns == "" {
		ns = b.Namespace
	}
	return sharing.Ref{Namespace: ns, Name: b.Spec.TunnelRef.Name}
}

// children converges a binding's PublicHostnames.
func (r *Reconciler) children() *source.Converger {
	return &source.Converger{Kube: r.kube, Record: r.record, Kinds: func() []client.ObjectList {
		return []client.ObjectList{&v1alpha1.PublicHostnameList{}}
	}}
}

func ownerOf(b *v1alpha1.GatewayBinding) source.Owner {
	return source.OwnerOf(b, v1alpha1.SchemeGroupVersion.String(), v1alpha1.GatewayBindingKind,
		client.MatchingLabels{translate.LabelBinding: publish.LabelValue(b.Name)})
}

// converge writes the wanted PublicHostnames and deletes the binding's
// others, unless the translation keeps them. It returns the binding's
// PublicHostnames after, and whether a wanted one's name is taken by a
// PublicHostname the binding does not control.
func (r *Reconciler) converge(ctx context.Context, b *v1alpha1.GatewayBinding, res translate.Result) ([]v1alpha1.PublicHostname, bool, error) {
	d := source.Desired{Keep: func(m source.Owned) bool {
		ph := m.(*v1alpha1.PublicHostname)
		return res.KeepExisting || res.Keeps(ph)
	}}
	for _, ph := range res.Published {
		d.Objects = append(d.Objects, ph)
	}
	out, err := r.children().Converge(ctx, ownerOf(b), d)
	phs := make([]v1alpha1.PublicHostname, 0, len(out.Children))
	for _, m := range out.Children {
		phs = append(phs, *m.(*v1alpha1.PublicHostname))
	}
	return phs, len(out.Taken) > 0, err
}

// keptHostnames are the hostnames the binding still publishes though no
// route wants them as they are now (translate.Result.Keeps: a route whose
// latest generation the Gateway's controller has not answered, say): they
// stay in status, as on the tunnel.
func keptHostnames(phs []v1alpha1.PublicHostname, res translate.Result) []v1alpha1.BoundHostname {
	listed := map[string]bool{}
	for _, h := range res.Hostnames {
		if h.PublicHostname != "" {
			listed[h.PublicHostname] = true
		}
	}
	var out []v1alpha1.BoundHostname
	for i := range phs {
		ph := &phs[i]
		if listed[ph.Name] || meta.WasDeleted(ph) || !res.Keeps(ph) {
			continue
		}
		out = append(out, v1alpha1.BoundHostname{Hostname: ph.Spec.Hostname, Route: "HTTPRoute/" + ph.Labels[translate.LabelRoute], State: v1alpha1.HostnamePending, PublicHostname: ph.Name})
	}
	return out
}

// applyDNS writes the binding's DNSEndpoint in ExternalDNS mode (and
// removes it in the others) and says whether the hostnames' DNS is ready.
func (r *Reconciler) applyDNS(ctx context.Context, b *v1alpha1.GatewayBinding, obs Observation, tunnelID string, keep bool) (translate.Condition, error) {
	if b.Spec.DNS.Mode != v1alpha1.DNSModeExternalDNS {
		if err := externaldns.Delete(ctx, r.kube, b.Namespace, b.Name, b.UID); err != nil {
			return translate.Condition{}, err
		}
		b.Status.DNSEndpoint = ""
		return obs.DNSReady, nil
	}
	if tunnelID == "" {
		return translate.Condition{Reason: "WaitingForTunnel", Message: "waiting for the tunnel's ID, the records' target"}, nil
	}
	if keep {
		return translate.Condition{OK: b.GetCondition(TypeDNSReady).Status == corev1.ConditionTrue, Reason: "Kept", Message: "the binding's references do not resolve: its DNSEndpoint stays as it is"}, nil
	}
	key := b.Spec.DNS.ExternalDNS.DeepCopy()
	proxied := v1alpha1.DefaultExternalDNSProxiedKey
	if key != nil && key.ProxiedKey != "" {
		proxied = key.ProxiedKey
	}
	owner := metav1.OwnerReference{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.GatewayBindingKind, Name: b.Name, UID: b.UID, Controller: ptrTo(true), BlockOwnerDeletion: ptrTo(true)}
	want := externaldns.Endpoint(b.Name, b.Namespace, map[string]string{translate.LabelBinding: publish.LabelValue(b.Name)}, owner, obs.Records, tunnelID+".cfargotunnel.com", proxied)
	out, err := externaldns.Apply(ctx, r.kube, want)
	if err != nil {
		return translate.Condition{}, err
	}
	b.Status.DNSEndpoint = ""
	if out == externaldns.Written && len(obs.Records) > 0 {
		b.Status.DNSEndpoint = b.Name
	}
	reason := map[externaldns.Outcome]string{externaldns.Written: "EndpointWritten", externaldns.CRDMissing: "DNSEndpointCRDMissing", externaldns.Conflict: "DNSEndpointConflict"}[out]
	return translate.Condition{OK: out == externaldns.Written, Reason: reason, Message: externaldns.Describe(out, b.Name, len(obs.Records))}, nil
}

func ptrTo[T any](v T) *T { return &v }

// report raises a Warning for what the user must act on, once per change
// of the condition (the status keeps saying it).
func (r *Reconciler) report(b *v1alpha1.GatewayBinding, res translate.Result, obs Observation) {
	for _, c := range []struct {
		t    xpv2.ConditionType
		cond translate.Condition
	}{{TypeAccepted, res.Accepted}, {TypeResolvedRefs, res.ResolvedRefs}} {
		cur := b.GetCondition(c.t)
		if !c.cond.OK && (string(cur.Reason) != c.cond.Reason || cur.Message != c.cond.Message) {
			r.warn(b, c.cond.Reason, c.cond.Message)
		}
	}
	if c, cur := obs.Programmed, b.GetCondition(TypeProgrammed); c.Reason == ReasonAccessWeakeningRefused && (string(cur.Reason) != c.Reason || cur.Message != c.Message) {
		r.warn(b, c.Reason, c.Message)
	}
	old := map[string]string{}
	for _, h := range b.Status.Hostnames {
		old[h.Route+" "+h.Hostname] = h.State + h.Message
	}
	for _, h := range obs.Hostnames {
		if old[h.Route+" "+h.Hostname] == h.State+h.Message {
			continue
		}
		switch h.State {
		case v1alpha1.HostnameConflict, v1alpha1.HostnameNotSupported:
			r.warn(b, "Hostname"+h.State, fmt.Sprintf("%s of %s: %s", h.Hostname, h.Route, h.Message))
		case v1alpha1.HostnameInvalid:
			r.warn(b, ReasonInvalidAnnotation, fmt.Sprintf("%s of %s: %s", h.Hostname, h.Route, h.Message))
		}
	}
}

func (r *Reconciler) warn(b *v1alpha1.GatewayBinding, reason, msg string) {
	r.record.Event(b, event.Warning(event.Reason(reason), errors.New(msg)))
}

// release deletes what the binding made and lets it go once its
// PublicHostnames are gone (each waits for Cloudflare to confirm).
func (r *Reconciler) release(ctx context.Context, b *v1alpha1.GatewayBinding) (reconcile.Result, error) {
	if !controllerutil.ContainsFinalizer(b, finalizer) {
		return reconcile.Result{}, nil
	}
	gone, err := r.children().Release(ctx, ownerOf(b))
	if err != nil {
		return reconcile.Result{}, err
	}
	if err := externaldns.Delete(ctx, r.kube, b.Namespace, b.Name, b.UID); err != nil {
		return reconcile.Result{}, err
	}
	if !gone {
		// Each one's deletion brings this back (the watch on what it
		// owns); this is only a safety net. Every 2 s, 1,000 sources
		// being deleted took most of the reconcile rate the managed
		// resources needed to delete.
		return reconcile.Result{RequeueAfter: handshake.ReleaseRecheck}, nil
	}
	controllerutil.RemoveFinalizer(b, finalizer)
	return reconcile.Result{}, errors.Wrap(client.IgnoreNotFound(r.kube.Update(ctx, b)), "cannot remove finalizer")
}
