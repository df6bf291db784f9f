package translate

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
)

func params(ns, name string, spec v1alpha1.GatewayParametersSpec) *v1alpha1.GatewayParameters {
	return &v1alpha1.GatewayParameters{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: spec}
}

func withParams(name string) func(*gwv1.Gateway) {
	return func(gw *gwv1.Gateway) {
		gw.Spec.Infrastructure = &gwv1.GatewayInfrastructure{ParametersRef: &gwv1.LocalParametersReference{Group: v1alpha1.Group, Kind: "GatewayParameters", Name: name}}
	}
}

func withAnnotations(kv ...string) func(*gwv1.Gateway) {
	return func(gw *gwv1.Gateway) {
		gw.Annotations = map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			gw.Annotations[kv[i]] = kv[i+1]
		}
	}
}

func class(ref *gwv1.ParametersReference) *gwv1.GatewayClass {
	return &gwv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "cloudflare", Generation: 4}, Spec: gwv1.GatewayClassSpec{ControllerName: ControllerName, ParametersRef: ref}}
}

func classRef(ns, name string) *gwv1.ParametersReference {
	r := &gwv1.ParametersReference{Group: v1alpha1.Group, Kind: "GatewayParameters", Name: name}
	if ns != "" {
		r.Namespace = ptr.To(gwv1.Namespace(ns))
	}
	return r
}

// TestParameters: the made tunnel takes the Gateway's parameters, else its
// class's (whole, never merged); a reference that cannot be used refuses
// the Gateway and keeps what it published.
func TestParameters(t *testing.T) {
	big := v1alpha1.GatewayParametersSpec{Replicas: ptr.To(int32(3)), Image: ptr.To("cloudflare/cloudflared:2026.9.0"), NodeSelector: map[string]string{"pool": "edge"},
		Tolerations: []corev1.Toleration{{Key: "edge", Operator: corev1.TolerationOpExists}}, DeleteTunnelOnRemove: ptr.To(false),
		ProviderConfigRef: &xpv2.ProviderConfigReference{Kind: "ProviderConfig", Name: "team"}}
	small := v1alpha1.GatewayParametersSpec{Image: ptr.To("cloudflare/cloudflared:2026.9.1")}
	defaults := v1alpha1.CloudflareTunnelSpec{TunnelName: ptr.To("edge-public"), Replicas: ptr.To(int32(2)), DeleteTunnelOnRemove: ptr.To(true)}
	withBig := v1alpha1.CloudflareTunnelSpec{TunnelName: ptr.To("edge-public"), Replicas: ptr.To(int32(3)), DeleteTunnelOnRemove: ptr.To(false), Image: big.Image,
		NodeSelector: big.NodeSelector, Tolerations: big.Tolerations, ProviderConfigRef: big.ProviderConfigRef}
	withSmall := defaults
	withSmall.Image = small.Image
	shared := defaults
	shared.AllowedNamespaces = &v1alpha1.AllowedNamespaces{From: v1alpha1.NamespacesFromAll}
	cases := map[string]struct {
		in Input
		// tunnel is the made tunnel's spec; nil when none is made.
		tunnel *v1alpha1.CloudflareTunnelSpec
		// refused is a part of the Accepted=False message; "" is accepted.
		refused string
		dns     DNS
	}{
		"NoParameters": {
			in: Input{Gateway: gateway()}, tunnel: &defaults, dns: DNS{Mode: "DNSRecord"},
		},
		"TheGatewaysParameters": {
			in:     Input{Gateway: gateway(withParams("big")), Parameters: params("edge", "big", big)},
			tunnel: &withBig, dns: DNS{Mode: "DNSRecord"},
		},
		"TheClassParameters": {
			in:     Input{Gateway: gateway(), Class: class(classRef("infra", "small")), Parameters: params("infra", "small", small)},
			tunnel: &withSmall, dns: DNS{Mode: "DNSRecord"},
		},
		"TheGatewaysWinWhole": {
			// The controller reads the Gateway's: the class's image is not
			// merged in.
			in:     Input{Gateway: gateway(withParams("big")), Class: class(classRef("infra", "small")), Parameters: params("edge", "big", big)},
			tunnel: &withBig, dns: DNS{Mode: "DNSRecord"},
		},
		"MissingParameters": {
			in:      Input{Gateway: gateway(withParams("big"))},
			refused: `spec.infrastructure.parametersRef names GatewayParameters "edge/big", which do not exist`,
		},
		"ParametersOfAnotherName": {
			in:      Input{Gateway: gateway(withParams("big")), Parameters: params("edge", "small", small)},
			refused: "which do not exist",
		},
		"AClassReferenceWithoutANamespace": {
			in:      Input{Gateway: gateway(), Class: class(classRef("", "small")), Parameters: params("infra", "small", small)},
			refused: "without a namespace",
		},
		"AClassReferenceOfAnotherKind": {
			in:      Input{Gateway: gateway(), Class: class(&gwv1.ParametersReference{Group: "", Kind: "ConfigMap", Name: "x", Namespace: ptr.To(gwv1.Namespace("infra"))})},
			refused: `the GatewayClass's spec.parametersRef names "ConfigMap" of group ""`,
		},
		"ANamedTunnelKeepsItsSettings": {
			in:      Input{Gateway: gateway(withParams("big"), withAnnotations(v1alpha1.AnnotationTunnel, "mine")), Parameters: params("edge", "big", big)},
			refused: "whose settings are its own",
		},
		"ANamedTunnelTakesDNSParameters": {
			in: Input{Gateway: gateway(withParams("dns"), withAnnotations(v1alpha1.AnnotationTunnel, "mine")),
				Parameters: params("edge", "dns", v1alpha1.GatewayParametersSpec{DNS: &v1alpha1.BindingDNS{Mode: "ExternalDNS", ExternalDNS: &v1alpha1.ExternalDNSOptions{ProxiedKey: "proxied"}}})},
			dns: DNS{Mode: "ExternalDNS", ExternalDNS: &v1alpha1.ExternalDNSOptions{ProxiedKey: "proxied"}},
		},
		"TheAnnotationAndTheParametersAgree": {
			in: Input{Gateway: gateway(withParams("dns"), withAnnotations(v1alpha1.AnnotationDNS, "None")),
				Parameters: params("edge", "dns", v1alpha1.GatewayParametersSpec{DNS: &v1alpha1.BindingDNS{Mode: "None"}})},
			tunnel: &defaults, dns: DNS{Mode: "None"},
		},
		"TheAnnotationAndTheParametersDisagree": {
			in: Input{Gateway: gateway(withParams("dns"), withAnnotations(v1alpha1.AnnotationDNS, "None")),
				Parameters: params("edge", "dns", v1alpha1.GatewayParametersSpec{DNS: &v1alpha1.BindingDNS{Mode: "ExternalDNS"}})},
			refused: "annotation tunnels.cloudflare.com/dns says None and the GatewayParameters' dns.mode says ExternalDNS",
		},
		"ASharedTunnelWithANamespacedProviderConfig": {
			in:      Input{Gateway: gateway(allRoutes, withParams("big")), Parameters: params("edge", "big", big)},
			refused: "a shared tunnel takes its credentials from a ClusterProviderConfig",
		},
		"ASharedTunnelWithTheDefaultCredentials": {
			in:     Input{Gateway: gateway(allRoutes)},
			tunnel: &shared, dns: DNS{Mode: "DNSRecord"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			res := Translate(tc.in)
			if tc.refused != "" {
				if res.Accepted.Status != metav1.ConditionFalse || res.Accepted.Reason != string(gwv1.GatewayReasonInvalidParameters) || !strings.Contains(res.Accepted.Message, tc.refused) || !res.KeepAll {
					t.Errorf("want refused with %q, keeping all; got %+v, keepAll %v", tc.refused, res.Accepted, res.KeepAll)
				}
				return
			}
			if res.Accepted.Status != metav1.ConditionTrue {
				t.Fatalf("not accepted: %+v", res.Accepted)
			}
			var got *v1alpha1.CloudflareTunnelSpec
			if res.MakeTunnel != nil {
				got = &res.MakeTunnel.Spec
			}
			if diff := cmp.Diff(tc.tunnel, got); diff != "" {
				t.Errorf("made tunnel (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.dns, res.DNS); diff != "" {
				t.Errorf("dns (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSharing: the made tunnel is shared as the listeners admit routes;
// listeners selecting with different selectors share it with none.
func TestSharing(t *testing.T) {
	sel := func(k string) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchLabels: map[string]string{k: "yes"}}
	}
	listener := func(name string, from gwv1.FromNamespaces, s *metav1.LabelSelector) gwv1.Listener {
		// Listeners of one protocol need hostnames of their own, or they
		// are conflicted.
		return gwv1.Listener{Name: gwv1.SectionName(name), Port: 80, Protocol: gwv1.HTTPProtocolType, Hostname: ptr.To(gwv1.Hostname(name + ".example.com")),
			AllowedRoutes: &gwv1.AllowedRoutes{Namespaces: &gwv1.RouteNamespaces{From: ptr.To(from), Selector: s}}}
	}
	// conflicted listeners take no routes, so they share nothing.
	conflicted := func(l gwv1.Listener) gwv1.Listener {
		l.Hostname = ptr.To(gwv1.Hostname("same.example.com"))
		return l
	}
	cases := map[string]struct {
		listeners []gwv1.Listener
		want      *v1alpha1.AllowedNamespaces
		note      bool
	}{
		"Default":         {listeners: []gwv1.Listener{{Name: "http", Port: 80, Protocol: gwv1.HTTPProtocolType}}},
		"Same":            {listeners: []gwv1.Listener{listener("a", gwv1.NamespacesFromSame, nil)}},
		"AllOnAnyOne":     {listeners: []gwv1.Listener{listener("a", gwv1.NamespacesFromSelector, sel("x")), listener("b", gwv1.NamespacesFromAll, nil)}, want: &v1alpha1.AllowedNamespaces{From: "All"}},
		"OneSelector":     {listeners: []gwv1.Listener{listener("a", gwv1.NamespacesFromSelector, sel("x")), listener("b", gwv1.NamespacesFromSame, nil), listener("c", gwv1.NamespacesFromSelector, sel("x"))}, want: &v1alpha1.AllowedNamespaces{From: "Selector", Selector: sel("x")}},
		"TwoSelectors":    {listeners: []gwv1.Listener{listener("a", gwv1.NamespacesFromSelector, sel("x")), listener("b", gwv1.NamespacesFromSelector, sel("y"))}, note: true},
		"ConflictedAll":   {listeners: []gwv1.Listener{listener("a", gwv1.NamespacesFromSame, nil), conflicted(listener("b", gwv1.NamespacesFromAll, nil)), conflicted(listener("c", gwv1.NamespacesFromAll, nil))}},
		"NoSelector":      {listeners: []gwv1.Listener{listener("a", gwv1.NamespacesFromSelector, nil)}},
		"AListenerUnused": {listeners: []gwv1.Listener{{Name: "tcp", Port: 5432, Protocol: gwv1.TCPProtocolType, AllowedRoutes: &gwv1.AllowedRoutes{Namespaces: &gwv1.RouteNamespaces{From: ptr.To(gwv1.NamespacesFromAll)}}}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			res := Translate(Input{Gateway: gateway(func(gw *gwv1.Gateway) { gw.Spec.Listeners = tc.listeners })})
			if diff := cmp.Diff(tc.want, res.MakeTunnel.Spec.AllowedNamespaces); diff != "" {
				t.Errorf("allowedNamespaces (-want +got):\n%s", diff)
			}
			if got := strings.Contains(res.Accepted.Message, "different selectors"); got != tc.note {
				t.Errorf("Accepted message %q: says different selectors %v, want %v", res.Accepted.Message, got, tc.note)
			}
		})
	}
}

// TestClassAccepted: a class's parametersRef must name GatewayParameters
// that exist.
func TestClassAccepted(t *testing.T) {
	small := params("infra", "small", v1alpha1.GatewayParametersSpec{})
	cases := map[string]struct {
		class  *gwv1.GatewayClass
		params *v1alpha1.GatewayParameters
		want   string
	}{
		"NoParameters":  {class: class(nil), want: "True/Accepted"},
		"Found":         {class: class(classRef("infra", "small")), params: small, want: "True/Accepted"},
		"Missing":       {class: class(classRef("infra", "big")), params: small, want: "False/InvalidParameters"},
		"NoNamespace":   {class: class(classRef("", "small")), params: small, want: "False/InvalidParameters"},
		"AnotherKind":   {class: class(&gwv1.ParametersReference{Group: "example.com", Kind: "Settings", Name: "small", Namespace: ptr.To(gwv1.Namespace("infra"))}), params: small, want: "False/InvalidParameters"},
		"NotReadAtAll":  {class: class(classRef("infra", "small")), want: "False/InvalidParameters"},
		"AnotherGroupS": {class: class(&gwv1.ParametersReference{Group: "tunnels.cloudflare.com", Kind: "CloudflareTunnel", Name: "small", Namespace: ptr.To(gwv1.Namespace("infra"))}), params: small, want: "False/InvalidParameters"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := ClassAccepted(tc.class, tc.params)
			if got := string(c.Status) + "/" + c.Reason; got != tc.want || c.ObservedGeneration != 4 {
				t.Errorf("got %s (generation %d): %s; want %s", got, c.ObservedGeneration, c.Message, tc.want)
			}
		})
	}
}

// TestCopyTunnel: the Gateway's settings reach the made tunnel; what a
// user asks of the tunnel itself stays.
func TestCopyTunnel(t *testing.T) {
	res := Translate(Input{Gateway: gateway(withParams("p")), Parameters: params("edge", "p", v1alpha1.GatewayParametersSpec{Replicas: ptr.To(int32(4))})})
	cur := Translate(Input{Gateway: gateway()}).MakeTunnel
	cur.Spec.TokenRotation = &v1alpha1.TokenRotationRequest{RequestedAt: metav1.Unix(100, 0)}
	if !CopyTunnel(cur, res.MakeTunnel) {
		t.Fatal("CopyTunnel: no change, want replicas 4")
	}
	if ptr.Deref(cur.Spec.Replicas, 0) != 4 || cur.Spec.TokenRotation == nil || ptr.Deref(cur.Spec.TunnelName, "") != "edge-public" {
		t.Errorf("after CopyTunnel: %+v", cur.Spec)
	}
	if CopyTunnel(cur, res.MakeTunnel) {
		t.Error("CopyTunnel again: changed, want no change")
	}
}

// TestAnInvalidAccessAnnotationHolds: a route whose Access annotation
// cannot be used publishes nothing, and its hostnames are held (a
// protected one stays protected); another route naming one of them does
// not publish it meanwhile, and is told.
func TestAnInvalidAccessAnnotationHolds(t *testing.T) {
	webAPI := services(service("apps", "web", 8080), service("apps", "api", 9090))
	res := Translate(Input{Gateway: gateway(allRoutes), Services: webAPI, HTTPRoutes: []gwv1.HTTPRoute{
		withAnnotation(httpRoute("apps", "typo", 2, []string{"a.example.com", "b.example.com"}, pathRule(gwv1.PathMatchPathPrefix, "/", backendRef("web", 8080))), v1alpha1.AnnotationAccessPolicies, ""),
		httpRoute("apps", "other", 1, []string{"b.example.com", "c.example.com"}, pathRule(gwv1.PathMatchPathPrefix, "/api", backendRef("api", 9090))),
	}})
	if diff := cmp.Diff([]published{{Hostname: "c.example.com", Paths: []publishedPath{{"Prefix", "/api", apiURL}}}}, summary(res.Published)); diff != "" {
		t.Errorf("published (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a.example.com", "b.example.com"}, res.Held, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("held (-want +got):\n%s", diff)
	}
	want := map[string][]verdict{
		"apps/typo":  {{"Accepted": "False/UnsupportedValue", "ResolvedRefs": "True/ResolvedRefs"}},
		"apps/other": {{"Accepted": "True/Accepted", "ResolvedRefs": "True/ResolvedRefs", "PartiallyInvalid": "True/UnsupportedValue"}},
	}
	if diff := cmp.Diff(want, verdicts(res.Routes)); diff != "" {
		t.Errorf("route status (-want +got):\n%s", diff)
	}
	protected := &v1alpha1.PublicHostname{Spec: v1alpha1.PublicHostnameSpec{Access: &v1alpha1.Access{}}}
	optional := &v1alpha1.PublicHostname{Spec: v1alpha1.PublicHostnameSpec{Access: &v1alpha1.Access{Required: ptr.To(false)}}}
	if !Protected(protected) || Protected(optional) || Protected(&v1alpha1.PublicHostname{}) {
		t.Error("Protected: want true only for a required check")
	}
}
