package mr

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
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
	waitLen(t, q, 5)
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

// reconcilerFn is a reconcile.Reconciler from a function.
type reconcilerFn func(context.Context, reconcile.Request) (reconcile.Result, error)

func (f reconcilerFn) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	return f(ctx, req)
}

// TestPrioritised: what the managed reconciler asks for next is given its
// place: a poll at the back, the confirmation of a write at once and at a
// change's priority, anything else (an error's backoff) as it was.
func TestPrioritised(t *testing.T) {
	const poll = time.Minute
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "r"}}
	errBoom := errors.New("boom")
	cases := map[string]struct {
		res   reconcile.Result
		err   error
		wrote bool
		want  reconcile.Result
	}{
		"a poll goes to the back": {
			res:  reconcile.Result{RequeueAfter: poll},
			want: reconcile.Result{RequeueAfter: poll, Priority: ptr.To(handler.LowPriority)},
		},
		"a poll after a write goes to the back too": {
			res: reconcile.Result{RequeueAfter: poll}, wrote: true,
			want: reconcile.Result{RequeueAfter: poll, Priority: ptr.To(handler.LowPriority)},
		},
		"the confirmation of a delete skips the backoff": {
			res: reconcile.Result{Requeue: true}, wrote: true,
			want: reconcile.Result{RequeueAfter: confirmAfter, Priority: ptr.To(0)},
		},
		"a requeue without a write (an error noted in status) keeps its backoff": {
			res:  reconcile.Result{Requeue: true},
			want: reconcile.Result{Requeue: true},
		},
		"an error is returned as it is": {
			res: reconcile.Result{Requeue: true}, err: errBoom, wrote: true,
			want: reconcile.Result{Requeue: true},
		},
		"a short delay is not a poll": {
			res:  reconcile.Result{RequeueAfter: time.Second},
			want: reconcile.Result{RequeueAfter: time.Second},
		},
		"done is done": {},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			written := &writtenHere{}
			p := prioritised{written: written, poll: poll, Reconciler: reconcilerFn(func(context.Context, reconcile.Request) (reconcile.Result, error) {
				if tc.wrote {
					written.wrote(obj(req.Name, "1"))
				}
				return tc.res, tc.err
			})}
			got, err := p.Reconcile(context.Background(), req)
			if !errors.Is(err, tc.err) {
				t.Errorf("error: want %v, got %v", tc.err, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			if written.take(req.NamespacedName) {
				t.Error("the write is still remembered after its reconcile")
			}
		})
	}
}

// requeue does with a reconcile's result what controller-runtime's
// controller does with it (sigs.k8s.io/controller-runtime
// pkg/internal/controller, reconcileHandler): a priority it names, else the
// one the request was taken at.
func requeue(q priorityqueue.PriorityQueue[reconcile.Request], req reconcile.Request, took int, res reconcile.Result) {
	prio := took
	if res.Priority != nil {
		prio = *res.Priority
	}
	if res.RequeueAfter > 0 {
		q.AddWithOpts(priorityqueue.AddOpts{After: res.RequeueAfter, Priority: ptr.To(prio)}, req)
	}
}

// TestOneChangeNotQueuedBehindPolls: on a provider whose thousand resources
// are all due for their poll (each last reconciled as a change, at the
// priority of a change), a resource that has just appeared and one that
// has just changed are reconciled before any of those polls.
func TestOneChangeNotQueuedBehindPolls(t *testing.T) {
	const n, poll = 1000, time.Minute
	ctx := context.Background()
	q := priorityqueue.New[reconcile.Request]("test")
	defer q.ShutDown()
	// Each resource's last reconcile was taken at a change's priority (0)
	// and ended in a poll, now due: the queue holds a thousand polls ready.
	p := prioritised{written: &writtenHere{}, poll: poll, Reconciler: reconcilerFn(func(context.Context, reconcile.Request) (reconcile.Result, error) {
		return reconcile.Result{RequeueAfter: poll}, nil
	})}
	for i := range n {
		req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: fmt.Sprintf("old-%d", i)}}
		res, err := p.Reconcile(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		res.RequeueAfter = time.Nanosecond // the poll interval has passed
		requeue(q, req, 0, res)
	}
	// One resource changes, then one appears (adds are buffered and
	// applied in order: once the newcomer is in, so is the change).
	h := newcomersLast{EventHandler: &handler.EnqueueRequestForObject{}}
	h.Update(ctx, event.UpdateEvent{ObjectOld: obj("old-500", "3"), ObjectNew: obj("old-500", "4")}, q)
	h.Create(ctx, event.CreateEvent{Object: obj("new", "2")}, q)

	waitLen(t, q, n+1)
	var got []string
	for range 2 {
		item, _ := q.Get()
		got = append(got, item.Name)
		q.Done(item)
	}
	if diff := cmp.Diff([]string{"old-500", "new"}, got); diff != "" {
		t.Errorf("first two reconciles (-want +got):\n%s", diff)
	}
}

// waitLen waits until the queue holds at least n items: adds are buffered.
func waitLen(t *testing.T, q interface{ Len() int }, n int) {
	t.Helper()
	wait.Eventually(t, 5*time.Second, fmt.Sprintf("%d items queued", n), func() error {
		if got := q.Len(); got < n {
			return fmt.Errorf("%d queued", got)
		}
		return nil
	})
}
