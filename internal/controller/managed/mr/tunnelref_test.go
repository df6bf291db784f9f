package mr

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
)

// sharingReader hands out its object as a cache does with
// UnsafeDisableDeepCopy: the same maps and pointers.
type sharingReader struct {
	client.Reader
	obj *ztv1alpha1.Tunnel
}

func (r sharingReader) Get(_ context.Context, _ client.ObjectKey, out client.Object, _ ...client.GetOption) error {
	*out.(*ztv1alpha1.Tunnel) = *r.obj
	return nil
}

func TestGetTunnelCopiesAllButTheConfiguration(t *testing.T) {
	cached := &ztv1alpha1.Tunnel{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "edge", Labels: map[string]string{"a": "b"}, Annotations: map[string]string{"crossplane.io/external-name": "id-1"}},
		Spec: ztv1alpha1.TunnelSpec{
			ManagedResourceSpec: xpv2.ManagedResourceSpec{ProviderConfigReference: &xpv2.ProviderConfigReference{Kind: "ClusterProviderConfig", Name: "default"}},
			ForProvider:         ztv1alpha1.TunnelParameters{Name: "edge", Config: &ztv1alpha1.TunnelConfig{Ingress: []ztv1alpha1.IngressRule{{Hostname: ptr.To("app.example.com"), Service: "http://app"}}}},
			AdoptByName:         true,
		},
	}
	before := cached.DeepCopy()
	got, err := getTunnel(context.Background(), sharingReader{obj: cached}, client.ObjectKey{Namespace: "ns", Name: "edge"})
	if err != nil {
		t.Fatal(err)
	}
	want := before.DeepCopy()
	want.Spec.ForProvider.Config = nil
	want.SetGroupVersionKind(ztv1alpha1.TunnelGroupVersionKind)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("getTunnel: -want +got:\n%s", diff)
	}
	// What getTunnel returns is the caller's: changing it leaves the cache alone.
	got.Labels["a"] = "changed"
	got.Spec.ProviderConfigReference.Name = "changed"
	if diff := cmp.Diff(before, cached); diff != "" {
		t.Errorf("the cached Tunnel changed: -before +after:\n%s", diff)
	}
}
