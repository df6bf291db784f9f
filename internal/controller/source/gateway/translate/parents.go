package translate

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/gatewayapi"
)

// MergeConditions are want with each condition's last transition time
// kept from old while its status is unchanged, and now otherwise; an empty
// message is the reason (the Gateway API CRDs require one).
func MergeConditions(old, want []metav1.Condition, now metav1.Time) []metav1.Condition {
	out := make([]metav1.Condition, 0, len(want))
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

// Parents are a route's parent entries with this controller's for gw
// replaced by mine (transition times kept while unchanged).
func Parents(ns string, parents []gwv1.RouteParentStatus, gw *gwv1.Gateway, mine []gwv1.RouteParentStatus, now metav1.Time) []gwv1.RouteParentStatus {
	var out []gwv1.RouteParentStatus
	var old []gwv1.RouteParentStatus
	for _, p := range parents {
		if p.ControllerName == ControllerName && gatewayapi.RefersTo(p.ParentRef, ns, gw) {
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
		p.Conditions = MergeConditions(prev, p.Conditions, now)
		out = append(out, p)
	}
	if out == nil && parents != nil {
		out = []gwv1.RouteParentStatus{}
	}
	return out
}
