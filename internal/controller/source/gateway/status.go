package gateway

import (
	"context"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/gateway/translate"
)

func equalStatus(a, b gwv1.GatewayStatus) bool {
	return equality.Semantic.DeepEqual(a, b)
}

// writeRoutes writes this controller's entries for the Gateway into every
// route's status.parents: the routes' entries want, and none on a route
// that no longer names the Gateway. Other controllers' entries, and ours
// for other Gateways, are left as they are. GRPCRoutes are written only
// where the kind is installed.
func (r *Reconciler) writeRoutes(ctx context.Context, gw *gwv1.Gateway, http, grpc []translate.RouteStatus) error {
	routes, err := r.routes(ctx)
	if err != nil {
		return err
	}
	for i := range routes {
		rt := &routes[i]
		mine := entriesOf(http, rt.Namespace, rt.Name)
		parents := translate.Parents(rt.Namespace, rt.Status.Parents, gw, mine, metav1.Now())
		if equality.Semantic.DeepEqual(parents, rt.Status.Parents) {
			continue
		}
		r.warn(rt, translate.RouteWarnings(rt.Namespace, rt.Status.Parents, mine))
		rt.Status.Parents = parents
		if err := r.kube.Status().Update(ctx, rt); err != nil {
			return errors.Wrapf(err, "cannot update the status of HTTPRoute %s/%s", rt.Namespace, rt.Name)
		}
	}
	grpcs, err := r.grpcRoutes(ctx)
	if err != nil {
		return err
	}
	for i := range grpcs {
		rt := &grpcs[i]
		mine := entriesOf(grpc, rt.Namespace, rt.Name)
		parents := translate.Parents(rt.Namespace, rt.Status.Parents, gw, mine, metav1.Now())
		if equality.Semantic.DeepEqual(parents, rt.Status.Parents) {
			continue
		}
		r.warn(rt, translate.RouteWarnings(rt.Namespace, rt.Status.Parents, mine))
		rt.Status.Parents = parents
		if err := r.kube.Status().Update(ctx, rt); err != nil {
			return errors.Wrapf(err, "cannot update the status of GRPCRoute %s/%s", rt.Namespace, rt.Name)
		}
	}
	return nil
}

func entriesOf(sts []translate.RouteStatus, ns, name string) []gwv1.RouteParentStatus {
	if j := slices.IndexFunc(sts, func(s translate.RouteStatus) bool { return s.Namespace == ns && s.Name == name }); j >= 0 {
		return sts[j].Parents
	}
	return nil
}
