package source

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	kmeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
)

// Owner is the source whose children a Converger converges.
type Owner struct {
	// Object is the source, told what happens to its children; nil once it
	// is gone (a Service carries no finalizer), when there is no one to tell.
	Object client.Object
	// APIVersion, Kind, Namespace and Name say which source this is, as its
	// children's controller references name it.
	APIVersion, Kind, Namespace, Name string
	// UID of the source; "" once it is gone. A child whose controller is a
	// source of this kind and name but another UID was made for an earlier
	// source of the name: it is released, never taken over.
	UID types.UID
	// Select finds the source's children among the objects of its
	// namespace: by a label naming it (which finds an earlier source's too)
	// or by the controller index (this source's alone).
	Select client.ListOption
}

// OwnerOf is o as a Converger's owner, its children found by sel.
func OwnerOf(o client.Object, apiVersion, kind string, sel client.ListOption) Owner {
	return Owner{Object: o, APIVersion: apiVersion, Kind: kind, Namespace: o.GetNamespace(), Name: o.GetName(), UID: o.GetUID(), Select: sel}
}

// relation is what an existing object is to an owner.
type relation int

const (
	// foreign: controlled by something else, or by nothing; left alone.
	foreign relation = iota
	// own: controlled by this owner, by UID.
	own
	// predecessor: controlled by an earlier owner of the same kind and
	// name (deleted and recreated): released, never taken over.
	predecessor
)

func (o Owner) relation(m client.Object) relation {
	c := metav1.GetControllerOf(m)
	switch {
	case c == nil:
		return foreign
	case o.UID != "" && c.UID == o.UID:
		return own
	case c.APIVersion == o.APIVersion && c.Kind == o.Kind && c.Name == o.Name:
		return predecessor
	}
	return foreign
}

// Desired is what an owner should have.
type Desired struct {
	// Objects to create or update.
	Objects []Owned
	// Keep says whether an existing child no longer desired stays: with a
	// problem in the source, bad input must not cost what already works.
	// Nil keeps none.
	Keep func(Owned) bool
}

// Outcome is what a converge left.
type Outcome struct {
	// Children are the owner's own that stay: desired, kept, or already on
	// their way out.
	Children []Owned
	// Taken are desired objects whose name something else holds: left alone.
	Taken []Owned
	// Released are the children deleted in this pass (the owner's own, or an
	// earlier owner's of its name).
	Released []Owned
	// Leaving are an earlier owner's children already being deleted.
	Leaving []Owned
	// Parked are the owner's PublicHostnames no longer wanted, waiting out
	// the Converger's grace before they are released.
	Parked []Owned
	// RecheckAfter is when the owner is to converge again, for a parked
	// child's grace to end; 0 when none is parked.
	RecheckAfter time.Duration
}

// Settled says whether nothing of the owner's is left: all released and
// gone.
func (o Outcome) Settled() bool {
	return len(o.Children)+len(o.Released)+len(o.Leaving)+len(o.Parked) == 0
}

// ReleaseGrace is how long a source's PublicHostname no longer wanted stays
// parked before it is deleted (Converger.Grace): long enough for an object
// replaced by another (delete and create, as an apply tool or a test suite
// does) or a route moved, short enough that a name given up leaves DNS
// promptly. Its rules are withdrawn at once all the same.
const ReleaseGrace = 10 * time.Second

// Converger creates, updates, keeps and releases the children of one kind
// of source. Its children are recognised by their controller reference's
// UID: a child of the same name controlled by anything else is never
// touched, and one of an earlier source of the same name is released.
type Converger struct {
	Kube   client.Client
	Record event.Recorder
	// Kinds are empty lists of the kinds of the children.
	Kinds func() []client.ObjectList
	// Copy sets an existing child to the desired one, keeping what its
	// own reconciler added, and says whether anything changed; nil is
	// CopySpec.
	Copy func(cur, want Owned) bool
	// Grace is how long a PublicHostname no longer wanted (nor kept) stays,
	// parked, before it is released while its owner lives; 0 releases it
	// at once. A parked hostname publishes no rules (its reconciler reads
	// AnnotationUnwantedSince) but keeps its DNS record and its claim, so
	// one wanted again within the grace (an object replaced, a route
	// moved) is taken back as it is, instead of being deleted and made
	// again, which leaves the name without a DNS record until both are
	// done. Other kinds have no parked state and are released at once.
	Grace time.Duration
	// Now is the grace's clock; nil is time.Now.
	Now func() time.Time
}

// Converge creates and updates d's objects, then releases the owner's
// children no longer desired nor kept (after the grace, for a
// PublicHostname) and every child of an earlier owner of its name. Each
// child being deleted is left to finish: a desired one is made again once
// it is gone (its deletion requeues the owner).
func (c *Converger) Converge(ctx context.Context, o Owner, d Desired) (Outcome, error) {
	return c.converge(ctx, o, d, c.Grace)
}

func (c *Converger) converge(ctx context.Context, o Owner, d Desired, grace time.Duration) (Outcome, error) {
	var out Outcome
	want := map[string]bool{}
	for _, w := range d.Objects {
		want[Key(w)] = true
		got, cur, err := c.apply(ctx, o, w)
		if err != nil {
			return out, err
		}
		switch got {
		case taken:
			out.Taken = append(out.Taken, w)
		case releasedEarlier:
			out.Released = append(out.Released, cur)
		}
	}
	mine, earlier, err := c.children(ctx, o)
	if err != nil {
		return out, err
	}
	// Released already in apply; the cache may not show it deleted yet.
	earlier = slices.DeleteFunc(earlier, func(m Owned) bool { return inKeys(out.Released, Key(m)) })
	for _, m := range mine {
		if meta.WasDeleted(m) || want[Key(m)] || d.Keep != nil && d.Keep(m) {
			out.Children = append(out.Children, m)
			continue
		}
		left, err := c.park(ctx, o, m, grace)
		if err != nil {
			return out, err
		}
		if left > 0 {
			out.Parked = append(out.Parked, m)
			out.RecheckAfter = soonest(out.RecheckAfter, left)
			continue
		}
		if err := c.release(ctx, o, m, "no longer wanted"); err != nil {
			return out, err
		}
		out.Released = append(out.Released, m)
	}
	for _, m := range earlier {
		if meta.WasDeleted(m) {
			out.Leaving = append(out.Leaving, m)
			continue
		}
		if err := c.release(ctx, o, m, earlierMessage(o)); err != nil {
			return out, err
		}
		out.Released = append(out.Released, m)
	}
	return out, nil
}

// Release deletes every child of the owner (and of earlier owners of its
// name) and says whether all are gone: only then may the owner let go of
// its finalizer, since each child's own finalizer waits for Cloudflare.
// An owner that goes wants nothing again: no grace.
func (c *Converger) Release(ctx context.Context, o Owner) (bool, error) {
	out, err := c.converge(ctx, o, Desired{}, 0)
	return out.Settled(), err
}

// children lists what the owner made, and what earlier owners of its name
// made, in a stable order (kind, then name): the release order.
func (c *Converger) children(ctx context.Context, o Owner) (mine, earlier []Owned, _ error) {
	for _, l := range c.Kinds() {
		opts := []client.ListOption{client.InNamespace(o.Namespace)}
		if o.Select != nil {
			opts = append(opts, o.Select)
		}
		if err := c.Kube.List(ctx, l, opts...); err != nil {
			return nil, nil, errors.Wrap(err, "cannot list what the source made")
		}
		items, err := kmeta.ExtractList(l)
		if err != nil {
			return nil, nil, errors.Wrap(err, "cannot read what the source made")
		}
		for _, item := range items {
			m, ok := item.(Owned)
			if !ok {
				continue
			}
			switch o.relation(m) {
			case own:
				mine = append(mine, m)
			case predecessor:
				earlier = append(earlier, m)
			}
		}
	}
	byKey := func(s []Owned) { sort.SliceStable(s, func(i, j int) bool { return Key(s[i]) < Key(s[j]) }) }
	byKey(mine)
	byKey(earlier)
	return mine, earlier, nil
}

func inKeys(ms []Owned, key string) bool {
	return slices.ContainsFunc(ms, func(m Owned) bool { return Key(m) == key })
}

// applied is what apply did with a desired child.
type applied int

const (
	written         applied = iota // created, updated, or already as desired
	taken                          // its name is held by an object something else controls: left alone
	releasedEarlier                // its name is held by an earlier owner's child: that one was released
)

// apply creates or updates one desired child; with the object of its name
// that stands.
func (c *Converger) apply(ctx context.Context, o Owner, want Owned) (applied, Owned, error) {
	cur := want.DeepCopyObject().(Owned)
	err := c.Kube.Get(ctx, client.ObjectKeyFromObject(want), cur)
	if kerrors.IsNotFound(err) {
		if err := c.Kube.Create(ctx, want); err != nil {
			return written, nil, errors.Wrapf(err, "cannot create %s %s", Kind(want), want.GetName())
		}
		c.normal(o, "Created"+Kind(want), fmt.Sprintf("Created %s", Describe(want)))
		return written, want, nil
	}
	if err != nil {
		return written, nil, errors.Wrapf(err, "cannot get %s %s", Kind(want), want.GetName())
	}
	switch o.relation(cur) {
	case foreign:
		c.warn(o, "NameConflict", fmt.Sprintf("%s %s exists and is not controlled by this %s; left alone", Kind(want), want.GetName(), o.Kind))
		return taken, cur, nil
	case predecessor:
		// Made for an earlier source of this name: it goes, and this
		// source's own is made once it is gone (its deletion requeues).
		if meta.WasDeleted(cur) {
			return written, cur, nil
		}
		return releasedEarlier, cur, c.release(ctx, o, cur, earlierMessage(o))
	}
	if meta.WasDeleted(cur) {
		return written, cur, nil // made again once gone
	}
	changed := c.copy(cur, want)
	if unpark(cur) {
		changed = true
		c.normal(o, "Kept"+Kind(want), fmt.Sprintf("%s is wanted again: it publishes again, its DNS record kept", Describe(want)))
	}
	if !changed {
		return written, cur, nil
	}
	return written, cur, errors.Wrapf(c.Kube.Update(ctx, cur), "cannot update %s %s", Kind(want), want.GetName())
}

// park keeps a PublicHostname no longer wanted for the grace, marking when
// it was first found so, and says how much of the grace is left: 0 when it
// is to be released now.
func (c *Converger) park(ctx context.Context, o Owner, m Owned, grace time.Duration) (time.Duration, error) {
	if _, ok := m.(*v1alpha1.PublicHostname); !ok || grace <= 0 {
		return 0, nil
	}
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	if since, ok := UnwantedSince(m); ok {
		return max(grace-now().Sub(since), 0), nil
	}
	meta.AddAnnotations(m, map[string]string{v1alpha1.AnnotationUnwantedSince: now().UTC().Format(time.RFC3339)})
	if err := c.Kube.Update(ctx, m); err != nil {
		return 0, errors.Wrapf(err, "cannot mark %s %s no longer wanted", Kind(m), m.GetName())
	}
	c.normal(o, "Parked"+Kind(m), fmt.Sprintf("%s is no longer wanted: it publishes no rules, and goes in %s unless wanted again (its DNS record stays meanwhile)", Describe(m), grace))
	return grace, nil
}

// UnwantedSince is when m was first found no longer wanted by its source
// (AnnotationUnwantedSince); false when it is not marked, or the mark is
// not a time (then it is marked again, from now).
func UnwantedSince(m client.Object) (time.Time, bool) {
	v, ok := m.GetAnnotations()[v1alpha1.AnnotationUnwantedSince]
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, v)
	return t, err == nil
}

// unpark removes the mark of a child no longer wanted, and says whether it
// had one.
func unpark(m Owned) bool {
	a := m.GetAnnotations()
	if _, ok := a[v1alpha1.AnnotationUnwantedSince]; !ok {
		return false
	}
	delete(a, v1alpha1.AnnotationUnwantedSince)
	m.SetAnnotations(a)
	return true
}

// soonest is the earlier of two waits, 0 being none.
func soonest(a, b time.Duration) time.Duration {
	if a == 0 || b < a {
		return b
	}
	return a
}

func (c *Converger) copy(cur, want Owned) bool {
	if c.Copy != nil {
		return c.Copy(cur, want)
	}
	return CopySpec(cur, want)
}

// release deletes one child, why saying why.
func (c *Converger) release(ctx context.Context, o Owner, m Owned, why string) error {
	if err := c.Kube.Delete(ctx, m); client.IgnoreNotFound(err) != nil {
		return errors.Wrapf(err, "cannot delete %s %s", Kind(m), m.GetName())
	}
	// Its own finalizer deletes the Cloudflare object: it is not gone yet.
	c.normal(o, "Deleting"+Kind(m), fmt.Sprintf("Deleting %s, %s; it goes once Cloudflare confirms the deletion", Describe(m), why))
	return nil
}

func earlierMessage(o Owner) string {
	return fmt.Sprintf("made for an earlier %s of this name (deleted and recreated)", o.Kind)
}

func (c *Converger) normal(o Owner, reason, msg string) {
	if o.Object != nil && c.Record != nil {
		c.Record.Event(o.Object, event.Normal(event.Reason(reason), msg))
	}
}

func (c *Converger) warn(o Owner, reason, msg string) {
	if o.Object != nil && c.Record != nil {
		c.Record.Event(o.Object, event.Warning(event.Reason(reason), errors.New(msg)))
	}
}

// Describe names a child in an event: its kind and name, and what it is for.
func Describe(m client.Object) string {
	s := Kind(m) + " " + m.GetName()
	switch o := m.(type) {
	case *ztv1alpha1.HostnameRoute:
		return s + " (" + o.Spec.ForProvider.Hostname + ")"
	case *ztv1alpha1.NetworkRoute:
		return s + " (" + o.Spec.ForProvider.Network + ")"
	case *v1alpha1.PublicHostname:
		return s + " (" + o.Spec.Hostname + ")"
	}
	return s
}
