// Package accessgroup reconciles AccessGroup managed resources with
// Cloudflare Access groups.
package accessgroup

import (
	"context"
	"fmt"
	"strings"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/accesspolicy/rules"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/accesspolicy/tokenuse"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/mr"
)

var kind = mr.Kind[*v1alpha1.AccessGroup]{
	GVK:     v1alpha1.AccessGroupGroupVersionKind,
	NewObj:  func() *v1alpha1.AccessGroup { return &v1alpha1.AccessGroup{} },
	NewList: func() client.ObjectList { return &v1alpha1.AccessGroupList{} },
	External: func(c mr.Connection) managed.TypedExternalClient[*v1alpha1.AccessGroup] {
		return &external{groups: c.Cloudflare, kube: c.Kube}
	},
	References: func(cr *v1alpha1.AccessGroup) []*string {
		p := cr.Spec.ForProvider
		return rules.ReferenceNamespaces(p.Include, p.Exclude, p.Require)
	},
	AccessGroupIDs: func(cr *v1alpha1.AccessGroup) []string {
		p := cr.Spec.ForProvider
		return rules.GroupIDs(p.Include, p.Exclude, p.Require)
	},
	AccessServiceTokenIDs: func(cr *v1alpha1.AccessGroup) []string {
		p := cr.Spec.ForProvider
		return rules.ServiceTokenIDs(p.Include, p.Exclude, p.Require)
	},
	ObservedID: func(cr *v1alpha1.AccessGroup) string { return cr.Status.AtProvider.ID },
	FollowReferences: func(ctx context.Context, kube client.Reader, cr *v1alpha1.AccessGroup) error {
		p := cr.Spec.ForProvider
		return tokenuse.Follow(ctx, kube, cr.GetNamespace(), p.Include, p.Exclude, p.Require)
	},
}

// Setup adds the AccessGroup controller.
func Setup(mgr ctrl.Manager, o controller.Options, s mr.Settings) error {
	return mr.Setup(mgr, o, s, kind)
}

// SetupGated adds the AccessGroup controller once its CRD is established.
func SetupGated(mgr ctrl.Manager, o controller.Options, s mr.Settings) error {
	return mr.SetupGated(mgr, o, s, kind)
}

type external struct {
	groups cloudflare.AccessGroupAPI
	// kube reads the AccessServiceTokens the rules name, to report one
	// deleted in Cloudflare.
	kube client.Reader
}

func (e *external) Disconnect(context.Context) error { return nil }

func (e *external) Observe(ctx context.Context, cr *v1alpha1.AccessGroup) (managed.ExternalObservation, error) {
	g, adopted, err := e.find(ctx, cr)
	if err != nil || g == nil {
		return managed.ExternalObservation{ResourceExists: false}, err
	}
	cr.SetConditions(xpv2.Available())
	cr.Status.AtProvider = v1alpha1.AccessGroupObservation{ID: g.ID, CreatedAt: mr.Time(&g.CreatedAt)}
	if err := e.reportTokens(ctx, cr); err != nil {
		return managed.ExternalObservation{}, err
	}
	diff := Diff(cr.Spec.ForProvider, *g)
	return managed.ExternalObservation{
		ResourceExists:          true,
		ResourceUpToDate:        diff == "",
		ResourceLateInitialized: adopted,
		Diff:                    diff,
	}, nil
}

// find is the group of the external-name, or the one a lost create left
// (mr.Locate).
func (e *external) find(ctx context.Context, cr *v1alpha1.AccessGroup) (*cloudflare.AccessGroup, bool, error) {
	return mr.Locate(ctx, cr, mr.Lookup[cloudflare.AccessGroup]{
		Get: func(ctx context.Context, id string) (*cloudflare.AccessGroup, error) {
			o, err := e.groups.GetAccessGroup(ctx, id)
			return o, errors.Wrap(err, "cannot get Access group")
		},
		Find:    func(ctx context.Context) (*cloudflare.AccessGroup, error) { return e.lost(ctx, cr) },
		ID:      func(o *cloudflare.AccessGroup) string { return o.ID },
		Deleted: func(*cloudflare.AccessGroup) bool { return false },
	})
}

// lost is the group a create of this resource whose answer was lost left
// (mr.LostCreate): group names are not unique and groups carry no
// ownership marker, so only one that appeared after the create began is
// taken; an older group of the name is someone else's and left alone.
func (e *external) lost(ctx context.Context, cr *v1alpha1.AccessGroup) (*cloudflare.AccessGroup, error) {
	name := cr.Spec.ForProvider.Name
	return mr.LostCreate[cloudflare.AccessGroup]{
		List:    e.groups.ListAccessGroups,
		Match:   func(g cloudflare.AccessGroup) bool { return g.Name == name },
		ID:      func(g cloudflare.AccessGroup) string { return g.ID },
		Created: func(g cloudflare.AccessGroup) time.Time { return g.CreatedAt },
	}.One(ctx, cr, fmt.Sprintf("groups named %q", name))
}

func (e *external) Create(ctx context.Context, cr *v1alpha1.AccessGroup) (managed.ExternalCreation, error) {
	if err := resolved(cr); err != nil {
		return managed.ExternalCreation{}, err
	}
	g, err := e.groups.CreateAccessGroup(ctx, Input(cr.Spec.ForProvider))
	if err != nil {
		return managed.ExternalCreation{}, errors.Wrap(err, "cannot create Access group")
	}
	meta.SetExternalName(cr, g.ID)
	return managed.ExternalCreation{}, nil
}

func (e *external) Update(ctx context.Context, cr *v1alpha1.AccessGroup) (managed.ExternalUpdate, error) {
	if err := resolved(cr); err != nil {
		return managed.ExternalUpdate{}, err
	}
	_, err := e.groups.UpdateAccessGroup(ctx, meta.GetExternalName(cr), Input(cr.Spec.ForProvider))
	return managed.ExternalUpdate{}, errors.Wrap(err, "cannot update Access group")
}

func (e *external) Delete(ctx context.Context, cr *v1alpha1.AccessGroup) (managed.ExternalDelete, error) {
	err := e.groups.DeleteAccessGroup(ctx, meta.GetExternalName(cr))
	if cloudflare.IsNotFound(err) {
		return managed.ExternalDelete{}, nil
	}
	return managed.ExternalDelete{}, errors.Wrap(err, "cannot delete Access group")
}

// resolved refuses a write while a rule's reference has no ID (fail
// closed: rules.UnresolvedError).
func resolved(cr *v1alpha1.AccessGroup) error {
	p := cr.Spec.ForProvider
	return rules.Resolved(p.Include, p.Exclude, p.Require)
}

// Input is the group Cloudflare is asked to hold for p.
func Input(p v1alpha1.AccessGroupParameters) cloudflare.AccessGroupInput {
	l := rules.Translate(p.Include, p.Exclude, p.Require)
	return cloudflare.AccessGroupInput{Name: p.Name, Include: l.Include, Exclude: l.Exclude, Require: l.Require}
}

// Diff describes how the group Cloudflare holds differs from p; "" when it
// is up to date.
func Diff(p v1alpha1.AccessGroupParameters, got cloudflare.AccessGroup) string {
	want := Input(p)
	var d []string
	if want.Name != got.Name {
		d = append(d, fmt.Sprintf("name: %q in Cloudflare, %q desired", got.Name, want.Name))
	}
	d = append(d, rules.Lists{Include: want.Include, Exclude: want.Exclude, Require: want.Require}.Diff(rules.Lists{Include: got.Include, Exclude: got.Exclude, Require: got.Require})...)
	return strings.Join(d, "\n")
}

// reportTokens sets the ServiceTokens condition of a group whose rules
// name service tokens (or did): a token named only through a group is the
// one Cloudflare's cleanup of inactive tokens does not spare.
func (e *external) reportTokens(ctx context.Context, cr *v1alpha1.AccessGroup) error {
	p := cr.Spec.ForProvider
	use, err := tokenuse.Of(ctx, e.kube, cr.GetNamespace(), "", p.Include, p.Exclude, p.Require)
	if err != nil {
		return err
	}
	if use.NamesTokens() || cr.GetCondition(v1alpha1.TypeServiceTokens).Reason != "" {
		cr.SetConditions(tokenuse.Condition(use))
	}
	return nil
}
