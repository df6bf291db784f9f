// Package rotation decides what becomes of a token rotation request, the
// same way for a CloudflareTunnel and for the Tunnel managed resource it
// writes. A request (requestedAt) asks for a run token issued at or after
// that time: it is served at most once, by one rotation; a request the last
// rotation already satisfies is reported as served, not rotated again; and a
// request in the future, or before Earliest, is refused. Pure functions: the
// controllers act.
package rotation

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
)

// MaxRequestSkew is how far ahead of the provider's clock a request may be.
// CEL has no clock, so the provider's admission webhook (internal/admit)
// refuses a request beyond it, and the controllers refuse it again where
// the webhook did not run (not installed, or the provider down: its
// failurePolicy is Ignore); a request typed as "now" on a machine whose
// clock runs a little ahead still passes.
// Without the limit, a mistyped year (2099) would rotate at once and stand
// for every real request after it.
const MaxRequestSkew = 5 * time.Minute

// Earliest is the earliest request served: no tunnel's run token or
// service token's secret this provider rotates was issued before it, so an
// earlier request asks for nothing that can be meant; the zero time
// (0001-01-01T00:00:00Z) is an unset time, and would be written back as
// null, which the API server refuses. The CRDs' CEL rules refuse an
// earlier request at admission (apis/: the same date); the controllers
// refuse one stored before those rules.
var Earliest = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)

// TypeTokenRotation is the condition that says what became of the request.
const TypeTokenRotation xpv2.ConditionType = "TokenRotation"

// Reasons of the TokenRotation condition.
const (
	// ReasonTokenRotated: the request was served, or no request stands
	// and the message says when the token was last rotated.
	ReasonTokenRotated xpv2.ConditionReason = "TokenRotated"
	// ReasonRotationPending: the request is being served.
	ReasonRotationPending xpv2.ConditionReason = "RotationPending"
	// ReasonAlreadyServed: the last rotation happened at or after the
	// request, so the token is already newer than asked for.
	ReasonAlreadyServed xpv2.ConditionReason = "RotationAlreadyServed"
	// ReasonRequestInFuture: the request is later than now plus
	// MaxRequestSkew, and is not served.
	ReasonRequestInFuture xpv2.ConditionReason = "RotationRequestInFuture"
	// ReasonRequestTooOld: the request is before Earliest, and is not
	// served.
	ReasonRequestTooOld xpv2.ConditionReason = "RotationRequestTooOld"
)

// A FutureRequestError refuses a request later than Now plus
// MaxRequestSkew. Field is the request's field path, for the message.
type FutureRequestError struct {
	Field       string
	RequestedAt time.Time
	Now         time.Time
}

// Limit is the latest request served at Now.
func (e *FutureRequestError) Limit() time.Time { return e.Now.Add(MaxRequestSkew) }

func (e *FutureRequestError) Error() string {
	return fmt.Sprintf("%s %s is later than the provider's clock allows (%s, now plus %s), so no rotation is made for it; a mistyped time? Replace it with the current time (any time not in the future is admitted)",
		e.Field, stamp(e.RequestedAt), stamp(e.Limit()), MaxRequestSkew)
}

// ConditionReason of the refusal: RotationRequestInFuture.
func (e *FutureRequestError) ConditionReason() xpv2.ConditionReason { return ReasonRequestInFuture }

// AtAdmission is the refusal as admission says it: what is wrong, and the
// time to set instead.
func (e *FutureRequestError) AtAdmission() string {
	return fmt.Sprintf("%s %s is more than %s ahead of the provider's clock, which reads %s: a mistyped time? Set it to the current time (%s) to rotate the run token now",
		e.Field, stamp(e.RequestedAt), MaxRequestSkew, stamp(e.Now), stamp(e.Now))
}

// A TooOldRequestError refuses a request before Earliest. Field is the
// request's field path, for the message.
type TooOldRequestError struct {
	Field       string
	RequestedAt time.Time
}

func (e *TooOldRequestError) Error() string {
	return fmt.Sprintf("%s %s is before %s, earlier than any token this provider rotates was issued (0001-01-01T00:00:00Z is an unset time), so no rotation is made for it; set it to the current time to rotate now",
		e.Field, stamp(e.RequestedAt), stamp(Earliest))
}

// ConditionReason of the refusal: RotationRequestTooOld.
func (e *TooOldRequestError) ConditionReason() xpv2.ConditionReason { return ReasonRequestTooOld }

// CheckRequest refuses a request later than now plus MaxRequestSkew, or
// before Earliest.
func CheckRequest(field string, requestedAt, now time.Time) error {
	if requestedAt.After(now.Add(MaxRequestSkew)) {
		return &FutureRequestError{Field: field, RequestedAt: requestedAt, Now: now}
	}
	if requestedAt.Before(Earliest) {
		return &TooOldRequestError{Field: field, RequestedAt: requestedAt}
	}
	return nil
}

// refusalReason is the TokenRotation reason of a refused request.
func refusalReason(err error) xpv2.ConditionReason {
	if _, ok := err.(*TooOldRequestError); ok {
		return ReasonRequestTooOld
	}
	return ReasonRequestInFuture
}

// Refused says whether a TokenRotation reason refuses the request.
func Refused(reason xpv2.ConditionReason) bool {
	return reason == ReasonRequestInFuture || reason == ReasonRequestTooOld
}

// Served says whether a request needs no rotation: it is the request the
// last rotation served (servedRequest), or that rotation happened at or
// after it (rotatedAt; nil while it is under way). A later request than
// the last rotation rotates once; so does any request after a corrected
// one, since what counts is when the token was rotated, not the value the
// field held before.
func Served(requestedAt time.Time, servedRequest *metav1.Time, rotatedAt *metav1.Time) bool {
	if servedRequest != nil && servedRequest.Time.Equal(requestedAt) {
		return true
	}
	return rotatedAt != nil && !rotatedAt.Time.Before(requestedAt)
}

// Last is the last rotation: the request it served (nil when not known)
// and when it rotated the token (nil when none did, or while under way).
type Last struct {
	RequestedAt *metav1.Time
	RotatedAt   *metav1.Time
}

// Condition says what became of the request (nil: none stands) given the
// last rotation, at now; ok is false when there is nothing to say (no
// request and no rotation).
func Condition(field string, req *metav1.Time, last Last, now time.Time) (c xpv2.Condition, ok bool) {
	switch {
	case req == nil && last.RotatedAt == nil:
		return xpv2.Condition{}, false
	case req == nil:
		return condition(true, ReasonTokenRotated, fmt.Sprintf("the run token was last rotated at %s; set %s to rotate it again", stamp(last.RotatedAt.Time), field)), true
	}
	if err := CheckRequest(field, req.Time, now); err != nil {
		return condition(false, refusalReason(err), err.Error()), true
	}
	this := last.RequestedAt != nil && last.RequestedAt.Time.Equal(req.Time)
	switch {
	case this && last.RotatedAt != nil:
		return condition(true, ReasonTokenRotated, fmt.Sprintf("the run token was rotated at %s for %s %s", stamp(last.RotatedAt.Time), field, stamp(req.Time))), true
	case !this && Served(req.Time, last.RequestedAt, last.RotatedAt):
		return condition(true, ReasonAlreadyServed, fmt.Sprintf("%s %s is at or before the last rotation (%s): the run token is already newer than asked for, so it is not rotated again; set a later time (the current time) to rotate it", field, stamp(req.Time), stamp(last.RotatedAt.Time))), true
	default:
		return condition(false, ReasonRotationPending, fmt.Sprintf("rotating the run token for %s %s", field, stamp(req.Time))), true
	}
}

func condition(ok bool, reason xpv2.ConditionReason, msg string) xpv2.Condition {
	s := corev1.ConditionFalse
	if ok {
		s = corev1.ConditionTrue
	}
	return xpv2.Condition{Type: TypeTokenRotation, Status: s, Reason: reason, Message: msg, LastTransitionTime: metav1.Now()}
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// KeepStoredZero keeps a zero request time, stored before the CRDs' rule
// refused it, writable as stored: metav1.Time marshals the zero time as
// null, which the API server drops and then refuses as a missing required
// field, so every whole-object write of the resource (its finalizer, its
// external-name) would fail and the request would never be answered. One
// nanosecond after it is written as the stored "0001-01-01T00:00:00Z" (RFC
// 3339 to the second), a value the rule does not judge again while it is
// unchanged (CRD validation ratcheting); CheckRequest still refuses it as
// too old.
func KeepStoredZero(t *metav1.Time) {
	if t != nil && t.IsZero() {
		t.Time = time.Time{}.Add(time.Nanosecond)
	}
}
