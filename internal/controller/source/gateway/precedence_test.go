package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

// served is the service of the first rule of the tunnel's configuration
// that cloudflared would take for a request to host and path (its path an
// unanchored expression; a wildcard rule is not considered).
func served(t *testing.T, tunnelID, host, path string) string {
	t.Helper()
	tc, err := p.Cloudflare.GetTunnelConfiguration(context.Background(), tunnelID)
	if err != nil {
		t.Fatal(err)
	}
	var c ztv1alpha1.TunnelConfig
	if len(tc.Config) > 0 {
		if err := json.Unmarshal(tc.Config, &c); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range c.Ingress {
		if ptr.Deref(r.Hostname, "") != host {
			continue
		}
		if r.Path == nil || regexp.MustCompile(*r.Path).MatchString(path) {
			return r.Service
		}
	}
	return ""
}

// A newer route of another admitted namespace cannot take an older route's
// path: not with an expression that also matches it, however long, nor by
// naming the same prefix spelled another way. The older route's backend
// serves its paths, and the newer route is told it lost one
// (PartiallyInvalid, PathConflict) without the older route being named;
// the rest of the newer route is published, after the literals.
func TestANewerRouteCannotCaptureAnOlderRoutesPath(t *testing.T) {
	t.Parallel()
	w := setup(t, func(gw *gwv1.Gateway) {
		gw.Spec.Listeners[0].AllowedRoutes = &gwv1.AllowedRoutes{Namespaces: &gwv1.RouteNamespaces{From: ptr.To(gwv1.NamespacesFromAll)}}
	})
	team, other := p.Namespace(t), p.Namespace(t)
	p.Create(t, service(team, "api", 8080))
	p.Create(t, service(other, "grab", 8080))
	h := "paths-" + w.ns + ".example.com"
	api, grab := "http://api."+team+".svc.cluster.local:8080", "http://grab."+other+".svc.cluster.local:8080"

	site := route(team, w.ns, "site", []string{h}, pathRule(gwv1.PathMatchPathPrefix, "/api", backend("api", 8080)))
	p.Create(t, site)
	waitRules(t, w.tunnelID, h, map[string]string{h + " ^/api(/|$)": api})
	wait.NextSecond() // Gateway API orders routes by creation time
	capture := "/api/(.*)|/" + strings.Repeat("z", 48)
	taker := route(other, w.ns, "taker", []string{h},
		pathRule(gwv1.PathMatchRegularExpression, capture, backend("grab", 8080)),
		pathRule(gwv1.PathMatchPathPrefix, "/api/", backend("grab", 8080)),
		pathRule(gwv1.PathMatchExact, "/grab", backend("grab", 8080)))
	p.Create(t, taker)

	waitRules(t, w.tunnelID, h, map[string]string{h + " ^/api(/|$)": api, h + " ^(?:" + capture + ")$": grab, h + " ^/grab$": grab})
	for path, want := range map[string]string{"/api": api, "/api/users": api, "/grab": grab} {
		if got := served(t, w.tunnelID, h, path); got != want {
			t.Errorf("%s%s is served by %s, want %s", h, path, got, want)
		}
	}
	waitParentConditions(t, site, "Accepted=True/Accepted", "ResolvedRefs=True/ResolvedRefs")
	waitParentConditions(t, taker, "Accepted=True/Accepted", "ResolvedRefs=True/ResolvedRefs", "PartiallyInvalid=True/PathConflict")
	msg := condition(taker.Status.Parents[0].Conditions, string(gwv1.RouteConditionPartiallyInvalid)).Message
	if !strings.Contains(msg, `Prefix "/api/"`) || strings.Contains(msg, team) || strings.Contains(msg, "site") {
		t.Errorf("PartiallyInvalid says %q: want the path lost, and no name of another namespace's route", msg)
	}
	p.WaitWarning(t, other, taker.Name, "PathConflict", `Prefix "/api/"`)
}

// Moving a Gateway to another controller's class, while its tunnel cannot
// be deleted yet (cloudflared still connected), says at once that it no
// longer serves: Accepted and Programmed False (Invalid), no address, and
// this provider's entries gone from its routes (an HTTPRoute and a
// GRPCRoute); once the tunnel goes, the Gateway is let go and its status is
// left to the other controller.
func TestMovingAGatewayToAnotherClassSaysSoAtOnce(t *testing.T) {
	t.Parallel()
	w := setup(t)
	other := &gwv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "other-" + w.ns}, Spec: gwv1.GatewayClassSpec{ControllerName: "example.com/other"}}
	p.Create(t, other)
	t.Cleanup(func() { _ = p.Client.Delete(context.Background(), other) })
	p.Create(t, service(w.ns, "web", 8080))
	a, g := "move-"+w.ns+".example.com", "move-grpc-"+w.ns+".example.com"
	web := route(w.ns, w.ns, "web", []string{a}, pathRule(gwv1.PathMatchPathPrefix, "/", backend("web", 8080)))
	p.Create(t, web)
	rpc := grpcRoute(w.ns, "rpc", []string{g}, gwv1.GRPCRouteRule{BackendRefs: []gwv1.GRPCBackendRef{{BackendRef: gwv1.BackendRef{BackendObjectReference: gwv1.BackendObjectReference{Name: "web", Port: ptr.To(gwv1.PortNumber(8080))}}}}})
	p.Create(t, rpc)
	waitParentConditions(t, web, "Accepted=True/Accepted", "ResolvedRefs=True/ResolvedRefs")
	waitGRPCConditions(t, rpc, "Accepted=True/Accepted", "ResolvedRefs=True/ResolvedRefs")
	gw := w.gateway
	wait.Eventually(t, wait.Patience, "Gateway Programmed", func() error {
		if err := p.Get(gw); err != nil {
			return err
		}
		if c := condition(gw.Status.Conditions, string(gwv1.GatewayConditionProgrammed)); c.Status != metav1.ConditionTrue {
			return fmt.Errorf("Programmed %s %s", c.Status, c.Reason)
		}
		return nil
	})

	p.Edit(t, gw, func() { gw.Spec.GatewayClassName = gwv1.ObjectName(other.Name) })
	wait.Eventually(t, wait.Patience, "the Gateway says it no longer serves", func() error {
		if err := p.Get(gw); err != nil {
			return err
		}
		for _, ct := range []gwv1.GatewayConditionType{gwv1.GatewayConditionAccepted, gwv1.GatewayConditionProgrammed} {
			c := condition(gw.Status.Conditions, string(ct))
			if c.Status != metav1.ConditionFalse || c.Reason != string(gwv1.GatewayReasonInvalid) || c.ObservedGeneration != gw.Generation || !strings.Contains(c.Message, "example.com/other") {
				return fmt.Errorf("%s=%s/%s (generation %d of %d): %s", ct, c.Status, c.Reason, c.ObservedGeneration, gw.Generation, c.Message)
			}
		}
		if len(gw.Status.Addresses) > 0 || len(gw.Status.Listeners) > 0 {
			return fmt.Errorf("addresses %v, listeners %v", gw.Status.Addresses, gw.Status.Listeners)
		}
		return nil
	})
	waitParentConditions(t, web)
	waitGRPCConditions(t, rpc)
	p.WaitWarning(t, w.ns, gw.Name, string(gwv1.GatewayReasonInvalid), "example.com/other")
	// Still releasing: the tunnel cannot be deleted while connected.
	if err := p.Get(gw); err != nil || len(gw.Finalizers) == 0 {
		t.Fatalf("the Gateway was let go before its tunnel (%v, finalizers %v)", err, gw.Finalizers)
	}

	stopConnectors(w)
	accountClean(t, w.ns+"-public", a, g)
	wait.Eventually(t, wait.Patience, "the Gateway let go, its status left to the other controller", func() error {
		if err := p.Get(gw); err != nil {
			return err
		}
		if len(gw.Finalizers) > 0 {
			return fmt.Errorf("finalizers %v", gw.Finalizers)
		}
		if c := condition(gw.Status.Conditions, string(gwv1.GatewayConditionProgrammed)); c.Status == metav1.ConditionTrue {
			return fmt.Errorf("Programmed %+v", c)
		}
		return nil
	})
	if c := condition(gw.Status.Conditions, string(gwv1.GatewayConditionAccepted)); c.Status != metav1.ConditionFalse {
		t.Errorf("the status of a Gateway of another controller's class was cleared: %+v", gw.Status)
	}
}

// A route whose hostname another source holds (its DNS record, here one
// made outside the provider) is not published, and says so: Accepted=False
// with reason HostnameConflict and a Warning event, naming no holder; a
// hostname of its own still published makes it PartiallyInvalid instead.
func TestARouteWhoseHostnameIsAnothersSaysSo(t *testing.T) {
	t.Parallel()
	w := setup(t)
	taken, free := "taken-"+w.ns+".example.com", "free-"+w.ns+".example.com"
	rec, err := p.Cloudflare.CreateDNSRecord(context.Background(), sim.ZoneID("example.com"), cloudflare.DNSRecord{Name: taken, Type: "CNAME", Content: "elsewhere.example.net", Proxied: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Cloudflare.DeleteDNSRecord(context.Background(), sim.ZoneID("example.com"), rec.ID) })
	p.Create(t, service(w.ns, "web", 8080))
	r := route(w.ns, w.ns, "late", []string{taken}, pathRule(gwv1.PathMatchPathPrefix, "/", backend("web", 8080)))
	p.Create(t, r)
	waitParentConditions(t, r, "Accepted=False/HostnameConflict", "ResolvedRefs=True/ResolvedRefs")
	p.WaitWarning(t, w.ns, r.Name, "HostnameConflict", taken)
	// Its rules went to the tunnel before Cloudflare refused the record;
	// once refused they leave with the next configuration write.
	wait.Eventually(t, wait.Patience, taken+" not served", func() error {
		if got := served(t, w.tunnelID, taken, "/"); got != "" {
			return fmt.Errorf("%s is published to %s", taken, got)
		}
		return nil
	})

	p.Edit(t, r, func() { r.Spec.Hostnames = append(r.Spec.Hostnames, gwv1.Hostname(free)) })
	waitParentConditions(t, r, "Accepted=True/Accepted", "ResolvedRefs=True/ResolvedRefs", "PartiallyInvalid=True/HostnameConflict")
	waitRules(t, w.tunnelID, w.ns, map[string]string{free + " ": "http://web." + w.ns + ".svc.cluster.local:8080"})
}
