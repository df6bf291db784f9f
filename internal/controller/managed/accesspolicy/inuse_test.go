package accesspolicy

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
)

func TestUses(t *testing.T) {
	app := func(ns string, ps ...v1alpha1.AccessApplicationPolicy) *v1alpha1.AccessApplication {
		return &v1alpha1.AccessApplication{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app"}, Spec: v1alpha1.AccessApplicationSpec{ForProvider: v1alpha1.AccessApplicationParameters{Policies: ps}}}
	}
	ref := func(ns, name string) v1alpha1.AccessApplicationPolicy {
		return v1alpha1.AccessApplicationPolicy{PolicyIDRef: &xpv2.NamespacedReference{Namespace: ns, Name: name}}
	}
	cases := map[string]struct {
		app  *v1alpha1.AccessApplication
		want bool
	}{
		"ByIDAnywhere":               {app("apps", v1alpha1.AccessApplicationPolicy{PolicyID: ptr.To("p1")}), true},
		"AnotherID":                  {app("platform", v1alpha1.AccessApplicationPolicy{PolicyID: ptr.To("p2")}), false},
		"ByReferenceInItsNamespace":  {app("platform", ref("", "staff")), true},
		"ByReferenceFromAnother":     {app("apps", ref("platform", "staff")), true},
		"SameNameInAnotherNamespace": {app("apps", ref("", "staff")), false},
		"AnotherName":                {app("platform", ref("", "admins")), false},
		"SecondOfTwo":                {app("platform", ref("", "admins"), ref("platform", "staff")), true},
		"NoPolicies":                 {app("platform"), false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := uses(tc.app, "platform", "staff", "p1"); got != tc.want {
				t.Errorf("uses = %v, want %v", got, tc.want)
			}
		})
	}
}
