package gateway

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/gateway/translate"
)

// ClassReconciler accepts the GatewayClasses of this provider's
// controller name.
type ClassReconciler struct {
	kube   client.Client
	record event.Recorder
}

func setupClass(mgr ctrl.Manager, o controller.Options) error {
	r := &ClassReconciler{kube: mgr.GetClient(), record: event.NewAPIRecorder(mgr.GetEventRecorderFor("gatewayclass"))}
	ours := predicate.NewPredicateFuncs(func(o client.Object) bool {
		gc, ok := o.(*gwv1.GatewayClass)
		return ok && gc.Spec.ControllerName == translate.ControllerName
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("gatewayclass").
		WithOptions(o.ForControllerRuntime()).
		For(&gwv1.GatewayClass{}, builder.WithPredicates(ours)).
		Watches(&v1alpha1.GatewayParameters{}, handler.EnqueueRequestsFromMapFunc(r.ofParameters)).
		Complete(ratelimiter.NewReconciler("gatewayclass", errors.WithSilentRequeueOnConflict(r), o.GlobalRateLimiter))
}

// Reconcile sets a class's Accepted condition.
func (r *ClassReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	gc := &gwv1.GatewayClass{}
	if err := r.kube.Get(ctx, req.NamespacedName, gc); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if gc.Spec.ControllerName != translate.ControllerName {
		return reconcile.Result{}, nil
	}
	params, err := readParameters(ctx, r.kube, translate.ClassParametersOf(gc))
	if err != nil {
		return reconcile.Result{}, err
	}
	want := translate.ClassAccepted(gc, params)
	conds := translate.MergeConditions(gc.Status.Conditions, []metav1.Condition{want}, metav1.Now())
	for _, c := range gc.Status.Conditions {
		if c.Type != want.Type {
			conds = append(conds, c)
		}
	}
	if len(gc.Status.Conditions) == len(conds) && sameConditions(gc.Status.Conditions, conds) {
		return reconcile.Result{}, nil
	}
	for _, w := range translate.ClassWarnings(gc.Status.Conditions, want) {
		r.record.Event(gc, event.Warning(event.Reason(w.Reason), errors.New(w.Message)))
	}
	gc.Status.Conditions = conds
	return reconcile.Result{}, errors.Wrap(r.kube.Status().Update(ctx, gc), "cannot update GatewayClass status")
}

func sameConditions(a, b []metav1.Condition) bool {
	for _, x := range b {
		found := false
		for _, y := range a {
			if x.Type == y.Type && x.Status == y.Status && x.Reason == y.Reason && x.Message == y.Message && x.ObservedGeneration == y.ObservedGeneration {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}
