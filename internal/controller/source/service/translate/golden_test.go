package translate

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/expose"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/golden"
)

// goldenInput is a case of testdata/golden/<case>.in.yaml: the Service
// translated (service), the CloudflareTunnel its annotation resolved to
// (tunnel, as the controller passes it; its providerConfigRef is the
// routes' too) and the cluster domain (clusterDomain). <case>.out.yaml is
// both translations of it: privateRoutes (PrivateRoutes) and exposure
// (Expose).
type goldenInput struct {
	Service       *corev1.Service `json:"service"`
	Tunnel        expose.Tunnel   `json:"tunnel,omitempty"`
	ClusterDomain string          `json:"clusterDomain,omitempty"`
}

// goldenAnswer is both translations as the corpus reads them: each
// problem one line.
type goldenAnswer struct {
	PrivateRoutes goldenRoutes   `json:"privateRoutes"`
	Exposure      goldenExposure `json:"exposure"`
}

type goldenRoutes struct {
	Result
	Problems []string `json:"problems,omitempty"`
}

type goldenExposure struct {
	Exposure
	Problems []string `json:"problems,omitempty"`
}

// TestGolden translates every Service of the corpus.
func TestGolden(t *testing.T) {
	golden.Run(t, golden.Dir, 20, func(t *testing.T, in []byte) any {
		var g goldenInput
		golden.Decode(t, in, &g)
		routes := PrivateRoutes(Input{Service: g.Service, ProviderConfigRef: g.Tunnel.ProviderConfigRef})
		exposure := Expose(ExposeInput{Service: g.Service, Tunnel: g.Tunnel, ClusterDomain: g.ClusterDomain})
		a := goldenAnswer{PrivateRoutes: goldenRoutes{Result: routes}, Exposure: goldenExposure{Exposure: exposure}}
		for _, p := range routes.Problems {
			// The message names its annotation: it is the event's text.
			a.PrivateRoutes.Problems = append(a.PrivateRoutes.Problems, p.Message)
		}
		for _, p := range exposure.Problems {
			a.Exposure.Problems = append(a.Exposure.Problems, p.String())
		}
		return a
	})
}
