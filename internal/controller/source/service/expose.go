package service

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	connv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/connectivity/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/service/translate"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/hostname"
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
	// undecided: hostnames whose public claim is not answered yet; their
	// private route waits for the answer (source.Undecided), one made
	// already stays.
	undecided map[string]bool
}

// awaits says whether m is a private route that waits for its hostname's
// public claim to be answered.
func (d exposed) awaits(m source.Owned) bool { return source.AwaitedRoute(d.undecided, d.yielded, m) }

// drops says whether m goes even when existing objects are kept.
func (d exposed) drops(m source.Owned) bool { return source.YieldedRoute(d.yielded, m) }

// desiredExposure is what to converge to: with a problem in the Service's
// annotations, the valid routes and VPC services are made but nothing is
// deleted, and public hostnames are left as they are (a hostname is
// published whole, or keeps what it had), as for an Ingress. No private
// route is made for a hostname whose public claim lost (yielded, see
// source.Yielded): whoever holds the hostname holds its route; the
// PublicHostname stays, waiting in line. Nor, yet, for one whose claim is
// not answered (undecided).
func desiredExposure(res translate.Exposure, yielded map[string]string, undecided map[string]bool) exposed {
	d := exposed{keepExisting: len(res.Problems) > 0, yielded: yielded, undecided: undecided}
	for _, o := range res.Routes {
		if _, y := yielded[hostname.Normalize(o.Spec.ForProvider.Hostname)]; !y && !d.awaits(o) {
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

// exposedChildren converges what a Service asks for by name.
func (r *Reconciler) exposedChildren() *source.Converger {
	return &source.Converger{Kube: r.kube, Record: r.record, Kinds: func() []client.ObjectList {
		return []client.ObjectList{&ztv1alpha1.HostnameRouteList{}, &connv1alpha1.VPCServiceList{}, &v1alpha1.PublicHostnameList{}}
	}}
}

// reportYielded tells the Service, once per hostname, that it does not
// route a hostname privately because another holds its public claim.
func (r *Reconciler) reportYielded(svc *corev1.Service, hosts []string, yielded map[string]string) {
	source.ReportYielded(&r.reported, svc, "Service", hosts, yielded, func(reason, msg string) { r.warn(svc, reason, msg) })
}

// convergeExposure applies d and deletes the Service's other exposed
// objects. It returns what is left of them, and whether a name was taken.
func (r *Reconciler) convergeExposure(ctx context.Context, o source.Owner, d exposed) ([]source.Owned, bool, error) {
	out, err := r.exposedChildren().Converge(ctx, o, source.Desired{Objects: d.objs, Keep: func(m source.Owned) bool {
		return d.keepExisting && !d.drops(m) || d.awaits(m)
	}})
	r.forget(out.Released)
	return out.Children, len(out.Taken) > 0, err
}

// reportExposureFailures repeats an object's failure (a hostname routed to
// another tunnel, a public hostname another source holds or no zone has) on
// the Service, once per distinct message.
func (r *Reconciler) reportExposureFailures(svc *corev1.Service, tunnel source.Tunnel, ms []source.Owned) {
	source.ReportFailures(&r.reported, svc, tunnel, ms, func(reason, msg string) { r.warn(svc, reason, msg) })
}
