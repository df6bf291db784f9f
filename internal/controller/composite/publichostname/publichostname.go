// Package publichostname reconciles PublicHostnames: it resolves a hostname's
// spec into the rules its CloudflareTunnel publishes (the tunnel aggregates
// them), makes the hostname's DNSRecord managed resource, and reports both.
// It writes only Kubernetes objects; the managed resources talk to
// Cloudflare, and the CloudflareTunnel alone writes the tunnel's
// configuration.
package publichostname

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/handshake"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/handshake/target"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/metrics"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sharing"
)

// Reasons of a PublicHostname's conditions that only this package decides
// on (the shared types and reasons are in apis/tunnels/v1alpha1, and those
// the hand-shake's readers decide on in package handshake).
const (
	ReasonValid xpv2.ConditionReason = "Valid"

	// What Valid says a hostname waits for: the CloudflareTunnel reads
	// them too (whether a hostname is on its way), so they are the
	// hand-shake's.
	ReasonWaitingForService           = handshake.ReasonWaitingForService
	ReasonWaitingForSecret            = handshake.ReasonWaitingForSecret
	ReasonWaitingForAccessPolicy      = handshake.ReasonWaitingForAccessPolicy
	ReasonWaitingForAccessApplication = handshake.ReasonWaitingForAccessApplication

	ReasonTunnelNotFound xpv2.ConditionReason = "TunnelNotFound"
	ReasonTunnelDeleting xpv2.ConditionReason = "TunnelDeleting"
	ReasonDNSNotReady    xpv2.ConditionReason = "RecordNotReady"
	ReasonDNSNone        xpv2.ConditionReason = "NotManaged"
	ReasonNotAccepted    xpv2.ConditionReason = "NotAccepted"
	ReasonNoRules        xpv2.ConditionReason = "NoRules"
	ReasonReconcileError xpv2.ConditionReason = "ReconcileError"
	// ReasonDeleting: the hostname is being deleted and its finalizer
	// waits for its DNS record to leave Cloudflare.
	ReasonDeleting xpv2.ConditionReason = "Deleting"
	// ReasonUnwanted: the source that made the hostname no longer wants
	// it (v1alpha1.AnnotationUnwantedSince): it publishes no rules, and
	// the source deletes it after a short grace unless it wants it again.
	ReasonUnwanted        xpv2.ConditionReason = "Unwanted"
	ReasonTunnelNotShared xpv2.ConditionReason = sharing.ReasonTunnelNotShared

	finalizer = "tunnels.cloudflare.com/publichostname"
)

// Options of the controller, set at setup.
type Options struct {
	// ClusterDomain of Service origins' DNS names; "" is cluster.local.
	ClusterDomain string
	// Metrics count the hostnames Access guards and those waiting for it;
	// nil counts none.
	Metrics *metrics.Metrics
}

const secretIndex = "tunnels.cloudflare.com/secret"

const serviceIndex = "tunnels.cloudflare.com/service"

// Reconciler reconciles PublicHostnames.
type Reconciler struct {
	kube          client.Client
	log           logging.Logger
	record        event.Recorder
	clusterDomain string
	metrics       *metrics.Metrics
}

// Reconcile converges a PublicHostname's rules and DNS record.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	ph := &v1alpha1.PublicHostname{}
	if err := r.kube.Get(ctx, req.NamespacedName, ph); err != nil {
		if kerrors.IsNotFound(err) {
			r.metrics.ForgetHostname(req.NamespacedName)
		}
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if meta.WasDeleted(ph) {
		r.metrics.ForgetHostname(req.NamespacedName)
		return r.release(ctx, ph)
	}
	if !controllerutil.ContainsFinalizer(ph, finalizer) {
		controllerutil.AddFinalizer(ph, finalizer)
		if err := r.kube.Update(ctx, ph); err != nil {
			return reconcile.Result{}, errors.Wrap(err, "cannot add finalizer")
		}
	}
	res, err := r.apply(ctx, ph)
	if err == nil {
		err = r.writeResourceRefs(ctx, ph)
	}
	if err != nil {
		if kerrors.IsConflict(err) {
			return reconcile.Result{Requeue: true}, nil
		}
		r.record.Event(ph, event.Warning(event.Reason(ReasonReconcileError), err))
		ph.SetConditions(cond(xpv2.TypeReady, false, ReasonReconcileError, err.Error()))
	}
	ph.Status.ObservedGeneration = ph.Generation
	if uerr := r.kube.Status().Update(ctx, ph); uerr != nil {
		return errors.SilentlyRequeueOnConflict(reconcile.Result{}, errors.Wrap(uerr, "cannot update status"))
	}
	r.metrics.SetHostnameAccess(req.NamespacedName, AccessState(ph))
	return res, err
}

// apply resolves the rules, converges the DNS record and computes the
// conditions.
func (r *Reconciler) apply(ctx context.Context, ph *v1alpha1.PublicHostname) (reconcile.Result, error) {
	if _, unwanted := ph.Annotations[v1alpha1.AnnotationUnwantedSince]; unwanted {
		park(ph)
		return reconcile.Result{}, nil
	}
	ref := handshake.Tunnel(ph)
	tgt, err := target.Resolve(ctx, r.kube, ph.Namespace, sharing.Ref{Namespace: ref.Namespace, Name: ref.Name})
	refusal, refused := target.Refused(err)
	if err != nil && !refused {
		return reconcile.Result{}, err
	}
	switch {
	case refused && refusal.Reason == target.ReasonNotFound:
		// A typo must not take a working hostname down: what it has (its
		// DNS record, its rules on the tunnel that published it) stays
		// until it names a tunnel that exists.
		msg := fmt.Sprintf("spec.tunnelRef: %s; nothing is changed: whatever this hostname already publishes stays as it is until it names a tunnel that exists", refusal.Message)
		r.warnOnce(ph, xpv2.TypeReady, ReasonTunnelNotFound, msg)
		ph.SetConditions(cond(v1alpha1.TypeAccepted, false, ReasonTunnelNotFound, msg), cond(xpv2.TypeReady, false, ReasonTunnelNotFound, msg))
		return reconcile.Result{RequeueAfter: time.Minute}, nil
	case refused && refusal.Reason == target.ReasonNotShared:
		// Policy: the tunnel publishes nothing of this namespace's, so
		// its DNS record must not point there either.
		return reconcile.Result{RequeueAfter: time.Minute}, r.unpublish(ctx, ph, refusal.Message)
	}
	valid, ahead, err := r.resolve(ctx, ph, tgt)
	if err != nil {
		return reconcile.Result{}, err
	}
	if refused { // target.ReasonDeleting
		msg := fmt.Sprintf("CloudflareTunnel %s is being deleted: nothing new is published through it; name another tunnel", ref.Name)
		ph.SetConditions(valid...)
		ph.SetConditions(cond(xpv2.TypeReady, false, ReasonTunnelDeleting, msg))
		return reconcile.Result{RequeueAfter: 30 * time.Second}, nil
	}
	dns, err := r.applyEdge(ctx, ph, tgt, ahead)
	if err != nil {
		return reconcile.Result{}, err
	}
	if err := r.dropUnwanted(ctx, ph); err != nil {
		return reconcile.Result{}, err
	}
	if handshake.DNSRefused(dns) {
		// The hostname does not reach this tunnel (its DNS is someone
		// else's, or no zone holds it): its rules would only claim what
		// is not ours.
		ph.Status.Rules = nil
	}
	for _, v := range valid {
		ph.SetConditions(ValidCondition(v, dns))
	}
	ph.SetConditions(dns, handshake.AcceptedCondition(ph))
	ph.SetConditions(handshake.ReadyCondition(ph))
	if ph.GetCondition(xpv2.TypeReady).Status != corev1.ConditionTrue {
		return reconcile.Result{RequeueAfter: 30 * time.Second}, nil
	}
	return reconcile.Result{}, nil
}

// park withdraws the rules of a hostname its source no longer wants, at
// once, as a deletion would; its DNS record, Access application and claim
// on the tunnel stay as they are, for the source to take it back as it is
// or delete it once its grace has passed.
func park(ph *v1alpha1.PublicHostname) {
	ph.Status.Rules, ph.Status.CAPools = nil, nil
	msg := fmt.Sprintf("its source no longer wants hostname %s: it publishes no rules; its DNS record stays until the source deletes it after a short grace, or wants it again", ph.Spec.Hostname)
	ph.SetConditions(cond(xpv2.TypeReady, false, ReasonUnwanted, msg))
}

// unpublish takes the hostname off a tunnel that does not allow its
// namespace: its DNS record goes, and the answer it had is forgotten.
func (r *Reconciler) unpublish(ctx context.Context, ph *v1alpha1.PublicHostname, why string) error {
	have, err := r.records(ctx, ph)
	if err != nil {
		return err
	}
	for i := range have {
		if err := r.deleteRecord(ctx, ph, &have[i]); err != nil {
			return err
		}
	}
	if _, err := r.releaseLoadBalancing(ctx, ph); err != nil {
		return err
	}
	msg := fmt.Sprintf("spec.tunnelRef: %s; the hostname is not published through it", why)
	r.warnOnce(ph, xpv2.TypeReady, ReasonTunnelNotShared, msg)
	ph.Status.Tunnel = nil
	ph.SetConditions(cond(v1alpha1.TypeAccepted, false, ReasonTunnelNotShared, msg), cond(v1alpha1.TypeDNSReady, false, ReasonTunnelNotShared, msg), cond(xpv2.TypeReady, false, ReasonTunnelNotShared, msg))
	return nil
}

// resolve turns the spec into rules. A spec that is not valid, or whose
// origins the tunnel's provider config does not allow, keeps the rules of
// the last one that was, so bad input loses nothing (unless the config no
// longer allows those either); resolve reports it on Valid. A spec that
// resolves returns its Valid condition instead, for apply to set once it
// knows whether the rules are published (ValidCondition).
//
// originEnv reads what resolving the hostname's Service origins depends
// on: the Services they name, and the EndpointSlices of the headless ones.
func (r *Reconciler) originEnv(ctx context.Context, ph *v1alpha1.PublicHostname) (publish.Env, error) {
	env := publish.Env{Namespace: ph.Namespace, ClusterDomain: r.clusterDomain, TunnelNamespace: handshake.Tunnel(ph).Namespace,
		Services: map[string]*corev1.Service{}, EndpointSlices: map[string][]discoveryv1.EndpointSlice{}}
	for _, s := range ServiceOrigins(ph.Spec) {
		if env.Services[s.Name] != nil {
			continue
		}
		svc := &corev1.Service{}
		err := r.kube.Get(ctx, types.NamespacedName{Namespace: ph.Namespace, Name: s.Name}, svc)
		if kerrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return publish.Env{}, errors.Wrap(err, "cannot get Service")
		}
		env.Services[s.Name] = svc
		if svc.Spec.ClusterIP != corev1.ClusterIPNone {
			continue
		}
		l := &discoveryv1.EndpointSliceList{}
		if err := r.kube.List(ctx, l, client.InNamespace(ph.Namespace), client.MatchingLabels{discoveryv1.LabelServiceName: s.Name}); err != nil {
			return publish.Env{}, errors.Wrap(err, "cannot list EndpointSlices")
		}
		env.EndpointSlices[s.Name] = l.Items
	}
	return env, nil
}

// ahead says the spec is complete but for the Access application, which
// waits for the hostname to be held: its DNS record is then made ahead of
// its rules (the tunnel answers 404 for the name meanwhile).
func (r *Reconciler) resolve(ctx context.Context, ph *v1alpha1.PublicHostname, tgt target.Target) (valid []xpv2.Condition, ahead bool, err error) {
	cft := tgt.Tunnel
	spec, accessProblem, err := r.withAccess(ctx, ph, tgt)
	if err != nil {
		return nil, false, err
	}
	spec = WithConnectorProbe(spec)
	env, err := r.originEnv(ctx, ph)
	if err != nil {
		return nil, false, err
	}
	res := publish.Rules(spec, env)
	for _, pool := range res.CAPools {
		// cloudflared starts only with every CA file it is told to use, so
		// a rule must not name one that is not there.
		if msg, err := r.checkCAPool(ctx, ph.Namespace, pool); err != nil {
			return nil, false, err
		} else if msg != "" {
			res.Rules = nil
			res.Problems = append(res.Problems, publish.Problem{Field: "spec.originRequest.caPoolSecretRef", Message: msg, Waiting: true, WaitingFor: publish.WaitingForSecret})
		}
	}
	unprotected := res.Rules
	if accessProblem != nil {
		ahead = accessProblem.WaitingFor == publish.WaitingForHostname && len(res.Problems) == 0
		// Fails closed: without its application the spec publishes
		// nothing, and rules published before it asked for Access go.
		res.Rules, res.Problems = nil, append([]publish.Problem{*accessProblem}, res.Problems...)
		if ptr.Deref(ph.Spec.Access.Required, true) && !Protected(ph.Status.Rules) {
			ph.Status.Rules, ph.Status.CAPools = nil, nil
		}
	}
	allowed, err := r.originGuard(ctx, ph, cft)
	if err != nil {
		return nil, false, err
	}
	if ahead {
		refused, err := allowed(unprotected)
		if err != nil {
			return nil, false, err
		}
		ahead = refused == nil
	}
	if refused, err := allowed(ph.Status.Rules); err != nil {
		return nil, false, err
	} else if refused != nil {
		// The config no longer allows what was published (or a Service
		// it names now leads elsewhere): it goes, rather than stop the
		// tunnel's whole configuration at the handshake.Tunnel's own guardrail.
		ph.Status.Rules, ph.Status.CAPools = nil, nil
	}
	if len(res.Problems) == 0 {
		if refused, err := allowed(res.Rules); err != nil {
			return nil, false, err
		} else if refused != nil {
			r.refuseOrigin(ph, refused)
			return nil, false, nil
		}
		ph.Status.Rules = res.Rules
		ph.Status.CAPools = res.CAPools
		ph.Status.RulesGeneration = ph.Generation
		return []xpv2.Condition{cond(v1alpha1.TypeValid, true, ReasonValid, fmt.Sprintf("%s for %s", publish.RuleCount(len(res.Rules)), ph.Spec.Hostname))}, false, nil
	}
	reason, msgs := ProblemReason(res.Problems), make([]string, 0, len(res.Problems))
	for _, p := range res.Problems {
		msgs = append(msgs, p.String())
	}
	msg := strings.Join(msgs, "; ")
	switch {
	case len(ph.Status.Rules) > 0 && accessProblem != nil && Protected(ph.Status.Rules):
		msg += "; the last rules, each with its Access check, stay published"
	case len(ph.Status.Rules) > 0:
		msg += "; the rules of the last valid spec stay published"
	default:
		msg += "; nothing is published until this is fixed"
	}
	r.warnOnce(ph, v1alpha1.TypeValid, reason, msg)
	ph.SetConditions(cond(v1alpha1.TypeValid, false, reason, msg))
	return nil, ahead, nil
}

// warnOnce records a Warning unless the condition already says it.
func (r *Reconciler) warnOnce(ph *v1alpha1.PublicHostname, t xpv2.ConditionType, reason xpv2.ConditionReason, msg string) {
	if c := ph.GetCondition(t); c.Reason == reason && c.Message == msg {
		return
	}
	r.record.Event(ph, event.Warning(event.Reason(reason), errors.New(msg)))
}

// release deletes the DNS record and lets go once Cloudflare confirms (the
// record's own finalizer waits for that). The tunnel drops the hostname's
// rules as soon as it sees the deletion.
func (r *Reconciler) release(ctx context.Context, ph *v1alpha1.PublicHostname) (reconcile.Result, error) {
	if !controllerutil.ContainsFinalizer(ph, finalizer) {
		return reconcile.Result{}, nil
	}
	have, err := r.records(ctx, ph)
	if err != nil {
		return reconcile.Result{}, err
	}
	for i := range have {
		if err := r.deleteRecord(ctx, ph, &have[i]); err != nil {
			return reconcile.Result{}, err
		}
	}
	if len(have) > 0 {
		// Ready said the hostname was published; it no longer is, and the
		// finalizer waits on what is named here.
		names := make([]string, 0, len(have))
		for i := range have {
			names = append(names, have[i].Name)
		}
		if err := r.deleting(ctx, ph, DeletingCondition(handshake.TunnelName(ph), names).Message); err != nil {
			return reconcile.Result{}, err
		}
		// Each one's deletion brings this back (the watch on what it
		// owns); this is only a safety net. Every 2 s, 1,000 sources
		// being deleted took most of the reconcile rate the managed
		// resources needed to delete.
		return reconcile.Result{RequeueAfter: handshake.ReleaseRecheck}, nil
	}
	if gone, err := r.releaseLoadBalancing(ctx, ph); err != nil || !gone {
		if err == nil {
			err = r.deleting(ctx, ph, fmt.Sprintf("being deleted: its rules leave CloudflareTunnel %s's configuration; waiting for its LoadBalancer, LoadBalancerPool and LoadBalancerMonitor %s to be deleted from Cloudflare", handshake.TunnelName(ph), LoadBalancingName(ph)))
		}
		return reconcile.Result{RequeueAfter: handshake.ReleaseRecheck}, err
	}
	// The Access application goes after the DNS record and the rules:
	// while a rule carries its audience, it must be an application's.
	if wait, err := r.awaitUnpublishing(ctx, ph); err != nil || wait {
		if err == nil {
			err = r.deleting(ctx, ph, fmt.Sprintf("being deleted: waiting for CloudflareTunnel %s to take its rules out of the configuration Cloudflare holds before its AccessApplication goes", handshake.TunnelName(ph)))
		}
		return reconcile.Result{RequeueAfter: handshake.ReleaseRecheck}, err
	}
	if gone, err := r.releaseApplication(ctx, ph); err != nil || !gone {
		return reconcile.Result{RequeueAfter: handshake.ReleaseRecheck}, err
	}
	controllerutil.RemoveFinalizer(ph, finalizer)
	return reconcile.Result{}, errors.Wrap(client.IgnoreNotFound(r.kube.Update(ctx, ph)), "cannot remove finalizer")
}

// deleting says what a PublicHostname being deleted waits for (Ready said
// it was published; it no longer is), when that changed.
func (r *Reconciler) deleting(ctx context.Context, ph *v1alpha1.PublicHostname, msg string) error {
	c := cond(xpv2.TypeReady, false, ReasonDeleting, msg)
	if ph.GetCondition(xpv2.TypeReady).Equal(c) {
		return nil
	}
	ph.SetConditions(c)
	return errors.Wrap(r.kube.Status().Update(ctx, ph), "cannot update status")
}
