package mr

import (
	"context"
	"sync"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
)

// deletedHere remembers the managed resources, by UID, whose external
// resource this process's Delete removed, so that the Observe after it is
// believed at once. The managed reconciler applies the creation grace period
// (30 s) before its deletion step: an Observe that finds nothing within that
// period of the create is taken for a read that lags the create and
// requeued, with per-item backoff (1, 2, 4, 8, 16 s). That is right for a
// create, wrong after a delete that succeeded: the object is gone because it
// was deleted, whatever a lagging read would say. Without this, a resource
// deleted moments after its create stayed Terminating until the period was
// over, 25-40 s after its external resource was gone (issue 34).
//
// An entry lives from a Delete to the Observe that finds the resource gone.
type deletedHere struct {
	uids sync.Map // types.UID -> struct{}
}

// deleted records that mg's external resource was deleted.
func (d *deletedHere) deleted(mg resource.Managed) { d.uids.Store(mg.GetUID(), struct{}{}) }

// confirmed reports whether mg's external resource, which an Observe has
// just found gone, is gone because this process deleted it, and forgets
// mg: the confirmation is needed once.
func (d *deletedHere) confirmed(mg resource.Managed) bool {
	_, ok := d.uids.LoadAndDelete(mg.GetUID())
	return ok
}

// confirmsDeletes is the outermost external client: a Delete that succeeds
// is remembered, and the Observe of the deleting resource that then finds
// nothing ends the creation grace period (by dropping the create's
// timestamp from the resource in memory; it is being deleted, so nothing
// else reads it), so the reconciler removes the finalizer in that same
// reconcile.
type confirmsDeletes[T resource.ModernManaged] struct {
	managed.TypedExternalClient[T]
	deleted *deletedHere
}

func (c *confirmsDeletes[T]) Observe(ctx context.Context, mg T) (managed.ExternalObservation, error) {
	o, err := c.TypedExternalClient.Observe(ctx, mg)
	if err == nil && !o.ResourceExists && meta.WasDeleted(mg) && c.deleted.confirmed(mg) {
		meta.RemoveAnnotations(mg, meta.AnnotationKeyExternalCreateSucceeded)
	}
	return o, err
}

func (c *confirmsDeletes[T]) Delete(ctx context.Context, mg T) (managed.ExternalDelete, error) {
	d, err := c.TypedExternalClient.Delete(ctx, mg)
	if err == nil {
		c.deleted.deleted(mg)
	}
	return d, err
}
