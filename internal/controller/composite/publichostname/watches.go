package publichostname

// Watches and indexes: what wakes a PublicHostname, and the names that
// find its tunnel, Secrets and Services.

import (
	"context"
	"net/url"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"

	dnsv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/dns/v1alpha1"
	lbv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/loadbalancing/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/origin"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/handshake"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/handshake/target"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/index"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sharing"
)

// Setup adds the PublicHostname controller.
func Setup(mgr ctrl.Manager, o controller.Options, opts Options) error {
	name := "publichostname"
	r := &Reconciler{
		kube:          mgr.GetClient(),
		log:           o.Logger.WithValues("controller", name),
		record:        event.NewAPIRecorder(mgr.GetEventRecorderFor(name)),
		metrics:       opts.Metrics,
		clusterDomain: opts.ClusterDomain,
	}
	c, err := ctrl.NewControllerManagedBy(mgr).
		Named(name).
		WithOptions(o.ForControllerRuntime()).
		For(&v1alpha1.PublicHostname{}).
		Owns(&dnsv1alpha1.DNSRecord{}).
		// The tunnel's ID is the DNS record's target; its deletion and
		// recreation change what the hostname waits for.
		Watches(&v1alpha1.CloudflareTunnel{}, handler.EnqueueRequestsFromMapFunc(r.onTunnel), builder.WithPredicates(target.Changed())).
		// A Service's named ports resolve origins, and where it leads
		// (an ExternalName, endpoints written by hand) is judged by the
		// origin guardrail; a CA Secret appearing lets a hostname that
		// names it be published.
		Watches(&corev1.Service{}, handler.EnqueueRequestsFromMapFunc(r.onService)).
		Watches(&discoveryv1.EndpointSlice{}, handler.EnqueueRequestsFromMapFunc(r.onEndpointSlice)).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.onSecret)).
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(r.onNamespace), builder.WithPredicates(predicate.LabelChangedPredicate{})).
		// A provider config's allowed origins decide which origins are
		// published (a rare change: every hostname it may concern looks).
		Watches(&v1alpha1.ClusterProviderConfig{}, handler.EnqueueRequestsFromMapFunc(r.onConfig), builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&v1alpha1.ProviderConfig{}, handler.EnqueueRequestsFromMapFunc(r.onConfig), builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Build(ratelimiter.NewReconciler(name, errors.WithSilentRequeueOnConflict(r), o.GlobalRateLimiter))
	if err != nil {
		return err
	}
	// Managed Access: the application a hostname made (its audience tag
	// is in the rules) and the policies it names. Watched once their kinds
	// exist, so an installation that has not activated them still
	// publishes every other hostname.
	o.Gate.Register(func() {
		apps := source.Kind(mgr.GetCache(), &ztv1alpha1.AccessApplication{}, handler.TypedEnqueueRequestForOwner[*ztv1alpha1.AccessApplication](mgr.GetScheme(), mgr.GetRESTMapper(), &v1alpha1.PublicHostname{}, handler.OnlyControllerOwner()))
		policies := source.Kind(mgr.GetCache(), &ztv1alpha1.AccessPolicy{}, handler.TypedEnqueueRequestsFromMapFunc(r.onPolicy))
		for _, src := range []source.Source{apps, policies} {
			if err := c.Watch(src); err != nil {
				o.Logger.Info("Cannot watch Access kinds for PublicHostnames", "error", err)
			}
		}
	}, ztv1alpha1.AccessApplicationGroupVersionKind, ztv1alpha1.AccessPolicyGroupVersionKind)
	// Load balancing: the pool, monitor and load balancer a load-balanced
	// hostname made, watched once their kinds exist.
	o.Gate.Register(func() {
		for _, src := range []source.Source{
			source.Kind(mgr.GetCache(), &lbv1alpha1.LoadBalancerMonitor{}, handler.TypedEnqueueRequestForOwner[*lbv1alpha1.LoadBalancerMonitor](mgr.GetScheme(), mgr.GetRESTMapper(), &v1alpha1.PublicHostname{}, handler.OnlyControllerOwner())),
			source.Kind(mgr.GetCache(), &lbv1alpha1.LoadBalancerPool{}, handler.TypedEnqueueRequestForOwner[*lbv1alpha1.LoadBalancerPool](mgr.GetScheme(), mgr.GetRESTMapper(), &v1alpha1.PublicHostname{}, handler.OnlyControllerOwner())),
			source.Kind(mgr.GetCache(), &lbv1alpha1.LoadBalancer{}, handler.TypedEnqueueRequestForOwner[*lbv1alpha1.LoadBalancer](mgr.GetScheme(), mgr.GetRESTMapper(), &v1alpha1.PublicHostname{}, handler.OnlyControllerOwner())),
		} {
			if err := c.Watch(src); err != nil {
				o.Logger.Info("Cannot watch Load Balancing kinds for PublicHostnames", "error", err)
			}
		}
	}, lbv1alpha1.LoadBalancerMonitorGroupVersionKind, lbv1alpha1.LoadBalancerPoolGroupVersionKind, lbv1alpha1.LoadBalancerGroupVersionKind)
	return nil
}

// onPolicy wakes the PublicHostnames that name the policy: of its
// namespace, and of every namespace when it is shared (or was: a
// PublicHostname it no longer allows must learn so).
func (r *Reconciler) onPolicy(ctx context.Context, pol *ztv1alpha1.AccessPolicy) []reconcile.Request {
	phs := &v1alpha1.PublicHostnameList{}
	var opts []client.ListOption
	if !sharing.SharedBy(pol.Spec.AllowedNamespaces) {
		opts = append(opts, client.InNamespace(pol.Namespace))
	}
	if err := r.kube.List(ctx, phs, opts...); err != nil {
		r.log.Info("Cannot list PublicHostnames for an AccessPolicy", "error", err)
		return nil
	}
	key := types.NamespacedName{Namespace: pol.Namespace, Name: pol.Name}
	var out []reconcile.Request
	for _, ph := range phs.Items {
		if !handshake.ManagedAccess(ph.Spec) {
			continue
		}
		for _, n := range ph.Spec.Access.Policies {
			if policyKey(ph.Namespace, n) == key {
				out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ph.Namespace, Name: ph.Name}})
				break
			}
		}
	}
	return out
}

// SetupGated adds the controller once the kinds it reads and writes exist.
func SetupGated(mgr ctrl.Manager, o controller.Options, opts Options) error {
	o.Gate.Register(func() {
		if err := Setup(mgr, o, opts); err != nil {
			o.Logger.Info("Cannot set up PublicHostname controller", "error", err)
		}
	}, v1alpha1.PublicHostnameGroupVersionKind, v1alpha1.CloudflareTunnelGroupVersionKind, dnsv1alpha1.DNSRecordGroupVersionKind)
	return nil
}

// Index registers the PublicHostname indexes: by the tunnel they name or were
// published on, by the object that controls them, and by the Services they
// name. It must run before the
// manager starts.
func Index(mgr ctrl.Manager) error {
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(context.Background(), &v1alpha1.PublicHostname{}, handshake.TunnelIndex, handshake.TunnelKeys); err != nil {
		return errors.Wrap(err, "cannot index PublicHostnames by tunnel")
	}
	if err := idx.IndexField(context.Background(), &v1alpha1.PublicHostname{}, index.Controller, index.ControllerUID); err != nil {
		return errors.Wrap(err, "cannot index PublicHostnames by controller")
	}
	if err := idx.IndexField(context.Background(), &v1alpha1.PublicHostname{}, secretIndex, secretsOf); err != nil {
		return errors.Wrap(err, "cannot index PublicHostnames by Secret")
	}
	if err := idx.IndexField(context.Background(), &v1alpha1.PublicHostname{}, serviceIndex, servicesOf); err != nil {
		return errors.Wrap(err, "cannot index PublicHostnames by Service")
	}
	return errors.Wrap(idx.IndexField(context.Background(), &corev1.Service{}, externalNameIndex, externalNameOf), "cannot index Services by the Service their external name names")
}

// externalNameIndex indexes ExternalName Services by the Service their
// external name names, as ServiceKey gives it: a change to that one changes
// where they lead.
const externalNameIndex = "tunnels.cloudflare.com/external-name"

func externalNameOf(o client.Object) []string {
	svc, ok := o.(*corev1.Service)
	if !ok || svc.Spec.Type != corev1.ServiceTypeExternalName {
		return nil
	}
	if k, ok := ServiceKey(svc.Spec.ExternalName); ok {
		return []string{k}
	}
	return nil
}

// ServiceKey is "<namespace>/<name>" of the Service a cluster DNS name
// ([<pod>.]<name>.<namespace>.svc[.<domain>]) names, whatever the cluster
// domain: it finds what to wake, so a name it reads too widely only wakes
// a hostname more.
func ServiceKey(host string) (string, bool) {
	labels := strings.Split(strings.TrimSuffix(strings.ToLower(host), "."), ".")
	for i := len(labels) - 1; i >= 2; i-- {
		if labels[i] == "svc" {
			return labels[i-1] + "/" + labels[i-2], true
		}
	}
	return "", false
}

func secretsOf(o client.Object) []string {
	ph, ok := o.(*v1alpha1.PublicHostname)
	if !ok || ph.Spec.OriginRequest == nil || ph.Spec.OriginRequest.CAPoolSecretRef == nil {
		return nil
	}
	return []string{ph.Spec.OriginRequest.CAPoolSecretRef.Name}
}

// servicesOf are the Services a PublicHostname's origins name, as
// ServiceKey gives them: by reference, or by their cluster DNS name in a
// URL.
func servicesOf(o client.Object) []string {
	ph, ok := o.(*v1alpha1.PublicHostname)
	if !ok {
		return nil
	}
	var out []string
	for _, s := range ServiceOrigins(ph.Spec) {
		out = append(out, ph.Namespace+"/"+s.Name)
	}
	for _, u := range urlOrigins(ph.Spec) {
		if p, err := url.Parse(u); err == nil {
			if k, ok := ServiceKey(p.Hostname()); ok {
				out = append(out, k)
			}
		}
	}
	return out
}

func urlOrigins(spec v1alpha1.PublicHostnameSpec) []string {
	var out []string
	if spec.Origin != nil && spec.Origin.URL != nil {
		out = append(out, *spec.Origin.URL)
	}
	for _, p := range spec.Paths {
		if p.Origin.URL != nil {
			out = append(out, *p.Origin.URL)
		}
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
	return r.requests(ctx, "", client.MatchingFields{handshake.TunnelIndex: handshake.IndexKey(types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()})})
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
		if handshake.Tunnel(&ph).Namespace != ph.Namespace {
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
	return r.naming(ctx, o.GetNamespace()+"/"+o.GetName())
}

func (r *Reconciler) onEndpointSlice(ctx context.Context, o client.Object) []reconcile.Request {
	name := o.GetLabels()[discoveryv1.LabelServiceName]
	if name == "" {
		return nil
	}
	return r.naming(ctx, o.GetNamespace()+"/"+name)
}

// naming are the PublicHostnames whose origins lead through Service key:
// they name it, or name an ExternalName Service leading to it.
func (r *Reconciler) naming(ctx context.Context, key string) []reconcile.Request {
	keys, frontier := []string{key}, []string{key}
	for hop := 0; hop < origin.MaxHops && len(frontier) > 0; hop++ {
		var next []string
		for _, k := range frontier {
			l := &corev1.ServiceList{}
			if err := r.kube.List(ctx, l, client.MatchingFields{externalNameIndex: k}); err != nil {
				r.log.Debug("cannot list Services", "error", err)
				continue
			}
			for _, svc := range l.Items {
				if k := svc.Namespace + "/" + svc.Name; !slices.Contains(keys, k) {
					keys, next = append(keys, k), append(next, k)
				}
			}
		}
		frontier = next
	}
	var reqs []reconcile.Request
	for _, k := range keys {
		reqs = append(reqs, r.requests(ctx, "", client.MatchingFields{serviceIndex: k})...)
	}
	return reqs
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
