package tunnelref

import (
	"maps"

	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	tunnelsv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
)

// UsersChanged passes the Tunnel and CloudflareTunnel events that matter
// to what publishes through a tunnel (Ingresses, Services, PublicHostnames,
// GatewayBindings): a tunnel appearing or going, and an update of what they
// read of it. They read a Tunnel's ID, credentials, labels and spec without
// its configuration document (Get), and a CloudflareTunnel's spec (whom it
// is shared with), labels and deletion, and, until it has a tunnel ID, why
// it has none (its Ready reason): a source says a broken tunnel's reason.
//
// Each such watch enqueues every user of the tunnel, and a tunnel changes
// often while it converges: each configuration write and each status
// change of either kind. At 1,000 Ingresses every one of those changes
// queued 2,000 reconciles, which took the reconcile rate the managed
// resources needed to make progress.
func UsersChanged() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		return !sameForUsers(e.ObjectOld, e.ObjectNew)
	}}
}

// sameTunnelID says whether two versions of a CloudflareTunnel agree on its
// tunnel ID and, while it has none, on why (the Ready reason): a handful of
// changes in a tunnel's life, not its every status write.
func sameTunnelID(o, n *tunnelsv1alpha1.CloudflareTunnel) bool {
	if o.Status.TunnelID != n.Status.TunnelID {
		return false
	}
	return n.Status.TunnelID != "" || o.GetCondition(xpv2.TypeReady).Reason == n.GetCondition(xpv2.TypeReady).Reason
}

// sameForUsers reports whether old and new differ only in what a tunnel's
// users do not read.
func sameForUsers(old, new client.Object) bool {
	if old == nil || new == nil {
		return false
	}
	if !old.GetDeletionTimestamp().Equal(new.GetDeletionTimestamp()) ||
		!maps.Equal(old.GetLabels(), new.GetLabels()) ||
		!maps.Equal(old.GetAnnotations(), new.GetAnnotations()) {
		return false
	}
	switch o := old.(type) {
	case *ztv1alpha1.Tunnel:
		n, ok := new.(*ztv1alpha1.Tunnel)
		if !ok {
			return false
		}
		os, ns := o.Spec, n.Spec // copies: the documents are left alone
		os.ForProvider.Config, ns.ForProvider.Config = nil, nil
		return equality.Semantic.DeepEqual(os, ns)
	case *tunnelsv1alpha1.CloudflareTunnel:
		n, ok := new.(*tunnelsv1alpha1.CloudflareTunnel)
		return ok && equality.Semantic.DeepEqual(o.Spec, n.Spec) && sameTunnelID(o, n)
	}
	return false
}
