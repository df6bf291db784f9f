package sharing

import (
	"testing"

	"k8s.io/utils/ptr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
)

func grant(from, name string, mutate ...func(*gwv1beta1.ReferenceGrant)) gwv1beta1.ReferenceGrant {
	g := gwv1beta1.ReferenceGrant{Spec: gwv1beta1.ReferenceGrantSpec{
		From: []gwv1beta1.ReferenceGrantFrom{{Group: v1alpha1.Group, Kind: gwv1.Kind(v1alpha1.GatewayBindingKind), Namespace: gwv1.Namespace(from)}},
		To:   []gwv1beta1.ReferenceGrantTo{{Kind: "Service"}},
	}}
	if name != "" {
		g.Spec.To[0].Name = ptr.To(gwv1.ObjectName(name))
	}
	for _, m := range mutate {
		m(&g)
	}
	return g
}

func TestServiceGranted(t *testing.T) {
	cases := map[string]struct {
		grants []gwv1beta1.ReferenceGrant
		want   bool
	}{
		"NoGrant":                {},
		"EveryService":           {grants: []gwv1beta1.ReferenceGrant{grant("apps", "")}, want: true},
		"ThisService":            {grants: []gwv1beta1.ReferenceGrant{grant("apps", "traefik")}, want: true},
		"AnotherService":         {grants: []gwv1beta1.ReferenceGrant{grant("apps", "envoy")}},
		"AnotherNamespace":       {grants: []gwv1beta1.ReferenceGrant{grant("other", "")}},
		"AnotherKindFrom":        {grants: []gwv1beta1.ReferenceGrant{grant("apps", "", func(g *gwv1beta1.ReferenceGrant) { g.Spec.From[0].Kind = "HTTPRoute" })}},
		"AnotherGroupFrom":       {grants: []gwv1beta1.ReferenceGrant{grant("apps", "", func(g *gwv1beta1.ReferenceGrant) { g.Spec.From[0].Group = gwv1.GroupName })}},
		"SecretsNotServices":     {grants: []gwv1beta1.ReferenceGrant{grant("apps", "", func(g *gwv1beta1.ReferenceGrant) { g.Spec.To[0].Kind = "Secret" })}},
		"AServiceOfAnotherGroup": {grants: []gwv1beta1.ReferenceGrant{grant("apps", "", func(g *gwv1beta1.ReferenceGrant) { g.Spec.To[0].Group = "example.com" })}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := ServiceGranted(tc.grants, "apps", "traefik"); got != tc.want {
				t.Errorf("ServiceGranted = %v, want %v", got, tc.want)
			}
		})
	}
}
