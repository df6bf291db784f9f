package translate

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
)

// Ours says whether a GatewayClass (nil: it does not exist) is one of this
// provider's: its Gateways are tunnels.
func Ours(gc *gwv1.GatewayClass) bool {
	return gc != nil && gc.Spec.ControllerName == ControllerName && !meta.WasDeleted(gc)
}

// Another says whether a GatewayClass is another controller's: the status
// of its Gateways is that controller's to write.
func Another(gc *gwv1.GatewayClass) bool {
	return gc != nil && gc.Spec.ControllerName != ControllerName
}

// Abandoned is the status of a Gateway whose class is no longer this
// provider's (deleted, being deleted, or another controller's) while what
// it published is removed: not Accepted and not Programmed (reason
// Invalid), no address and no listeners, so that nothing says it still
// serves. write is false once another controller has answered the
// Gateway's current generation: the status is then that controller's.
func Abandoned(gw *gwv1.Gateway, gc *gwv1.GatewayClass) (st gwv1.GatewayStatus, write bool) {
	why := fmt.Sprintf("GatewayClass %s does not exist", gw.Spec.GatewayClassName)
	switch {
	case Another(gc):
		why = fmt.Sprintf("GatewayClass %s is controller %s's, not %s's", gc.Name, gc.Spec.ControllerName, ControllerName)
	case gc != nil:
		why = fmt.Sprintf("GatewayClass %s is being deleted", gc.Name)
	}
	msg := why + ": the Gateway is no longer a CloudflareTunnel; what it published is being removed from Cloudflare"
	st.Conditions = []metav1.Condition{
		condition(string(gwv1.GatewayConditionAccepted), false, string(gwv1.GatewayReasonInvalid), msg, gw.Generation),
		condition(string(gwv1.GatewayConditionProgrammed), false, string(gwv1.GatewayReasonInvalid), msg, gw.Generation),
	}
	if !Another(gc) {
		return st, true
	}
	for _, c := range gw.Status.Conditions {
		if c.ObservedGeneration == gw.Generation && !sameCondition(c, st.Conditions) {
			return st, false
		}
	}
	return st, true
}

// sameCondition says whether c is one of cs, but for its transition time.
func sameCondition(c metav1.Condition, cs []metav1.Condition) bool {
	for _, o := range cs {
		if o.Type == c.Type && o.Status == c.Status && o.Reason == c.Reason && o.Message == c.Message && o.ObservedGeneration == c.ObservedGeneration {
			return true
		}
	}
	return false
}
