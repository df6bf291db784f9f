package cloudflaretunnel

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
)

// refuseConnector answers a spec.connector (or spec.image) the provider
// refuses: a Warning event when the answer is new, and DeploymentReady and
// Ready False with its reason. Nothing is applied: the running Deployment,
// if any, keeps serving as it was.
func (r *Reconciler) refuseConnector(cr *v1alpha1.CloudflareTunnel, running *appsv1.Deployment, reason xpv2.ConditionReason, err error) {
	msg := err.Error() + "; the cloudflared Deployment is left as it was"
	if running == nil || running.CreationTimestamp.IsZero() {
		msg = err.Error() + "; no cloudflared Deployment is created until it is fixed"
	} else {
		msg += fmt.Sprintf(" (%d/%d replicas ready)", running.Status.ReadyReplicas, running.Status.Replicas)
	}
	if c := cr.GetCondition(TypeDeploymentReady); c.Reason != reason || !strings.HasPrefix(c.Message, err.Error()+";") {
		r.record.Event(cr, event.Warning(event.Reason(reason), err))
	}
	cr.SetConditions(
		cond(TypeDeploymentReady, false, reason, msg),
		cond(xpv2.TypeReady, false, reason, msg),
	)
}
