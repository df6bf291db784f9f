package service

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	connv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/connectivity/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare/hostname"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/service/translate"
)

// Exposed objects: what a Service asks for by name (hostname routes, VPC
// services, public hostnames), as opposed to its cluster IPs' routes.
type exposed struct {
	objs []source.Owned
	// keepExisting: delete nothing that is no longer desired (bad input)...
	keepExisting bool
	// ...but the private routes of these hostnames, yielded to the holder
	// of their public claim: bad input must not keep someone else's route.
	yielded map[string]string
}

// drops says whether m goes even when existing objects are kept.
func (d exposed) drops(m source.Owned) bool {
	rt, ok := m.(*ztv1alpha1.HostnameRoute)
	if !ok {
		return false
	}
	_, y := d.yielded[hostname.Normalize(rt.Spec.ForProvider.Hostname)]
	return y
}

// desiredExposure is what to converge to: with a problem in the Service's
// annotations, the valid routes and VPC services are made but nothing is
// deleted, and public hostnames are left as they are (a hostname is
// published whole, or keeps what it had), as for an Ingress. No private
// route is made for a hostname whose public claim lost (yielded, see
// source.Yielded): whoever holds the hostname holds its route; the
// PublicHostname stays, waiting in line.
func desiredExposure(res translate.Exposure, yielded map[string]string) exposed {
	d := exposed{keepExisting: len(res.Problems) > 0, yielded: yielded}
	for _, o := range res.Routes {
		if _, y := yielded[hostname.Normalize(o.Spec.ForProvider.Hostname)]; !y {
			d.objs = append(d.objs, o)
		}
	}
	for _, o := range res.Services {
		d.objs = append(d.objs, o)
	}
	if !d.keepExisting {
		for _, o := range res.Published {
			d.objs = append(d.objs, o)
		}
	}
	return d
}

// ownedExposure lists what was made for the Service called svcName: by
// label, and controlled by a Service of that name (this one, or one deleted
// before it, whose objects this one takes over or removes).
func (r *Reconciler) ownedExposure(ctx context.Context, ns, svcName string) ([]source.Owned, error) {
	sel := client.MatchingLabels{publish.LabelService: publish.LabelValue(svcName)}
	var out []source.Owned
	for _, l := range []client.ObjectList{&ztv1alpha1.HostnameRouteList{}, &connv1alpha1.VPCServiceList{}} {
		if err := r.kube.List(ctx, l, client.InNamespace(ns), sel); err != nil {
			return nil, errors.Wrap(err, "cannot list managed resources")
		}
		for _, m := range l.(resource.ManagedList).GetItems() {
			if controlledByService(m, svcName) {
				out = append(out, m)
			}
		}
	}
	phs := &v1alpha1.PublicHostnameList{}
	if err := r.kube.List(ctx, phs, client.InNamespace(ns), sel); err != nil {
		return nil, errors.Wrap(err, "cannot list PublicHostnames")
	}
	for i := range phs.Items {
		if controlledByService(&phs.Items[i], svcName) {
			out = append(out, &phs.Items[i])
		}
	}
	return out, nil
}

// yielded are the hostnames whose private route the Service called svcName
// yields to the holder of their public claim, read from its
// PublicHostnames' answers (source.Yielded).
func (r *Reconciler) yielded(ctx context.Context, ns, svcName string) (map[string]string, error) {
	l := &v1alpha1.PublicHostnameList{}
	if err := r.kube.List(ctx, l, client.InNamespace(ns), client.MatchingLabels{publish.LabelService: publish.LabelValue(svcName)}); err != nil {
		return nil, errors.Wrap(err, "cannot list PublicHostnames")
	}
	var own []*v1alpha1.PublicHostname
	for i := range l.Items {
		if controlledByService(&l.Items[i], svcName) {
			own = append(own, &l.Items[i])
		}
	}
	return source.Yielded(own), nil
}

// reportYielded tells the Service, once per hostname, that it does not
// route a hostname privately because another holds its public claim.
func (r *Reconciler) reportYielded(svc *corev1.Service, hosts []string, yielded map[string]string) {
	source.ReportYielded(&r.reported, svc, "Service", hosts, yielded, func(reason, msg string) { r.warn(svc, reason, msg) })
}

func controlledByService(o metav1.Object, name string) bool {
	c := metav1.GetControllerOf(o)
	return c != nil && c.Kind == "Service" && c.APIVersion == "v1" && c.Name == name
}

// convergeExposure applies d and deletes the Service's other exposed
// objects. svc is nil when the Service is gone.
// It returns what is left of them, and whether a name was taken.
func (r *Reconciler) convergeExposure(ctx context.Context, ns, svcName string, svc *corev1.Service, d exposed) ([]source.Owned, bool, error) {
	want := map[string]bool{}
	conflict := false
	for _, o := range d.objs {
		want[source.Key(o)] = true
		taken, err := r.applyExposed(ctx, svc, o)
		if err != nil {
			return nil, false, err
		}
		conflict = conflict || taken
	}
	have, err := r.ownedExposure(ctx, ns, svcName)
	if err != nil {
		return nil, false, err
	}
	var kept []source.Owned
	for _, m := range have {
		if want[source.Key(m)] || meta.WasDeleted(m) || d.keepExisting && !d.drops(m) {
			kept = append(kept, m)
			continue
		}
		if err := r.kube.Delete(ctx, m); client.IgnoreNotFound(err) != nil {
			return nil, false, errors.Wrapf(err, "cannot delete %s %s", source.Kind(m), m.GetName())
		}
		r.reported.Delete(m.GetUID())
		if svc != nil {
			// Its own finalizer deletes the Cloudflare object: not gone yet.
			r.record.Event(svc, event.Normal("Deleting"+event.Reason(source.Kind(m)), fmt.Sprintf("Deleting %s %s, no longer wanted; it goes once Cloudflare confirms the deletion", source.Kind(m), m.GetName())))
		}
	}
	return kept, conflict, nil
}

// applyExposed creates or updates one object, never touching one that
// something other than a Service of this name controls (taken).
func (r *Reconciler) applyExposed(ctx context.Context, svc *corev1.Service, want source.Owned) (taken bool, _ error) {
	cur := want.DeepCopyObject().(source.Owned)
	err := r.kube.Get(ctx, client.ObjectKeyFromObject(want), cur)
	if kerrors.IsNotFound(err) {
		if err := r.kube.Create(ctx, want); err != nil {
			return false, errors.Wrapf(err, "cannot create %s %s", source.Kind(want), want.GetName())
		}
		r.record.Event(svc, event.Normal("Created"+event.Reason(source.Kind(want)), fmt.Sprintf("Created %s %s", source.Kind(want), want.GetName())))
		return false, nil
	}
	if err != nil {
		return false, errors.Wrapf(err, "cannot get %s %s", source.Kind(want), want.GetName())
	}
	if !controlledByService(cur, svc.Name) {
		r.warn(svc, "NameConflict", fmt.Sprintf("%s %s exists and is not controlled by this Service; left alone", source.Kind(want), want.GetName()))
		return true, nil
	}
	if meta.WasDeleted(cur) {
		return false, nil // recreated once gone
	}
	before := cur.GetOwnerReferences()
	// The Service of this name now, if it was recreated.
	cur.SetOwnerReferences(want.GetOwnerReferences())
	changed := source.CopySpec(cur, want)
	if !changed && ownersEqual(before, want.GetOwnerReferences()) {
		return false, nil
	}
	return false, errors.Wrapf(r.kube.Update(ctx, cur), "cannot update %s %s", source.Kind(want), want.GetName())
}

func ownersEqual(a, b []metav1.OwnerReference) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].UID != b[i].UID || a[i].Name != b[i].Name || a[i].Kind != b[i].Kind {
			return false
		}
	}
	return true
}

// reportExposureFailures repeats an object's failure (a hostname routed to
// another tunnel, a public hostname another source holds or no zone has) on
// the Service, once per distinct message.
func (r *Reconciler) reportExposureFailures(svc *corev1.Service, tunnel source.Tunnel, ms []source.Owned) {
	source.ReportFailures(&r.reported, svc, tunnel, ms, func(reason, msg string) { r.warn(svc, reason, msg) })
}
