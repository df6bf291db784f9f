package annotation

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
)

var (
	tagA = strings.Repeat("a", 64)
	tagB = strings.Repeat("b", 64)
)

func managed(required bool, names ...string) *v1alpha1.Access {
	a := &v1alpha1.Access{Required: ptr.To(required)}
	for _, n := range names {
		ns, name, ok := strings.Cut(n, "/")
		if !ok {
			ns, name = "", n
		}
		a.Policies = append(a.Policies, v1alpha1.AccessPolicyName{Namespace: ns, Name: name})
	}
	return a
}

func explicit(required bool, team string, tags ...string) *v1alpha1.Access {
	return &v1alpha1.Access{Required: ptr.To(required), TeamName: team, AudTags: tags}
}

// TestInherit: a child's check stands only when it lets in nobody the
// parent's keeps out; otherwise the parent's, and why.
func TestInherit(t *testing.T) {
	cases := map[string]struct {
		parent, child *v1alpha1.Access
		want          *v1alpha1.Access
		refused       bool
	}{
		"NoParent":                        {child: managed(false, "staff"), want: managed(false, "staff")},
		"NoChild":                         {parent: managed(true, "staff"), want: managed(true, "staff"), refused: true},
		"AnOptionalParentKeepsNobodyOut":  {parent: managed(false, "staff"), child: explicit(false, "acme", tagA), want: explicit(false, "acme", tagA)},
		"RequiringWhatTheParentDoesNot":   {parent: explicit(false, "acme", tagA), child: managed(true, "admins"), want: managed(true, "admins")},
		"TheSamePolicies":                 {parent: managed(true, "staff", "p/ops"), child: managed(true, "staff", "p/ops"), want: managed(true, "staff", "p/ops")},
		"RequiredUnsetIsRequired":         {parent: &v1alpha1.Access{Policies: managed(true, "staff").Policies}, child: managed(true, "staff"), want: managed(true, "staff")},
		"OptionalUnderARequiredParent":    {parent: managed(true, "staff"), child: managed(false, "staff"), want: managed(true, "staff"), refused: true},
		"APolicyAdded":                    {parent: managed(true, "staff"), child: managed(true, "staff", "contractors"), want: managed(true, "staff"), refused: true},
		"PoliciesReordered":               {parent: managed(true, "deny", "staff"), child: managed(true, "staff", "deny"), want: managed(true, "deny", "staff"), refused: true},
		"PoliciesSwapped":                 {parent: managed(true, "staff"), child: managed(true, "admins"), want: managed(true, "staff"), refused: true},
		"AnApplicationMadeElsewhere":      {parent: managed(true, "staff"), child: explicit(true, "acme", tagA), want: managed(true, "staff"), refused: true},
		"PoliciesInsteadOfTheAudience":    {parent: explicit(true, "acme", tagA), child: managed(true, "staff"), want: explicit(true, "acme", tagA), refused: true},
		"FewerAudienceTags":               {parent: explicit(true, "acme", tagA, tagB), child: explicit(true, "acme", tagB), want: explicit(true, "acme", tagB)},
		"AnotherAudienceTag":              {parent: explicit(true, "acme", tagA), child: explicit(true, "acme", tagA, tagB), want: explicit(true, "acme", tagA), refused: true},
		"AnotherTeam":                     {parent: explicit(true, "acme", tagA), child: explicit(true, "evil", tagA), want: explicit(true, "acme", tagA), refused: true},
		"OptionalAudienceUnderARequired":  {parent: explicit(true, "acme", tagA), child: explicit(false, "acme", tagA), want: explicit(true, "acme", tagA), refused: true},
		"TheIssuesRouteOptingOutOfPolicy": {parent: managed(true, "staff"), child: explicit(false, "acme", tagA), want: managed(true, "staff"), refused: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, why := Inherit(tc.parent, tc.child)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Inherit (-want +got):\n%s", diff)
			}
			if (why != "") != tc.refused {
				t.Errorf("refused %q, want refused: %v", why, tc.refused)
			}
		})
	}
}

// TestChildAccess: annotations parsed, then inherited; a refusal names
// the parent and says the parent's check is kept.
func TestChildAccess(t *testing.T) {
	parent := managed(true, "staff")
	c := ChildAccess(parent, "the binding's spec.access", map[string]string{
		v1alpha1.AnnotationAccessTeam: "acme", v1alpha1.AnnotationAccessAudTags: tagA, v1alpha1.AnnotationAccessRequired: "false",
	})
	if c.Problem != "" || !cmp.Equal(c.Access, parent) || !strings.Contains(c.Refused, "the binding's spec.access (AccessPolicies staff)") || !strings.HasSuffix(c.Refused, "published with the binding's spec.access") {
		t.Errorf("ChildAccess = %+v", c)
	}
	if c := ChildAccess(parent, "p", map[string]string{"other": "x"}); !cmp.Equal(c.Access, parent) || c.Refused != "" || c.Problem != "" {
		t.Errorf("without annotations: %+v, want the parent's", c)
	}
	if c := ChildAccess(parent, "p", map[string]string{v1alpha1.AnnotationAccessPolicies: " "}); c.Access != nil || c.Problem == "" {
		t.Errorf("an unusable annotation: %+v, want a problem and no check", c)
	}
}

// token is an Access token a user may hold: of a team, for an audience.
// A managed check's application is made in the account's own team (a name
// no explicit check can spell) with one audience per policy list.
type token struct{ team, aud string }

const accountTeam = "<the account's>"

// checkTokens are the tokens a check accepts; nil with open: anyone gets
// through (no check, or one not required, which a user passes by sending
// no token).
func checkTokens(a *v1alpha1.Access) (tokens []token, open bool) {
	if a == nil || !ptr.Deref(a.Required, true) {
		return nil, true
	}
	if len(a.Policies) > 0 {
		key := ""
		for _, p := range a.Policies {
			key += p.Namespace + "/" + p.Name + ","
		}
		return []token{{accountTeam, key}}, false
	}
	for _, tag := range a.AudTags {
		tokens = append(tokens, token{a.TeamName, tag})
	}
	return tokens, false
}

// admits says whether a user holding only tok (nil: none) gets through a.
func admits(a *v1alpha1.Access, tok *token) bool {
	tokens, open := checkTokens(a)
	if open {
		return true
	}
	for _, t := range tokens {
		if tok != nil && *tok == t {
			return true
		}
	}
	return false
}

// letsInMore says whether some user gets through got whom parent keeps
// out: judged by users, not by Inherit's rules. A user holding several
// tokens gets through wherever one of them does, so users of one token (or
// none) are enough.
func letsInMore(got, parent *v1alpha1.Access) bool {
	users := []*token{nil}
	for _, a := range []*v1alpha1.Access{got, parent} {
		ts, _ := checkTokens(a)
		for i := range ts {
			users = append(users, &ts[i])
		}
	}
	for _, u := range users {
		if admits(got, u) && !admits(parent, u) {
			return true
		}
	}
	return false
}

// fuzzAccess builds a check from the fuzzer's bytes.
func fuzzAccess(b []byte) *v1alpha1.Access {
	if len(b) == 0 || b[0]%5 == 0 {
		return nil
	}
	names := []string{"staff", "admins", "p/staff", "bypass"}
	teams := []string{"acme", "evil"}
	tags := []string{tagA, tagB, strings.Repeat("c", 64)}
	a := &v1alpha1.Access{}
	switch b[0] % 3 {
	case 0:
		a.Required = ptr.To(false)
	case 1:
		a.Required = ptr.To(true)
	}
	rest := b[1:]
	if b[0]&8 != 0 {
		for i, c := range rest {
			if i >= 4 {
				break
			}
			a.Policies = append(a.Policies, managed(true, names[int(c)%len(names)]).Policies...)
		}
		if len(a.Policies) == 0 {
			a.Policies = managed(true, "staff").Policies
		}
		return a
	}
	a.TeamName = teams[int(b[0]>>4)%len(teams)]
	for i, c := range rest {
		if i >= 3 {
			break
		}
		a.AudTags = append(a.AudTags, tags[int(c)%len(tags)])
	}
	if len(a.AudTags) == 0 {
		a.AudTags = []string{tagA}
	}
	return a
}

// FuzzInheritNeverWeakens: whatever a parent and a child ask for, the
// check published lets in nobody the parent's keeps out; and a child that
// lets in nobody more gets exactly its own check (it may add requirements).
func FuzzInheritNeverWeakens(f *testing.F) {
	f.Add([]byte{9, 0}, []byte{1, 0})
	f.Add([]byte{9, 0}, []byte{0, 0})
	f.Add([]byte{1, 0, 1}, []byte{1, 1})
	f.Add([]byte{3, 0}, []byte{9, 1})
	f.Add([]byte{25, 0, 1}, []byte{25, 1, 0})
	f.Fuzz(func(t *testing.T, pb, cb []byte) {
		parent, child := fuzzAccess(pb), fuzzAccess(cb)
		got, why := Inherit(parent, child)
		if letsInMore(got, parent) {
			t.Fatalf("published %+v under parent %+v (child %+v): lets in more than the parent asked", got, parent, child)
		}
		if got == nil && parent != nil && ptr.Deref(parent.Required, true) {
			t.Fatalf("no check under a required parent %+v", parent)
		}
		if !letsInMore(child, parent) && (why != "" || !cmp.Equal(got, child)) {
			t.Fatalf("child %+v under %+v refused (%q) though it lets in nobody more", child, parent, why)
		}
		if why != "" && !cmp.Equal(got, parent) {
			t.Fatalf("refused, published %+v, want the parent's %+v", got, parent)
		}
	})
}

// FuzzChildAccessNeverWeakens: through the annotations a route can write,
// whatever their values, what is published (when anything is) lets in
// nobody the parent's check keeps out.
func FuzzChildAccessNeverWeakens(f *testing.F) {
	f.Add([]byte{9, 0}, uint8(15), "staff", "acme", tagA, "false")
	f.Add([]byte{1, 0}, uint8(14), "", "acme", tagA+","+tagB, "FALSE")
	f.Add([]byte{1, 1}, uint8(1), "staff,staff", "", "", "")
	f.Fuzz(func(t *testing.T, pb []byte, present uint8, policies, team, aud, required string) {
		parent := fuzzAccess(pb)
		ann := map[string]string{}
		for i, kv := range [][2]string{{v1alpha1.AnnotationAccessPolicies, policies}, {v1alpha1.AnnotationAccessTeam, team}, {v1alpha1.AnnotationAccessAudTags, aud}, {v1alpha1.AnnotationAccessRequired, required}} {
			if present&(1<<i) != 0 {
				ann[kv[0]] = kv[1]
			}
		}
		c := ChildAccess(parent, "the parent", ann)
		if c.Problem != "" {
			if c.Access != nil {
				t.Fatalf("a problem (%s) with a check %+v: nothing new is published", c.Problem, c.Access)
			}
			return
		}
		if letsInMore(c.Access, parent) {
			t.Fatalf("annotations %v under %+v published %+v", ann, parent, c.Access)
		}
	})
}
