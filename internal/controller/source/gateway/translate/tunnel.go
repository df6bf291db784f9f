package translate

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
)

// tunnelFor is the CloudflareTunnel made for a Gateway that names none:
// named after the Gateway in its namespace, its Cloudflare name
// "<namespace>-<name>" (tunnel names are the account's, not a namespace's),
// with the settings of its parameters, shared as its listeners admit.
func tunnelFor(gw *gwv1.Gateway, s settings) *v1alpha1.CloudflareTunnel {
	if gw.Annotations[v1alpha1.AnnotationTunnel] != "" {
		return nil
	}
	t := &v1alpha1.CloudflareTunnel{
		TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.CloudflareTunnelKind},
		ObjectMeta: metav1.ObjectMeta{
			Name: gw.Name, Namespace: gw.Namespace,
			Labels:          map[string]string{LabelGateway: publish.LabelValue(gw.Name)},
			OwnerReferences: []metav1.OwnerReference{owner(gw)},
		},
		Spec: v1alpha1.CloudflareTunnelSpec{TunnelName: ptr.To(fmt.Sprintf("%s-%s", gw.Namespace, gw.Name)), AllowedNamespaces: s.shared.DeepCopy()},
	}
	applyParameters(&t.Spec, s.spec)
	return t
}

// owner is the controller reference to a Gateway of what is made for it.
func owner(gw *gwv1.Gateway) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion: gwv1.SchemeGroupVersion.String(), Kind: "Gateway", Name: gw.Name, UID: gw.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}
}

// gatewayAccepted is the Gateway's Accepted condition: requested addresses
// are not supported (a tunnel's address is Cloudflare's).
func gatewayAccepted(gw *gwv1.Gateway, s settings) metav1.Condition {
	if len(gw.Spec.Addresses) > 0 {
		return condition(string(gwv1.GatewayConditionAccepted), false, string(gwv1.GatewayReasonUnsupportedAddress),
			"spec.addresses cannot be honoured: a tunnel's address is <tunnel ID>.cfargotunnel.com, chosen by Cloudflare; remove spec.addresses", gw.Generation)
	}
	if s.problem != "" {
		// Never ignored in silence: settings the user asked for would not
		// be applied.
		return condition(string(gwv1.GatewayConditionAccepted), false, string(gwv1.GatewayReasonInvalidParameters),
			s.problem+"; nothing new is published, and what is published stays", gw.Generation)
	}
	msg := "the Gateway is CloudflareTunnel " + TunnelName(gw)
	if gw.Annotations[v1alpha1.AnnotationTunnel] == "" {
		msg += ", made for it"
	}
	if s.ref != nil {
		msg += ", with GatewayParameters " + s.ref.Namespace + "/" + s.ref.Name + " (" + s.ref.Field + ")"
	}
	if s.sharedNote != "" {
		msg += "; " + s.sharedNote
	}
	return condition(string(gwv1.GatewayConditionAccepted), true, string(gwv1.GatewayReasonAccepted), msg, gw.Generation)
}

// TunnelState is what the Gateway's status needs of its CloudflareTunnel.
type TunnelState struct {
	// Found: the CloudflareTunnel exists (and, when made for the Gateway,
	// is the Gateway's).
	Found bool
	// Problem says why it cannot be used, when Found is false or it is
	// refused.
	Problem string
	// ID is the Cloudflare tunnel ID; "" until made.
	ID string
	// Ready is the CloudflareTunnel's Ready condition.
	Ready   bool
	Message string
}

// Status is the Gateway's status: Accepted, Programmed once the tunnel is
// Ready, its address once it has an ID, and the listeners'.
func Status(gw *gwv1.Gateway, res Result, t TunnelState) gwv1.GatewayStatus {
	st := gwv1.GatewayStatus{Conditions: []metav1.Condition{res.Accepted}}
	programmed := condition(string(gwv1.GatewayConditionProgrammed), true, string(gwv1.GatewayReasonProgrammed),
		fmt.Sprintf("CloudflareTunnel %s is Ready", res.Tunnel), gw.Generation)
	switch {
	case !t.Found:
		programmed = condition(string(gwv1.GatewayConditionProgrammed), false, string(gwv1.GatewayReasonInvalid), t.Problem, gw.Generation)
	case !t.Ready:
		programmed = condition(string(gwv1.GatewayConditionProgrammed), false, string(gwv1.GatewayReasonPending),
			fmt.Sprintf("waiting for CloudflareTunnel %s to be Ready: %s", res.Tunnel, t.Message), gw.Generation)
	}
	if res.Accepted.Status != metav1.ConditionTrue {
		programmed = condition(string(gwv1.GatewayConditionProgrammed), false, string(gwv1.GatewayReasonInvalid), "the Gateway is not accepted", gw.Generation)
	}
	st.Conditions = append(st.Conditions, programmed)
	switch {
	case res.Address != "":
		st.Addresses = []gwv1.GatewayStatusAddress{{Type: ptr.To(gwv1.HostnameAddressType), Value: res.Address}}
	case t.ID != "":
		st.Addresses = []gwv1.GatewayStatusAddress{{Type: ptr.To(gwv1.HostnameAddressType), Value: t.ID + ".cfargotunnel.com"}}
	}
	for _, l := range res.Listeners {
		l = *l.DeepCopy()
		lp := programmed.DeepCopy()
		switch {
		case listenerCondition(l, gwv1.ListenerConditionAccepted) != metav1.ConditionTrue:
			lp.Status, lp.Reason, lp.Message = metav1.ConditionFalse, string(gwv1.ListenerReasonInvalid), "the listener is not accepted"
		case listenerCondition(l, gwv1.ListenerConditionResolvedRefs) != metav1.ConditionTrue:
			lp.Status, lp.Reason, lp.Message = metav1.ConditionFalse, string(gwv1.ListenerReasonInvalid), "the listener's references do not resolve"
		}
		l.Conditions = append(l.Conditions, *lp)
		st.Listeners = append(st.Listeners, l)
	}
	return st
}

func listenerCondition(l gwv1.ListenerStatus, t gwv1.ListenerConditionType) metav1.ConditionStatus {
	for _, c := range l.Conditions {
		if c.Type == string(t) {
			return c.Status
		}
	}
	return metav1.ConditionUnknown
}
