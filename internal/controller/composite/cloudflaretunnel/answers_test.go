package cloudflaretunnel

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"

	"github.com/context-labs/provider-cloudflare-tunnel/apis"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
)

func answeredHostname(i int, service string) *v1alpha1.PublicHostname {
	host := fmt.Sprintf("app-%d.example.com", i)
	return &v1alpha1.PublicHostname{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("app-%d", i), UID: types.UID(fmt.Sprintf("ph-%d", i)), Generation: 1},
		Spec:       v1alpha1.PublicHostnameSpec{Hostname: host, TunnelRef: v1alpha1.TunnelReference{Name: "edge"}},
		Status: v1alpha1.PublicHostnameStatus{
			RulesGeneration: 1,
			Rules:           []ztv1alpha1.IngressRule{{Hostname: ptr.To(host), Service: service}},
		},
	}
}

// TestAnswerTouchesOnlyTheChangedHostname: with a configuration write for
// one new hostname under way and then in Cloudflare, only that hostname's
// answer is written; the others keep the version that carried their rules.
// A hostname whose rules change is answered again, as before.
func TestAnswerTouchesOnlyTheChangedHostname(t *testing.T) {
	ctx := context.Background()
	s := runtime.NewScheme()
	if err := apis.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	var patched []string
	objs := []client.Object{}
	for i := range 3 {
		objs = append(objs, answeredHostname(i, "http://a:80"))
	}
	kube := fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).WithStatusSubresource(&v1alpha1.PublicHostname{}).
		WithInterceptorFuncs(interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, o client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			patched = append(patched, o.GetName())
			return c.SubResource(sub).Patch(ctx, o, p, opts...)
		}}).Build()
	r := &Reconciler{kube: kube, record: event.NewNopRecorder()}
	cr := &v1alpha1.CloudflareTunnel{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "edge", UID: "tunnel"}}

	// answerAt answers every hostname as the reconcile would with the
	// tunnel's configuration at version, and says whom it wrote to.
	answerAt := func(version int) []string {
		t.Helper()
		patched = nil
		l := &v1alpha1.PublicHostnameList{}
		if err := kube.List(ctx, l); err != nil {
			t.Fatal(err)
		}
		if err := r.answer(ctx, cr, l.Items, publish.Decide(claims(cr, l.Items)), version); err != nil {
			t.Fatal(err)
		}
		slices.Sort(patched)
		return patched
	}
	versionOf := func(name string) int {
		t.Helper()
		ph := &v1alpha1.PublicHostname{}
		if err := kube.Get(ctx, types.NamespacedName{Namespace: "ns", Name: name}, ph); err != nil {
			t.Fatal(err)
		}
		if ph.Status.Tunnel == nil {
			return -1
		}
		return ph.Status.Tunnel.ConfigVersion
	}
	steps := []struct {
		name    string
		before  func()
		version int
		want    []string
	}{
		{"every hostname answered first", nil, 7, []string{"app-0", "app-1", "app-2"}},
		{"nothing changed", nil, 7, nil},
		{"a new hostname, its configuration under way", func() {
			if err := kube.Create(ctx, answeredHostname(3, "http://a:80")); err != nil {
				t.Fatal(err)
			}
		}, 0, []string{"app-3"}},
		{"the new hostname in Cloudflare", nil, 8, []string{"app-3"}},
		{"one hostname's rules change", func() {
			ph := &v1alpha1.PublicHostname{}
			if err := kube.Get(ctx, types.NamespacedName{Namespace: "ns", Name: "app-1"}, ph); err != nil {
				t.Fatal(err)
			}
			ph.Status.Rules[0].Service = "http://b:80"
			if err := kube.Status().Update(ctx, ph); err != nil {
				t.Fatal(err)
			}
		}, 0, []string{"app-1"}},
		{"its new rules in Cloudflare", nil, 9, []string{"app-1"}},
	}
	for _, st := range steps {
		if st.before != nil {
			st.before()
		}
		if diff := cmp.Diff(st.want, answerAt(st.version)); diff != "" {
			t.Errorf("%s: answers written (-want +got):\n%s", st.name, diff)
		}
	}
	got := map[string]int{}
	for i := range 4 {
		got[fmt.Sprintf("app-%d", i)] = versionOf(fmt.Sprintf("app-%d", i))
	}
	want := map[string]int{"app-0": 7, "app-1": 9, "app-2": 7, "app-3": 8}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("configuration versions answered (-want +got):\n%s", diff)
	}

	// After a restart (nothing remembered) every hostname is answered
	// once more, with the version then current.
	r.rules = publishedRules{}
	if diff := cmp.Diff([]string{"app-0", "app-1", "app-2", "app-3"}, answerAt(10)); diff != "" {
		t.Errorf("after a restart: answers written (-want +got):\n%s", diff)
	}
}
