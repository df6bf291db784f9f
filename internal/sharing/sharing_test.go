package sharing

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
)

func TestParse(t *testing.T) {
	cases := map[string]struct {
		in      string
		want    Ref
		problem bool
	}{
		"OwnNamespace":       {in: "edge", want: Ref{Namespace: "team-a", Name: "edge"}},
		"Trimmed":            {in: " edge ", want: Ref{Namespace: "team-a", Name: "edge"}},
		"AnotherNamespace":   {in: "platform/edge", want: Ref{Namespace: "platform", Name: "edge"}},
		"OwnNamespaceByName": {in: "team-a/edge", want: Ref{Namespace: "team-a", Name: "edge"}},
		"BadNamespace":       {in: "Platform/edge", problem: true},
		"NoName":             {in: "platform/", problem: true},
		"NoNamespace":        {in: "/edge", problem: true},
		"TwoSlashes":         {in: "a/b/c", problem: true},
		"Empty":              {in: "", problem: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, problem := Parse(tc.in, "team-a")
			if (problem != "") != tc.problem {
				t.Fatalf("Parse(%q): problem %q, want a problem: %v", tc.in, problem, tc.problem)
			}
			if diff := cmp.Diff(tc.want, got); !tc.problem && diff != "" {
				t.Errorf("Parse(%q): -want, +got:\n%s", tc.in, diff)
			}
		})
	}
}

func TestAllows(t *testing.T) {
	tunnel := func(a *v1alpha1.AllowedNamespaces) *v1alpha1.CloudflareTunnel {
		return &v1alpha1.CloudflareTunnel{ObjectMeta: metav1.ObjectMeta{Namespace: "platform", Name: "edge"}, Spec: v1alpha1.CloudflareTunnelSpec{AllowedNamespaces: a}}
	}
	shared := map[string]string{"tunnels.example.com/shared": "true"}
	selector := &v1alpha1.AllowedNamespaces{From: v1alpha1.NamespacesFromSelector, Selector: &metav1.LabelSelector{MatchLabels: shared}}
	cases := map[string]struct {
		cft    *v1alpha1.CloudflareTunnel
		ns     string
		labels map[string]string
		want   bool
	}{
		"ItsOwnNamespaceAlways":      {cft: tunnel(nil), ns: "platform", want: true},
		"OthersNotByDefault":         {cft: tunnel(nil), ns: "team-a", want: false},
		"OthersNotWithSame":          {cft: tunnel(&v1alpha1.AllowedNamespaces{From: v1alpha1.NamespacesFromSame}), ns: "team-a", want: false},
		"All":                        {cft: tunnel(&v1alpha1.AllowedNamespaces{From: v1alpha1.NamespacesFromAll}), ns: "team-a", want: true},
		"SelectorMatches":            {cft: tunnel(selector), ns: "team-a", labels: shared, want: true},
		"SelectorDoesNotMatch":       {cft: tunnel(selector), ns: "team-b", labels: map[string]string{"other": "x"}, want: false},
		"SelectorWithoutLabels":      {cft: tunnel(selector), ns: "team-b", want: false},
		"SelectorOwnNamespaceAlways": {cft: tunnel(selector), ns: "platform", want: true},
		"SelectorMissingFailsClosed": {cft: tunnel(&v1alpha1.AllowedNamespaces{From: v1alpha1.NamespacesFromSelector}), ns: "team-a", labels: shared, want: false},
		"BadSelectorFailsClosed": {cft: tunnel(&v1alpha1.AllowedNamespaces{From: v1alpha1.NamespacesFromSelector, Selector: &metav1.LabelSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "x", Operator: "Bogus"}}}}), ns: "team-a", labels: shared, want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Allows(tc.cft, tc.ns, tc.labels); got != tc.want {
				t.Errorf("Allows(%s): %v, want %v", tc.ns, got, tc.want)
			}
		})
	}
}
