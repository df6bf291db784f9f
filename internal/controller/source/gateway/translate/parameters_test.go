package translate

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

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
