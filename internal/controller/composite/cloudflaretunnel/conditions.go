package cloudflaretunnel

// Conditions: what the CloudflareTunnel says of its tunnel, connector and health.

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
)

func cond(t xpv2.ConditionType, ok bool, reason xpv2.ConditionReason, msg string) xpv2.Condition {
	s := corev1.ConditionFalse
	if ok {
		s = corev1.ConditionTrue
	}
	return xpv2.Condition{Type: t, Status: s, Reason: reason, Message: msg, LastTransitionTime: metav1.Now()}
}

func conditionMessage(tun *ztv1alpha1.Tunnel) string {
	s := tun.GetCondition(xpv2.TypeSynced)
	if s.Status == corev1.ConditionFalse && s.Message != "" {
		return s.Message
	}
	r := tun.GetCondition(xpv2.TypeReady)
	return strings.TrimSpace(string(r.Reason) + " " + r.Message)
}

// DeploymentCondition says whether every desired cloudflared replica is
// ready and up to date.
func DeploymentCondition(dep *appsv1.Deployment, replicas int32) xpv2.Condition {
	if replicas == 0 {
		return cond(TypeDeploymentReady, true, ReasonScaledToZero, "cloudflared is scaled to zero")
	}
	current := dep.Status.ObservedGeneration >= dep.Generation
	if current && dep.Status.ReadyReplicas >= replicas && dep.Status.UpdatedReplicas >= replicas {
		return cond(TypeDeploymentReady, true, ReasonReplicasReady, fmt.Sprintf("%d/%d cloudflared replicas ready", dep.Status.ReadyReplicas, replicas))
	}
	return cond(TypeDeploymentReady, false, ReasonReplicasNotReady, fmt.Sprintf("%d/%d cloudflared replicas ready", dep.Status.ReadyReplicas, replicas))
}

// ReadyCondition combines the tunnel, the Deployment and Cloudflare's view
// of the connections into one answer, saying why not. Ready means serving:
// a tunnel scaled to zero, down or never connected, or one the provider
// cannot reach Cloudflare for (credentials gone, endpoint unreachable), is
// not. A degraded tunnel still serves: it is Ready, and says it is degraded.
func ReadyCondition(tun TunnelState, dep, degraded xpv2.Condition, replicas int32) xpv2.Condition {
	switch {
	case !tun.Ready:
		return cond(xpv2.TypeReady, false, ReasonTunnelNotReady, "the Tunnel is not ready: "+tun.Message)
	case tun.Synced.Status == corev1.ConditionFalse:
		return cond(xpv2.TypeReady, false, ReasonTunnelNotSynced, "the provider cannot reconcile the Tunnel with Cloudflare, so what Cloudflare serves is unknown and changes do not reach it: "+tun.Message)
	case dep.Status != corev1.ConditionTrue:
		return cond(xpv2.TypeReady, false, dep.Reason, dep.Message)
	case replicas == 0:
		return cond(xpv2.TypeReady, false, ReasonScaledToZero, "cloudflared is scaled to zero; the tunnel serves no traffic")
	case tun.Status == statusDown:
		return cond(xpv2.TypeReady, false, ReasonTunnelDown, "Cloudflare reports the tunnel down: it had connections to the edge and has none, although the cloudflared pods are ready; read their logs (they must reach Cloudflare's edge on outbound port 7844) and check that the token Secret holds the tunnel's current token")
	case tun.Connections == 0:
		return cond(xpv2.TypeReady, false, ReasonNotConnected, "cloudflared is running but Cloudflare reports no connections yet")
	}
	msg := fmt.Sprintf("%d connections from %d connectors to Cloudflare's edge", tun.Connections, tun.Connectors)
	if degraded.Status == corev1.ConditionTrue {
		msg += "; serving, but degraded: " + degraded.Message
	}
	return cond(xpv2.TypeReady, true, ReasonConnected, msg)
}

// DegradedCondition says whether the tunnel serves with less than it
// should: Cloudflare reports it degraded (at least one edge connection has
// failed), or fewer connectors are connected than replicas asked for. More
// connectors than replicas (a rollout's surge) is not degraded.
func DegradedCondition(tun TunnelState, replicas int32) xpv2.Condition {
	figures := fmt.Sprintf("%d/%d connectors connected, %d edge connections", tun.Connectors, replicas, tun.Connections)
	switch {
	case tun.Status == "":
		return xpv2.Condition{Type: TypeDegraded, Status: corev1.ConditionUnknown, Reason: ReasonWaitingForTunnel, Message: "Cloudflare's view of the tunnel is not known yet", LastTransitionTime: metav1.Now()}
	case replicas == 0:
		return cond(TypeDegraded, false, ReasonScaledToZero, "cloudflared is scaled to zero")
	case tun.Status == statusDegraded:
		return cond(TypeDegraded, true, ReasonCloudflareDegraded, "Cloudflare reports the tunnel degraded: at least one edge connection has failed ("+figures+"; each cloudflared keeps 4); read the cloudflared pods' logs")
	case int32(tun.Connectors) < replicas:
		return cond(TypeDegraded, true, ReasonTooFewConnectors, fmt.Sprintf("%s; Cloudflare reports the tunnel %s; a replica is not connected: see the DeploymentReady condition and the cloudflared pods' logs", figures, tun.Status))
	default:
		return cond(TypeDegraded, false, ReasonHealthy, fmt.Sprintf("%s; Cloudflare reports the tunnel %s", figures, tun.Status))
	}
}
