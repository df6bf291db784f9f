package mr

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"

	connv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/connectivity/v1alpha1"
)

// TestConfirmsDeletes: only the Observe that finds a deleting resource gone
// after this process's own Delete succeeded ends the creation grace period;
// a resource that is not being deleted, still exists, failed to be observed,
// or was never deleted here keeps it (a lagging read after a create must not
// drop a finalizer).
func TestConfirmsDeletes(t *testing.T) {
	deleteErr := errors.New("boom")
	cases := map[string]struct {
		deleting   bool
		deleteErr  error // nil: Delete succeeds; skipped when !deleted
		deleted    bool  // whether Delete is called before Observe
		exists     bool
		observeErr error
		wantGrace  bool // the create's timestamp is still on the resource
	}{
		"GoneAfterOwnDelete":          {deleting: true, deleted: true, wantGrace: false},
		"GoneWithoutOwnDelete":        {deleting: true, wantGrace: true},
		"GoneAfterFailedDelete":       {deleting: true, deleted: true, deleteErr: deleteErr, wantGrace: true},
		"StillThereAfterOwnDelete":    {deleting: true, deleted: true, exists: true, wantGrace: true},
		"ObserveFailsAfterOwnDelete":  {deleting: true, deleted: true, observeErr: deleteErr, wantGrace: true},
		"NotDeletingAndGone":          {wantGrace: true},
		"NotDeletingAfterOwnDeletion": {deleted: true, wantGrace: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			mg := &connv1alpha1.VPCService{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "a", UID: "u1"}}
			meta.SetExternalCreateSucceeded(mg, time.Now())
			if tc.deleting {
				mg.SetDeletionTimestamp(&metav1.Time{Time: time.Now()})
			}
			c := &confirmsDeletes[*connv1alpha1.VPCService]{
				TypedExternalClient: managed.TypedExternalClientFns[*connv1alpha1.VPCService]{
					ObserveFn: func(context.Context, *connv1alpha1.VPCService) (managed.ExternalObservation, error) {
						return managed.ExternalObservation{ResourceExists: tc.exists}, tc.observeErr
					},
					DeleteFn: func(context.Context, *connv1alpha1.VPCService) (managed.ExternalDelete, error) {
						return managed.ExternalDelete{}, tc.deleteErr
					},
				},
				deleted: &deletedHere{},
			}
			if tc.deleted {
				if _, err := c.Delete(context.Background(), mg); !errors.Is(err, tc.deleteErr) {
					t.Fatalf("Delete: %v", err)
				}
			}
			o, err := c.Observe(context.Background(), mg)
			if diff := cmp.Diff(managed.ExternalObservation{ResourceExists: tc.exists}, o); diff != "" || !errors.Is(err, tc.observeErr) {
				t.Errorf("Observe passes through -want +got:\n%s\nerror %v", diff, err)
			}
			if got := !meta.GetExternalCreateSucceeded(mg).IsZero(); got != tc.wantGrace {
				t.Errorf("the create's timestamp kept: %t, want %t", got, tc.wantGrace)
			}
		})
	}
}

// TestConfirmsDeletesOnce: the confirmation is spent by the Observe that
// finds the resource gone, and belongs to that resource only.
func TestConfirmsDeletesOnce(t *testing.T) {
	d := &deletedHere{}
	a := &connv1alpha1.VPCService{ObjectMeta: metav1.ObjectMeta{UID: "a"}}
	b := &connv1alpha1.VPCService{ObjectMeta: metav1.ObjectMeta{UID: "b"}}
	d.deleted(a)
	if d.confirmed(b) {
		t.Error("b confirmed by a's delete")
	}
	if !d.confirmed(a) {
		t.Error("a's delete not confirmed")
	}
	if d.confirmed(a) {
		t.Error("a confirmed twice")
	}
}
