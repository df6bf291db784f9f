package cloudflaretunnel

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/test"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
)

func ph(name, tunnel string, mutate ...func(*v1alpha1.PublicHostname)) v1alpha1.PublicHostname {
	p := v1alpha1.PublicHostname{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name},
		Spec:       v1alpha1.PublicHostnameSpec{TunnelRef: v1alpha1.TunnelReference{Name: tunnel}, Hostname: name + ".example.com"},
	}
	for _, m := range mutate {
		m(&p)
	}
	return p
}

func publishedOn(tunnel string) func(*v1alpha1.PublicHostname) {
	return func(p *v1alpha1.PublicHostname) {
		p.Status.Tunnel = &v1alpha1.PublishedStatus{Tunnel: tunnel, Accepted: true}
	}
}

// eventCounter counts the events recorded.
type eventCounter struct{ n int }

func (e *eventCounter) Event(runtime.Object, event.Event)        { e.n++ }
func (e *eventCounter) WithAnnotations(...string) event.Recorder { return e }

func TestPublished(t *testing.T) {
	now := metav1.Now()
	items := []v1alpha1.PublicHostname{
		ph("mine", "edge"),
		ph("moved", "other", publishedOn("edge")),
		ph("typo", "egde", publishedOn("edge")),
		ph("leaving", "edge", func(p *v1alpha1.PublicHostname) { p.DeletionTimestamp = &now; p.Finalizers = []string{"x"} }),
	}
	cases := map[string]struct {
		list error
		get  error
		want []string
		err  bool
	}{
		"NamingItOrHeldByATypo": {want: []string{"mine", "typo"}},
		"ListFails":             {list: errors.New("boom"), err: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			kube := &test.MockClient{
				MockList: func(_ context.Context, l client.ObjectList, _ ...client.ListOption) error {
					if tc.list != nil {
						return tc.list
					}
					l.(*v1alpha1.PublicHostnameList).Items = items
					return nil
				},
				MockGet: func(_ context.Context, key client.ObjectKey, _ client.Object) error {
					if key.Name == "other" {
						return nil
					}
					return kerrors.NewNotFound(schema.GroupResource{Resource: "cloudflaretunnels"}, key.Name)
				},
			}
			r := &Reconciler{kube: kube, log: logging.NewNopLogger(), record: event.NewNopRecorder()}
			got, err := r.published(context.Background(), &v1alpha1.CloudflareTunnel{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "edge"}})
			if (err != nil) != tc.err {
				t.Fatalf("err = %v, want error %v", err, tc.err)
			}
			var names []string
			for _, p := range got {
				names = append(names, p.Name)
			}
			if diff := cmp.Diff(tc.want, names); diff != "" {
				t.Errorf("published (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAnswer(t *testing.T) {
	cr := &v1alpha1.CloudflareTunnel{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "edge"}}
	withRules := func(p *v1alpha1.PublicHostname) {
		p.Status.Rules = []ztv1alpha1.IngressRule{{Hostname: ptr.To(p.Spec.Hostname), Service: "http_status:404"}}
		p.Status.RulesGeneration = 3
	}
	d := publish.Decision{Holder: map[string]string{"a.example.com": "a"}, Lost: map[string]string{"late": "a", "team-b/late": "a"}}
	cases := map[string]struct {
		ph      v1alpha1.PublicHostname
		version int
		want    v1alpha1.PublishedStatus
	}{
		"Lost": {
			ph:   ph("late", "edge"),
			want: v1alpha1.PublishedStatus{Tunnel: "edge", Reason: "HostnameConflict", ClaimedBy: "a"},
		},
		"LostToAnotherNamespace": {
			ph: ph("late", "team-a/edge", func(p *v1alpha1.PublicHostname) { p.Namespace = "team-b" }),
			// The holder, team-a/a, is another tenant's: not named.
			want: v1alpha1.PublishedStatus{Tunnel: "team-a/edge", Reason: "HostnameConflict"},
		},
		"NoRulesYet": {
			ph:   ph("a", "edge"),
			want: v1alpha1.PublishedStatus{Tunnel: "edge", Accepted: true, Reason: "NoRules"},
		},
		"OnItsWay": {
			ph:   ph("a", "edge", withRules),
			want: v1alpha1.PublishedStatus{Tunnel: "edge", Accepted: true, Reason: "Accepted", Rules: 1, ObservedGeneration: 3},
		},
		"InCloudflare": {
			ph:      ph("a", "edge", withRules),
			version: 7,
			want:    v1alpha1.PublishedStatus{Tunnel: "edge", Accepted: true, Reason: "Accepted", Rules: 1, ConfigVersion: 7, ObservedGeneration: 3},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Answer(cr, &tc.ph, d, tc.version)
			if got.Message == "" {
				t.Error("an answer without a message")
			}
			if tc.ph.Namespace != cr.Namespace && strings.Contains(got.Message, cr.Namespace+"/") {
				t.Errorf("the answer names another namespace's object: %s", got.Message)
			}
			got.Message = ""
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Answer() (-want +got):\n%s", diff)
			}
		})
	}
}

// answer patches only the answers that changed, and tells a loser once.
func TestAnswerWritesOnlyChanges(t *testing.T) {
	cr := &v1alpha1.CloudflareTunnel{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "edge"}}
	d := publish.Decision{Holder: map[string]string{"a.example.com": "a"}, Lost: map[string]string{"late": "a"}}
	a, late := ph("a", "edge"), ph("late", "edge")
	current := Answer(cr, &a, d, 0)
	a.Status.Tunnel = &current
	patches := 0
	var patched []v1alpha1.PublicHostname
	kube := &test.MockClient{MockStatusPatch: func(_ context.Context, o client.Object, _ client.Patch, _ ...client.SubResourcePatchOption) error {
		patches++
		patched = append(patched, *o.(*v1alpha1.PublicHostname).DeepCopy())
		return nil
	}}
	events := &eventCounter{}
	r := &Reconciler{kube: kube, log: logging.NewNopLogger(), record: events}
	phs := []v1alpha1.PublicHostname{a, late}
	if err := r.answer(context.Background(), cr, phs, d, 0); err != nil {
		t.Fatal(err)
	}
	if patches != 1 || events.n != 1 {
		t.Fatalf("%d patches and %d events, want 1 of each (only the loser's answer changed)", patches, events.n)
	}
	// answer never changes what it was given (the cache's objects): the
	// next reconcile lists what the patch stored.
	if phs[1].Status.Tunnel != nil {
		t.Errorf("answer changed the PublicHostname it was given: %+v", phs[1].Status.Tunnel)
	}
	phs = []v1alpha1.PublicHostname{a, patched[0]}
	if err := r.answer(context.Background(), cr, phs, d, 0); err != nil {
		t.Fatal(err)
	}
	if patches != 1 || events.n != 1 {
		t.Errorf("answering again wrote %d patches and %d events, want none new", patches-1, events.n-1)
	}
}

func TestConfigVersion(t *testing.T) {
	want := publish.TunnelConfig()
	tun := func(gen, observed int64, status corev1.ConditionStatus, cfg *ztv1alpha1.TunnelConfig) *ztv1alpha1.Tunnel {
		t := &ztv1alpha1.Tunnel{ObjectMeta: metav1.ObjectMeta{Generation: gen}}
		t.Spec.ForProvider.Config = cfg
		t.Status.AtProvider.RemoteConfigVersion = 4
		t.SetConditions(xpv2.Condition{Type: xpv2.TypeSynced, Status: status, ObservedGeneration: observed, LastTransitionTime: metav1.NewTime(time.Now())})
		return t
	}
	cases := map[string]struct {
		tun  *ztv1alpha1.Tunnel
		want int
	}{
		"Synced":              {tun: tun(2, 2, corev1.ConditionTrue, want), want: 4},
		"NotSyncedYet":        {tun: tun(3, 2, corev1.ConditionTrue, want)},
		"SyncFailed":          {tun: tun(2, 2, corev1.ConditionFalse, want)},
		"AnotherConfigHeldBy": {tun: tun(2, 2, corev1.ConditionTrue, publish.TunnelConfig([]ztv1alpha1.IngressRule{{Hostname: ptr.To("x.example.com"), Service: "hello_world"}}))},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := configVersion(tc.tun, want); got != tc.want {
				t.Errorf("configVersion() = %d, want %d", got, tc.want)
			}
		})
	}
}

// A hostname a previous version published from an Ingress keeps its current
// rules until a PublicHostname holding it has rules of its own.
func TestCarriedOverRules(t *testing.T) {
	r := func(host, svc string) ztv1alpha1.IngressRule {
		return ztv1alpha1.IngressRule{Hostname: ptr.To(host), Service: svc}
	}
	current := publish.TunnelConfig([]ztv1alpha1.IngressRule{r("old.example.com", "http://old:80"), r("gone.example.com", "http://gone:80"), r("moved.example.com", "http://before:80")})
	claims := []publish.Claim{
		{Name: "moved", Hostname: "moved.example.com", Rules: []ztv1alpha1.IngressRule{r("moved.example.com", "http://after:80")}},
		{Name: "new", Hostname: "old.example.com"}, // no rules yet
	}
	p := publication{Decision: publish.Decide(claims), claims: claims, carried: map[string]bool{"old.example.com": true, "moved.example.com": true}}
	var got []string
	for _, rule := range p.config(current).Ingress {
		got = append(got, ptr.Deref(rule.Hostname, "")+" "+rule.Service)
	}
	want := []string{"moved.example.com http://after:80", "old.example.com http://old:80", " " + publish.CatchAllService}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
}
