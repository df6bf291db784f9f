package translate

import (
	"testing"

	"k8s.io/utils/ptr"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
)

func policies(names ...string) *v1alpha1.Access {
	a := &v1alpha1.Access{Required: ptr.To(true)}
	for _, n := range names {
		a.Policies = append(a.Policies, v1alpha1.AccessPolicyName{Name: n})
	}
	return a
}

// TestHeldKeepsOnlyProtected: a held PublicHostname stays only while it
// carries a required Access check.
func TestHeldKeepsOnlyProtected(t *testing.T) {
	held := Held{Routes: []string{"admin"}, PublicHostnames: []string{"by-name"}}
	ph := func(name, route string, a *v1alpha1.Access) *v1alpha1.PublicHostname {
		p := &v1alpha1.PublicHostname{Spec: v1alpha1.PublicHostnameSpec{Access: a}}
		p.Name, p.Labels = name, map[string]string{LabelRoute: route}
		return p
	}
	optional := policies("staff")
	optional.Required = ptr.To(false)
	cases := map[string]struct {
		ph   *v1alpha1.PublicHostname
		want bool
	}{
		"ProtectedByName":        {ph("by-name", "other", policies("staff")), true},
		"ProtectedByRoute":       {ph("x", "admin", &v1alpha1.Access{TeamName: "acme", AudTags: []string{"a"}}), true},
		"ProtectedButNotHeld":    {ph("x", "other", policies("staff")), false},
		"HeldButOpen":            {ph("by-name", "admin", nil), false},
		"HeldButTokensOptional":  {ph("by-name", "admin", optional), false},
		"RequiredDefaultsToTrue": {ph("by-name", "admin", &v1alpha1.Access{Policies: []v1alpha1.AccessPolicyName{{Name: "staff"}}}), true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := held.Keeps(tc.ph); got != tc.want {
				t.Errorf("Keeps = %v, want %v", got, tc.want)
			}
		})
	}
}
