package mr

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func obj(name, rv string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv}}
}

// TestNewcomersLast: a resource under way (its create confirmed by an
// update) is reconciled before resources that have only just appeared, and
// newcomers keep their order among themselves; the initial list still comes
// last of all.
func TestNewcomersLast(t *testing.T) {
	ctx := context.Background()
	q := priorityqueue.New[reconcile.Request]("test")
	defer q.ShutDown()
	h := newcomersLast{EventHandler: &handler.EnqueueRequestForObject{}}

	h.Create(ctx, event.CreateEvent{Object: obj("listed", "1"), IsInInitialList: true}, q)
	for _, n := range []string{"new-1", "new-2", "new-3"} {
		h.Create(ctx, event.CreateEvent{Object: obj(n, "2")}, q)
	}
	// The create of "created" was sent; its annotations were written.
	h.Update(ctx, event.UpdateEvent{ObjectOld: obj("created", "3"), ObjectNew: obj("created", "4")}, q)

	// Adds are buffered; wait until the queue holds all five.
	for deadline := time.Now().Add(5 * time.Second); q.Len() < 5 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	var got []string
	for range 5 {
		item, _ := q.Get()
		got = append(got, item.Name)
		q.Done(item)
	}
	want := []string{"created", "new-1", "new-2", "new-3", "listed"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reconcile order (-want +got):\n%s", diff)
	}
}
