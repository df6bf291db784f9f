package gateway

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/gateway/translate"
)

// readParameters reads the GatewayParameters ref names: nil when ref is
// nil, cannot name any, or names none that exist (the translation says
// which).
func readParameters(ctx context.Context, kube client.Reader, ref *translate.ParametersRef) (*v1alpha1.GatewayParameters, error) {
	if ref == nil || ref.Problem() != "" {
		return nil, nil
	}
	p := &v1alpha1.GatewayParameters{}
	err := kube.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, p)
	if err != nil {
		return nil, errors.Wrap(client.IgnoreNotFound(err), "cannot get GatewayParameters")
	}
	return p, nil
}

// settings reads the Gateway's class and the parameters it or its class
// names.
func (r *Reconciler) settings(ctx context.Context, gw *gwv1.Gateway, in *translate.Input) error {
	gc := &gwv1.GatewayClass{}
	if err := r.kube.Get(ctx, types.NamespacedName{Name: string(gw.Spec.GatewayClassName)}, gc); err != nil {
		return errors.Wrap(client.IgnoreNotFound(err), "cannot get GatewayClass")
	}
	in.Class = gc
	p, err := readParameters(ctx, r.kube, translate.ParametersOf(gw, gc))
	in.Parameters = p
	return err
}

// ofParameters are the Gateways whose settings come from the
// GatewayParameters o: named by the Gateway, or by its class when the
// Gateway names none.
func (r *Reconciler) ofParameters(ctx context.Context, o client.Object) []reconcile.Request {
	classes := &gwv1.GatewayClassList{}
	if err := r.kube.List(ctx, classes); err != nil {
		r.log.Debug("cannot list GatewayClasses", "error", err)
		return nil
	}
	byName := map[string]*gwv1.GatewayClass{}
	for i := range classes.Items {
		byName[classes.Items[i].Name] = &classes.Items[i]
	}
	p := &v1alpha1.GatewayParameters{ObjectMeta: metav1.ObjectMeta{Namespace: o.GetNamespace(), Name: o.GetName()}}
	return requests(r.gateways(ctx), func(gw *gwv1.Gateway) bool {
		ref := translate.ParametersOf(gw, byName[string(gw.Spec.GatewayClassName)])
		return ref != nil && ref.Names(p)
	})
}

// tunnelCopy sets a made tunnel's labels and what the Gateway decides of
// it.
func tunnelCopy(cur, want source.Owned) bool {
	labels := source.CopySpec(cur, want)
	c, okc := cur.(*v1alpha1.CloudflareTunnel)
	w, okw := want.(*v1alpha1.CloudflareTunnel)
	return (okc && okw && translate.CopyTunnel(c, w)) || labels
}

// ofParameters are the classes of this provider naming the GatewayParameters o.
func (r *ClassReconciler) ofParameters(ctx context.Context, o client.Object) []reconcile.Request {
	classes := &gwv1.GatewayClassList{}
	if err := r.kube.List(ctx, classes); err != nil {
		return nil
	}
	p := &v1alpha1.GatewayParameters{ObjectMeta: metav1.ObjectMeta{Namespace: o.GetNamespace(), Name: o.GetName()}}
	var reqs []reconcile.Request
	for _, gc := range classes.Items {
		if ref := translate.ClassParametersOf(&gc); gc.Spec.ControllerName == translate.ControllerName && ref != nil && ref.Names(p) {
			reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Name: gc.Name}})
		}
	}
	return reqs
}
