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
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	dnsv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/dns/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/ingress"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/mr"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/ingress/translate"
)

// Condition types and reasons of a CloudflareTunnel.
const (
	TypeTokenStored     xpv2.ConditionType = "TokenStored"
	TypeDeploymentReady xpv2.ConditionType = "DeploymentReady"

	ReasonTokenStored      xpv2.ConditionReason = "TokenStored"
	ReasonWaitingForTunnel xpv2.ConditionReason = "WaitingForTunnel"
	ReasonWaitingForToken  xpv2.ConditionReason = "WaitingForToken"
	ReasonReplicasReady    xpv2.ConditionReason = "ReplicasReady"
	ReasonReplicasNotReady xpv2.ConditionReason = "ReplicasNotReady"
	ReasonScaledToZero     xpv2.ConditionReason = "ScaledToZero"
	ReasonConnected        xpv2.ConditionReason = "Connected"
	ReasonNotConnected     xpv2.ConditionReason = "NotConnected"
	ReasonTunnelNotReady   xpv2.ConditionReason = "TunnelNotReady"
	ReasonTunnelNotSynced  xpv2.ConditionReason = "TunnelNotSynced"
	ReasonTunnelNameTaken  xpv2.ConditionReason = "TunnelNameTaken"
	ReasonTunnelReplaced   xpv2.ConditionReason = "TunnelReplaced"
	ReasonTunnelInUse      xpv2.ConditionReason = "TunnelInUse"
	ReasonDeleting         xpv2.ConditionReason = "Deleting"
	ReasonReconcileError   xpv2.ConditionReason = "ReconcileError"
	finalizer                                   = "tunnels.cloudflare.com/cloudflaretunnel"
)

// Setup adds the CloudflareTunnel controller.
func Setup(mgr ctrl.Manager, o controller.Options) error {
	name := "cloudflaretunnel"
	r := &Reconciler{
		kube:   mgr.GetClient(),
		log:    o.Logger.WithValues("controller", name),
		record: event.NewAPIRecorder(mgr.GetEventRecorderFor(name)),
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
		// An Ingress's rules go to the tunnel it names; one that moves (or
		// goes) is looked at by the tunnel it left too, and a deletion
		// waiting on Ingresses resumes when they go.
		Watches(&networkingv1.Ingress{}, ingressTunnels{}).
		// A backend Service's ports are in its Ingresses' rules.
		Watches(&corev1.Service{}, handler.EnqueueRequestsFromMapFunc(r.tunnelsOfService)).
		// A DNS record Cloudflare refuses takes its hostname's rule out.
		Watches(&dnsv1alpha1.DNSRecord{}, handler.EnqueueRequestsFromMapFunc(recordTunnel)).
		Complete(errors.WithSilentRequeueOnConflict(r))
}

// SetupGated adds the controller once its CRD and the Tunnel CRD exist.
func SetupGated(mgr ctrl.Manager, o controller.Options) error {
	o.Gate.Register(func() {
		if err := Setup(mgr, o); err != nil {
			o.Logger.Info("Cannot set up CloudflareTunnel controller", "error", err)
		}
	}, v1alpha1.CloudflareTunnelGroupVersionKind, ztv1alpha1.TunnelGroupVersionKind)
	return nil
}

func tokenSecretOwner(_ context.Context, o client.Object) []reconcile.Request {
	name, ok := strings.CutSuffix(o.GetName(), "-token")
	if !ok {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
}

// ingressTunnels enqueues the tunnel an Ingress names and, on an update, the
// tunnel it named before.
type ingressTunnels struct{}

func enqueueTunnelOf(q workqueue.TypedRateLimitingInterface[reconcile.Request], o client.Object) {
	if o == nil {
		return
	}
	if name := o.GetAnnotations()[v1alpha1.AnnotationTunnel]; name != "" {
		q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}})
	}
}

func (ingressTunnels) Create(_ context.Context, e ctrlevent.TypedCreateEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	enqueueTunnelOf(q, e.Object)
}

func (ingressTunnels) Update(_ context.Context, e ctrlevent.TypedUpdateEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	enqueueTunnelOf(q, e.ObjectOld)
	enqueueTunnelOf(q, e.ObjectNew)
}

func (ingressTunnels) Delete(_ context.Context, e ctrlevent.TypedDeleteEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	enqueueTunnelOf(q, e.Object)
}

func (ingressTunnels) Generic(_ context.Context, e ctrlevent.TypedGenericEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	enqueueTunnelOf(q, e.Object)
}

// recordTunnel maps a DNS record made for a tunnel to that tunnel.
func recordTunnel(_ context.Context, o client.Object) []reconcile.Request {
	name := o.GetLabels()[translate.LabelTunnel]
	if name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
}

// tunnelsOfService maps a Service to the tunnels its Ingresses name.
func (r *Reconciler) tunnelsOfService(ctx context.Context, o client.Object) []reconcile.Request {
	ings, err := ingress.IngressesUsing(ctx, r.kube, o)
	if err != nil {
		r.log.Debug("cannot list the Ingresses of a Service", "error", err)
		return nil
	}
	seen := map[string]bool{}
	var reqs []reconcile.Request
	for _, i := range ings {
		if name := i.Annotations[v1alpha1.AnnotationTunnel]; name != "" && !seen[name] {
			seen[name] = true
			reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: i.Namespace, Name: name}})
		}
	}
	return reqs
}

// Reconciler reconciles CloudflareTunnels.
type Reconciler struct {
	batch configBatcher

	kube   client.Client
	log    logging.Logger
	record event.Recorder
}

// Reconcile drives a CloudflareTunnel towards a running tunnel.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	cr := &v1alpha1.CloudflareTunnel{}
	if err := r.kube.Get(ctx, req.NamespacedName, cr); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
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
	cr.Status.ObservedGeneration = cr.Generation
	if uerr := r.kube.Status().Update(ctx, cr); uerr != nil {
		return errors.SilentlyRequeueOnConflict(reconcile.Result{}, errors.Wrap(uerr, "cannot update status"))
	}
	return res, err
}

// apply converges the owned objects and computes the conditions.
func (r *Reconciler) apply(ctx context.Context, cr *v1alpha1.CloudflareTunnel) (reconcile.Result, error) {
	pcRef, err := r.applyProviderConfig(ctx, cr)
	if err != nil {
		return reconcile.Result{}, err
	}
	tun, hold, err := r.applyTunnel(ctx, cr, pcRef)
	if err != nil {
		return reconcile.Result{}, err
	}
	res, err := r.applyChildren(ctx, cr, tun)
	if hold > 0 && err == nil && (res.RequeueAfter == 0 || hold < res.RequeueAfter) {
		res.RequeueAfter = hold // a held-back configuration change
	}
	return res, err
}

// applyChildren converges the token Secret's consumers (Deployment, PDB)
// and computes the conditions.
func (r *Reconciler) applyChildren(ctx context.Context, cr *v1alpha1.CloudflareTunnel, tun *ztv1alpha1.Tunnel) (reconcile.Result, error) {
	cr.Status.TunnelID = meta.GetExternalName(tun)
	cr.Status.Connections = tun.Status.AtProvider.Connections
	tunnelReady := tun.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue

	token, err := r.token(ctx, cr)
	if err != nil {
		return reconcile.Result{}, err
	}
	if len(token) == 0 {
		reason, msg := ReasonWaitingForToken, "waiting for the Tunnel to publish its run token to Secret "+TokenSecretName(cr)
		switch {
		case mr.IsTakenMessage(tun.GetCondition(xpv2.TypeSynced).Message):
			// It will not resolve itself, and the name cannot be changed.
			reason, msg = ReasonTunnelNameTaken, fmt.Sprintf("the Cloudflare tunnel name %q is taken: %s. spec.tunnelName is immutable: delete this CloudflareTunnel and create it again with another tunnelName; or, if that tunnel is this cluster's own from before a rebuild, set spec.adoptByName: true", TunnelName(cr), conditionMessage(tun))
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

	dep, err := r.applyDeployment(ctx, cr, TokenChecksum(token))
	if err != nil {
		return reconcile.Result{}, err
	}
	if err := r.applyPDB(ctx, cr); err != nil {
		return reconcile.Result{}, err
	}

	depCond := DeploymentCondition(dep, Replicas(cr))
	cr.SetConditions(depCond)
	cr.SetConditions(ReadyCondition(TunnelState{Ready: tunnelReady, Synced: tun.GetCondition(xpv2.TypeSynced), Message: conditionMessage(tun)}, depCond, Replicas(cr), cr.Status.Connections))
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
}

// ReadyCondition combines the tunnel, the Deployment and Cloudflare's view
// of the connections into one answer, saying why not. Ready means serving:
// a tunnel scaled to zero, or one the provider cannot reach Cloudflare for
// (credentials gone, endpoint unreachable), is not.
func ReadyCondition(tun TunnelState, dep xpv2.Condition, replicas int32, connections int) xpv2.Condition {
	switch {
	case !tun.Ready:
		return cond(xpv2.TypeReady, false, ReasonTunnelNotReady, "the Tunnel is not ready: "+tun.Message)
	case tun.Synced.Status == corev1.ConditionFalse:
		return cond(xpv2.TypeReady, false, ReasonTunnelNotSynced, "the provider cannot reconcile the Tunnel with Cloudflare, so what Cloudflare serves is unknown and changes do not reach it: "+tun.Message)
	case dep.Status != corev1.ConditionTrue:
		return cond(xpv2.TypeReady, false, dep.Reason, dep.Message)
	case replicas == 0:
		return cond(xpv2.TypeReady, false, ReasonScaledToZero, "cloudflared is scaled to zero; the tunnel serves no traffic")
	case connections == 0:
		return cond(xpv2.TypeReady, false, ReasonNotConnected, "cloudflared is running but Cloudflare reports no connections yet")
	default:
		return cond(xpv2.TypeReady, true, ReasonConnected, fmt.Sprintf("%d connections to Cloudflare's edge", connections))
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
// including its remote configuration (the public rules of its Ingresses).
//
// A configuration change within ConfigBatchWindow of the previous one is held
// back; the returned duration says when to come back and write it.
func (r *Reconciler) applyTunnel(ctx context.Context, cr *v1alpha1.CloudflareTunnel, pcRef *xpv2.ProviderConfigReference) (*ztv1alpha1.Tunnel, time.Duration, error) {
	tun := &ztv1alpha1.Tunnel{ObjectMeta: metav1.ObjectMeta{Namespace: cr.Namespace, Name: cr.Name}}
	if err := r.kube.Get(ctx, client.ObjectKeyFromObject(tun), tun); client.IgnoreNotFound(err) != nil {
		return nil, 0, errors.Wrap(err, "cannot get Tunnel")
	}
	if meta.WasDeleted(tun) {
		hold, err := r.releaseDeletedTunnel(ctx, cr, tun)
		return tun, hold, err
	}
	if tun.CreationTimestamp.IsZero() && cr.Status.TunnelID != "" {
		// The token Secret of a Tunnel deleted by hand belongs to the gone
		// Tunnel; its replacement can publish only once it is gone (the
		// garbage collector's job, done here so the replacement need not
		// wait for it).
		if err := r.deleteStaleToken(ctx, cr); err != nil {
			return nil, 0, err
		}
	}
	rules, err := r.publicRules(ctx, cr, tun.Spec.ForProvider.Config)
	if err != nil {
		return nil, 0, err
	}
	var hold time.Duration
	op, err := controllerutil.CreateOrUpdate(ctx, r.kube, tun, func() error {
		// This controller is the only writer of the tunnel's remote
		// configuration: the public rules of every Ingress on it. Once it
		// has written one, it keeps it (down to the bare catch-all).
		if len(rules) > 0 || tun.Spec.ForProvider.Config != nil {
			want := translate.TunnelConfig(rules...)
			switch current := tun.Spec.ForProvider.Config; {
			case current == nil:
				r.batch.hold(cr.UID, 0) // the first configuration goes out at once
				tun.Spec.ForProvider.Config = want
			case !equality.Semantic.DeepEqual(current, want):
				if hold = r.batch.hold(cr.UID, ConfigBatchWindow); hold == 0 {
					tun.Spec.ForProvider.Config = want
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
		tun.Spec.AdoptByName = cr.Spec.AdoptByName
		tun.Spec.ProviderConfigReference = pcRef
		tun.Spec.ManagementPolicies = tunnelPolicies(cr)
		tun.Spec.WriteConnectionSecretToReference = &xpv2.LocalSecretReference{Name: TokenSecretName(cr)}
		return controllerutil.SetControllerReference(cr, tun, r.kube.Scheme())
	})
	if err != nil {
		return nil, 0, errors.Wrap(err, "cannot apply Tunnel")
	}
	r.recordOp(cr, op, "Tunnel", tun.Name)
	return tun, hold, nil
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

func (r *Reconciler) applyDeployment(ctx context.Context, cr *v1alpha1.CloudflareTunnel, checksum string) (*appsv1.Deployment, error) {
	want := DesiredDeployment(cr, checksum)
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: want.Namespace, Name: want.Name}}
	var generation int64
	op, err := controllerutil.CreateOrUpdate(ctx, r.kube, dep, func() error {
		generation = dep.Generation
		if owner := metav1.GetControllerOf(dep); owner != nil && owner.UID != cr.UID {
			return errors.Errorf("Deployment %s already exists and is controlled by %s %s", dep.Name, owner.Kind, owner.Name)
		}
		dep.Labels = want.Labels
		if dep.CreationTimestamp.IsZero() {
			dep.Spec.Selector = want.Spec.Selector // immutable once created
		}
		dep.Spec.Replicas = want.Spec.Replicas
		dep.Spec.Strategy = want.Spec.Strategy
		dep.Spec.Template = want.Spec.Template
		return controllerutil.SetControllerReference(cr, dep, r.kube.Scheme())
	})
	if err != nil {
		return nil, errors.Wrap(err, "cannot apply cloudflared Deployment")
	}
	if op == controllerutil.OperationResultUpdated && dep.Generation == generation {
		// Only fields the API server defaults differed: nothing changed.
		op = controllerutil.OperationResultNone
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
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: want.Namespace, Name: want.Name}}
	op, err := controllerutil.CreateOrUpdate(ctx, r.kube, pdb, func() error {
		pdb.Labels = want.Labels
		pdb.Spec = want.Spec
		return controllerutil.SetControllerReference(cr, pdb, r.kube.Scheme())
	})
	r.recordOp(cr, op, "PodDisruptionBudget", pdb.Name)
	return errors.Wrap(err, "cannot apply PodDisruptionBudget")
}

func (r *Reconciler) recordOp(cr *v1alpha1.CloudflareTunnel, op controllerutil.OperationResult, kind, name string) {
	switch op {
	case controllerutil.OperationResultCreated:
		r.record.Event(cr, event.Normal(event.Reason("Created"+kind), fmt.Sprintf("Created %s %s", kind, name)))
	case controllerutil.OperationResultUpdated:
		r.record.Event(cr, event.Normal(event.Reason("Updated"+kind), fmt.Sprintf("Updated %s %s", kind, name)))
	}
}

// publicRules translates every live Ingress on this tunnel and collects its
// public rules (pure translation; the Ingress controller reports problems).
// An Ingress with a problem keeps the rules it had, so a typo does not take
// a working site offline.
func (r *Reconciler) publicRules(ctx context.Context, cr *v1alpha1.CloudflareTunnel, current *ztv1alpha1.TunnelConfig) ([][]ztv1alpha1.IngressRule, error) {
	l := &networkingv1.IngressList{}
	if err := r.kube.List(ctx, l, client.InNamespace(cr.Namespace)); err != nil {
		return nil, errors.Wrap(err, "cannot list Ingresses")
	}
	classes := &networkingv1.IngressClassList{}
	if err := r.kube.List(ctx, classes); err != nil {
		return nil, errors.Wrap(err, "cannot list IngressClasses")
	}
	svcs := &corev1.ServiceList{}
	if err := r.kube.List(ctx, svcs, client.InNamespace(cr.Namespace)); err != nil {
		return nil, errors.Wrap(err, "cannot list Services")
	}
	services := translate.ServicesByName(svcs)
	made, err := r.madeFor(ctx, cr)
	if err != nil {
		return nil, err
	}
	held, err := r.heldIngresses(ctx, cr, l.Items, made)
	if err != nil {
		return nil, err
	}
	refused := refusedRecords(made.records)
	var out [][]ztv1alpha1.IngressRule
	for i := range l.Items {
		ing := &l.Items[i]
		if meta.WasDeleted(ing) || !ingress.Ours(ing, classes.Items) {
			continue
		}
		if held[ing.Name] {
			// It names a tunnel that does not exist: keep what it had here.
			out = append(out, rulesOf(ing, made.records, current))
			continue
		}
		if ing.Annotations[v1alpha1.AnnotationTunnel] != cr.Name {
			continue
		}
		res := translate.Translate(translate.Input{Ingress: ing, Tunnel: translate.Tunnel{Name: cr.Name}, Services: services})
		if len(res.Problems) > 0 {
			out = append(out, rulesOf(ing, made.records, current))
			continue
		}
		// A hostname an older Ingress claims is that Ingress's: the loser
		// was told it does not route it, so it gets no rule for it either.
		lost, err := ingress.LostHostnames(ctx, r.kube, ing, res.Hostnames)
		if err != nil {
			return nil, err
		}
		var rules []ztv1alpha1.IngressRule
		for _, rule := range res.Rules {
			if rule.Hostname != nil {
				if _, l := lost[cloudflare.NormalizeHostname(*rule.Hostname)]; l {
					continue
				}
				if refused[translate.LabelValue(ing.Name)][strings.ToLower(*rule.Hostname)] {
					continue // its DNS is someone else's: it is not ours to serve
				}
			}
			rules = append(rules, rule)
		}
		if len(rules) > 0 {
			out = append(out, rules)
		}
	}
	return out, nil
}

// made is what the Ingress controller made for this tunnel: which Ingresses
// (by label value) still hold managed resources on it, and its DNS records.
// One listing of each kind serves every Ingress of a reconcile.
type made struct {
	ingresses map[string]bool
	records   []dnsv1alpha1.DNSRecord
}

func (r *Reconciler) madeFor(ctx context.Context, cr *v1alpha1.CloudflareTunnel) (made, error) {
	onThis := client.MatchingLabels{translate.LabelTunnel: translate.LabelValue(cr.Name)}
	routes, recs := &ztv1alpha1.HostnameRouteList{}, &dnsv1alpha1.DNSRecordList{}
	for _, l := range []client.ObjectList{routes, recs} {
		if err := r.kube.List(ctx, l, client.InNamespace(cr.Namespace), onThis); err != nil {
			return made{}, errors.Wrap(err, "cannot list the managed resources made for this tunnel")
		}
	}
	m := made{ingresses: map[string]bool{}, records: recs.Items}
	for _, rt := range routes.Items {
		m.ingresses[rt.Labels[translate.LabelIngress]] = true
	}
	for _, rec := range recs.Items {
		m.ingresses[rec.Labels[translate.LabelIngress]] = true
	}
	return m, nil
}

// heldIngresses are the Ingresses, by name, that still have managed
// resources made for this tunnel but name a CloudflareTunnel that does not
// exist: the Ingress controller leaves what they made alone until they name
// a valid tunnel, and so does this one. (An Ingress that names another
// existing tunnel has moved; one that names none has let go.)
func (r *Reconciler) heldIngresses(ctx context.Context, cr *v1alpha1.CloudflareTunnel, ings []networkingv1.Ingress, m made) (map[string]bool, error) {
	held := map[string]bool{}
	for _, ing := range ings {
		name := strings.TrimSpace(ing.Annotations[v1alpha1.AnnotationTunnel])
		if name == cr.Name || name == "" || !m.ingresses[translate.LabelValue(ing.Name)] {
			continue
		}
		err := r.kube.Get(ctx, types.NamespacedName{Namespace: cr.Namespace, Name: name}, &v1alpha1.CloudflareTunnel{})
		if kerrors.IsNotFound(err) {
			held[ing.Name] = true
		} else if err != nil {
			return nil, errors.Wrap(err, "cannot get CloudflareTunnel")
		}
	}
	return held, nil
}

// refusedRecords are, by Ingress label, the names of this tunnel's DNS
// records that Cloudflare refused before ever creating them (a record of
// the same name that another owner holds, no zone): their hostnames do not
// reach this tunnel, so their rules would only claim what is not ours. A
// record that exists (it has an external-name) keeps its rule through
// passing errors.
func refusedRecords(recs []dnsv1alpha1.DNSRecord) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for i := range recs {
		rec := &recs[i]
		if !Refused(rec) {
			continue
		}
		ing := rec.Labels[translate.LabelIngress]
		if out[ing] == nil {
			out[ing] = map[string]bool{}
		}
		out[ing][strings.ToLower(rec.Spec.ForProvider.Name)] = true
	}
	return out
}

// Refused says whether Cloudflare refused a DNS record that was never
// created: no external-name yet, and Synced=False.
func Refused(rec *dnsv1alpha1.DNSRecord) bool {
	return meta.GetExternalName(rec) == "" && rec.GetCondition(xpv2.TypeSynced).Status == corev1.ConditionFalse
}

// rulesOf are the rules of the current configuration for the hostnames the
// Ingress publishes now through this tunnel (its DNS records among recs).
func rulesOf(ing *networkingv1.Ingress, recs []dnsv1alpha1.DNSRecord, current *ztv1alpha1.TunnelConfig) []ztv1alpha1.IngressRule {
	if current == nil {
		return nil
	}
	hosts := map[string]bool{}
	for _, rec := range recs {
		if rec.Labels[translate.LabelIngress] == translate.LabelValue(ing.Name) {
			hosts[strings.ToLower(rec.Spec.ForProvider.Name)] = true
		}
	}
	var kept []ztv1alpha1.IngressRule
	for _, rule := range current.Ingress {
		if rule.Hostname != nil && hosts[strings.ToLower(*rule.Hostname)] {
			kept = append(kept, rule)
		}
	}
	return kept
}

// referencingIngresses are the Ingresses in cr's namespace exposed through it.
func (r *Reconciler) referencingIngresses(ctx context.Context, cr *v1alpha1.CloudflareTunnel) ([]string, error) {
	l := &networkingv1.IngressList{}
	if err := r.kube.List(ctx, l, client.InNamespace(cr.Namespace)); err != nil {
		return nil, errors.Wrap(err, "cannot list Ingresses")
	}
	m, err := r.madeFor(ctx, cr)
	if err != nil {
		return nil, err
	}
	held, err := r.heldIngresses(ctx, cr, l.Items, m)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, i := range l.Items {
		if (i.Annotations[v1alpha1.AnnotationTunnel] == cr.Name || held[i.Name]) && i.DeletionTimestamp.IsZero() {
			names = append(names, i.Name)
		}
	}
	sort.Strings(names)
	return names, nil
}

// delete tears down in the order that lets Cloudflare agree: no Ingress may
// still use the tunnel; cloudflared goes first (Cloudflare refuses to delete
// a tunnel with live connectors), then the Tunnel MR, then the Secret and
// ProviderConfig.
func (r *Reconciler) delete(ctx context.Context, cr *v1alpha1.CloudflareTunnel) (reconcile.Result, error) {
	if !controllerutil.ContainsFinalizer(cr, finalizer) {
		return reconcile.Result{}, nil
	}
	users, err := r.referencingIngresses(ctx, cr)
	if err != nil {
		return reconcile.Result{}, err
	}
	if len(users) > 0 {
		msg := fmt.Sprintf("deletion waits: Ingresses %s still use this tunnel; remove their %s annotation or delete them", strings.Join(users, ", "), v1alpha1.AnnotationTunnel)
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
