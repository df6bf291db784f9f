package mr

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"

	connv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/connectivity/v1alpha1"
)

// listReader serves a fixed list of VPCServices, as the informer cache would,
// and counts the lists.
type listReader struct {
	client.Reader
	items []connv1alpha1.VPCService
	lists int
}

func (r *listReader) List(_ context.Context, l client.ObjectList, _ ...client.ListOption) error {
	r.lists++
	l.(*connv1alpha1.VPCServiceList).Items = r.items
	return nil
}

func service(name string, created time.Time, id string, syncedSince time.Time) *connv1alpha1.VPCService {
	s := &connv1alpha1.VPCService{ObjectMeta: metav1.ObjectMeta{
		Namespace: name, Name: name, UID: types.UID(name), CreationTimestamp: metav1.NewTime(created),
	}}
	if id != "" {
		meta.SetExternalName(s, id)
	}
	if !syncedSince.IsZero() {
		s.SetConditions(xpv2.Condition{Type: xpv2.TypeSynced, Status: corev1.ConditionTrue, Reason: xpv2.ReasonReconcileSuccess, LastTransitionTime: metav1.NewTime(syncedSince)})
	}
	return s
}

func TestTenancyGuardClaims(t *testing.T) {
	now := time.Now()
	older, newer := now.Add(-time.Hour), now.Add(-30*time.Minute)
	const id = "0f7e3a52-7c0a-4c55-9d8b-3a1f2d8a9e10"
	const settle = 2 * time.Minute
	cases := map[string]struct {
		mg      *connv1alpha1.VPCService
		others  []connv1alpha1.VPCService
		deleted bool
		// wantClaimed: Observe refuses with a ClaimedError.
		wantClaimed bool
		// wantID is the external-name mg keeps.
		wantID string
		// wantExists is the observation's ResourceExists when not refused.
		wantExists bool
		wantLists  int
	}{
		"AdoptingAnObjectAnotherResourceHolds": {
			mg:          service("b", newer, "", time.Time{}),
			others:      []connv1alpha1.VPCService{*service("a", older, id, older)},
			wantClaimed: true, wantID: "", wantLists: 1,
		},
		"AdoptingAnObjectNobodyHolds": {
			mg:     service("b", newer, "", time.Time{}),
			wantID: id, wantExists: true, wantLists: 1,
		},
		// Both adopted in the same instant and both saved the ID: while
		// they settle, the newer lets go and the older keeps it.
		"RaceLoserWhileSettling": {
			mg:          service("b", newer, id, now.Add(-10*time.Second)),
			others:      []connv1alpha1.VPCService{*service("a", older, id, now.Add(-10*time.Second))},
			wantClaimed: true, wantID: id, wantLists: 1,
		},
		"RaceWinnerWhileSettling": {
			mg:     service("a", older, id, now.Add(-10*time.Second)),
			others: []connv1alpha1.VPCService{*service("b", newer, id, now.Add(-10*time.Second))},
			wantID: id, wantExists: true, wantLists: 1,
		},
		"RaceLoserBeingDeletedLetsGo": {
			mg:      service("b", newer, id, now.Add(-10*time.Second)),
			others:  []connv1alpha1.VPCService{*service("a", older, id, now.Add(-10*time.Second))},
			deleted: true,
			wantID:  id, wantExists: false, wantLists: 1,
		},
		// Settled resources are not checked again: steady-state polls do
		// not list the kind.
		"SettledIsNotCheckedAgain": {
			mg:     service("b", newer, id, now.Add(-10*time.Minute)),
			others: []connv1alpha1.VPCService{*service("a", older, id, older)},
			wantID: id, wantExists: true, wantLists: 0,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if tc.deleted {
				tc.mg.SetDeletionTimestamp(&metav1.Time{Time: now})
			}
			kube := &listReader{items: tc.others}
			g := &tenancyGuard[*connv1alpha1.VPCService]{
				TypedExternalClient: managed.TypedExternalClientFns[*connv1alpha1.VPCService]{
					ObserveFn: func(_ context.Context, mg *connv1alpha1.VPCService) (managed.ExternalObservation, error) {
						// The wrapped client finds the object by name and adopts it.
						meta.SetExternalName(mg, id)
						mg.Status.AtProvider.ServiceID = id
						return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
					},
				},
				kube: kube, kind: "VPCService", newList: func() client.ObjectList { return &connv1alpha1.VPCServiceList{} },
				settle: settle,
			}
			obs, err := g.Observe(context.Background(), tc.mg)
			var claimed *ClaimedError
			if got := errors.As(err, &claimed); got != tc.wantClaimed {
				t.Fatalf("Observe error %v, want a ClaimedError: %t", err, tc.wantClaimed)
			}
			if !tc.wantClaimed && obs.ResourceExists != tc.wantExists {
				t.Errorf("ResourceExists = %t, want %t", obs.ResourceExists, tc.wantExists)
			}
			if diff := cmp.Diff(tc.wantID, meta.GetExternalName(tc.mg)); diff != "" {
				t.Errorf("external-name: -want +got:\n%s", diff)
			}
			if tc.wantClaimed && tc.mg.Status.AtProvider.ServiceID != "" {
				t.Errorf("status of a refused resource holds %q; nothing of the other resource's object may be saved", tc.mg.Status.AtProvider.ServiceID)
			}
			if kube.lists != tc.wantLists {
				t.Errorf("listed the kind %d times, want %d", kube.lists, tc.wantLists)
			}
		})
	}
}
