package dnsrecord

import (
	"strings"

	"k8s.io/apimachinery/pkg/types"
)

// The ownership marker is how the provider tells the records it created from
// everyone else's: Cloudflare has no owner field, and a DNS name alone says
// nothing about who made a record. The marker names the managed resource by
// UID (not name), so a DNSRecord deleted and recreated under the same name
// does not inherit records it never made.
const (
	markerPrefix = "[crossplane:"
	markerSuffix = "]"
)

// Marker is the ownership marker of the managed resource with the given UID.
func Marker(uid types.UID) string { return markerPrefix + string(uid) + markerSuffix }

// Comment is the comment stored with a record the provider owns: the user's
// comment, a space, and the ownership marker. The user part is at most
// v1alpha1.MaxCommentLength (50) characters and a UID 36, so the result
// fits Cloudflare's 100-character comment limit on free zones.
func Comment(userComment string, uid types.UID) string {
	if userComment == "" {
		return Marker(uid)
	}
	return userComment + " " + Marker(uid)
}

// SplitComment splits a record's comment into the user's part and the UID in
// its ownership marker. ok is false when the comment does not end with a
// well-formed marker; user is then the whole comment, so a record made
// elsewhere compares by its full comment. Only a marker at the very end
// counts: that is where Comment puts it, and a marker-like text a human typed
// in the middle of a comment must not make a record look owned.
func SplitComment(c string) (user string, uid string, ok bool) {
	if !strings.HasSuffix(c, markerSuffix) {
		return c, "", false
	}
	i := strings.LastIndex(c, markerPrefix)
	if i < 0 {
		return c, "", false
	}
	uid = c[i+len(markerPrefix) : len(c)-len(markerSuffix)]
	if uid == "" || strings.ContainsAny(uid, "[] \t") {
		return c, "", false
	}
	user = c[:i]
	switch {
	case user == "":
	case strings.HasSuffix(user, " "):
		// Exactly the one separator Comment adds, so user comments with
		// trailing spaces survive a round trip.
		user = user[:len(user)-1]
	default:
		// Glued to preceding text: not a marker Comment wrote.
		return c, "", false
	}
	return user, uid, true
}

// ownedBy reports whether a record's comment carries the marker of uid.
func ownedBy(comment string, uid types.UID) bool {
	_, got, ok := SplitComment(comment)
	return ok && uid != "" && got == string(uid)
}
