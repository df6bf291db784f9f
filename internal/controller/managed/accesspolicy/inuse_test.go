package accesspolicy

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
)

// TestUsers: a policy is in use only by applications that may use it and
// link it at Cloudflare; those of other namespaces are counted, never named.
func TestUsers(t *testing.T) {
	app := func(ns, name string, linked []string, ps ...v1alpha1.AccessApplicationPolicy) *v1alpha1.AccessApplication {
		a := &v1alpha1.AccessApplication{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1alpha1.AccessApplicationSpec{ForProvider: v1alpha1.AccessApplicationParameters{Policies: ps}}}
		a.Status.AtProvider.PolicyIDs = linked
		return a
	}
	ref := func(ns, name string) v1alpha1.AccessApplicationPolicy {
		return v1alpha1.AccessApplicationPolicy{PolicyIDRef: &xpv2.NamespacedReference{Namespace: ns, Name: name}}
	}
	byID := v1alpha1.AccessApplicationPolicy{PolicyID: ptr.To("p1")}
	nsObj := func(name string, labels map[string]string) *corev1.Namespace {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	}
	selected := &v1alpha1.AllowedNamespaces{From: "Selector", Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"staff": "yes"}}}
	cases := map[string]struct {
		allowed *v1alpha1.AllowedNamespaces
		apps    []client.Object
		want    Use
	}{
		"LinkedInItsNamespace":            {apps: []client.Object{app("platform", "grafana", []string{"p0", "p1"}, ref("", "staff"))}, want: Use{Names: []string{"AccessApplication platform/grafana"}}},
		"NamedButNeverMade":               {apps: []client.Object{app("platform", "grafana", nil, ref("", "staff"))}},
		"ByIDFromAnotherNamespaceRefused": {apps: []client.Object{app("apps", "wedge", nil, byID)}},
		"ByIDFromAnUnsharedNamespace":     {apps: []client.Object{app("apps", "wedge", []string{"p1"}, byID)}},
		"AnotherPolicyLinked":             {apps: []client.Object{app("platform", "grafana", []string{"p2"}, ref("", "staff"))}},
		"SharedWithAll": {allowed: &v1alpha1.AllowedNamespaces{From: "All"},
			apps: []client.Object{app("apps", "a", []string{"p1"}, ref("platform", "staff")), app("tools", "b", []string{"p1"}, byID), app("platform", "c", []string{"p1"}, ref("", "staff"))},
			want: Use{Names: []string{"AccessApplication platform/c"}, Others: 2}},
		"SharedBySelector": {allowed: selected,
			apps: []client.Object{app("apps", "a", []string{"p1"}, byID), app("tools", "b", []string{"p1"}, byID)},
			want: Use{Others: 1}},
	}
	s := runtime.NewScheme()
	_ = corev1.AddToScheme(s)
	_ = v1alpha1.SchemeBuilder.AddToScheme(s)
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objs := append([]client.Object{nsObj("platform", nil), nsObj("apps", map[string]string{"staff": "yes"}), nsObj("tools", nil)}, tc.apps...)
			kube := fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).Build()
			pol := &v1alpha1.AccessPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "platform", Name: "staff"}, Spec: v1alpha1.AccessPolicySpec{AllowedNamespaces: tc.allowed}}
			got, err := Users(context.Background(), kube, pol, "p1")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Users (-want +got):\n%s", diff)
			}
			if msg := (&InUseError{ID: "p1", Use: got}).Error(); strings.Contains(msg, "apps/") || strings.Contains(msg, "tools/") {
				t.Errorf("%q names another namespace's object", msg)
			}
		})
	}
}
