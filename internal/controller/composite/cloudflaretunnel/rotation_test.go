package cloudflaretunnel_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/composite/cloudflaretunnel"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/tunnel"
)

// since2026 puts the tests' seconds after rotation.Earliest, before which
// a request is refused.
const since2026 = 1767225600

func TestTokenRotationFor(t *testing.T) {
	at := func(s int64) metav1.Time { return metav1.NewTime(time.Unix(since2026+s, 0)) }
	p := func(s int64) *metav1.Time { t := at(s); return &t }
	now := at(500)
	req := &v1alpha1.TokenRotationRequest{RequestedAt: at(100)}
	done := &ztv1alpha1.TokenRotationObservation{RequestedAt: at(100), RotatedAt: p(101)}
	cases := map[string]struct {
		reason    string
		req       *v1alpha1.TokenRotationRequest
		current   *ztv1alpha1.TokenRotation
		done      *ztv1alpha1.TokenRotationObservation
		rotatedAt *metav1.Time
		rolledOut bool
		want      *ztv1alpha1.TokenRotation
	}{
		"NoRequest":                {"nothing asked, nothing passed down", nil, nil, nil, nil, false, nil},
		"Passed":                   {"the request goes down as it is", req, nil, nil, nil, false, &ztv1alpha1.TokenRotation{RequestedAt: at(100)}},
		"RollingOut":               {"rotated but not rolled out: no rollout time yet", req, &ztv1alpha1.TokenRotation{RequestedAt: at(100)}, done, p(101), false, &ztv1alpha1.TokenRotation{RequestedAt: at(100)}},
		"RolledOut":                {"rotated and rolled out: now", req, &ztv1alpha1.TokenRotation{RequestedAt: at(100)}, done, p(101), true, &ztv1alpha1.TokenRotation{RequestedAt: at(100), RolledOutAt: p(500)}},
		"Kept":                     {"a rollout time once set is kept", req, &ztv1alpha1.TokenRotation{RequestedAt: at(100), RolledOutAt: p(300)}, done, p(101), false, &ztv1alpha1.TokenRotation{RequestedAt: at(100), RolledOutAt: p(300)}},
		"NotRotatedYet":            {"a rollout before the Tunnel rotated is not this rotation's", req, nil, &ztv1alpha1.TokenRotationObservation{RequestedAt: at(100)}, nil, true, &ztv1alpha1.TokenRotation{RequestedAt: at(100)}},
		"ReplacedTunnel":           {"a new Tunnel is not asked again for a request already served", req, nil, nil, p(101), false, nil},
		"ReplacedTunnelNewRequest": {"but it is for a later one", &v1alpha1.TokenRotationRequest{RequestedAt: at(200)}, nil, nil, p(101), false, &ztv1alpha1.TokenRotation{RequestedAt: at(200)}},
		"NewRequest":               {"a new request starts without the last rollout time", &v1alpha1.TokenRotationRequest{RequestedAt: at(200)}, &ztv1alpha1.TokenRotation{RequestedAt: at(100), RolledOutAt: p(300)}, done, p(101), true, &ztv1alpha1.TokenRotation{RequestedAt: at(200)}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := cloudflaretunnel.TokenRotationFor(tc.req, tc.current, tc.done, tc.rotatedAt, tc.rolledOut, now)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestRolloutComplete(t *testing.T) {
	dep := func(mod func(*appsv1.Deployment)) *appsv1.Deployment {
		d := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Generation: 3},
			Spec:       appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{cloudflaretunnel.AnnotationTokenHash: "new"}}}},
			Status:     appsv1.DeploymentStatus{ObservedGeneration: 3, Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 2},
		}
		if mod != nil {
			mod(d)
		}
		return d
	}
	cases := map[string]struct {
		dep  *appsv1.Deployment
		want bool
	}{
		"Done":           {dep(nil), true},
		"NotObservedYet": {dep(func(d *appsv1.Deployment) { d.Status.ObservedGeneration = 2 }), false},
		"OldToken":       {dep(func(d *appsv1.Deployment) { d.Spec.Template.Annotations[cloudflaretunnel.AnnotationTokenHash] = "old" }), false},
		"OldPodLeft":     {dep(func(d *appsv1.Deployment) { d.Status.Replicas = 3 }), false},
		"NotAllUpdated":  {dep(func(d *appsv1.Deployment) { d.Status.UpdatedReplicas = 1 }), false},
		"NewPodNotReady": {dep(func(d *appsv1.Deployment) { d.Status.ReadyReplicas = 1 }), false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := cloudflaretunnel.RolloutComplete(tc.dep, 2, "new"); got != tc.want {
				t.Errorf("RolloutComplete = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestChecksumsAgree: the Tunnel records the replaced token's checksum and
// the CloudflareTunnel compares its token Secret with it.
func TestChecksumsAgree(t *testing.T) {
	if a, b := cloudflaretunnel.TokenChecksum([]byte("token")), tunnel.TokenChecksum([]byte("token")); a != b {
		t.Errorf("checksums differ: %s and %s", a, b)
	}
}
