package accessservicetoken_test

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/rotation"
)

// A zero rotation.requestedAt stored before the CRD's rule refused it (a
// cluster upgraded from a release without it) is answered: the token gets
// its finalizer, Synced=False RotationRequestTooOld and a Warning saying
// what to set, never a wedge on the controller's own write.
func TestAZeroRotationTimeStoredBeforeTheRuleIsAnswered(t *testing.T) {
	ns := p.Namespace(t)
	cr := serviceToken(ns, "zero-time")
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(cr)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: obj}
	u.SetGroupVersionKind(v1alpha1.AccessServiceTokenGroupVersionKind)
	if err := unstructured.SetNestedField(u.Object, "0001-01-01T00:00:00Z", "spec", "forProvider", "rotation", "requestedAt"); err != nil {
		t.Fatal(err)
	}
	p.WithoutRule(t, "accessservicetokens."+v1alpha1.Group, []string{"spec", "forProvider", "rotation", "requestedAt"}, func() error {
		return p.Client.Create(context.Background(), u.DeepCopy())
	})
	p.WaitAnswered(t, cr, []xpv2.ConditionType{xpv2.TypeSynced, rotation.TypeTokenRotation}, rotation.ReasonRequestTooOld, "requestedAt 0001-01-01T00:00:00Z", "set it to the current time")
	p.DeleteAndWait(t, cr)
}
