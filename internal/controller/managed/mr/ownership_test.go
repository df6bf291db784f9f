package mr

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
)

func TestLeftByOwnCreate(t *testing.T) {
	pending := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	cases := map[string]struct {
		pending time.Time
		created time.Time
		refused bool
		want    bool
	}{
		"RefusedOneOfItsCreates":  {pending: pending, created: pending.Add(-time.Second), refused: true, want: false},
		"NeverBeganACreate":       {created: pending, want: false},
		"CreatedAfterItBegan":     {pending: pending, created: pending.Add(300 * time.Millisecond), want: true},
		"CreatedLongAfter":        {pending: pending, created: pending.Add(time.Hour), want: true},
		"WithinTheSkewAllowance":  {pending: pending, created: pending.Add(-CreateSkew + time.Second), want: true},
		"OlderThanTheAllowance":   {pending: pending, created: pending.Add(-CreateSkew - time.Second), want: false},
		"YearsOlder":              {pending: pending, created: pending.AddDate(-2, 0, 0), want: false},
		"NoCreationTimeIsNoProof": {pending: pending, want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o := &metav1.ObjectMeta{}
			if !tc.pending.IsZero() {
				meta.SetExternalCreatePending(o, tc.pending)
			}
			if tc.refused {
				_ = CreateRefused(o, "tunnel", "edge", "the-id", tc.created)
			}
			if got := LeftByOwnCreate(o, "the-id", tc.created); got != tc.want {
				t.Errorf("LeftByOwnCreate(pending %v, created %v) = %t, want %t", tc.pending, tc.created, got, tc.want)
			}
		})
	}
}
