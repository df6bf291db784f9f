// Package ownership is how the provider proves it made a Cloudflare object.
//
// Cloudflare has no owner field, and a name, hostname or DNS name finds an
// object without saying who made it. Where an object has a free-text field
// (a DNS record's or a hostname route's comment) the provider writes a
// marker into it: the installation's owner ID and the managed resource that
// made it. Those survive a rebuild of the cluster from the same manifests —
// unlike a UID, which a restore or a re-apply changes — so a rebuilt cluster
// configured with the same owner ID finds its own objects again, and one
// with another owner ID never takes them.
package ownership

import (
	"crypto/sha256"
	"encoding/base32"
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/types"
)

// MaxOwnerLength bounds an owner ID so that a marker is never longer than
// the UID markers of earlier versions (36 characters between the brackets):
// a DNS record's comment is limited to 100 characters on free zones, of
// which the user's part may take 50.
const MaxOwnerLength = 20

// refLength is how much of the resource's digest a marker keeps: 75 bits,
// so two resources of one owner never share a marker by chance.
const refLength = 15

// ownerPattern is what an owner ID may be: a DNS label of at most
// MaxOwnerLength characters, so it reads well in a comment and never holds
// the marker's own delimiters.
var ownerPattern = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,18}[a-z0-9])?$`)

// ValidOwner says why s cannot be an owner ID, or nil.
func ValidOwner(s string) error {
	if !ownerPattern.MatchString(s) {
		return fmt.Errorf("owner ID %q must be 1 to %d lowercase letters, digits or '-', starting and ending with a letter or digit", s, MaxOwnerLength)
	}
	return nil
}

// ClusterOwner is the default owner ID of a cluster: the first characters of
// its kube-system namespace's UID, which is unique per cluster and stable
// for its life (the usual cluster identity). A cluster rebuilt from scratch
// gets a new one, so recovering objects after a rebuild takes an owner ID
// set on purpose in the provider config.
func ClusterOwner(kubeSystemUID types.UID) string {
	s := strings.ReplaceAll(string(kubeSystemUID), "-", "")
	if len(s) > MaxOwnerLength {
		s = s[:MaxOwnerLength]
	}
	return strings.ToLower(s)
}

// The marker's delimiters. Earlier versions wrote the managed resource's UID
// between them; those markers are still recognised (and rewritten).
const (
	prefix = "[crossplane:"
	suffix = "]"
)

// Mark is the text between a marker's delimiters: "<owner>/<ref>", where
// ref is a digest of the managed resource's kind, namespace and name, or,
// in a marker an earlier version wrote, the resource's UID.
type Mark string

// String is the marker as written into a comment.
func (m Mark) String() string { return prefix + string(m) + suffix }

// Owner is the owner ID in the mark, "" for a UID mark of an earlier version.
func (m Mark) Owner() string {
	o, _, ok := strings.Cut(string(m), "/")
	if !ok {
		return ""
	}
	return o
}

// Identity is who a managed resource is, for its markers.
type Identity struct {
	// Owner is the installation's owner ID.
	Owner string
	// Kind, Namespace and Name name the managed resource.
	Kind, Namespace, Name string
	// UID is the resource's UID, to recognise markers of earlier versions.
	UID types.UID
}

// Mark is the identity's mark.
func (id Identity) Mark() Mark {
	sum := sha256.Sum256([]byte(id.Kind + "\x00" + id.Namespace + "\x00" + id.Name))
	ref := strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:]))[:refLength]
	return Mark(id.Owner + "/" + ref)
}

// Made reports whether mark says this identity made the object: its own
// mark, or the UID mark an earlier version wrote for this very resource.
func (id Identity) Made(mark Mark) bool {
	if mark == "" {
		return false
	}
	if mark.Owner() == "" {
		return id.UID != "" && string(mark) == string(id.UID)
	}
	return id.Owner != "" && mark == id.Mark()
}

// Comment is the comment stored with an object the provider owns: the
// user's comment, a space, and the marker.
func Comment(user string, m Mark) string {
	if user == "" {
		return m.String()
	}
	return user + " " + m.String()
}

// Split splits a comment into the user's part and its marker. ok is false
// when the comment does not end with a well-formed marker; user is then the
// whole comment, so an object made elsewhere compares by its full comment.
// Only a marker at the very end counts: that is where Comment puts it, and
// a marker-like text a human typed in the middle of a comment must not make
// an object look owned.
func Split(c string) (user string, m Mark, ok bool) {
	if !strings.HasSuffix(c, suffix) {
		return c, "", false
	}
	i := strings.LastIndex(c, prefix)
	if i < 0 {
		return c, "", false
	}
	inner := c[i+len(prefix) : len(c)-len(suffix)]
	if inner == "" || strings.ContainsAny(inner, "[] \t") {
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
	return user, Mark(inner), true
}

// Describe says, for a conflict message, who a comment says made an object
// that is not this identity's.
func (id Identity) Describe(comment string) string {
	_, m, ok := Split(comment)
	switch {
	case !ok:
		return "it carries no ownership marker of this provider: it was made elsewhere (another tool, the dashboard, by hand)"
	case m.Owner() == "":
		return "its ownership marker names another managed resource (by UID)"
	case m.Owner() != id.Owner:
		return fmt.Sprintf("its ownership marker names owner %q, another installation of this provider (this one is %q)", m.Owner(), id.Owner)
	default:
		return "its ownership marker names another managed resource of this installation"
	}
}
