package source

import (
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/composite/cloudflaretunnel"
)

func cft(id string, reason xpv2.ConditionReason) *v1alpha1.CloudflareTunnel {
	c := &v1alpha1.CloudflareTunnel{ObjectMeta: metav1.ObjectMeta{Namespace: "platform", Name: "edge"}}
	c.Status.TunnelID = id
	if reason != "" {
		c.SetConditions(xpv2.Condition{Type: xpv2.TypeReady, Status: corev1.ConditionFalse, Reason: reason, Message: "the Cloudflare tunnel name edge is taken"})
	}
	return c
}

// TestReportFailuresWhileTheTunnelHasNoID: a route that cannot resolve its
// tunnel's ID is not repeated on the source; a tunnel being made is said by
// nothing, and a broken one once, with the CloudflareTunnel's reason.
func TestReportFailuresWhileTheTunnelHasNoID(t *testing.T) {
	const id = "6f1c0d6e-0b8e-4f51-9f5a-3c3b0c8f7a21"
	unresolved := &ztv1alpha1.HostnameRoute{ObjectMeta: metav1.ObjectMeta{Name: "web-route", UID: "route"}}
	unresolved.SetConditions(xpv2.Condition{Type: xpv2.TypeSynced, Status: corev1.ConditionFalse, Reason: xpv2.ReasonReconcileError, Message: "cannot resolve references: referenced field was empty (referenced resource may not yet be ready)"})
	refused := unresolved.DeepCopy()
	refused.Spec.ForProvider.TunnelID = ptr.To(id)
	refused.SetConditions(xpv2.Condition{Type: xpv2.TypeSynced, Status: corev1.ConditionFalse, Reason: xpv2.ReasonReconcileError, Message: "conflict: the hostname is routed to another tunnel"})
	cases := map[string]struct {
		tunnel *v1alpha1.CloudflareTunnel
		route  *ztv1alpha1.HostnameRoute
		// want are the reasons warned, over two reports.
		want []string
	}{
		"BeingMade":      {tunnel: cft("", cloudflaretunnel.ReasonWaitingForTunnel), route: unresolved},
		"NotYetAnswered": {tunnel: cft("", ""), route: unresolved},
		"NameTaken":      {tunnel: cft("", v1alpha1.ReasonTunnelNameTaken), route: unresolved, want: []string{string(v1alpha1.ReasonTunnelNameTaken)}},
		"Unreconcilable": {tunnel: cft("", cloudflaretunnel.ReasonReconcileError), route: unresolved, want: []string{string(cloudflaretunnel.ReasonReconcileError)}},
		// The tunnel has its ID and the route has not caught up: its
		// condition from before is not a failure of its own.
		"WithAnIDNotYetResolved": {tunnel: cft(id, ""), route: unresolved},
		// Resolved since, its condition not yet rewritten: about the spec
		// before (an older generation).
		"WithAnIDResolvedSince": {tunnel: cft(id, ""), route: func() *ztv1alpha1.HostnameRoute {
			r := &ztv1alpha1.HostnameRoute{ObjectMeta: metav1.ObjectMeta{Name: "web-route", UID: "route", Generation: 2}}
			r.Spec.ForProvider.TunnelID = ptr.To(id)
			c := unresolved.GetCondition(xpv2.TypeSynced)
			c.ObservedGeneration = 1
			r.SetConditions(c)
			return r
		}()},
		// With an ID, a route's own failure is repeated, once.
		"WithAnID": {tunnel: cft(id, ""), route: refused, want: []string{"CloudflareError"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var reported sync.Map
			src := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "web", UID: "ingress"}}
			var got []string
			for range 2 {
				ReportFailures(&reported, src, TunnelOf(tc.tunnel), []Owned{tc.route}, func(reason, _ string) { got = append(got, reason) })
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("warnings: -want +got:\n%s", diff)
			}
		})
	}
}
