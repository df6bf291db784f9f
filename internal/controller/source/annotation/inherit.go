package annotation

// Access a child inherits: one rule, for every source whose Access comes
// from two places (a GatewayBinding's spec.access and its routes'
// annotations; a native Gateway's routes, whose parent asks for none), so
// that no child lowers the check its parent asked for.

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/utils/ptr"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
)

// Child is the Access check a child is published with.
type Child struct {
	// Access is the check: the child's when its parent allows it, else the
	// parent's.
	Access *v1alpha1.Access
	// Problem: an annotation cannot be used; the child publishes nothing
	// new (Access is nil).
	Problem string
	// Refused: the annotations ask for a check weaker than the parent's,
	// or one that cannot be shown as strong; Access is the parent's. Why,
	// for the child's owner to read.
	Refused string
}

// ChildAccess is the check a child with these annotations is published
// with under a parent asking for parent (nil: none). The child's own check
// replaces the parent's only when it admits nobody the parent's keeps out
// (Inherit); no annotation value ever lowers it.
func ChildAccess(parent *v1alpha1.Access, parentName string, annotations map[string]string) Child {
	if !HasAccess(annotations) {
		return Child{Access: parent.DeepCopy()}
	}
	r := Read(annotations)
	a := r.Access()
	if problem := r.ProblemText(); problem != "" {
		return Child{Problem: problem}
	}
	got, why := Inherit(parent, a)
	if why != "" {
		return Child{Access: got, Refused: fmt.Sprintf("the access annotations ask for a check weaker than %s (%s): %s; published with %s", parentName, describe(parent), why, parentName)}
	}
	return Child{Access: got}
}

// Inherit is the check a child asking for child is published with under a
// parent asking for parent, and why the child's was refused ("" when it
// was not). "Weaker" is judged by who gets through:
//   - no check, or one not required (required: false only checks a token
//     that is sent, so anyone gets through by sending none), keeps nobody
//     out: under such a parent the child's check stands, whatever it is;
//   - a required check lets in the holders of an Access token of its team
//     for one of its audience tags. A child's required check is as strong
//     only if every token it accepts the parent's accepts too: the same
//     team and some of the parent's audience tags (fewer tags let fewer
//     applications' users in), or the very same AccessPolicies in the same
//     order (one application made with them). Other or more policies are
//     refused: an application lets in whoever any one of its allow
//     policies admits, so a policy added or swapped may let in someone the
//     parent's keep out, and a "bypass" policy lets in everyone.
//
// A refused child gets the parent's check, never none.
func Inherit(parent, child *v1alpha1.Access) (*v1alpha1.Access, string) {
	if !protects(parent) {
		return child.DeepCopy(), ""
	}
	if why := weaker(parent, child); why != "" {
		return parent.DeepCopy(), why
	}
	return child.DeepCopy(), ""
}

// protects says whether a keeps anyone out: present and required.
func protects(a *v1alpha1.Access) bool { return a != nil && ptr.Deref(a.Required, true) }

// weaker says why child admits someone a protecting parent keeps out, or "".
func weaker(parent, child *v1alpha1.Access) string {
	switch {
	case child == nil:
		return "no check"
	case !protects(child):
		return "access-required \"false\" lets in whoever sends no Access token"
	case len(parent.Policies) > 0 && len(child.Policies) == 0:
		return "applications made elsewhere instead of the AccessPolicies asked for"
	case len(parent.Policies) > 0:
		if slices.Equal(parent.Policies, child.Policies) {
			return ""
		}
		return "other AccessPolicies than those asked for (an application lets in whoever any one of its policies admits, so another policy may let in people these keep out)"
	case len(child.Policies) > 0:
		return "AccessPolicies of an application made here instead of the applications asked for"
	case child.TeamName != parent.TeamName:
		return fmt.Sprintf("team %s instead of %s", publish.Clip(child.TeamName), publish.Clip(parent.TeamName))
	}
	for _, tag := range child.AudTags {
		if !slices.Contains(parent.AudTags, tag) {
			return fmt.Sprintf("audience tag %s, which the check asked for does not accept", publish.Clip(tag))
		}
	}
	if len(child.AudTags) == 0 {
		return "no audience tag"
	}
	return ""
}

// describe names a parent's check for a message.
func describe(a *v1alpha1.Access) string {
	switch {
	case a == nil:
		return "none"
	case len(a.Policies) > 0:
		names := make([]string, 0, len(a.Policies))
		for _, p := range a.Policies {
			if p.Namespace != "" {
				names = append(names, p.Namespace+"/"+p.Name)
			} else {
				names = append(names, p.Name)
			}
		}
		return "AccessPolicies " + strings.Join(names, ", ")
	}
	return fmt.Sprintf("team %s, %d audience tag(s)", a.TeamName, len(a.AudTags))
}
