// Package gateway is this provider's Gateway API controller: a Gateway of a
// GatewayClass whose controllerName is tunnels.cloudflare.com/gateway-controller
// is a CloudflareTunnel, and the HTTPRoutes attached to it publish their
// hostnames and paths straight to their backend Services, one
// PublicHostname per hostname (GRPCRoutes theirs, over HTTP/2). It writes the GatewayClass's, the Gateway's
// and the routes' parent status for its own parents only. The translation
// is the pure internal/controller/source/gateway/translate; this package
// reads the world, converges and reports.
package gateway

import (
	"context"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	kmeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
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
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/gateway/translate"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/gatewayapi"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/metrics"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sharing"
)

const (
	name      = "gateway"
	finalizer = "tunnels.cloudflare.com/gateway"
)

// Gateway API kinds the controllers read; they start once installed.
var (
	GatewayGroupVersionKind        = gwv1.SchemeGroupVersion.WithKind("Gateway")
	GatewayClassGroupVersionKind   = gwv1.SchemeGroupVersion.WithKind("GatewayClass")
	HTTPRouteGroupVersionKind      = gwv1.SchemeGroupVersion.WithKind("HTTPRoute")
	ReferenceGrantGroupVersionKind = gwv1beta1.SchemeGroupVersion.WithKind("ReferenceGrant")
)

// Options of the controllers, set at setup.
type Options struct {
	// ClusterDomain of Service DNS names; "" is cluster.local.
	ClusterDomain string
	// Metrics count the routes by kind and state (docs/metrics.md); nil
	// counts nothing.
	Metrics *metrics.Metrics
}

// SetupGated adds the GatewayClass and Gateway controllers once the kinds
// they read and write are installed: a cluster without Gateway API runs
// every other controller as before.
func SetupGated(mgr ctrl.Manager, o controller.Options, opts Options) error {
	o.Gate.Register(func() {
		if err := Setup(mgr, o, opts); err != nil {
			o.Logger.Info("Cannot set up Gateway API controllers", "error", err)
		}
	}, v1alpha1.PublicHostnameGroupVersionKind, v1alpha1.CloudflareTunnelGroupVersionKind, v1alpha1.GatewayParametersGroupVersionKind,
		GatewayGroupVersionKind, GatewayClassGroupVersionKind, HTTPRouteGroupVersionKind, ReferenceGrantGroupVersionKind)
	return nil
}

// Setup adds the GatewayClass and Gateway controllers.
func Setup(mgr ctrl.Manager, o controller.Options, opts Options) error {
	if err := setupClass(mgr, o); err != nil {
		return err
	}
	r := &Reconciler{kube: mgr.GetClient(), log: o.Logger.WithValues("controller", name), record: event.NewAPIRecorder(mgr.GetEventRecorderFor(name)), clusterDomain: opts.ClusterDomain, metrics: opts.Metrics}
	b := ctrl.NewControllerManagedBy(mgr)
	if _, err := mgr.GetRESTMapper().RESTMapping(schema.GroupKind{Group: gwv1.GroupName, Kind: "GRPCRoute"}, gwv1.GroupVersion.Version); err == nil {
		// An optional kind (Gateway API's standard channel has it since
		// v1.1), watched when installed with the others.
		b = b.Watches(&gwv1.GRPCRoute{}, handler.EnqueueRequestsFromMapFunc(r.grpcParents))
	}
	return b.
		Named(name).
		WithOptions(o.ForControllerRuntime()).
		For(&gwv1.Gateway{}).
		Owns(&v1alpha1.PublicHostname{}).
		Owns(&v1alpha1.CloudflareTunnel{}).
		Watches(&gwv1.GatewayClass{}, handler.EnqueueRequestsFromMapFunc(r.ofClass)).
		Watches(&gwv1.HTTPRoute{}, handler.EnqueueRequestsFromMapFunc(r.parents)).
		Watches(&v1alpha1.GatewayParameters{}, handler.EnqueueRequestsFromMapFunc(r.ofParameters)).
		Watches(&v1alpha1.CloudflareTunnel{}, handler.EnqueueRequestsFromMapFunc(r.inNamespace), builder.WithPredicates(target.Changed())).
		// Backends, grants and namespace labels move the routes of any
		// Gateway: there are few Gateways.
		Watches(&gwv1beta1.ReferenceGrant{}, handler.EnqueueRequestsFromMapFunc(r.all)).
		Watches(&corev1.Service{}, handler.EnqueueRequestsFromMapFunc(r.all)).
		Watches(&discoveryv1.EndpointSlice{}, handler.EnqueueRequestsFromMapFunc(r.ofHeadless)).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.namingCertificate)).
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(r.all), builder.WithPredicates(predicate.LabelChangedPredicate{})).
		Complete(ratelimiter.NewReconciler(name, errors.WithSilentRequeueOnConflict(r), o.GlobalRateLimiter))
}

// Reconciler reconciles the Gateways of this provider's classes.
type Reconciler struct {
	kube          client.Client
	log           logging.Logger
	record        event.Recorder
	clusterDomain string
	metrics       *metrics.Metrics
	counted       counted
}

func (r *Reconciler) gateways(ctx context.Context, opts ...client.ListOption) []gwv1.Gateway {
	l := &gwv1.GatewayList{}
	if err := r.kube.List(ctx, l, opts...); err != nil {
		r.log.Debug("cannot list Gateways", "error", err)
		return nil
	}
	return l.Items
}

func requests(gws []gwv1.Gateway, keep func(*gwv1.Gateway) bool) []reconcile.Request {
	var reqs []reconcile.Request
	for i := range gws {
		if keep(&gws[i]) {
			reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: gws[i].Namespace, Name: gws[i].Name}})
		}
	}
	return reqs
}

func (r *Reconciler) all(ctx context.Context, _ client.Object) []reconcile.Request {
	return requests(r.gateways(ctx), func(*gwv1.Gateway) bool { return true })
}

func (r *Reconciler) inNamespace(ctx context.Context, o client.Object) []reconcile.Request {
	return requests(r.gateways(ctx, client.InNamespace(o.GetNamespace())), func(*gwv1.Gateway) bool { return true })
}

func (r *Reconciler) ofClass(ctx context.Context, o client.Object) []reconcile.Request {
	return requests(r.gateways(ctx), func(gw *gwv1.Gateway) bool { return string(gw.Spec.GatewayClassName) == o.GetName() })
}

// parents are the Gateways a route names, and those its status says this
// controller answered for (a parent reference removed since).
// namingCertificate are the Gateways whose listeners name the Secret.
func (r *Reconciler) namingCertificate(ctx context.Context, o client.Object) []reconcile.Request {
	key := types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}
	return requests(r.gateways(ctx), func(gw *gwv1.Gateway) bool { return slices.Contains(translate.CertificateRefs(gw), key) })
}

func (r *Reconciler) parents(_ context.Context, o client.Object) []reconcile.Request {
	route, ok := o.(*gwv1.HTTPRoute)
	if !ok {
		return nil
	}
	var reqs []reconcile.Request
	add := func(ref gwv1.ParentReference) {
		if string(ptr.Deref(ref.Group, gatewayapi.Group)) != gatewayapi.Group || string(ptr.Deref(ref.Kind, "Gateway")) != "Gateway" {
			return
		}
		req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: string(ptr.Deref(ref.Namespace, gwv1.Namespace(route.Namespace))), Name: string(ref.Name)}}
		if !slices.Contains(reqs, req) {
			reqs = append(reqs, req)
		}
	}
	for _, ref := range route.Spec.ParentRefs {
		add(ref)
	}
	for _, p := range route.Status.Parents {
		if p.ControllerName == translate.ControllerName {
			add(p.ParentRef)
		}
	}
	return reqs
}

func (r *Reconciler) grpcParents(ctx context.Context, o client.Object) []reconcile.Request {
	g, ok := o.(*gwv1.GRPCRoute)
	if !ok {
		return nil
	}
	return r.parents(ctx, &gwv1.HTTPRoute{ObjectMeta: g.ObjectMeta, Spec: gwv1.HTTPRouteSpec{CommonRouteSpec: g.Spec.CommonRouteSpec}, Status: gwv1.HTTPRouteStatus{RouteStatus: g.Status.RouteStatus}})
}

// Reconcile converges one Gateway.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	res, err := r.reconcile(ctx, req)
	if err != nil {
		r.log.Debug("Cannot reconcile", "request", req, "error", err)
	}
	return res, err
}

func (r *Reconciler) reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	gw := &gwv1.Gateway{}
	if err := r.kube.Get(ctx, req.NamespacedName, gw); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	class, err := r.class(ctx, gw)
	if err != nil {
		return reconcile.Result{}, err
	}
	if meta.WasDeleted(gw) || !translate.Ours(class) {
		// A Gateway deleted, or no longer of a class of ours (its class
		// deleted or changed): what it published goes.
		return r.release(ctx, gw, class)
	}
	if !controllerutil.ContainsFinalizer(gw, finalizer) {
		controllerutil.AddFinalizer(gw, finalizer)
		if err := r.kube.Update(ctx, gw); err != nil {
			return reconcile.Result{}, errors.Wrap(err, "cannot add finalizer")
		}
	}
	in, err := r.read(ctx, gw)
	if err != nil {
		return reconcile.Result{}, err
	}
	if err := r.settings(ctx, gw, &in); err != nil {
		return reconcile.Result{}, err
	}
	res := translate.Translate(in)
	tunnel, err := r.tunnel(ctx, gw, res)
	if err != nil {
		return reconcile.Result{}, err
	}
	children, recheck, err := r.publish(ctx, gw, res, tunnel)
	if err != nil {
		return reconcile.Result{}, err
	}
	dns, err := r.applyDNS(ctx, gw, res, tunnel, publishedHosts(children))
	if err != nil {
		return reconcile.Result{}, err
	}
	showLost(&res, children)
	if err := r.writeRoutes(ctx, gw, res.Routes, res.GRPCRoutes); err != nil {
		return reconcile.Result{}, err
	}
	r.count(req.NamespacedName, res.Routes, res.GRPCRoutes)
	st := translate.Status(gw, res, tunnel)
	if dns != nil {
		st.Conditions = append(st.Conditions, *dns)
	}
	result, err := r.writeStatus(ctx, gw, st)
	if recheck > 0 && (result.RequeueAfter == 0 || recheck < result.RequeueAfter) {
		result.RequeueAfter = recheck // a parked hostname's grace ends
	}
	return result, err
}

// class is the Gateway's GatewayClass; nil when it does not exist.
func (r *Reconciler) class(ctx context.Context, gw *gwv1.Gateway) (*gwv1.GatewayClass, error) {
	gc := &gwv1.GatewayClass{}
	if err := r.kube.Get(ctx, types.NamespacedName{Name: string(gw.Spec.GatewayClassName)}, gc); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	return gc, nil
}

// read gathers what the translation needs: the routes naming the Gateway,
// their namespaces' labels, their backends and the grants for them.
func (r *Reconciler) read(ctx context.Context, gw *gwv1.Gateway) (translate.Input, error) {
	in := translate.Input{Gateway: gw, ClusterDomain: r.clusterDomain, Namespaces: map[string]map[string]string{},
		Services: map[types.NamespacedName]*corev1.Service{}, EndpointSlices: map[types.NamespacedName][]discoveryv1.EndpointSlice{}, Grants: map[string][]gwv1beta1.ReferenceGrant{}}
	routes, err := r.routes(ctx)
	if err != nil {
		return in, err
	}
	for _, rt := range routes {
		if !slices.ContainsFunc(rt.Spec.ParentRefs, func(ref gwv1.ParentReference) bool { return gatewayapi.RefersTo(ref, rt.Namespace, gw) }) {
			continue
		}
		in.HTTPRoutes = append(in.HTTPRoutes, rt)
		if err := r.readRoute(ctx, rt.Namespace, gatewayapi.ServiceBackends(&rt), &in); err != nil {
			return in, err
		}
	}
	if err := r.readCertificates(ctx, gw, &in); err != nil {
		return in, err
	}
	grpcs, err := r.grpcRoutes(ctx)
	if err != nil {
		return in, err
	}
	for _, rt := range grpcs {
		if !slices.ContainsFunc(rt.Spec.ParentRefs, func(ref gwv1.ParentReference) bool { return gatewayapi.RefersTo(ref, rt.Namespace, gw) }) {
			continue
		}
		in.GRPCRoutes = append(in.GRPCRoutes, rt)
		if err := r.readRoute(ctx, rt.Namespace, gatewayapi.GRPCServiceBackends(&rt), &in); err != nil {
			return in, err
		}
	}
	return in, nil
}

func (r *Reconciler) routes(ctx context.Context) ([]gwv1.HTTPRoute, error) {
	l := &gwv1.HTTPRouteList{}
	return l.Items, errors.Wrap(r.kube.List(ctx, l), "cannot list HTTPRoutes")
}

// grpcRoutes are every GRPCRoute, none when the kind is not installed (it
// is optional; the cache starts its informer once it is).
func (r *Reconciler) grpcRoutes(ctx context.Context) ([]gwv1.GRPCRoute, error) {
	l := &gwv1.GRPCRouteList{}
	err := r.kube.List(ctx, l)
	if kmeta.IsNoMatchError(err) || kerrors.IsNotFound(err) {
		return nil, nil
	}
	return l.Items, errors.Wrap(err, "cannot list GRPCRoutes")
}

// readRoute reads what a route of namespace routeNS needs: its
// namespace's labels, its backends and the grants for them.
func (r *Reconciler) readRoute(ctx context.Context, routeNS string, backends []gatewayapi.ServiceBackend, in *translate.Input) error {
	if _, ok := in.Namespaces[routeNS]; !ok {
		ns := &corev1.Namespace{}
		if err := r.kube.Get(ctx, types.NamespacedName{Name: routeNS}, ns); client.IgnoreNotFound(err) != nil {
			return errors.Wrap(err, "cannot get the route's namespace")
		}
		in.Namespaces[routeNS] = ns.Labels
	}
	for _, b := range backends {
		if err := r.readBackend(ctx, types.NamespacedName{Namespace: b.Namespace, Name: b.Name}, routeNS, in); err != nil {
			return err
		}
	}
	return nil
}

// readCertificates reads the Secrets the listeners name, and the
// ReferenceGrants of their namespaces.
func (r *Reconciler) readCertificates(ctx context.Context, gw *gwv1.Gateway, in *translate.Input) error {
	in.Certificates = map[types.NamespacedName]*corev1.Secret{}
	for _, key := range translate.CertificateRefs(gw) {
		s := &corev1.Secret{}
		err := r.kube.Get(ctx, key, s)
		switch {
		case err == nil:
			in.Certificates[key] = s
		case !kerrors.IsNotFound(err):
			return errors.Wrap(err, "cannot get a listener's certificate Secret")
		}
		if err := r.readGrants(ctx, key.Namespace, gw.Namespace, in); err != nil {
			return err
		}
	}
	return nil
}

func (r *Reconciler) readBackend(ctx context.Context, key types.NamespacedName, routeNS string, in *translate.Input) error {
	if _, seen := in.Services[key]; !seen {
		svc := &corev1.Service{}
		err := r.kube.Get(ctx, key, svc)
		switch {
		case err == nil:
			in.Services[key] = svc
		case !kerrors.IsNotFound(err):
			return errors.Wrap(err, "cannot get a backend Service")
		}
		if err == nil && svc.Spec.ClusterIP == corev1.ClusterIPNone {
			l := &discoveryv1.EndpointSliceList{}
			if err := r.kube.List(ctx, l, client.InNamespace(key.Namespace), client.MatchingLabels{discoveryv1.LabelServiceName: key.Name}); err != nil {
				return errors.Wrap(err, "cannot list a headless backend's EndpointSlices")
			}
			in.EndpointSlices[key] = l.Items
		}
	}
	return r.readGrants(ctx, key.Namespace, routeNS, in)
}

// ofHeadless: a headless Service's endpoints say which port its Pods listen
// on (publish.DialPort); other Services' endpoints change nothing here.
func (r *Reconciler) ofHeadless(ctx context.Context, o client.Object) []reconcile.Request {
	svc := &corev1.Service{}
	name := o.GetLabels()[discoveryv1.LabelServiceName]
	if name == "" || r.kube.Get(ctx, types.NamespacedName{Namespace: o.GetNamespace(), Name: name}, svc) != nil || svc.Spec.ClusterIP != corev1.ClusterIPNone {
		return nil
	}
	return r.all(ctx, o)
}

// readGrants reads the ReferenceGrants of namespace ns, which objects of
// namespace from refer into.
func (r *Reconciler) readGrants(ctx context.Context, ns, from string, in *translate.Input) error {
	if _, listed := in.Grants[ns]; ns == from || listed {
		return nil
	}
	grants := &gwv1beta1.ReferenceGrantList{}
	if err := r.kube.List(ctx, grants, client.InNamespace(ns)); err != nil {
		return errors.Wrap(err, "cannot list ReferenceGrants")
	}
	in.Grants[ns] = grants.Items
	return nil
}

// tunnels converges the CloudflareTunnel made for a Gateway, its settings
// following the Gateway's parameters and listeners.
func (r *Reconciler) tunnels() *source.Converger {
	return &source.Converger{Kube: r.kube, Record: r.record, Copy: tunnelCopy, Kinds: func() []client.ObjectList {
		return []client.ObjectList{&v1alpha1.CloudflareTunnelList{}}
	}}
}

// hostnames converges a Gateway's PublicHostnames.
func (r *Reconciler) hostnames() *source.Converger {
	return &source.Converger{Kube: r.kube, Record: r.record, Grace: source.ReleaseGrace, Kinds: func() []client.ObjectList {
		return []client.ObjectList{&v1alpha1.PublicHostnameList{}}
	}}
}

func ownerOf(gw *gwv1.Gateway) source.Owner {
	return source.OwnerOf(gw, gwv1.SchemeGroupVersion.String(), "Gateway", client.MatchingLabels{translate.LabelGateway: publish.LabelValue(gw.Name)})
}

// tunnel makes the Gateway's CloudflareTunnel when the Gateway names none,
// and says what the Gateway's status needs of it. While the Gateway is not
// accepted its tunnel stays as it is: settings that cannot be read do not
// reset a working tunnel to the defaults.
func (r *Reconciler) tunnel(ctx context.Context, gw *gwv1.Gateway, res translate.Result) (translate.TunnelState, error) {
	d := source.Desired{}
	switch {
	case res.KeepAll:
		d.Keep = func(source.Owned) bool { return true }
	case res.MakeTunnel != nil:
		d.Objects = []source.Owned{res.MakeTunnel}
	}
	out, err := r.tunnels().Converge(ctx, ownerOf(gw), d)
	if err != nil {
		return translate.TunnelState{}, err
	}
	if len(out.Taken) > 0 {
		return translate.TunnelState{Problem: "a CloudflareTunnel named " + res.Tunnel + " exists that was not made for this Gateway; to use it, name it in the annotation " + v1alpha1.AnnotationTunnel}, nil
	}
	tgt, err := target.Resolve(ctx, r.kube, gw.Namespace, sharing.Ref{Namespace: gw.Namespace, Name: res.Tunnel})
	if refusal, refused := target.Refused(err); refused {
		return translate.TunnelState{Problem: refusal.Message}, nil
	}
	if err != nil {
		return translate.TunnelState{}, err
	}
	ready := tgt.Tunnel.GetCondition(xpv2.TypeReady)
	return translate.TunnelState{Found: true, ID: tgt.ID, Ready: ready.Status == corev1.ConditionTrue, Message: ready.Message}, nil
}

// publish converges the Gateway's PublicHostnames. While its tunnel
// cannot be used, nothing new is made and nothing published goes (bad
// input never takes a working site down); a hostname held for its Access
// check stays only if protected.
// It returns the Gateway's PublicHostnames after, and when to look again
// for a parked one's grace to end.
func (r *Reconciler) publish(ctx context.Context, gw *gwv1.Gateway, res translate.Result, tunnel translate.TunnelState) ([]source.Owned, time.Duration, error) {
	hold := !tunnel.Found || res.KeepAll
	keep := func(m source.Owned) bool {
		ph := m.(*v1alpha1.PublicHostname)
		if slices.Contains(res.Held, ph.Spec.Hostname) {
			return translate.Protected(ph)
		}
		return hold || slices.Contains(res.Keep, ph.Spec.Hostname)
	}
	d := source.Desired{Keep: keep}
	if !hold {
		for _, ph := range res.Published {
			kept, err := r.exists(ctx, ph, res.Keep)
			if err != nil {
				return nil, 0, err
			}
			if !kept {
				d.Objects = append(d.Objects, ph)
			}
		}
	}
	out, err := r.hostnames().Converge(ctx, ownerOf(gw), d)
	return out.Children, out.RecheckAfter, err
}

// exists says whether ph's hostname is one to keep as it is (Result.Keep)
// and its PublicHostname exists: then it is not rewritten.
func (r *Reconciler) exists(ctx context.Context, ph *v1alpha1.PublicHostname, keep []string) (bool, error) {
	if !slices.Contains(keep, ph.Spec.Hostname) {
		return false, nil
	}
	err := r.kube.Get(ctx, client.ObjectKeyFromObject(ph), &v1alpha1.PublicHostname{})
	if kerrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil, errors.Wrap(err, "cannot get a PublicHostname")
}

// publishedHosts are the hostnames the Gateway's DNSEndpoint points at the
// tunnel: those of its PublicHostnames not being deleted nor load-balanced.
func publishedHosts(children []source.Owned) []string {
	var hosts []string
	for _, m := range children {
		// A load-balanced hostname has no record: the load balancer
		// holds the name.
		if ph := m.(*v1alpha1.PublicHostname); !meta.WasDeleted(m) && ph.Spec.LoadBalancing == nil {
			hosts = append(hosts, ph.Spec.Hostname)
		}
	}
	return hosts
}

// writeStatus writes the Gateway's status when it changed, and looks again
// soon while it is not Programmed.
func (r *Reconciler) writeStatus(ctx context.Context, gw *gwv1.Gateway, want gwv1.GatewayStatus) (reconcile.Result, error) {
	want.Conditions = translate.MergeConditions(gw.Status.Conditions, want.Conditions, metav1.Now())
	for i := range want.Listeners {
		var prev []metav1.Condition
		for _, old := range gw.Status.Listeners {
			if old.Name == want.Listeners[i].Name {
				prev = old.Conditions
			}
		}
		want.Listeners[i].Conditions = translate.MergeConditions(prev, want.Listeners[i].Conditions, metav1.Now())
	}
	programmed := slices.ContainsFunc(want.Conditions, func(c metav1.Condition) bool {
		return c.Type == string(gwv1.GatewayConditionProgrammed) && c.Status == metav1.ConditionTrue
	})
	if !equalStatus(gw.Status, want) {
		r.warn(gw, translate.GatewayWarnings(gw.Status, want))
		gw.Status = want
		if err := r.kube.Status().Update(ctx, gw); err != nil {
			return reconcile.Result{}, errors.Wrap(err, "cannot update Gateway status")
		}
	}
	if !programmed {
		return reconcile.Result{RequeueAfter: 10 * time.Second}, nil
	}
	return reconcile.Result{}, nil
}

// release deletes what the Gateway made, the PublicHostnames first (their
// rules leave the tunnel while it runs), then its tunnel, and lets it go.
// This provider's entries leave the routes' status at once, and the
// Gateway's status says at once that it no longer serves (see Abandoned):
// deleting what was made can take minutes, and nothing may claim to serve
// meanwhile. Once let go, the status is cleared for no controller, or left
// to the class's other controller.
func (r *Reconciler) release(ctx context.Context, gw *gwv1.Gateway, class *gwv1.GatewayClass) (reconcile.Result, error) {
	if !controllerutil.ContainsFinalizer(gw, finalizer) {
		return reconcile.Result{}, nil
	}
	if err := r.writeRoutes(ctx, gw, nil, nil); err != nil {
		return reconcile.Result{}, err
	}
	r.count(types.NamespacedName{Namespace: gw.Namespace, Name: gw.Name})
	if err := r.abandon(ctx, gw, class); err != nil {
		return reconcile.Result{}, err
	}
	gone, err := r.hostnames().Release(ctx, ownerOf(gw))
	if err != nil || !gone {
		return reconcile.Result{RequeueAfter: handshake.ReleaseRecheck}, err
	}
	gone, err = r.tunnels().Release(ctx, ownerOf(gw))
	if err != nil || !gone {
		return reconcile.Result{RequeueAfter: handshake.ReleaseRecheck}, err
	}
	if err := externaldns.Delete(ctx, r.kube, gw.Namespace, gw.Name, gw.UID); err != nil {
		return reconcile.Result{}, err
	}
	if !meta.WasDeleted(gw) && !translate.Another(class) {
		gw.Status = gwv1.GatewayStatus{}
		if err := r.kube.Status().Update(ctx, gw); err != nil {
			return reconcile.Result{}, errors.Wrap(err, "cannot clear Gateway status")
		}
	}
	controllerutil.RemoveFinalizer(gw, finalizer)
	return reconcile.Result{}, errors.Wrap(client.IgnoreNotFound(r.kube.Update(ctx, gw)), "cannot remove finalizer")
}

// abandon writes the status of a Gateway no longer of this provider's
// class, when it changed.
func (r *Reconciler) abandon(ctx context.Context, gw *gwv1.Gateway, class *gwv1.GatewayClass) error {
	if meta.WasDeleted(gw) {
		return nil
	}
	want, write := translate.Abandoned(gw, class)
	if !write {
		return nil
	}
	want.Conditions = translate.MergeConditions(gw.Status.Conditions, want.Conditions, metav1.Now())
	if equalStatus(gw.Status, want) {
		return nil
	}
	r.warn(gw, translate.GatewayWarnings(gw.Status, want))
	gw.Status = want
	return errors.Wrap(r.kube.Status().Update(ctx, gw), "cannot update Gateway status")
}
