package accessapplication

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/utils/ptr"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
)

// Input is the application Cloudflare is asked to hold for p. Its policies
// must have been resolved to IDs (references are resolved before Observe).
func Input(p v1alpha1.AccessApplicationParameters) cloudflare.AccessApplicationInput {
	in := cloudflare.AccessApplicationInput{
		Name:                   p.Name,
		Domain:                 p.Domain,
		Destinations:           Destinations(p),
		AllowedIdPs:            p.AllowedIdentityProviders,
		AutoRedirectToIdentity: ptr.Deref(p.AutoRedirectToIdentity, false),
		AppLauncherVisible:     ptr.Deref(p.AppLauncherVisible, true),
		Policies:               Policies(p),
	}
	if p.SessionDuration != nil {
		in.SessionDuration = *p.SessionDuration
	}
	return in
}

// Destinations are the public hostnames (and paths) the application
// guards: its domain first, then the others, without repeats.
func Destinations(p v1alpha1.AccessApplicationParameters) []cloudflare.AccessDestination {
	uris := append([]string{p.Domain}, p.Destinations...)
	out := make([]cloudflare.AccessDestination, 0, len(uris))
	seen := map[string]bool{}
	for _, u := range uris {
		key := strings.ToLower(u)
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, cloudflare.AccessDestination{Type: "public", URI: u})
	}
	return out
}

// Policies are the application's policies with their precedence: the one
// given, else the place in the list. A policy not yet resolved to an ID is
// left out: references are resolved before any write, so it only happens
// while one is still missing, and then no write is made (Unresolved).
func Policies(p v1alpha1.AccessApplicationParameters) []cloudflare.AccessPolicyRef {
	out := make([]cloudflare.AccessPolicyRef, 0, len(p.Policies))
	for i, ref := range p.Policies {
		if ref.PolicyID == nil || *ref.PolicyID == "" {
			continue
		}
		out = append(out, cloudflare.AccessPolicyRef{ID: *ref.PolicyID, Precedence: ptr.Deref(ref.Precedence, int64(i+1))})
	}
	slices.SortStableFunc(out, func(a, b cloudflare.AccessPolicyRef) int { return int(a.Precedence - b.Precedence) })
	return out
}

// Unresolved names the policies of p that have no ID yet.
func Unresolved(p v1alpha1.AccessApplicationParameters) []string {
	var out []string
	for i, ref := range p.Policies {
		if ref.PolicyID == nil || *ref.PolicyID == "" {
			out = append(out, fmt.Sprintf("spec.forProvider.policies[%d]", i))
		}
	}
	return out
}

// Repeated names the first policy the spec lists twice (the same ID once
// resolved), which Cloudflare would refuse: "" when none is.
func Repeated(p v1alpha1.AccessApplicationParameters) string {
	seen := map[string]int{}
	for i, ref := range p.Policies {
		id := ""
		if ref.PolicyID != nil {
			id = *ref.PolicyID
		}
		if id == "" {
			continue
		}
		if j, ok := seen[id]; ok {
			return fmt.Sprintf("spec.forProvider.policies[%d] and [%d] name the same Access policy %s; list each policy once", j, i, id)
		}
		seen[id] = i
	}
	return ""
}

// Diff describes how the application Cloudflare holds differs from p; ""
// when it is up to date. Hostnames compare case-insensitively; what the
// spec leaves unset (session duration) is Cloudflare's.
func Diff(p v1alpha1.AccessApplicationParameters, got cloudflare.AccessApplication) string {
	want := Input(p)
	var d []string
	add := func(field string, got, want any) {
		d = append(d, fmt.Sprintf("%s: %v in Cloudflare, %v desired", field, got, want))
	}
	if want.Name != got.Name {
		add("name", fmt.Sprintf("%q", got.Name), fmt.Sprintf("%q", want.Name))
	}
	if !strings.EqualFold(want.Domain, got.Domain) {
		add("domain", got.Domain, want.Domain)
	}
	if w, g := uris(want.Destinations), uris(got.Destinations); !slices.Equal(w, g) {
		add("destinations", g, w)
	}
	if p.SessionDuration != nil && want.SessionDuration != got.SessionDuration {
		add("sessionDuration", got.SessionDuration, want.SessionDuration)
	}
	if w, g := sorted(want.AllowedIdPs), sorted(got.AllowedIdPs); !slices.Equal(w, g) {
		add("allowedIdentityProviders", g, w)
	}
	if want.AutoRedirectToIdentity != got.AutoRedirectToIdentity {
		add("autoRedirectToIdentity", got.AutoRedirectToIdentity, want.AutoRedirectToIdentity)
	}
	if want.AppLauncherVisible != got.AppLauncherVisible {
		add("appLauncherVisible", got.AppLauncherVisible, want.AppLauncherVisible)
	}
	if w, g := policyIDs(want.Policies), policyIDs(got.Policies); !slices.Equal(w, g) {
		add("policies", g, w)
	}
	return strings.Join(d, "\n")
}

func uris(ds []cloudflare.AccessDestination) []string {
	out := make([]string, 0, len(ds))
	for _, d := range ds {
		out = append(out, strings.ToLower(d.URI))
	}
	return out
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	if out == nil {
		out = []string{}
	}
	slices.Sort(out)
	return out
}

// policyIDs are the policies' IDs in the order Cloudflare applies them.
func policyIDs(ps []cloudflare.AccessPolicyRef) []string {
	c := slices.Clone(ps)
	slices.SortStableFunc(c, func(a, b cloudflare.AccessPolicyRef) int { return int(a.Precedence - b.Precedence) })
	out := make([]string, 0, len(c))
	for _, p := range c {
		out = append(out, p.ID)
	}
	return out
}
