package cloudflaretunnel_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/composite/cloudflaretunnel"
)

type conditionWant struct {
	Status corev1.ConditionStatus
	Reason xpv2.ConditionReason
	// Says is what the message must contain, so a user can act on it.
	Says string
}

func got(c xpv2.Condition, says string) conditionWant {
	if !strings.Contains(c.Message, says) {
		says = "message " + c.Message
	}
	return conditionWant{c.Status, c.Reason, says}
}

var (
	synced    = xpv2.Condition{Type: xpv2.TypeSynced, Status: corev1.ConditionTrue}
	notSynced = xpv2.Condition{Type: xpv2.TypeSynced, Status: corev1.ConditionFalse, Message: "Secret not found"}
)

// serving is a healthy tunnel of two connectors.
func serving(mod func(*cloudflaretunnel.TunnelState)) cloudflaretunnel.TunnelState {
	s := cloudflaretunnel.TunnelState{Ready: true, Synced: synced, Status: "healthy", Connectors: 2, Connections: 8}
	if mod != nil {
		mod(&s)
	}
	return s
}

func TestReadyCondition(t *testing.T) {
	depReady := xpv2.Condition{Type: cloudflaretunnel.TypeDeploymentReady, Status: corev1.ConditionTrue, Reason: cloudflaretunnel.ReasonReplicasReady}
	depNotReady := xpv2.Condition{Type: cloudflaretunnel.TypeDeploymentReady, Status: corev1.ConditionFalse, Reason: cloudflaretunnel.ReasonReplicasNotReady}
	notDegraded := xpv2.Condition{Type: cloudflaretunnel.TypeDegraded, Status: corev1.ConditionFalse}
	degraded := xpv2.Condition{Type: cloudflaretunnel.TypeDegraded, Status: corev1.ConditionTrue, Message: "1/2 connectors connected"}
	cases := map[string]struct {
		tun      cloudflaretunnel.TunnelState
		dep      xpv2.Condition
		degraded xpv2.Condition
		replicas int32
		want     conditionWant
	}{
		"Serving":           {tun: serving(nil), dep: depReady, degraded: notDegraded, replicas: 2, want: conditionWant{corev1.ConditionTrue, cloudflaretunnel.ReasonConnected, "8 connections from 2 connectors"}},
		"DegradedServes":    {tun: serving(func(s *cloudflaretunnel.TunnelState) { s.Connectors, s.Connections = 1, 4 }), dep: depReady, degraded: degraded, replicas: 2, want: conditionWant{corev1.ConditionTrue, cloudflaretunnel.ReasonConnected, "serving, but degraded: 1/2 connectors connected"}},
		"TunnelNotReady":    {tun: serving(func(s *cloudflaretunnel.TunnelState) { s.Ready = false }), dep: depReady, degraded: notDegraded, replicas: 2, want: conditionWant{corev1.ConditionFalse, cloudflaretunnel.ReasonTunnelNotReady, "the Tunnel is not ready"}},
		"CloudflareUnknown": {tun: serving(func(s *cloudflaretunnel.TunnelState) { s.Synced, s.Message = notSynced, notSynced.Message }), dep: depReady, degraded: notDegraded, replicas: 2, want: conditionWant{corev1.ConditionFalse, cloudflaretunnel.ReasonTunnelNotSynced, "Secret not found"}},
		"PodsNotReady":      {tun: serving(nil), dep: depNotReady, degraded: notDegraded, replicas: 2, want: conditionWant{corev1.ConditionFalse, cloudflaretunnel.ReasonReplicasNotReady, ""}},
		"ScaledToZero":      {tun: serving(nil), dep: depReady, degraded: notDegraded, replicas: 0, want: conditionWant{corev1.ConditionFalse, cloudflaretunnel.ReasonScaledToZero, "scaled to zero"}},
		"NoConnectionsYet":  {tun: serving(func(s *cloudflaretunnel.TunnelState) { s.Status, s.Connectors, s.Connections = "inactive", 0, 0 }), dep: depReady, degraded: degraded, replicas: 1, want: conditionWant{corev1.ConditionFalse, cloudflaretunnel.ReasonNotConnected, "no connections yet"}},
		"Down":              {tun: serving(func(s *cloudflaretunnel.TunnelState) { s.Status, s.Connectors, s.Connections = "down", 0, 0 }), dep: depReady, degraded: degraded, replicas: 2, want: conditionWant{corev1.ConditionFalse, cloudflaretunnel.ReasonTunnelDown, "port 7844"}},
		"DownCountStale":    {tun: serving(func(s *cloudflaretunnel.TunnelState) { s.Status = "down" }), dep: depReady, degraded: notDegraded, replicas: 2, want: conditionWant{corev1.ConditionFalse, cloudflaretunnel.ReasonTunnelDown, "Cloudflare reports the tunnel down"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := cloudflaretunnel.ReadyCondition(tc.tun, tc.dep, tc.degraded, tc.replicas)
			if diff := cmp.Diff(tc.want, got(c, tc.want.Says)); diff != "" {
				t.Errorf("ReadyCondition(): -want, +got:\n%s", diff)
			}
		})
	}
}

func TestDegradedCondition(t *testing.T) {
	cases := map[string]struct {
		reason   string
		tun      cloudflaretunnel.TunnelState
		replicas int32
		want     conditionWant
	}{
		"Healthy":        {"every replica connected, Cloudflare healthy", serving(nil), 2, conditionWant{corev1.ConditionFalse, cloudflaretunnel.ReasonHealthy, "2/2 connectors connected, 8 edge connections; Cloudflare reports the tunnel healthy"}},
		"Surge":          {"more connectors than replicas (a rollout) is not degraded", serving(func(s *cloudflaretunnel.TunnelState) { s.Connectors, s.Connections = 3, 12 }), 2, conditionWant{corev1.ConditionFalse, cloudflaretunnel.ReasonHealthy, "3/2 connectors"}},
		"TooFew":         {"fewer connectors than replicas", serving(func(s *cloudflaretunnel.TunnelState) { s.Connectors, s.Connections = 1, 4 }), 2, conditionWant{corev1.ConditionTrue, cloudflaretunnel.ReasonTooFewConnectors, "1/2 connectors connected"}},
		"CloudflareSays": {"Cloudflare's degraded wins, with the figures", serving(func(s *cloudflaretunnel.TunnelState) { s.Status, s.Connections = "degraded", 6 }), 2, conditionWant{corev1.ConditionTrue, cloudflaretunnel.ReasonCloudflareDegraded, "2/2 connectors connected, 6 edge connections"}},
		"DegradedTooFew": {"Cloudflare degraded and too few connectors: Cloudflare's reason", serving(func(s *cloudflaretunnel.TunnelState) { s.Status, s.Connectors, s.Connections = "degraded", 1, 2 }), 2, conditionWant{corev1.ConditionTrue, cloudflaretunnel.ReasonCloudflareDegraded, "1/2 connectors connected"}},
		"Down":           {"a down tunnel has none of its connectors", serving(func(s *cloudflaretunnel.TunnelState) { s.Status, s.Connectors, s.Connections = "down", 0, 0 }), 2, conditionWant{corev1.ConditionTrue, cloudflaretunnel.ReasonTooFewConnectors, "0/2 connectors connected, 0 edge connections; Cloudflare reports the tunnel down"}},
		"ScaledToZero":   {"nothing asked for, nothing missing", serving(func(s *cloudflaretunnel.TunnelState) { s.Connectors, s.Connections = 0, 0 }), 0, conditionWant{corev1.ConditionFalse, cloudflaretunnel.ReasonScaledToZero, "scaled to zero"}},
		"NotObservedYet": {"before the Tunnel is observed, unknown", cloudflaretunnel.TunnelState{}, 2, conditionWant{corev1.ConditionUnknown, cloudflaretunnel.ReasonWaitingForTunnel, "not known yet"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := cloudflaretunnel.DegradedCondition(tc.tun, tc.replicas)
			if c.Type != cloudflaretunnel.TypeDegraded {
				t.Errorf("type %s", c.Type)
			}
			if diff := cmp.Diff(tc.want, got(c, tc.want.Says)); diff != "" {
				t.Errorf("%s: DegradedCondition(): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
