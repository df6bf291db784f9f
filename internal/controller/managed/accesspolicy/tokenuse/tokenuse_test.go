package tokenuse

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

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/common"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/mr"
)

func TestCondition(t *testing.T) {
	on, off := ptr.To(true), ptr.To(false)
	present := []Named{{ID: "t-1", Holder: "ns/ci"}}
	deleted := []Named{{ID: "t-1", Holder: "ns/ci"}, {ID: "t-2", Holder: "ns/monitor", Deleted: true}}
	cases := map[string]struct {
		use       Use
		status    corev1.ConditionStatus
		reason    xpv2.ConditionReason
		inMessage string
	}{
		"NoTokens":                 {use: Use{Decision: "allow", Strict: on}, status: "True", reason: v1alpha1.ReasonNoServiceTokens},
		"ServiceAuth":              {use: Use{Decision: "non_identity", Named: present, Strict: on}, status: "True", reason: v1alpha1.ReasonServiceTokensEffective},
		"ServiceAuthAnyValid":      {use: Use{Decision: "non_identity", AnyValid: true}, status: "True", reason: v1alpha1.ReasonServiceTokensEffective},
		"AllowUnderStrict":         {use: Use{Decision: "allow", Named: present, Strict: on}, status: "False", reason: v1alpha1.ReasonStrictServiceTokenAuth, inMessage: "non_identity"},
		"AllowAnyValidUnderStrict": {use: Use{Decision: "allow", AnyValid: true, Strict: on}, status: "False", reason: v1alpha1.ReasonStrictServiceTokenAuth},
		"AllowLenient":             {use: Use{Decision: "allow", Named: present, Strict: off}, status: "True", reason: v1alpha1.ReasonLenientServiceTokenAuth, inMessage: "also logs in"},
		"AllowStrictUnanswered":    {use: Use{Decision: "allow", Named: present}, status: "True", reason: v1alpha1.ReasonLenientServiceTokenAuth, inMessage: "did not say"},
		"DeletedFirst":             {use: Use{Decision: "allow", Named: deleted, Strict: on}, status: "False", reason: v1alpha1.ReasonServiceTokenDeleted, inMessage: "service token t-2 (AccessServiceToken ns/monitor)"},
		"GroupWithADeletedToken":   {use: Use{Named: deleted}, status: "False", reason: v1alpha1.ReasonServiceTokenDeleted, inMessage: "Recreate"},
		"GroupWithItsTokens":       {use: Use{Named: present}, status: "True", reason: v1alpha1.ReasonServiceTokensEffective},
		"ReplacedTokenNamedByID":   {use: Use{Decision: "non_identity", Named: []Named{{ID: "t-3", Holder: "ns/deployer", Deleted: true, ReplacedBy: "t-4"}}}, status: "False", reason: v1alpha1.ReasonServiceTokenDeleted, inMessage: "made t-4 in its place"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := Condition(tc.use)
			if c.Type != v1alpha1.TypeServiceTokens || c.Status != tc.status || c.Reason != tc.reason || !strings.Contains(c.Message, tc.inMessage) {
				t.Errorf("Condition() = %+v; want %s %s …%q…", c, tc.status, tc.reason, tc.inMessage)
			}
		})
	}
}

func kubeWith(objs ...client.Object) client.Client {
	s := runtime.NewScheme()
	_ = v1alpha1.SchemeBuilder.AddToScheme(s)
	return fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).
		WithIndex(&v1alpha1.AccessServiceToken{}, mr.ExternalNameIndex, func(o client.Object) []string { return []string{meta.GetExternalName(o)} }).
		Build()
}

func tokenHolding(name, id string, reason xpv2.ConditionReason) *v1alpha1.AccessServiceToken {
	t := &v1alpha1.AccessServiceToken{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
	if id != "" {
		meta.SetExternalName(t, id)
	}
	if reason != "" {
		t.SetConditions(xpv2.Condition{Type: xpv2.TypeSynced, Status: "False", Reason: reason})
	}
	return t
}

// Of finds the holders of the IDs the rules name in the namespace, and
// which of them report their token deleted in Cloudflare.
func TestOf(t *testing.T) {
	remade := tokenHolding("deployer", "t-4", "")
	remade.Status.AtProvider.Replaced = &v1alpha1.AccessServiceTokenReplacement{PreviousID: "t-3"}
	kube := kubeWith(tokenHolding("ci", "t-1", ""), tokenHolding("monitor", "t-2", common.ReasonDeletedInCloudflare), remade)
	include := []v1alpha1.AccessRule{{ServiceTokenID: ptr.To("t-1")}, {Email: ptr.To("a@example.com")}}
	exclude := []v1alpha1.AccessRule{{ServiceTokenID: ptr.To("t-2")}, {ServiceTokenID: ptr.To("t-9")}, {AnyValidServiceToken: ptr.To(true)}, {ServiceTokenID: ptr.To("t-3")}}
	got, err := Of(context.Background(), kube, "ns", "allow", include, exclude)
	if err != nil {
		t.Fatal(err)
	}
	want := Use{Decision: "allow", AnyValid: true, Named: []Named{{ID: "t-1", Holder: "ns/ci"}, {ID: "t-2", Holder: "ns/monitor", Deleted: true}, {ID: "t-9"}, {ID: "t-3", Holder: "ns/deployer", Deleted: true, ReplacedBy: "t-4"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Of(): -want +got:\n%s", diff)
	}
}

// Follow clears a referenced token's ID only when its AccessServiceToken
// now holds another ID; a raw ID, an unchanged or ID-less target, and a
// missing one are left as they are.
func TestFollow(t *testing.T) {
	kube := kubeWith(tokenHolding("remade", "t-new", ""), tokenHolding("same", "t-1", ""), tokenHolding("remaking", "", ""))
	rules := []v1alpha1.AccessRule{
		{ServiceTokenRef: &xpv2.NamespacedReference{Name: "remade"}, ServiceTokenID: ptr.To("t-old")},
		{ServiceTokenRef: &xpv2.NamespacedReference{Name: "same"}, ServiceTokenID: ptr.To("t-1")},
		{ServiceTokenRef: &xpv2.NamespacedReference{Name: "remaking"}, ServiceTokenID: ptr.To("t-old")},
		{ServiceTokenRef: &xpv2.NamespacedReference{Name: "gone"}, ServiceTokenID: ptr.To("t-old")},
		{ServiceTokenID: ptr.To("t-old")},
	}
	if err := Follow(context.Background(), kube, "ns", rules); err != nil {
		t.Fatal(err)
	}
	var got []*string
	for _, r := range rules {
		got = append(got, r.ServiceTokenID)
	}
	want := []*string{nil, ptr.To("t-1"), ptr.To("t-old"), ptr.To("t-old"), ptr.To("t-old")}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("IDs after Follow: -want +got:\n%s", diff)
	}
}
