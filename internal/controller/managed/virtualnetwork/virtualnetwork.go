// Package virtualnetwork reconciles VirtualNetwork managed resources with
// Cloudflare's Zero Trust virtual networks.
package virtualnetwork

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

var kind = mr.Kind[*v1alpha1.VirtualNetwork]{
	GVK:        v1alpha1.VirtualNetworkGroupVersionKind,
	NewObj:     func() *v1alpha1.VirtualNetwork { return &v1alpha1.VirtualNetwork{} },
	NewList:    func() client.ObjectList { return &v1alpha1.VirtualNetworkList{} },
	ObservedID: func(cr *v1alpha1.VirtualNetwork) string { return cr.Status.AtProvider.ID },
	External: func(c mr.Connection) managed.TypedExternalClient[*v1alpha1.VirtualNetwork] {
		return &external{teamnet: c.Cloudflare, conn: c}
	},
}

// Setup adds the VirtualNetwork controller.
func Setup(mgr ctrl.Manager, o controller.Options, s mr.Settings) error {
	return mr.Setup(mgr, o, s, kind)
}

// SetupGated adds the VirtualNetwork controller once its CRD is established.
func SetupGated(mgr ctrl.Manager, o controller.Options, s mr.Settings) error {
	return mr.SetupGated(mgr, o, s, kind)
}

type external struct {
	teamnet cloudflare.TeamnetAPI
	conn    mr.Connection
}

// defaultClaimedByOlder names an older VirtualNetwork of this cluster that
// also asks to be the account's default. An account has one default; two
// asking for it would take it from each other on every poll, so the older
// keeps asking and the newer is told.
func (e *external) defaultClaimedByOlder(ctx context.Context, cr *v1alpha1.VirtualNetwork) (string, error) {
	l := &v1alpha1.VirtualNetworkList{}
	if err := e.conn.Kube.List(ctx, l); err != nil {
		return "", errors.Wrap(err, "cannot list VirtualNetworks")
	}
	for _, o := range l.Items {
		if o.UID == cr.UID || meta.WasDeleted(&o) || !ptr.Deref(o.Spec.ForProvider.IsDefaultNetwork, false) {
			continue
		}
		if older(&o, cr) {
			return o.Namespace + "/" + o.Name, nil
		}
	}
	return "", nil
}

func older(a, b *v1alpha1.VirtualNetwork) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	return a.Namespace+"/"+a.Name < b.Namespace+"/"+b.Name
}

func (e *external) identity(cr *v1alpha1.VirtualNetwork) ownership.Identity {
	return e.conn.Identity(v1alpha1.VirtualNetworkKind, cr)
}

func (e *external) Disconnect(context.Context) error { return nil }

// InUseError is a virtual network that Cloudflare would refuse to delete.
type InUseError struct {
	ID, Reason string
}

func (u *InUseError) Error() string {
	return fmt.Sprintf("deletion waits: virtual network %s %s; retrying", u.ID, u.Reason)
}

// DefaultClaimedError says an older VirtualNetwork also asks to be the
// account's default virtual network, and keeps it.
type DefaultClaimedError struct {
	// By is the older VirtualNetwork.
	By string
}

func (e *DefaultClaimedError) Error() string {
	return fmt.Sprintf("conflict: VirtualNetwork %s, older, also asks to be the account's default virtual network; an account has one default, so it keeps it and this one does not take it. Unset isDefaultNetwork on one of them", e.By)
}

// ConditionReason of a default another VirtualNetwork keeps: Conflict.
func (e *DefaultClaimedError) ConditionReason() xpv2.ConditionReason { return common.ReasonConflict }

// find looks up the live virtual network of the desired name (names are
// unique in an account) and takes it only with this resource's marker.
func (e *external) find(ctx context.Context, cr *v1alpha1.VirtualNetwork) (*cloudflare.VirtualNetwork, error) {
	vns, err := e.teamnet.ListVirtualNetworks(ctx)
	if err != nil {
		return nil, errors.Wrap(err, "cannot look for an existing virtual network")
	}
	id := e.identity(cr)
	for i := range vns {
		if vns[i].Name != cr.Spec.ForProvider.Name || vns[i].Deleted() {
			continue
		}
		if _, mark, _ := ownership.Split(vns[i].Comment); id.Made(mark) {
			return &vns[i], nil
		}
		return nil, &mr.NameTakenError{Kind: "virtual network", Name: vns[i].Name, ID: vns[i].ID, Created: vns[i].CreatedAt}
	}
	return nil, nil
}

func (e *external) Observe(ctx context.Context, cr *v1alpha1.VirtualNetwork) (managed.ExternalObservation, error) {
	v, adopted, err := mr.Locate(ctx, cr, mr.Lookup[cloudflare.VirtualNetwork]{
		Get:     e.teamnet.GetVirtualNetwork,
		Find:    func(ctx context.Context) (*cloudflare.VirtualNetwork, error) { return e.find(ctx, cr) },
		ID:      func(v *cloudflare.VirtualNetwork) string { return v.ID },
		Deleted: (*cloudflare.VirtualNetwork).Deleted,
	})
	if err != nil || v == nil {
		return managed.ExternalObservation{ResourceExists: false}, errors.Wrap(err, "cannot observe virtual network")
	}
	cr.SetConditions(xpv2.Available())
	takenBy, err := e.defaultTakenBy(ctx, cr.Spec.ForProvider, cr.Status.AtProvider, v)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	cr.Status.AtProvider = v1alpha1.VirtualNetworkObservation{ID: v.ID, Name: v.Name, IsDefaultNetwork: v.IsDefaultNetwork, CreatedAt: mr.Time(&v.CreatedAt), DefaultTakenBy: takenBy}
	lateInit := LateInitialize(&cr.Spec.ForProvider, v)
	diff := Diff(cr.Spec.ForProvider, v, e.identity(cr).Mark())
	return managed.ExternalObservation{
		ResourceExists:          true,
		ResourceUpToDate:        diff == "",
		ResourceLateInitialized: adopted || lateInit,
		Diff:                    diff,
	}, nil
}

// defaultTakenBy is the virtual network that took the account's default
// from this one (prev is the last observation, v Cloudflare's now): one that
// held it and lost it while still asking does not take it back, so two
// installations asking for it, or one and a hand edit, do not take it from
// each other on every poll. Asking no longer, or holding it again, forgets.
func (e *external) defaultTakenBy(ctx context.Context, p v1alpha1.VirtualNetworkParameters, prev v1alpha1.VirtualNetworkObservation, v *cloudflare.VirtualNetwork) (string, error) {
	switch {
	case !ptr.Deref(p.IsDefaultNetwork, false) || v.IsDefaultNetwork:
		return "", nil
	case prev.DefaultTakenBy != "":
		return prev.DefaultTakenBy, nil
	case !prev.IsDefaultNetwork:
		return "", nil // never held it: it may take it
	}
	vns, err := e.teamnet.ListVirtualNetworks(ctx)
	if err != nil {
		return "", errors.Wrap(err, "cannot find the account's default virtual network")
	}
	for _, o := range vns {
		if o.IsDefaultNetwork && !o.Deleted() {
			return o.ID, nil
		}
	}
	return "unknown", nil
}

// LateInitialize fills an unset comment with the user part of Cloudflare's.
func LateInitialize(p *v1alpha1.VirtualNetworkParameters, v *cloudflare.VirtualNetwork) bool {
	if p.Comment == nil {
		user, _, _ := ownership.Split(v.Comment)
		p.Comment = ptr.To(user)
		return true
	}
	return false
}

// Diff compares the desired virtual network with Cloudflare's; "" means up
// to date.
func Diff(p v1alpha1.VirtualNetworkParameters, v *cloudflare.VirtualNetwork, mark ownership.Mark) string {
	var d []string
	if p.Name != v.Name {
		d = append(d, fmt.Sprintf("name: %q in Cloudflare, %q desired", v.Name, p.Name))
	}
	user, got, _ := ownership.Split(v.Comment)
	if p.Comment != nil && *p.Comment != user {
		d = append(d, fmt.Sprintf("comment: %q in Cloudflare, %q desired", user, *p.Comment))
	}
	if p.IsDefaultNetwork != nil && *p.IsDefaultNetwork != v.IsDefaultNetwork {
		d = append(d, fmt.Sprintf("isDefaultNetwork: %t in Cloudflare, %t desired", v.IsDefaultNetwork, *p.IsDefaultNetwork))
	}
	if got != mark {
		d = append(d, fmt.Sprintf("ownership marker: %q in Cloudflare, %q desired", got, mark))
	}
	return strings.Join(d, "; ")
}

// input is the virtual network the spec asks for, with mark in its comment.
// The default flag is only ever set: an account keeps exactly one default,
// which moves when another network takes it.
func input(p v1alpha1.VirtualNetworkParameters, mark ownership.Mark) cloudflare.VirtualNetworkInput {
	in := cloudflare.VirtualNetworkInput{Name: p.Name, Comment: ownership.Comment(ptr.Deref(p.Comment, ""), mark)}
	if ptr.Deref(p.IsDefaultNetwork, false) {
		in.IsDefaultNetwork = ptr.To(true)
	}
	return in
}

func (e *external) Create(ctx context.Context, cr *v1alpha1.VirtualNetwork) (managed.ExternalCreation, error) {
	in := input(cr.Spec.ForProvider, e.identity(cr).Mark())
	if in.IsDefaultNetwork != nil {
		// Made without the flag while an older VirtualNetwork holds it, or
		// the provider config does not let it take the default; Update
		// then says why it does not take it.
		holder, err := e.defaultClaimedByOlder(ctx, cr)
		if err != nil {
			return managed.ExternalCreation{}, err
		}
		if holder != "" || e.conn.Config.CheckDefaultVirtualNetwork(cr.Spec.ForProvider.Name) != nil {
			in.IsDefaultNetwork = nil
		}
	}
	v, err := e.teamnet.CreateVirtualNetwork(ctx, in)
	if cloudflare.IsAlreadyExists(err) {
		// Ours from a create whose result was lost, or a name taken.
		if v, err = e.find(ctx, cr); err == nil && v == nil {
			err = errors.New("Cloudflare reports the name as taken but lists no live virtual network of that name")
		}
	}
	if err != nil {
		return managed.ExternalCreation{}, errors.Wrap(err, "cannot create virtual network")
	}
	meta.SetExternalName(cr, v.ID)
	return managed.ExternalCreation{}, nil
}

func (e *external) Update(ctx context.Context, cr *v1alpha1.VirtualNetwork) (managed.ExternalUpdate, error) {
	p := cr.Spec.ForProvider.IsDefaultNetwork
	if p != nil && !*p && cr.Status.AtProvider.IsDefaultNetwork {
		return managed.ExternalUpdate{}, errors.New("isDefaultNetwork is false, but this is the account's default virtual network: an account always has one default, so make another VirtualNetwork the default (isDefaultNetwork: true) and this one follows")
	}
	if by := cr.Status.AtProvider.DefaultTakenBy; ptr.Deref(p, false) && by != "" {
		return managed.ExternalUpdate{}, e.keepTheDefaultWhereItIs(ctx, cr, by)
	}
	if ptr.Deref(p, false) && !cr.Status.AtProvider.IsDefaultNetwork {
		if err := e.conn.Config.CheckDefaultVirtualNetwork(cr.Spec.ForProvider.Name); err != nil {
			return managed.ExternalUpdate{}, err
		}
		holder, err := e.defaultClaimedByOlder(ctx, cr)
		if err != nil {
			return managed.ExternalUpdate{}, err
		}
		if holder != "" {
			return managed.ExternalUpdate{}, &DefaultClaimedError{By: holder}
		}
	}
	_, err := e.teamnet.UpdateVirtualNetwork(ctx, meta.GetExternalName(cr), input(cr.Spec.ForProvider, e.identity(cr).Mark()))
	return managed.ExternalUpdate{}, errors.Wrap(err, "cannot update virtual network")
}

// keepTheDefaultWhereItIs updates what else differs, leaving the default
// with virtual network by, and says why it is not taken back.
func (e *external) keepTheDefaultWhereItIs(ctx context.Context, cr *v1alpha1.VirtualNetwork, by string) error {
	p := cr.Spec.ForProvider
	p.IsDefaultNetwork = nil
	if v, err := e.teamnet.GetVirtualNetwork(ctx, meta.GetExternalName(cr)); err != nil || Diff(p, v, e.identity(cr).Mark()) != "" {
		in := input(p, e.identity(cr).Mark())
		if _, err := e.teamnet.UpdateVirtualNetwork(ctx, meta.GetExternalName(cr), in); err != nil {
			return errors.Wrap(err, "cannot update virtual network")
		}
	}
	return errors.New(fmt.Sprintf("conflict: virtual network %s became the account's default after this one held it (another installation, or a hand edit in Cloudflare); an account has one default, so this one does not take it back on every poll. To take it back, set isDefaultNetwork to false, then to true", by))
}

// Delete deletes the virtual network once Cloudflare would agree: not while
// it is the account's default or routes use it, which it names.
func (e *external) Delete(ctx context.Context, cr *v1alpha1.VirtualNetwork) (managed.ExternalDelete, error) {
	id := meta.GetExternalName(cr)
	if err := e.deletable(ctx, cr, id); err != nil {
		return managed.ExternalDelete{}, err
	}
	err := e.teamnet.DeleteVirtualNetwork(ctx, id)
	if cloudflare.IsNotFound(err) {
		return managed.ExternalDelete{}, nil
	}
	return managed.ExternalDelete{}, errors.Wrap(err, "cannot delete virtual network")
}

func (e *external) deletable(ctx context.Context, cr *v1alpha1.VirtualNetwork, id string) error {
	if cr.Status.AtProvider.IsDefaultNetwork {
		return &InUseError{ID: id, Reason: "is the account's default; make another VirtualNetwork the default (isDefaultNetwork: true) first"}
	}
	rs, err := e.teamnet.ListCIDRRoutesNow(ctx, cloudflare.CIDRRouteFilter{VirtualNetworkID: id})
	if err != nil {
		return errors.Wrap(err, "cannot list the routes of the virtual network")
	}
	if len(rs) == 0 {
		return nil
	}
	return &InUseError{ID: id, Reason: fmt.Sprintf("is still used by %d route(s): %s; delete those routes (their NetworkRoutes) first", len(rs), cloudflare.DescribeRoutes(rs))}
}
