package resourcerefs

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/test"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
)

func spec(c *v1alpha1.CloudflareTunnel) **v1alpha1.CompositeCrossplane { return &c.Spec.Crossplane }

var (
	tunnel     = v1alpha1.CompositeResourceRef{APIVersion: "zerotrust.tunnels.cloudflare.com/v1alpha1", Kind: "Tunnel", Name: "edge"}
	deployment = v1alpha1.CompositeResourceRef{APIVersion: "apps/v1", Kind: "Deployment", Name: "edge-cloudflared"}
)

// TestWrite: the children are written sorted, by a patch of
// spec.crossplane alone with the resource version it was read at; the same
// children in another order write nothing; the object takes the new
// resource version and generation and keeps the status being computed.
func TestWrite(t *testing.T) {
	cases := map[string]struct {
		have      *v1alpha1.CompositeCrossplane
		refs      []v1alpha1.CompositeResourceRef
		wantPatch string // "" when nothing is sent
		want      *v1alpha1.CompositeCrossplane
	}{
		"FirstChildren": {
			refs:      []v1alpha1.CompositeResourceRef{tunnel, deployment},
			wantPatch: `{"metadata":{"resourceVersion":"7"},"spec":{"crossplane":{"resourceRefs":[{"apiVersion":"apps/v1","kind":"Deployment","name":"edge-cloudflared"},{"apiVersion":"zerotrust.tunnels.cloudflare.com/v1alpha1","kind":"Tunnel","name":"edge"}]}}}`,
			want:      &v1alpha1.CompositeCrossplane{ResourceRefs: []v1alpha1.CompositeResourceRef{deployment, tunnel}},
		},
		"TheSameInAnotherOrder": {
			have: &v1alpha1.CompositeCrossplane{ResourceRefs: []v1alpha1.CompositeResourceRef{deployment, tunnel}},
			refs: []v1alpha1.CompositeResourceRef{tunnel, deployment},
			want: &v1alpha1.CompositeCrossplane{ResourceRefs: []v1alpha1.CompositeResourceRef{deployment, tunnel}},
		},
		"NoneLeft": {
			have:      &v1alpha1.CompositeCrossplane{ResourceRefs: []v1alpha1.CompositeResourceRef{tunnel}},
			wantPatch: `{"metadata":{"resourceVersion":"7"},"spec":{"crossplane":null}}`,
		},
		"NoneEver": {},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cr := &v1alpha1.CloudflareTunnel{ObjectMeta: metav1.ObjectMeta{Name: "edge", ResourceVersion: "7", Generation: 3}}
			cr.Spec.Crossplane = tc.have
			cr.Status.TunnelID = "computed, not yet written"
			var sent string
			kube := &test.MockClient{MockPatch: func(_ context.Context, obj client.Object, p client.Patch, _ ...client.PatchOption) error {
				b, err := p.Data(obj)
				if err != nil {
					return err
				}
				sent = string(b)
				// The API server's answer: a new version, another status.
				obj.SetResourceVersion("8")
				obj.SetGeneration(4)
				obj.(*v1alpha1.CloudflareTunnel).Status.TunnelID = "as stored"
				return nil
			}}
			if err := Write(context.Background(), kube, cr, spec, tc.refs); err != nil {
				t.Fatal(err)
			}
			if sent != "" && !json.Valid([]byte(sent)) {
				t.Fatalf("patch %s is not JSON", sent)
			}
			if diff := cmp.Diff(tc.wantPatch, sent); diff != "" {
				t.Errorf("patch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, cr.Spec.Crossplane); diff != "" {
				t.Errorf("spec.crossplane (-want +got):\n%s", diff)
			}
			wantRV, wantGen := "7", int64(3)
			if tc.wantPatch != "" {
				wantRV, wantGen = "8", 4
			}
			if cr.ResourceVersion != wantRV || cr.Generation != wantGen || cr.Status.TunnelID != "computed, not yet written" {
				t.Errorf("after the write: resourceVersion %s, generation %d, status.tunnelID %q; want %s, %d and the status kept", cr.ResourceVersion, cr.Generation, cr.Status.TunnelID, wantRV, wantGen)
			}
		})
	}
}
