package translate

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/golden"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
)

// TestGolden runs the corpus in testdata/golden: each <case>.in.yaml is a
// Gateway and what it names (gatewayCorpus, below), each <case>.out.yaml
// what Translate answers (the made tunnel, the Gateway's and listeners'
// conditions, the PublicHostnames, the routes' parent entries, what is
// kept or held) with the rules cloudflared would try for the
// PublicHostnames, in order (without their Access checks). `go test
// ./internal/controller/source/gateway/translate -run Golden -update`
// rewrites the answers; review the diff.
func TestGolden(t *testing.T) {
	golden.Run(t, golden.Dir, 20, func(t *testing.T, in []byte) any {
		var c gatewayCorpus
		golden.Decode(t, in, &c)
		return withoutNulls(t, c.answer())
	})
}

// gatewayCorpus is Input as YAML (objects in lists, not in maps keyed by
// name), with what the controller adds around Translate: the tunnel's
// state for the Gateway's status, and the tunnel's answers to the
// Gateway's PublicHostnames for the routes' lost hostnames.
type gatewayCorpus struct {
	Gateway    gwv1.Gateway                `json:"gateway"`
	Class      *gwv1.GatewayClass          `json:"class,omitempty"`
	Parameters *v1alpha1.GatewayParameters `json:"parameters,omitempty"`
	HTTPRoutes []gwv1.HTTPRoute            `json:"httpRoutes,omitempty"`
	GRPCRoutes []gwv1.GRPCRoute            `json:"grpcRoutes,omitempty"`
	// Namespaces' labels, for listeners that select namespaces by label.
	Namespaces map[string]map[string]string `json:"namespaces,omitempty"`
	Services   []corev1.Service             `json:"services,omitempty"`
	// EndpointSlices of the headless Services, found by their
	// service-name label.
	EndpointSlices []discoveryv1.EndpointSlice `json:"endpointSlices,omitempty"`
	// Grants are ReferenceGrants, each of the namespace in its metadata.
	Grants        []gwv1beta1.ReferenceGrant `json:"grants,omitempty"`
	ClusterDomain string                     `json:"clusterDomain,omitempty"`
	// Certificates are the Secrets the listeners name that exist.
	Certificates []corev1.Secret `json:"certificates,omitempty"`
	// Tunnel is the CloudflareTunnel's state; when set, the answer holds
	// the Gateway's status.
	Tunnel *tunnelCorpus `json:"tunnel,omitempty"`
	// Answered are the Gateway's PublicHostnames with their tunnel's
	// answers; those lost to another claim are shown on the routes.
	Answered []v1alpha1.PublicHostname `json:"answered,omitempty"`
}

type tunnelCorpus struct {
	Found   bool   `json:"found,omitempty"`
	Problem string `json:"problem,omitempty"`
	ID      string `json:"id,omitempty"`
	Ready   bool   `json:"ready,omitempty"`
	Message string `json:"message,omitempty"`
}

func (c gatewayCorpus) input() Input {
	in := Input{Gateway: &c.Gateway, Class: c.Class, Parameters: c.Parameters, HTTPRoutes: c.HTTPRoutes, GRPCRoutes: c.GRPCRoutes,
		Namespaces: c.Namespaces, ClusterDomain: c.ClusterDomain, Services: map[types.NamespacedName]*corev1.Service{}, Grants: map[string][]gwv1beta1.ReferenceGrant{}}
	for i := range c.Services {
		s := &c.Services[i]
		in.Services[types.NamespacedName{Namespace: s.Namespace, Name: s.Name}] = s
	}
	in.EndpointSlices = map[types.NamespacedName][]discoveryv1.EndpointSlice{}
	for _, s := range c.EndpointSlices {
		key := types.NamespacedName{Namespace: s.Namespace, Name: s.Labels[discoveryv1.LabelServiceName]}
		in.EndpointSlices[key] = append(in.EndpointSlices[key], s)
	}
	for _, g := range c.Grants {
		in.Grants[g.Namespace] = append(in.Grants[g.Namespace], g)
	}
	in.Certificates = map[types.NamespacedName]*corev1.Secret{}
	for i := range c.Certificates {
		s := &c.Certificates[i]
		in.Certificates[types.NamespacedName{Namespace: s.Namespace, Name: s.Name}] = s
	}
	return in
}

// gatewayAnswer is Result as YAML, with the rules and status above.
type gatewayAnswer struct {
	Tunnel     string                   `json:"tunnel"`
	MakeTunnel *tunnelChild             `json:"makeTunnel,omitempty"`
	Accepted   metav1.Condition         `json:"accepted"`
	Listeners  []gwv1.ListenerStatus    `json:"listeners,omitempty"`
	Status     *gwv1.GatewayStatus      `json:"status,omitempty"`
	DNS        dnsAnswer                `json:"dns"`
	Published  []hostnameChild          `json:"published,omitempty"`
	Rules      []ztv1alpha1.IngressRule `json:"rules,omitempty"`
	// RuleProblems are the published PublicHostnames' problems: a
	// translation that publishes what cannot be used.
	RuleProblems []string          `json:"ruleProblems,omitempty"`
	KeepAll      bool              `json:"keepAll,omitempty"`
	Keep         []string          `json:"keep,omitempty"`
	Held         []string          `json:"held,omitempty"`
	Lost         map[string]string `json:"lost,omitempty"`
	HTTPRoutes   []routeAnswer     `json:"httpRoutes,omitempty"`
	GRPCRoutes   []routeAnswer     `json:"grpcRoutes,omitempty"`
}

type dnsAnswer struct {
	Mode        string                       `json:"mode"`
	ExternalDNS *v1alpha1.ExternalDNSOptions `json:"externalDNS,omitempty"`
}

// tunnelChild and hostnameChild are what the Gateway makes, without what
// the API server fills in.
type tunnelChild struct {
	Name       string                        `json:"name"`
	Labels     map[string]string             `json:"labels,omitempty"`
	Controller string                        `json:"controller,omitempty"`
	Spec       v1alpha1.CloudflareTunnelSpec `json:"spec"`
}

type hostnameChild struct {
	Name       string                      `json:"name"`
	Labels     map[string]string           `json:"labels,omitempty"`
	Controller string                      `json:"controller,omitempty"`
	Spec       v1alpha1.PublicHostnameSpec `json:"spec"`
}

type routeAnswer struct {
	Route     string                   `json:"route"`
	Hostnames []string                 `json:"hostnames,omitempty"`
	Parents   []gwv1.RouteParentStatus `json:"parents"`
}

func (c gatewayCorpus) answer() gatewayAnswer {
	res := Translate(c.input())
	out := gatewayAnswer{Tunnel: res.Tunnel, Accepted: res.Accepted, Listeners: res.Listeners, DNS: dnsAnswer(res.DNS),
		KeepAll: res.KeepAll, Keep: res.Keep, Held: res.Held}
	// While the Gateway is refused the controller keeps its tunnel as it
	// is, and makes none.
	if t := res.MakeTunnel; t != nil && !res.KeepAll {
		out.MakeTunnel = &tunnelChild{Name: t.Name, Labels: t.Labels, Controller: controllerOf(t), Spec: t.Spec}
	}
	if c.Tunnel != nil {
		st := Status(&c.Gateway, res, TunnelState(*c.Tunnel))
		out.Status = &st
	}
	var rules [][]ztv1alpha1.IngressRule
	for _, ph := range res.Published {
		out.Published = append(out.Published, hostnameChild{Name: ph.Name, Labels: ph.Labels, Controller: controllerOf(ph), Spec: ph.Spec})
		// Without the Access check: the PublicHostname's controller turns
		// its AccessPolicies into the team and audience tags the rules
		// carry.
		spec := ph.Spec.DeepCopy()
		spec.Access = nil
		r := publish.Rules(*spec, publish.Env{Namespace: ph.Namespace, ClusterDomain: c.ClusterDomain})
		for _, p := range r.Problems {
			out.RuleProblems = append(out.RuleProblems, ph.Spec.Hostname+": "+p.String())
		}
		rules = append(rules, r.Rules)
	}
	if len(rules) > 0 {
		out.Rules = publish.TunnelConfig(rules...).Ingress
	}
	if len(c.Answered) > 0 {
		answered := make([]*v1alpha1.PublicHostname, len(c.Answered))
		for i := range c.Answered {
			answered[i] = &c.Answered[i]
		}
		out.Lost = Lost(answered, res.Tunnel)
		ShowLost(res.Routes, out.Lost)
		ShowLost(res.GRPCRoutes, out.Lost)
	}
	out.HTTPRoutes, out.GRPCRoutes = routeAnswers(res.Routes), routeAnswers(res.GRPCRoutes)
	return out
}

func controllerOf(o metav1.Object) string {
	if r := metav1.GetControllerOf(o); r != nil {
		return r.Kind + " " + r.Name + " (" + string(r.UID) + ")"
	}
	return ""
}

func routeAnswers(sts []RouteStatus) []routeAnswer {
	var out []routeAnswer
	for _, st := range sts {
		out = append(out, routeAnswer{Route: string(st.Kind) + " " + st.Namespace + "/" + st.Name, Hostnames: st.Hostnames, Parents: st.Parents})
	}
	return out
}

// withoutNulls is v without its null fields (a condition's unset
// lastTransitionTime), which say nothing.
func withoutNulls(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return dropNulls(out)
}

func dropNulls(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if e == nil {
				delete(x, k)
				continue
			}
			x[k] = dropNulls(e)
		}
	case []any:
		for i := range x {
			x[i] = dropNulls(x[i])
		}
	}
	return v
}
