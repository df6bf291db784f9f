// Package networkroute reconciles NetworkRoute managed resources with
// Cloudflare's private network (CIDR) routes.
package networkroute

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/networks"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/mr"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/networkroute/claim"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/ownership"
)

var kind = mr.Kind[*v1alpha1.NetworkRoute]{
	GVK:        v1alpha1.NetworkRouteGroupVersionKind,
	NewObj:     func() *v1alpha1.NetworkRoute { return &v1alpha1.NetworkRoute{} },
	NewList:    func() client.ObjectList { return &v1alpha1.NetworkRouteList{} },
	ObservedID: func(cr *v1alpha1.NetworkRoute) string { return cr.Status.AtProvider.ID },
	External: func(c mr.Connection) managed.TypedExternalClient[*v1alpha1.NetworkRoute] {
		return &external{teamnet: c.Cloudflare, conn: c}
	},
	References: func(cr *v1alpha1.NetworkRoute) []*string {
		p := cr.Spec.ForProvider
		return []*string{mr.SelectorNamespace(p.TunnelIDSelector), mr.RefNamespace(p.VirtualNetworkIDRef), mr.SelectorNamespace(p.VirtualNetworkIDSelector)}
	},
	TunnelRefs: func(cr *v1alpha1.NetworkRoute) []*xpv2.NamespacedReference {
		return []*xpv2.NamespacedReference{cr.Spec.ForProvider.TunnelIDRef}
	},
	TunnelIDs: func(cr *v1alpha1.NetworkRoute) []string {
		return []string{ptr.Deref(cr.Spec.ForProvider.TunnelID, "")}
	},
	VirtualNetworkIDs: func(cr *v1alpha1.NetworkRoute) []string {
		return []string{ptr.Deref(cr.Spec.ForProvider.VirtualNetworkID, "")}
	},
	Networks: func(cr *v1alpha1.NetworkRoute) []string { return []string{cr.Spec.ForProvider.Network} },
}

// Setup adds the NetworkRoute controller.
func Setup(mgr ctrl.Manager, o controller.Options, s mr.Settings) error {
	return mr.Setup(mgr, o, s, kind)
}

// SetupGated adds the NetworkRoute controller once its CRD is established.
func SetupGated(mgr ctrl.Manager, o controller.Options, s mr.Settings) error {
	return mr.SetupGated(mgr, o, s, kind)
}

type external struct {
	teamnet cloudflare.TeamnetAPI
	// conn gives the owner ID of the marker in a route's comment.
	conn mr.Connection
}

func (e *external) identity(cr *v1alpha1.NetworkRoute) ownership.Identity {
	return e.conn.Identity(v1alpha1.NetworkRouteKind, cr)
}

func (e *external) Disconnect(context.Context) error { return nil }

// virtualNetwork is the virtual network the spec names, or the account's
// default.
func (e *external) virtualNetwork(ctx context.Context, p v1alpha1.NetworkRouteParameters) (string, error) {
	if id := ptr.Deref(p.VirtualNetworkID, ""); id != "" {
		return id, nil
	}
	vns, err := e.teamnet.ListVirtualNetworks(ctx)
	if err != nil {
		return "", errors.Wrap(err, "cannot look up the account's default virtual network")
	}
	for _, v := range vns {
		if v.IsDefaultNetwork {
			return v.ID, nil
		}
	}
	return "", errors.New("the account has no default virtual network: set spec.forProvider.virtualNetworkId")
}

// find looks up the live route for the network in its virtual network (its
// natural key) and takes it only with proof that this resource made it
// (see claim.Network). now: from Cloudflare as it is now, not the last poll's
// snapshot, for a create.
func (e *external) find(ctx context.Context, cr *v1alpha1.NetworkRoute, now bool) (*cloudflare.CIDRRoute, error) {
	vnet, err := e.virtualNetwork(ctx, cr.Spec.ForProvider)
	if err != nil {
		return nil, err
	}
	rs, err := e.routesIn(ctx, vnet, now)
	if err != nil {
		return nil, err
	}
	return claim.Network(cloudflare.NormalizeNetwork(cr.Spec.ForProvider.Network), "", rs, e.identity(cr))
}

func (e *external) routesIn(ctx context.Context, vnet string, now bool) ([]cloudflare.CIDRRoute, error) {
	f := cloudflare.CIDRRouteFilter{VirtualNetworkID: vnet}
	list := e.teamnet.ListCIDRRoutes
	if now {
		list = e.teamnet.ListCIDRRoutesNow
	}
	rs, err := list(ctx, f)
	return rs, errors.Wrap(err, "cannot list the routes of the virtual network")
}

func tunnelID(cr *v1alpha1.NetworkRoute) (string, error) {
	id := ptr.Deref(cr.Spec.ForProvider.TunnelID, "")
	if id == "" {
		return "", errors.New("spec.forProvider.tunnelId is not set: set it, or a tunnelIdRef/tunnelIdSelector to a Tunnel that has been created")
	}
	return id, nil
}

func (e *external) Observe(ctx context.Context, cr *v1alpha1.NetworkRoute) (managed.ExternalObservation, error) {
	if _, err := tunnelID(cr); err != nil && !meta.WasDeleted(cr) {
		// Deleting needs only the route's ID (references are not resolved
		// during deletion: one cleared by a change must not strand it).
		return managed.ExternalObservation{}, err
	}
	if err := e.withinNamespaceShare(ctx, cr); err != nil && !meta.WasDeleted(cr) {
		// Deleting what it made only ever routes less.
		return managed.ExternalObservation{}, err
	}
	r, adopted, err := mr.Locate(ctx, cr, mr.Lookup[cloudflare.CIDRRoute]{
		Get:     e.teamnet.GetCIDRRoute,
		Find:    func(ctx context.Context) (*cloudflare.CIDRRoute, error) { return e.find(ctx, cr, false) },
		ID:      func(r *cloudflare.CIDRRoute) string { return r.ID },
		Deleted: (*cloudflare.CIDRRoute).Deleted,
	})
	if conflict := (&claim.ConflictError{}); errors.As(err, &conflict) && meta.WasDeleted(cr) {
		// Never ours: nothing to delete, let go.
		return managed.ExternalObservation{ResourceExists: false}, nil
	}
	if err != nil || r == nil {
		return managed.ExternalObservation{ResourceExists: false}, errors.Wrap(err, "cannot observe network route")
	}

	cr.SetConditions(xpv2.Available())
	cr.Status.AtProvider = v1alpha1.NetworkRouteObservation{
		ID: r.ID, Network: r.Network, TunnelID: r.TunnelID, TunnelName: r.TunnelName,
		VirtualNetworkID: r.VirtualNetworkID, VirtualNetworkName: r.VirtualNetworkName, CreatedAt: mr.Time(&r.CreatedAt),
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

// withinNamespaceShare refuses cr, when its provider config lists no
// allowed networks, if the namespace's older routes through the same
// config already route so much that cr would take the namespace beyond
// what its routes may route together (clients.Config.CheckNamespaceNetworks).
func (e *external) withinNamespaceShare(ctx context.Context, cr *v1alpha1.NetworkRoute) error {
	if len(e.conn.Config.Allow.Networks) != 0 {
		return nil
	}
	l := &v1alpha1.NetworkRouteList{}
	if err := e.conn.Kube.List(ctx, l, client.InNamespace(cr.GetNamespace())); err != nil {
		return errors.Wrap(err, "cannot list the namespace's NetworkRoutes to bound what they route together")
	}
	return e.conn.Config.CheckNamespaceNetworks(shareOf(cr), Siblings(cr, l.Items))
}

// Siblings are the routes of items that share cr's routing budget: of its
// namespace, through the same provider config, and not being deleted.
func Siblings(cr *v1alpha1.NetworkRoute, items []v1alpha1.NetworkRoute) []networks.Route {
	ref := ptr.Deref(cr.GetProviderConfigReference(), xpv2.ProviderConfigReference{})
	out := make([]networks.Route, 0, len(items))
	for i := range items {
		o := &items[i]
		if o.GetNamespace() != cr.GetNamespace() || meta.WasDeleted(o) || ptr.Deref(o.GetProviderConfigReference(), xpv2.ProviderConfigReference{}) != ref {
			continue
		}
		out = append(out, shareOf(o))
	}
	return out
}

func shareOf(cr *v1alpha1.NetworkRoute) networks.Route {
	return networks.Route{Name: cr.GetName(), Network: cr.Spec.ForProvider.Network, Created: cr.GetCreationTimestamp().Time}
}

// LateInitialize fills an unset comment with the user part of Cloudflare's,
// never the ownership marker. An unset virtual network stays unset: the
// route went to the account's default when it was made (status says
// which), and a raw ID in the spec would be checked as the resource's own
// choice (a default another namespace's VirtualNetwork manages would then
// be refused).
func LateInitialize(p *v1alpha1.NetworkRouteParameters, r *cloudflare.CIDRRoute) bool {
	if p.Comment == nil {
		user, _, _ := ownership.Split(r.Comment)
		p.Comment = ptr.To(user)
		return true
	}
	return false
}

// Diff compares the desired route with Cloudflare's, networks masked; ""
// means up to date. A route without mark (imported) differs, so the next
// update marks it.
func Diff(p v1alpha1.NetworkRouteParameters, r *cloudflare.CIDRRoute, mark ownership.Mark) string {
	var d []string
	if n := cloudflare.NormalizeNetwork(p.Network); n != cloudflare.NormalizeNetwork(r.Network) {
		d = append(d, fmt.Sprintf("network: %q in Cloudflare, %q desired", r.Network, n))
	}
	if id := ptr.Deref(p.TunnelID, ""); id != r.TunnelID {
		d = append(d, fmt.Sprintf("tunnelId: %q in Cloudflare, %q desired", r.TunnelID, id))
	}
	if id := ptr.Deref(p.VirtualNetworkID, ""); id != "" && id != r.VirtualNetworkID {
		d = append(d, fmt.Sprintf("virtualNetworkId: %q in Cloudflare, %q desired", r.VirtualNetworkID, id))
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
func input(p v1alpha1.NetworkRouteParameters, mark ownership.Mark) cloudflare.CIDRRouteInput {
	return cloudflare.CIDRRouteInput{
		Network: cloudflare.NormalizeNetwork(p.Network), TunnelID: ptr.Deref(p.TunnelID, ""),
		VirtualNetworkID: ptr.Deref(p.VirtualNetworkID, ""), Comment: ownership.Comment(ptr.Deref(p.Comment, ""), mark),
	}
}

// Create checks Cloudflare as it is now (a route for the network, or one
// overlapping it, may have been made since the last poll, or this
// resource's route deleted) and creates the route in the virtual network it
// checked, named explicitly: the account's default may move meanwhile.
func (e *external) Create(ctx context.Context, cr *v1alpha1.NetworkRoute) (managed.ExternalCreation, error) {
	if _, err := tunnelID(cr); err != nil {
		return managed.ExternalCreation{}, err
	}
	r, err := e.find(ctx, cr, true)
	if err == nil && r == nil {
		in := input(cr.Spec.ForProvider, e.identity(cr).Mark())
		if in.VirtualNetworkID, err = e.virtualNetwork(ctx, cr.Spec.ForProvider); err != nil {
			return managed.ExternalCreation{}, err
		}
		r, err = e.teamnet.CreateCIDRRoute(ctx, in)
		if cloudflare.IsAlreadyExists(err) {
			// Ours from a create whose result was lost, or a conflict.
			if r, err = e.find(ctx, cr, true); err == nil && r == nil {
				err = errors.New("Cloudflare reports the network as routed in this virtual network but lists no live route for it")
			}
		} else if err == nil {
			err = e.confirm(ctx, cr, r, time.Now())
		}
	}
	if err != nil {
		return managed.ExternalCreation{}, errors.Wrap(err, "cannot create network route")
	}
	meta.SetExternalName(cr, r.ID)
	return managed.ExternalCreation{}, nil
}

// confirm checks the route just created against the routes of its virtual
// network as listed after the create returned (created), and deletes it
// again when one that was there first forbids it (claim.Confirm): the
// check before the create read a list up to FreshFor old, and a route made
// in the meantime — elsewhere, or by a moment's race — must not lose
// addresses to this one.
func (e *external) confirm(ctx context.Context, cr *v1alpha1.NetworkRoute, r *cloudflare.CIDRRoute, created time.Time) error {
	rs, err := e.teamnet.ListCIDRRoutesSince(ctx, cloudflare.CIDRRouteFilter{VirtualNetworkID: r.VirtualNetworkID}, created)
	if err != nil {
		return errors.Wrapf(err, "cannot confirm network route %s against the routes made meanwhile; deletion will retry it", r.ID)
	}
	conflict := claim.Confirm(*r, rs, e.identity(cr))
	if conflict == nil {
		return nil
	}
	if err := e.teamnet.DeleteCIDRRoute(ctx, r.ID); err != nil && !cloudflare.IsNotFound(err) {
		return errors.Wrapf(err, "%s; and cannot delete route %s just created for it", conflict, r.ID)
	}
	return conflict
}

// Update changes the route in place. A route moved to another network or
// virtual network is checked for overlaps first, as a create is; one that
// stays where it is is not (an overlapping route made since is not a reason
// to stop correcting its tunnel or comment).
func (e *external) Update(ctx context.Context, cr *v1alpha1.NetworkRoute) (managed.ExternalUpdate, error) {
	id := meta.GetExternalName(cr)
	if moves(cr) {
		if err := e.checkMove(ctx, cr, id); err != nil {
			return managed.ExternalUpdate{}, err
		}
	}
	_, err := e.teamnet.UpdateCIDRRoute(ctx, id, input(cr.Spec.ForProvider, e.identity(cr).Mark()))
	return managed.ExternalUpdate{}, errors.Wrap(err, "cannot update network route")
}

// moves says whether the spec asks for another network or virtual network
// than Cloudflare's (as last observed).
func moves(cr *v1alpha1.NetworkRoute) bool {
	p, o := cr.Spec.ForProvider, cr.Status.AtProvider
	vnet := ptr.Deref(p.VirtualNetworkID, "")
	return cloudflare.NormalizeNetwork(p.Network) != cloudflare.NormalizeNetwork(o.Network) || (vnet != "" && vnet != o.VirtualNetworkID)
}

// checkMove refuses to move route id onto a network or virtual network
// that another route holds or overlaps (see claim.Network), as Cloudflare is now.
func (e *external) checkMove(ctx context.Context, cr *v1alpha1.NetworkRoute, id string) error {
	vnet, err := e.virtualNetwork(ctx, cr.Spec.ForProvider)
	if err != nil {
		return err
	}
	rs, err := e.routesIn(ctx, vnet, true)
	if err != nil {
		return err
	}
	_, err = claim.Network(cloudflare.NormalizeNetwork(cr.Spec.ForProvider.Network), id, rs, e.identity(cr))
	return err
}

func (e *external) Delete(ctx context.Context, cr *v1alpha1.NetworkRoute) (managed.ExternalDelete, error) {
	err := e.teamnet.DeleteCIDRRoute(ctx, meta.GetExternalName(cr))
	if cloudflare.IsNotFound(err) {
		return managed.ExternalDelete{}, nil
	}
	return managed.ExternalDelete{}, errors.Wrap(err, "cannot delete network route")
}
