package translate

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// TestParents: this controller's entries for the Gateway are replaced,
// every other entry (another controller's, ours for another Gateway) kept,
// transition times kept while a condition's status holds, and writing the
// same answer twice changes nothing (no status write per reconcile).
func TestParents(t *testing.T) {
	gw := gateway()
	t0, t1 := metav1.NewTime(time.Unix(100, 0)), metav1.NewTime(time.Unix(200, 0))
	ref := gwv1.ParentReference{Name: "public", Namespace: ptr.To(gwv1.Namespace("edge"))}
	other := gwv1.ParentReference{Name: "elsewhere"}
	accepted := func(s metav1.ConditionStatus, at metav1.Time) []metav1.Condition {
		return []metav1.Condition{{Type: "Accepted", Status: s, Reason: "R", Message: "m", LastTransitionTime: at}}
	}
	theirs := gwv1.RouteParentStatus{ParentRef: ref, ControllerName: "traefik.io/gateway-controller", Conditions: accepted(metav1.ConditionTrue, t0)}
	oursElsewhere := gwv1.RouteParentStatus{ParentRef: other, ControllerName: ControllerName, Conditions: accepted(metav1.ConditionTrue, t0)}
	oursHere := gwv1.RouteParentStatus{ParentRef: ref, ControllerName: ControllerName, Conditions: accepted(metav1.ConditionTrue, t0)}
	cases := map[string]struct {
		parents, mine, want []gwv1.RouteParentStatus
	}{
		"AddedBesideOthers": {
			parents: []gwv1.RouteParentStatus{theirs, oursElsewhere},
			mine:    []gwv1.RouteParentStatus{{ParentRef: ref, ControllerName: ControllerName, Conditions: accepted(metav1.ConditionTrue, metav1.Time{})}},
			want:    []gwv1.RouteParentStatus{theirs, oursElsewhere, {ParentRef: ref, ControllerName: ControllerName, Conditions: accepted(metav1.ConditionTrue, t1)}},
		},
		"UnchangedKeepsItsTime": {
			parents: []gwv1.RouteParentStatus{theirs, oursHere},
			mine:    []gwv1.RouteParentStatus{{ParentRef: ref, ControllerName: ControllerName, Conditions: accepted(metav1.ConditionTrue, metav1.Time{})}},
			want:    []gwv1.RouteParentStatus{theirs, oursHere},
		},
		"ChangedTakesNow": {
			parents: []gwv1.RouteParentStatus{oursHere},
			mine:    []gwv1.RouteParentStatus{{ParentRef: ref, ControllerName: ControllerName, Conditions: accepted(metav1.ConditionFalse, metav1.Time{})}},
			want:    []gwv1.RouteParentStatus{{ParentRef: ref, ControllerName: ControllerName, Conditions: accepted(metav1.ConditionFalse, t1)}},
		},
		"RemovedLeavesTheRest": {
			parents: []gwv1.RouteParentStatus{theirs, oursHere, oursElsewhere},
			want:    []gwv1.RouteParentStatus{theirs, oursElsewhere},
		},
		"RemovedLastIsEmpty": {
			parents: []gwv1.RouteParentStatus{oursHere},
			want:    []gwv1.RouteParentStatus{},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Parents("edge", tc.parents, gw, tc.mine, t1)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Parents (-want +got):\n%s", diff)
			}
			if again := Parents("edge", got, gw, tc.mine, metav1.NewTime(time.Unix(300, 0))); !cmp.Equal(got, again) {
				t.Errorf("not idempotent:\n%s", cmp.Diff(got, again))
			}
		})
	}
}
