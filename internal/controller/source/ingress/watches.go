package ingress

// Watches and indexes: what wakes an Ingress.

import (
	"context"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/ingress/translate"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/hostname"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sharing"
)

// ingressesOfTunnel are the Ingresses naming a tunnel: of its namespace,
// or of any namespace it may be shared with.
func (r *Reconciler) ingressesOfTunnel(ctx context.Context, o client.Object) []reconcile.Request {
	l := &networkingv1.IngressList{}
	if err := r.kube.List(ctx, l, client.UnsafeDisableDeepCopy); err != nil {
		return nil
	}
	var reqs []reconcile.Request
	for _, i := range l.Items {
		if a, ok := i.Annotations[v1alpha1.AnnotationTunnel]; ok && sharing.Names(a, i.Namespace, o.GetNamespace(), o.GetName()) {
			reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: i.Namespace, Name: i.Name}})
		}
	}
	return reqs
}

// sharedIngressesIn are the Ingresses of a namespace naming a tunnel of
// another.
func (r *Reconciler) sharedIngressesIn(ctx context.Context, o client.Object) []reconcile.Request {
	l := &networkingv1.IngressList{}
	if err := r.kube.List(ctx, l, client.InNamespace(o.GetName()), client.UnsafeDisableDeepCopy); err != nil {
		return nil
	}
	var reqs []reconcile.Request
	for _, i := range l.Items {
		if a, ok := i.Annotations[v1alpha1.AnnotationTunnel]; ok && sharing.CrossNamespace(a, i.Namespace) {
			reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: i.Namespace, Name: i.Name}})
		}
	}
	return reqs
}

// ingressesRouting are the Ingresses routing a PublicHostname's hostname
// privately, of any namespace.
func (r *Reconciler) ingressesRouting(ctx context.Context, o client.Object) []reconcile.Request {
	ph, ok := o.(*v1alpha1.PublicHostname)
	if !ok {
		return nil
	}
	l := &networkingv1.IngressList{}
	if err := r.kube.List(ctx, l, client.MatchingFields{hostnameIndex: hostname.Normalize(ph.Spec.Hostname)}, client.UnsafeDisableDeepCopy); err != nil {
		r.log.Debug("cannot list the Ingresses routing a hostname", "error", err)
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(l.Items))
	for _, i := range l.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: i.Namespace, Name: i.Name}})
	}
	return reqs
}

// acceptedChanged passes a PublicHostname made, deleted, or whose tunnel's
// answer (Accepted, and why) changed: not every status write of every one.
func acceptedChanged() predicate.Funcs {
	return predicate.Funcs{
		UpdateFunc: func(e ctrlevent.UpdateEvent) bool {
			a, okA := e.ObjectOld.(*v1alpha1.PublicHostname)
			b, okB := e.ObjectNew.(*v1alpha1.PublicHostname)
			if !okA || !okB {
				return false
			}
			ca, cb := a.GetCondition(v1alpha1.TypeAccepted), b.GetCondition(v1alpha1.TypeAccepted)
			return ca.Status != cb.Status || ca.Reason != cb.Reason || a.Spec.Hostname != b.Spec.Hostname || meta.WasDeleted(a) != meta.WasDeleted(b)
		},
		GenericFunc: func(ctrlevent.GenericEvent) bool { return false },
	}
}

func (r *Reconciler) ingressesOfService(ctx context.Context, o client.Object) []reconcile.Request {
	ings, err := IngressesUsing(ctx, r.kube, o)
	if err != nil {
		r.log.Debug("cannot list the Ingresses of a Service", "error", err)
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(ings))
	for _, i := range ings {
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: i.Namespace, Name: i.Name}})
	}
	return reqs
}

// Index registers the Ingress indexes (hostnames claimed, backend
// Services). It must run before the manager starts: an index cannot be added
// to an informer already running, and the CloudflareTunnel controller
// watches Ingresses too.
func Index(mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &networkingv1.Ingress{}, hostnameIndex, claimedHostnames); err != nil {
		return errors.Wrap(err, "cannot index Ingresses by hostname")
	}
	return errors.Wrap(mgr.GetFieldIndexer().IndexField(context.Background(), &networkingv1.Ingress{}, serviceIndex, backendServices), "cannot index Ingresses by backend Service")
}

func backendServices(o client.Object) []string {
	ing, ok := o.(*networkingv1.Ingress)
	if !ok {
		return nil
	}
	return translate.BackendServices(ing)
}

// IngressesUsing lists the Ingresses whose backends name the Service svc.
// Readers must be a manager's client (the index lives in its cache).
func IngressesUsing(ctx context.Context, kube client.Reader, svc client.Object) ([]networkingv1.Ingress, error) {
	l := &networkingv1.IngressList{}
	if err := kube.List(ctx, l, client.InNamespace(svc.GetNamespace()), client.MatchingFields{serviceIndex: svc.GetName()}); err != nil {
		return nil, errors.Wrap(err, "cannot list Ingresses by backend Service")
	}
	return l.Items, nil
}
