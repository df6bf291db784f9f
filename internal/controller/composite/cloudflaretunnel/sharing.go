package cloudflaretunnel

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sharing"
)

// TypeShared says which namespaces' sources may publish through the tunnel.
const TypeShared xpv2.ConditionType = "Shared"

// Reasons of the Shared condition.
const (
	ReasonOwnNamespaceOnly   xpv2.ConditionReason = "OwnNamespaceOnly"
	ReasonSelectedNamespaces xpv2.ConditionReason = "SelectedNamespaces"
	// ReasonEveryNamespace: every namespace, present and future, may
	// publish through the tunnel and route into its network; rarely what a
	// platform team means, so it is said loudly.
	ReasonEveryNamespace xpv2.ConditionReason = "EveryNamespace"
)

// SharingCondition says whom cr's tunnel serves.
func SharingCondition(cr *v1alpha1.CloudflareTunnel) xpv2.Condition {
	c := xpv2.Condition{Type: TypeShared, LastTransitionTime: metav1.Now()}
	switch {
	case sharing.Everyone(cr):
		c.Status, c.Reason = corev1.ConditionTrue, ReasonEveryNamespace
		c.Message = "spec.allowedNamespaces shares this tunnel with every namespace, present and future: any of them can publish hostnames through it and route to its network. To share it with some, use from: Selector with a selector that names them"
	case sharing.Shared(cr):
		c.Status, c.Reason = corev1.ConditionTrue, ReasonSelectedNamespaces
		c.Message = "spec.allowedNamespaces shares this tunnel with the namespaces its selector picks"
	default:
		c.Status, c.Reason = corev1.ConditionFalse, ReasonOwnNamespaceOnly
		c.Message = "only sources of this namespace may use this tunnel"
	}
	return c
}

// reportSharing sets the Shared condition, with a Warning event when the
// tunnel becomes shared with every namespace.
func (r *Reconciler) reportSharing(cr *v1alpha1.CloudflareTunnel) {
	c := SharingCondition(cr)
	if c.Reason == ReasonEveryNamespace && cr.GetCondition(TypeShared).Reason != ReasonEveryNamespace {
		r.record.Event(cr, event.Warning(event.Reason(ReasonEveryNamespace), errors.New(c.Message)))
	}
	cr.SetConditions(c)
}
