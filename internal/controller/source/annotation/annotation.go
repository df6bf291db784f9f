// Package annotation parses the annotations that every source reads the
// same way (an Ingress, a Service, an HTTPRoute of a GatewayBinding): one
// parser, so an annotation means the same thing wherever it is written.
// Like the translators it serves, it is pure and fails closed: a bad value
// is a Problem naming the annotation, never a guess.
package annotation

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
)

// Reader reads one object's annotations and collects their problems.
type Reader struct {
	ann map[string]string
	// Problems name the annotation in their Field.
	Problems []publish.Problem
}

// Read reads an object's annotations.
func Read(ann map[string]string) *Reader { return &Reader{ann: ann} }

func (r *Reader) problem(key, format string, args ...any) {
	r.Problems = append(r.Problems, publish.Problem{Field: key, Message: fmt.Sprintf(format, args...)})
}

// ProblemText is the Problems in one sentence, each naming its
// annotation, for a condition or a hostname's state; "" when there are
// none.
func (r *Reader) ProblemText() string {
	msgs := make([]string, 0, len(r.Problems))
	for _, p := range r.Problems {
		msgs = append(msgs, fmt.Sprintf("annotation %s: %s", p.Field, p.Message))
	}
	return strings.Join(msgs, "; ")
}

// Bool is a "true" or "false" annotation; nil when absent or bad (a
// Problem).
func (r *Reader) Bool(key string) *bool {
	v, ok := r.ann[key]
	if !ok {
		return nil
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true":
		return ptr.To(true)
	case "false":
		return ptr.To(false)
	}
	r.problem(key, `must be "true" or "false", not %s`, publish.Clip(v))
	return nil
}

// HasAccess says whether any access annotation is present: the object asks
// for an Access check of its own, right or wrong.
func HasAccess(ann map[string]string) bool {
	for _, k := range []string{v1alpha1.AnnotationAccessPolicies, v1alpha1.AnnotationAccessTeam, v1alpha1.AnnotationAccessAudTags, v1alpha1.AnnotationAccessRequired} {
		if _, ok := ann[k]; ok {
			return true
		}
	}
	return false
}

// closed ends every Access problem: what fails closed, and how.
const closed = "; the hostnames are not published without their Access check"

// Access parses the access-* annotations: access-policies (an Access
// application made for each hostname), or access-team and access-aud
// (applications made elsewhere), with access-required. It fails closed:
// once any of them is present, the team and the audience tags, or the
// policies, must be right, or it is nil with a Problem (the caller then
// publishes nothing new: the hostnames keep the rules they had, with their
// Access check if they had one), never a hostname without the check. Nil
// with no Problem: no access annotation.
func (r *Reader) Access() *v1alpha1.Access {
	team, hasTeam := r.ann[v1alpha1.AnnotationAccessTeam]
	auds, hasAuds := r.ann[v1alpha1.AnnotationAccessAudTags]
	_, hasRequired := r.ann[v1alpha1.AnnotationAccessRequired]
	if policies, ok := r.ann[v1alpha1.AnnotationAccessPolicies]; ok {
		return r.managedAccess(policies, hasTeam || hasAuds, hasRequired)
	}
	if !hasTeam && !hasAuds && !hasRequired {
		return nil
	}
	before := len(r.Problems)
	a := &v1alpha1.Access{TeamName: strings.TrimSpace(team)}
	r.team(team, hasTeam)
	a.AudTags = r.audTags(auds)
	ok := len(r.Problems) == before
	if hasRequired {
		if a.Required = r.Bool(v1alpha1.AnnotationAccessRequired); a.Required == nil {
			ok = false
		}
	}
	if a.Required == nil {
		a.Required = ptr.To(true)
	}
	if !ok {
		return nil
	}
	return a
}

// team checks access-team; a missing or malformed one is a Problem.
func (r *Reader) team(team string, present bool) {
	switch {
	case !present:
		r.problem(v1alpha1.AnnotationAccessTeam, "required with the other access annotations: the Zero Trust team name (the <team> of <team>.cloudflareaccess.com)"+closed)
	case !teamName(strings.TrimSpace(team)):
		r.problem(v1alpha1.AnnotationAccessTeam, "%s is not a Zero Trust team name (the <team> of <team>.cloudflareaccess.com)"+closed, publish.Clip(team))
	}
}

// audTags are the tags of access-aud, lower case; a missing or malformed
// one is a Problem.
func (r *Reader) audTags(auds string) []string {
	var tags []string
	for _, tag := range strings.Split(auds, ",") {
		if tag = strings.TrimSpace(tag); tag != "" {
			tags = append(tags, strings.ToLower(tag))
		}
	}
	if len(tags) == 0 {
		r.problem(v1alpha1.AnnotationAccessAudTags, "required with the other access annotations: the audience tags of the Access applications allowed, comma-separated"+closed)
	}
	for _, tag := range tags {
		if !audTag(tag) {
			r.problem(v1alpha1.AnnotationAccessAudTags, "%s is not an Access audience tag (64 hexadecimal digits)"+closed, publish.Clip(tag))
		}
	}
	return tags
}

// policyName reads one entry of access-policies: "<name>", an AccessPolicy
// of the source's namespace, or "<namespace>/<name>", one another namespace
// shares (its spec.allowedNamespaces decides, when it is published).
func policyName(v string) (v1alpha1.AccessPolicyName, bool) {
	ns, name, cross := strings.Cut(v, "/")
	if !cross {
		ns, name = "", v
	}
	if (cross && len(validation.IsDNS1123Label(ns)) > 0) || len(validation.IsDNS1123Subdomain(name)) > 0 {
		return v1alpha1.AccessPolicyName{}, false
	}
	return v1alpha1.AccessPolicyName{Name: name, Namespace: ns}, true
}

// managedAccess parses access-policies: the AccessPolicy names of an Access
// application made for each hostname. An empty list is a Problem, not a
// way to go without Access: no value turns a check off.
func (r *Reader) managedAccess(list string, explicit, hasRequired bool) *v1alpha1.Access {
	ok := true
	if explicit {
		r.problem(v1alpha1.AnnotationAccessPolicies, "set either access-policies (an Access application made for each hostname) or access-team and access-aud (applications made elsewhere), not both"+closed)
		ok = false
	}
	a := &v1alpha1.Access{Required: ptr.To(true)}
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		pol, valid := policyName(name)
		if !valid {
			r.problem(v1alpha1.AnnotationAccessPolicies, "%s is not an AccessPolicy: name one as <name>, or <namespace>/<name> for one another namespace shares"+closed, publish.Clip(name))
			ok = false
			continue
		}
		if slices.Contains(a.Policies, pol) {
			r.problem(v1alpha1.AnnotationAccessPolicies, "names %s twice: an Access application links each policy once"+closed, publish.Clip(name))
			ok = false
			continue
		}
		a.Policies = append(a.Policies, pol)
	}
	if len(a.Policies) == 0 && ok {
		r.problem(v1alpha1.AnnotationAccessPolicies, "names no AccessPolicy: the AccessPolicy objects of the namespace (or <namespace>/<name> of one shared with it), comma-separated"+closed)
		ok = false
	}
	if hasRequired {
		if a.Required = r.Bool(v1alpha1.AnnotationAccessRequired); a.Required == nil {
			ok = false
		}
	}
	if !ok {
		return nil
	}
	return a
}

func teamName(s string) bool { return len(s) <= 63 && len(validation.IsDNS1123Label(s)) == 0 }

func audTag(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
