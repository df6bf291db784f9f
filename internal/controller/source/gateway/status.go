package gateway

import (
	"context"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/gateway/translate"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/gatewayapi"
)

// mergeConditions are want with each condition's last transition time
// kept from old while its status is unchanged, and now otherwise.
func mergeConditions(old, want []metav1.Condition) []metav1.Condition {
	out := make([]metav1.Condition, 0, len(want))
	now := metav1.Now()
	for _, c := range want {
		c.LastTransitionTime = now
		for _, o := range old {
			if o.Type == c.Type && o.Status == c.Status {
				c.LastTransitionTime = o.LastTransitionTime
			}
		}
		if c.Message == "" {
			c.Message = c.Reason
		}
		out = append(out, c)
	}
	return out
}

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
		parents := routeParents(rt.Namespace, rt.Status.Parents, gw, entriesOf(http, rt.Namespace, rt.Name))
		if equality.Semantic.DeepEqual(parents, rt.Status.Parents) {
			continue
		}
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
		parents := routeParents(rt.Namespace, rt.Status.Parents, gw, entriesOf(grpc, rt.Namespace, rt.Name))
		if equality.Semantic.DeepEqual(parents, rt.Status.Parents) {
			continue
		}
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

// routeParents are a route's parent entries with this controller's for gw
// replaced by mine (transition times kept while unchanged).
func routeParents(ns string, parents []gwv1.RouteParentStatus, gw *gwv1.Gateway, mine []gwv1.RouteParentStatus) []gwv1.RouteParentStatus {
	var out []gwv1.RouteParentStatus
	var old []gwv1.RouteParentStatus
	for _, p := range parents {
		if p.ControllerName == translate.ControllerName && gatewayapi.RefersTo(p.ParentRef, ns, gw) {
			old = append(old, p)
			continue
		}
		out = append(out, p)
	}
	for _, p := range mine {
		var prev []metav1.Condition
		for _, o := range old {
			if gatewayapi.SameParent(o.ParentRef, p.ParentRef, ns) {
				prev = o.Conditions
			}
		}
		p.Conditions = mergeConditions(prev, p.Conditions)
		out = append(out, p)
	}
	if out == nil && parents != nil {
		out = []gwv1.RouteParentStatus{}
	}
	return out
}
