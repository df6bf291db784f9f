package translate

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/metrics"
)

// TestGatewayWarnings: what a Gateway's status newly says needs acting on
// is a Warning, once: the same status again says nothing, and waiting for
// the tunnel is not a warning.
func TestGatewayWarnings(t *testing.T) {
	params := gateway(func(gw *gwv1.Gateway) {
		gw.Spec.Infrastructure = &gwv1.GatewayInfrastructure{ParametersRef: &gwv1.LocalParametersReference{Kind: "X", Name: "y"}}
		gw.Spec.Listeners = append(gw.Spec.Listeners, gwv1.Listener{Name: "tcp", Port: 5432, Protocol: gwv1.TCPProtocolType})
	})
	refused := Status(params, Translate(Input{Gateway: params}), TunnelState{Found: true, Ready: true})
	fine := gateway()
	pending := Status(fine, Translate(Input{Gateway: fine}), TunnelState{Found: true})
	reasons := func(ws []Warning) []string {
		var out []string
		for _, w := range ws {
			out = append(out, w.Reason)
		}
		return out
	}
	cases := map[string]struct {
		old, want gwv1.GatewayStatus
		reasons   []string
	}{
		"NewlyRefused":   {want: refused, reasons: []string{"InvalidParameters", "UnsupportedProtocol"}},
		"SaidBefore":     {old: refused, want: refused},
		"WaitingIsFine":  {want: pending},
		"FixedSaysNone":  {old: refused, want: pending},
		"RefusedAgainAt": {old: pending, want: refused, reasons: []string{"InvalidParameters", "UnsupportedProtocol"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.reasons, reasons(GatewayWarnings(tc.old, tc.want)), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRouteWarningsAndState: a route's entries newly refused, unresolved
// or partly left out warn once; its metric state is a problem, or a
// conflict when another source holds a hostname.
func TestRouteWarningsAndState(t *testing.T) {
	svcs := services(service("apps", "web", 8080))
	res := Translate(Input{Gateway: gateway(allRoutes), Services: svcs, HTTPRoutes: []gwv1.HTTPRoute{
		httpRoute("apps", "typo", 1, []string{"a.example.com"}, pathRule(gwv1.PathMatchPathPrefix, "/", backendRef("wbe", 8080))),
		httpRoute("apps", "ok", 2, []string{"b.example.com", "c.example.com"}, pathRule(gwv1.PathMatchPathPrefix, "/", backendRef("web", 8080))),
	}})
	typo, ok := res.Routes[0], res.Routes[1]
	if typo.Name != "typo" {
		typo, ok = ok, typo
	}
	if ws := RouteWarnings("apps", nil, typo.Parents); len(ws) != 1 || ws[0].Reason != "BackendNotFound" {
		t.Errorf("typo: %+v", ws)
	}
	if ws := RouteWarnings("apps", typo.Parents, typo.Parents); len(ws) != 0 {
		t.Errorf("typo again: %+v", ws)
	}
	if ws := RouteWarnings("apps", nil, ok.Parents); len(ws) != 0 {
		t.Errorf("ok: %+v", ws)
	}
	if s := RouteState(typo.Parents); s != metrics.SourceProblem {
		t.Errorf("typo state %s", s)
	}
	if s := RouteState(ok.Parents); s != metrics.SourceTranslated {
		t.Errorf("ok state %s", s)
	}
	before := []gwv1.RouteParentStatus{*ok.Parents[0].DeepCopy()}
	ShowLost([]RouteStatus{ok}, map[string]string{"b.example.com": "hostname b.example.com is already published"})
	if ws := RouteWarnings("apps", before, ok.Parents); len(ws) != 1 || ws[0].Reason != "HostnameConflict" {
		t.Errorf("lost: %+v", ws)
	}
	if s := RouteState(ok.Parents); s != metrics.SourceConflict {
		t.Errorf("lost state %s", s)
	}
}

// TestClassWarnings: a class's parametersRef that cannot be used (another
// kind, GatewayParameters that do not exist) is a Warning once; one naming
// GatewayParameters that exist is none.
func TestClassWarnings(t *testing.T) {
	small := params("infra", "small", v1alpha1.GatewayParametersSpec{})
	cases := map[string]struct {
		ref    *gwv1.ParametersReference
		params *v1alpha1.GatewayParameters
		warn   bool
	}{
		"AnotherKind":          {ref: &gwv1.ParametersReference{Group: "example.com", Kind: "P", Name: "x"}, warn: true},
		"MissingParameters":    {ref: classRef("infra", "big"), params: small, warn: true},
		"GatewayParameters":    {ref: classRef("infra", "small"), params: small},
		"NoParametersRefAtAll": {},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			want := ClassAccepted(class(tc.ref), tc.params)
			ws := ClassWarnings(nil, want)
			if got := len(ws) == 1 && ws[0].Reason == string(gwv1.GatewayClassReasonInvalidParameters); got != tc.warn || (!tc.warn && len(ws) != 0) {
				t.Fatalf("warnings %+v, want a Warning: %v", ws, tc.warn)
			}
			if ws := ClassWarnings([]metav1.Condition{want}, want); len(ws) != 0 {
				t.Errorf("said again: %+v", ws)
			}
			fixed := ClassAccepted(class(nil), nil)
			if ws := ClassWarnings([]metav1.Condition{want}, fixed); len(ws) != 0 {
				t.Errorf("corrected: %+v", ws)
			}
		})
	}
}
