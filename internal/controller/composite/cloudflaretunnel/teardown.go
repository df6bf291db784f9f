package cloudflaretunnel

// Teardown: what a CloudflareTunnel being deleted waits for, and what it
// deletes.

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
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	connv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/connectivity/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
)

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
	r.rules.forget(cr.UID)
	// A patch of the finalizers alone, as when it was added.
	before := client.MergeFromWithOptions(cr.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.RemoveFinalizer(cr, finalizer)
	return reconcile.Result{}, errors.Wrap(r.kube.Patch(ctx, cr, before), "cannot remove finalizer")
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
