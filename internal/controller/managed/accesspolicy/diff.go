package accesspolicy

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/accesspolicy/rules"
)

// Input is the policy Cloudflare is asked to hold for p.
func Input(p v1alpha1.AccessPolicyParameters) cloudflare.AccessPolicyInput {
	in := cloudflare.AccessPolicyInput{Name: p.Name, Decision: p.Decision, Include: rules.Rules(p.Include), Exclude: rules.Rules(p.Exclude), Require: rules.Rules(p.Require)}
	if p.SessionDuration != nil {
		in.SessionDuration = *p.SessionDuration
	}
	return in
}

// Diff describes how the policy Cloudflare holds differs from p; "" when it
// is up to date. Rules are compared by meaning (their JSON, whatever the
// key order), in order; a session duration left unset is Cloudflare's.
func Diff(p v1alpha1.AccessPolicyParameters, got cloudflare.AccessPolicy) string {
	want := Input(p)
	var d []string
	if want.Name != got.Name {
		d = append(d, fmt.Sprintf("name: %q in Cloudflare, %q desired", got.Name, want.Name))
	}
	if want.Decision != got.Decision {
		d = append(d, fmt.Sprintf("decision: %q in Cloudflare, %q desired", got.Decision, want.Decision))
	}
	for _, l := range []struct {
		name      string
		want, got []json.RawMessage
	}{{"include", want.Include, got.Include}, {"exclude", want.Exclude, got.Exclude}, {"require", want.Require, got.Require}} {
		if w, g := rules.Canonical(l.want), rules.Canonical(l.got); w != g {
			d = append(d, fmt.Sprintf("%s: %s in Cloudflare, %s desired", l.name, g, w))
		}
	}
	if p.SessionDuration != nil && *p.SessionDuration != got.SessionDuration {
		d = append(d, fmt.Sprintf("sessionDuration: %q in Cloudflare, %q desired", got.SessionDuration, *p.SessionDuration))
	}
	return strings.Join(d, "\n")
}
