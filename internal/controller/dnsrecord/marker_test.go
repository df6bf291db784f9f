package dnsrecord

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/dns/v1alpha1"
)

const uid = types.UID("0b7c5a8e-3f2d-4c1a-9e6b-1d2f3a4b5c6d")

func TestComment(t *testing.T) {
	cases := map[string]struct {
		user string
		want string
	}{
		"NoUserComment":   {user: "", want: "[crossplane:" + string(uid) + "]"},
		"UserComment":     {user: "web frontend", want: "web frontend [crossplane:" + string(uid) + "]"},
		"TrailingSpace":   {user: "padded ", want: "padded  [crossplane:" + string(uid) + "]"},
		"LongestAllowed":  {user: strings.Repeat("x", v1alpha1.MaxCommentLength), want: strings.Repeat("x", v1alpha1.MaxCommentLength) + " [crossplane:" + string(uid) + "]"},
		"MarkerLikeInput": {user: "see [crossplane:other]", want: "see [crossplane:other] [crossplane:" + string(uid) + "]"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Comment(tc.user, uid)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Comment(%q): -want +got:\n%s", tc.user, diff)
			}
			// Whatever the user wrote comes back out unchanged.
			user, gotUID, ok := SplitComment(got)
			if !ok || user != tc.user || gotUID != string(uid) {
				t.Errorf("SplitComment(Comment(%q)) = %q, %q, %v", tc.user, user, gotUID, ok)
			}
		})
	}
}

// TestCommentFitsCloudflareLimit: the longest user comment the API allows
// plus the marker fits Cloudflare's 100-character limit on free zones.
func TestCommentFitsCloudflareLimit(t *testing.T) {
	c := Comment(strings.Repeat("é", v1alpha1.MaxCommentLength), types.UID("ffffffff-ffff-ffff-ffff-ffffffffffff"))
	if n := len([]rune(c)); n > 100 {
		t.Errorf("comment is %d characters, more than 100", n)
	}
}

func TestSplitComment(t *testing.T) {
	type want struct {
		user string
		uid  string
		ok   bool
	}
	cases := map[string]struct {
		comment string
		want    want
	}{
		"Empty":           {comment: "", want: want{user: ""}},
		"NoMarker":        {comment: "managed by hand", want: want{user: "managed by hand"}},
		"MarkerOnly":      {comment: "[crossplane:abc]", want: want{user: "", uid: "abc", ok: true}},
		"UserAndMarker":   {comment: "hello [crossplane:abc]", want: want{user: "hello", uid: "abc", ok: true}},
		"LastMarkerWins":  {comment: "x [crossplane:old] [crossplane:new]", want: want{user: "x [crossplane:old]", uid: "new", ok: true}},
		"MarkerNotAtEnd":  {comment: "[crossplane:abc] edited", want: want{user: "[crossplane:abc] edited"}},
		"GluedToText":     {comment: "hello[crossplane:abc]", want: want{user: "hello[crossplane:abc]"}},
		"EmptyUID":        {comment: "hello [crossplane:]", want: want{user: "hello [crossplane:]"}},
		"SpaceInUID":      {comment: "[crossplane:a b]", want: want{user: "[crossplane:a b]"}},
		"OtherBracket":    {comment: "note [other:abc]", want: want{user: "note [other:abc]"}},
		"UnclosedMarker":  {comment: "note [crossplane:abc", want: want{user: "note [crossplane:abc"}},
		"TwoSpacesBefore": {comment: "a  [crossplane:abc]", want: want{user: "a ", uid: "abc", ok: true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got want
			got.user, got.uid, got.ok = SplitComment(tc.comment)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("SplitComment(%q): -want +got:\n%s", tc.comment, diff)
			}
		})
	}
}

func TestOwnedBy(t *testing.T) {
	cases := map[string]struct {
		comment string
		uid     types.UID
		want    bool
	}{
		"Ours":              {comment: Comment("x", uid), uid: uid, want: true},
		"AnotherMR":         {comment: Comment("x", "another-uid"), uid: uid, want: false},
		"NoMarker":          {comment: "x", uid: uid, want: false},
		"EmptyUIDNeverOwns": {comment: "[crossplane:]", uid: "", want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := ownedBy(tc.comment, tc.uid); got != tc.want {
				t.Errorf("ownedBy(%q, %q) = %v, want %v", tc.comment, tc.uid, got, tc.want)
			}
		})
	}
}
