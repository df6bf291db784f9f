package mr

import (
	"context"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
)

// newcomerPriority is the queue priority of a managed resource's first
// reconcile: below every change to a resource already under way (0), above
// the initial list and resyncs (handler.LowPriority).
const newcomerPriority = -10

// newcomersLast enqueues a managed resource that has just appeared below
// every other reconcile. A first reconcile is a create, which waits for the
// Cloudflare budget; the reconcile that confirms a create (and makes the
// resource, and the Ingress behind it, Ready) costs no request. In one
// first-come queue, the confirmations of a large change wait behind every
// other resource's create and readiness arrives in a wave at the end; with
// newcomers last each resource is confirmed on the next free worker after
// its own create.
type newcomersLast struct {
	handler.EventHandler
}

// Create implements handler.EventHandler.
func (h newcomersLast) Create(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request])
	if !ok || e.Object == nil || e.IsInInitialList {
		h.EventHandler.Create(ctx, e, q)
		return
	}
	pq.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(newcomerPriority)}, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(e.Object)})
}

// pollPriority is the queue priority of a managed resource's next poll:
// the lowest, that of the initial list and resyncs. A poll finds nothing to
// do nearly always; every change (an event, priority 0), newcomer
// (newcomerPriority) and write's confirmation (confirmPriority) goes ahead
// of the polls that are due, so one change on a provider that holds
// thousands of resources does not wait its turn behind their polls
// (docs/reliability.md, "One change is not queued behind polls").
const pollPriority = handler.LowPriority

// confirmPriority is the queue priority of the reconcile that confirms a
// write this process just made: that of a change.
const confirmPriority = 0

// confirmAfter is how soon the reconcile that confirms a delete runs. It costs no request (the observation cache holds the write's
// answer), so it need not wait the per-item backoff (1 s, doubling with
// every requeue of the item) that crossplane-runtime's requeue after a
// write goes through.
const confirmAfter = 10 * time.Millisecond

// writtenHere remembers the managed resources, by namespace and name, whose
// Delete succeeded in the reconcile under way. An entry lives
// from the write to the end of that reconcile.
type writtenHere struct {
	keys sync.Map // types.NamespacedName -> struct{}
}

// wrote records a successful write of mg's external resource.
func (w *writtenHere) wrote(mg metav1.Object) {
	w.keys.Store(types.NamespacedName{Namespace: mg.GetNamespace(), Name: mg.GetName()}, struct{}{})
}

// take reports whether the reconcile of key wrote, and forgets it.
func (w *writtenHere) take(key types.NamespacedName) bool {
	_, ok := w.keys.LoadAndDelete(key)
	return ok
}

// recordsWrites is an external client that records each successful Delete
// in written. Not a Create: the reconcile after a create must read the
// resource with its create-succeeded annotation, or it takes the create for
// one of unknown outcome and lists Cloudflare to find out (the likely cause
// of 240 requests instead of 222 at N = 100, docs/benchmarks.md); the
// update event of that annotation requeues it as soon as the cache has it.
type recordsWrites[T resource.ModernManaged] struct {
	managed.TypedExternalClient[T]
	written *writtenHere
}

func (c *recordsWrites[T]) Delete(ctx context.Context, mg T) (managed.ExternalDelete, error) {
	o, err := c.TypedExternalClient.Delete(ctx, mg)
	if err == nil {
		c.written.wrote(mg)
	}
	return o, err
}

// prioritised sets the queue priority of what the managed reconciler asks
// for next. Its polls (a requeue after half a poll interval or more: the
// managed reconciler asks for nothing else after a delay) go to the back,
// below every change and newcomer. The requeue that follows a successful
// delete (crossplane-runtime asks for it through the per-item backoff, the
// same as after an error) runs at once and ahead of the polls: it only
// confirms what Cloudflare already answered. Any other requeue
// (an error, a conflict) keeps its backoff and priority.
type prioritised struct {
	reconcile.Reconciler
	written *writtenHere
	poll    time.Duration
}

// Reconcile implements reconcile.Reconciler.
func (p prioritised) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	res, err := p.Reconciler.Reconcile(ctx, req)
	wrote := p.written.take(req.NamespacedName)
	switch {
	case err != nil:
		return res, err
	case wrote && res.Requeue && res.RequeueAfter == 0: //nolint:staticcheck // crossplane-runtime still returns Requeue
		return reconcile.Result{RequeueAfter: confirmAfter, Priority: ptr.To(confirmPriority)}, nil
	case res.RequeueAfter > 0 && res.RequeueAfter >= p.poll/2:
		res.Priority = ptr.To(pollPriority)
	}
	return res, nil
}
