package tunnel

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/test"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
)

// since2026 puts the tests' seconds after rotation.Earliest, before which
// a request is refused.
const since2026 = 1767225600

func TestNextRotationStep(t *testing.T) {
	at := func(s int64) metav1.Time { return metav1.NewTime(time.Unix(since2026+s, 0)) }
	p := func(s int64) *metav1.Time { t := at(s); return &t }
	const now = 1000
	asked := func(req int64, rolledOut *metav1.Time) *v1alpha1.TokenRotation {
		return &v1alpha1.TokenRotation{RequestedAt: at(req), RolledOutAt: rolledOut}
	}
	rotated := func(req int64, rotatedAt, removedAt *metav1.Time) *v1alpha1.TokenRotationObservation {
		return &v1alpha1.TokenRotationObservation{RequestedAt: at(req), RotatedAt: rotatedAt, ReplacedTokenChecksum: "old", StaleConnectorsRemovedAt: removedAt}
	}
	cases := map[string]struct {
		reason string
		want   *v1alpha1.TokenRotation
		got    *v1alpha1.TokenRotationObservation
		step   rotationStep
	}{
		"NothingAsked":          {"no request, nothing done", nil, nil, rotationNone},
		"FirstRequest":          {"a request never served starts a rotation", asked(100, nil), nil, rotationStart},
		"Served":                {"a served request is not rotated again (a retried reconcile)", asked(100, nil), rotated(100, p(101), nil), rotationNone},
		"LaterRequest":          {"a later request rotates again", asked(200, nil), rotated(100, p(101), p(150)), rotationStart},
		"EarlierRequest":        {"an earlier request than the one served does nothing", asked(50, nil), rotated(100, p(101), nil), rotationNone},
		"Interrupted":           {"a rotation whose secret or token read failed is confirmed", asked(100, nil), rotated(100, nil, nil), rotationConfirm},
		"InterruptedUnasked":    {"it is confirmed even when the request went away", nil, rotated(100, nil, nil), rotationConfirm},
		"InterruptedNewRequest": {"it is confirmed before a newer request starts", asked(200, nil), rotated(100, nil, nil), rotationConfirm},
		"RolledOut":             {"rolled out after the rotation: remove stale connectors", asked(100, p(120)), rotated(100, p(101), nil), rotationCleanup},
		"RolledOutBefore":       {"a rollout older than the rotation is not this one's", asked(100, p(90)), rotated(100, p(101), nil), rotationNone},
		"Cleaned":               {"stale connectors are removed once", asked(100, p(120)), rotated(100, p(101), p(121)), rotationNone},
		"RolloutOfAnother":      {"a rollout time for another request removes nothing", asked(200, p(220)), rotated(100, p(101), nil), rotationStart},
		"AtOrBeforeTheRotation": {"a request the last rotation already satisfies is not served again", asked(150, nil), rotated(100, p(200), p(210)), rotationNone},
		"InTheFuture":           {"a request beyond the skew is refused, not served", asked(now+3600, nil), nil, rotationRefused},
		"InTheFutureAfterOne":   {"refused also after a served one", asked(now+3600, nil), rotated(100, p(101), p(150)), rotationRefused},
		"WithinTheSkew":         {"a request a little ahead of the clock is served", asked(now+60, nil), rotated(100, p(101), p(150)), rotationStart},
		"ServedWithinTheSkew":   {"and only once, though the rotation came before its time", asked(now+60, nil), rotated(now+60, p(now), nil), rotationNone},
		"FutureWhileUnderWay":   {"a rotation under way is finished whatever is asked", asked(now+3600, nil), rotated(100, nil, nil), rotationConfirm},
		"CorrectedAfter2099":    {"after a far-future request was served (before the limit), a real one rotates", asked(now, nil), rotated(4070908800, p(200), p(210)), rotationStart},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := nextRotationStep(tc.want, tc.got, time.Unix(since2026+now, 0)); got != tc.step {
				t.Errorf("%s: nextRotationStep = %q, want %q", tc.reason, got, tc.step)
			}
		})
	}
}

func TestNewTunnelSecret(t *testing.T) {
	a, err := newTunnelSecret()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := newTunnelSecret()
	// base64 of 32 bytes is 44 characters; Cloudflare asks for 32 or more.
	if len(a) != 44 || a == b {
		t.Errorf("secrets of %d characters, equal %v: want 44 and fresh each time", len(a), a == b)
	}
}

func TestHoldsReplacedToken(t *testing.T) {
	now := metav1.Now()
	rot := &v1alpha1.TokenRotationObservation{RotatedAt: &now, ReplacedTokenChecksum: TokenChecksum([]byte("old"))}
	under := &v1alpha1.TokenRotationObservation{ReplacedTokenChecksum: TokenChecksum([]byte("old"))}
	for _, tc := range []struct {
		rot   *v1alpha1.TokenRotationObservation
		token string
		want  bool
	}{
		{rot, "old", true},
		{rot, "new", false},
		{under, "old", false}, // under way: the confirm step publishes
		{nil, "old", false},
	} {
		if got := holdsReplacedToken(tc.rot, []byte(tc.token)); got != tc.want {
			t.Errorf("holdsReplacedToken(%+v, %s) = %v, want %v", tc.rot, tc.token, got, tc.want)
		}
	}
}

// rotatingTunnels is a tunnel whose secret can be rotated; rotations counts
// the secrets sent.
type rotatingTunnels struct {
	cloudflare.TunnelsAPI
	token     string
	rotations int
}

func (f *rotatingTunnels) TunnelToken(context.Context, string) (string, error) { return f.token, nil }
func (f *rotatingTunnels) TunnelConnectors(context.Context, string) ([]cloudflare.Connector, error) {
	return []cloudflare.Connector{{ID: "c1"}}, nil
}
func (f *rotatingTunnels) RotateTunnelSecret(_ context.Context, id, _ string) (*cloudflare.Tunnel, error) {
	f.rotations++
	f.token = fmt.Sprintf("token-%d", f.rotations)
	return &cloudflare.Tunnel{ID: id}, nil
}

// A rotation whose status write at the end of the reconcile is lost (a
// conflict) is confirmed by the retry, not served again: one new secret per
// request.
func TestARotationSurvivesALostStatusWrite(t *testing.T) {
	stored := &v1alpha1.Tunnel{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "edge", Annotations: map[string]string{meta.AnnotationKeyExternalName: "id"}}}
	stored.Spec.ForProvider.TokenRotation = &v1alpha1.TokenRotation{RequestedAt: metav1.NewTime(time.Unix(since2026+900, 0))}
	kube := &test.MockClient{MockStatusUpdate: func(_ context.Context, obj client.Object, _ ...client.SubResourceUpdateOption) error {
		stored = obj.(*v1alpha1.Tunnel).DeepCopy() // what the API server holds
		return nil
	}}
	tunnels := &rotatingTunnels{token: "token-0"}
	e := &external{tunnels: tunnels, kube: kube, now: func() time.Time { return time.Unix(since2026+1000, 0) }}

	first := stored.DeepCopy()
	details, err := e.rotate(context.Background(), first)
	if err != nil || string(details[KeyToken]) != "token-1" {
		t.Fatalf("first reconcile: details %v, error %v", details, err)
	}
	// The reconciler's status write after it is lost: the retry starts from
	// what the API server holds.
	retry := stored.DeepCopy()
	details, err = e.rotate(context.Background(), retry)
	if err != nil {
		t.Fatal(err)
	}
	if tunnels.rotations != 1 {
		t.Errorf("%d tunnel secrets sent for one request, want 1", tunnels.rotations)
	}
	if string(details[KeyToken]) != "token-1" || retry.Status.AtProvider.TokenRotation.RotatedAt == nil {
		t.Errorf("the retry published %q and recorded %+v, want the rotated token confirmed", details[KeyToken], retry.Status.AtProvider.TokenRotation)
	}
}
