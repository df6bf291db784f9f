// Package hostnameroute reconciles HostnameRoute managed resources with
// Cloudflare's private hostname routes.
package hostnameroute

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/common"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/mr"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/ownership"
)

var kind = mr.Kind[*v1alpha1.HostnameRoute]{
	GVK:        v1alpha1.HostnameRouteGroupVersionKind,
	NewObj:     func() *v1alpha1.HostnameRoute { return &v1alpha1.HostnameRoute{} },
	NewList:    func() client.ObjectList { return &v1alpha1.HostnameRouteList{} },
	ObservedID: func(cr *v1alpha1.HostnameRoute) string { return cr.Status.AtProvider.ID },
	External: func(c mr.Connection) managed.TypedExternalClient[*v1alpha1.HostnameRoute] {
		return &external{routes: c.Cloudflare, conn: c}
	},
	Hostnames: func(cr *v1alpha1.HostnameRoute) []string { return []string{cr.Spec.ForProvider.Hostname} },
	References: func(cr *v1alpha1.HostnameRoute) []*string {
		return []*string{mr.SelectorNamespace(cr.Spec.ForProvider.TunnelIDSelector)}
	},
	TunnelRefs: func(cr *v1alpha1.HostnameRoute) []*xpv2.NamespacedReference {
		return []*xpv2.NamespacedReference{cr.Spec.ForProvider.TunnelIDRef}
	},
	TunnelIDs: func(cr *v1alpha1.HostnameRoute) []string {
		return []string{ptr.Deref(cr.Spec.ForProvider.TunnelID, "")}
	},
}

// Setup adds the HostnameRoute controller.
func Setup(mgr ctrl.Manager, o controller.Options, s mr.Settings) error {
	return mr.Setup(mgr, o, s, kind)
}

// SetupGated adds the HostnameRoute controller once its CRD is established.
func SetupGated(mgr ctrl.Manager, o controller.Options, s mr.Settings) error {
	return mr.SetupGated(mgr, o, s, kind)
}

type external struct {
	routes cloudflare.HostnameRoutesAPI
	// conn gives the owner ID of the marker in a route's comment.
	conn mr.Connection
}

func (e *external) identity(cr *v1alpha1.HostnameRoute) ownership.Identity {
	return e.conn.Identity(v1alpha1.HostnameRouteKind, cr)
}

func (e *external) Disconnect(context.Context) error { return nil }

// ConflictError is a route for the hostname that this resource cannot prove
// it made: it is never taken over, changed or deleted.
type ConflictError struct {
	Hostname, RouteID, TunnelID, TunnelName string
	// Owner says who the route's comment says made it.
	Owner string
}

func (c *ConflictError) Error() string {
	return fmt.Sprintf("conflict: hostname %s is already routed to tunnel %s (%s) by route %s, which was not created by this resource (%s); it is left alone. Delete that route, or set %s as this resource's crossplane.io/external-name to take it over on purpose",
		c.Hostname, c.TunnelName, c.TunnelID, c.RouteID, c.Owner, c.RouteID)
}

// ConditionReason of a route in the way: NameTaken.
func (c *ConflictError) ConditionReason() xpv2.ConditionReason { return common.ReasonNameTaken }

// find looks up the live route for a hostname (its natural key: a hostname
// is routed at most once per account) and takes it only with proof that
// this resource made it: its comment carries this resource's ownership
// marker. Every create writes the marker, so a create whose response was
// lost leaves it, and no guess by creation time is needed. Anything else is
// a conflict, even a route into our own tunnel: someone else made it and
// may depend on it.
func (e *external) find(ctx context.Context, cr *v1alpha1.HostnameRoute) (*cloudflare.HostnameRoute, error) {
	h := cloudflare.NormalizeHostname(cr.Spec.ForProvider.Hostname)
	rs, err := e.routes.ListHostnameRoutes(ctx, cloudflare.HostnameRouteFilter{Hostname: h})
	if err != nil {
		return nil, errors.Wrap(err, "cannot look for an existing hostname route")
	}
	for i := range rs {
		// The list filter is a substring match.
		if cloudflare.NormalizeHostname(rs[i].Hostname) != h || rs[i].Deleted() {
			continue
		}
		_, mark, _ := ownership.Split(rs[i].Comment)
		if e.identity(cr).Made(mark) {
			return &rs[i], nil
		}
		return nil, &ConflictError{Hostname: h, RouteID: rs[i].ID, TunnelID: rs[i].TunnelID, TunnelName: rs[i].TunnelName, Owner: e.identity(cr).Describe(rs[i].Comment)}
	}
	return nil, nil
}

func tunnelID(cr *v1alpha1.HostnameRoute) (string, error) {
	id := ptr.Deref(cr.Spec.ForProvider.TunnelID, "")
	if id == "" {
		return "", errors.New("spec.forProvider.tunnelId is not set: set it, or a tunnelIdRef/tunnelIdSelector to a Tunnel that has been created")
	}
	return id, nil
}

func (e *external) Observe(ctx context.Context, cr *v1alpha1.HostnameRoute) (managed.ExternalObservation, error) {
	if _, err := tunnelID(cr); err != nil && !meta.WasDeleted(cr) {
		// Deleting needs only the route's ID (references are not resolved
		// during deletion: one cleared by a change must not strand it).
		return managed.ExternalObservation{}, err
	}
	r, adopted, err := mr.Locate(ctx, cr, mr.Lookup[cloudflare.HostnameRoute]{
		Get:     e.routes.GetHostnameRoute,
		Find:    func(ctx context.Context) (*cloudflare.HostnameRoute, error) { return e.find(ctx, cr) },
		ID:      func(r *cloudflare.HostnameRoute) string { return r.ID },
		Deleted: (*cloudflare.HostnameRoute).Deleted,
	})
	var conflict *ConflictError
	if errors.As(err, &conflict) && meta.WasDeleted(cr) {
		// Never created (someone else routes the hostname): there is
		// nothing of this resource's to delete, and the other route is
		// left alone. Without this, a resource that got its finalizer
		// before the conflict showed could never be deleted.
		return managed.ExternalObservation{ResourceExists: false}, nil
	}
	if err != nil || r == nil {
		return managed.ExternalObservation{ResourceExists: false}, errors.Wrap(err, "cannot observe hostname route")
	}

	cr.SetConditions(xpv2.Available())
	cr.Status.AtProvider = v1alpha1.HostnameRouteObservation{
		ID: r.ID, Hostname: r.Hostname, TunnelID: r.TunnelID, TunnelName: r.TunnelName, CreatedAt: mr.Time(&r.CreatedAt),
	}
	lateInit := LateInitialize(&cr.Spec.ForProvider, r)
	diff := Diff(cr.Spec.ForProvider, r, e.identity(cr).Mark())
	return managed.ExternalObservation{
		ResourceExists:          true,
		ResourceUpToDate:        diff == "",
		ResourceLateInitialized: adopted || lateInit,
		Diff:                    diff,
	}, nil
}

// LateInitialize fills unset optional fields from Cloudflare: the comment's
// user part, never the ownership marker.
func LateInitialize(p *v1alpha1.HostnameRouteParameters, r *cloudflare.HostnameRoute) bool {
	if p.Comment == nil {
		user, _, _ := ownership.Split(r.Comment)
		p.Comment = ptr.To(user)
		return true
	}
	return false
}

// Diff compares the desired route with Cloudflare's, hostnames in their
// stored form; "" means up to date. A route without mark (made by an
// earlier version, or imported) differs, so the next update marks it.
func Diff(p v1alpha1.HostnameRouteParameters, r *cloudflare.HostnameRoute, mark ownership.Mark) string {
	var d []string
	if h := cloudflare.NormalizeHostname(p.Hostname); h != cloudflare.NormalizeHostname(r.Hostname) {
		d = append(d, fmt.Sprintf("hostname: %q in Cloudflare, %q desired", r.Hostname, h))
	}
	if id := ptr.Deref(p.TunnelID, ""); id != r.TunnelID {
		d = append(d, fmt.Sprintf("tunnelId: %q in Cloudflare, %q desired", r.TunnelID, id))
	}
	user, got, _ := ownership.Split(r.Comment)
	if p.Comment != nil && *p.Comment != user {
		d = append(d, fmt.Sprintf("comment: %q in Cloudflare, %q desired", user, *p.Comment))
	}
	if got != mark {
		d = append(d, fmt.Sprintf("ownership marker: %q in Cloudflare, %q desired", got, mark))
	}
	return strings.Join(d, "; ")
}

// input is the route the spec asks for, with mark in its comment.
func input(p v1alpha1.HostnameRouteParameters, mark ownership.Mark) cloudflare.HostnameRouteInput {
	return cloudflare.HostnameRouteInput{Hostname: p.Hostname, TunnelID: ptr.Deref(p.TunnelID, ""), Comment: ownership.Comment(ptr.Deref(p.Comment, ""), mark)}
}

func (e *external) Create(ctx context.Context, cr *v1alpha1.HostnameRoute) (managed.ExternalCreation, error) {
	if _, err := tunnelID(cr); err != nil {
		return managed.ExternalCreation{}, err
	}
	r, err := e.routes.CreateHostnameRoute(ctx, input(cr.Spec.ForProvider, e.identity(cr).Mark()))
	if cloudflare.IsAlreadyExists(err) {
		// Ours from a create whose result was lost, or a conflict.
		if r, err = e.find(ctx, cr); err == nil && r == nil {
			err = errors.New("Cloudflare reports the hostname as routed but lists no live route for it")
		}
	}
	if err != nil {
		return managed.ExternalCreation{}, errors.Wrap(err, "cannot create hostname route")
	}
	meta.SetExternalName(cr, r.ID)
	return managed.ExternalCreation{}, nil
}

func (e *external) Update(ctx context.Context, cr *v1alpha1.HostnameRoute) (managed.ExternalUpdate, error) {
	_, err := e.routes.UpdateHostnameRoute(ctx, meta.GetExternalName(cr), input(cr.Spec.ForProvider, e.identity(cr).Mark()))
	return managed.ExternalUpdate{}, errors.Wrap(err, "cannot update hostname route")
}

func (e *external) Delete(ctx context.Context, cr *v1alpha1.HostnameRoute) (managed.ExternalDelete, error) {
	err := e.routes.DeleteHostnameRoute(ctx, meta.GetExternalName(cr))
	if cloudflare.IsNotFound(err) {
		return managed.ExternalDelete{}, nil
	}
	return managed.ExternalDelete{}, errors.Wrap(err, "cannot delete hostname route")
}
