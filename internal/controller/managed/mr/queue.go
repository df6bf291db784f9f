package mr

import (
	"context"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
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
