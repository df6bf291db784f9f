package tunnel

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/rotation"
)

// rotationStep is what a token rotation needs next.
type rotationStep string

const (
	rotationNone rotationStep = ""
	// rotationStart: a new request; note the token and connectors it
	// replaces, send a new secret, read the new token.
	rotationStart rotationStep = "start"
	// rotationConfirm: a rotation that did not finish (its secret or its
	// token read failed, perhaps after Cloudflare took the secret): read
	// the token; send a new secret only if Cloudflare still has the old.
	rotationConfirm rotationStep = "confirm"
	// rotationCleanup: the connectors run the new token; remove the
	// connectors that ran with the old one.
	rotationCleanup rotationStep = "remove stale connectors"
	// rotationRefused: the request is later than now plus
	// rotation.MaxRequestSkew, or before rotation.Earliest. Nothing is rotated; Update returns the
	// refusal, so it is a Warning event as well as the TokenRotation
	// condition, and the resource's other fields are still updated.
	rotationRefused rotationStep = "refused (requestedAt is in the future or before rotation.Earliest)"
)

// requestField is the request's field, for messages.
const requestField = "spec.forProvider.tokenRotation.requestedAt"

// tunnelSecretBytes is the length of a new tunnel secret; Cloudflare asks
// for at least 32 bytes.
const tunnelSecretBytes = 32

// nextRotationStep decides what a token rotation needs, from what is asked
// (spec) and what was done (status), at now. A rotation under way is
// finished whatever is asked now, so the connection Secret never stays on a
// token Cloudflare no longer accepts; a request in the future or too old is
// refused;
// each request is served once (a retried reconcile finds it in status), and
// one the last rotation already satisfies is not served again
// (rotation.Served); stale connectors are removed only once the rollout
// after this rotation is done.
func nextRotationStep(want *v1alpha1.TokenRotation, got *v1alpha1.TokenRotationObservation, now time.Time) rotationStep {
	switch {
	case got != nil && got.RotatedAt == nil:
		return rotationConfirm
	case want == nil:
		return rotationNone
	case rotation.CheckRequest(requestField, want.RequestedAt.Time, now) != nil:
		return rotationRefused
	case got == nil || !rotation.Served(want.RequestedAt.Time, &got.RequestedAt, got.RotatedAt):
		return rotationStart
	case want.RequestedAt.Equal(&got.RequestedAt) && got.StaleConnectorsRemovedAt == nil && want.RolledOutAt != nil && !want.RolledOutAt.Before(got.RotatedAt):
		return rotationCleanup
	default:
		return rotationNone
	}
}

// TokenChecksum fingerprints a run token (SHA-256, hex) so status can say
// which token was replaced without holding it.
func TokenChecksum(token []byte) string {
	sum := sha256.Sum256(token)
	return hex.EncodeToString(sum[:])
}

// newTunnelSecret is a fresh random tunnel secret, base64 as Cloudflare
// takes it. It is never logged.
func newTunnelSecret() (string, error) {
	b := make([]byte, tunnelSecretBytes)
	if _, err := rand.Read(b); err != nil {
		return "", errors.Wrap(err, "cannot generate a tunnel secret")
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// observeRotation is the step the rotation needs now, with the
// TokenRotation condition saying what became of the request.
func (e *external) observeRotation(cr *v1alpha1.Tunnel) rotationStep {
	now := e.now()
	setRotationCondition(cr, now)
	return nextRotationStep(cr.Spec.ForProvider.TokenRotation, cr.Status.AtProvider.TokenRotation, now)
}

// setRotationCondition sets the TokenRotation condition from spec and
// status (rotation.Condition).
func setRotationCondition(cr *v1alpha1.Tunnel, now time.Time) {
	var req *metav1.Time
	if want := cr.Spec.ForProvider.TokenRotation; want != nil {
		req = &want.RequestedAt
	}
	var last rotation.Last
	if got := cr.Status.AtProvider.TokenRotation; got != nil {
		last = rotation.Last{RequestedAt: &got.RequestedAt, RotatedAt: got.RotatedAt}
	}
	if c, ok := rotation.Condition(requestField, req, last, now); ok {
		cr.SetConditions(c)
	}
}

// rotate takes the step nextRotationStep names. The new token is returned
// as a connection detail, published like the first one.
func (e *external) rotate(ctx context.Context, cr *v1alpha1.Tunnel) (managed.ConnectionDetails, error) {
	id := meta.GetExternalName(cr)
	now := e.now()
	// What the step did, said at once rather than at the next poll.
	defer setRotationCondition(cr, now)
	switch nextRotationStep(cr.Spec.ForProvider.TokenRotation, cr.Status.AtProvider.TokenRotation, now) {
	case rotationStart:
		return e.startRotation(ctx, cr, id)
	case rotationConfirm:
		return e.confirmRotation(ctx, cr, id, false)
	case rotationCleanup:
		return nil, e.removeStaleConnectors(ctx, cr, id)
	case rotationRefused:
		return nil, rotation.CheckRequest(requestField, cr.Spec.ForProvider.TokenRotation.RequestedAt.Time, now)
	}
	return nil, nil
}

// startRotation records what the rotation replaces, and writes it to the
// API server before sending the new secret: should a later call, or the
// reconciler's own status write at the end (a conflict), fail, the retry
// finds the rotation under way and confirms it instead of rotating again.
func (e *external) startRotation(ctx context.Context, cr *v1alpha1.Tunnel, id string) (managed.ConnectionDetails, error) {
	old, err := e.tunnels.TunnelToken(ctx, id)
	if err != nil {
		return nil, errors.Wrap(err, "cannot read the tunnel token before rotating it")
	}
	conns, err := e.tunnels.TunnelConnectors(ctx, id)
	if err != nil {
		return nil, errors.Wrap(err, "cannot list the connectors before rotating the token")
	}
	stale := make([]string, 0, len(conns))
	for _, c := range conns {
		stale = append(stale, c.ID)
	}
	cr.Status.AtProvider.TokenRotation = &v1alpha1.TokenRotationObservation{
		RequestedAt:           cr.Spec.ForProvider.TokenRotation.RequestedAt,
		ReplacedTokenChecksum: TokenChecksum([]byte(old)),
		StaleConnectors:       stale,
	}
	// Update refreshes cr from the answer, so the reconciler's later
	// status write does not conflict with this one.
	if err := e.kube.Status().Update(ctx, cr); err != nil {
		return nil, errors.Wrap(err, "cannot record the token rotation before rotating the tunnel secret")
	}
	return e.sendSecret(ctx, cr, id)
}

func (e *external) sendSecret(ctx context.Context, cr *v1alpha1.Tunnel, id string) (managed.ConnectionDetails, error) {
	secret, err := newTunnelSecret()
	if err != nil {
		return nil, err
	}
	if _, err := e.tunnels.RotateTunnelSecret(ctx, id, secret); err != nil {
		return nil, errors.Wrap(err, "cannot rotate the tunnel secret (retried: the token is read first, so a secret Cloudflare took is not replaced again)")
	}
	return e.confirmRotation(ctx, cr, id, true)
}

// confirmRotation reads the token. Cloudflare still returning the replaced
// one means no secret reached it: send one (once per call).
func (e *external) confirmRotation(ctx context.Context, cr *v1alpha1.Tunnel, id string, justSent bool) (managed.ConnectionDetails, error) {
	token, err := e.tunnels.TunnelToken(ctx, id)
	if err != nil {
		return nil, errors.Wrap(err, "cannot read the rotated tunnel token (retried)")
	}
	rot := cr.Status.AtProvider.TokenRotation
	if TokenChecksum([]byte(token)) == rot.ReplacedTokenChecksum {
		if justSent {
			return nil, errors.New("Cloudflare still returns the replaced tunnel token after the new secret was accepted; the rotation is retried")
		}
		return e.sendSecret(ctx, cr, id)
	}
	rot.RotatedAt = &metav1.Time{Time: e.now()}
	return managed.ConnectionDetails{KeyToken: []byte(token)}, nil
}

// removeStaleConnectors removes the connectors that were connected when the
// rotation began and still are listed; no other.
func (e *external) removeStaleConnectors(ctx context.Context, cr *v1alpha1.Tunnel, id string) error {
	rot := cr.Status.AtProvider.TokenRotation
	conns, err := e.tunnels.TunnelConnectors(ctx, id)
	if err != nil {
		return errors.Wrap(err, "cannot list the connectors to remove those of the replaced token")
	}
	for _, c := range conns {
		if !slices.Contains(rot.StaleConnectors, c.ID) {
			continue
		}
		if err := e.tunnels.DeleteTunnelConnector(ctx, id, c.ID); err != nil && !cloudflare.IsNotFound(err) {
			return errors.Wrapf(err, "cannot remove connector %s, which ran with the replaced token", c.ID)
		}
	}
	rot.StaleConnectorsRemovedAt = &metav1.Time{Time: e.now()}
	return nil
}
