package cloudflaretunnel

// Watches: what wakes a CloudflareTunnel, and which one.

import (
	"context"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"

	connv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/connectivity/v1alpha1"
	dnsv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/dns/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/handshake"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
)

// Setup adds the CloudflareTunnel controller.
func Setup(mgr ctrl.Manager, o controller.Options, opts Options) error {
	name := "cloudflaretunnel"
	window := opts.ConfigBatchWindow
	if window == 0 {
		window = DefaultConfigBatchWindow
	}
	fanIn := opts.FanInInterval
	if fanIn == 0 {
		fanIn = DefaultFanInInterval
	}
	r := &Reconciler{
		pace:    newPacer(fanIn),
		window:  window,
		metrics: opts.Metrics,
		kube:    mgr.GetClient(),
		log:     o.Logger.WithValues("controller", name),
		record:  event.NewAPIRecorder(mgr.GetEventRecorderFor(name)),
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(name).
		WithOptions(o.ForControllerRuntime()).
		For(&v1alpha1.CloudflareTunnel{}).
		Owns(&ztv1alpha1.Tunnel{}).
		Owns(&appsv1.Deployment{}).
		Owns(&policyv1.PodDisruptionBudget{}).
		Owns(&v1alpha1.ProviderConfig{}).
		// The token Secret is owned by the Tunnel MR, not by us.
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(tokenSecretOwner)).
		// A hostname's rules go to the tunnel it names; one that moves (or
		// goes) is looked at by the tunnel that published it too.
		// Each of these fan in (a tunnel has one per hostname): paced.
		Watches(&v1alpha1.PublicHostname{}, r.pace.paced(hostnameTunnels{})).
		// A deletion waiting on what was made for the tunnel resumes when
		// it goes.
		Watches(&ztv1alpha1.HostnameRoute{}, r.pace.paced(handler.EnqueueRequestsFromMapFunc(labelledTunnel))).
		Watches(&ztv1alpha1.NetworkRoute{}, r.pace.paced(handler.EnqueueRequestsFromMapFunc(labelledTunnel))).
		Watches(&connv1alpha1.VPCService{}, r.pace.paced(handler.EnqueueRequestsFromMapFunc(labelledTunnel))).
		// A DNS record of a previous version, taken over or deleted, ends
		// the carrying over of its hostname's rules.
		Watches(&dnsv1alpha1.DNSRecord{}, r.pace.paced(handler.EnqueueRequestsFromMapFunc(labelledTunnel))).
		// A namespace's labels decide whether a shared tunnel serves it.
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(r.sharedBySelector), builder.WithPredicates(predicate.LabelChangedPredicate{})).
		Complete(ratelimiter.NewReconciler(name, errors.WithSilentRequeueOnConflict(r), o.GlobalRateLimiter))
}

// SetupGated adds the controller once its CRD and the Tunnel CRD exist.
func SetupGated(mgr ctrl.Manager, o controller.Options, opts Options) error {
	o.Gate.Register(func() {
		if err := Setup(mgr, o, opts); err != nil {
			o.Logger.Info("Cannot set up CloudflareTunnel controller", "error", err)
		}
	}, v1alpha1.CloudflareTunnelGroupVersionKind, v1alpha1.PublicHostnameGroupVersionKind, ztv1alpha1.TunnelGroupVersionKind,
		ztv1alpha1.HostnameRouteGroupVersionKind, ztv1alpha1.NetworkRouteGroupVersionKind, connv1alpha1.VPCServiceGroupVersionKind, dnsv1alpha1.DNSRecordGroupVersionKind)
	return nil
}

func tokenSecretOwner(_ context.Context, o client.Object) []reconcile.Request {
	name, ok := strings.CutSuffix(o.GetName(), "-token")
	if !ok {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
}

func enqueueTunnelsOf(q workqueue.TypedRateLimitingInterface[reconcile.Request], o client.Object) {
	ph, ok := o.(*v1alpha1.PublicHostname)
	if !ok {
		return
	}
	add := func(t types.NamespacedName) {
		if t.Name != "" {
			q.Add(reconcile.Request{NamespacedName: t})
		}
	}
	add(handshake.Tunnel(ph))
	if t := ph.Status.Tunnel; t != nil && t.Tunnel != handshake.TunnelName(ph) {
		add(handshake.Answered(ph))
	}
}

// hostnameTunnels enqueues the tunnels a PublicHostname names or was
// published on, before and after an update.
type hostnameTunnels struct{}

func (hostnameTunnels) Create(_ context.Context, e ctrlevent.TypedCreateEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	enqueueTunnelsOf(q, e.Object)
}

func (hostnameTunnels) Update(_ context.Context, e ctrlevent.TypedUpdateEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	enqueueTunnelsOf(q, e.ObjectOld)
	enqueueTunnelsOf(q, e.ObjectNew)
}

func (hostnameTunnels) Delete(_ context.Context, e ctrlevent.TypedDeleteEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	enqueueTunnelsOf(q, e.Object)
}

func (hostnameTunnels) Generic(_ context.Context, e ctrlevent.TypedGenericEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	enqueueTunnelsOf(q, e.Object)
}

// labelledTunnel maps an object made for a tunnel to that tunnel: in the
// object's namespace, or the one its tunnel-namespace label names.
func labelledTunnel(_ context.Context, o client.Object) []reconcile.Request {
	name := o.GetLabels()[publish.LabelTunnel]
	if name == "" {
		return nil
	}
	ns := o.GetNamespace()
	if other := o.GetLabels()[publish.LabelTunnelNamespace]; other != "" {
		ns = other
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}}
}

// sharedBySelector maps a namespace whose labels changed to the tunnels
// that pick namespaces by label: which of them it may use changed.
func (r *Reconciler) sharedBySelector(ctx context.Context, _ client.Object) []reconcile.Request {
	l := &v1alpha1.CloudflareTunnelList{}
	if err := r.kube.List(ctx, l, client.UnsafeDisableDeepCopy); err != nil {
		return nil
	}
	var reqs []reconcile.Request
	for _, cr := range l.Items {
		if a := cr.Spec.AllowedNamespaces; a != nil && a.From == v1alpha1.NamespacesFromSelector {
			reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: cr.Namespace, Name: cr.Name}})
		}
	}
	return reqs
}
