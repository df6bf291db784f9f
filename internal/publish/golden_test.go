package publish

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/golden"
)

// TestGolden runs the corpus in testdata/golden: each <case>.in.yaml is a
// tunnel's PublicHostnames (a tunnel corpus, below), each <case>.out.yaml
// what Rules answers for each of them (problems, CA pools) and the
// tunnel's configuration Config makes of their claims (holders, lost
// claims, the ordered rules). `go test ./internal/publish -run Golden
// -update` rewrites the answers; review the diff.
func TestGolden(t *testing.T) {
	golden.Run(t, golden.Dir, 20, func(t *testing.T, in []byte) any {
		var c tunnelCorpus
		golden.Decode(t, in, &c)
		return c.answer(t)
	})
}

// tunnelCorpus is one case's input: the PublicHostnames claiming hostnames
// on one tunnel, and what resolving their origins depends on.
type tunnelCorpus struct {
	// Namespace of the tunnel; a PublicHostname without a namespace is of
	// it.
	Namespace     string `json:"namespace"`
	ClusterDomain string `json:"clusterDomain,omitempty"`
	// Services of the PublicHostnames' namespaces, for named ports.
	Services []corev1.Service `json:"services,omitempty"`
	// EndpointSlices of the Services, found by their service-name label.
	EndpointSlices  []discoveryv1.EndpointSlice `json:"endpointSlices,omitempty"`
	PublicHostnames []hostnameCorpus            `json:"publicHostnames,omitempty"`
}

type hostnameCorpus struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
	// Created orders the claims (the oldest holds a hostname); unset is
	// the same instant for all.
	Created metav1.Time                 `json:"created,omitempty"`
	Spec    v1alpha1.PublicHostnameSpec `json:"spec"`
}

// tunnelAnswer is a case's output.
type tunnelAnswer struct {
	// PublicHostnames that cannot be published, or mount a CA pool.
	PublicHostnames []hostnameAnswer `json:"publicHostnames,omitempty"`
	// Holders of each hostname, by claim name.
	Holders map[string]string `json:"holders,omitempty"`
	// Lost claims, each with the claim holding its hostname.
	Lost map[string]string `json:"lost,omitempty"`
	// Config is the tunnel's rules, in the order cloudflared tries them.
	Config []ztv1alpha1.IngressRule `json:"config"`
}

type hostnameAnswer struct {
	Name     string                            `json:"name"`
	CAPools  []v1alpha1.LocalSecretKeySelector `json:"caPools,omitempty"`
	Problems []problemAnswer                   `json:"problems,omitempty"`
}

type problemAnswer struct {
	Field      string `json:"field"`
	Message    string `json:"message"`
	WaitingFor string `json:"waitingFor,omitempty"`
}

func (c tunnelCorpus) answer(t *testing.T) tunnelAnswer {
	var out tunnelAnswer
	var claims []Claim
	for _, ph := range c.PublicHostnames {
		ns := ph.Namespace
		if ns == "" {
			ns = c.Namespace
		}
		res := Rules(ph.Spec, Env{Namespace: ns, ClusterDomain: c.ClusterDomain, Services: c.services(ns), EndpointSlices: c.slices(ns), TunnelNamespace: c.Namespace})
		name := ph.Name
		if ns != c.Namespace {
			name = ns + "/" + ph.Name
		}
		if a := (hostnameAnswer{Name: name, CAPools: res.CAPools, Problems: problems(res.Problems)}); len(a.CAPools)+len(a.Problems) > 0 {
			out.PublicHostnames = append(out.PublicHostnames, a)
		}
		host, _ := Hostname(ph.Spec.Hostname)
		claims = append(claims, Claim{Name: name, Hostname: host, Created: ph.Created, Rules: res.Rules})
	}
	d := Decide(claims)
	out.Holders, out.Lost = d.Holder, d.Lost
	out.Config = Config(claims).Ingress
	if diff := cmp.Diff(out.Config, Config(reversed(claims)).Ingress); diff != "" {
		t.Errorf("the configuration depends on the order of the claims:\n%s", diff)
	}
	return out
}

// services are the corpus's Services of namespace ns, by name.
func (c tunnelCorpus) services(ns string) map[string]*corev1.Service {
	out := map[string]*corev1.Service{}
	for i := range c.Services {
		if s := &c.Services[i]; s.Namespace == ns || s.Namespace == "" && ns == c.Namespace {
			out[s.Name] = s
		}
	}
	return out
}

// slices are the corpus's EndpointSlices of namespace ns, by Service name.
func (c tunnelCorpus) slices(ns string) map[string][]discoveryv1.EndpointSlice {
	out := map[string][]discoveryv1.EndpointSlice{}
	for _, s := range c.EndpointSlices {
		if s.Namespace == ns || s.Namespace == "" && ns == c.Namespace {
			svc := s.Labels[discoveryv1.LabelServiceName]
			out[svc] = append(out[svc], s)
		}
	}
	return out
}

func problems(ps []Problem) []problemAnswer {
	var out []problemAnswer
	for _, p := range ps {
		a := problemAnswer{Field: p.Field, Message: p.Message}
		if p.Waiting {
			a.WaitingFor = p.WaitingFor
		}
		out = append(out, a)
	}
	return out
}

func reversed(cs []Claim) []Claim {
	out := make([]Claim, 0, len(cs))
	for i := len(cs) - 1; i >= 0; i-- {
		out = append(out, cs[i])
	}
	return out
}
