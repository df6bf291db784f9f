package gateway_test

import (
	"context"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/gateway/translate"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

// A hostname another source published first stays that source's: the
// route serving it and another is Accepted and PartiallyInvalid with the
// engine's HostnameConflict, its other hostname is published, and a
// Warning says so. A backend typo and a listener the tunnel cannot serve
// are Warnings too, on the route and on the Gateway, and a class's
// parametersRef on the class.
func TestConflictsAndBadInputAreSaid(t *testing.T) {
	t.Parallel()
	w := setup(t, func(gw *gwv1.Gateway) {
		gw.Spec.Listeners = append(gw.Spec.Listeners, gwv1.Listener{Name: "tcp", Port: 5432, Protocol: gwv1.TCPProtocolType})
	})
	ns := w.ns
	p.Create(t, service(ns, "web", 8080))
	held, free := "held-"+ns+".example.com", "free-"+ns+".example.com"
	first := &v1alpha1.PublicHostname{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "first"},
		Spec: v1alpha1.PublicHostnameSpec{TunnelRef: v1alpha1.TunnelReference{Name: "public"}, Hostname: held,
			Origin: &v1alpha1.Origin{URL: ptr.To("http://first." + ns + ".svc.cluster.local:80")}},
	}
	p.Create(t, first)
	wait.Eventually(t, wait.Patience, "the first PublicHostname published", func() error {
		if got := rules(t, w.tunnelID)[held+" "]; got != *first.Spec.Origin.URL {
			return fmt.Errorf("rule = %q", got)
		}
		return nil
	})
	app := route(ns, ns, "app", []string{held, free}, pathRule(gwv1.PathMatchPathPrefix, "/", backend("web", 8080)))
	p.Create(t, app)
	waitRules(t, w.tunnelID, ns, map[string]string{held + " ": *first.Spec.Origin.URL, free + " ": "http://web." + ns + ".svc.cluster.local:8080"})
	waitParentConditions(t, app, "Accepted=True/Accepted", "ResolvedRefs=True/ResolvedRefs", "PartiallyInvalid=True/HostnameConflict")
	p.WaitWarning(t, ns, app.Name, "HostnameConflict", "by PublicHostname first")

	typo := route(ns, ns, "typo", []string{"typo-" + ns + ".example.com"}, pathRule(gwv1.PathMatchPathPrefix, "/", backend("wbe", 8080)))
	p.Create(t, typo)
	waitParentConditions(t, typo, "Accepted=True/Accepted", "ResolvedRefs=False/BackendNotFound")
	p.WaitWarning(t, ns, typo.Name, "BackendNotFound", "wbe")
	p.WaitWarning(t, ns, w.gateway.Name, "UnsupportedProtocol", "listener tcp")
	bad := &gwv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "with-parameters-" + ns}, Spec: gwv1.GatewayClassSpec{
		ControllerName: translate.ControllerName,
		ParametersRef:  &gwv1.ParametersReference{Group: "example.com", Kind: "Settings", Name: "x"},
	}}
	p.Create(t, bad)
	t.Cleanup(func() { _ = p.Client.Delete(context.Background(), bad) })
	p.WaitWarning(t, "default", bad.Name, "InvalidParameters", "parametersRef")

	// The holder gone, the route's hostname is its own.
	p.DeleteAndWait(t, first)
	waitParentConditions(t, app, "Accepted=True/Accepted", "ResolvedRefs=True/ResolvedRefs")
	waitRules(t, w.tunnelID, ns, map[string]string{held + " ": "http://web." + ns + ".svc.cluster.local:8080", free + " ": "http://web." + ns + ".svc.cluster.local:8080",
		"typo-" + ns + ".example.com ": "http_status:500"})
}
