package source

import (
	"context"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/test"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
)

// world is a namespace held in memory behind a test.MockClient: Get, List
// (of every object of the list's kind: the converger must itself tell its
// own children from others'), Create, Update and Delete (an object with a
// finalizer is only marked deleted, as the API server does).
type world struct {
	objs  map[string]client.Object
	calls []string
	err   map[string]error // by call, "Delete PublicHostname/app": fail it
}

func newWorld(objs ...client.Object) *world {
	w := &world{objs: map[string]client.Object{}, err: map[string]error{}}
	for _, o := range objs {
		w.objs[Key(o)] = o
	}
	return w
}

func (w *world) call(verb string, o client.Object) error {
	c := verb + " " + Key(o)
	w.calls = append(w.calls, c)
	return w.err[c]
}

func (w *world) client() *test.MockClient {
	return &test.MockClient{
		MockGet: func(_ context.Context, key client.ObjectKey, obj client.Object) error {
			obj.SetName(key.Name)
			cur, ok := w.objs[Key(obj)]
			if !ok {
				return kerrors.NewNotFound(schema.GroupResource{}, key.Name)
			}
			reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(cur.DeepCopyObject()).Elem())
			return nil
		},
		MockList: func(_ context.Context, l client.ObjectList, _ ...client.ListOption) error {
			items := reflect.ValueOf(l).Elem().FieldByName("Items")
			names := make([]string, 0, len(w.objs))
			for k := range w.objs {
				names = append(names, k)
			}
			sort.Strings(names) // the converger must not depend on the order
			for i := len(names) - 1; i >= 0; i-- {
				o := reflect.ValueOf(w.objs[names[i]].DeepCopyObject()).Elem()
				if o.Type() == items.Type().Elem() {
					items.Set(reflect.Append(items, o))
				}
			}
			return nil
		},
		MockCreate: func(_ context.Context, o client.Object, _ ...client.CreateOption) error {
			if err := w.call("Create", o); err != nil {
				return err
			}
			w.objs[Key(o)] = o.DeepCopyObject().(client.Object)
			return nil
		},
		MockUpdate: func(_ context.Context, o client.Object, _ ...client.UpdateOption) error {
			if err := w.call("Update", o); err != nil {
				return err
			}
			w.objs[Key(o)] = o.DeepCopyObject().(client.Object)
			return nil
		},
		MockDelete: func(_ context.Context, o client.Object, _ ...client.DeleteOption) error {
			if err := w.call("Delete", o); err != nil {
				return err
			}
			cur, ok := w.objs[Key(o)]
			switch {
			case !ok:
				return kerrors.NewNotFound(schema.GroupResource{}, o.GetName())
			case len(cur.GetFinalizers()) > 0:
				cur.SetDeletionTimestamp(ptr.To(metav1.Now()))
			default:
				delete(w.objs, Key(o))
			}
			return nil
		},
	}
}

// events records what the converger tells the owner.
type events []string

func (e *events) Event(_ runtime.Object, ev event.Event) {
	*e = append(*e, string(ev.Type)+" "+string(ev.Reason))
}
func (e *events) WithAnnotations(...string) event.Recorder { return e }

const (
	ownerUID   = types.UID("ingress-2")
	earlierUID = types.UID("ingress-1")
)

var owner = &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "web", UID: ownerUID}}

func controlledBy(kind, name string, uid types.UID) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: "team", OwnerReferences: []metav1.OwnerReference{{
		APIVersion: "networking.k8s.io/v1", Kind: kind, Name: name, UID: uid, Controller: ptr.To(true),
	}}}
}

type edit func(*metav1.ObjectMeta)

func named(n string) edit { return func(m *metav1.ObjectMeta) { m.Name = n } }
func finalized(m *metav1.ObjectMeta) {
	m.Finalizers = []string{"managed"}
}
func deleting(m *metav1.ObjectMeta) {
	finalized(m)
	m.DeletionTimestamp = ptr.To(metav1.Now())
}

func route(host string, om metav1.ObjectMeta, edits ...edit) *ztv1alpha1.HostnameRoute {
	om.Name = "web-" + host
	for _, e := range edits {
		e(&om)
	}
	return &ztv1alpha1.HostnameRoute{ObjectMeta: om, Spec: ztv1alpha1.HostnameRouteSpec{ForProvider: ztv1alpha1.HostnameRouteParameters{Hostname: host}}}
}

func published(host string, om metav1.ObjectMeta, edits ...edit) *v1alpha1.PublicHostname {
	om.Name = "web-" + host
	for _, e := range edits {
		e(&om)
	}
	return &v1alpha1.PublicHostname{ObjectMeta: om, Spec: v1alpha1.PublicHostnameSpec{Hostname: host}}
}

var (
	mine    = controlledBy("Ingress", "web", ownerUID)
	earlier = controlledBy("Ingress", "web", earlierUID)
	other   = controlledBy("Ingress", "api", "ingress-9")
)

func TestConverge(t *testing.T) {
	errBoom := errors.New("boom")
	type want struct {
		calls    []string
		events   []string
		children []string
		taken    []string
		released []string
		leaving  []string
		settled  bool
		err      error
	}
	cases := map[string]struct {
		reason string
		have   []client.Object
		fail   map[string]error
		d      Desired
		gone   bool
		want   want
	}{
		"CreatesWhatIsMissing": {
			reason: "A desired child that does not exist is created.",
			d:      Desired{Objects: []Owned{route("a.example.com", mine)}},
			want: want{
				calls:    []string{"Create HostnameRoute/web-a.example.com"},
				events:   []string{"Normal CreatedHostnameRoute"},
				children: []string{"HostnameRoute/web-a.example.com"},
			},
		},
		"UpdatesItsOwn": {
			reason: "A child controlled by the owner's UID is brought to the desired spec.",
			have:   []client.Object{route("a.example.com", mine, named("web-a.example.com"))},
			d: Desired{Objects: []Owned{func() Owned {
				r := route("a.example.com", mine)
				r.Spec.ForProvider.TunnelIDRef = nil
				r.Labels = map[string]string{"changed": "yes"}
				return r
			}()}},
			want: want{
				calls:    []string{"Update HostnameRoute/web-a.example.com"},
				children: []string{"HostnameRoute/web-a.example.com"},
			},
		},
		"LeavesAnUpToDateChildAlone": {
			reason: "No write when nothing changed.",
			have:   []client.Object{route("a.example.com", mine)},
			d:      Desired{Objects: []Owned{route("a.example.com", mine)}},
			want:   want{children: []string{"HostnameRoute/web-a.example.com"}},
		},
		"ReleasesWhatIsNoLongerDesired": {
			reason: "A child of the owner no longer desired is deleted.",
			have:   []client.Object{route("a.example.com", mine), published("a.example.com", mine)},
			d:      Desired{Objects: []Owned{route("a.example.com", mine)}},
			want: want{
				calls:    []string{"Delete PublicHostname/web-a.example.com"},
				events:   []string{"Normal DeletingPublicHostname"},
				children: []string{"HostnameRoute/web-a.example.com"},
				released: []string{"PublicHostname/web-a.example.com"},
			},
		},
		"KeepsOnAProblem": {
			reason: "With a problem in the source, what Keep keeps stays though no longer desired, and what it does not goes (a yielded route).",
			have:   []client.Object{route("a.example.com", mine), route("yielded.example.com", mine), published("a.example.com", mine)},
			d: Desired{Keep: func(m Owned) bool {
				r, ok := m.(*ztv1alpha1.HostnameRoute)
				return !ok || r.Spec.ForProvider.Hostname != "yielded.example.com"
			}},
			want: want{
				calls:    []string{"Delete HostnameRoute/web-yielded.example.com"},
				events:   []string{"Normal DeletingHostnameRoute"},
				children: []string{"HostnameRoute/web-a.example.com", "PublicHostname/web-a.example.com"},
				released: []string{"HostnameRoute/web-yielded.example.com"},
			},
		},
		"AdoptsByUIDOnly": {
			reason: "A child whose controller has the owner's UID is its own, whatever its labels or name; an object of the namespace nothing controls is not its own.",
			have: []client.Object{
				route("renamed.example.com", mine, named("anything")),
				route("a.example.com", metav1.ObjectMeta{Namespace: "team"}),
			},
			d: Desired{Objects: []Owned{route("renamed.example.com", mine, named("anything"))}},
			want: want{
				children: []string{"HostnameRoute/anything"},
			},
		},
		"LeavesAForeignChildOfTheSameNameAlone": {
			reason: "A desired child's name held by an object another source controls is not written, and is said.",
			have:   []client.Object{route("a.example.com", other)},
			d:      Desired{Objects: []Owned{route("a.example.com", mine)}},
			want: want{
				events:  []string{"Warning NameConflict"},
				taken:   []string{"HostnameRoute/web-a.example.com"},
				settled: true,
			},
		},
		"LeavesAnUncontrolledChildOfTheSameNameAlone": {
			reason: "An object of the name that nothing controls is not taken over either.",
			have:   []client.Object{route("a.example.com", metav1.ObjectMeta{Namespace: "team"})},
			d:      Desired{Objects: []Owned{route("a.example.com", mine)}},
			want: want{
				events:  []string{"Warning NameConflict"},
				taken:   []string{"HostnameRoute/web-a.example.com"},
				settled: true,
			},
		},
		"ReleasesAnEarlierOwnersChildren": {
			reason: "A source recreated under the same name (new UID) never takes over the earlier one's children: they are released, the desired one of the same name is made once the old is gone, and others go.",
			have: []client.Object{
				route("a.example.com", earlier, finalized),
				published("b.example.com", earlier),
			},
			d: Desired{Objects: []Owned{route("a.example.com", mine)}},
			want: want{
				calls:    []string{"Delete HostnameRoute/web-a.example.com", "Delete PublicHostname/web-b.example.com"},
				events:   []string{"Normal DeletingHostnameRoute", "Normal DeletingPublicHostname"},
				released: []string{"HostnameRoute/web-a.example.com", "PublicHostname/web-b.example.com"},
			},
		},
		"ReleasesEverythingOfAGoneOwner": {
			reason: "An owner gone (no UID: a Service without finalizer) releases every child controlled by a source of its kind and name, and none of others.",
			gone:   true,
			have:   []client.Object{route("a.example.com", earlier), route("b.example.com", mine), route("c.example.com", other)},
			want: want{
				calls:    []string{"Delete HostnameRoute/web-a.example.com", "Delete HostnameRoute/web-b.example.com"},
				released: []string{"HostnameRoute/web-a.example.com", "HostnameRoute/web-b.example.com"},
			},
		},
		"ReleaseOrder": {
			reason: "Released children go in a stable order, by kind then name, and the owner is not settled until each is gone.",
			have: []client.Object{
				published("b.example.com", mine, finalized), route("b.example.com", mine, finalized),
				route("a.example.com", mine, finalized), published("a.example.com", mine, finalized),
			},
			want: want{
				calls: []string{
					"Delete HostnameRoute/web-a.example.com", "Delete HostnameRoute/web-b.example.com",
					"Delete PublicHostname/web-a.example.com", "Delete PublicHostname/web-b.example.com",
				},
				events: []string{"Normal DeletingHostnameRoute", "Normal DeletingHostnameRoute", "Normal DeletingPublicHostname", "Normal DeletingPublicHostname"},
				released: []string{
					"HostnameRoute/web-a.example.com", "HostnameRoute/web-b.example.com",
					"PublicHostname/web-a.example.com", "PublicHostname/web-b.example.com",
				},
			},
		},
		"SettledOnceAllAreGone": {
			reason: "An owner with nothing left is settled: it may let go.",
			have:   []client.Object{route("c.example.com", other)},
			want:   want{settled: true},
		},
		"AChildStuckInDeletion": {
			reason: "A child being deleted is neither deleted again nor recreated nor updated: it stays a child until it is gone, and the owner is not settled.",
			have:   []client.Object{route("a.example.com", mine, deleting), route("b.example.com", mine, deleting)},
			d: Desired{Objects: []Owned{func() Owned {
				r := route("a.example.com", mine)
				r.Labels = map[string]string{"changed": "yes"}
				return r
			}()}},
			want: want{children: []string{"HostnameRoute/web-a.example.com", "HostnameRoute/web-b.example.com"}},
		},
		"AnEarlierOwnersChildStuckInDeletion": {
			reason: "An earlier owner's child being deleted holds its name: the new one is made once it is gone.",
			have:   []client.Object{route("a.example.com", earlier, deleting)},
			d:      Desired{Objects: []Owned{route("a.example.com", mine)}},
			want:   want{leaving: []string{"HostnameRoute/web-a.example.com"}},
		},
		"ADeleteThatFails": {
			reason: "A failed deletion stops the pass with its error.",
			have:   []client.Object{route("a.example.com", mine)},
			fail:   map[string]error{"Delete HostnameRoute/web-a.example.com": errBoom},
			want: want{
				calls:   []string{"Delete HostnameRoute/web-a.example.com"},
				settled: true,
				err:     errors.Wrap(errBoom, "cannot delete HostnameRoute web-a.example.com"),
			},
		},
		"ACreateThatFails": {
			reason: "A failed creation stops the pass with its error.",
			fail:   map[string]error{"Create HostnameRoute/web-a.example.com": errBoom},
			d:      Desired{Objects: []Owned{route("a.example.com", mine)}},
			want: want{
				calls:   []string{"Create HostnameRoute/web-a.example.com"},
				settled: true,
				err:     errors.Wrap(errBoom, "cannot create HostnameRoute web-a.example.com"),
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := newWorld(tc.have...)
			if tc.fail != nil {
				w.err = tc.fail
			}
			var ev events
			c := &Converger{Kube: w.client(), Record: &ev, Kinds: func() []client.ObjectList {
				return []client.ObjectList{&ztv1alpha1.HostnameRouteList{}, &v1alpha1.PublicHostnameList{}}
			}}
			o := OwnerOf(owner, "networking.k8s.io/v1", "Ingress", nil)
			if tc.gone {
				o.Object, o.UID = nil, ""
			}
			out, err := c.Converge(context.Background(), o, tc.d)
			got := want{
				calls: w.calls, events: ev, children: keys(out.Children), taken: keys(out.Taken),
				released: keys(out.Released), leaving: keys(out.Leaving), settled: out.Settled(), err: err,
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{}), test.EquateErrors()); diff != "" {
				t.Errorf("%s\nConverge(...): -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func keys(ms []Owned) []string {
	var out []string
	for _, m := range ms {
		out = append(out, Key(m))
	}
	return out
}

func TestYieldedBy(t *testing.T) {
	lost := func(ph *v1alpha1.PublicHostname) *v1alpha1.PublicHostname {
		ph.SetConditions(xpv2.Condition{Type: "Accepted", Status: corev1.ConditionFalse, Reason: "HostnameConflict"})
		ph.Status.Tunnel = &v1alpha1.PublishedStatus{ClaimedBy: "team/api"}
		return ph
	}
	w := newWorld(
		lost(published("mine.example.com", mine)),
		lost(published("earlier.example.com", earlier)),
		lost(published("other.example.com", other)),
		published("held.example.com", mine),
	)
	got, err := YieldedBy(context.Background(), w.client(), OwnerOf(owner, "networking.k8s.io/v1", "Ingress", nil))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"mine.example.com": "api"}, got); diff != "" {
		t.Errorf("YieldedBy: only the owner's own PublicHostnames, by UID, count: -want +got:\n%s", diff)
	}
}

// TestCopySpecKeepsTheHostnamesChildren: a source's copy of a
// PublicHostname it made replaces the spec it decides, but keeps
// spec.crossplane, the hostname's own record of its children; otherwise
// the source and the hostname would rewrite it in turn forever.
func TestCopySpecKeepsTheHostnamesChildren(t *testing.T) {
	children := &v1alpha1.CompositeCrossplane{ResourceRefs: []v1alpha1.CompositeResourceRef{{APIVersion: "dns.tunnels.cloudflare.com/v1alpha1", Kind: "DNSRecord", Name: "web"}}}
	cur := &v1alpha1.PublicHostname{Spec: v1alpha1.PublicHostnameSpec{Hostname: "web.example.com", Crossplane: children.DeepCopy()}}
	want := &v1alpha1.PublicHostname{Spec: v1alpha1.PublicHostnameSpec{Hostname: "web.example.com"}}
	if CopySpec(cur, want) {
		t.Errorf("an unchanged spec was copied as a change")
	}
	want.Spec.Hostname = "www.example.com"
	if !CopySpec(cur, want) || cur.Spec.Hostname != "www.example.com" {
		t.Errorf("the changed hostname was not copied: %+v", cur.Spec)
	}
	if diff := cmp.Diff(children, cur.Spec.Crossplane); diff != "" {
		t.Errorf("spec.crossplane (-want +got):\n%s", diff)
	}
}

func markedUnwanted(at time.Time) edit {
	return func(m *metav1.ObjectMeta) {
		m.Annotations = map[string]string{v1alpha1.AnnotationUnwantedSince: at.Format(time.RFC3339)}
	}
}

func TestConvergeParksForTheGrace(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	const grace = 10 * time.Second
	type want struct {
		calls    []string
		events   []string
		children []string
		parked   []string
		released []string
		recheck  time.Duration
		mark     string // the annotation of PublicHostname/web-a.example.com after
	}
	cases := map[string]struct {
		reason  string
		have    []client.Object
		d       Desired
		release bool
		want    want
	}{
		"ParksAHostnameNoLongerWanted": {
			reason: "A PublicHostname no longer wanted is marked, not deleted, and the owner looks again when the grace ends.",
			have:   []client.Object{published("a.example.com", mine)},
			want: want{
				calls:   []string{"Update PublicHostname/web-a.example.com"},
				events:  []string{"Normal ParkedPublicHostname"},
				parked:  []string{"PublicHostname/web-a.example.com"},
				recheck: grace,
				mark:    "2026-12-07T12:00:00Z",
			},
		},
		"WaitsOutTheGrace": {
			reason: "A parked hostname stays, unwritten, for the rest of its grace.",
			have:   []client.Object{published("a.example.com", mine, markedUnwanted(now.Add(-4*time.Second)))},
			want: want{
				parked:  []string{"PublicHostname/web-a.example.com"},
				recheck: 6 * time.Second,
				mark:    "2026-12-07T11:59:56Z",
			},
		},
		"ReleasesOnceTheGraceHasPassed": {
			reason: "A hostname unwanted for the whole grace is deleted.",
			have:   []client.Object{published("a.example.com", mine, markedUnwanted(now.Add(-grace)))},
			want: want{
				calls:    []string{"Delete PublicHostname/web-a.example.com"},
				events:   []string{"Normal DeletingPublicHostname"},
				released: []string{"PublicHostname/web-a.example.com"},
			},
		},
		"TakesBackAHostnameWantedAgain": {
			reason: "A parked hostname wanted again is taken back as it is: unmarked, never deleted.",
			have:   []client.Object{published("a.example.com", mine, markedUnwanted(now.Add(-4*time.Second)))},
			d:      Desired{Objects: []Owned{published("a.example.com", mine)}},
			want: want{
				calls:    []string{"Update PublicHostname/web-a.example.com"},
				events:   []string{"Normal KeptPublicHostname"},
				children: []string{"PublicHostname/web-a.example.com"},
			},
		},
		"MarksAgainWhatIsNotATime": {
			reason: "A mark that is not a time says nothing of how long: the grace starts now, nothing goes early.",
			have: []client.Object{published("a.example.com", mine, func(m *metav1.ObjectMeta) {
				m.Annotations = map[string]string{v1alpha1.AnnotationUnwantedSince: "yesterday"}
			})},
			want: want{
				calls:   []string{"Update PublicHostname/web-a.example.com"},
				events:  []string{"Normal ParkedPublicHostname"},
				parked:  []string{"PublicHostname/web-a.example.com"},
				recheck: grace,
				mark:    "2026-12-07T12:00:00Z",
			},
		},
		"ReleasesOtherKindsAtOnce": {
			reason: "Only a PublicHostname has a parked state; a private route no longer wanted goes at once.",
			have:   []client.Object{route("a.example.com", mine)},
			want: want{
				calls:    []string{"Delete HostnameRoute/web-a.example.com"},
				events:   []string{"Normal DeletingHostnameRoute"},
				released: []string{"HostnameRoute/web-a.example.com"},
			},
		},
		"AnOwnerThatGoesHasNoGrace": {
			reason:  "Release (the owner deleted) wants nothing again: its hostnames go at once, parked ones too.",
			have:    []client.Object{published("a.example.com", mine, markedUnwanted(now))},
			release: true,
			want: want{
				calls:    []string{"Delete PublicHostname/web-a.example.com"},
				events:   []string{"Normal DeletingPublicHostname"},
				released: []string{"PublicHostname/web-a.example.com"},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := newWorld(tc.have...)
			var ev events
			c := &Converger{Kube: w.client(), Record: &ev, Grace: grace, Now: func() time.Time { return now }, Kinds: func() []client.ObjectList {
				return []client.ObjectList{&ztv1alpha1.HostnameRouteList{}, &v1alpha1.PublicHostnameList{}}
			}}
			o := OwnerOf(owner, "networking.k8s.io/v1", "Ingress", nil)
			var out Outcome
			var err error
			if tc.release {
				_, err = c.Release(context.Background(), o)
				out.Released = []Owned{published("a.example.com", mine)}
			} else {
				out, err = c.Converge(context.Background(), o, tc.d)
			}
			if err != nil {
				t.Fatal(err)
			}
			got := want{calls: w.calls, events: ev, children: keys(out.Children), parked: keys(out.Parked), released: keys(out.Released), recheck: out.RecheckAfter}
			if ph, ok := w.objs["PublicHostname/web-a.example.com"]; ok {
				got.mark = ph.GetAnnotations()[v1alpha1.AnnotationUnwantedSince]
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nConverge(...): -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}
