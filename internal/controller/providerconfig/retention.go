package providerconfig

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

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	connv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/connectivity/v1alpha1"
	dnsv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/dns/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
)

// FinalizerCredentialsInUse keeps a ProviderConfig or ClusterProviderConfig,
// and the credentials Secret it reads, while managed resources name the
// config.
//
// crossplane-runtime's own in-use finalizer follows the config's usage
// records, and deleting a namespace deletes those at once, together with the
// Secret (which has no finalizer) — before the managed resources, whose
// deletion needs the token, have deleted their Cloudflare objects. Their
// namespace is then held in Terminating for ever. A config already
// Terminating when its users' namespace goes (one `kubectl delete -f` of a
// file holding both) is released the same way. This finalizer follows the
// managed resources themselves, so the token outlives its last user.
const FinalizerCredentialsInUse = "tunnels.cloudflare.com/credentials-in-use"

// recheckInUse is how often a config in use is looked at again. Users that
// go away are noticed sooner through their usage records; this covers
// deletions in a terminating namespace, whose usage records are already
// gone.
const recheckInUse = 30 * time.Second

// managedLists are the managed resource kinds that can name a config.
func managedLists() []resource.ManagedList {
	return []resource.ManagedList{
		&ztv1alpha1.TunnelList{}, &ztv1alpha1.HostnameRouteList{},
		&connv1alpha1.VPCServiceList{}, &dnsv1alpha1.DNSRecordList{},
	}
}

// ConfigKey identifies a config: Namespace is "" for a ClusterProviderConfig.
type ConfigKey struct {
	Kind      string
	Namespace string
	Name      string
}

// Reader is a config and the Secret it reads its token from.
type Reader struct {
	Config ConfigKey
	Secret types.NamespacedName
}

// SecretNeeded reports whether secret must be kept: some config that reads
// it is in use.
func SecretNeeded(secret types.NamespacedName, readers []Reader, users map[ConfigKey]int) bool {
	for _, r := range readers {
		if r.Secret == secret && users[r.Config] > 0 {
			return true
		}
	}
	return false
}

// ConfigOf is the config a managed resource in namespace ns uses: a missing
// reference means ClusterProviderConfig "default", as the schema defaults it.
func ConfigOf(ns string, ref *xpv2.ProviderConfigReference) ConfigKey {
	if ref == nil || ref.Kind == "" {
		name := "default"
		if ref != nil && ref.Name != "" {
			name = ref.Name
		}
		return ConfigKey{Kind: v1alpha1.ClusterProviderConfigKind, Name: name}
	}
	if ref.Kind == v1alpha1.ProviderConfigKind {
		return ConfigKey{Kind: ref.Kind, Namespace: ns, Name: ref.Name}
	}
	return ConfigKey{Kind: ref.Kind, Name: ref.Name}
}

// secretRead is the Secret a config reads, if any. A namespaced
// ProviderConfig reads only Secrets in its own namespace.
func secretRead(o configObject) (types.NamespacedName, bool) {
	c := o.spec().Credentials
	if c.Source != v1alpha1.CredentialsSourceSecret || c.SecretRef == nil {
		return types.NamespacedName{}, false
	}
	ns := c.SecretRef.Namespace
	if o.GetNamespace() != "" {
		ns = o.GetNamespace()
	}
	return types.NamespacedName{Namespace: ns, Name: c.SecretRef.Name}, true
}

func keyOf(k configKind, o configObject) ConfigKey {
	return ConfigKey{Kind: k.kind, Namespace: o.GetNamespace(), Name: o.GetName()}
}

type retentionReconciler struct {
	kube client.Client
	kind configKind
	log  logging.Logger
}

func setupRetention(mgr ctrl.Manager, o controller.Options, k configKind) error {
	name := "config/retention/" + k.kind
	r := &retentionReconciler{kube: mgr.GetClient(), kind: k, log: o.Logger.WithValues("controller", name)}
	return ctrl.NewControllerManagedBy(mgr).
		Named(name).
		WithOptions(o.ForControllerRuntime()).
		For(unwrap(k.newObj())).
		Watches(&v1alpha1.ProviderConfigUsage{}, coalesced{inner: &resource.EnqueueRequestForProviderConfig{Kind: k.kind}, after: usageCoalescing}).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.configsReading)).
		Complete(ratelimiter.NewReconciler(name, errors.WithSilentRequeueOnConflict(r), o.GlobalRateLimiter))
}

// configsReading maps a Secret to the configs of this kind that read it.
func (r *retentionReconciler) configsReading(ctx context.Context, o client.Object) []reconcile.Request {
	l := r.kind.newList()
	var opts []client.ListOption
	if r.kind.kind == v1alpha1.ProviderConfigKind {
		opts = append(opts, client.InNamespace(o.GetNamespace()))
	}
	if err := r.kube.List(ctx, l, opts...); err != nil {
		r.log.Debug("cannot list provider configs", "error", err)
		return nil
	}
	var reqs []reconcile.Request
	for _, pc := range r.kind.items(l) {
		if s, ok := secretRead(pc); ok && s == client.ObjectKeyFromObject(o) {
			reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: pc.GetNamespace(), Name: pc.GetName()}})
		}
	}
	return reqs
}

// users counts, per config, the managed resources that name it, in every
// namespace. Kinds whose definitions are not installed (inactive under
// Crossplane's safe-start) have none.
func (r *retentionReconciler) users(ctx context.Context) (map[ConfigKey]int, error) {
	n := map[ConfigKey]int{}
	for _, l := range managedLists() {
		// Read only: the cache's objects need not be copied.
		if err := r.kube.List(ctx, l, client.UnsafeDisableDeepCopy); err != nil {
			if meta.IsNoMatchError(err) {
				continue
			}
			return nil, errors.Wrap(err, "cannot list managed resources")
		}
		for _, mg := range l.GetItems() {
			m, ok := mg.(resource.ModernManaged)
			if !ok {
				continue
			}
			n[ConfigOf(m.GetNamespace(), m.GetProviderConfigReference())]++
		}
	}
	return n, nil
}

// readers lists every config, of both kinds, that reads a Secret in ns.
func (r *retentionReconciler) readers(ctx context.Context, ns string) ([]Reader, error) {
	var out []Reader
	for _, k := range []configKind{namespacedKind, clusterKind} {
		l := k.newList()
		var opts []client.ListOption
		if k.kind == v1alpha1.ProviderConfigKind {
			opts = append(opts, client.InNamespace(ns))
		}
		if err := r.kube.List(ctx, l, opts...); err != nil {
			return nil, errors.Wrap(err, "cannot list provider configs")
		}
		for _, pc := range k.items(l) {
			if s, ok := secretRead(pc); ok && s.Namespace == ns {
				out = append(out, Reader{Config: keyOf(k, pc), Secret: s})
			}
		}
	}
	return out, nil
}

func (r *retentionReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	pc := r.kind.newObj()
	if err := r.kube.Get(ctx, req.NamespacedName, unwrap(pc)); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(errors.Wrap(err, "cannot get provider config"))
	}
	users, err := r.users(ctx)
	if err != nil {
		return reconcile.Result{}, err
	}
	inUse := users[keyOf(r.kind, pc)] > 0

	// The Secret before the config: once the config is gone nothing would
	// bring its Secret here again.
	if secret, ok := secretRead(pc); ok {
		readers, err := r.readers(ctx, secret.Namespace)
		if err != nil {
			return reconcile.Result{}, err
		}
		if err := r.keepSecret(ctx, secret, SecretNeeded(secret, readers, users)); err != nil {
			return reconcile.Result{}, err
		}
	}
	if err := r.keepConfig(ctx, unwrap(pc), inUse); err != nil {
		return reconcile.Result{}, err
	}
	if inUse {
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

func (r *retentionReconciler) keepConfig(ctx context.Context, pc client.Object, keep bool) error {
	if !setFinalizer(pc, keep) {
		return nil
	}
	if err := r.kube.Update(ctx, pc); err != nil && !kerrors.IsNotFound(err) {
		return errors.Wrapf(err, "cannot update the %s's finalizers", r.kind.kind)
	}
	return nil
}
