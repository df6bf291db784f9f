package budget

import (
	"container/heap"
	"context"
	"sync"
)

// Priority orders the requests waiting for a budget: higher first, equal
// priorities in the order they arrived.
type Priority int

const (
	// Normal is every request's priority unless its context says otherwise.
	Normal Priority = 0
	// Aggregate is for a request that serves many objects at once (a
	// tunnel's configuration document, a batch of DNS records): it is the
	// last step of many resources, so sending it before the queue of
	// single-object writes makes them Ready without waiting for that queue.
	Aggregate Priority = 10
)

type priorityKey struct{}

// WithPriority returns a context whose requests wait for the budget with p.
func WithPriority(ctx context.Context, p Priority) context.Context {
	return context.WithValue(ctx, priorityKey{}, p)
}

// PriorityOf is the priority ctx's requests wait with: Normal unless
// WithPriority set one.
func PriorityOf(ctx context.Context) Priority {
	p, _ := ctx.Value(priorityKey{}).(Priority)
	return p
}

// turns hands out the right to wait for the limiter one request at a time,
// highest priority first. The limiter itself is first come, first served:
// it must see the requests in the order they are to go.
type turns struct {
	mu      sync.Mutex
	held    bool
	seq     uint64
	waiting waiters
}

type waiter struct {
	priority Priority
	seq      uint64
	index    int
	ready    chan struct{}
}

// take waits for the caller's turn.
func (t *turns) take(ctx context.Context) error {
	t.mu.Lock()
	if !t.held {
		t.held = true
		t.mu.Unlock()
		return nil
	}
	w := &waiter{priority: PriorityOf(ctx), seq: t.seq, ready: make(chan struct{})}
	t.seq++
	heap.Push(&t.waiting, w)
	t.mu.Unlock()
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
		t.mu.Lock()
		defer t.mu.Unlock()
		select {
		case <-w.ready:
			// Handed the turn just as the caller gave up: pass it on.
			t.passLocked()
		default:
			heap.Remove(&t.waiting, w.index)
		}
		return ctx.Err()
	}
}

// pass gives the turn to the next waiter.
func (t *turns) pass() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.passLocked()
}

func (t *turns) passLocked() {
	if t.waiting.Len() == 0 {
		t.held = false
		return
	}
	close(heap.Pop(&t.waiting).(*waiter).ready)
}

// waiters is a heap: highest priority, then earliest arrival, on top.
type waiters []*waiter

func (w waiters) Len() int { return len(w) }
func (w waiters) Less(i, j int) bool {
	if w[i].priority != w[j].priority {
		return w[i].priority > w[j].priority
	}
	return w[i].seq < w[j].seq
}
func (w waiters) Swap(i, j int) {
	w[i], w[j] = w[j], w[i]
	w[i].index, w[j].index = i, j
}
func (w *waiters) Push(x any) {
	wt := x.(*waiter)
	wt.index = len(*w)
	*w = append(*w, wt)
}
func (w *waiters) Pop() any {
	old := *w
	n := len(old)
	wt := old[n-1]
	old[n-1] = nil
	*w = old[:n-1]
	return wt
}
