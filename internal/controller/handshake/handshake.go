// Package handshake is the hand-shake between a PublicHostname and its
// CloudflareTunnel, and how the layers above read its outcome.
//
// A PublicHostname names a tunnel (Tunnel); the tunnel finds the hostnames
// that name it, or that it published, through TunnelIndex, and answers each
// in its status.tunnel, naming itself as AnswerName does (Answered reads
// that name back). The hostname's conditions then say what came of it
// (AcceptedCondition, ReadyCondition, Failure). Both composites and the
// sources that make PublicHostnames import this package, so none of them
// imports another's controller to learn what an answer means.
//
// Package target, beside it, is the step before: whether a source may use
// the tunnel it names at all.
package handshake

import (
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
)

// ReleaseRecheck is how often a source (PublicHostname, Ingress,
// GatewayBinding, Gateway) being deleted looks again at what it waits for,
// besides being brought back by each owned object's deletion.
const ReleaseRecheck = 30 * time.Second

// TunnelIndex indexes PublicHostnames by the CloudflareTunnel they name and
// the one that last published them, as IndexKey gives it: in any namespace,
// since a tunnel may be shared. TunnelKeys is its indexer.
const TunnelIndex = "tunnels.cloudflare.com/tunnel"

// IndexKey is a tunnel's key in TunnelIndex.
func IndexKey(t types.NamespacedName) string { return t.Namespace + "/" + t.Name }

// TunnelKeys are a PublicHostname's keys in TunnelIndex: the tunnel it
// names, and the one that answered it if that is another (it published
// the hostname and must learn it moved).
func TunnelKeys(o client.Object) []string {
	ph, ok := o.(*v1alpha1.PublicHostname)
	if !ok {
		return nil
	}
	out := []string{IndexKey(Tunnel(ph))}
	if t := ph.Status.Tunnel; t != nil && t.Tunnel != "" && t.Tunnel != TunnelName(ph) {
		out = append(out, IndexKey(Answered(ph)))
	}
	return out
}

// Tunnel is the CloudflareTunnel a PublicHostname names.
func Tunnel(ph *v1alpha1.PublicHostname) types.NamespacedName {
	ns := ph.Spec.TunnelRef.Namespace
	if ns == "" {
		ns = ph.Namespace
	}
	return types.NamespacedName{Namespace: ns, Name: ph.Spec.TunnelRef.Name}
}

// TunnelName is how a PublicHostname's answer names its tunnel: by name in
// its own namespace, "<namespace>/<name>" in another.
func TunnelName(ph *v1alpha1.PublicHostname) string { return AnswerName(Tunnel(ph), ph.Namespace) }

// AnswerName is how a tunnel names itself in the answer to a PublicHostname
// of namespace ns.
func AnswerName(t types.NamespacedName, ns string) string {
	if t.Namespace == ns {
		return t.Name
	}
	return t.Namespace + "/" + t.Name
}

// Answered is the tunnel that last answered a PublicHostname.
func Answered(ph *v1alpha1.PublicHostname) types.NamespacedName {
	if ns, name, ok := strings.Cut(ph.Status.Tunnel.Tunnel, "/"); ok {
		return types.NamespacedName{Namespace: ns, Name: name}
	}
	return types.NamespacedName{Namespace: ph.Namespace, Name: ph.Status.Tunnel.Tunnel}
}

// HolderName is how a PublicHostname that lost its hostname to an older
// claim may name the holder the tunnel answered with: by name when it is of
// the same namespace, "" when it is another namespace's (another tenant's
// object, not named to this one) or not known.
func HolderName(ph *v1alpha1.PublicHostname) string {
	t := ph.Status.Tunnel
	if t == nil || t.ClaimedBy == "" {
		return ""
	}
	return SameNamespaceName(t.ClaimedBy, Answered(ph).Namespace, ph.Namespace)
}

// SameNamespaceName is name, as an object of namespace rel names it (by
// name alone in rel, "<namespace>/<name>" in another), when it is of
// namespace ns; "" when it is not.
func SameNamespaceName(name, rel, ns string) string {
	if n, name2, ok := strings.Cut(name, "/"); ok {
		if n == ns {
			return name2
		}
		return ""
	}
	if rel == ns {
		return name
	}
	return ""
}

// ManagedAccess says whether the spec asks for an Access application made
// for the hostname.
func ManagedAccess(spec v1alpha1.PublicHostnameSpec) bool {
	return spec.Access != nil && len(spec.Access.Policies) > 0
}

// AwaitsUnpublishing: a PublicHostname being deleted with an Access
// application of its own waits for tunnel's answer that its rules are out
// of the configuration Cloudflare holds, while the answer still counts
// them there.
func AwaitsUnpublishing(ph *v1alpha1.PublicHostname, tunnel types.NamespacedName) bool {
	t := ph.Status.Tunnel
	return ManagedAccess(ph.Spec) && t != nil && t.Rules > 0 && t.Tunnel == AnswerName(tunnel, ph.Namespace)
}
