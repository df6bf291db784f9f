package mr

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
)

// storedFormManager gives the managed reconciler a client that keeps
// Kind.StoredForm's form on the kind's objects. The reconciler writes the
// whole object (its finalizer, its create-pending and external-name
// annotations) and decodes the API server's reply into it again, so the
// form is put back after every read and around every write, not once.
type storedFormManager[T resource.ModernManaged] struct {
	ctrl.Manager
	form func(T)
}

func (m storedFormManager[T]) GetClient() client.Client {
	c := m.Manager.GetClient()
	if m.form == nil {
		return c
	}
	return storedFormClient[T]{Client: c, form: m.form}
}

type storedFormClient[T resource.ModernManaged] struct {
	client.Client
	form func(T)
}

func (c storedFormClient[T]) keep(o client.Object) {
	if t, ok := o.(T); ok {
		c.form(t)
	}
}

func (c storedFormClient[T]) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	err := c.Client.Get(ctx, key, obj, opts...)
	c.keep(obj)
	return err
}

func (c storedFormClient[T]) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	c.keep(obj)
	err := c.Client.Update(ctx, obj, opts...)
	c.keep(obj)
	return err
}

func (c storedFormClient[T]) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	c.keep(obj)
	err := c.Client.Patch(ctx, obj, patch, opts...)
	c.keep(obj)
	return err
}

func (c storedFormClient[T]) Status() client.SubResourceWriter {
	return storedFormWriter[T]{SubResourceWriter: c.Client.Status(), keep: c.keep}
}

type storedFormWriter[T resource.ModernManaged] struct {
	client.SubResourceWriter
	keep func(client.Object)
}

func (w storedFormWriter[T]) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	w.keep(obj)
	err := w.SubResourceWriter.Update(ctx, obj, opts...)
	w.keep(obj)
	return err
}

func (w storedFormWriter[T]) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	w.keep(obj)
	err := w.SubResourceWriter.Patch(ctx, obj, patch, opts...)
	w.keep(obj)
	return err
}
