package annotation

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
)

func TestAccess(t *testing.T) {
	const (
		policies = v1alpha1.AnnotationAccessPolicies
		team     = v1alpha1.AnnotationAccessTeam
		aud      = v1alpha1.AnnotationAccessAudTags
		required = v1alpha1.AnnotationAccessRequired
	)
	tag := strings.Repeat("ab", 32)
	cases := map[string]struct {
		ann      map[string]string
		want     *v1alpha1.Access
		problems []string // the annotations named
	}{
		"None":                 {ann: map[string]string{"other": "x"}},
		"Policies":             {ann: map[string]string{policies: " staff, admins ,"}, want: &v1alpha1.Access{Required: ptr.To(true), Policies: []v1alpha1.AccessPolicyName{{Name: "staff"}, {Name: "admins"}}}},
		"PoliciesNotRequired":  {ann: map[string]string{policies: "staff", required: "false"}, want: &v1alpha1.Access{Required: ptr.To(false), Policies: []v1alpha1.AccessPolicyName{{Name: "staff"}}}},
		"ASharedPolicy":        {ann: map[string]string{policies: "platform/employees, staff"}, want: &v1alpha1.Access{Required: ptr.To(true), Policies: []v1alpha1.AccessPolicyName{{Name: "employees", Namespace: "platform"}, {Name: "staff"}}}},
		"APolicyTwice":         {ann: map[string]string{policies: "staff, admins, staff"}, problems: []string{policies}},
		"ABadNamespace":        {ann: map[string]string{policies: "Platform_Team/employees"}, problems: []string{policies}},
		"TwoSlashes":           {ann: map[string]string{policies: "a/b/c"}, problems: []string{policies}},
		"NoPolicyIsNoWayOut":   {ann: map[string]string{policies: " , "}, problems: []string{policies}},
		"ABadPolicyName":       {ann: map[string]string{policies: "staff,Not_A_Name"}, problems: []string{policies}},
		"BothKinds":            {ann: map[string]string{policies: "staff", team: "acme", aud: tag}, problems: []string{policies}},
		"Explicit":             {ann: map[string]string{team: "acme", aud: strings.ToUpper(tag)}, want: &v1alpha1.Access{Required: ptr.To(true), TeamName: "acme", AudTags: []string{tag}}},
		"ExplicitWithoutTeam":  {ann: map[string]string{aud: tag}, problems: []string{team}},
		"ExplicitWithBadTags":  {ann: map[string]string{team: "acme", aud: "short,"}, problems: []string{aud}},
		"RequiredAlone":        {ann: map[string]string{required: "false"}, problems: []string{team, aud}},
		"RequiredNotABool":     {ann: map[string]string{policies: "staff", required: "maybe"}, problems: []string{required}},
		"ATeamThatIsNotALabel": {ann: map[string]string{team: "Acme Corp", aud: tag}, problems: []string{team}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := Read(tc.ann)
			got := r.Access()
			var named []string
			for _, p := range r.Problems {
				named = append(named, p.Field)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Access (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.problems, named); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			if HasAccess(tc.ann) != (tc.want != nil || len(tc.problems) > 0) {
				t.Errorf("HasAccess = %v with %v", HasAccess(tc.ann), tc.ann)
			}
		})
	}
}
