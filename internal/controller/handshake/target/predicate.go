package target

import (
	"maps"

	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
)

// Changed passes the CloudflareTunnel events that matter to what publishes
// through a tunnel (Ingresses, Services, GatewayBindings, PublicHostnames):
// a tunnel appearing or going, and an update of what Resolve reads of it —
// its spec (whom it is shared with, adoption), labels, annotations,
// deletion, tunnel ID and provider config, and, until it has a tunnel ID,
// why it has none (its Ready reason: a source says a broken tunnel's
// reason).
//
// Each such watch enqueues every user of the tunnel, and a tunnel's status
// changes often while it converges. At 1,000 Ingresses every one of those
// changes queued 2,000 reconciles, which took the reconcile rate the
// managed resources needed to make progress.
func Changed() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, okOld := e.ObjectOld.(*v1alpha1.CloudflareTunnel)
		n, okNew := e.ObjectNew.(*v1alpha1.CloudflareTunnel)
		return !okOld || !okNew || !sameForUsers(o, n)
	}}
}

// sameForUsers says whether two versions of a CloudflareTunnel differ only
// in what its users do not read.
func sameForUsers(o, n *v1alpha1.CloudflareTunnel) bool {
	return o.GetDeletionTimestamp().Equal(n.GetDeletionTimestamp()) &&
		maps.Equal(o.GetLabels(), n.GetLabels()) &&
		maps.Equal(o.GetAnnotations(), n.GetAnnotations()) &&
		sameSpec(o.Spec, n.Spec) &&
		equality.Semantic.DeepEqual(o.Status.ProviderConfigRef, n.Status.ProviderConfigRef) &&
		sameTunnelID(o, n)
}

// sameTunnelID says whether two versions of a CloudflareTunnel agree on its
// tunnel ID and, while it has none, on why (the Ready reason): a handful of
// changes in a tunnel's life, not its every status write.
func sameTunnelID(o, n *v1alpha1.CloudflareTunnel) bool {
	if o.Status.TunnelID != n.Status.TunnelID {
		return false
	}
	return n.Status.TunnelID != "" || o.GetCondition(xpv2.TypeReady).Reason == n.GetCondition(xpv2.TypeReady).Reason
}

// sameSpec says whether two specs agree but for spec.crossplane, the
// tunnel's record of its own children, which its users do not read.
func sameSpec(o, n v1alpha1.CloudflareTunnelSpec) bool {
	o.Crossplane, n.Crossplane = nil, nil
	return equality.Semantic.DeepEqual(o, n)
}
