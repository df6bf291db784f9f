// Package accessapplication reconciles AccessApplication managed resources
// with Cloudflare Access self-hosted applications.
package accessapplication

import (
	"context"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/mr"
)

var kind = mr.Kind[*v1alpha1.AccessApplication]{
	GVK:     v1alpha1.AccessApplicationGroupVersionKind,
	NewObj:  func() *v1alpha1.AccessApplication { return &v1alpha1.AccessApplication{} },
	NewList: func() client.ObjectList { return &v1alpha1.AccessApplicationList{} },
	External: func(c mr.Connection) managed.TypedExternalClient[*v1alpha1.AccessApplication] {
		return &external{access: c.Cloudflare}
	},
	References:       references,
	AccessPolicyRefs: policyRefs,
	AccessPolicyIDs:  usedPolicyIDs,
	Hostnames:        hostnames,
	EdgeHostnames:    hostnames,
	ObservedID:       func(cr *v1alpha1.AccessApplication) string { return cr.Status.AtProvider.ID },
}

// references lists the namespaces named by the policy selectors, so that
// mr refuses the ones pointing at other namespaces.
func references(cr *v1alpha1.AccessApplication) []*string {
	var ns []*string
	for _, p := range cr.Spec.ForProvider.Policies {
		ns = append(ns, mr.SelectorNamespace(p.PolicyIDSelector))
	}
	return ns
}

// policyRefs are the application's references to AccessPolicies, which
// may name a policy another namespace shares with this one.
func policyRefs(cr *v1alpha1.AccessApplication) []*xpv2.NamespacedReference {
	var refs []*xpv2.NamespacedReference
	for _, p := range cr.Spec.ForProvider.Policies {
		refs = append(refs, p.PolicyIDRef)
	}
	return refs
}

// usedPolicyIDs are the policies the application uses, so one another
// namespace manages and does not share is refused.
func usedPolicyIDs(cr *v1alpha1.AccessApplication) []string {
	var ids []string
	for _, p := range cr.Spec.ForProvider.Policies {
		if p.PolicyID != nil {
			ids = append(ids, *p.PolicyID)
		}
	}
	return ids
}

// hostnames are the hostnames the application guards, for the provider
// config's allowed hostname suffixes.
func hostnames(cr *v1alpha1.AccessApplication) []string {
	var out []string
	for _, d := range Destinations(cr.Spec.ForProvider) {
		host, _, _ := strings.Cut(d.URI, "/")
		out = append(out, host)
	}
	return out
}

// Setup adds the AccessApplication controller.
func Setup(mgr ctrl.Manager, o controller.Options, s mr.Settings) error {
	return mr.Setup(mgr, o, s, kind)
}

// SetupGated adds the AccessApplication controller once its CRD is
// established.
func SetupGated(mgr ctrl.Manager, o controller.Options, s mr.Settings) error {
	return mr.SetupGated(mgr, o, s, kind)
}

type external struct {
	access cloudflare.AccessAPI
}

func (e *external) Disconnect(context.Context) error { return nil }

func (e *external) Observe(ctx context.Context, cr *v1alpha1.AccessApplication) (managed.ExternalObservation, error) {
	app, adopted, err := e.find(ctx, cr)
	if err != nil || app == nil {
		return managed.ExternalObservation{ResourceExists: false}, err
	}
	team, err := e.teamDomain(ctx, cr)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	cr.Status.AtProvider = observation(app, team)
	cr.SetConditions(xpv2.Available())
	diff := Diff(cr.Spec.ForProvider, *app)
	return managed.ExternalObservation{
		ResourceExists:          true,
		ResourceUpToDate:        diff == "",
		ResourceLateInitialized: adopted,
		Diff:                    diff,
	}, nil
}

// teamDomain is the account's Access domain. It changes only when the
// organization is renamed, so it is read once and kept in status.
func (e *external) teamDomain(ctx context.Context, cr *v1alpha1.AccessApplication) (string, error) {
	if d := cr.Status.AtProvider.TeamDomain; d != "" {
		return d, nil
	}
	org, err := e.access.GetAccessOrganization(ctx)
	if err != nil {
		return "", errors.Wrap(err, "cannot read the account's Access organization (is Zero Trust set up in this account?)")
	}
	if org.AuthDomain == "" {
		return "", errors.New("the account's Access organization has no team domain: set one up in Zero Trust")
	}
	return org.AuthDomain, nil
}

// find is the application of the external-name, or the one a lost create
// left.
func (e *external) find(ctx context.Context, cr *v1alpha1.AccessApplication) (*cloudflare.AccessApplication, bool, error) {
	id := meta.GetExternalName(cr)
	if id == "" {
		app, err := e.lost(ctx, cr)
		if app != nil {
			meta.SetExternalName(cr, app.ID)
		}
		return app, app != nil, err
	}
	app, err := e.access.GetAccessApplication(ctx, id)
	if cloudflare.IsNotFound(err) {
		// Deleted behind our back: made again, with a new audience tag,
		// which the layers above publish before anything else changes.
		return nil, false, nil
	}
	return app, false, errors.Wrap(err, "cannot get Access application")
}

// lost is the application a create of this resource whose answer was
// lost left: one of its name and domain that appeared after the create
// began (mr.LostCreate). Applications carry no ownership marker, so
// nothing older is taken.
func (e *external) lost(ctx context.Context, cr *v1alpha1.AccessApplication) (*cloudflare.AccessApplication, error) {
	p := cr.Spec.ForProvider
	return mr.LostCreate[cloudflare.AccessApplication]{
		List: e.access.ListAccessApplications,
		Match: func(a cloudflare.AccessApplication) bool {
			return a.Name == p.Name && strings.EqualFold(a.Domain, p.Domain)
		},
		ID:      func(a cloudflare.AccessApplication) string { return a.ID },
		Created: func(a cloudflare.AccessApplication) time.Time { return a.CreatedAt },
	}.One(ctx, cr, "applications for "+p.Domain)
}

func (e *external) Create(ctx context.Context, cr *v1alpha1.AccessApplication) (managed.ExternalCreation, error) {
	if err := resolved(cr); err != nil {
		return managed.ExternalCreation{}, err
	}
	app, err := e.access.CreateAccessApplication(ctx, Input(cr.Spec.ForProvider))
	if cloudflare.IsConflict(err) || cloudflare.IsAlreadyExists(err) {
		// Another application already guards one of its hostnames.
		err = e.taken(ctx, cr, err)
	}
	if err != nil {
		return managed.ExternalCreation{}, errors.Wrap(err, "cannot create Access application")
	}
	meta.SetExternalName(cr, app.ID)
	return managed.ExternalCreation{}, nil
}

// taken names the application that holds one of the hostnames a create
// was refused for: it is someone else's (Observe would have found one this
// resource made), never adopted, changed or deleted.
func (e *external) taken(ctx context.Context, cr *v1alpha1.AccessApplication, refusal error) error {
	all, err := e.access.ListAccessApplications(ctx)
	if err != nil {
		return refusal
	}
	want := map[string]bool{}
	for _, d := range Destinations(cr.Spec.ForProvider) {
		want[strings.ToLower(d.URI)] = true
	}
	for _, a := range all {
		for _, d := range append([]cloudflare.AccessDestination{{URI: a.Domain}}, a.Destinations...) {
			if want[strings.ToLower(d.URI)] {
				// Recorded on the resource (mr.CreateRefused): an
				// application made just before this create began is
				// within LeftByOwnCreate's clock-skew window, and the
				// next Observe, looking for what a lost create left,
				// must not take it for this resource's.
				return mr.CreateRefused(cr, "Access application", d.URI, a.ID, a.CreatedAt)
			}
		}
	}
	return refusal
}

func (e *external) Update(ctx context.Context, cr *v1alpha1.AccessApplication) (managed.ExternalUpdate, error) {
	if err := resolved(cr); err != nil {
		return managed.ExternalUpdate{}, err
	}
	_, err := e.access.UpdateAccessApplication(ctx, meta.GetExternalName(cr), Input(cr.Spec.ForProvider))
	return managed.ExternalUpdate{}, errors.Wrap(err, "cannot update Access application")
}

// resolved refuses a write while a policy has no ID: an application
// written without one of its policies would let in whom that policy keeps
// out, or keep out whom it lets in.
func resolved(cr *v1alpha1.AccessApplication) error {
	if u := Unresolved(cr.Spec.ForProvider); len(u) > 0 {
		return errors.Errorf("%s: no policy ID yet; set policyId, or wait for the AccessPolicy referenced to be created", strings.Join(u, ", "))
	}
	if r := Repeated(cr.Spec.ForProvider); r != "" {
		return errors.New(r)
	}
	return nil
}

func (e *external) Delete(ctx context.Context, cr *v1alpha1.AccessApplication) (managed.ExternalDelete, error) {
	err := e.access.DeleteAccessApplication(ctx, meta.GetExternalName(cr))
	if cloudflare.IsNotFound(err) {
		return managed.ExternalDelete{}, nil
	}
	return managed.ExternalDelete{}, errors.Wrap(err, "cannot delete Access application")
}

func observation(app *cloudflare.AccessApplication, team string) v1alpha1.AccessApplicationObservation {
	o := v1alpha1.AccessApplicationObservation{ID: app.ID, AUD: app.AUD, TeamDomain: team, Domain: app.Domain, PolicyIDs: policyIDs(app.Policies)}
	if !app.CreatedAt.IsZero() {
		t := metav1.NewTime(app.CreatedAt)
		o.CreatedAt = &t
	}
	return o
}
