package providerconfig

import (
	"context"
	"time"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// usageCoalescing is how long a config's reconcile waits after a change of
// one of its usage records, so that the changes in that time share one.
// Each reconcile counts every user of the config; one large change creates
// a usage record per managed resource, and reconciling on each of them
// meant thousands of lists of thousands of objects. Nothing about a
// config's users needs to be known sooner.
const usageCoalescing = 2 * time.Second

// coalesced is inner with everything it enqueues delayed by after: the
// queue holds a key once, at its earliest time, so a burst of events for
// one key becomes one reconcile.
type coalesced struct {
	inner handler.EventHandler
	after time.Duration
}

type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]

// delayed turns Add into AddAfter.
type delayed struct {
	queue
	after time.Duration
}

func (q delayed) Add(r reconcile.Request) { q.AddAfter(r, q.after) }

func (c coalesced) Create(ctx context.Context, e event.CreateEvent, q queue) {
	c.inner.Create(ctx, e, delayed{q, c.after})
}

func (c coalesced) Update(ctx context.Context, e event.UpdateEvent, q queue) {
	c.inner.Update(ctx, e, delayed{q, c.after})
}

func (c coalesced) Delete(ctx context.Context, e event.DeleteEvent, q queue) {
	c.inner.Delete(ctx, e, delayed{q, c.after})
}

func (c coalesced) Generic(ctx context.Context, e event.GenericEvent, q queue) {
	c.inner.Generic(ctx, e, delayed{q, c.after})
}
