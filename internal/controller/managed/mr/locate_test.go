package mr

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
)

type object struct {
	id      string
	deleted bool
}

func TestLocate(t *testing.T) {
	boom := errors.New("boom")
	notFound := &cloudflare.APIError{Status: http.StatusNotFound}
	type want struct {
		obj          *object
		adopted      bool
		err          error
		externalName string
	}
	cases := map[string]struct {
		externalName string
		get          func(string) (*object, error)
		find         func() (*object, error)
		want         want
	}{
		"FoundByID":        {externalName: "a", get: func(id string) (*object, error) { return &object{id: id}, nil }, want: want{obj: &object{id: "a"}, externalName: "a"}},
		"GoneByID":         {externalName: "a", get: func(string) (*object, error) { return nil, notFound }, want: want{externalName: "a"}},
		"SoftDeletedByID":  {externalName: "a", get: func(id string) (*object, error) { return &object{id: id, deleted: true}, nil }, want: want{externalName: "a"}},
		"GetFails":         {externalName: "a", get: func(string) (*object, error) { return nil, boom }, want: want{err: boom, externalName: "a"}},
		"FoundByKey":       {find: func() (*object, error) { return &object{id: "b"}, nil }, want: want{obj: &object{id: "b"}, adopted: true, externalName: "b"}},
		"NothingByKey":     {find: func() (*object, error) { return nil, nil }, want: want{}},
		"FindRefuses":      {find: func() (*object, error) { return nil, boom }, want: want{err: boom}},
		"IDNeverAsksFind":  {externalName: "a", get: func(id string) (*object, error) { return &object{id: id}, nil }, find: func() (*object, error) { panic("Find with an external-name") }, want: want{obj: &object{id: "a"}, externalName: "a"}},
		"KeyNeverAsksByID": {get: func(string) (*object, error) { panic("Get without an external-name") }, find: func() (*object, error) { return nil, nil }},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			mg := &v1alpha1.NetworkRoute{}
			meta.SetExternalName(mg, tc.externalName)
			obj, adopted, err := Locate(context.Background(), mg, Lookup[object]{
				Get:     func(_ context.Context, id string) (*object, error) { return tc.get(id) },
				Find:    func(context.Context) (*object, error) { return tc.find() },
				ID:      func(o *object) string { return o.id },
				Deleted: func(o *object) bool { return o.deleted },
			})
			got := want{obj: obj, adopted: adopted, err: err, externalName: meta.GetExternalName(mg)}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{}, object{}), cmpopts.EquateErrors()); diff != "" {
				t.Errorf("-want +got:\n%s", diff)
			}
		})
	}
}
