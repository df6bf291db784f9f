// Package cloudflaretunnel reconciles CloudflareTunnels: it writes a Tunnel
// managed resource, waits for the run token it publishes, and runs a
// hardened cloudflared Deployment from it. It never calls Cloudflare itself.
package cloudflaretunnel

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
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

	"github.com/context-labs/provider-cloudflare-tunnel/apis/common"
	connv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/connectivity/v1alpha1"
	dnsv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/dns/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/connector"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/publichostname"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/metrics"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sharing"
)

// Condition types and reasons of a CloudflareTunnel.
const (
	TypeTokenStored     xpv2.ConditionType = "TokenStored"
	TypeDeploymentReady xpv2.ConditionType = "DeploymentReady"
	// TypeDegraded says whether the tunnel serves with less than it should:
	// Cloudflare reports it degraded, or fewer connectors are connected
	// than replicas asked for.
	TypeDegraded xpv2.ConditionType = "Degraded"

	ReasonTokenStored        xpv2.ConditionReason = "TokenStored"
	ReasonWaitingForTunnel   xpv2.ConditionReason = "WaitingForTunnel"
	ReasonWaitingForToken    xpv2.ConditionReason = "WaitingForToken"
	ReasonReplicasReady      xpv2.ConditionReason = "ReplicasReady"
	ReasonReplicasNotReady   xpv2.ConditionReason = "ReplicasNotReady"
	ReasonScaledToZero       xpv2.ConditionReason = "ScaledToZero"
	ReasonConnected          xpv2.ConditionReason = "Connected"
	ReasonNotConnected       xpv2.ConditionReason = "NotConnected"
	ReasonTunnelDown         xpv2.ConditionReason = "TunnelDown"
	ReasonHealthy            xpv2.ConditionReason = "Healthy"
	ReasonCloudflareDegraded xpv2.ConditionReason = "CloudflareDegraded"
	ReasonTooFewConnectors   xpv2.ConditionReason = "TooFewConnectors"
	ReasonTunnelNotReady     xpv2.ConditionReason = "TunnelNotReady"
	ReasonTunnelNotSynced    xpv2.ConditionReason = "TunnelNotSynced"
	ReasonTunnelReplaced     xpv2.ConditionReason = "TunnelReplaced"
	ReasonTunnelInUse        xpv2.ConditionReason = "TunnelInUse"
	ReasonDeleting           xpv2.ConditionReason = "Deleting"
	ReasonReconcileError     xpv2.ConditionReason = "ReconcileError"
	finalizer                                     = "tunnels.cloudflare.com/cloudflaretunnel"
)

// Options of the controller, set at setup.
type Options struct {
	// ConfigBatchWindow; 0 is DefaultConfigBatchWindow.
	ConfigBatchWindow time.Duration
	// FanInInterval; 0 is DefaultFanInInterval.
	FanInInterval time.Duration
	// Metrics are the provider's own metrics; nil records none.
	Metrics *metrics.Metrics
}

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

// hostnameTunnels enqueues the tunnels a PublicHostname names or was
// published on, before and after an update.
type hostnameTunnels struct{}

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
	add(publichostname.Tunnel(ph))
	if t := ph.Status.Tunnel; t != nil && t.Tunnel != publichostname.TunnelName(ph) {
		add(publichostname.Answered(ph))
	}
}

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

// Reconciler reconciles CloudflareTunnels.
type Reconciler struct {
	batch configBatcher
	// pace spaces the reconciles the objects made for a tunnel ask for.
	pace *pacer
	// metrics count the configuration changes the batch window holds back.
	metrics *metrics.Metrics
	window  time.Duration

	kube   client.Client
	log    logging.Logger
	record event.Recorder
}

// Reconcile drives a CloudflareTunnel towards a running tunnel.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	cr := &v1alpha1.CloudflareTunnel{}
	if err := r.kube.Get(ctx, req.NamespacedName, cr); err != nil {
		if kerrors.IsNotFound(err) {
			r.pace.forget(req)
		}
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	r.pace.started(req)
	if meta.WasDeleted(cr) {
		return r.delete(ctx, cr)
	}
	if !controllerutil.ContainsFinalizer(cr, finalizer) {
		controllerutil.AddFinalizer(cr, finalizer)
		if err := r.kube.Update(ctx, cr); err != nil {
			return reconcile.Result{}, errors.Wrap(err, "cannot add finalizer")
		}
	}

	res, err := r.apply(ctx, cr)
	if kerrors.IsConflict(err) {
		// Someone else wrote first: an ordinary race, not the user's
		// problem. Try again with what they wrote.
		return reconcile.Result{Requeue: true}, nil
	}
	if err != nil {
		r.record.Event(cr, event.Warning("ReconcileError", err))
		cr.SetConditions(xpv2.Condition{Type: xpv2.TypeReady, Status: corev1.ConditionFalse, Reason: ReasonReconcileError, Message: err.Error(), LastTransitionTime: metav1.Now()})
	}
	r.reportSharing(cr)
	cr.Status.ObservedGeneration = cr.Generation
	if uerr := r.kube.Status().Update(ctx, cr); uerr != nil {
		return errors.SilentlyRequeueOnConflict(reconcile.Result{}, errors.Wrap(uerr, "cannot update status"))
	}
	return res, err
}

// publication is what the tunnel publishes: who holds each hostname and
// their rules, the CA Secrets those name, and the hostnames whose rules are
// carried over from a previous version until a PublicHostname takes them.
type publication struct {
	publish.Decision
	claims  []publish.Claim
	caPools []v1alpha1.LocalSecretKeySelector
	carried map[string]bool
}

// config is the configuration document: the rules of the hostnames' holders,
// and the current rules of the hostnames carried over.
func (p publication) config(current *ztv1alpha1.TunnelConfig) *ztv1alpha1.TunnelConfig {
	held := []ztv1alpha1.IngressRule{}
	withRules := map[string]bool{}
	for _, c := range p.claims {
		if p.Holder[c.Hostname] == c.Name && len(c.Rules) > 0 {
			held = append(held, c.Rules...)
			withRules[c.Hostname] = true
		}
	}
	if current != nil {
		for _, r := range current.Ingress {
			// Carried over until its PublicHostname has rules to replace
			// them with (a new one has none until it is resolved).
			if h := strings.ToLower(ptr.Deref(r.Hostname, "")); h != "" && p.carried[h] && !withRules[h] {
				held = append(held, r)
			}
		}
	}
	return publish.TunnelConfig(held)
}

// carriedOver are the hostnames of this tunnel that a previous version
// published from an Ingress directly: their DNS records are still the
// Ingress's, not yet taken over by a PublicHostname. Their rules stay in the
// configuration until a PublicHostname holding them has rules of its own (or
// the Ingress's record goes), so an upgrade never takes a hostname off the
// tunnel while the new version builds its PublicHostnames. (For upgrades
// from versions before PublicHostnames; see hack/upgrade-from.)
func (r *Reconciler) carriedOver(ctx context.Context, cr *v1alpha1.CloudflareTunnel) (map[string]bool, error) {
	l := &dnsv1alpha1.DNSRecordList{}
	// Read only, so without copies: every DNS record of the tunnel, on
	// each of its reconciles.
	if err := r.kube.List(ctx, l, client.InNamespace(cr.Namespace), client.MatchingLabels{publish.LabelTunnel: publish.LabelValue(cr.Name)}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, errors.Wrap(err, "cannot list the DNS records of a previous version")
	}
	out := map[string]bool{}
	for _, rec := range l.Items {
		c := metav1.GetControllerOf(&rec)
		if c == nil || c.Kind == v1alpha1.PublicHostnameKind || meta.WasDeleted(&rec) {
			continue
		}
		if host, _ := publish.Hostname(rec.Spec.ForProvider.Name); host != "" {
			out[host] = true
		}
	}
	return out, nil
}

// apply converges the owned objects and computes the conditions.
func (r *Reconciler) apply(ctx context.Context, cr *v1alpha1.CloudflareTunnel) (reconcile.Result, error) {
	pcRef, err := r.applyProviderConfig(ctx, cr)
	if err != nil {
		return reconcile.Result{}, err
	}
	phs, err := r.published(ctx, cr)
	if err != nil {
		return reconcile.Result{}, err
	}
	cl := claims(cr, phs)
	pub := publication{Decision: publish.Decide(cl), claims: cl}
	pub.caPools = caPools(cr, phs, pub.Decision)
	if pub.carried, err = r.carriedOver(ctx, cr); err != nil {
		return reconcile.Result{}, err
	}
	tun, want, hold, err := r.applyTunnel(ctx, cr, pcRef, pub)
	if err != nil {
		return reconcile.Result{}, err
	}
	if !meta.WasDeleted(tun) {
		if err := r.answer(ctx, cr, phs, pub.Decision, configVersion(tun, want)); err != nil {
			return reconcile.Result{}, err
		}
	}
	res, err := r.applyChildren(ctx, cr, tun, pub.caPools)
	if hold > 0 && err == nil && (res.RequeueAfter == 0 || hold < res.RequeueAfter) {
		res.RequeueAfter = hold // a held-back configuration change
	}
	return res, err
}

// applyChildren converges the token Secret's consumers (Deployment, PDB)
// and computes the conditions.
func (r *Reconciler) applyChildren(ctx context.Context, cr *v1alpha1.CloudflareTunnel, tun *ztv1alpha1.Tunnel, pools []v1alpha1.LocalSecretKeySelector) (reconcile.Result, error) {
	cr.Status.TunnelID = meta.GetExternalName(tun)
	at := tun.Status.AtProvider
	cr.Status.Connections, cr.Status.Connectors, cr.Status.TunnelStatus, cr.Status.ConnectorsOnLatestConfig = at.Connections, at.Connectors, at.Status, at.ConnectorsOnLatestConfig
	r.recordRotation(cr, at.TokenRotation)
	r.reportRotation(cr, at.TokenRotation, time.Now())
	tunnelReady := tun.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue
	state := TunnelState{
		Ready: tunnelReady, Synced: tun.GetCondition(xpv2.TypeSynced), Message: conditionMessage(tun),
		Status: at.Status, Connectors: at.Connectors, Connections: at.Connections,
	}
	degraded := DegradedCondition(state, Replicas(cr))
	cr.SetConditions(degraded)

	token, err := r.token(ctx, cr)
	if err != nil {
		return reconcile.Result{}, err
	}
	if len(token) == 0 {
		reason, msg := ReasonWaitingForToken, "waiting for the Tunnel to publish its run token to Secret "+TokenSecretName(cr)
		switch {
		case common.Taken(tun.GetCondition(xpv2.TypeSynced).Reason):
			// It will not resolve itself, and the name cannot be changed.
			reason, msg = v1alpha1.ReasonTunnelNameTaken, fmt.Sprintf("the Cloudflare tunnel name %q is taken: %s. spec.tunnelName is immutable: delete this CloudflareTunnel and create it again with another tunnelName; or, if that tunnel is this cluster's own from before a rebuild, set spec.adoptByName: true", TunnelName(cr), conditionMessage(tun))
		case !tunnelReady:
			reason, msg = ReasonWaitingForTunnel, "waiting for Tunnel "+tun.Name+" to be created in Cloudflare: "+conditionMessage(tun)
		}
		cr.SetConditions(
			cond(TypeTokenStored, false, reason, msg),
			cond(TypeDeploymentReady, false, reason, "the cloudflared Deployment starts once the token is stored"),
			cond(xpv2.TypeReady, false, reason, msg),
		)
		return reconcile.Result{RequeueAfter: 10 * time.Second}, nil
	}
	cr.SetConditions(cond(TypeTokenStored, true, ReasonTokenStored, "the run token is in Secret "+TokenSecretName(cr)))

	dep, err := r.applyDeployment(ctx, cr, token, pools)
	if reason := connector.Reason(err); reason != "" {
		r.refuseConnector(cr, dep, xpv2.ConditionReason(reason), err)
		return reconcile.Result{}, nil
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	if err := r.applyPDB(ctx, cr); err != nil {
		return reconcile.Result{}, err
	}

	depCond := DeploymentCondition(dep, Replicas(cr))
	cr.SetConditions(depCond)
	cr.SetConditions(ReadyCondition(state, depCond, degraded, Replicas(cr)))
	return reconcile.Result{}, nil
}

func cond(t xpv2.ConditionType, ok bool, reason xpv2.ConditionReason, msg string) xpv2.Condition {
	s := corev1.ConditionFalse
	if ok {
		s = corev1.ConditionTrue
	}
	return xpv2.Condition{Type: t, Status: s, Reason: reason, Message: msg, LastTransitionTime: metav1.Now()}
}

func conditionMessage(tun *ztv1alpha1.Tunnel) string {
	s := tun.GetCondition(xpv2.TypeSynced)
	if s.Status == corev1.ConditionFalse && s.Message != "" {
		return s.Message
	}
	r := tun.GetCondition(xpv2.TypeReady)
	return strings.TrimSpace(string(r.Reason) + " " + r.Message)
}

// DeploymentCondition says whether every desired cloudflared replica is
// ready and up to date.
func DeploymentCondition(dep *appsv1.Deployment, replicas int32) xpv2.Condition {
	if replicas == 0 {
		return cond(TypeDeploymentReady, true, ReasonScaledToZero, "cloudflared is scaled to zero")
	}
	current := dep.Status.ObservedGeneration >= dep.Generation
	if current && dep.Status.ReadyReplicas >= replicas && dep.Status.UpdatedReplicas >= replicas {
		return cond(TypeDeploymentReady, true, ReasonReplicasReady, fmt.Sprintf("%d/%d cloudflared replicas ready", dep.Status.ReadyReplicas, replicas))
	}
	return cond(TypeDeploymentReady, false, ReasonReplicasNotReady, fmt.Sprintf("%d/%d cloudflared replicas ready", dep.Status.ReadyReplicas, replicas))
}

// TunnelState is what the CloudflareTunnel reads of its Tunnel MR.
type TunnelState struct {
	Ready   bool
	Synced  xpv2.Condition
	Message string

	// Cloudflare's view (status.atProvider): its status of the tunnel
	// (healthy, degraded, down, inactive; "" before the first
	// observation), the connectors connected and their edge connections.
	Status      string
	Connectors  int
	Connections int
}

// Cloudflare's tunnel statuses.
const (
	statusDegraded = "degraded"
	statusDown     = "down"
)

// ReadyCondition combines the tunnel, the Deployment and Cloudflare's view
// of the connections into one answer, saying why not. Ready means serving:
// a tunnel scaled to zero, down or never connected, or one the provider
// cannot reach Cloudflare for (credentials gone, endpoint unreachable), is
// not. A degraded tunnel still serves: it is Ready, and says it is degraded.
func ReadyCondition(tun TunnelState, dep, degraded xpv2.Condition, replicas int32) xpv2.Condition {
	switch {
	case !tun.Ready:
		return cond(xpv2.TypeReady, false, ReasonTunnelNotReady, "the Tunnel is not ready: "+tun.Message)
	case tun.Synced.Status == corev1.ConditionFalse:
		return cond(xpv2.TypeReady, false, ReasonTunnelNotSynced, "the provider cannot reconcile the Tunnel with Cloudflare, so what Cloudflare serves is unknown and changes do not reach it: "+tun.Message)
	case dep.Status != corev1.ConditionTrue:
		return cond(xpv2.TypeReady, false, dep.Reason, dep.Message)
	case replicas == 0:
		return cond(xpv2.TypeReady, false, ReasonScaledToZero, "cloudflared is scaled to zero; the tunnel serves no traffic")
	case tun.Status == statusDown:
		return cond(xpv2.TypeReady, false, ReasonTunnelDown, "Cloudflare reports the tunnel down: it had connections to the edge and has none, although the cloudflared pods are ready; read their logs (they must reach Cloudflare's edge on outbound port 7844) and check that the token Secret holds the tunnel's current token")
	case tun.Connections == 0:
		return cond(xpv2.TypeReady, false, ReasonNotConnected, "cloudflared is running but Cloudflare reports no connections yet")
	}
	msg := fmt.Sprintf("%d connections from %d connectors to Cloudflare's edge", tun.Connections, tun.Connectors)
	if degraded.Status == corev1.ConditionTrue {
		msg += "; serving, but degraded: " + degraded.Message
	}
	return cond(xpv2.TypeReady, true, ReasonConnected, msg)
}

// DegradedCondition says whether the tunnel serves with less than it
// should: Cloudflare reports it degraded (at least one edge connection has
// failed), or fewer connectors are connected than replicas asked for. More
// connectors than replicas (a rollout's surge) is not degraded.
func DegradedCondition(tun TunnelState, replicas int32) xpv2.Condition {
	figures := fmt.Sprintf("%d/%d connectors connected, %d edge connections", tun.Connectors, replicas, tun.Connections)
	switch {
	case tun.Status == "":
		return xpv2.Condition{Type: TypeDegraded, Status: corev1.ConditionUnknown, Reason: ReasonWaitingForTunnel, Message: "Cloudflare's view of the tunnel is not known yet", LastTransitionTime: metav1.Now()}
	case replicas == 0:
		return cond(TypeDegraded, false, ReasonScaledToZero, "cloudflared is scaled to zero")
	case tun.Status == statusDegraded:
		return cond(TypeDegraded, true, ReasonCloudflareDegraded, "Cloudflare reports the tunnel degraded: at least one edge connection has failed ("+figures+"; each cloudflared keeps 4); read the cloudflared pods' logs")
	case int32(tun.Connectors) < replicas:
		return cond(TypeDegraded, true, ReasonTooFewConnectors, fmt.Sprintf("%s; Cloudflare reports the tunnel %s; a replica is not connected: see the DeploymentReady condition and the cloudflared pods' logs", figures, tun.Status))
	default:
		return cond(TypeDegraded, false, ReasonHealthy, fmt.Sprintf("%s; Cloudflare reports the tunnel %s", figures, tun.Status))
	}
}

// providerConfigRef is what the Tunnel and every resource made for this
// tunnel use.
func (r *Reconciler) applyProviderConfig(ctx context.Context, cr *v1alpha1.CloudflareTunnel) (*xpv2.ProviderConfigReference, error) {
	if cr.Spec.CredentialsSecretRef == nil {
		if cr.Spec.ProviderConfigRef != nil {
			return cr.Spec.ProviderConfigRef.DeepCopy(), nil
		}
		return &xpv2.ProviderConfigReference{Kind: v1alpha1.ClusterProviderConfigKind, Name: "default"}, nil
	}
	pc := &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: cr.Namespace, Name: ProviderConfigName(cr)}}
	op, err := controllerutil.CreateOrUpdate(ctx, r.kube, pc, func() error {
		pc.Spec = v1alpha1.ProviderConfigSpec{Credentials: v1alpha1.ProviderCredentials{
			Source:    v1alpha1.CredentialsSourceSecret,
			SecretRef: &v1alpha1.SecretKeySelector{Name: cr.Spec.CredentialsSecretRef.Name, Key: v1alpha1.DefaultTokenKey},
		}}
		return controllerutil.SetControllerReference(cr, pc, r.kube.Scheme())
	})
	if err != nil {
		return nil, errors.Wrap(err, "cannot apply ProviderConfig for credentialsSecretRef")
	}
	r.recordOp(cr, op, "ProviderConfig", pc.Name)
	return &xpv2.ProviderConfigReference{Kind: v1alpha1.ProviderConfigKind, Name: pc.Name}, nil
}

// tunnelPolicies orphan the Cloudflare tunnel when deleteTunnelOnRemove is false.
func tunnelPolicies(cr *v1alpha1.CloudflareTunnel) xpv2.ManagementPolicies {
	if ptr.Deref(cr.Spec.DeleteTunnelOnRemove, true) {
		return xpv2.ManagementPolicies{xpv2.ManagementActionAll}
	}
	return xpv2.ManagementPolicies{xpv2.ManagementActionObserve, xpv2.ManagementActionCreate, xpv2.ManagementActionUpdate, xpv2.ManagementActionLateInitialize}
}

// applyTunnel writes the fields of the Tunnel MR this controller owns,
// including its remote configuration (the rules of its published hostnames).
//
// A configuration change within the batch window of the previous one is held
// back; the returned duration says when to come back and write it.
func (r *Reconciler) applyTunnel(ctx context.Context, cr *v1alpha1.CloudflareTunnel, pcRef *xpv2.ProviderConfigReference, pub publication) (*ztv1alpha1.Tunnel, *ztv1alpha1.TunnelConfig, time.Duration, error) {
	tun := &ztv1alpha1.Tunnel{ObjectMeta: metav1.ObjectMeta{Namespace: cr.Namespace, Name: cr.Name}}
	if err := r.kube.Get(ctx, client.ObjectKeyFromObject(tun), tun); client.IgnoreNotFound(err) != nil {
		return nil, nil, 0, errors.Wrap(err, "cannot get Tunnel")
	}
	if meta.WasDeleted(tun) {
		hold, err := r.releaseDeletedTunnel(ctx, cr, tun)
		return tun, nil, hold, err
	}
	if tun.CreationTimestamp.IsZero() && cr.Status.TunnelID != "" {
		// The token Secret of a Tunnel deleted by hand belongs to the gone
		// Tunnel; its replacement can publish only once it is gone (the
		// garbage collector's job, done here so the replacement need not
		// wait for it).
		if err := r.deleteStaleToken(ctx, cr); err != nil {
			return nil, nil, 0, err
		}
	}
	want := pub.config(tun.Spec.ForProvider.Config)
	rolledOut, err := r.rolledOut(ctx, cr, tun.Status.AtProvider.TokenRotation)
	if err != nil {
		return nil, nil, 0, err
	}
	var hold time.Duration
	op, err := controllerutil.CreateOrUpdate(ctx, r.kube, tun, func() error {
		// This controller is the only writer of the tunnel's remote
		// configuration: the rules of every hostname it publishes. Once it
		// has written one, it keeps it (down to the bare catch-all).
		if len(pub.Holder) > 0 || len(pub.carried) > 0 || tun.Spec.ForProvider.Config != nil {
			switch current := tun.Spec.ForProvider.Config; {
			case current == nil:
				r.batch.hold(cr.UID, 0) // the first configuration goes out at once
				tun.Spec.ForProvider.Config = want
			case !equality.Semantic.DeepEqual(current, want):
				if hold = r.batch.hold(cr.UID, r.window); hold == 0 {
					tun.Spec.ForProvider.Config = want
				} else if r.batch.newlyHeld(cr.UID) {
					r.metrics.ConfigurationHeld()
				}
			}
		}
		if owner := metav1.GetControllerOf(tun); owner != nil && owner.UID != cr.UID {
			return errors.Errorf("Tunnel %s/%s already exists and is controlled by %s %s", tun.Namespace, tun.Name, owner.Kind, owner.Name)
		}
		if tun.CreationTimestamp.IsZero() && cr.Status.TunnelID != "" {
			// A replacement for a Tunnel deleted by hand: take over the
			// very tunnel this CloudflareTunnel runs, by its ID.
			meta.SetExternalName(tun, cr.Status.TunnelID)
		}
		tun.Spec.ForProvider.Name = TunnelName(cr)
		tun.Spec.ForProvider.ConfigSrc = ptr.To("cloudflare")
		tun.Spec.ForProvider.TokenRotation = TokenRotationFor(cr.Spec.TokenRotation, tun.Spec.ForProvider.TokenRotation, tun.Status.AtProvider.TokenRotation, cr.Status.TokenRotatedAt, rolledOut, metav1.Now())
		tun.Spec.AdoptByName = cr.Spec.AdoptByName
		tun.Spec.ProviderConfigReference = pcRef
		tun.Spec.ManagementPolicies = tunnelPolicies(cr)
		tun.Spec.WriteConnectionSecretToReference = &xpv2.LocalSecretReference{Name: TokenSecretName(cr)}
		return controllerutil.SetControllerReference(cr, tun, r.kube.Scheme())
	})
	if err != nil {
		return nil, nil, 0, errors.Wrap(err, "cannot apply Tunnel")
	}
	r.recordOp(cr, op, "Tunnel", tun.Name)
	return tun, want, hold, nil
}

// releaseDeletedTunnel answers a Tunnel MR deleted by hand while its
// CloudflareTunnel stays. Deleting the Cloudflare tunnel would stop the
// traffic it serves (and Cloudflare refuses while cloudflared is connected,
// so the MR would hang in Terminating): the MR is released without deleting
// the tunnel, and the next reconcile makes a new one that takes the same
// tunnel over by its ID. Deleting the CloudflareTunnel deletes the tunnel.
func (r *Reconciler) releaseDeletedTunnel(ctx context.Context, cr *v1alpha1.CloudflareTunnel, tun *ztv1alpha1.Tunnel) (time.Duration, error) {
	const again = 2 * time.Second
	if owner := metav1.GetControllerOf(tun); owner == nil || owner.UID != cr.UID {
		return again, nil // not ours; it is created anew once gone
	}
	if !slices.Contains(tun.Spec.ManagementPolicies, xpv2.ManagementActionAll) && !slices.Contains(tun.Spec.ManagementPolicies, xpv2.ManagementActionDelete) {
		return again, nil // already released; waiting for it to go
	}
	if gone, err := r.namespaceTerminating(ctx, cr.Namespace); err != nil || gone {
		// The whole namespace is going, this CloudflareTunnel with it
		// (its deletion may simply not have been issued yet): the
		// tunnel is deleted as it would be with the CloudflareTunnel.
		return again, err
	}
	tun.Spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionObserve, xpv2.ManagementActionCreate, xpv2.ManagementActionUpdate, xpv2.ManagementActionLateInitialize}
	if err := r.kube.Update(ctx, tun); err != nil {
		return 0, errors.Wrap(err, "cannot release the deleted Tunnel")
	}
	r.record.Event(cr, event.Warning(event.Reason(ReasonTunnelReplaced), errors.Errorf(
		"Tunnel %s was deleted while this CloudflareTunnel uses it: it is released without deleting Cloudflare tunnel %s, and a new Tunnel takes that tunnel over; delete this CloudflareTunnel to delete the tunnel", tun.Name, meta.GetExternalName(tun))))
	return again, nil
}

// namespaceTerminating says whether ns is being deleted. The provider may
// not read Namespaces; it asks the API server's namespace lifecycle check
// instead, with a dry-run create (nothing is stored) of a Secret, which it
// may create.
func (r *Reconciler) namespaceTerminating(ctx context.Context, ns string) (bool, error) {
	probe := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "namespace-probe-"}}
	err := r.kube.Create(ctx, probe, client.DryRunAll)
	switch {
	case err == nil:
		return false, nil
	case kerrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		return true, nil
	}
	return false, errors.Wrap(err, "cannot tell whether the namespace is being deleted")
}

func (r *Reconciler) deleteStaleToken(ctx context.Context, cr *v1alpha1.CloudflareTunnel) error {
	s := &corev1.Secret{}
	if err := r.kube.Get(ctx, types.NamespacedName{Namespace: cr.Namespace, Name: TokenSecretName(cr)}, s); err != nil {
		return client.IgnoreNotFound(errors.Wrap(err, "cannot get token Secret"))
	}
	if owner := metav1.GetControllerOf(s); owner == nil || owner.Kind != ztv1alpha1.TunnelKind || owner.Name != cr.Name {
		return nil
	}
	return errors.Wrap(client.IgnoreNotFound(r.kube.Delete(ctx, s, client.Preconditions{UID: &s.UID})), "cannot delete the token Secret of a deleted Tunnel")
}

func (r *Reconciler) token(ctx context.Context, cr *v1alpha1.CloudflareTunnel) ([]byte, error) {
	s := &corev1.Secret{}
	err := r.kube.Get(ctx, types.NamespacedName{Namespace: cr.Namespace, Name: TokenSecretName(cr)}, s)
	if kerrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, errors.Wrap(err, "cannot get token Secret")
	}
	return s.Data[TokenKey], nil
}

// applyDeployment applies the cloudflared Deployment server side. A
// connector the provider refuses (spec.connector, spec.image) changes
// nothing: the running Deployment stays as it was, returned with the
// refusal.
func (r *Reconciler) applyDeployment(ctx context.Context, cr *v1alpha1.CloudflareTunnel, token []byte, pools []v1alpha1.LocalSecretKeySelector) (*appsv1.Deployment, error) {
	want, refused := DesiredDeployment(cr, token, pools...)
	dep := &appsv1.Deployment{}
	if refused != nil {
		err := r.kube.Get(ctx, types.NamespacedName{Namespace: cr.Namespace, Name: DeploymentName(cr)}, dep)
		if client.IgnoreNotFound(err) != nil {
			return nil, errors.Wrap(err, "cannot get cloudflared Deployment")
		}
		return dep, refused
	}
	op, err := r.applyOwned(ctx, cr, want.DeepCopy(), dep, "Deployment")
	if err != nil {
		return nil, errors.Wrap(err, "cannot apply cloudflared Deployment")
	}
	if weakened := connector.Weakened(&want.Spec.Template, &dep.Spec.Template, token); len(weakened) > 0 {
		// Server-side apply leaves other writers' fields alone; when
		// theirs break the hardening, the hardening wins.
		if op, err = r.restoreHardening(ctx, cr, want, dep, token, weakened); err != nil {
			return nil, err
		}
	}
	r.recordOp(cr, op, "Deployment", dep.Name)
	return dep, nil
}

func (r *Reconciler) applyPDB(ctx context.Context, cr *v1alpha1.CloudflareTunnel) error {
	want := DesiredPDB(cr)
	if want == nil {
		pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: cr.Namespace, Name: DeploymentName(cr)}}
		return errors.Wrap(client.IgnoreNotFound(r.kube.Delete(ctx, pdb)), "cannot delete PodDisruptionBudget")
	}
	pdb := &policyv1.PodDisruptionBudget{}
	op, err := r.applyOwned(ctx, cr, want, pdb, "PodDisruptionBudget")
	if err != nil {
		return errors.Wrap(err, "cannot apply PodDisruptionBudget")
	}
	r.recordOp(cr, op, "PodDisruptionBudget", pdb.Name)
	return nil
}

func (r *Reconciler) recordOp(cr *v1alpha1.CloudflareTunnel, op controllerutil.OperationResult, kind, name string) {
	switch op {
	case controllerutil.OperationResultCreated:
		r.record.Event(cr, event.Normal(event.Reason("Created"+kind), fmt.Sprintf("Created %s %s", kind, name)))
	case controllerutil.OperationResultUpdated:
		r.record.Event(cr, event.Normal(event.Reason("Updated"+kind), fmt.Sprintf("Updated %s %s", kind, name)))
	}
}

// published lists the PublicHostnames this tunnel publishes: those naming
// it, and those it published that now name a CloudflareTunnel that does not
// exist (a typo must not take a working hostname down: they stay here until
// they name a tunnel that exists). One that names another existing tunnel
// has moved; one being deleted is leaving.
func (r *Reconciler) published(ctx context.Context, cr *v1alpha1.CloudflareTunnel) ([]v1alpha1.PublicHostname, error) {
	l := &v1alpha1.PublicHostnameList{}
	self := types.NamespacedName{Namespace: cr.Namespace, Name: cr.Name}
	// Without copies: a tunnel reconciles on every change of any of its
	// hostnames, and copying all of them each time was most of the
	// provider's allocation at a thousand. What this returns shares the
	// cache's objects: read them, and copy one before writing it (answer).
	if err := r.kube.List(ctx, l, client.MatchingFields{publichostname.TunnelIndex: publichostname.IndexKey(self)}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, errors.Wrap(err, "cannot list PublicHostnames")
	}
	allowed := map[string]bool{cr.Namespace: true}
	out := make([]v1alpha1.PublicHostname, 0, len(l.Items))
	for i := range l.Items {
		ph := &l.Items[i]
		if meta.WasDeleted(ph) {
			continue
		}
		if t := publichostname.Tunnel(ph); t != self {
			err := r.kube.Get(ctx, t, &v1alpha1.CloudflareTunnel{})
			if err == nil {
				continue // moved
			}
			if !kerrors.IsNotFound(err) {
				return nil, errors.Wrap(err, "cannot get CloudflareTunnel")
			}
		}
		ok, seen := allowed[ph.Namespace]
		if !seen {
			ns := &corev1.Namespace{}
			if err := r.kube.Get(ctx, types.NamespacedName{Name: ph.Namespace}, ns); client.IgnoreNotFound(err) != nil {
				return nil, errors.Wrap(err, "cannot get Namespace")
			}
			ok = sharing.Allows(cr, ph.Namespace, ns.Labels)
			allowed[ph.Namespace] = ok
		}
		if ok {
			out = append(out, *ph) // a namespace no longer allowed is unpublished
		}
	}
	return out, nil
}

// claimName names a PublicHostname among the tunnel's claims: by name in
// the tunnel's namespace, "<namespace>/<name>" in another.
func claimName(cr *v1alpha1.CloudflareTunnel, ph *v1alpha1.PublicHostname) string {
	return publichostname.AnswerName(types.NamespacedName{Namespace: ph.Namespace, Name: ph.Name}, cr.Namespace)
}

// claims are the PublicHostnames' claims on their hostnames.
func claims(cr *v1alpha1.CloudflareTunnel, phs []v1alpha1.PublicHostname) []publish.Claim {
	out := make([]publish.Claim, 0, len(phs))
	for _, ph := range phs {
		host, _ := publish.Hostname(ph.Spec.Hostname)
		out = append(out, publish.Claim{Name: claimName(cr, &ph), Hostname: host, Created: ph.CreationTimestamp, Rules: ph.Status.Rules})
	}
	return out
}

// caPools are the CA Secrets the published rules name, for cloudflared to
// mount; each once, in a stable order.
func caPools(cr *v1alpha1.CloudflareTunnel, phs []v1alpha1.PublicHostname, d publish.Decision) []v1alpha1.LocalSecretKeySelector {
	seen := map[v1alpha1.LocalSecretKeySelector]bool{}
	var out []v1alpha1.LocalSecretKeySelector
	for _, ph := range phs {
		host, _ := publish.Hostname(ph.Spec.Hostname)
		if d.Holder[host] != claimName(cr, &ph) || len(ph.Status.Rules) == 0 || ph.Namespace != cr.Namespace {
			// Only Secrets of the tunnel's namespace can be mounted; a
			// hostname of another namespace cannot name one (refused
			// when its rules are resolved).
			continue
		}
		for _, p := range ph.Status.CAPools {
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].Key < out[j].Key
	})
	return out
}

// Answer is what a CloudflareTunnel tells a PublicHostname: whether it holds
// its hostname here and, once Cloudflare has the configuration, its version.
func Answer(cr *v1alpha1.CloudflareTunnel, ph *v1alpha1.PublicHostname, d publish.Decision, configVersion int) v1alpha1.PublishedStatus {
	st := v1alpha1.PublishedStatus{Tunnel: publichostname.AnswerName(types.NamespacedName{Namespace: cr.Namespace, Name: cr.Name}, ph.Namespace), ObservedGeneration: ph.Status.RulesGeneration}
	if holder, lost := d.Lost[claimName(cr, ph)]; lost {
		st.Reason, st.ClaimedBy = "HostnameConflict", holder
		st.Message = fmt.Sprintf("hostname %s is already published through CloudflareTunnel %s by PublicHostname %s, the older claim; this one is not published", ph.Spec.Hostname, cr.Name, holder)
		return st
	}
	st.Accepted, st.Rules = true, len(ph.Status.Rules)
	switch {
	case st.Rules == 0:
		st.Reason, st.Message = "NoRules", fmt.Sprintf("hostname %s is this PublicHostname's on CloudflareTunnel %s, but it has no valid rules to publish yet", ph.Spec.Hostname, cr.Name)
	case configVersion == 0:
		st.Reason, st.Message = "Accepted", fmt.Sprintf("hostname %s is this PublicHostname's on CloudflareTunnel %s; its rules are on their way to Cloudflare", ph.Spec.Hostname, cr.Name)
	default:
		st.Reason, st.ConfigVersion = "Accepted", configVersion
		st.Message = fmt.Sprintf("hostname %s is published through CloudflareTunnel %s: %s in configuration version %d", ph.Spec.Hostname, cr.Name, publish.RuleCount(st.Rules), configVersion)
	}
	return st
}

// configVersion is the version of the tunnel's configuration in Cloudflare
// when it is the one this CloudflareTunnel wants, else 0.
func configVersion(tun *ztv1alpha1.Tunnel, want *ztv1alpha1.TunnelConfig) int {
	synced := tun.GetCondition(xpv2.TypeSynced)
	if synced.Status != corev1.ConditionTrue || synced.ObservedGeneration != tun.Generation || !equality.Semantic.DeepEqual(tun.Spec.ForProvider.Config, want) {
		return 0
	}
	return tun.Status.AtProvider.RemoteConfigVersion
}

// answer writes each PublicHostname's answer where it changed (the
// CloudflareTunnel is the only writer of status.tunnel, by merge patch) and
// tells a hostname that lost its claim by an event.
func (r *Reconciler) answer(ctx context.Context, cr *v1alpha1.CloudflareTunnel, phs []v1alpha1.PublicHostname, d publish.Decision, version int) error {
	for i := range phs {
		want := Answer(cr, &phs[i], d, version)
		if t := phs[i].Status.Tunnel; t != nil && *t == want {
			continue
		}
		ph := phs[i].DeepCopy() // phs share the cache's objects (published)
		if !want.Accepted && (ph.Status.Tunnel == nil || ph.Status.Tunnel.Message != want.Message) {
			r.record.Event(ph, event.Warning(event.Reason(want.Reason), errors.New(want.Message)))
		}
		patch := client.MergeFrom(ph.DeepCopy())
		ph.Status.Tunnel = &want
		if err := r.kube.Status().Patch(ctx, ph, patch); client.IgnoreNotFound(err) != nil {
			return errors.Wrapf(err, "cannot answer PublicHostname %s", ph.Name)
		}
	}
	return nil
}

// users are what still uses this tunnel, by kind and name: PublicHostnames
// it publishes, and managed resources made for it (a source's private
// routes and VPC services), named with the object that made them.
func (r *Reconciler) users(ctx context.Context, cr *v1alpha1.CloudflareTunnel) ([]string, error) {
	phs, err := r.published(ctx, cr)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, ph := range phs {
		names = append(names, describe(v1alpha1.PublicHostnameKind, &ph, cr.Namespace))
	}
	onThis := client.MatchingLabels{publish.LabelTunnel: publish.LabelValue(cr.Name)}
	routes, services, networks := &ztv1alpha1.HostnameRouteList{}, &connv1alpha1.VPCServiceList{}, &ztv1alpha1.NetworkRouteList{}
	for _, l := range []client.ObjectList{routes, services, networks} {
		// In every namespace: a shared tunnel's users make theirs in their own.
		if err := r.kube.List(ctx, l, onThis); err != nil {
			return nil, errors.Wrap(err, "cannot list the managed resources made for this tunnel")
		}
	}
	for _, m := range routes.Items {
		if madeFor(cr, &m) {
			names = append(names, describe(ztv1alpha1.HostnameRouteKind, &m, cr.Namespace))
		}
	}
	for _, m := range services.Items {
		if madeFor(cr, &m) {
			names = append(names, describe(connv1alpha1.VPCServiceKind, &m, cr.Namespace))
		}
	}
	for _, m := range networks.Items {
		if madeFor(cr, &m) {
			names = append(names, describe(ztv1alpha1.NetworkRouteKind, &m, cr.Namespace))
		}
	}
	sort.Strings(names)
	return slices.Compact(names), nil
}

// madeFor says whether an object labelled with cr's name was made for cr:
// in its namespace without a tunnel-namespace label, or labelled with it.
func madeFor(cr *v1alpha1.CloudflareTunnel, o metav1.Object) bool {
	if ns := o.GetLabels()[publish.LabelTunnelNamespace]; ns != "" {
		return ns == cr.Namespace
	}
	return o.GetNamespace() == cr.Namespace
}

// describe names an object with the one that made it: a user deletes an
// Ingress, not the route it made. Objects of other namespaces (a shared
// tunnel's users) say which.
func describe(kind string, o metav1.Object, tunnelNamespace string) string {
	name := o.GetName()
	if c := metav1.GetControllerOf(o); c != nil && c.Kind != v1alpha1.CloudflareTunnelKind {
		kind, name = c.Kind, c.Name
	}
	if o.GetNamespace() != tunnelNamespace {
		name = o.GetNamespace() + "/" + name
	}
	return kind + " " + name
}

// delete tears down in the order that lets Cloudflare agree: no Ingress may
// still use the tunnel; cloudflared goes first (Cloudflare refuses to delete
// a tunnel with live connectors), then the Tunnel MR, then the Secret and
// ProviderConfig.
func (r *Reconciler) delete(ctx context.Context, cr *v1alpha1.CloudflareTunnel) (reconcile.Result, error) {
	if !controllerutil.ContainsFinalizer(cr, finalizer) {
		return reconcile.Result{}, nil
	}
	users, err := r.users(ctx, cr)
	if err != nil {
		return reconcile.Result{}, err
	}
	if len(users) > 0 {
		msg := fmt.Sprintf("deletion waits: %s still use this tunnel; delete them, or point them at another tunnel (an Ingress or a Service: its %s annotation)", strings.Join(users, ", "), v1alpha1.AnnotationTunnel)
		if c := cr.GetCondition(xpv2.TypeReady); c.Reason != ReasonTunnelInUse || c.Message != msg {
			r.record.Event(cr, event.Warning(event.Reason(ReasonTunnelInUse), errors.New(msg)))
		}
		cr.SetConditions(cond(xpv2.TypeReady, false, ReasonTunnelInUse, msg))
		return errors.SilentlyRequeueOnConflict(reconcile.Result{RequeueAfter: 30 * time.Second}, r.kube.Status().Update(ctx, cr))
	}

	// The Secret and ProviderConfig need not be waited for: nothing depends
	// on them being gone (the ProviderConfig itself waits for its last user).
	steps := []struct {
		what string
		obj  client.Object
		wait bool
	}{
		{"cloudflared Deployment", &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: cr.Namespace, Name: DeploymentName(cr)}}, true},
		{"PodDisruptionBudget", &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: cr.Namespace, Name: DeploymentName(cr)}}, true},
		{"Tunnel", &ztv1alpha1.Tunnel{ObjectMeta: metav1.ObjectMeta{Namespace: cr.Namespace, Name: cr.Name}}, true},
		{"token Secret", &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: cr.Namespace, Name: TokenSecretName(cr)}}, false},
		{"ProviderConfig", &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: cr.Namespace, Name: ProviderConfigName(cr)}}, false},
	}
	for _, s := range steps {
		gone, err := r.deleteOwned(ctx, cr, s.obj)
		if err != nil {
			return reconcile.Result{}, errors.Wrapf(err, "cannot delete %s", s.what)
		}
		if !gone && s.wait {
			msg := fmt.Sprintf("deleting: waiting for the %s %s to be gone", s.what, s.obj.GetName())
			if tun, ok := s.obj.(*ztv1alpha1.Tunnel); ok {
				msg += ": " + conditionMessage(tun)
			}
			cr.SetConditions(cond(xpv2.TypeReady, false, ReasonDeleting, msg))
			return errors.SilentlyRequeueOnConflict(reconcile.Result{RequeueAfter: 5 * time.Second}, r.kube.Status().Update(ctx, cr))
		}
	}
	r.batch.forget(cr.UID)
	controllerutil.RemoveFinalizer(cr, finalizer)
	return reconcile.Result{}, errors.Wrap(r.kube.Update(ctx, cr), "cannot remove finalizer")
}

// deleteOwned deletes obj if this CloudflareTunnel controls it (nothing else
// is ever deleted) and reports whether it is gone.
func (r *Reconciler) deleteOwned(ctx context.Context, cr *v1alpha1.CloudflareTunnel, obj client.Object) (bool, error) {
	if err := r.kube.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		return kerrors.IsNotFound(err), client.IgnoreNotFound(err)
	}
	owned := slices.ContainsFunc(obj.GetOwnerReferences(), func(o metav1.OwnerReference) bool {
		// The token Secret is owned by our Tunnel rather than by us.
		return o.UID == cr.UID || (o.Kind == ztv1alpha1.TunnelKind && o.Name == cr.Name)
	})
	if !owned {
		return true, nil
	}
	if tun, ok := obj.(*ztv1alpha1.Tunnel); ok && !ptr.Deref(cr.Spec.DeleteTunnelOnRemove, true) && slices.Contains(tun.Spec.ManagementPolicies, xpv2.ManagementActionAll) {
		// Make sure the orphaning policy is in place before deleting.
		tun.Spec.ManagementPolicies = tunnelPolicies(cr)
		if err := r.kube.Update(ctx, tun); err != nil {
			return false, err
		}
	}
	if obj.GetDeletionTimestamp().IsZero() {
		if err := r.kube.Delete(ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			return false, err
		}
	}
	return false, nil
}
