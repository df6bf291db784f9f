package translate

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/golden"
)

// TestGolden runs the corpus in testdata/golden: each <case>.in.yaml is a
// binding and what it names (bindingCorpus, below), each <case>.out.yaml
// what Translate answers: the binding's conditions, the hostnames' states,
// the PublicHostnames wanted and what is kept or held. `go test
// ./internal/controller/source/gatewaybinding/translate -run Golden -update`
// rewrites the answers; review the diff.
func TestGolden(t *testing.T) {
	golden.Run(t, golden.Dir, 20, func(t *testing.T, in []byte) any {
		var c bindingCorpus
		golden.Decode(t, in, &c)
		return answerOf(Translate(c.input()))
	})
}

// bindingCorpus is Input as YAML: objects, not pointers to them.
type bindingCorpus struct {
	Binding v1alpha1.GatewayBinding `json:"binding"`
	// Gateway named by the binding; none when unset.
	Gateway *gwv1.Gateway `json:"gateway,omitempty"`
	// Class of the Gateway; none when unset.
	Class *gwv1.GatewayClass `json:"class,omitempty"`
	// HTTPRoutes and GRPCRoutes of the binding's namespace.
	HTTPRoutes []gwv1.HTTPRoute `json:"httpRoutes,omitempty"`
	GRPCRoutes []gwv1.GRPCRoute `json:"grpcRoutes,omitempty"`
	// OriginService named by the binding; none when unset.
	OriginService *corev1.Service `json:"originService,omitempty"`
	// Grants of the origin Service's namespace.
	Grants        []gwv1beta1.ReferenceGrant `json:"grants,omitempty"`
	ClusterDomain string                     `json:"clusterDomain,omitempty"`
}

func (c bindingCorpus) input() Input {
	return Input{Binding: &c.Binding, Gateway: c.Gateway, Class: c.Class, HTTPRoutes: c.HTTPRoutes, GRPCRoutes: c.GRPCRoutes,
		OriginService: c.OriginService, Grants: c.Grants, ClusterDomain: c.ClusterDomain}
}

// bindingAnswer is Result as YAML.
type bindingAnswer struct {
	Accepted     conditionAnswer          `json:"accepted"`
	ResolvedRefs conditionAnswer          `json:"resolvedRefs"`
	Hostnames    []v1alpha1.BoundHostname `json:"hostnames,omitempty"`
	Published    []child                  `json:"published,omitempty"`
	KeepExisting bool                     `json:"keepExisting,omitempty"`
	KeepRoutes   []string                 `json:"keepRoutes,omitempty"`
	HeldRoutes   []string                 `json:"heldRoutes,omitempty"`
	// HeldPublicHostnames are held by name.
	HeldPublicHostnames []string `json:"heldPublicHostnames,omitempty"`
	Refused             []string `json:"refused,omitempty"`
	// Kept are kept as they are, by name.
	Kept []string `json:"kept,omitempty"`
}

type conditionAnswer struct {
	OK      bool   `json:"ok"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// child is a PublicHostname made for the binding, without what the API
// server fills in.
type child struct {
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels,omitempty"`
	// Controller is its controller's kind, name and UID.
	Controller string                      `json:"controller,omitempty"`
	Spec       v1alpha1.PublicHostnameSpec `json:"spec"`
}

func answerOf(res Result) bindingAnswer {
	out := bindingAnswer{
		Accepted: conditionAnswer(res.Accepted), ResolvedRefs: conditionAnswer(res.ResolvedRefs),
		Hostnames: res.Hostnames, KeepExisting: res.KeepExisting, KeepRoutes: res.KeepRoutes,
		HeldRoutes: res.Held.Routes, HeldPublicHostnames: res.Held.PublicHostnames, Refused: res.Refused, Kept: res.Kept,
	}
	for _, ph := range res.Published {
		c := child{Name: ph.Name, Labels: ph.Labels, Spec: ph.Spec}
		if o := metav1.GetControllerOf(ph); o != nil {
			c.Controller = o.Kind + " " + o.Name + " (" + string(o.UID) + ")"
		}
		out.Published = append(out.Published, c)
	}
	return out
}
