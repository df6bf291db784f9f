package cloudflare

import (
	"context"
	"sync"
	"time"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare/budget"
)

// snapshot is one kind's objects from one paginated list, shared by every
// managed resource of that kind in the account.
type snapshot[T any] struct {
	mu      sync.Mutex
	items   map[string]T
	fetched time.Time
	// listed is when the list behind items was sent: a write that
	// returned before then is in it (Cloudflare's lists are consistent
	// with its writes; see docs/reliability.md for the simulator's lag).
	listed time.Time
	// gone holds IDs this process deleted: Cloudflare never reuses an ID,
	// so observing one after its delete needs no call.
	gone map[string]struct{}
	// refreshing serialises refreshes: concurrent readers of a stale
	// snapshot wait for one list instead of each listing (single flight).
	refreshing sync.Mutex
	// journal holds the writes recorded while a refresh's list is on its
	// way (nil: removed), and invalidated whether one failed meanwhile:
	// the list may have been read before they landed and must not undo
	// them. journal is nil when no refresh runs.
	journal     map[string]*T
	invalidated bool
}

// get returns the object with id from a snapshot no older than ttl,
// refreshing it with list when stale. found is false when the object is
// not in the snapshot.
func (s *snapshot[T]) get(ctx context.Context, ttl time.Duration, id string, list func(context.Context) (map[string]T, error)) (T, bool, error) {
	if v, ok, fresh := s.lookup(ttl, id); fresh {
		return v, ok, nil
	}
	s.refreshing.Lock()
	defer s.refreshing.Unlock()
	// Another caller may have refreshed while we waited.
	if v, ok, fresh := s.lookup(ttl, id); fresh {
		return v, ok, nil
	}
	items, err := s.refresh(ctx, list)
	if err != nil {
		var zero T
		return zero, false, err
	}
	v, ok := items[id]
	return v, ok, nil
}

// refresh lists and stores the result with the writes recorded meanwhile
// applied on top, and returns a copy (the snapshot's own map changes with
// every write). The caller holds s.refreshing.
func (s *snapshot[T]) refresh(ctx context.Context, list func(context.Context) (map[string]T, error)) (map[string]T, error) {
	s.mu.Lock()
	s.journal, s.invalidated = map[string]*T{}, false
	s.mu.Unlock()
	listed := time.Now()
	items, err := list(refreshing(ctx))
	s.mu.Lock()
	defer s.mu.Unlock()
	journal, invalidated := s.journal, s.invalidated
	s.journal = nil
	if err != nil {
		return nil, err
	}
	for id, v := range journal {
		if v == nil {
			delete(items, id)
			continue
		}
		items[id] = *v
	}
	s.items, s.fetched, s.listed = items, time.Now(), listed
	if invalidated {
		s.fetched = time.Time{}
	}
	out := make(map[string]T, len(items))
	for k, v := range items {
		out[k] = v
	}
	return out, nil
}

// all returns every object in a snapshot no older than ttl, refreshing it
// with list when stale. Callers filter; the map must not be modified.
func (s *snapshot[T]) all(ctx context.Context, ttl time.Duration, list func(context.Context) (map[string]T, error)) (map[string]T, error) {
	if items, fresh := s.current(ttl); fresh {
		return items, nil
	}
	s.refreshing.Lock()
	defer s.refreshing.Unlock()
	if items, fresh := s.current(ttl); fresh {
		return items, nil
	}
	return s.refresh(ctx, list)
}

// since returns every object from a list sent no earlier than t, listing
// again when the snapshot's is older: what Cloudflare held after a write
// that returned at t. Callers waiting together share one list.
func (s *snapshot[T]) since(ctx context.Context, t time.Time, list func(context.Context) (map[string]T, error)) (map[string]T, error) {
	if items, ok := s.listedSince(t); ok {
		return items, nil
	}
	s.refreshing.Lock()
	defer s.refreshing.Unlock()
	if items, ok := s.listedSince(t); ok {
		return items, nil
	}
	return s.refresh(ctx, list)
}

// listedSince copies the snapshot's objects when its list was sent no
// earlier than t and no write of unknown outcome has happened since.
func (s *snapshot[T]) listedSince(t time.Time) (map[string]T, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.items == nil || s.fetched.IsZero() || s.listed.Before(t) {
		return nil, false
	}
	out := make(map[string]T, len(s.items))
	for k, v := range s.items {
		out[k] = v
	}
	return out, true
}

// refreshing marks a snapshot's list: one request that observes every
// object of its kind, so it goes ahead of single-object writes in the
// budget, and a resource that was just created is confirmed without
// waiting for the queue of creates.
func refreshing(ctx context.Context) context.Context {
	return budget.WithPriority(ctx, budget.Aggregate)
}

// current copies the snapshot's objects when it is no older than ttl. The
// copy lets callers filter while writes are recorded concurrently.
func (s *snapshot[T]) current(ttl time.Duration) (map[string]T, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.items == nil || time.Since(s.fetched) > ttl {
		return nil, false
	}
	out := make(map[string]T, len(s.items))
	for k, v := range s.items {
		out[k] = v
	}
	return out, true
}

// invalidate forces the next read to list again. A write whose outcome is
// unknown (a timeout, a 5xx) may still have happened, and a lookup by
// natural key must then see Cloudflare rather than the snapshot, or the
// write would be repeated and the object duplicated.
func (s *snapshot[T]) invalidate() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fetched = time.Time{}
	if s.journal != nil {
		s.invalidated = true
	}
}

// deleted reports whether this process deleted the object.
func (s *snapshot[T]) deleted(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.gone[id]
	return ok
}

func (s *snapshot[T]) lookup(ttl time.Duration, id string) (T, bool, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var zero T
	if s.items == nil || time.Since(s.fetched) > ttl {
		return zero, false, false
	}
	v, ok := s.items[id]
	return v, ok, true
}

// put records a write, so the next observation sees it without a call.
func (s *snapshot[T]) put(id string, v T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.items != nil {
		s.items[id] = v
	}
	if s.journal != nil {
		s.journal[id] = &v
	}
}

func (s *snapshot[T]) remove(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.items, id)
	if s.journal != nil {
		s.journal[id] = nil
	}
	if s.gone == nil {
		s.gone = map[string]struct{}{}
	}
	s.gone[id] = struct{}{}
}
