package cloudflaretunnel_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/cloudflaretunnel"
)

func TestReadyCondition(t *testing.T) {
	synced := xpv2.Condition{Type: xpv2.TypeSynced, Status: corev1.ConditionTrue}
	notSynced := xpv2.Condition{Type: xpv2.TypeSynced, Status: corev1.ConditionFalse, Message: "Secret not found"}
	depReady := xpv2.Condition{Type: cloudflaretunnel.TypeDeploymentReady, Status: corev1.ConditionTrue, Reason: cloudflaretunnel.ReasonReplicasReady}
	depNotReady := xpv2.Condition{Type: cloudflaretunnel.TypeDeploymentReady, Status: corev1.ConditionFalse, Reason: cloudflaretunnel.ReasonReplicasNotReady}
	type want struct {
		status corev1.ConditionStatus
		reason xpv2.ConditionReason
	}
	cases := map[string]struct {
		tun         cloudflaretunnel.TunnelState
		dep         xpv2.Condition
		replicas    int32
		connections int
		want        want
	}{
		"Serving":           {tun: cloudflaretunnel.TunnelState{Ready: true, Synced: synced}, dep: depReady, replicas: 2, connections: 8, want: want{corev1.ConditionTrue, cloudflaretunnel.ReasonConnected}},
		"TunnelNotReady":    {tun: cloudflaretunnel.TunnelState{Synced: synced}, dep: depReady, replicas: 2, connections: 8, want: want{corev1.ConditionFalse, cloudflaretunnel.ReasonTunnelNotReady}},
		"CloudflareUnknown": {tun: cloudflaretunnel.TunnelState{Ready: true, Synced: notSynced}, dep: depReady, replicas: 2, connections: 8, want: want{corev1.ConditionFalse, cloudflaretunnel.ReasonTunnelNotSynced}},
		"PodsNotReady":      {tun: cloudflaretunnel.TunnelState{Ready: true, Synced: synced}, dep: depNotReady, replicas: 2, want: want{corev1.ConditionFalse, cloudflaretunnel.ReasonReplicasNotReady}},
		"ScaledToZero":      {tun: cloudflaretunnel.TunnelState{Ready: true, Synced: synced}, dep: depReady, replicas: 0, want: want{corev1.ConditionFalse, cloudflaretunnel.ReasonScaledToZero}},
		"NoConnectionsYet":  {tun: cloudflaretunnel.TunnelState{Ready: true, Synced: synced}, dep: depReady, replicas: 1, want: want{corev1.ConditionFalse, cloudflaretunnel.ReasonNotConnected}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := cloudflaretunnel.ReadyCondition(tc.tun, tc.dep, tc.replicas, tc.connections)
			if diff := cmp.Diff(tc.want, want{c.Status, c.Reason}, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("ReadyCondition(): -want, +got:\n%s", diff)
			}
		})
	}
}
