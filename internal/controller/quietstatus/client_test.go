package quietstatus

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
)

// cacheOf answers Get with a copy of obj.
type cacheOf struct {
	client.Reader
	obj *v1alpha1.Tunnel
}

func (c cacheOf) Get(_ context.Context, _ types.NamespacedName, out client.Object, _ ...client.GetOption) error {
	c.obj.DeepCopyInto(out.(*v1alpha1.Tunnel))
	return nil
}

// recorder records the status writes that reach it.
type recorder struct {
	client.Client
	writes *int
}

func (r recorder) Status() client.SubResourceWriter { return statusRecorder(r) }

type statusRecorder recorder

func (r statusRecorder) Create(context.Context, client.Object, client.Object, ...client.SubResourceCreateOption) error {
	return nil
}
func (r statusRecorder) Update(context.Context, client.Object, ...client.SubResourceUpdateOption) error {
	*r.writes++
	return nil
}
func (r statusRecorder) Patch(context.Context, client.Object, client.Patch, ...client.SubResourcePatchOption) error {
	*r.writes++
	return nil
}
func (r statusRecorder) Apply(context.Context, runtime.ApplyConfiguration, ...client.SubResourceApplyOption) error {
	return nil
}

func TestClient(t *testing.T) {
	cached := stored()
	cached.Spec.ForProvider.Name = "as-stored"
	cases := map[string]struct {
		obj   func() client.Object
		write func(client.SubResourceWriter, client.Object) error
		sent  bool
	}{
		"UpdateUnchangedSkipped": {obj: func() client.Object { return stored() }, write: update, sent: false},
		"UpdateChangedSent": {obj: func() client.Object {
			o := stored()
			o.SetConditions(xpv2.Unavailable())
			return o
		}, write: update, sent: true},
		"UpdateAtAnotherVersionSent": {obj: func() client.Object {
			o := stored()
			o.ResourceVersion = "41"
			return o
		}, write: update, sent: true},
		"UpdateWithoutVersionSent": {obj: func() client.Object {
			o := stored()
			o.ResourceVersion = ""
			return o
		}, write: update, sent: true},
		"UpdateWithOptionsSent": {obj: func() client.Object { return stored() }, write: func(w client.SubResourceWriter, o client.Object) error {
			return w.Update(context.Background(), o, client.DryRunAll)
		}, sent: true},
		"MergePatchUnchangedSkipped": {obj: func() client.Object { return stored() }, write: func(w client.SubResourceWriter, o client.Object) error {
			return w.Patch(context.Background(), o, client.MergeFrom(stored()))
		}, sent: false},
		"JSONPatchSent": {obj: func() client.Object { return stored() }, write: func(w client.SubResourceWriter, o client.Object) error {
			return w.Patch(context.Background(), o, client.RawPatch(types.JSONPatchType, []byte(`[]`)))
		}, sent: true},
		"UnstructuredSent": {obj: func() client.Object {
			u, _ := runtime.DefaultUnstructuredConverter.ToUnstructured(stored())
			return &unstructured.Unstructured{Object: u}
		}, write: update, sent: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			writes := 0
			c := New(recorder{writes: &writes}, cacheOf{obj: cached})
			obj := tc.obj()
			if err := tc.write(c.Status(), obj); err != nil {
				t.Fatal(err)
			}
			if sent := writes > 0; sent != tc.sent {
				t.Fatalf("write sent: %t, want %t", sent, tc.sent)
			}
			want := Counts{Written: 1}
			if !tc.sent {
				want = Counts{Skipped: 1}
				// Left as the write would have left it: the stored object.
				if diff := cmp.Diff(cached.Spec, obj.(*v1alpha1.Tunnel).Spec); diff != "" {
					t.Errorf("skipped write left the object -stored +got:\n%s", diff)
				}
			}
			if diff := cmp.Diff(want, c.Counts()); diff != "" {
				t.Errorf("Counts -want +got:\n%s", diff)
			}
		})
	}
	t.Run("SubResourceStatusIsQuietToo", func(t *testing.T) {
		writes := 0
		c := New(recorderWithSub{recorder{writes: &writes}}, cacheOf{obj: cached})
		if err := c.SubResource("status").Update(context.Background(), stored()); err != nil || writes != 0 {
			t.Errorf("SubResource(status).Update: %v, %d writes sent; want it skipped", err, writes)
		}
	})
}

type recorderWithSub struct{ recorder }

func (r recorderWithSub) SubResource(string) client.SubResourceClient {
	return struct {
		client.SubResourceReader
		client.SubResourceWriter
	}{nil, statusRecorder(r.recorder)}
}

func update(w client.SubResourceWriter, o client.Object) error {
	return w.Update(context.Background(), o)
}
