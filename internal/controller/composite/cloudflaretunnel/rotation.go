package cloudflaretunnel

import (
	"context"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/rotation"
)

// rotationRequestField is the CloudflareTunnel's request, for messages.
const rotationRequestField = "spec.tokenRotation.requestedAt"

// TokenRotationFor is the rotation the Tunnel is asked for: the
// CloudflareTunnel's request, and once the Tunnel has rotated for it and
// the connectors have rolled out onto the new token, when that happened (so
// the Tunnel removes the connectors of the old token). A new request starts
// without it. A request that is not passed down (passedDown: one refused,
// or one already served) leaves the Tunnel with what it was asked before,
// unless that too is refused.
func TokenRotationFor(req *v1alpha1.TokenRotationRequest, current *ztv1alpha1.TokenRotation, done *ztv1alpha1.TokenRotationObservation, rotatedAt *metav1.Time, rolledOut bool, now metav1.Time) *ztv1alpha1.TokenRotation {
	if req != nil && !passedDown(req.RequestedAt, done, rotatedAt, now.Time) {
		req = nil
		if current != nil && rotation.CheckRequest(rotationRequestField, current.RequestedAt.Time, now.Time) == nil {
			req = &v1alpha1.TokenRotationRequest{RequestedAt: current.RequestedAt}
		}
	}
	if req == nil {
		return nil
	}
	out := &ztv1alpha1.TokenRotation{RequestedAt: req.RequestedAt}
	switch {
	case current != nil && current.RequestedAt.Equal(&req.RequestedAt) && current.RolledOutAt != nil:
		out.RolledOutAt = current.RolledOutAt
	case done != nil && done.RequestedAt.Equal(&req.RequestedAt) && done.RotatedAt != nil && rolledOut:
		out.RolledOutAt = &now
	}
	return out
}

// passedDown says whether the Tunnel is asked for a request: not when it is
// refused (in the future, or before rotation.Earliest: reportRotation says
// so), nor when a rotation already served it, other than the one serving it now (whose rollout and cleanup
// follow). What the Tunnel did (done) says that; a Tunnel with no rotation
// of its own (one that replaces a Tunnel deleted by hand) has only when
// this CloudflareTunnel last saw the token rotated (rotatedAt, its status).
func passedDown(req metav1.Time, done *ztv1alpha1.TokenRotationObservation, rotatedAt *metav1.Time, now time.Time) bool {
	switch {
	case rotation.CheckRequest(rotationRequestField, req.Time, now) != nil:
		return false
	case done != nil:
		return done.RequestedAt.Equal(&req) || !rotation.Served(req.Time, &done.RequestedAt, done.RotatedAt)
	default:
		return !rotation.Served(req.Time, nil, rotatedAt)
	}
}

// RolloutComplete says whether every cloudflared replica runs the token of
// this checksum and is ready, and no pod of an older template is left.
func RolloutComplete(dep *appsv1.Deployment, replicas int32, tokenChecksum string) bool {
	st := dep.Status
	return dep.Status.ObservedGeneration >= dep.Generation &&
		dep.Spec.Template.Annotations[AnnotationTokenHash] == tokenChecksum &&
		st.UpdatedReplicas == replicas && st.Replicas == replicas && st.ReadyReplicas >= replicas
}

// rolledOut says whether the connectors run the token a finished rotation
// published: the token Secret no longer holds the replaced token, and the
// Deployment has rolled out onto what it holds.
func (r *Reconciler) rolledOut(ctx context.Context, cr *v1alpha1.CloudflareTunnel, done *ztv1alpha1.TokenRotationObservation) (bool, error) {
	if done == nil || done.RotatedAt == nil || done.StaleConnectorsRemovedAt != nil {
		return false, nil
	}
	token, err := r.token(ctx, cr)
	if err != nil || len(token) == 0 || TokenChecksum(token) == done.ReplacedTokenChecksum {
		return false, err
	}
	dep := &appsv1.Deployment{}
	if err := r.kube.Get(ctx, types.NamespacedName{Namespace: cr.Namespace, Name: DeploymentName(cr)}, dep); err != nil {
		if kerrors.IsNotFound(err) {
			return false, nil
		}
		return false, errors.Wrap(err, "cannot get cloudflared Deployment")
	}
	return RolloutComplete(dep, Replicas(cr), TokenChecksum(token)), nil
}

// recordRotation copies when the token was rotated to status and says what
// a rotation did, once per step.
func (r *Reconciler) recordRotation(cr *v1alpha1.CloudflareTunnel, done *ztv1alpha1.TokenRotationObservation) {
	if done == nil || done.RotatedAt == nil {
		return
	}
	if cr.Status.TokenRotatedAt == nil || !cr.Status.TokenRotatedAt.Equal(done.RotatedAt) {
		r.record.Event(cr, event.Normal("TokenRotated", "Rotated the tunnel secret: the token Secret gets the new run token and the cloudflared pods roll onto it, one new pod ready before an old one goes"))
	}
	cr.Status.TokenRotatedAt = done.RotatedAt.DeepCopy()
}

// reportRotation sets the TokenRotation condition: what became of the
// request, against the last rotation the Tunnel records (or, for a Tunnel
// that replaced one deleted by hand, this CloudflareTunnel's status). A
// refused request is also a Warning event, and one already served a Normal
// event, once each: neither is ever silently left undone.
func (r *Reconciler) reportRotation(cr *v1alpha1.CloudflareTunnel, done *ztv1alpha1.TokenRotationObservation, now time.Time) {
	var req *metav1.Time
	if cr.Spec.TokenRotation != nil {
		req = &cr.Spec.TokenRotation.RequestedAt
	}
	last := rotation.Last{RotatedAt: cr.Status.TokenRotatedAt}
	if done != nil {
		last = rotation.Last{RequestedAt: &done.RequestedAt, RotatedAt: done.RotatedAt}
	}
	c, ok := rotation.Condition(rotationRequestField, req, last, now)
	if !ok {
		return
	}
	if prev := cr.GetCondition(rotation.TypeTokenRotation); prev.Reason != c.Reason || prev.Message != c.Message {
		switch {
		case rotation.Refused(c.Reason):
			r.record.Event(cr, event.Warning(event.Reason(c.Reason), errors.New(c.Message)))
		case c.Reason == rotation.ReasonAlreadyServed:
			r.record.Event(cr, event.Normal(event.Reason(c.Reason), c.Message))
		}
	}
	cr.SetConditions(c)
}
