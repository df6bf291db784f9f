package gateway

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/externaldns"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/gateway/translate"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
)

// ConditionDNSEndpoint is the Gateway's condition in ExternalDNS mode: its
// DNSEndpoint holds the records of its hostnames.
const ConditionDNSEndpoint = "tunnels.cloudflare.com/DNSEndpoint"

// applyDNS writes the Gateway's DNSEndpoint in ExternalDNS mode, one
// proxied CNAME to the tunnel per published hostname, and removes it in
// the other modes (the PublicHostnames make or remove their DNSRecords by
// their own dns field, so no stale record of either kind stays). It
// returns the Gateway's DNSEndpoint condition, nil outside ExternalDNS
// mode. While the Gateway is not accepted nothing is changed.
func (r *Reconciler) applyDNS(ctx context.Context, gw *gwv1.Gateway, res translate.Result, tunnel translate.TunnelState, hosts []string) (*metav1.Condition, error) {
	if res.KeepAll {
		return nil, nil
	}
	if res.DNS.Mode != v1alpha1.DNSModeExternalDNS {
		return nil, externaldns.Delete(ctx, r.kube, gw.Namespace, gw.Name, gw.UID)
	}
	if tunnel.ID == "" {
		return dnsCondition(gw, false, "WaitingForTunnel", "waiting for the tunnel's ID, the records' target"), nil
	}
	proxied := v1alpha1.DefaultExternalDNSProxiedKey
	if o := res.DNS.ExternalDNS; o != nil && o.ProxiedKey != "" {
		proxied = o.ProxiedKey
	}
	owner := metav1.OwnerReference{APIVersion: gwv1.SchemeGroupVersion.String(), Kind: "Gateway", Name: gw.Name, UID: gw.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
	want := externaldns.Endpoint(gw.Name, gw.Namespace, map[string]string{translate.LabelGateway: publish.LabelValue(gw.Name)}, owner, hosts, tunnel.ID+".cfargotunnel.com", proxied)
	out, err := externaldns.Apply(ctx, r.kube, want)
	if err != nil {
		return nil, err
	}
	reason := map[externaldns.Outcome]string{externaldns.Written: "EndpointWritten", externaldns.CRDMissing: "DNSEndpointCRDMissing", externaldns.Conflict: "DNSEndpointConflict"}[out]
	c := dnsCondition(gw, out == externaldns.Written, reason, externaldns.Describe(out, gw.Name, len(hosts)))
	return c, nil
}

func dnsCondition(gw *gwv1.Gateway, ok bool, reason, msg string) *metav1.Condition {
	s := metav1.ConditionTrue
	if !ok {
		s = metav1.ConditionFalse
	}
	return &metav1.Condition{Type: ConditionDNSEndpoint, Status: s, Reason: reason, Message: msg, ObservedGeneration: gw.Generation}
}
