package cloudflaretunnel_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/composite/cloudflaretunnel"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

func TestSharingCondition(t *testing.T) {
	cases := map[string]struct {
		allowed *v1alpha1.AllowedNamespaces
		want    xpv2.ConditionReason
	}{
		"Unset":               {want: cloudflaretunnel.ReasonOwnNamespaceOnly},
		"Same":                {allowed: &v1alpha1.AllowedNamespaces{From: v1alpha1.NamespacesFromSame}, want: cloudflaretunnel.ReasonOwnNamespaceOnly},
		"All":                 {allowed: &v1alpha1.AllowedNamespaces{From: v1alpha1.NamespacesFromAll}, want: cloudflaretunnel.ReasonEveryNamespace},
		"EmptySelector":       {allowed: &v1alpha1.AllowedNamespaces{From: v1alpha1.NamespacesFromSelector, Selector: &metav1.LabelSelector{}}, want: cloudflaretunnel.ReasonEveryNamespace},
		"EmptyMatchLabelsMap": {allowed: &v1alpha1.AllowedNamespaces{From: v1alpha1.NamespacesFromSelector, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{}}}, want: cloudflaretunnel.ReasonEveryNamespace},
		"Labels":              {allowed: &v1alpha1.AllowedNamespaces{From: v1alpha1.NamespacesFromSelector, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "web"}}}, want: cloudflaretunnel.ReasonSelectedNamespaces},
		"Expressions": {allowed: &v1alpha1.AllowedNamespaces{From: v1alpha1.NamespacesFromSelector, Selector: &metav1.LabelSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "team", Operator: metav1.LabelSelectorOpExists}},
		}}, want: cloudflaretunnel.ReasonSelectedNamespaces},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cr := &v1alpha1.CloudflareTunnel{Spec: v1alpha1.CloudflareTunnelSpec{AllowedNamespaces: tc.allowed}}
			c := cloudflaretunnel.SharingCondition(cr)
			if diff := cmp.Diff(tc.want, c.Reason); diff != "" {
				t.Errorf("reason: -want +got:\n%s", diff)
			}
			if want := map[bool]corev1.ConditionStatus{true: corev1.ConditionFalse, false: corev1.ConditionTrue}[tc.want == cloudflaretunnel.ReasonOwnNamespaceOnly]; c.Status != want {
				t.Errorf("status %s, want %s", c.Status, want)
			}
		})
	}
}

// TestSharedWithEveryNamespaceIsSaidLoudly: `selector: {}` shares a tunnel
// with every namespace; the tunnel says so in a Warning event and its Shared
// condition, and stops saying it once the selector names some.
func TestSharedWithEveryNamespaceIsSaidLoudly(t *testing.T) {
	ns := p.Namespace(t)
	cr := &v1alpha1.CloudflareTunnel{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "open"},
		Spec: v1alpha1.CloudflareTunnelSpec{Replicas: ptr.To[int32](1), AllowedNamespaces: &v1alpha1.AllowedNamespaces{
			From: v1alpha1.NamespacesFromSelector, Selector: &metav1.LabelSelector{},
		}},
	}
	p.Create(t, cr)
	waitCondition(t, cr, cloudflaretunnel.TypeShared, corev1.ConditionTrue, cloudflaretunnel.ReasonEveryNamespace)
	p.WaitWarning(t, ns, "open", string(cloudflaretunnel.ReasonEveryNamespace), "every namespace")
	wait.Eventually(t, wait.Patience, "the selector narrowed", func() error {
		if err := p.Get(cr); err != nil {
			return err
		}
		cr.Spec.AllowedNamespaces.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"team": "web"}}
		return p.Client.Update(t.Context(), cr)
	})
	waitCondition(t, cr, cloudflaretunnel.TypeShared, corev1.ConditionTrue, cloudflaretunnel.ReasonSelectedNamespaces)
	p.DeleteAndWait(t, cr)
}
