package cloudflaretunnel

import (
	"context"
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// DefaultFanInInterval is the shortest time between two reconciles of a
// tunnel that the objects made for it ask for.
const DefaultFanInInterval = time.Second

// pacer remembers when each tunnel was last reconciled, so that changes of
// the objects published through it (PublicHostnames, DNS records, routes,
// VPC services) reconcile it at most once an interval. Each of those
// reconciles reads every hostname and record of the tunnel: with 1,000
// hostnames converging, the tunnel was reconciled 14 times a second, two
// thirds of all the provider allocated. A change that finds the tunnel idle
// for an interval reconciles it at once; the changes of a burst wait for the
// interval's end and share one reconcile (the work queue holds a tunnel
// once).
type pacer struct {
	interval time.Duration
	now      func() time.Time

	mu   sync.Mutex
	last map[reconcile.Request]time.Time
}

func newPacer(interval time.Duration) *pacer {
	return &pacer{interval: interval, now: time.Now, last: map[reconcile.Request]time.Time{}}
}

// started records a reconcile of req beginning now. A nil pacer (a
// Reconciler built without Setup) paces nothing.
func (p *pacer) started(req reconcile.Request) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last[req] = p.now()
}

// forget drops a tunnel that is gone.
func (p *pacer) forget(req reconcile.Request) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.last, req)
}

// wait is how long a change must wait before it reconciles req.
func (p *pacer) wait(req reconcile.Request) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	last, ok := p.last[req]
	if !ok {
		return 0
	}
	return p.interval - p.now().Sub(last)
}

// paced wraps the event handler of a fan-in watch so that what it enqueues
// waits for the pacer.
func (p *pacer) paced(h handler.EventHandler) handler.EventHandler {
	return pacedHandler{next: h, pacer: p}
}

type pacedHandler struct {
	next  handler.EventHandler
	pacer *pacer
}

func (h pacedHandler) queue(q workqueue.TypedRateLimitingInterface[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	return pacedQueue{TypedRateLimitingInterface: q, pacer: h.pacer}
}

func (h pacedHandler) Create(ctx context.Context, e ctrlevent.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	h.next.Create(ctx, e, h.queue(q))
}

func (h pacedHandler) Update(ctx context.Context, e ctrlevent.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	h.next.Update(ctx, e, h.queue(q))
}

func (h pacedHandler) Delete(ctx context.Context, e ctrlevent.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	h.next.Delete(ctx, e, h.queue(q))
}

func (h pacedHandler) Generic(ctx context.Context, e ctrlevent.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	h.next.Generic(ctx, e, h.queue(q))
}

// pacedQueue turns an Add into an AddAfter the pacer's wait. The queue keeps
// an item once, at its earliest time, so a burst's adds meet in one
// reconcile.
type pacedQueue struct {
	workqueue.TypedRateLimitingInterface[reconcile.Request]
	pacer *pacer
}

func (q pacedQueue) Add(req reconcile.Request) {
	if d := q.pacer.wait(req); d > 0 {
		q.AddAfter(req, d)
		return
	}
	q.TypedRateLimitingInterface.Add(req)
}
