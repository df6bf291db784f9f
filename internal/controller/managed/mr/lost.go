package mr

import (
	"context"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
)

// LostCreate finds what a create of a resource whose answer was lost left
// behind, for kinds whose Cloudflare objects carry no ownership marker and
// whose names are not unique (Access policies, groups, applications,
// service tokens). A name alone proves nothing there: only an object that
// matches the resource's natural key and appeared after the resource began
// creating it (LeftByOwnCreate) is the create's. Another one of the same
// name is someone else's, and no obstacle: Cloudflare lets both exist.
type LostCreate[O any] struct {
	// List lists the kind's objects in the account.
	List func(ctx context.Context) ([]O, error)
	// Match says whether an object has the resource's natural key.
	Match func(O) bool
	// ID and Created are an object's ID and creation time.
	ID      func(O) string
	Created func(O) time.Time
}

// Find lists the objects a create of mg whose answer was lost may have
// left; it is asked only while mg has no external-name. It lists once a
// create has begun (crossplane's create-pending annotation), whether or
// not a failure was recorded since: an answer lost on the way back (a
// timeout, a 5xx from a proxy) is recorded as a failed create, yet the
// object may well exist. Never in steady state, where the external-name
// is set.
func (l LostCreate[O]) Find(ctx context.Context, mg resource.Managed) ([]O, error) {
	if meta.GetExternalCreatePending(mg).IsZero() {
		return nil, nil
	}
	all, err := l.List(cloudflare.ListedAfter(ctx, CreateSettledAt(mg, time.Now())))
	if err != nil {
		return nil, errors.Wrap(err, "cannot look for what a create whose answer was lost left")
	}
	var ours []O
	for _, o := range all {
		if l.Match(o) && LeftByOwnCreate(mg, l.ID(o), l.Created(o)) {
			ours = append(ours, o)
		}
	}
	return ours, nil
}

// One is the object the lost create left, to adopt: nil when there is
// none, an error when there are several (which one to manage is then the
// user's choice, by external-name). what names them in that error, e.g.
// `policies named "staff"`.
func (l LostCreate[O]) One(ctx context.Context, mg resource.Managed, what string) (*O, error) {
	ours, err := l.Find(ctx, mg)
	switch {
	case err != nil || len(ours) == 0:
		return nil, err
	case len(ours) == 1:
		return &ours[0], nil
	default:
		return nil, errors.Errorf("%d %s appeared after this resource began creating one; set the external-name to the ID of the one to manage", len(ours), what)
	}
}

// CreateSettledAt is the earliest time a list shows whatever mg's last
// create did: a second after its recorded outcome (annotations keep whole
// seconds), or now while no outcome is recorded since it began.
func CreateSettledAt(mg resource.Managed, now time.Time) time.Time {
	pending := meta.GetExternalCreatePending(mg)
	outcome := meta.GetExternalCreateFailed(mg)
	if s := meta.GetExternalCreateSucceeded(mg); s.After(outcome) {
		outcome = s
	}
	if outcome.IsZero() || outcome.Before(pending) {
		return now
	}
	if settled := outcome.Add(time.Second); settled.Before(now) {
		return settled
	}
	return now
}
