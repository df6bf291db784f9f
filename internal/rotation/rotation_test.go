package rotation

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
)

const field = "spec.tokenRotation.requestedAt"

var now = time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)

func at(d time.Duration) *metav1.Time { t := metav1.NewTime(now.Add(d)); return &t }

// TestRequestsThatCannotBeMeant: the zero time (an unset time, written
// back as null) and anything before Earliest are refused with their own
// reason, and Earliest itself is served.
func TestRequestsThatCannotBeMeant(t *testing.T) {
	for name, at := range map[string]time.Time{"ZeroTime": {}, "JustBeforeEarliest": Earliest.Add(-time.Second), "TheUnixEpoch": time.Unix(0, 0)} {
		t.Run(name, func(t *testing.T) {
			err := CheckRequest(field, at, now)
			var old *TooOldRequestError
			if !errors.As(err, &old) || old.ConditionReason() != ReasonRequestTooOld {
				t.Fatalf("CheckRequest(%s) = %v, want a TooOldRequestError", at, err)
			}
			for _, want := range []string{field, at.UTC().Format(time.RFC3339), Earliest.Format(time.RFC3339), "current time"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("%q does not say %q", err, want)
				}
			}
			c, _ := Condition(field, &metav1.Time{Time: at}, Last{}, now)
			if c.Status != corev1.ConditionFalse || c.Reason != ReasonRequestTooOld || !Refused(c.Reason) {
				t.Errorf("condition %+v, want False %s", c, ReasonRequestTooOld)
			}
		})
	}
	if err := CheckRequest(field, Earliest, now); err != nil {
		t.Errorf("Earliest itself refused: %v", err)
	}
}

func TestCheckRequest(t *testing.T) {
	cases := map[string]struct {
		at      time.Time
		refused bool
	}{
		"Now":                {now, false},
		"Past":               {now.Add(-24 * time.Hour), false},
		"WithinTheSkew":      {now.Add(MaxRequestSkew), false},
		"JustPastTheSkew":    {now.Add(MaxRequestSkew + time.Second), true},
		"AMistypedYear":      {time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC), true},
		"AnHourAheadRefused": {now.Add(time.Hour), true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := CheckRequest(field, tc.at, now)
			if (err != nil) != tc.refused {
				t.Fatalf("CheckRequest(%s) = %v, want refused %v", tc.at, err, tc.refused)
			}
			if err == nil {
				return
			}
			// The message names the field, the value and the limit.
			for _, want := range []string{field, tc.at.Format(time.RFC3339), now.Add(MaxRequestSkew).Format(time.RFC3339), "5m0s"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("%q does not say %q", err, want)
				}
			}
		})
	}
}

func TestServed(t *testing.T) {
	cases := map[string]struct {
		reason    string
		req       time.Time
		served    *metav1.Time
		rotatedAt *metav1.Time
		want      bool
	}{
		"NeverRotated":       {"nothing done: a request is new", now, nil, nil, false},
		"TheServedRequest":   {"the request the last rotation served is not served again", now.Add(-time.Hour), at(-time.Hour), at(-time.Hour + time.Second), true},
		"ServedWithinSkew":   {"a request a little ahead, served before its time, is not served again", now.Add(time.Minute), at(time.Minute), at(0), true},
		"UnderWay":           {"the request under way is the one served", now, at(0), nil, true},
		"AfterTheRotation":   {"a request after the last rotation rotates", now, at(-time.Hour), at(-time.Hour), false},
		"BeforeTheRotation":  {"a token rotated after the request is newer than asked for", now.Add(-2 * time.Hour), at(-time.Hour), at(-time.Hour), true},
		"AtTheRotation":      {"rotated at the very second asked for", now.Add(-time.Hour), at(-3 * time.Hour), at(-time.Hour), true},
		"AfterAFutureServed": {"a mistyped 2099 that was served does not hold back a real request", now, ptr.To(metav1.NewTime(time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC))), at(-time.Hour), false},
		"ReplacedTunnel":     {"a rotation time without its request still serves earlier requests", now.Add(-2 * time.Hour), nil, at(-time.Hour), true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Served(tc.req, tc.served, tc.rotatedAt); got != tc.want {
				t.Errorf("%s: Served = %v, want %v", tc.reason, got, tc.want)
			}
		})
	}
}

func TestCondition(t *testing.T) {
	future := metav1.NewTime(time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC))
	type want struct {
		status corev1.ConditionStatus
		reason xpv2.ConditionReason
		says   string
	}
	cases := map[string]struct {
		reason string
		req    *metav1.Time
		last   Last
		want   *want
	}{
		"Nothing":      {"no request, no rotation: nothing to say", nil, Last{}, nil},
		"NoRequest":    {"no request: when the token was last rotated", nil, Last{RequestedAt: at(-time.Hour), RotatedAt: at(-time.Hour)}, &want{corev1.ConditionTrue, ReasonTokenRotated, "last rotated at 2026-12-05T11:00:00Z"}},
		"InFuture":     {"a request beyond the skew is refused, naming value and limit", &future, Last{}, &want{corev1.ConditionFalse, ReasonRequestInFuture, "2099-01-01T00:00:00Z is later than the provider's clock allows (2026-12-05T12:05:00Z"}},
		"InFutureOver": {"refused even when an earlier one was served", &future, Last{RequestedAt: at(-time.Hour), RotatedAt: at(-time.Hour)}, &want{corev1.ConditionFalse, ReasonRequestInFuture, "Replace it with the current time"}},
		"Pending":      {"a new request is being served", at(0), Last{RequestedAt: at(-time.Hour), RotatedAt: at(-time.Hour)}, &want{corev1.ConditionFalse, ReasonRotationPending, "rotating the run token for " + field + " 2026-12-05T12:00:00Z"}},
		"UnderWay":     {"the request under way is pending", at(0), Last{RequestedAt: at(0)}, &want{corev1.ConditionFalse, ReasonRotationPending, "rotating"}},
		"Rotated":      {"the request served", at(0), Last{RequestedAt: at(0), RotatedAt: at(time.Second)}, &want{corev1.ConditionTrue, ReasonTokenRotated, "rotated at 2026-12-05T12:00:01Z for " + field + " 2026-12-05T12:00:00Z"}},
		"AlreadyServed": {"a request at or before the last rotation is said to be served, not silently ignored", at(-2 * time.Hour), Last{RequestedAt: at(-time.Hour), RotatedAt: at(-time.Hour)},
			&want{corev1.ConditionTrue, ReasonAlreadyServed, "is at or before the last rotation (2026-12-05T11:00:00Z)"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, ok := Condition(field, tc.req, tc.last, now)
			if tc.want == nil {
				if ok {
					t.Errorf("%s: got %+v, want nothing", tc.reason, c)
				}
				return
			}
			got := want{c.Status, c.Reason, tc.want.says}
			if diff := cmp.Diff(*tc.want, got, cmp.AllowUnexported(want{})); !ok || c.Type != TypeTokenRotation || diff != "" {
				t.Errorf("%s: ok %v type %s, -want +got:\n%s", tc.reason, ok, c.Type, diff)
			}
			if !strings.Contains(c.Message, tc.want.says) {
				t.Errorf("%s: message %q does not say %q", tc.reason, c.Message, tc.want.says)
			}
		})
	}
}

// The zero time is kept in the form it is stored in, and still refused.
func TestKeepStoredZero(t *testing.T) {
	var zero metav1.Time
	KeepStoredZero(&zero)
	b, err := json.Marshal(zero)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `"0001-01-01T00:00:00Z"` {
		t.Errorf("marshalled as %s, want the stored form", b)
	}
	if _, ok := CheckRequest("requestedAt", zero.Time, time.Now()).(*TooOldRequestError); !ok {
		t.Error("the kept zero time is not refused as too old")
	}
	set := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	KeepStoredZero(&set)
	if !set.Equal(&metav1.Time{Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}) {
		t.Errorf("a set time changed: %v", set)
	}
	KeepStoredZero(nil)
}
