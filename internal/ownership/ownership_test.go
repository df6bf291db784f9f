package ownership

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
)

const uid = types.UID("0b7c5a8e-3f2d-4c1a-9e6b-1d2f3a4b5c6d")

func identity(owner, ns, name string) Identity {
	return Identity{Owner: owner, Kind: "DNSRecord", Namespace: ns, Name: name, UID: uid}
}

func TestValidOwner(t *testing.T) {
	cases := map[string]struct {
		owner string
		ok    bool
	}{
		"Short":            {owner: "a", ok: true},
		"Dashes":           {owner: "prod-eu-1", ok: true},
		"Longest":          {owner: strings.Repeat("a", MaxOwnerLength), ok: true},
		"TooLong":          {owner: strings.Repeat("a", MaxOwnerLength+1)},
		"Empty":            {owner: ""},
		"Upper":            {owner: "Prod"},
		"LeadingDash":      {owner: "-prod"},
		"TrailingDash":     {owner: "prod-"},
		"Slash":            {owner: "a/b"},
		"MarkerDelimiters": {owner: "a]b"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if err := ValidOwner(tc.owner); (err == nil) != tc.ok {
				t.Errorf("ValidOwner(%q) = %v, want ok %v", tc.owner, err, tc.ok)
			}
		})
	}
}

func TestClusterOwner(t *testing.T) {
	got := ClusterOwner("3F2A1C4E-5B6D-4E7F-8A9B-0C1D2E3F4A5B")
	if want := "3f2a1c4e5b6d4e7f8a9b"; got != want {
		t.Errorf("ClusterOwner() = %q, want %q", got, want)
	}
	if err := ValidOwner(got); err != nil {
		t.Errorf("the default owner is not a valid owner: %v", err)
	}
}

func TestMark(t *testing.T) {
	a := identity("prod", "web", "www")
	cases := map[string]struct {
		other Identity
		same  bool
	}{
		"SameResourceAfterRebuild": {other: Identity{Owner: "prod", Kind: "DNSRecord", Namespace: "web", Name: "www", UID: "a-new-uid"}, same: true},
		"OtherOwner":               {other: identity("staging", "web", "www")},
		"OtherNamespace":           {other: identity("prod", "api", "www")},
		"OtherName":                {other: identity("prod", "web", "api")},
		"OtherKind":                {other: Identity{Owner: "prod", Kind: "HostnameRoute", Namespace: "web", Name: "www"}},
		"NoSeparatorCollision":     {other: identity("prod", "webw", "ww")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := a.Mark() == tc.other.Mark(); got != tc.same {
				t.Errorf("%q == %q: %v, want %v", a.Mark(), tc.other.Mark(), got, tc.same)
			}
		})
	}
	if got := len(identity(strings.Repeat("a", MaxOwnerLength), "n", "m").Mark()); got > len(uid) {
		t.Errorf("the longest mark has %d characters, more than a UID's %d", got, len(uid))
	}
}

func TestMade(t *testing.T) {
	me := identity("prod", "web", "www")
	cases := map[string]struct {
		mark Mark
		want bool
	}{
		"OwnMark":              {mark: me.Mark(), want: true},
		"OwnLegacyUID":         {mark: Mark(uid), want: true},
		"OtherLegacyUID":       {mark: "1b7c5a8e-3f2d-4c1a-9e6b-1d2f3a4b5c6d"},
		"OtherOwnersMark":      {mark: identity("staging", "web", "www").Mark()},
		"OtherResourcesMark":   {mark: identity("prod", "web", "api").Mark()},
		"Empty":                {mark: ""},
		"OwnerOnly":            {mark: "prod/"},
		"ForgedWithoutOwnerID": {mark: Mark("/" + strings.SplitN(string(me.Mark()), "/", 2)[1])},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := me.Made(tc.mark); got != tc.want {
				t.Errorf("Made(%q) = %v, want %v", tc.mark, got, tc.want)
			}
		})
	}
	if (Identity{Kind: "DNSRecord", Namespace: "web", Name: "www"}).Made(identity("", "web", "www").Mark()) {
		t.Error("an identity without an owner ID credits itself with a mark")
	}
}

func TestSplit(t *testing.T) {
	type want struct {
		user string
		mark Mark
		ok   bool
	}
	cases := map[string]struct {
		comment string
		want    want
	}{
		"MarkerOnly":      {comment: "[crossplane:prod/abc]", want: want{mark: "prod/abc", ok: true}},
		"UserAndMarker":   {comment: "hello [crossplane:prod/abc]", want: want{user: "hello", mark: "prod/abc", ok: true}},
		"LegacyUID":       {comment: "hello [crossplane:" + string(uid) + "]", want: want{user: "hello", mark: Mark(uid), ok: true}},
		"TrailingSpaces":  {comment: "padded  [crossplane:a/b]", want: want{user: "padded ", mark: "a/b", ok: true}},
		"NoMarker":        {comment: "just a comment", want: want{user: "just a comment"}},
		"Glued":           {comment: "x[crossplane:a/b]", want: want{user: "x[crossplane:a/b]"}},
		"NotAtTheEnd":     {comment: "[crossplane:a/b] later", want: want{user: "[crossplane:a/b] later"}},
		"EmptyMarker":     {comment: "[crossplane:]", want: want{user: "[crossplane:]"}},
		"SpaceInMarker":   {comment: "[crossplane:a b]", want: want{user: "[crossplane:a b]"}},
		"LastMarkerCount": {comment: "[crossplane:x/y] [crossplane:a/b]", want: want{user: "[crossplane:x/y]", mark: "a/b", ok: true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got want
			got.user, got.mark, got.ok = Split(tc.comment)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("Split(%q): -want +got:\n%s", tc.comment, diff)
			}
		})
	}
}

func TestCommentFitsCloudflare(t *testing.T) {
	// The DNSRecord CRD allows 50 characters of user comment; free zones
	// allow 100 in all.
	c := Comment(strings.Repeat("é", 50), identity(strings.Repeat("a", MaxOwnerLength), "n", "m").Mark())
	if n := utf8.RuneCountInString(c); n > 100 {
		t.Errorf("Comment has %d characters: %q", n, c)
	}
}

func TestDescribe(t *testing.T) {
	me := identity("prod", "web", "www")
	cases := map[string]struct {
		comment string
		want    string
	}{
		"NoMarker":      {comment: "by hand", want: "no ownership marker"},
		"OtherOwner":    {comment: Comment("", identity("staging", "web", "www").Mark()), want: `owner "staging"`},
		"LegacyUID":     {comment: Comment("", "some-uid"), want: "by UID"},
		"SameOwnerElse": {comment: Comment("", identity("prod", "web", "api").Mark()), want: "another managed resource of this installation"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := me.Describe(tc.comment); !strings.Contains(got, tc.want) {
				t.Errorf("Describe(%q) = %q, want it to say %q", tc.comment, got, tc.want)
			}
		})
	}
}
