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
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	kmeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	gwv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/common"
	dnsv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/dns/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/origin"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/index"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/tunnelref"
	gwtranslate "github.com/context-labs/provider-cloudflare-tunnel/internal/gateway/translate"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sharing"
)

// ReleaseRecheck is how often a source (PublicHostname, Ingress,
// GatewayBinding) being deleted looks again at what it waits for, besides
// being brought back by each owned object's deletion.
const ReleaseRecheck = 30 * time.Second

// Reasons of a PublicHostname's conditions that only this package decides
// on (the shared types and reasons are in apis/tunnels/v1alpha1).
const (
	ReasonValid             xpv2.ConditionReason = "Valid"
	ReasonInvalid           xpv2.ConditionReason = "InvalidSpec"
	ReasonWaitingForService xpv2.ConditionReason = "WaitingForService"
	ReasonWaitingForSecret  xpv2.ConditionReason = "WaitingForSecret"
	ReasonTunnelNotFound    xpv2.ConditionReason = "TunnelNotFound"
	ReasonTunnelDeleting    xpv2.ConditionReason = "TunnelDeleting"
	ReasonPublished         xpv2.ConditionReason = "Published"
	ReasonDNSNotReady       xpv2.ConditionReason = "RecordNotReady"
	ReasonDNSNone           xpv2.ConditionReason = "NotManaged"
	ReasonNotAccepted       xpv2.ConditionReason = "NotAccepted"
	ReasonNoRules           xpv2.ConditionReason = "NoRules"
	ReasonReconcileError    xpv2.ConditionReason = "ReconcileError"
	// ReasonDeleting: the hostname is being deleted and its finalizer
	// waits for its DNS record to leave Cloudflare.
	ReasonDeleting        xpv2.ConditionReason = "Deleting"
	ReasonTunnelNotShared xpv2.ConditionReason = sharing.ReasonTunnelNotShared

	finalizer = "tunnels.cloudflare.com/publichostname"
)

// Options of the controller, set at setup.
type Options struct {
	// ClusterDomain of Service origins' DNS names; "" is cluster.local.
	ClusterDomain string
}

// Setup adds the PublicHostname controller.
func Setup(mgr ctrl.Manager, o controller.Options, opts Options) error {
	name := "publichostname"
	r := &Reconciler{
		kube:          mgr.GetClient(),
		log:           o.Logger.WithValues("controller", name),
		record:        event.NewAPIRecorder(mgr.GetEventRecorderFor(name)),
		clusterDomain: opts.ClusterDomain,
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(name).
		WithOptions(o.ForControllerRuntime()).
		For(&v1alpha1.PublicHostname{}).
		Owns(&dnsv1alpha1.DNSRecord{}).
		// The tunnel's ID is the DNS record's target; its deletion and
		// recreation change what the hostname waits for.
		Watches(&v1alpha1.CloudflareTunnel{}, handler.EnqueueRequestsFromMapFunc(r.onTunnel), builder.WithPredicates(tunnelref.UsersChanged())).
		Watches(&ztv1alpha1.Tunnel{}, handler.EnqueueRequestsFromMapFunc(r.onTunnel), builder.WithPredicates(tunnelref.UsersChanged())).
		// A Service's named ports resolve origins; a CA Secret appearing
		// lets a hostname that names it be published.
		Watches(&corev1.Service{}, handler.EnqueueRequestsFromMapFunc(r.onService)).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.onSecret)).
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(r.onNamespace), builder.WithPredicates(predicate.LabelChangedPredicate{})).
		// A provider config's allowed origins decide which origins are
		// published (a rare change: every hostname it may concern looks).
		Watches(&v1alpha1.ClusterProviderConfig{}, handler.EnqueueRequestsFromMapFunc(r.onConfig), builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&v1alpha1.ProviderConfig{}, handler.EnqueueRequestsFromMapFunc(r.onConfig), builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Complete(ratelimiter.NewReconciler(name, errors.WithSilentRequeueOnConflict(r), o.GlobalRateLimiter))
}

// SetupGated adds the controller once the kinds it reads and writes exist.
func SetupGated(mgr ctrl.Manager, o controller.Options, opts Options) error {
	o.Gate.Register(func() {
		if err := Setup(mgr, o, opts); err != nil {
			o.Logger.Info("Cannot set up PublicHostname controller", "error", err)
		}
	}, v1alpha1.PublicHostnameGroupVersionKind, v1alpha1.CloudflareTunnelGroupVersionKind, ztv1alpha1.TunnelGroupVersionKind, dnsv1alpha1.DNSRecordGroupVersionKind)
	return nil
}

// Index registers the PublicHostname indexes: by the tunnel they name or were
// published on, by the object that controls them, and by the Services they
// name. It must run before the
// manager starts.
func Index(mgr ctrl.Manager) error {
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(context.Background(), &v1alpha1.PublicHostname{}, TunnelIndex, tunnelsOf); err != nil {
		return errors.Wrap(err, "cannot index PublicHostnames by tunnel")
	}
	if err := idx.IndexField(context.Background(), &v1alpha1.PublicHostname{}, index.Controller, index.ControllerUID); err != nil {
		return errors.Wrap(err, "cannot index PublicHostnames by controller")
	}
	if err := idx.IndexField(context.Background(), &v1alpha1.PublicHostname{}, secretIndex, secretsOf); err != nil {
		return errors.Wrap(err, "cannot index PublicHostnames by Secret")
	}
	return errors.Wrap(idx.IndexField(context.Background(), &v1alpha1.PublicHostname{}, serviceIndex, servicesOf), "cannot index PublicHostnames by Service")
}

const secretIndex = "tunnels.cloudflare.com/secret"

func secretsOf(o client.Object) []string {
	ph, ok := o.(*v1alpha1.PublicHostname)
	if !ok || ph.Spec.OriginRequest == nil || ph.Spec.OriginRequest.CAPoolSecretRef == nil {
		return nil
	}
	return []string{ph.Spec.OriginRequest.CAPoolSecretRef.Name}
}

// TunnelIndex indexes PublicHostnames by the CloudflareTunnel they name and
// the one that last published them, as IndexKey gives it: in any namespace,
// since a tunnel may be shared.
const TunnelIndex = "tunnels.cloudflare.com/tunnel"

// IndexKey is a tunnel's key in TunnelIndex.
func IndexKey(t types.NamespacedName) string { return t.Namespace + "/" + t.Name }

// Tunnel is the CloudflareTunnel a PublicHostname names.
func Tunnel(ph *v1alpha1.PublicHostname) types.NamespacedName {
	ns := ph.Spec.TunnelRef.Namespace
	if ns == "" {
		ns = ph.Namespace
	}
	return types.NamespacedName{Namespace: ns, Name: ph.Spec.TunnelRef.Name}
}

// TunnelName is how a PublicHostname's answer names its tunnel: by name in
// its own namespace, "<namespace>/<name>" in another.
func TunnelName(ph *v1alpha1.PublicHostname) string { return AnswerName(Tunnel(ph), ph.Namespace) }

// AnswerName is how a tunnel names itself in the answer to a PublicHostname
// of namespace ns.
func AnswerName(t types.NamespacedName, ns string) string {
	if t.Namespace == ns {
		return t.Name
	}
	return t.Namespace + "/" + t.Name
}

// Answered is the tunnel that last answered a PublicHostname.
func Answered(ph *v1alpha1.PublicHostname) types.NamespacedName {
	if ns, name, ok := strings.Cut(ph.Status.Tunnel.Tunnel, "/"); ok {
		return types.NamespacedName{Namespace: ns, Name: name}
	}
	return types.NamespacedName{Namespace: ph.Namespace, Name: ph.Status.Tunnel.Tunnel}
}

const serviceIndex = "tunnels.cloudflare.com/service"

func tunnelsOf(o client.Object) []string {
	ph, ok := o.(*v1alpha1.PublicHostname)
	if !ok {
		return nil
	}
	out := []string{IndexKey(Tunnel(ph))}
	if t := ph.Status.Tunnel; t != nil && t.Tunnel != "" && t.Tunnel != TunnelName(ph) {
		out = append(out, IndexKey(Answered(ph)))
	}
	return out
}

func servicesOf(o client.Object) []string {
	ph, ok := o.(*v1alpha1.PublicHostname)
	if !ok {
		return nil
	}
	var out []string
	for _, s := range ServiceOrigins(ph.Spec) {
		out = append(out, s.Name)
	}
	return out
}

// ServiceOrigins are the Service origins of a spec.
func ServiceOrigins(spec v1alpha1.PublicHostnameSpec) []v1alpha1.ServiceOrigin {
	var out []v1alpha1.ServiceOrigin
	if spec.Origin != nil && spec.Origin.Service != nil {
		out = append(out, *spec.Origin.Service)
	}
	for _, p := range spec.Paths {
		if p.Origin.Service != nil {
			out = append(out, *p.Origin.Service)
		}
	}
	return out
}

func (r *Reconciler) onTunnel(ctx context.Context, o client.Object) []reconcile.Request {
	return r.requests(ctx, "", client.MatchingFields{TunnelIndex: IndexKey(types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()})})
}

// onNamespace: a namespace's labels decide which shared tunnels its
// PublicHostnames may use.
func (r *Reconciler) onNamespace(ctx context.Context, o client.Object) []reconcile.Request {
	l := &v1alpha1.PublicHostnameList{}
	if err := r.kube.List(ctx, l, client.InNamespace(o.GetName())); err != nil {
		return nil
	}
	var reqs []reconcile.Request
	for _, ph := range l.Items {
		if Tunnel(&ph).Namespace != ph.Namespace {
			reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ph.Namespace, Name: ph.Name}})
		}
	}
	return reqs
}

// onConfig: a ClusterProviderConfig may serve any namespace's hostnames; a
// ProviderConfig, those of its own namespace (a tunnel using one is not
// shared).
func (r *Reconciler) onConfig(ctx context.Context, o client.Object) []reconcile.Request {
	return r.requests(ctx, o.GetNamespace(), client.MatchingFields{})
}

func (r *Reconciler) onSecret(ctx context.Context, o client.Object) []reconcile.Request {
	return r.requests(ctx, o.GetNamespace(), client.MatchingFields{secretIndex: o.GetName()})
}

func (r *Reconciler) onService(ctx context.Context, o client.Object) []reconcile.Request {
	return r.requests(ctx, o.GetNamespace(), client.MatchingFields{serviceIndex: o.GetName()})
}

func (r *Reconciler) requests(ctx context.Context, ns string, sel client.MatchingFields) []reconcile.Request {
	l := &v1alpha1.PublicHostnameList{}
	if err := r.kube.List(ctx, l, client.InNamespace(ns), sel); err != nil {
		r.log.Debug("cannot list PublicHostnames", "error", err)
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(l.Items))
	for _, ph := range l.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ph.Namespace, Name: ph.Name}})
	}
	return reqs
}

// Reconciler reconciles PublicHostnames.
type Reconciler struct {
	kube          client.Client
	log           logging.Logger
	record        event.Recorder
	clusterDomain string
}

// Reconcile converges a PublicHostname's rules and DNS record.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	ph := &v1alpha1.PublicHostname{}
	if err := r.kube.Get(ctx, req.NamespacedName, ph); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if meta.WasDeleted(ph) {
		return r.release(ctx, ph)
	}
	if !controllerutil.ContainsFinalizer(ph, finalizer) {
		controllerutil.AddFinalizer(ph, finalizer)
		if err := r.kube.Update(ctx, ph); err != nil {
			return reconcile.Result{}, errors.Wrap(err, "cannot add finalizer")
		}
	}
	res, err := r.apply(ctx, ph)
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
	return res, err
}

// apply resolves the rules, converges the DNS record and computes the
// conditions.
func (r *Reconciler) apply(ctx context.Context, ph *v1alpha1.PublicHostname) (reconcile.Result, error) {
	ref := Tunnel(ph)
	cft, refusal, err := sharing.Lookup(ctx, r.kube, ph.Namespace, sharing.Ref{Namespace: ref.Namespace, Name: ref.Name})
	if err != nil {
		return reconcile.Result{}, err
	}
	switch refusal.Reason {
	case sharing.ReasonTunnelNotFound:
		// A typo must not take a working hostname down: what it has (its
		// DNS record, its rules on the tunnel that published it) stays
		// until it names a tunnel that exists.
		msg := fmt.Sprintf("spec.tunnelRef: %s; nothing is changed: whatever this hostname already publishes stays as it is until it names a tunnel that exists", refusal.Message)
		r.warnOnce(ph, xpv2.TypeReady, ReasonTunnelNotFound, msg)
		ph.SetConditions(cond(v1alpha1.TypeAccepted, false, ReasonTunnelNotFound, msg), cond(xpv2.TypeReady, false, ReasonTunnelNotFound, msg))
		return reconcile.Result{RequeueAfter: time.Minute}, nil
	case sharing.ReasonTunnelNotShared:
		// Policy: the tunnel publishes nothing of this namespace's, so
		// its DNS record must not point there either.
		return reconcile.Result{RequeueAfter: time.Minute}, r.unpublish(ctx, ph, refusal.Message)
	}
	valid, err := r.resolve(ctx, ph, cft)
	if err != nil {
		return reconcile.Result{}, err
	}
	if meta.WasDeleted(cft) {
		msg := fmt.Sprintf("CloudflareTunnel %s is being deleted: nothing new is published through it; name another tunnel", cft.Name)
		ph.SetConditions(valid...)
		ph.SetConditions(cond(xpv2.TypeReady, false, ReasonTunnelDeleting, msg))
		return reconcile.Result{RequeueAfter: 30 * time.Second}, nil
	}
	tun, err := tunnelref.Get(ctx, r.kube, types.NamespacedName{Namespace: cft.Namespace, Name: cft.Name})
	if client.IgnoreNotFound(err) != nil {
		return reconcile.Result{}, errors.Wrap(err, "cannot get Tunnel")
	}
	if tun == nil {
		tun = &ztv1alpha1.Tunnel{}
	}
	dns, err := r.applyDNS(ctx, ph, tun)
	if err != nil {
		return reconcile.Result{}, err
	}
	if DNSRefused(dns) {
		// The hostname does not reach this tunnel (its DNS is someone
		// else's, or no zone holds it): its rules would only claim what
		// is not ours.
		ph.Status.Rules = nil
	}
	for _, v := range valid {
		ph.SetConditions(ValidCondition(v, dns))
	}
	ph.SetConditions(dns, AcceptedCondition(ph))
	ph.SetConditions(ReadyCondition(ph))
	if ph.GetCondition(xpv2.TypeReady).Status != corev1.ConditionTrue {
		return reconcile.Result{RequeueAfter: 30 * time.Second}, nil
	}
	return reconcile.Result{}, nil
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
func (r *Reconciler) resolve(ctx context.Context, ph *v1alpha1.PublicHostname, cft *v1alpha1.CloudflareTunnel) ([]xpv2.Condition, error) {
	services := map[string]*corev1.Service{}
	for _, s := range ServiceOrigins(ph.Spec) {
		if s.Port.Type != intstr.String || services[s.Name] != nil {
			continue
		}
		svc := &corev1.Service{}
		err := r.kube.Get(ctx, types.NamespacedName{Namespace: ph.Namespace, Name: s.Name}, svc)
		if kerrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, errors.Wrap(err, "cannot get Service")
		}
		services[s.Name] = svc
	}
	res := publish.Rules(ph.Spec, publish.Env{Namespace: ph.Namespace, ClusterDomain: r.clusterDomain, Services: services, TunnelNamespace: Tunnel(ph).Namespace})
	for _, pool := range res.CAPools {
		// cloudflared starts only with every CA file it is told to use, so
		// a rule must not name one that is not there.
		if msg, err := r.checkCAPool(ctx, ph.Namespace, pool); err != nil {
			return nil, err
		} else if msg != "" {
			res.Rules = nil
			res.Problems = append(res.Problems, publish.Problem{Field: "spec.originRequest.caPoolSecretRef", Message: msg, Waiting: true, WaitingFor: publish.WaitingForSecret})
		}
	}
	allowed, err := r.originGuard(ctx, ph, cft)
	if err != nil {
		return nil, err
	}
	if allowed(ph.Status.Rules) != nil {
		// The config no longer allows what was published: it goes,
		// rather than stop the tunnel's whole configuration at the
		// Tunnel's own guardrail.
		ph.Status.Rules, ph.Status.CAPools = nil, nil
	}
	if len(res.Problems) == 0 {
		if err := allowed(res.Rules); err != nil {
			r.refuseOrigin(ph, err)
			return nil, nil
		}
		ph.Status.Rules = res.Rules
		ph.Status.CAPools = res.CAPools
		ph.Status.RulesGeneration = ph.Generation
		return []xpv2.Condition{cond(v1alpha1.TypeValid, true, ReasonValid, fmt.Sprintf("%s for %s", publish.RuleCount(len(res.Rules)), ph.Spec.Hostname))}, nil
	}
	reason, msgs := ProblemReason(res.Problems), make([]string, 0, len(res.Problems))
	for _, p := range res.Problems {
		msgs = append(msgs, p.String())
	}
	msg := strings.Join(msgs, "; ")
	if len(ph.Status.Rules) > 0 {
		msg += "; the rules of the last valid spec stay published"
	} else {
		msg += "; nothing is published until this is fixed"
	}
	r.warnOnce(ph, v1alpha1.TypeValid, reason, msg)
	ph.SetConditions(cond(v1alpha1.TypeValid, false, reason, msg))
	return nil, nil
}

// ProblemReason is Valid's reason for problems: InvalidSpec if any is the
// spec's own, else what the first one waits for (a Service, a Secret), so
// its author knows which object to make.
func ProblemReason(problems []publish.Problem) xpv2.ConditionReason {
	for _, p := range problems {
		if !p.Waiting {
			return ReasonInvalid
		}
	}
	if len(problems) > 0 && problems[0].WaitingFor == publish.WaitingForSecret {
		return ReasonWaitingForSecret
	}
	return ReasonWaitingForService
}

// Failure is the condition that keeps a PublicHostname from being published
// for a reason its author must act on: another PublicHostname holds the
// hostname, Cloudflare refused its DNS record, its spec is not valid, or
// its provider config does not allow one of its origins.
func Failure(ph *v1alpha1.PublicHostname) (xpv2.Condition, bool) {
	accepted, dns, valid := ph.GetCondition(v1alpha1.TypeAccepted), ph.GetCondition(v1alpha1.TypeDNSReady), ph.GetCondition(v1alpha1.TypeValid)
	for _, f := range []struct {
		c      xpv2.Condition
		failed bool
	}{
		{accepted, accepted.Reason == v1alpha1.ReasonHostnameConflict},
		{dns, DNSRefused(dns)},
		{valid, valid.Reason == ReasonInvalid || clients.IsOriginRule(string(valid.Reason))},
	} {
		if f.failed && f.c.Status == corev1.ConditionFalse && f.c.Message != "" {
			return f.c, true
		}
	}
	return xpv2.Condition{}, false
}

// refuseOrigin reports an origin the provider config does not allow: the
// condition's reason names the rule.
func (r *Reconciler) refuseOrigin(ph *v1alpha1.PublicHostname, refused error) {
	rule, _ := clients.OriginRule(refused)
	reason := xpv2.ConditionReason(rule)
	msg := refused.Error()
	if len(ph.Status.Rules) > 0 {
		msg += "; the rules of the last allowed spec stay published"
	} else {
		msg += "; nothing is published until this is fixed"
	}
	r.warnOnce(ph, v1alpha1.TypeValid, reason, msg)
	ph.SetConditions(cond(v1alpha1.TypeValid, false, reason, msg))
}

// originGuard is the check of rules' origins against the allowed origins of
// the provider config the tunnel's resources use, for this hostname's
// namespace.
func (r *Reconciler) originGuard(ctx context.Context, ph *v1alpha1.PublicHostname, cft *v1alpha1.CloudflareTunnel) (func([]ztv1alpha1.IngressRule) error, error) {
	cfg, err := r.guardrails(ctx, cft)
	if err != nil {
		return nil, err
	}
	from, err := r.originSource(ctx, ph)
	if err != nil {
		return nil, err
	}
	return func(rules []ztv1alpha1.IngressRule) error {
		for _, rule := range rules {
			if err := cfg.CheckOrigin(rule.Service, from); err != nil {
				return err
			}
		}
		return nil
	}, nil
}

// guardrails are those of the provider config the tunnel's resources use
// (as the CloudflareTunnel chooses it).
func (r *Reconciler) guardrails(ctx context.Context, cft *v1alpha1.CloudflareTunnel) (clients.Config, error) {
	if cft.Spec.CredentialsSecretRef != nil {
		// The ProviderConfig made for it has no allowances.
		return clients.Config{Source: fmt.Sprintf("the ProviderConfig of CloudflareTunnel %s/%s's credentialsSecretRef", cft.Namespace, cft.Name), Namespaced: true}, nil
	}
	ref := xpv2.ProviderConfigReference{Kind: v1alpha1.ClusterProviderConfigKind, Name: "default"}
	if cft.Spec.ProviderConfigRef != nil {
		ref = *cft.Spec.ProviderConfigRef
	}
	return clients.GuardrailsOf(ctx, r.kube, ref, cft.Namespace)
}

// originSource is who publishes the hostname's origins: its namespace, and
// the Service of another namespace that the GatewayBinding controlling it
// was granted there (a ReferenceGrant of that namespace allows the
// GatewayBindings of this one to use it). The grant is read here, not taken
// from the binding: anyone who may write this namespace's PublicHostnames
// may also make one that names a binding as its controller.
func (r *Reconciler) originSource(ctx context.Context, ph *v1alpha1.PublicHostname) (origin.Source, error) {
	from := origin.Source{Namespace: ph.Namespace, ClusterDomain: r.clusterDomain}
	c := metav1.GetControllerOf(ph)
	if c == nil || c.Kind != v1alpha1.GatewayBindingKind || c.APIVersion != v1alpha1.SchemeGroupVersion.String() {
		return from, nil
	}
	b := &v1alpha1.GatewayBinding{}
	if err := r.kube.Get(ctx, types.NamespacedName{Namespace: ph.Namespace, Name: c.Name}, b); err != nil || b.UID != c.UID {
		return from, errors.Wrap(client.IgnoreNotFound(err), "cannot get the GatewayBinding controlling the hostname")
	}
	svc := b.Spec.Origin.Service
	if svc.Namespace == "" || svc.Namespace == ph.Namespace {
		return from, nil
	}
	grants := &gwv1beta1.ReferenceGrantList{}
	if err := r.kube.List(ctx, grants, client.InNamespace(svc.Namespace)); err != nil {
		if kmeta.IsNoMatchError(err) {
			return from, nil
		}
		return from, errors.Wrap(err, "cannot list ReferenceGrants")
	}
	if gwtranslate.Permitted(grants.Items, ph.Namespace, svc.Name) {
		from.Granted = append(from.Granted, svc.Namespace+"/"+svc.Name)
	}
	return from, nil
}

// checkCAPool says what is wrong with a CA Secret key, if anything.
func (r *Reconciler) checkCAPool(ctx context.Context, ns string, pool v1alpha1.LocalSecretKeySelector) (string, error) {
	s := &corev1.Secret{}
	err := r.kube.Get(ctx, types.NamespacedName{Namespace: ns, Name: pool.Name}, s)
	switch {
	case kerrors.IsNotFound(err):
		return fmt.Sprintf("Secret %s not found in namespace %s", pool.Name, ns), nil
	case err != nil:
		return "", errors.Wrap(err, "cannot get the CA Secret")
	case len(s.Data[pool.Key]) == 0:
		return fmt.Sprintf("Secret %s has no key %s", pool.Name, pool.Key), nil
	}
	return "", nil
}

// warnOnce records a Warning unless the condition already says it.
func (r *Reconciler) warnOnce(ph *v1alpha1.PublicHostname, t xpv2.ConditionType, reason xpv2.ConditionReason, msg string) {
	if c := ph.GetCondition(t); c.Reason == reason && c.Message == msg {
		return
	}
	r.record.Event(ph, event.Warning(event.Reason(reason), errors.New(msg)))
}

// ValidCondition is Valid for a spec that resolved (valid) once its DNS
// record's fate is known: while Cloudflare refuses the record the rules are
// withheld from the tunnel (they would claim a name that does not reach
// it), so Valid says they are not published and why, rather than count
// rules the tunnel answers it does not have.
func ValidCondition(valid, dns xpv2.Condition) xpv2.Condition {
	if !DNSRefused(dns) {
		return valid
	}
	return cond(v1alpha1.TypeValid, false, v1alpha1.ReasonDNSRefused, fmt.Sprintf("%s, not published while the hostname's DNS record is refused: %s", valid.Message, dns.Message))
}

// AcceptedCondition is the CloudflareTunnel's answer, as it wrote it.
func AcceptedCondition(ph *v1alpha1.PublicHostname) xpv2.Condition {
	t := ph.Status.Tunnel
	switch {
	case t == nil || t.Tunnel != TunnelName(ph):
		return cond(v1alpha1.TypeAccepted, false, v1alpha1.ReasonWaitingForTunnel, fmt.Sprintf("waiting for CloudflareTunnel %s to publish the hostname", TunnelName(ph)))
	case !t.Accepted:
		return cond(v1alpha1.TypeAccepted, false, xpv2.ConditionReason(t.Reason), t.Message)
	}
	return cond(v1alpha1.TypeAccepted, true, xpv2.ConditionReason(t.Reason), t.Message)
}

// ReadyCondition: the hostname is valid, its tunnel publishes its rules, and
// its DNS record (if it has one) is ready.
func ReadyCondition(ph *v1alpha1.PublicHostname) xpv2.Condition {
	for _, t := range []xpv2.ConditionType{v1alpha1.TypeValid, v1alpha1.TypeAccepted, v1alpha1.TypeDNSReady} {
		if c := ph.GetCondition(t); c.Status != corev1.ConditionTrue {
			return cond(xpv2.TypeReady, false, c.Reason, c.Message)
		}
	}
	t := ph.Status.Tunnel
	if t.ObservedGeneration != ph.Generation || t.ConfigVersion == 0 {
		return cond(xpv2.TypeReady, false, v1alpha1.ReasonWaitingForTunnel, fmt.Sprintf("waiting for CloudflareTunnel %s to write the hostname's rules to Cloudflare", TunnelName(ph)))
	}
	return cond(xpv2.TypeReady, true, ReasonPublished, fmt.Sprintf("published: %s in version %d of tunnel %s's configuration", publish.RuleCount(t.Rules), t.ConfigVersion, TunnelName(ph)))
}

// DeletingCondition is Ready while a PublicHostname being deleted waits for
// its DNSRecords to leave Cloudflare: its rules have left the tunnel's
// configuration (the tunnel skips a hostname being deleted), so it is not
// published, and the message names what the finalizer waits on.
func DeletingCondition(tunnel string, records []string) xpv2.Condition {
	what := "DNSRecord " + records[0]
	if len(records) > 1 {
		what = "DNSRecords " + strings.Join(records, ", ")
	}
	return cond(xpv2.TypeReady, false, ReasonDeleting, fmt.Sprintf("being deleted: its rules leave CloudflareTunnel %s's configuration; waiting for %s to be deleted from Cloudflare", tunnel, what))
}

func cond(t xpv2.ConditionType, ok bool, reason xpv2.ConditionReason, msg string) xpv2.Condition {
	s := corev1.ConditionFalse
	if ok {
		s = corev1.ConditionTrue
	}
	return xpv2.Condition{Type: t, Status: s, Reason: reason, Message: msg, LastTransitionTime: metav1.Now()}
}

// applyDNS converges the hostname's DNS record and says whether it is ready.
func (r *Reconciler) applyDNS(ctx context.Context, ph *v1alpha1.PublicHostname, tun *ztv1alpha1.Tunnel) (xpv2.Condition, error) {
	host, _ := publish.Hostname(ph.Spec.Hostname)
	have, err := r.records(ctx, ph)
	if err != nil {
		return xpv2.Condition{}, err
	}
	want := ph.Spec.DNS != v1alpha1.DNSNone
	answer := ph.Status.Tunnel
	if want && (answer == nil || answer.Tunnel != TunnelName(ph)) {
		// Not answered yet (new, or moved to another tunnel): what it has
		// stays until its tunnel says the hostname is its.
		return cond(v1alpha1.TypeDNSReady, false, v1alpha1.ReasonWaitingForTunnel, fmt.Sprintf("waiting for CloudflareTunnel %s to accept the hostname", TunnelName(ph))), nil
	}
	if want && !answer.Accepted {
		// The hostname is another PublicHostname's: this one must not
		// hold its DNS record.
		want = false
	}
	if want && len(ph.Status.Rules) == 0 && len(have) == 0 {
		// Never valid: nothing to point the name at yet.
		return cond(v1alpha1.TypeDNSReady, false, ReasonNoRules, "no DNS record yet: the hostname has no valid rules to publish"), nil
	}
	var mine *dnsv1alpha1.DNSRecord
	for i := range have {
		rec := &have[i]
		if want && mine == nil && strings.EqualFold(rec.Spec.ForProvider.Name, host) {
			mine = rec
			continue
		}
		if err := r.deleteRecord(ctx, ph, rec); err != nil {
			return xpv2.Condition{}, err
		}
	}
	switch {
	case ph.Spec.DNS == v1alpha1.DNSNone:
		return cond(v1alpha1.TypeDNSReady, true, ReasonDNSNone, "spec.dns is None: the hostname's DNS is managed elsewhere and must point at "+target(tun)), nil
	case !want:
		return cond(v1alpha1.TypeDNSReady, false, ReasonNotAccepted, "no DNS record: the hostname is not this PublicHostname's on the tunnel"), nil
	}
	id := meta.GetExternalName(tun)
	if id == "" {
		return cond(v1alpha1.TypeDNSReady, false, v1alpha1.ReasonWaitingForTunnel, "waiting for the tunnel's ID, the DNS record's target"), nil
	}
	if mine == nil && answer.Rules == 0 {
		// The tunnel has not seen this hostname's rules yet. A record made
		// now would point the name at a tunnel that does not serve it; one
		// taken over from an older version would end the tunnel's carrying
		// over of that version's rules before these can replace them.
		return cond(v1alpha1.TypeDNSReady, false, v1alpha1.ReasonWaitingForTunnel, fmt.Sprintf("waiting for CloudflareTunnel %s to take the hostname's rules before its DNS record is made", TunnelName(ph))), nil
	}
	if mine == nil {
		if mine, err = r.adopt(ctx, ph, host); err != nil {
			return xpv2.Condition{}, err
		}
	}
	rec, err := r.applyRecord(ctx, ph, tun, host, mine)
	if err != nil {
		return xpv2.Condition{}, err
	}
	ph.Status.DNSRecord = rec.Name
	return DNSCondition(rec), nil
}

func target(tun *ztv1alpha1.Tunnel) string {
	if id := meta.GetExternalName(tun); id != "" {
		return id + ".cfargotunnel.com"
	}
	return "<tunnel ID>.cfargotunnel.com"
}

// DNSCondition says whether the hostname's DNS record is in Cloudflare.
func DNSCondition(rec *dnsv1alpha1.DNSRecord) xpv2.Condition {
	synced := rec.GetCondition(xpv2.TypeSynced)
	switch {
	case Refused(rec):
		return cond(v1alpha1.TypeDNSReady, false, refusal(synced.Reason), fmt.Sprintf("DNSRecord %s: %s", rec.Name, synced.Message))
	case rec.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue:
		return cond(v1alpha1.TypeDNSReady, true, v1alpha1.ReasonDNSReady, fmt.Sprintf("DNSRecord %s points %s at the tunnel", rec.Name, rec.Spec.ForProvider.Name))
	}
	return cond(v1alpha1.TypeDNSReady, false, ReasonDNSNotReady, fmt.Sprintf("waiting for DNSRecord %s: %s", rec.Name, strings.TrimSpace(string(synced.Reason)+" "+synced.Message)))
}

// Refused says whether a DNS record that was never created was refused:
// no external-name yet, and Synced=False for a reason that will not pass by
// itself (another's record in the way, no such zone, Cloudflare refusing
// the record). A record that exists keeps its rules through passing errors,
// and so does one still to be created: a create that timed out waiting for
// the request budget, was rate limited or met a server error is retried
// (its reason is RateLimited or Transient), and taking its hostname's rules
// off the tunnel meanwhile would only cost configuration writes.
func Refused(rec *dnsv1alpha1.DNSRecord) bool {
	synced := rec.GetCondition(xpv2.TypeSynced)
	return meta.GetExternalName(rec) == "" && synced.Status == corev1.ConditionFalse && !common.Passing(synced.Reason)
}

// typedRefusals are the reasons a refused DNSRecord's Synced=False may
// give, which DNSReady repeats so that the sources above tell a name taken
// from a guardrail without reading messages.
var typedRefusals = []xpv2.ConditionReason{common.ReasonNameTaken, common.ReasonConflict, common.ReasonNotAllowed, common.ReasonRefused}

// refusal is DNSReady's reason for a record refused with reason r: r if it
// is typed, else RecordRefused.
func refusal(r xpv2.ConditionReason) xpv2.ConditionReason {
	if slices.Contains(typedRefusals, r) {
		return r
	}
	return v1alpha1.ReasonDNSRefused
}

// DNSRefused says whether a DNSReady condition reports a refused record.
func DNSRefused(dns xpv2.Condition) bool {
	return dns.Status == corev1.ConditionFalse && (dns.Reason == v1alpha1.ReasonDNSRefused || slices.Contains(typedRefusals, dns.Reason))
}

// records lists the DNS records this PublicHostname controls.
func (r *Reconciler) records(ctx context.Context, ph *v1alpha1.PublicHostname) ([]dnsv1alpha1.DNSRecord, error) {
	l := &dnsv1alpha1.DNSRecordList{}
	if err := r.kube.List(ctx, l, client.InNamespace(ph.Namespace), index.Controlled(string(ph.UID))); err != nil {
		return nil, errors.Wrap(err, "cannot list DNSRecords")
	}
	out := l.Items[:0]
	for _, rec := range l.Items {
		if c := metav1.GetControllerOf(&rec); c != nil && c.UID == ph.UID {
			out = append(out, rec)
		}
	}
	return out, nil
}

// adopt takes over the DNS record that this PublicHostname's own controller
// (an Ingress, before published hostnames existed) made for the hostname, so
// an upgrade moves the record instead of deleting and recreating it (which
// would take the hostname off the internet for as long as that takes).
func (r *Reconciler) adopt(ctx context.Context, ph *v1alpha1.PublicHostname, host string) (*dnsv1alpha1.DNSRecord, error) {
	owner := metav1.GetControllerOf(ph)
	if owner == nil {
		return nil, nil
	}
	l := &dnsv1alpha1.DNSRecordList{}
	// The records the owner controls, by the controller index: the
	// tunnel's are a thousand at a thousand hostnames.
	if err := r.kube.List(ctx, l, client.InNamespace(ph.Namespace), index.Controlled(string(owner.UID))); err != nil {
		return nil, errors.Wrap(err, "cannot list DNSRecords")
	}
	for i := range l.Items {
		rec := &l.Items[i]
		c := metav1.GetControllerOf(rec)
		onTunnel := rec.Labels[publish.LabelTunnel] == publish.LabelValue(ph.Spec.TunnelRef.Name)
		if c == nil || c.UID != owner.UID || !onTunnel || meta.WasDeleted(rec) || !strings.EqualFold(rec.Spec.ForProvider.Name, host) {
			continue
		}
		rec.OwnerReferences = nil
		if err := controllerutil.SetControllerReference(ph, rec, r.kube.Scheme()); err != nil {
			return nil, errors.Wrap(err, "cannot own DNSRecord")
		}
		meta.AddLabels(rec, map[string]string{publish.LabelPublicHostname: publish.LabelValue(ph.Name)})
		if err := r.kube.Update(ctx, rec); err != nil {
			return nil, errors.Wrapf(err, "cannot take over DNSRecord %s", rec.Name)
		}
		r.record.Event(ph, event.Normal("AdoptedDNSRecord", fmt.Sprintf("Took over DNSRecord %s from %s %s, which made it for this hostname", rec.Name, c.Kind, c.Name)))
		return rec, nil
	}
	return nil, nil
}

// DesiredRecord is the DNS record a PublicHostname wants: a proxied CNAME to
// its tunnel.
func DesiredRecord(ph *v1alpha1.PublicHostname, tun *ztv1alpha1.Tunnel, host string) *dnsv1alpha1.DNSRecord {
	labels := map[string]string{}
	for k, v := range ph.Labels {
		if strings.HasPrefix(k, "tunnels.cloudflare.com/") {
			labels[k] = v
		}
	}
	labels[publish.LabelTunnel] = publish.LabelValue(ph.Spec.TunnelRef.Name)
	if t := Tunnel(ph); t.Namespace != ph.Namespace {
		labels[publish.LabelTunnelNamespace] = t.Namespace
	}
	labels[publish.LabelPublicHostname] = publish.LabelValue(ph.Name)
	return &dnsv1alpha1.DNSRecord{
		ObjectMeta: metav1.ObjectMeta{Namespace: ph.Namespace, Name: publish.ObjectName(ph.Name, publish.KindDNSRecord, host), Labels: labels},
		Spec: dnsv1alpha1.DNSRecordSpec{
			ManagedResourceSpec: xpv2.ManagedResourceSpec{ProviderConfigReference: tun.Spec.ProviderConfigReference.DeepCopy()},
			ForProvider: dnsv1alpha1.DNSRecordParameters{
				Name:    host,
				Type:    "CNAME",
				Content: target(tun),
				Proxied: ptr.To(true),
			},
		},
	}
}

// applyRecord creates or updates the record; cur is the one it has, if any.
func (r *Reconciler) applyRecord(ctx context.Context, ph *v1alpha1.PublicHostname, tun *ztv1alpha1.Tunnel, host string, cur *dnsv1alpha1.DNSRecord) (*dnsv1alpha1.DNSRecord, error) {
	want := DesiredRecord(ph, tun, host)
	if cur == nil {
		existing := &dnsv1alpha1.DNSRecord{}
		err := r.kube.Get(ctx, client.ObjectKeyFromObject(want), existing)
		if err == nil {
			// Its name is taken by a record this hostname does not control.
			return nil, errors.Errorf("DNSRecord %s exists and is not controlled by this PublicHostname; left alone", want.Name)
		}
		if !kerrors.IsNotFound(err) {
			return nil, errors.Wrap(err, "cannot get DNSRecord")
		}
		if err := controllerutil.SetControllerReference(ph, want, r.kube.Scheme()); err != nil {
			return nil, errors.Wrap(err, "cannot own DNSRecord")
		}
		if err := r.kube.Create(ctx, want); err != nil {
			return nil, errors.Wrapf(err, "cannot create DNSRecord %s", want.Name)
		}
		r.record.Event(ph, event.Normal("CreatedDNSRecord", "Created DNSRecord "+want.Name))
		return want, nil
	}
	if meta.WasDeleted(cur) {
		return cur, nil
	}
	before := cur.DeepCopy()
	for k, v := range want.Labels {
		meta.AddLabels(cur, map[string]string{k: v})
	}
	cur.Spec.ForProvider.Name = want.Spec.ForProvider.Name
	cur.Spec.ForProvider.Type = want.Spec.ForProvider.Type
	cur.Spec.ForProvider.Content = want.Spec.ForProvider.Content
	cur.Spec.ForProvider.Proxied = want.Spec.ForProvider.Proxied
	cur.Spec.ProviderConfigReference = want.Spec.ProviderConfigReference
	if equality.Semantic.DeepEqual(before, cur) {
		return cur, nil
	}
	return cur, errors.Wrapf(r.kube.Update(ctx, cur), "cannot update DNSRecord %s", cur.Name)
}

func (r *Reconciler) deleteRecord(ctx context.Context, ph *v1alpha1.PublicHostname, rec *dnsv1alpha1.DNSRecord) error {
	if meta.WasDeleted(rec) {
		return nil
	}
	if err := r.kube.Delete(ctx, rec, client.Preconditions{UID: &rec.UID}); client.IgnoreNotFound(err) != nil {
		return errors.Wrapf(err, "cannot delete DNSRecord %s", rec.Name)
	}
	r.record.Event(ph, event.Normal("DeletingDNSRecord", fmt.Sprintf("Deleting DNSRecord %s, no longer wanted; it goes once Cloudflare confirms the deletion", rec.Name)))
	return nil
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
		ph.SetConditions(DeletingCondition(TunnelName(ph), names))
		if err := r.kube.Status().Update(ctx, ph); err != nil {
			return errors.SilentlyRequeueOnConflict(reconcile.Result{}, errors.Wrap(err, "cannot update status"))
		}
		// Each one's deletion brings this back (the watch on what it
		// owns); this is only a safety net. Every 2 s, 1,000 sources
		// being deleted took most of the reconcile rate the managed
		// resources needed to delete.
		return reconcile.Result{RequeueAfter: ReleaseRecheck}, nil
	}
	controllerutil.RemoveFinalizer(ph, finalizer)
	return reconcile.Result{}, errors.Wrap(client.IgnoreNotFound(r.kube.Update(ctx, ph)), "cannot remove finalizer")
}
