package translate

import (
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/expose"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/golden"
)

// goldenInput is a case of testdata/golden/<case>.in.yaml: the Ingress
// translated (ingress), the CloudflareTunnel its annotation resolved to
// (tunnel, as the controller passes it; absent: the annotation alone), the
// Services of its namespace (services; absent: none looked at) and the
// cluster domain (clusterDomain). <case>.out.yaml is the Result.
type goldenInput struct {
	Ingress       *networkingv1.Ingress `json:"ingress"`
	Tunnel        expose.Tunnel         `json:"tunnel,omitempty"`
	Services      []corev1.Service      `json:"services,omitempty"`
	ClusterDomain string                `json:"clusterDomain,omitempty"`
}

func (g goldenInput) input() Input {
	in := Input{Ingress: g.Ingress, Tunnel: g.Tunnel, ClusterDomain: g.ClusterDomain}
	if g.Services != nil {
		in.Services = ServicesByName(&corev1.ServiceList{Items: g.Services})
	}
	return in
}

// goldenAnswer is a Result as the corpus reads it: each problem one line.
type goldenAnswer struct {
	expose.Result
	Problems []string `json:"problems,omitempty"`
}

func answer(r expose.Result) goldenAnswer {
	a := goldenAnswer{Result: r}
	for _, p := range r.Problems {
		a.Problems = append(a.Problems, p.String())
	}
	return a
}

func readGolden(t *testing.T, in []byte) goldenInput {
	var g goldenInput
	golden.Decode(t, in, &g)
	return g
}

// readGoldenCase reads the input of one case of the corpus.
func readGoldenCase(t *testing.T, c string) goldenInput {
	in, err := os.ReadFile(filepath.Join(golden.Dir, c+".in.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return readGolden(t, in)
}

// TestGolden translates every Ingress of the corpus.
func TestGolden(t *testing.T) {
	golden.Run(t, golden.Dir, 20, func(t *testing.T, in []byte) any {
		return answer(Translate(readGolden(t, in).input()))
	})
}
