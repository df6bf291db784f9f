// Package cloudflaretunnel reconciles CloudflareTunnels: it writes a Tunnel
// managed resource, waits for the run token it publishes, and runs a
// hardened cloudflared Deployment from it. It never calls Cloudflare itself.
package cloudflaretunnel

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/common"
	dnsv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/dns/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/connector"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/metrics"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
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

// Reconciler reconciles CloudflareTunnels.
type Reconciler struct {
	batch configBatcher
	// rules remembers which rules each hostname was told are published,
	// so that a write for one hostname does not re-answer the others.
	rules publishedRules
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
		// A patch of the finalizers alone: an update would write back the
		// whole spec, and a request stored as the zero time reads back as
		// null, which the API server refuses (rotation.Earliest) — the
		// tunnel would wait for a finalizer it never gets, saying nothing.
		before := client.MergeFromWithOptions(cr.DeepCopy(), client.MergeFromWithOptimisticLock{})
		controllerutil.AddFinalizer(cr, finalizer)
		if err := r.kube.Patch(ctx, cr, before); err != nil {
			return reconcile.Result{}, errors.Wrap(err, "cannot add finalizer")
		}
	}

	res, err := r.apply(ctx, cr)
	if err == nil {
		err = r.writeResourceRefs(ctx, cr)
	}
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
	// onTheirWay counts the held hostnames still getting their rules; it
	// sets the batch window (configWindow).
	onTheirWay int
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
	phs, leaving, err := r.publishedAndLeaving(ctx, cr)
	if err != nil {
		return reconcile.Result{}, err
	}
	cl := claims(cr, phs)
	pub := publication{Decision: publish.Decide(cl), claims: cl}
	pub.caPools = caPools(cr, phs, pub.Decision)
	pub.onTheirWay = onTheirWay(cr, phs, pub.Decision, time.Now())
	if pub.carried, err = r.carriedOver(ctx, cr); err != nil {
		return reconcile.Result{}, err
	}
	tun, want, hold, err := r.applyTunnel(ctx, cr, pcRef, pub)
	if err != nil {
		return reconcile.Result{}, err
	}
	if !meta.WasDeleted(tun) {
		version := configVersion(tun, want)
		if err := r.answer(ctx, cr, phs, pub.Decision, version); err != nil {
			return reconcile.Result{}, err
		}
		if err := r.answerLeaving(ctx, cr, leaving, version); err != nil {
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
	cr.Status.ProviderConfigRef = tun.Spec.ProviderConfigReference.DeepCopy()
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
// back (a longer window while many hostnames are on their way, unless it
// takes an open rule off: configWindow); the returned duration says when to
// come back and write it.
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
				if hold = r.batch.hold(cr.UID, configWindow(r.window, pub.onTheirWay, closesARule(current, want))); hold == 0 {
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
