// Package providerconfig reconciles ProviderConfigs and ClusterProviderConfigs: it
// counts their users (blocking deletion while any remain), reports whether
// their credentials can be resolved, and keeps a config (namespaced or
// cluster-scoped) and its credentials Secret until the last managed resource
// naming it is gone.
package providerconfig

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
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
	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/providerconfig"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients"
)

// Condition reason for a config whose credentials resolve.
const ReasonCredentialsAvailable xpv2.ConditionReason = "CredentialsAvailable"

// Setup adds the usage-counting and credentials-checking controllers for
// both config kinds; env is where credentials from the provider's
// environment come from (nil: os.LookupEnv).
func Setup(mgr ctrl.Manager, o controller.Options, env clients.Env) error {
	for _, kind := range []configKind{namespacedKind, clusterKind} {
		if err := setupUsage(mgr, o, kind); err != nil {
			return err
		}
		if err := setupCredentials(mgr, o, kind, env); err != nil {
			return err
		}
		if err := setupRetention(mgr, o, kind); err != nil {
			return err
		}
	}
	return nil
}

// SetupGated registers Setup to run once the config and usage CRDs exist.
func SetupGated(mgr ctrl.Manager, o controller.Options, env clients.Env) error {
	o.Gate.Register(func() {
		if err := Setup(mgr, o, env); err != nil {
			o.Logger.Info("Cannot set up provider config controllers", "error", err)
		}
	}, v1alpha1.ProviderConfigGroupVersionKind, v1alpha1.ClusterProviderConfigGroupVersionKind, v1alpha1.ProviderConfigUsageGroupVersionKind)
	return nil
}

// configKind abstracts over the namespaced and cluster-scoped config kinds.
type configKind struct {
	kind    string
	newObj  func() configObject
	newList func() client.ObjectList
	items   func(client.ObjectList) []configObject
}

type configObject interface {
	resource.ProviderConfig
	spec() v1alpha1.ProviderConfigSpec
}

type pcObj struct{ *v1alpha1.ProviderConfig }

func (p pcObj) spec() v1alpha1.ProviderConfigSpec { return p.Spec }

type cpcObj struct {
	*v1alpha1.ClusterProviderConfig
}

func (p cpcObj) spec() v1alpha1.ProviderConfigSpec { return p.Spec }

var namespacedKind = configKind{
	kind:    v1alpha1.ProviderConfigKind,
	newObj:  func() configObject { return pcObj{&v1alpha1.ProviderConfig{}} },
	newList: func() client.ObjectList { return &v1alpha1.ProviderConfigList{} },
	items: func(l client.ObjectList) []configObject {
		var out []configObject
		for i := range l.(*v1alpha1.ProviderConfigList).Items {
			out = append(out, pcObj{&l.(*v1alpha1.ProviderConfigList).Items[i]})
		}
		return out
	},
}

var clusterKind = configKind{
	kind:    v1alpha1.ClusterProviderConfigKind,
	newObj:  func() configObject { return cpcObj{&v1alpha1.ClusterProviderConfig{}} },
	newList: func() client.ObjectList { return &v1alpha1.ClusterProviderConfigList{} },
	items: func(l client.ObjectList) []configObject {
		var out []configObject
		for i := range l.(*v1alpha1.ClusterProviderConfigList).Items {
			out = append(out, cpcObj{&l.(*v1alpha1.ClusterProviderConfigList).Items[i]})
		}
		return out
	},
}

// setupUsage counts users with crossplane-runtime's reconciler. Both kinds
// count the namespaced ProviderConfigUsage, because that is the only usage
// kind the runtime's tracker writes — counting a cluster-scoped usage kind
// would let a ClusterProviderConfig in use be deleted.
func setupUsage(mgr ctrl.Manager, o controller.Options, k configKind) error {
	name := providerconfig.ControllerName(k.kind)
	of := resource.ProviderConfigKinds{
		Config:    v1alpha1.SchemeGroupVersion.WithKind(k.kind),
		Usage:     v1alpha1.ProviderConfigUsageGroupVersionKind,
		UsageList: v1alpha1.ProviderConfigUsageListGroupVersionKind,
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(name).
		WithOptions(o.ForControllerRuntime()).
		For(unwrap(k.newObj())).
		Watches(&v1alpha1.ProviderConfigUsage{}, coalesced{inner: &resource.EnqueueRequestForProviderConfig{Kind: k.kind}, after: usageCoalescing}).
		Complete(providerconfig.NewReconciler(mgr, of,
			providerconfig.WithLogger(o.Logger.WithValues("controller", name)),
			providerconfig.WithRecorder(event.NewAPIRecorder(mgr.GetEventRecorderFor(name)))))
}

func unwrap(o configObject) client.Object {
	switch t := o.(type) {
	case pcObj:
		return t.ProviderConfig
	case cpcObj:
		return t.ClusterProviderConfig
	}
	return nil
}

// credentialsReconciler keeps a config's Ready condition saying whether its
// credentials resolve, so a missing Secret or key shows on the config itself
// rather than only as connect errors on every managed resource.
type credentialsReconciler struct {
	env    clients.Env
	kube   client.Client
	kind   configKind
	log    logging.Logger
	record event.Recorder
}

func setupCredentials(mgr ctrl.Manager, o controller.Options, k configKind, env clients.Env) error {
	name := "config/credentials/" + k.kind
	r := &credentialsReconciler{
		env:    env,
		kube:   mgr.GetClient(),
		kind:   k,
		log:    o.Logger.WithValues("controller", name),
		record: event.NewAPIRecorder(mgr.GetEventRecorderFor(name)),
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(name).
		WithOptions(o.ForControllerRuntime()).
		For(unwrap(k.newObj()), builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.configsUsingSecret)).
		Complete(ratelimiter.NewReconciler(name, errors.WithSilentRequeueOnConflict(r), o.GlobalRateLimiter))
}

// configsUsingSecret maps a Secret to the configs that read it.
func (r *credentialsReconciler) configsUsingSecret(ctx context.Context, o client.Object) []reconcile.Request {
	l := r.kind.newList()
	if err := r.kube.List(ctx, l); err != nil {
		r.log.Debug("cannot list provider configs", "error", err)
		return nil
	}
	var reqs []reconcile.Request
	for _, pc := range r.kind.items(l) {
		ref := pc.spec().Credentials.SecretRef
		if ref == nil || ref.Name != o.GetName() {
			continue
		}
		ns := ref.Namespace
		if pc.GetNamespace() != "" {
			ns = pc.GetNamespace()
		}
		if ns == o.GetNamespace() {
			reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: pc.GetNamespace(), Name: pc.GetName()}})
		}
	}
	return reqs
}

// How often to re-check credentials that come from places we cannot watch
// (the provider's environment) or that failed.
const recheckAfter = 5 * time.Minute

func (r *credentialsReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	obj := r.kind.newObj()
	if err := r.kube.Get(ctx, req.NamespacedName, unwrap(obj)); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(errors.Wrap(err, "cannot get provider config"))
	}
	// A Terminating config is checked too: it is kept while managed
	// resources still need its credentials, and they should learn the truth.
	_, err := clients.ResolveSpec(ctx, r.kube, obj.spec(), obj.GetNamespace(), r.env)
	reason := clients.Reason(err)
	if err != nil && reason == "" {
		// Not the user's fault (API server hiccup): retry with backoff.
		return reconcile.Result{}, err
	}

	prev := obj.GetCondition(xpv2.TypeReady)
	var cond xpv2.Condition
	if err != nil {
		cond = xpv2.Condition{Type: xpv2.TypeReady, Status: corev1.ConditionFalse, Reason: xpv2.ConditionReason(reason), Message: err.Error()}
	} else {
		cond = xpv2.Condition{Type: xpv2.TypeReady, Status: corev1.ConditionTrue, Reason: ReasonCredentialsAvailable}
	}
	cond.LastTransitionTime = metav1.Now()
	cond.ObservedGeneration = obj.GetGeneration()
	if prev.Equal(cond) {
		return reconcile.Result{RequeueAfter: recheckAfter}, nil
	}
	if err != nil {
		r.record.Event(unwrap(obj), event.Warning(event.Reason(reason), err))
	}
	obj.SetConditions(cond)
	if uerr := r.kube.Status().Update(ctx, unwrap(obj)); uerr != nil {
		if kerrors.IsConflict(uerr) {
			return reconcile.Result{Requeue: true}, nil
		}
		return reconcile.Result{}, errors.Wrap(uerr, "cannot update provider config status")
	}
	return reconcile.Result{RequeueAfter: recheckAfter}, nil
}
