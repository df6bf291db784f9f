package accessservicetoken

import (
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/mr"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/rotation"
)

// defaultDuration is Cloudflare's (and the schema's) duration of a token.
const defaultDuration = "8760h"

// forever is the duration of a token that never expires.
const forever = "forever"

// requestField is the rotation request's field, for messages.
const requestField = "spec.forProvider.rotation.requestedAt"

// Input is the token Cloudflare is asked to create for p: turned off at
// once when asked for off, so it never authenticates.
func Input(p v1alpha1.AccessServiceTokenParameters) cloudflare.ServiceTokenInput {
	in := cloudflare.ServiceTokenInput{Name: p.Name, Duration: duration(p)}
	if !enabled(p) {
		in.Enabled = ptr.To(false)
	}
	return in
}

// enabled is whether p asks for the token on (the default).
func enabled(p v1alpha1.AccessServiceTokenParameters) bool {
	return ptr.Deref(p.Enabled, true)
}

func duration(p v1alpha1.AccessServiceTokenParameters) string {
	if p.Duration == "" {
		return defaultDuration
	}
	return p.Duration
}

// Change is what an update sends for the name, duration and enabled
// drift of got (ok false: none). The duration is sent only when it
// changed, since Cloudflare counts a duration sent from now: resending it
// would move the expiry each time the name is corrected. Enabled is sent
// only when it changed too, so a correction of the name never turns a
// token on or off.
func Change(p v1alpha1.AccessServiceTokenParameters, got cloudflare.ServiceToken) (in cloudflare.ServiceTokenInput, ok bool) {
	in = cloudflare.ServiceTokenInput{Name: p.Name}
	if !sameDuration(duration(p), got.Duration) {
		in.Duration = duration(p)
	}
	if enabled(p) != got.IsEnabled() {
		in.Enabled = ptr.To(enabled(p))
	}
	return in, p.Name != got.Name || in.Duration != "" || in.Enabled != nil
}

// TurnedOnAgain says whether a change turns back on a token that was
// turned off in Cloudflare: by hand, or by Cloudflare's cleanup of
// inactive tokens (action disable), which a Warning event then reports.
func TurnedOnAgain(in cloudflare.ServiceTokenInput) bool {
	return in.Enabled != nil && *in.Enabled
}

// sameDuration compares durations by length, so "8760h" and "8760h0m0s"
// (should Cloudflare answer in Go's long form) are the same.
func sameDuration(a, b string) bool {
	if a == b {
		return true
	}
	da, errA := time.ParseDuration(a)
	db, errB := time.ParseDuration(b)
	return errA == nil && errB == nil && da == db
}

// Diff describes how the token differs from what is asked, now: its name
// and duration, a rotation asked for and not yet made, an expiry due for
// refresh. "" when there is nothing to do. It never holds a secret.
func Diff(cr *v1alpha1.AccessServiceToken, got cloudflare.ServiceToken, now time.Time) string {
	p := cr.Spec.ForProvider
	var d []string
	if p.Name != got.Name {
		d = append(d, fmt.Sprintf("name: %q in Cloudflare, %q desired", got.Name, p.Name))
	}
	if !sameDuration(duration(p), got.Duration) {
		d = append(d, fmt.Sprintf("duration: %q in Cloudflare, %q desired", got.Duration, duration(p)))
	}
	if enabled(p) != got.IsEnabled() {
		d = append(d, fmt.Sprintf("enabled: %t in Cloudflare, %t desired", got.IsEnabled(), enabled(p)))
	}
	if due, err := RotationDue(p.Rotation, cr.Status.AtProvider.Rotation, got.CreatedAt, now); due || err != nil {
		d = append(d, "rotation: "+requestField+" not served yet")
	}
	if RefreshDue(p.RefreshBefore, got.ExpiresAt, now) {
		d = append(d, fmt.Sprintf("expiry: %s is within refreshBefore (%s)", got.ExpiresAt.UTC().Format(time.RFC3339), p.RefreshBefore.Duration))
	}
	return strings.Join(d, "\n")
}

// RotationDue says whether the request asks for a rotation now: once per
// new time, as a Tunnel's token rotation (internal/rotation). The secret
// issued when the token was created counts as a rotation at created, so a
// request made before the token was is already served. A request beyond
// rotation.MaxRequestSkew is refused (rotation.FutureRequestError).
func RotationDue(want *v1alpha1.AccessServiceTokenRotation, last *v1alpha1.AccessServiceTokenRotationObservation, created, now time.Time) (bool, error) {
	if want == nil {
		return false, nil
	}
	if err := rotation.CheckRequest(requestField, want.RequestedAt.Time, now); err != nil {
		return false, err
	}
	var served, rotated *metav1.Time
	if !created.IsZero() {
		rotated = &metav1.Time{Time: created}
	}
	if last != nil {
		served, rotated = &last.RequestedAt, &last.RotatedAt
	}
	return !rotation.Served(want.RequestedAt.Time, served, rotated), nil
}

// PreviousExpiresAt is when the secret a rotation at now replaces stops
// being accepted: after the overlap asked for; nil (at once, Cloudflare's
// default) without one.
func PreviousExpiresAt(want *v1alpha1.AccessServiceTokenRotation, now time.Time) *time.Time {
	if want == nil || want.PreviousSecretExpiresAfter == nil || want.PreviousSecretExpiresAfter.Duration <= 0 {
		return nil
	}
	t := now.Add(want.PreviousSecretExpiresAfter.Duration).UTC().Truncate(time.Second)
	return &t
}

// RefreshDue says whether the token's expiry is to be extended now: it
// expires in less than refreshBefore. A token that never expires, or a
// resource that asks for no refresh, never is.
func RefreshDue(refreshBefore *metav1.Duration, expiresAt *time.Time, now time.Time) bool {
	if refreshBefore == nil || expiresAt == nil || expiresAt.IsZero() {
		return false
	}
	return expiresAt.Sub(now) < refreshBefore.Duration
}

// Observation is the token's observed state, keeping what only the
// provider knows (its refreshes and rotations) from prev. No secret.
func Observation(t cloudflare.ServiceToken, prev v1alpha1.AccessServiceTokenObservation) v1alpha1.AccessServiceTokenObservation {
	return v1alpha1.AccessServiceTokenObservation{
		ID:              t.ID,
		ClientID:        t.ClientID,
		Duration:        t.Duration,
		ExpiresAt:       mr.Time(t.ExpiresAt),
		CreatedAt:       mr.Time(&t.CreatedAt),
		LastRefreshedAt: prev.LastRefreshedAt,
		Rotation:        prev.Rotation,
		Enabled:         ptr.To(t.IsEnabled()),
		LastSeenAt:      mr.Time(t.LastSeenAt),
		Replaced:        prev.Replaced,
	}
}

// DeletedInCloudflare says whether a token found missing is one this
// resource made and observed, deleted in Cloudflare since: its
// external-name is the ID its status observed. Missing right after a
// create (not yet observed, which the creation grace period covers) or
// while the resource is deleted, it is not.
func DeletedInCloudflare(cr *v1alpha1.AccessServiceToken) bool {
	id := meta.GetExternalName(cr)
	return id != "" && id == cr.Status.AtProvider.ID && !meta.WasDeleted(cr)
}

// Recreates says whether the resource makes a new token in place of one
// deleted in Cloudflare (else it waits for the user): asked to, and
// allowed to create by its management policies.
func Recreates(cr *v1alpha1.AccessServiceToken) bool {
	if cr.Spec.OnDeletedInCloudflare != v1alpha1.OnDeletedInCloudflareRecreate {
		return false
	}
	p := cr.Spec.ManagementPolicies
	return len(p) == 0 || slices.Contains(p, xpv2.ManagementActionAll) || slices.Contains(p, xpv2.ManagementActionCreate)
}

// The annotations recording the last token a resource made in place of
// one deleted in Cloudflare, which Replaced reads into status.
const (
	AnnotationReplacedID = "tunnels.cloudflare.com/replaced-token-id"
	AnnotationReplacedAt = "tunnels.cloudflare.com/replaced-token-at"
)

// Replaced is the record of the last token cr made in place of one
// deleted in Cloudflare; nil when it made none.
func Replaced(cr *v1alpha1.AccessServiceToken) *v1alpha1.AccessServiceTokenReplacement {
	a := cr.GetAnnotations()
	id := a[AnnotationReplacedID]
	if id == "" {
		return nil
	}
	at, _ := time.Parse(time.RFC3339, a[AnnotationReplacedAt])
	return &v1alpha1.AccessServiceTokenReplacement{PreviousID: id, At: metav1.NewTime(at)}
}
