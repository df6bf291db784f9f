// Package kubecache is what the provider's informer caches hold: every
// object the provider watches, without the metadata it never reads.
//
// The manager caches every object of each kind a controller watches, and
// several kinds are watched cluster-wide because any of them may matter:
// Ingresses (an Ingress is the provider's by its class, which no label
// selects), Services (any may be a backend, or exposed by annotation),
// Secrets (a provider config's credentials may be any Secret), Namespaces
// (their labels share tunnels) and the Gateway API kinds. Their
// metadata.managedFields (often half an object's size) and kubectl's
// last-applied-configuration annotation (a second copy of what was applied)
// are dropped before an object is stored, except where the provider reads or
// would write them back:
//
//   - managedFields are kept on Deployments and PodDisruptionBudgets: the
//     CloudflareTunnel controller reads them to take over fields a previous
//     version or another writer owns by update. Elsewhere dropping them is
//     safe for writes too: an update without managedFields keeps the
//     stored ones.
//   - last-applied-configuration is kept on the kinds the provider updates
//     whole (its own kinds and managed resources, which users may apply with
//     kubectl, and ExternalDNS's DNSEndpoints): an update of an object
//     without it would remove it. The kinds it is dropped from are never
//     written whole by the provider: it patches them (merge patches of what
//     it changes, server-side apply) or writes their status.
package kubecache

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"
)

// LastApplied is kubectl's annotation holding the object it last applied.
const LastApplied = corev1.LastAppliedConfigAnnotation

// Options are the manager's cache options (ctrl.Options.Cache): the
// re-list period (nil is controller-runtime's default) and Transform. main
// and the test harnesses use them alike.
func Options(syncPeriod *time.Duration) cache.Options {
	// One transform for every kind, deciding by type: ByObject would need
	// each kind's REST mapping when the manager is made, and the Gateway
	// API's CRDs may be installed only later.
	return cache.Options{SyncPeriod: syncPeriod, DefaultTransform: Transform}
}

// Transform drops what the provider does not read from an object before
// the cache stores it (the package comment says what, and why not more).
func Transform(in any) (any, error) {
	switch in.(type) {
	case *appsv1.Deployment, *policyv1.PodDisruptionBudget:
		// The CloudflareTunnel controller's field takeover reads their
		// managedFields.
		return strip(in, false, true), nil
	case *networkingv1.Ingress, *networkingv1.IngressClass, *corev1.Service, *corev1.Secret, *corev1.Namespace,
		*gwv1.Gateway, *gwv1.GatewayClass, *gwv1.HTTPRoute, *gwv1.GRPCRoute, *gwv1beta1.ReferenceGrant:
		return strip(in, true, true), nil
	default:
		return strip(in, true, false), nil
	}
}

// strip drops in's managedFields and its last-applied-configuration
// annotation, as told.
func strip(in any, managedFields, lastApplied bool) any {
	obj, err := meta.Accessor(in)
	if err != nil {
		// A tombstone (cache.DeletedFinalStateUnknown) or anything
		// without metadata is stored as it is.
		return in
	}
	// Set only what is there: a nil managedFields must stay nil
	// (kubernetes/kubernetes#124337).
	if managedFields && obj.GetManagedFields() != nil {
		obj.SetManagedFields(nil)
	}
	if a := obj.GetAnnotations(); lastApplied && a != nil {
		if _, ok := a[LastApplied]; ok {
			delete(a, LastApplied)
			if len(a) == 0 {
				obj.SetAnnotations(nil)
			}
		}
	}
	return in
}
