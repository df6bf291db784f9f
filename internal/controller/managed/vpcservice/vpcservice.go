// Package vpcservice reconciles VPCService managed resources with Workers
// VPC directory services.
package vpcservice

import (
	"context"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/connectivity/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/mr"
)

var kind = mr.Kind[*v1alpha1.VPCService]{
	GVK:     v1alpha1.VPCServiceGroupVersionKind,
	NewObj:  func() *v1alpha1.VPCService { return &v1alpha1.VPCService{} },
	NewList: func() client.ObjectList { return &v1alpha1.VPCServiceList{} },
	External: func(c mr.Connection) managed.TypedExternalClient[*v1alpha1.VPCService] {
		return &external{services: c.Cloudflare}
	},
	References: references,
	TunnelRefs: tunnelRefs,
	TunnelIDs:  tunnelIDs,
}

// tunnelIDs are the tunnels the service reaches its host through.
func tunnelIDs(cr *v1alpha1.VPCService) []string {
	var ids []string
	if n := cr.Spec.ForProvider.Host.Network; n != nil && n.TunnelID != nil {
		ids = append(ids, *n.TunnelID)
	}
	if n := cr.Spec.ForProvider.Host.ResolverNetwork; n != nil && n.TunnelID != nil {
		ids = append(ids, *n.TunnelID)
	}
	return ids
}

// references lists the namespaces named by the service's tunnel selectors,
// so that mr refuses the ones pointing at other namespaces.
func references(cr *v1alpha1.VPCService) []*string {
	var ns []*string
	if n := cr.Spec.ForProvider.Host.Network; n != nil {
		ns = append(ns, mr.SelectorNamespace(n.TunnelIDSelector))
	}
	if n := cr.Spec.ForProvider.Host.ResolverNetwork; n != nil {
		ns = append(ns, mr.SelectorNamespace(n.TunnelIDSelector))
	}
	return ns
}

// tunnelRefs are the service's tunnel references: another namespace's only
// when its CloudflareTunnel is shared with this one (mr decides).
func tunnelRefs(cr *v1alpha1.VPCService) []*xpv2.NamespacedReference {
	var refs []*xpv2.NamespacedReference
	if n := cr.Spec.ForProvider.Host.Network; n != nil {
		refs = append(refs, n.TunnelIDRef)
	}
	if n := cr.Spec.ForProvider.Host.ResolverNetwork; n != nil {
		refs = append(refs, n.TunnelIDRef)
	}
	return refs
}

// Setup adds the VPCService controller.
func Setup(mgr ctrl.Manager, o controller.Options, s mr.Settings) error {
	return mr.Setup(mgr, o, s, kind)
}

// SetupGated adds the VPCService controller once its CRD is established.
func SetupGated(mgr ctrl.Manager, o controller.Options, s mr.Settings) error {
	return mr.SetupGated(mgr, o, s, kind)
}

type external struct {
	services cloudflare.ServicesAPI
}

func (e *external) Disconnect(context.Context) error { return nil }

// adopt finds the service with the desired name and takes it over only
// with proof that this resource made it. Names are unique in an account, so
// the name finds the service a create whose response was lost left behind;
// but one made elsewhere is found the same way, and taking it over would
// rewrite the host and tunnel that Workers bound to it reach. Services carry
// no ownership marker, so the proof is time: the service appeared after
// this resource began creating it (mr.LeftByOwnCreate), or the user said to
// adopt by name (spec.adoptByName, after a rebuild). The API has no name
// filter, so this lists every service; it only runs while the external-name
// is unknown, never in steady state.
func (e *external) adopt(ctx context.Context, cr *v1alpha1.VPCService) (*cloudflare.Service, error) {
	name := cr.Spec.ForProvider.Name
	// After a create of unknown outcome only a list sent now can show
	// whether it happened; a cached one may be older than the create.
	named, err := e.named(ctx, name, meta.ExternalCreateIncomplete(cr))
	if err != nil {
		return nil, err
	}
	switch len(named) {
	case 0:
		return nil, nil
	case 1:
		created := serviceCreated(named[0])
		if !cr.Spec.AdoptByName && !mr.LeftByOwnCreate(cr, named[0].ServiceID, created) {
			return nil, &mr.NameTakenError{Kind: "VPC service", Name: name, ID: named[0].ServiceID, Created: created}
		}
		return &named[0], nil
	default:
		return nil, errors.Errorf("%d services are named %q; set the external-name to the ID of the one to manage", len(named), name)
	}
}

// named lists the account's services called name (the API has no name
// filter).
func (e *external) named(ctx context.Context, name string, fresh bool) ([]cloudflare.Service, error) {
	list := e.services.ListServices
	if fresh {
		list = func(ctx context.Context) ([]cloudflare.Service, error) {
			return e.services.ListServicesSince(ctx, time.Now())
		}
	}
	all, err := list(ctx)
	if err != nil {
		return nil, err
	}
	var named []cloudflare.Service
	for _, s := range all {
		if s.Name == name {
			named = append(named, s)
		}
	}
	return named, nil
}

func (e *external) Observe(ctx context.Context, cr *v1alpha1.VPCService) (managed.ExternalObservation, error) {
	var (
		s       *cloudflare.Service
		err     error
		adopted bool
	)
	if id := meta.GetExternalName(cr); id == "" {
		if s, err = e.adopt(ctx, cr); err != nil {
			return managed.ExternalObservation{}, errors.Wrap(err, "cannot look for an existing service")
		}
		if s == nil {
			return managed.ExternalObservation{ResourceExists: false}, nil
		}
		meta.SetExternalName(cr, s.ServiceID)
		adopted = true
	} else {
		s, err = e.services.GetService(ctx, id)
		if cloudflare.IsNotFound(err) {
			return managed.ExternalObservation{ResourceExists: false}, nil
		}
		if err != nil {
			return managed.ExternalObservation{}, errors.Wrap(err, "cannot get service")
		}
	}

	cr.SetConditions(xpv2.Available())
	cr.Status.AtProvider = observation(s)
	// Late-initialise before diffing: what the user left unset is taken
	// from Cloudflare, so it is no difference, and the next whole-object
	// PUT sends it back instead of clearing it.
	lateInit := LateInitialize(&cr.Spec.ForProvider, *s)
	diff := Diff(cr.Spec.ForProvider, *s)
	return managed.ExternalObservation{
		ResourceExists:          true,
		ResourceUpToDate:        diff == "",
		ResourceLateInitialized: adopted || lateInit,
		Diff:                    diff,
	}, nil
}

func (e *external) Create(ctx context.Context, cr *v1alpha1.VPCService) (managed.ExternalCreation, error) {
	s, err := e.services.CreateService(ctx, ServiceFrom(cr.Spec.ForProvider))
	if cloudflare.IsAlreadyExists(err) {
		// Observe did not see it (a listing older than the service). It
		// was there before this create began, so it is not this one's.
		err = e.refused(ctx, cr)
	}
	if err != nil {
		return managed.ExternalCreation{}, errors.Wrap(err, "cannot create service")
	}
	meta.SetExternalName(cr, s.ServiceID)
	return managed.ExternalCreation{}, nil
}

// refused records which service stood in the way of a create, so that no
// later Observe takes it for what this resource's create left behind.
func (e *external) refused(ctx context.Context, cr *v1alpha1.VPCService) error {
	name := cr.Spec.ForProvider.Name
	// Cloudflare just said the name is taken: a cached list may not show
	// by what, and without its ID the refusal is not recorded.
	named, err := e.named(ctx, name, true)
	if err != nil || len(named) != 1 {
		return errors.Errorf("a VPC service named %q already exists", name)
	}
	if cr.Spec.AdoptByName {
		return errors.Errorf("a VPC service named %q already exists; adopting it by name (spec.adoptByName)", name)
	}
	return mr.CreateRefused(cr, "VPC service", name, named[0].ServiceID, serviceCreated(named[0]))
}

func (e *external) Update(ctx context.Context, cr *v1alpha1.VPCService) (managed.ExternalUpdate, error) {
	// PUT replaces the whole service; Observe has late-initialised what the
	// user left unset, so nothing Cloudflare chose is cleared.
	_, err := e.services.UpdateService(ctx, meta.GetExternalName(cr), ServiceFrom(cr.Spec.ForProvider))
	return managed.ExternalUpdate{}, errors.Wrap(err, "cannot update service")
}

func (e *external) Delete(ctx context.Context, cr *v1alpha1.VPCService) (managed.ExternalDelete, error) {
	err := e.services.DeleteService(ctx, meta.GetExternalName(cr))
	if cloudflare.IsNotFound(err) {
		// Already gone (deleted twice, or behind our back): done.
		return managed.ExternalDelete{}, nil
	}
	return managed.ExternalDelete{}, errors.Wrap(err, "cannot delete service")
}

func serviceCreated(s cloudflare.Service) time.Time {
	if s.CreatedAt == nil {
		return time.Time{}
	}
	return *s.CreatedAt
}
