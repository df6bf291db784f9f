package cloudflare

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare/budget"
)

// thing is an object of a kind made up for the generic piece's tests; a
// deleted thing keeps its ID, as a tunnel does.
type thing struct {
	ID, Name string
	Deleted  bool
}

// things is Cloudflare for things: it counts the calls made to it and
// fails them on demand.
type things struct {
	objects map[string]thing
	// unreadable are things the token lost its permission on: lists
	// leave them out and a get is refused with 403, as Cloudflare does
	// since lists show only what a token may read.
	unreadable            map[string]bool
	lists, gets, writes   int
	failList, failGet     error
	failWrite, failDelete error
}

func (f *things) kind() kind[thing] {
	return kind[thing]{
		getOp:      "cannot get thing",
		noun:       "thing",
		permission: "Account › Things: Edit",
		id:         func(t *thing) string { return t.ID },
		deleted:    func(t *thing) bool { return t.Deleted },
		list:       func(*Client, context.Context) ([]thing, error) { return f.list() },
		get:        func(_ *Client, _ context.Context, id string) (*thing, error) { return f.get(id) },
	}
}

// list leaves deleted things out, as Cloudflare's lists do.
func (f *things) list() ([]thing, error) {
	f.lists++
	if f.failList != nil {
		return nil, f.failList
	}
	var out []thing
	for _, t := range f.objects {
		if !t.Deleted && !f.unreadable[t.ID] {
			out = append(out, t)
		}
	}
	return out, nil
}

func (f *things) get(id string) (*thing, error) {
	f.gets++
	if f.failGet != nil {
		return nil, f.failGet
	}
	if f.unreadable[id] {
		return nil, &APIError{Operation: "cannot get thing", Status: http.StatusForbidden, Codes: []int{9109}, Messages: []string{"Unauthorized to access requested resource"}}
	}
	t, ok := f.objects[id]
	if !ok {
		return nil, &APIError{Operation: "cannot get thing", Status: http.StatusNotFound}
	}
	return &t, nil
}

func (f *things) create(_ context.Context, name string) (*thing, error) {
	f.writes++
	if f.failWrite != nil {
		return nil, f.failWrite
	}
	t := thing{ID: fmt.Sprintf("new-%d", f.writes), Name: name}
	f.objects[t.ID] = t
	return &t, nil
}

func (f *things) rename(_ context.Context, id, name string) (*thing, error) {
	f.writes++
	if f.failWrite != nil {
		return nil, f.failWrite
	}
	t := f.objects[id]
	t.Name = name
	f.objects[id] = t
	return &t, nil
}

func (f *things) delete(_ context.Context, id string) error {
	f.writes++
	if f.failDelete != nil {
		return f.failDelete
	}
	if _, ok := f.objects[id]; !ok {
		return &APIError{Operation: "cannot delete thing", Status: http.StatusNotFound}
	}
	delete(f.objects, id)
	return nil
}

// neverSent is a write that ended while it waited for a paused budget: it
// was queued and never left the process.
func neverSent(ctx context.Context) (*thing, error) {
	b := budget.NewRegistry(budget.Options{}).For("token")
	b.Pause(time.Minute)
	ctx, cancel := context.WithCancel(ctx)
	cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://cloudflare.invalid/", nil)
	if err != nil {
		return nil, err
	}
	_, err = (&budget.Transport{Budget: b}).RoundTrip(req)
	if err == nil {
		return nil, errors.New("a request to a paused budget left")
	}
	return nil, err
}

// age makes the snapshot's list d older.
func age[T any](s *snapshot[T], d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fetched, s.listed = s.fetched.Add(-d), s.listed.Add(-d)
}

var (
	errBoom = errors.New("boom")
	// errGone stands for any not-found answer (IsNotFound).
	errGone = errors.New("not found")
	// errAccessLost stands for an object the token lost its permission
	// on (IsAccessLost), which is never not found.
	errAccessLost = errors.New("access lost")
)

func sameError(got, want error) bool {
	switch want {
	case errGone:
		return IsNotFound(got) && !IsAccessLost(got)
	case errAccessLost:
		return IsAccessLost(got) && !IsNotFound(got)
	}
	return errors.Is(got, want) || (got == nil && want == nil)
}

// TestCachedKind: the generic piece every listed kind's CachedClient
// methods are made of. Each case starts from a snapshot filled by one list
// of Cloudflare's one thing "a" (named "a"), may change Cloudflare behind
// the cache's back, makes one call, then gets thenID; the calls to
// Cloudflare are counted from after the fill, over both.
func TestCachedKind(t *testing.T) {
	const ttl = time.Minute
	type call func(ctx context.Context, o cached[thing], f *things) (any, error)
	get := func(id string) call {
		return func(ctx context.Context, o cached[thing], _ *things) (any, error) { return o.get(ctx, id) }
	}
	one := func(id, name string) *thing { return &thing{ID: id, Name: name} }
	cases := map[string]struct {
		behind              func(f *things, s *snapshot[thing])
		do                  call
		want                any
		wantErr             error
		thenID              string
		thenWant            *thing
		thenErr             error
		lists, gets, writes int
	}{
		"Hit": {
			do: get("a"), want: one("a", "a"),
			thenID: "a", thenWant: one("a", "a"),
		},
		"MissConfirmedAndRecorded": {
			behind: func(f *things, _ *snapshot[thing]) { f.objects["b"] = thing{ID: "b", Name: "b"} },
			do:     get("b"), want: one("b", "b"),
			thenID: "b", thenWant: one("b", "b"),
			gets: 1,
		},
		"DeletedAnswerNotRecorded": {
			behind: func(f *things, _ *snapshot[thing]) { f.objects["b"] = thing{ID: "b", Name: "b", Deleted: true} },
			do:     get("b"), want: &thing{ID: "b", Name: "b", Deleted: true},
			thenID: "b", thenWant: &thing{ID: "b", Name: "b", Deleted: true},
			gets: 2,
		},
		// Missing from a fresh list: one get per observation tells a
		// deleted object (404) from one the token may no longer read
		// (403), which is never taken for gone.
		"GoneFromTheListAndByIDIsNotFound": {
			behind: func(f *things, s *snapshot[thing]) {
				delete(f.objects, "a")
				age(s, ttl+time.Second)
			},
			do: get("a"), wantErr: errGone,
			thenID: "a", thenErr: errGone,
			lists: 1, gets: 2,
		},
		"UnreadableIsAccessLostNotGone": {
			behind: func(f *things, s *snapshot[thing]) {
				f.unreadable = map[string]bool{"a": true}
				age(s, ttl+time.Second)
			},
			do: get("a"), wantErr: errAccessLost,
			thenID: "a", thenErr: errAccessLost,
			lists: 1, gets: 2,
		},
		"ReadableAgainIsServedFromTheListWithoutAGet": {
			behind: func(f *things, s *snapshot[thing]) {
				f.unreadable = map[string]bool{"a": true}
				age(s, ttl+time.Second)
				if _, err := (cached[thing]{c: &CachedClient{Client: &Client{}, ttl: ttl}, s: s, k: f.kind()}).get(context.Background(), "a"); !IsAccessLost(err) {
					panic(fmt.Sprintf("an unreadable thing: %v", err))
				}
				f.unreadable = nil
				age(s, ttl+time.Second)
				f.lists, f.gets = 0, 0
			},
			do: get("a"), want: one("a", "a"),
			thenID: "a", thenWant: one("a", "a"),
			lists: 1,
		},
		"UnknownIDNotFound": {
			do: get("zz"), wantErr: errGone,
			thenID: "zz", thenErr: errGone,
			gets: 2,
		},
		"ExpiredSnapshotListsAgain": {
			behind: func(f *things, s *snapshot[thing]) {
				f.objects["a"] = thing{ID: "a", Name: "drifted"}
				age(s, ttl+time.Second)
			},
			do: get("a"), want: one("a", "drifted"),
			thenID: "a", thenWant: one("a", "drifted"),
			lists: 1,
		},
		"ListErrorPassesThroughAndIsNotKept": {
			behind: func(f *things, s *snapshot[thing]) {
				f.failList = errBoom
				age(s, ttl+time.Second)
			},
			do: get("a"), wantErr: errBoom,
			thenID: "a", thenErr: errBoom,
			lists: 2,
		},
		"GetErrorPassesThroughAndIsNotKept": {
			behind: func(f *things, _ *snapshot[thing]) {
				f.objects["b"] = thing{ID: "b", Name: "b"}
				f.failGet = errBoom
			},
			do: get("b"), wantErr: errBoom,
			thenID: "b", thenErr: errBoom,
			gets: 2,
		},
		"ListSinceALaterTimeListsAgain": {
			behind: func(f *things, _ *snapshot[thing]) { f.objects["b"] = thing{ID: "b", Name: "b"} },
			do: func(ctx context.Context, o cached[thing], _ *things) (any, error) {
				return o.listSince(ctx, time.Now(), nil)
			},
			want:   []thing{{ID: "a", Name: "a"}, {ID: "b", Name: "b"}},
			thenID: "b", thenWant: one("b", "b"),
			lists: 1,
		},
		"ListSinceAnEarlierTimeIsServed": {
			do: func(ctx context.Context, o cached[thing], _ *things) (any, error) {
				return o.listSince(ctx, time.Now().Add(-time.Second), nil)
			},
			want:   []thing{{ID: "a", Name: "a"}},
			thenID: "a", thenWant: one("a", "a"),
		},
		"ListKeepsWhatItIsAskedFor": {
			behind: func(f *things, s *snapshot[thing]) {
				f.objects["b"], f.objects["c"] = thing{ID: "b", Name: "x"}, thing{ID: "c", Name: "x"}
				age(s, ttl+time.Second)
			},
			do: func(ctx context.Context, o cached[thing], _ *things) (any, error) {
				return o.list(ctx, ttl, func(t thing) bool { return t.Name == "x" })
			},
			want:   []thing{{ID: "b", Name: "x"}, {ID: "c", Name: "x"}},
			thenID: "c", thenWant: one("c", "x"),
			lists: 1,
		},
		"UpdateRecorded": {
			do: func(ctx context.Context, o cached[thing], f *things) (any, error) {
				return update(ctx, o, "a", "renamed", f.rename)
			},
			want:   one("a", "renamed"),
			thenID: "a", thenWant: one("a", "renamed"),
			writes: 1,
		},
		"CreateRecordedUnderTheAnswersID": {
			do: func(ctx context.Context, o cached[thing], f *things) (any, error) {
				return create(ctx, o, "made", f.create)
			},
			want:   one("new-1", "made"),
			thenID: "new-1", thenWant: one("new-1", "made"),
			writes: 1,
		},
		"FailedWriteInvalidates": {
			behind: func(f *things, _ *snapshot[thing]) {
				f.failWrite = errBoom
				f.objects["a"] = thing{ID: "a", Name: "made elsewhere"}
			},
			do: func(ctx context.Context, o cached[thing], f *things) (any, error) {
				return update(ctx, o, "a", "renamed", f.rename)
			},
			wantErr: errBoom,
			thenID:  "a", thenWant: one("a", "made elsewhere"),
			lists: 1, writes: 1,
		},
		"WriteNeverSentKeepsTheSnapshot": {
			do: func(ctx context.Context, o cached[thing], _ *things) (any, error) {
				return o.write(ctx, "a", neverSent)
			},
			wantErr: context.Canceled,
			thenID:  "a", thenWant: one("a", "a"),
		},
		"DeleteForgetsAndRemembers": {
			do: func(ctx context.Context, o cached[thing], f *things) (any, error) {
				return nil, o.remove(ctx, "a", f.delete)
			},
			thenID: "a", thenErr: errGone,
			writes: 1,
		},
		"DeleteOfOneGoneAlreadyForgetsIt": {
			behind: func(f *things, _ *snapshot[thing]) { delete(f.objects, "a") },
			do: func(ctx context.Context, o cached[thing], f *things) (any, error) {
				return nil, o.remove(ctx, "a", f.delete)
			},
			wantErr: errGone,
			thenID:  "a", thenErr: errGone,
			writes: 1,
		},
		"FailedDeleteKeepsTheObject": {
			behind: func(f *things, _ *snapshot[thing]) { f.failDelete = errBoom },
			do: func(ctx context.Context, o cached[thing], f *things) (any, error) {
				return nil, o.remove(ctx, "a", f.delete)
			},
			wantErr: errBoom,
			thenID:  "a", thenWant: one("a", "a"),
			writes: 1,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			f := &things{objects: map[string]thing{"a": {ID: "a", Name: "a"}}}
			o := cached[thing]{c: &CachedClient{Client: &Client{}, ttl: ttl}, s: &snapshot[thing]{}, k: f.kind()}
			if _, err := o.list(ctx, ttl, nil); err != nil {
				t.Fatal(err)
			}
			f.lists = 0
			if tc.behind != nil {
				tc.behind(f, o.s)
			}
			got, err := tc.do(ctx, o, f)
			if !sameError(err, tc.wantErr) {
				t.Errorf("call: error %v, want %v", err, tc.wantErr)
			}
			if tc.wantErr == nil {
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("call (-want +got):\n%s", diff)
				}
			}
			then, err := o.get(ctx, tc.thenID)
			if !sameError(err, tc.thenErr) {
				t.Errorf("then get %s: error %v, want %v", tc.thenID, err, tc.thenErr)
			}
			if diff := cmp.Diff(tc.thenWant, then); tc.thenErr == nil && diff != "" {
				t.Errorf("then get %s (-want +got):\n%s", tc.thenID, diff)
			}
			if f.lists != tc.lists || f.gets != tc.gets || f.writes != tc.writes {
				t.Errorf("calls: %d lists, %d gets, %d writes; want %d, %d, %d", f.lists, f.gets, f.writes, tc.lists, tc.gets, tc.writes)
			}
		})
	}
}

// TestAccessLostSaysWhatToGrant: the refusal of a get for an object its
// list left out names the object and the permission, and still reads as
// Cloudflare's 403 underneath.
func TestAccessLostSaysWhatToGrant(t *testing.T) {
	f := &things{objects: map[string]thing{"a": {ID: "a"}}, unreadable: map[string]bool{"a": true}}
	o := cached[thing]{c: &CachedClient{Client: &Client{}, ttl: time.Minute}, s: &snapshot[thing]{}, k: f.kind()}
	_, err := o.get(context.Background(), "a")
	var al *AccessLostError
	if !errors.As(err, &al) {
		t.Fatalf("error %v, want an AccessLostError", err)
	}
	if al.Kind != "thing" || al.ID != "a" || al.Permission != "Account › Things: Edit" {
		t.Errorf("AccessLostError %+v", al)
	}
	for _, want := range []string{"thing a", "Grant the token Account › Things: Edit", "not taken for deleted"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q does not say %q", err.Error(), want)
		}
	}
	if !IsForbidden(err) || !IsRefused(err) || IsNotFound(err) || IsTransient(err) {
		t.Errorf("classified as forbidden %t, refused %t, not found %t, transient %t; want a refusal only", IsForbidden(err), IsRefused(err), IsNotFound(err), IsTransient(err))
	}
}
