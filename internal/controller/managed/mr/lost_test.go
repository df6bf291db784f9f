package mr

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/test"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
)

type lostObj struct {
	id, name string
	created  time.Time
}

func lostOf(objs []lostObj, listErr error, listed *bool) LostCreate[lostObj] {
	return LostCreate[lostObj]{
		List: func(context.Context) ([]lostObj, error) {
			*listed = true
			return objs, listErr
		},
		Match:   func(o lostObj) bool { return o.name == "ci" },
		ID:      func(o lostObj) string { return o.id },
		Created: func(o lostObj) time.Time { return o.created },
	}
}

// LostCreate.Find: nothing is listed before a create began; once one did
// (failed or not), only objects of the name made after it began (less the
// clock-skew allowance) are the create's, and never one that refused it.
func TestLostCreateFind(t *testing.T) {
	began := time.Date(2026, 12, 6, 1, 0, 0, 0, time.UTC)
	before := lostObj{"old", "ci", began.Add(-CreateSkew - time.Second)}
	after := lostObj{"new", "ci", began.Add(time.Second)}
	skewed := lostObj{"skewed", "ci", began.Add(-CreateSkew / 2)}
	other := lostObj{"other", "cd", began.Add(time.Second)}
	boom := errors.New("boom")
	cases := map[string]struct {
		pending, failed time.Time
		refusedBy       string
		objs            []lostObj
		listErr         error
		want            []lostObj
		wantListed      bool
		wantErr         error
	}{
		"NoCreateBegun":    {objs: []lostObj{after}},
		"CreateInFlight":   {pending: began, objs: []lostObj{before, after, skewed, other}, want: []lostObj{after, skewed}, wantListed: true},
		"CreateFailedLost": {pending: began, failed: began.Add(time.Minute), objs: []lostObj{after}, want: []lostObj{after}, wantListed: true},
		"RefusedByIsNot":   {pending: began, refusedBy: "new", objs: []lostObj{after}, wantListed: true},
		"ListFails":        {pending: began, listErr: boom, wantListed: true, wantErr: errors.Wrap(boom, "cannot look for what a create whose answer was lost left")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cr := &v1alpha1.AccessServiceToken{ObjectMeta: metav1.ObjectMeta{Name: "ci"}}
			if !tc.pending.IsZero() {
				meta.SetExternalCreatePending(cr, tc.pending)
			}
			if !tc.failed.IsZero() {
				meta.SetExternalCreateFailed(cr, tc.failed)
			}
			if tc.refusedBy != "" {
				meta.AddAnnotations(cr, map[string]string{AnnotationCreateRefusedBy: tc.refusedBy})
			}
			var listed bool
			got, err := lostOf(tc.objs, tc.listErr, &listed).Find(context.Background(), cr)
			if diff := cmp.Diff(tc.wantErr, err, test.EquateErrors()); diff != "" {
				t.Errorf("Find() error: -want +got:\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(lostObj{})); diff != "" {
				t.Errorf("Find(): -want +got:\n%s", diff)
			}
			if listed != tc.wantListed {
				t.Errorf("listed: %v, want %v", listed, tc.wantListed)
			}
		})
	}
}

// LostCreate.One adopts one, and refuses to choose between several.
func TestLostCreateOne(t *testing.T) {
	began := time.Date(2026, 12, 6, 1, 0, 0, 0, time.UTC)
	a, b := lostObj{"a", "ci", began.Add(time.Second)}, lostObj{"b", "ci", began.Add(2 * time.Second)}
	cases := map[string]struct {
		objs    []lostObj
		want    *lostObj
		wantErr bool
	}{
		"None":    {},
		"One":     {objs: []lostObj{a}, want: &a},
		"Several": {objs: []lostObj{a, b}, wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cr := &v1alpha1.AccessGroup{}
			meta.SetExternalCreatePending(cr, began)
			var listed bool
			got, err := lostOf(tc.objs, nil, &listed).One(context.Background(), cr, `groups named "ci"`)
			if (err != nil) != tc.wantErr {
				t.Fatalf("One() error %v, want error: %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(lostObj{})); diff != "" {
				t.Errorf("One(): -want +got:\n%s", diff)
			}
		})
	}
}

// CreateSettledAt: a list shows what a create did once it is sent a second
// after the create's recorded outcome (annotations keep whole seconds);
// while no outcome is recorded since the create began, only a list sent now.
func TestCreateSettledAt(t *testing.T) {
	began := time.Date(2026, 12, 6, 1, 0, 0, 0, time.UTC)
	now := began.Add(time.Minute)
	cases := map[string]struct {
		pending, failed, succeeded time.Time
		want                       time.Time
	}{
		"NoOutcomeYet":          {pending: began, want: now},
		"FailedAfterItBegan":    {pending: began, failed: began.Add(10 * time.Second), want: began.Add(11 * time.Second)},
		"FailedInTheSameSecond": {pending: began, failed: began, want: began.Add(time.Second)},
		"SucceededLater":        {pending: began, failed: began.Add(time.Second), succeeded: began.Add(5 * time.Second), want: began.Add(6 * time.Second)},
		"AnOlderFailureOnly":    {pending: began, failed: began.Add(-time.Hour), want: now},
		"FailedThisSecond":      {pending: began, failed: now, want: now},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cr := &v1alpha1.AccessPolicy{}
			meta.SetExternalCreatePending(cr, tc.pending)
			if !tc.failed.IsZero() {
				meta.SetExternalCreateFailed(cr, tc.failed)
			}
			if !tc.succeeded.IsZero() {
				meta.SetExternalCreateSucceeded(cr, tc.succeeded)
			}
			if got := CreateSettledAt(cr, now); !got.Equal(tc.want) {
				t.Errorf("CreateSettledAt: got %v, want %v", got, tc.want)
			}
		})
	}
}
