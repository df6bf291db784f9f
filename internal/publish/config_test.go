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

// The rules of one hostname are tried as Gateway API orders matches: Exact,
// the longest Prefix, then expressions in the order they were asked for
// (the oldest claim's first), the path-less rule last; however long an
// expression is, it never comes before a literal.
func TestPathPrecedence(t *testing.T) {
	const h = "app.example.com"
	cases := map[string]struct {
		in   []string // paths of h, in the order asked for
		want []string
	}{
		"ALongExpressionAfterAnExact": {
			in:   []string{`^/(login|zzzzzzzzzzzzzzzzzzzzzzzzzzzz)$`, `^/login$`},
			want: []string{`^/login$`, `^/(login|zzzzzzzzzzzzzzzzzzzzzzzzzzzz)$`},
		},
		"ExpressionsAfterEveryPrefix": {
			in:   []string{`^(?:/api/v[0-9]+/users/.*)$`, `^/a(/|$)`, `^/api(/|$)`},
			want: []string{`^/api(/|$)`, `^/a(/|$)`, `^(?:/api/v[0-9]+/users/.*)$`},
		},
		"ExpressionsKeepTheirOrder": {
			in:   []string{`^/b.*`, `^/aaaaaaaaaaaaa.*`, `^/c`},
			want: []string{`^/b.*`, `^/aaaaaaaaaaaaa.*`, `^/c`},
		},
		"ExactBeforeAPrefixOfTheSameLiteral": {
			in:   []string{`^/api(/|$)`, `^/api$`},
			want: []string{`^/api$`, `^/api(/|$)`},
		},
		"ExactBeforeALongerPrefix": {
			in:   []string{`^/a/b/c/d(/|$)`, `^/a$`},
			want: []string{`^/a$`, `^/a/b/c/d(/|$)`},
		},
		"AnAnchoredLiteralExpressionIsThatLiteral": {
			in:   []string{`^/login(/|$)`, `^/x.*`, `^/login$`},
			want: []string{`^/login$`, `^/login(/|$)`, `^/x.*`},
		},
		"ThePathlessRuleLast": {
			in:   []string{"", `^/x.*`, `^/api(/|$)`},
			want: []string{`^/api(/|$)`, `^/x.*`, ""},
		},
		"TheFirstOfTwoAlikeStays": {
			in:   []string{`^/x.*`, `^/y`, `^/x.*`},
			want: []string{`^/x.*`, `^/y`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var rs []ztv1alpha1.IngressRule
			for i, p := range tc.in {
				rs = append(rs, rule(h, p, "http://svc:"+string(rune('0'+i)), nil))
			}
			var got []string
			for _, r := range TunnelConfig(rs).Ingress {
				if r.Hostname != nil {
					got = append(got, ptr.Deref(r.Path, ""))
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("order (-want +got):\n%s", diff)
			}
		})
	}
}
