package rules

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/common"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
)

// A rule naming a group or service token by reference or selector is
// unresolved until its ID is set; rules of other kinds never are.
func TestUnresolved(t *testing.T) {
	ref := &xpv2.NamespacedReference{Name: "x"}
	sel := &xpv2.NamespacedSelector{MatchLabels: map[string]string{"a": "b"}}
	cases := map[string]struct {
		include, exclude, require []v1alpha1.AccessRule
		want                      []string
	}{
		"None": {include: []v1alpha1.AccessRule{{Email: ptr.To("a@example.com")}, {GroupID: ptr.To("g")}}},
		"GroupRefWaits": {
			include: []v1alpha1.AccessRule{{Email: ptr.To("a@example.com")}, {GroupRef: ref}},
			want:    []string{"include[1].groupRef"},
		},
		"ResolvedRefs": {include: []v1alpha1.AccessRule{{GroupRef: ref, GroupID: ptr.To("g")}, {ServiceTokenRef: ref, ServiceTokenID: ptr.To("t")}}},
		"EmptyIDWaits": {exclude: []v1alpha1.AccessRule{{ServiceTokenRef: ref, ServiceTokenID: ptr.To("")}}, want: []string{"exclude[0].serviceTokenRef"}},
		"SelectorsWait": {
			exclude: []v1alpha1.AccessRule{{GroupSelector: sel}},
			require: []v1alpha1.AccessRule{{ServiceTokenSelector: sel}},
			want:    []string{"exclude[0].groupRef", "require[0].serviceTokenRef"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Unresolved(tc.include, tc.exclude, tc.require)); diff != "" {
				t.Errorf("Unresolved(): -want +got:\n%s", diff)
			}
			err := Resolved(tc.include, tc.exclude, tc.require)
			if (err == nil) != (len(tc.want) == 0) {
				t.Fatalf("Resolved() = %v, want an error exactly when a rule waits", err)
			}
			if err != nil {
				if r := err.(*UnresolvedError).ConditionReason(); r != common.ReasonUnresolvedReference {
					t.Errorf("reason %q, want %q", r, common.ReasonUnresolvedReference)
				}
			}
		})
	}
}

// Lists.Diff reports each list that differs in meaning, not in key order.
func TestListsDiff(t *testing.T) {
	want := Translate([]v1alpha1.AccessRule{{Email: ptr.To("a@example.com")}}, nil, []v1alpha1.AccessRule{{Country: ptr.To("NL")}})
	cases := map[string]struct {
		got  Lists
		want []string
	}{
		"Same": {got: Lists{Include: want.Include, Require: want.Require}},
		"ExcludeAddedInCloudflare": {
			got:  Lists{Include: want.Include, Exclude: Rules([]v1alpha1.AccessRule{{Everyone: ptr.To(true)}}), Require: want.Require},
			want: []string{`exclude: [{"everyone":{}}] in Cloudflare, [] desired`},
		},
		"RequireDropped": {
			got:  Lists{Include: want.Include},
			want: []string{`require: [] in Cloudflare, [{"geo":{"country_code":"NL"}}] desired`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, want.Diff(tc.got)); diff != "" {
				t.Errorf("Diff(): -want +got:\n%s", diff)
			}
		})
	}
}

// References and selectors name the namespaces they point into.
func TestReferenceNamespaces(t *testing.T) {
	rs := []v1alpha1.AccessRule{
		{GroupRef: &xpv2.NamespacedReference{Name: "g", Namespace: "other"}},
		{ServiceTokenSelector: &xpv2.NamespacedSelector{Namespace: "third"}},
		{Email: ptr.To("a@example.com")},
	}
	var got []string
	for _, ns := range ReferenceNamespaces(rs) {
		if ns != nil {
			got = append(got, *ns)
		}
	}
	if diff := cmp.Diff([]string{"other", "third"}, got); diff != "" {
		t.Errorf("ReferenceNamespaces(): -want +got:\n%s", diff)
	}
}
