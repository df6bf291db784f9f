package translate

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/common"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
)

func answered(host string, accepted bool, reason xpv2.ConditionReason, claimedBy string) *v1alpha1.PublicHostname {
	ph := &v1alpha1.PublicHostname{Spec: v1alpha1.PublicHostnameSpec{Hostname: host}}
	s := corev1.ConditionTrue
	if !accepted {
		s = corev1.ConditionFalse
	}
	ph.SetConditions(xpv2.Condition{Type: v1alpha1.TypeAccepted, Status: s, Reason: reason})
	ph.Status.Tunnel = &v1alpha1.PublishedStatus{ClaimedBy: claimedBy}
	return ph
}

// TestLostHostnamesAreShown: a hostname the tunnel gave to an older claim
// is said on every route serving it: PartiallyInvalid while another of its
// hostnames is published, not Accepted when none is. The holder is named
// in the Gateway's namespace only.
func TestLostHostnamesAreShown(t *testing.T) {
	lost := Lost([]*v1alpha1.PublicHostname{
		answered("a.example.com", false, v1alpha1.ReasonHostnameConflict, "ingress-web-a"),
		answered("b.example.com", true, "Accepted", ""),
		answered("c.example.com", false, v1alpha1.ReasonHostnameConflict, "team/ingress-c"),
		answered("d.example.com", false, v1alpha1.ReasonWaitingForTunnel, ""),
		dnsTaken(answered("e.example.com", true, "Accepted", ""), common.ReasonConflict),
		dnsTaken(answered("f.example.com", true, "Accepted", ""), common.ReasonTransient),
	}, "public")
	if e := lost["e.example.com"]; !strings.Contains(e, "held by another source") || !strings.Contains(e, "Conflict") {
		t.Errorf("Lost[e.example.com] = %q", e)
	}
	delete(lost, "e.example.com")
	if len(lost) != 2 || !strings.Contains(lost["a.example.com"], "by PublicHostname ingress-web-a") || !strings.Contains(lost["c.example.com"], "a PublicHostname of another namespace") || strings.Contains(lost["c.example.com"], "team") {
		t.Fatalf("Lost: %v", lost)
	}
	svcs := services(service("apps", "web", 8080))
	res := Translate(Input{Gateway: gateway(allRoutes), Services: svcs, HTTPRoutes: []gwv1.HTTPRoute{
		httpRoute("apps", "ab", 1, []string{"a.example.com", "b.example.com"}, pathRule(gwv1.PathMatchPathPrefix, "/", backendRef("web", 8080))),
		httpRoute("apps", "c", 2, []string{"c.example.com"}, pathRule(gwv1.PathMatchPathPrefix, "/", backendRef("web", 8080))),
		httpRoute("apps", "b", 3, []string{"b.example.com"}, pathRule(gwv1.PathMatchPathPrefix, "/", backendRef("web", 8080))),
	}})
	ShowLost(res.Routes, lost)
	want := map[string][]verdict{
		// ab lost b.example.com's "/" to b, older, first: one
		// PartiallyInvalid says both, with the first reason.
		"apps/ab": {{"Accepted": "True/Accepted", "ResolvedRefs": "True/ResolvedRefs", "PartiallyInvalid": "True/PathConflict"}},
		"apps/c":  {{"Accepted": "False/HostnameConflict", "ResolvedRefs": "True/ResolvedRefs"}},
		"apps/b":  {{"Accepted": "True/Accepted", "ResolvedRefs": "True/ResolvedRefs"}},
	}
	if diff := cmp.Diff(want, verdicts(res.Routes)); diff != "" {
		t.Errorf("route status (-want +got):\n%s", diff)
	}
}

// dnsTaken is ph with its DNS record refused for reason.
func dnsTaken(ph *v1alpha1.PublicHostname, reason xpv2.ConditionReason) *v1alpha1.PublicHostname {
	ph.SetConditions(xpv2.Condition{Type: v1alpha1.TypeDNSReady, Status: corev1.ConditionFalse, Reason: reason})
	return ph
}
