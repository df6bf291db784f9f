package accessgroup

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
)

func TestDiff(t *testing.T) {
	spec := v1alpha1.AccessGroupParameters{
		Name:    "sre",
		Include: []v1alpha1.AccessRule{{Email: ptr.To("ada@example.com")}, {GroupID: ptr.To("g-2")}},
	}
	raw := func(s ...string) []json.RawMessage {
		out := []json.RawMessage{}
		for _, r := range s {
			out = append(out, json.RawMessage(r))
		}
		return out
	}
	held := cloudflare.AccessGroup{ID: "g-1", Name: "sre", Include: raw(`{"email": {"email": "ada@example.com"}}`, `{"group":{"id":"g-2"}}`)}
	cases := map[string]struct {
		edit func(g *cloudflare.AccessGroup)
		want string
	}{
		"UpToDate":       {edit: func(*cloudflare.AccessGroup) {}},
		"Renamed":        {edit: func(g *cloudflare.AccessGroup) { g.Name = "ops" }, want: `name: "ops" in Cloudflare, "sre" desired`},
		"MemberDropped":  {edit: func(g *cloudflare.AccessGroup) { g.Include = g.Include[:1] }, want: `include: [{"email":{"email":"ada@example.com"}}] in Cloudflare, [{"email":{"email":"ada@example.com"}},{"group":{"id":"g-2"}}] desired`},
		"ExclusionAdded": {edit: func(g *cloudflare.AccessGroup) { g.Exclude = raw(`{"everyone":{}}`) }, want: `exclude: [{"everyone":{}}] in Cloudflare, [] desired`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := held
			got.Include = append([]json.RawMessage{}, held.Include...)
			tc.edit(&got)
			if diff := cmp.Diff(tc.want, Diff(spec, got)); diff != "" {
				t.Errorf("Diff(): -want +got:\n%s", diff)
			}
		})
	}
}
