package tunnel_test

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/rotation"
)

// A zero tokenRotation.requestedAt stored before the CRD's rule refused it
// (a cluster upgraded from a release without it) is answered: the Tunnel
// gets its finalizer, TokenRotation=False RotationRequestTooOld and a
// Warning saying what to set, never a wedge on the controller's own write.
func TestAZeroRotationTimeStoredBeforeTheRuleIsAnswered(t *testing.T) {
	ns := p.Namespace(t)
	tun := newTunnel(ns, "zero-time", "zero-time-"+ns)
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(tun)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: obj}
	u.SetGroupVersionKind(v1alpha1.TunnelGroupVersionKind)
	if err := unstructured.SetNestedField(u.Object, "0001-01-01T00:00:00Z", "spec", "forProvider", "tokenRotation", "requestedAt"); err != nil {
		t.Fatal(err)
	}
	p.WithoutRule(t, "tunnels."+v1alpha1.Group, []string{"spec", "forProvider", "tokenRotation", "requestedAt"}, func() error {
		return p.Client.Create(context.Background(), u.DeepCopy())
	})
	p.WaitAnswered(t, tun, []xpv2.ConditionType{rotation.TypeTokenRotation, xpv2.TypeSynced}, rotation.ReasonRequestTooOld, "requestedAt 0001-01-01T00:00:00Z", "set it to the current time")
	p.DeleteAndWait(t, tun)
}
