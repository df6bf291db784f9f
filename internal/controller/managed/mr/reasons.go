package mr

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/common"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
)

// How a managed resource's Synced=False gets a typed reason.
// crossplane-runtime's managed reconciler reports every failure as
// xpv2.ReconcileError, reason ReconcileError, with the error's text, and
// offers no hook to choose the reason. So the reason travels beside the
// reconcile: typedReasons gives each reconcile a failure in its context;
// the steps that call this package's code (resolving references,
// connecting, the external client) note the reason of the error they
// return there (Reason); and the status writer of the reconciler's client
// (reasonsWriter), which the reconciler calls right after marking the
// failure, puts the reason on the Synced condition in place of
// ReconcileError. The layers above decide on the reason
// (apis/common), never on the message.

// reasoned is an error that names the reason of the Synced=False it
// causes. The provider's own refusals implement it: a name taken, a claim
// another resource holds, a guardrail.
type reasoned interface {
	error
	ConditionReason() xpv2.ConditionReason
}

// Reason is the reason of the Synced=False that err causes: the one its
// error type names, else the class of a Cloudflare or network failure
// (an object the token lost its permission on, rate limited, transient,
// refused by Cloudflare); "" for any other,
// which keeps ReconcileError.
func Reason(err error) xpv2.ConditionReason {
	var r reasoned
	switch {
	case err == nil:
		return ""
	case errors.As(err, &r):
		return r.ConditionReason()
	case cloudflare.IsAccessLost(err):
		return common.ReasonPermissionDenied
	case cloudflare.IsRateLimited(err):
		return common.ReasonRateLimited
	case cloudflare.IsTransient(err):
		return common.ReasonTransient
	case cloudflare.IsRefused(err):
		return common.ReasonRefused
	}
	return ""
}

type failureKey struct{}

// failure is why a reconcile failed, as far as this package's code knows:
// the reason of the last error it returned, and the Synced condition the
// resource had before.
type failure struct {
	reason xpv2.ConditionReason
	before xpv2.Condition
}

// note records err's reason in ctx's failure, if any, for the status write
// that reports it, with the resource's Synced condition before the step
// that failed; and returns err.
func note(ctx context.Context, before xpv2.Condition, err error) error {
	if f, ok := ctx.Value(failureKey{}).(*failure); ok {
		f.reason, f.before = Reason(err), before
	}
	return err
}

// typedReasons gives every reconcile a failure to note reasons in.
type typedReasons struct{ reconcile.Reconciler }

func (r typedReasons) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	return r.Reconciler.Reconcile(context.WithValue(ctx, failureKey{}, &failure{}), req)
}

// typeReason puts the noted reason on obj's Synced=False in place of
// ReconcileError. A condition that then equals the one before keeps its
// transition time: nothing transitioned.
func typeReason(ctx context.Context, obj client.Object) {
	f, ok := ctx.Value(failureKey{}).(*failure)
	c, conditioned := obj.(resource.Conditioned)
	if !ok || !conditioned || f.reason == "" {
		return
	}
	s := c.GetCondition(xpv2.TypeSynced)
	if s.Status != corev1.ConditionFalse || s.Reason != xpv2.ReasonReconcileError {
		return
	}
	s.Reason = f.reason
	if s.Equal(f.before) {
		s.LastTransitionTime = f.before.LastTransitionTime
	}
	c.SetConditions(s)
}

// reasonsManager is a manager whose client's status writes carry the noted
// reasons (reasonsWriter); for the managed reconciler only.
type reasonsManager struct{ ctrl.Manager }

func (m reasonsManager) GetClient() client.Client { return reasonsClient{m.Manager.GetClient()} }

type reasonsClient struct{ client.Client }

func (c reasonsClient) Status() client.SubResourceWriter {
	return reasonsWriter{c.Client.Status()}
}

// reasonsWriter is the status writer the managed reconciler reports a
// failure through (Status().Update, its only status write).
type reasonsWriter struct{ client.SubResourceWriter }

func (w reasonsWriter) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	typeReason(ctx, obj)
	return w.SubResourceWriter.Update(ctx, obj, opts...)
}

// notesReasons notes the reason of every error the external client returns.
type notesReasons[T resource.ModernManaged] struct {
	managed.TypedExternalClient[T]
}

func (n *notesReasons[T]) Observe(ctx context.Context, mg T) (managed.ExternalObservation, error) {
	return noting(ctx, mg, func() (managed.ExternalObservation, error) { return n.TypedExternalClient.Observe(ctx, mg) })
}

func (n *notesReasons[T]) Create(ctx context.Context, mg T) (managed.ExternalCreation, error) {
	return noting(ctx, mg, func() (managed.ExternalCreation, error) { return n.TypedExternalClient.Create(ctx, mg) })
}

func (n *notesReasons[T]) Update(ctx context.Context, mg T) (managed.ExternalUpdate, error) {
	return noting(ctx, mg, func() (managed.ExternalUpdate, error) { return n.TypedExternalClient.Update(ctx, mg) })
}

func (n *notesReasons[T]) Delete(ctx context.Context, mg T) (managed.ExternalDelete, error) {
	return noting(ctx, mg, func() (managed.ExternalDelete, error) { return n.TypedExternalClient.Delete(ctx, mg) })
}

// noting runs one step on mg and notes the reason of its error.
func noting[R any](ctx context.Context, mg resource.Conditioned, step func() (R, error)) (R, error) {
	before := mg.GetCondition(xpv2.TypeSynced)
	r, err := step()
	return r, note(ctx, before, err)
}
