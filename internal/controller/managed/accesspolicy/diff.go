package accesspolicy

import (
	"fmt"
	"strings"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/accesspolicy/rules"
)

// Input is the policy Cloudflare is asked to hold for p.
func Input(p v1alpha1.AccessPolicyParameters) cloudflare.AccessPolicyInput {
	l := rules.Translate(p.Include, p.Exclude, p.Require)
	in := cloudflare.AccessPolicyInput{Name: p.Name, Decision: p.Decision, Include: l.Include, Exclude: l.Exclude, Require: l.Require}
	if p.SessionDuration != nil {
		in.SessionDuration = *p.SessionDuration
	}
	return in
}

// Diff describes how the policy Cloudflare holds differs from p; "" when it
// is up to date. Rules are compared by meaning (rules.Lists.Diff); a
// session duration left unset is Cloudflare's.
func Diff(p v1alpha1.AccessPolicyParameters, got cloudflare.AccessPolicy) string {
	want := Input(p)
	var d []string
	if want.Name != got.Name {
		d = append(d, fmt.Sprintf("name: %q in Cloudflare, %q desired", got.Name, want.Name))
	}
	if want.Decision != got.Decision {
		d = append(d, fmt.Sprintf("decision: %q in Cloudflare, %q desired", got.Decision, want.Decision))
	}
	d = append(d, rules.Lists{Include: want.Include, Exclude: want.Exclude, Require: want.Require}.Diff(rules.Lists{Include: got.Include, Exclude: got.Exclude, Require: got.Require})...)
	if p.SessionDuration != nil && *p.SessionDuration != got.SessionDuration {
		d = append(d, fmt.Sprintf("sessionDuration: %q in Cloudflare, %q desired", got.SessionDuration, *p.SessionDuration))
	}
	return strings.Join(d, "\n")
}
