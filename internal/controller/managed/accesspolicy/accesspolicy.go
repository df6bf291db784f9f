// Package accesspolicy reconciles AccessPolicy managed resources with
// Cloudflare Access reusable policies.
package accesspolicy

import (
	"context"
	"fmt"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/accesspolicy/rules"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/accesspolicy/tokenuse"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/mr"
)

var kind = mr.Kind[*v1alpha1.AccessPolicy]{
	GVK:     v1alpha1.AccessPolicyGroupVersionKind,
	NewObj:  func() *v1alpha1.AccessPolicy { return &v1alpha1.AccessPolicy{} },
	NewList: func() client.ObjectList { return &v1alpha1.AccessPolicyList{} },
	External: func(c mr.Connection) managed.TypedExternalClient[*v1alpha1.AccessPolicy] {
		return &external{access: c.Cloudflare, kube: c.Kube}
	},
	References: references,
	AccessGroupIDs: func(cr *v1alpha1.AccessPolicy) []string {
		p := cr.Spec.ForProvider
		return rules.GroupIDs(p.Include, p.Exclude, p.Require)
	},
	AccessServiceTokenIDs: func(cr *v1alpha1.AccessPolicy) []string {
		p := cr.Spec.ForProvider
		return rules.ServiceTokenIDs(p.Include, p.Exclude, p.Require)
	},
	ObservedID: func(cr *v1alpha1.AccessPolicy) string { return cr.Status.AtProvider.ID },
	FollowReferences: func(ctx context.Context, kube client.Reader, cr *v1alpha1.AccessPolicy) error {
		p := cr.Spec.ForProvider
		return tokenuse.Follow(ctx, kube, cr.GetNamespace(), p.Include, p.Exclude, p.Require)
	},
}

// Setup adds the AccessPolicy controller.
func Setup(mgr ctrl.Manager, o controller.Options, s mr.Settings) error {
	return mr.Setup(mgr, o, s, kind)
}

// SetupGated adds the AccessPolicy controller once its CRD is established.
func SetupGated(mgr ctrl.Manager, o controller.Options, s mr.Settings) error {
	return mr.SetupGated(mgr, o, s, kind)
}

type external struct {
	access cloudflare.AccessAPI
	kube   client.Reader
}

func (e *external) Disconnect(context.Context) error { return nil }

// lost is the policy a create of this resource whose answer was lost
// left (mr.LostCreate): policy names are not unique and policies carry no
// ownership marker, so only one that appeared after the create began is
// taken.
func (e *external) lost(ctx context.Context, cr *v1alpha1.AccessPolicy) (*cloudflare.AccessPolicy, error) {
	name := cr.Spec.ForProvider.Name
	return mr.LostCreate[cloudflare.AccessPolicy]{
		List:    e.access.ListAccessPolicies,
		Match:   func(p cloudflare.AccessPolicy) bool { return p.Name == name },
		ID:      func(p cloudflare.AccessPolicy) string { return p.ID },
		Created: func(p cloudflare.AccessPolicy) time.Time { return p.CreatedAt },
	}.One(ctx, cr, fmt.Sprintf("policies named %q", name))
}

func (e *external) Observe(ctx context.Context, cr *v1alpha1.AccessPolicy) (managed.ExternalObservation, error) {
	p, adopted, err := e.find(ctx, cr)
	if err != nil || p == nil {
		return managed.ExternalObservation{ResourceExists: false}, err
	}
	cr.SetConditions(xpv2.Available())
	cr.Status.AtProvider = v1alpha1.AccessPolicyObservation{ID: p.ID, CreatedAt: timeOf(p)}
	if err := e.reportTokens(ctx, cr); err != nil {
		return managed.ExternalObservation{}, err
	}
	diff := Diff(cr.Spec.ForProvider, *p)
	return managed.ExternalObservation{
		ResourceExists:          true,
		ResourceUpToDate:        diff == "",
		ResourceLateInitialized: adopted,
		Diff:                    diff,
	}, nil
}

// find is the policy of the external-name, or the one a lost create left
// (mr.Locate).
func (e *external) find(ctx context.Context, cr *v1alpha1.AccessPolicy) (*cloudflare.AccessPolicy, bool, error) {
	return mr.Locate(ctx, cr, mr.Lookup[cloudflare.AccessPolicy]{
		Get: func(ctx context.Context, id string) (*cloudflare.AccessPolicy, error) {
			o, err := e.access.GetAccessPolicy(ctx, id)
			return o, errors.Wrap(err, "cannot get Access policy")
		},
		Find:    func(ctx context.Context) (*cloudflare.AccessPolicy, error) { return e.lost(ctx, cr) },
		ID:      func(o *cloudflare.AccessPolicy) string { return o.ID },
		Deleted: func(*cloudflare.AccessPolicy) bool { return false },
	})
}

// reportTokens sets the ServiceTokens condition of a policy whose rules
// name service tokens (or did): a token deleted in Cloudflare, and for an
// Allow policy the organization's strict service token authentication,
// which it reads and shows in status.
func (e *external) reportTokens(ctx context.Context, cr *v1alpha1.AccessPolicy) error {
	p := cr.Spec.ForProvider
	use, err := tokenuse.Of(ctx, e.kube, cr.GetNamespace(), p.Decision, p.Include, p.Exclude, p.Require)
	if err != nil {
		return err
	}
	if !use.NamesTokens() && cr.GetCondition(v1alpha1.TypeServiceTokens).Reason == "" {
		return nil
	}
	if use.NamesTokens() && p.Decision == "allow" {
		org, err := e.access.GetAccessOrganization(ctx)
		if err != nil {
			return errors.Wrap(err, "cannot read the Access organization's strict service token authentication")
		}
		use.Strict = org.StrictServiceTokenAuth
		cr.Status.AtProvider.StrictServiceTokenAuth = org.StrictServiceTokenAuth
	}
	cr.SetConditions(tokenuse.Condition(use))
	return nil
}

func (e *external) Create(ctx context.Context, cr *v1alpha1.AccessPolicy) (managed.ExternalCreation, error) {
	if err := resolved(cr); err != nil {
		return managed.ExternalCreation{}, err
	}
	p, err := e.access.CreateAccessPolicy(ctx, Input(cr.Spec.ForProvider))
	if err != nil {
		return managed.ExternalCreation{}, errors.Wrap(err, "cannot create Access policy")
	}
	meta.SetExternalName(cr, p.ID)
	return managed.ExternalCreation{}, nil
}

func (e *external) Update(ctx context.Context, cr *v1alpha1.AccessPolicy) (managed.ExternalUpdate, error) {
	if err := resolved(cr); err != nil {
		return managed.ExternalUpdate{}, err
	}
	_, err := e.access.UpdateAccessPolicy(ctx, meta.GetExternalName(cr), Input(cr.Spec.ForProvider))
	return managed.ExternalUpdate{}, errors.Wrap(err, "cannot update Access policy")
}

// Delete waits while AccessApplications use the policy (PolicyInUse, see
// Users): Cloudflare would refuse the deletion anyway, and the names tell
// the user what to change. A policy still linked by applications no
// AccessApplication here accounts for is refused by Cloudflare, and
// reported the same way.
func (e *external) Delete(ctx context.Context, cr *v1alpha1.AccessPolicy) (managed.ExternalDelete, error) {
	id := meta.GetExternalName(cr)
	use, err := Users(ctx, e.kube, cr, id)
	if err != nil {
		return managed.ExternalDelete{}, err
	}
	if !use.Empty() {
		return managed.ExternalDelete{}, &InUseError{ID: id, Use: use}
	}
	err = e.access.DeleteAccessPolicy(ctx, id)
	switch {
	case cloudflare.IsNotFound(err):
		return managed.ExternalDelete{}, nil
	case cloudflare.IsConflict(err):
		return managed.ExternalDelete{}, &InUseError{ID: id, Use: Use{Elsewhere: true}}
	}
	return managed.ExternalDelete{}, errors.Wrap(err, "cannot delete Access policy")
}

// resolved refuses a write while a rule's group or service token
// reference has no ID (fail closed: rules.UnresolvedError).
func resolved(cr *v1alpha1.AccessPolicy) error {
	p := cr.Spec.ForProvider
	return rules.Resolved(p.Include, p.Exclude, p.Require)
}

// references lists the namespaces named by the rules' group and service
// token references and selectors, so that mr refuses the ones pointing at
// other namespaces.
func references(cr *v1alpha1.AccessPolicy) []*string {
	p := cr.Spec.ForProvider
	return rules.ReferenceNamespaces(p.Include, p.Exclude, p.Require)
}

func timeOf(p *cloudflare.AccessPolicy) *metav1.Time {
	if p.CreatedAt.IsZero() {
		return nil
	}
	t := metav1.NewTime(p.CreatedAt)
	return &t
}
