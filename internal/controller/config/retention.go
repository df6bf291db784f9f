package config

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	connv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/connectivity/v1alpha1"
	dnsv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/dns/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
)

// FinalizerCredentialsInUse keeps a namespaced ProviderConfig and its
// credentials Secret while managed resources in the namespace name the
// ProviderConfig.
//
// Deleting a namespace deletes everything in it at once: the Secret (which
// has no finalizer) and the usage records go first, the ProviderConfig's own
// in-use finalizer follows its usage count to zero, and the managed
// resources, whose deletion needs the token, are left unable to delete
// their Cloudflare objects — holding the namespace in Terminating for ever.
// With this finalizer the token outlives its last user.
const FinalizerCredentialsInUse = "tunnels.cloudflare.com/credentials-in-use"

// recheckInUse is how often a config in use is looked at again. Users that
// go away are noticed sooner through their usage records; this covers
// deletions in a terminating namespace, whose usage records are already
// gone.
const recheckInUse = 30 * time.Second

// managedLists are the managed resource kinds that can name a ProviderConfig.
func managedLists() []resource.ManagedList {
	return []resource.ManagedList{
		&ztv1alpha1.TunnelList{}, &ztv1alpha1.HostnameRouteList{},
		&connv1alpha1.VPCServiceList{}, &dnsv1alpha1.DNSRecordList{},
	}
}

// SecretNeeded reports whether the Secret called secret must be kept: some
// ProviderConfig in its namespace reads it and is in use.
func SecretNeeded(secret string, pcs []v1alpha1.ProviderConfig, inUse func(pc string) bool) bool {
	for _, pc := range pcs {
		if ref := credentialsSecret(pc); ref == secret && inUse(pc.Name) {
			return true
		}
	}
	return false
}

// credentialsSecret is the name of the Secret pc reads in its own namespace,
// or "".
func credentialsSecret(pc v1alpha1.ProviderConfig) string {
	c := pc.Spec.Credentials
	if c.Source != v1alpha1.CredentialsSourceSecret || c.SecretRef == nil {
		return ""
	}
	return c.SecretRef.Name
}

type retentionReconciler struct {
	kube client.Client
	log  logging.Logger
}

func setupRetention(mgr ctrl.Manager, o controller.Options) error {
	name := "config/retention/" + v1alpha1.ProviderConfigKind
	r := &retentionReconciler{kube: mgr.GetClient(), log: o.Logger.WithValues("controller", name)}
	return ctrl.NewControllerManagedBy(mgr).
		Named(name).
		WithOptions(o.ForControllerRuntime()).
		For(&v1alpha1.ProviderConfig{}).
		Watches(&v1alpha1.ProviderConfigUsage{}, &resource.EnqueueRequestForProviderConfig{Kind: v1alpha1.ProviderConfigKind}).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.configsReading)).
		Complete(errors.WithSilentRequeueOnConflict(r))
}

// configsReading maps a Secret to the ProviderConfigs in its namespace that
// read it.
func (r *retentionReconciler) configsReading(ctx context.Context, o client.Object) []reconcile.Request {
	pcs := &v1alpha1.ProviderConfigList{}
	if err := r.kube.List(ctx, pcs, client.InNamespace(o.GetNamespace())); err != nil {
		r.log.Debug("cannot list provider configs", "error", err)
		return nil
	}
	var reqs []reconcile.Request
	for _, pc := range pcs.Items {
		if credentialsSecret(pc) == o.GetName() {
			reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: pc.Namespace, Name: pc.Name}})
		}
	}
	return reqs
}

// users counts, per ProviderConfig name, the managed resources in ns that
// name one. Kinds whose definitions are not installed (inactive under
// Crossplane's safe-start) have none.
func (r *retentionReconciler) users(ctx context.Context, ns string) (map[string]int, error) {
	n := map[string]int{}
	for _, l := range managedLists() {
		if err := r.kube.List(ctx, l, client.InNamespace(ns)); err != nil {
			if meta.IsNoMatchError(err) {
				continue
			}
			return nil, errors.Wrap(err, "cannot list managed resources")
		}
		for _, mg := range l.GetItems() {
			if m, ok := mg.(resource.ModernManaged); ok {
				if ref := m.GetProviderConfigReference(); ref != nil && ref.Kind == v1alpha1.ProviderConfigKind {
					n[ref.Name]++
				}
			}
		}
	}
	return n, nil
}

func (r *retentionReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	pc := &v1alpha1.ProviderConfig{}
	if err := r.kube.Get(ctx, req.NamespacedName, pc); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(errors.Wrap(err, "cannot get provider config"))
	}
	users, err := r.users(ctx, pc.Namespace)
	if err != nil {
		return reconcile.Result{}, err
	}
	inUse := func(name string) bool { return users[name] > 0 }

	// The Secret before the ProviderConfig: once the ProviderConfig is gone
	// nothing would bring its Secret here again.
	if secret := credentialsSecret(*pc); secret != "" {
		pcs := &v1alpha1.ProviderConfigList{}
		if err := r.kube.List(ctx, pcs, client.InNamespace(pc.Namespace)); err != nil {
			return reconcile.Result{}, errors.Wrap(err, "cannot list provider configs")
		}
		if err := r.keepSecret(ctx, types.NamespacedName{Namespace: pc.Namespace, Name: secret}, SecretNeeded(secret, pcs.Items, inUse)); err != nil {
			return reconcile.Result{}, err
		}
	}
	if err := r.keepConfig(ctx, pc, inUse(pc.Name)); err != nil {
		return reconcile.Result{}, err
	}
	if inUse(pc.Name) {
		return reconcile.Result{RequeueAfter: recheckInUse}, nil
	}
	return reconcile.Result{}, nil
}

// setFinalizer adds (keep) or removes the retention finalizer, reporting
// whether o changed. No finalizer may be added to an object being deleted:
// one deleted while unprotected is beyond keeping.
func setFinalizer(o client.Object, keep bool) bool {
	if keep == controllerutil.ContainsFinalizer(o, FinalizerCredentialsInUse) || (keep && o.GetDeletionTimestamp() != nil) {
		return false
	}
	if keep {
		return controllerutil.AddFinalizer(o, FinalizerCredentialsInUse)
	}
	return controllerutil.RemoveFinalizer(o, FinalizerCredentialsInUse)
}

// keepSecret sets the finalizer on a credentials Secret. The provider may
// only patch Secrets; the patch carries the resourceVersion so it cannot
// drop another controller's finalizer.
func (r *retentionReconciler) keepSecret(ctx context.Context, key types.NamespacedName, keep bool) error {
	s := &corev1.Secret{}
	if err := r.kube.Get(ctx, key, s); err != nil {
		// A missing Secret is the credentials controller's to report.
		return client.IgnoreNotFound(errors.Wrap(err, "cannot get credentials Secret"))
	}
	orig := s.DeepCopy()
	if !setFinalizer(s, keep) {
		return nil
	}
	if err := r.kube.Patch(ctx, s, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil && !kerrors.IsNotFound(err) {
		return errors.Wrap(err, "cannot update the credentials Secret's finalizers")
	}
	return nil
}

func (r *retentionReconciler) keepConfig(ctx context.Context, pc *v1alpha1.ProviderConfig, keep bool) error {
	if !setFinalizer(pc, keep) {
		return nil
	}
	if err := r.kube.Update(ctx, pc); err != nil && !kerrors.IsNotFound(err) {
		return errors.Wrap(err, "cannot update the ProviderConfig's finalizers")
	}
	return nil
}
