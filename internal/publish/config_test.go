package publish

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
)

func TestClassifyPath(t *testing.T) {
	cases := map[string]struct {
		kind PathKind
		lit  string
	}{
		"":                    {PathAny, ""},
		`^/login$`:            {PathExact, "/login"},
		`^/a\.b$`:             {PathExact, "/a.b"},
		`^/a\$$`:              {PathExact, "/a$"},
		`^/api(/|$)`:          {PathPrefix, "/api"},
		`^/v1\.0(/|$)`:        {PathPrefix, "/v1.0"},
		`^/(login|zzzzzzzz)$`: {PathRegex, ""},
		`^(?:/login)$`:        {PathRegex, ""},
		`^/log.n$`:            {PathRegex, ""},
		`^/a\$`:               {PathRegex, ""}, // "/a$" and anything after it
		`^/a\`:                {PathRegex, ""},
		`/login`:              {PathRegex, ""}, // unanchored: any path containing it
		`^/login`:             {PathRegex, ""},
		`^/api(/|$)x`:         {PathRegex, ""},
	}
	for p, want := range cases {
		kind, lit := ClassifyPath(p)
		if kind != want.kind || lit != want.lit {
			t.Errorf("ClassifyPath(%q) = %d %q, want %d %q", p, kind, lit, want.kind, want.lit)
		}
	}
}

// Of two rules for one hostname and path (which one claim never asks for,
// so the corpus cannot say it) the first stays: the other could never
// match.
func TestTheFirstOfTwoAlikeStays(t *testing.T) {
	const h = "app.example.com"
	var got []string
	for _, r := range TunnelConfig([]ztv1alpha1.IngressRule{rule(h, `^/x.*`, "http://svc:0", nil), rule(h, `^/y`, "http://svc:1", nil), rule(h, `^/x.*`, "http://svc:2", nil)}).Ingress {
		if r.Hostname != nil {
			got = append(got, ptr.Deref(r.Path, "")+" "+r.Service)
		}
	}
	if diff := cmp.Diff([]string{`^/x.* http://svc:0`, `^/y http://svc:1`}, got); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}
