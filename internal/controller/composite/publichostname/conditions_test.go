package publichostname_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/composite/publichostname"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/handshake"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/metrics"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
)

var ignoreTime = cmpopts.IgnoreFields(xpv2.Condition{}, "LastTransitionTime")

func TestDeletingCondition(t *testing.T) {
	cases := map[string]struct {
		records []string
		want    xpv2.Condition
	}{
		"OneRecord": {
			records: []string{"app-dns"},
			want: xpv2.Condition{Type: xpv2.TypeReady, Status: corev1.ConditionFalse, Reason: publichostname.ReasonDeleting,
				Message: "being deleted: its rules leave CloudflareTunnel edge's configuration; waiting for DNSRecord app-dns to be deleted from Cloudflare"},
		},
		"TwoRecords": {
			records: []string{"a-dns", "b-dns"},
			want: xpv2.Condition{Type: xpv2.TypeReady, Status: corev1.ConditionFalse, Reason: publichostname.ReasonDeleting,
				Message: "being deleted: its rules leave CloudflareTunnel edge's configuration; waiting for DNSRecords a-dns, b-dns to be deleted from Cloudflare"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, publichostname.DeletingCondition("edge", tc.records), ignoreTime); diff != "" {
				t.Errorf("DeletingCondition (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidCondition(t *testing.T) {
	valid := xpv2.Condition{Type: v1alpha1.TypeValid, Status: corev1.ConditionTrue, Reason: publichostname.ReasonValid, Message: "1 rule for a.example.com"}
	cases := map[string]struct {
		dns  xpv2.Condition
		want xpv2.Condition
	}{
		"RecordReady": {
			dns:  xpv2.Condition{Type: v1alpha1.TypeDNSReady, Status: corev1.ConditionTrue, Reason: v1alpha1.ReasonDNSReady},
			want: valid,
		},
		"NotManaged": {
			dns:  xpv2.Condition{Type: v1alpha1.TypeDNSReady, Status: corev1.ConditionTrue, Reason: publichostname.ReasonDNSNone},
			want: valid,
		},
		"WaitingForTheTunnel": {
			dns:  xpv2.Condition{Type: v1alpha1.TypeDNSReady, Status: corev1.ConditionFalse, Reason: v1alpha1.ReasonWaitingForTunnel},
			want: valid,
		},
		"RecordRefusedWithholdsTheRules": {
			dns: xpv2.Condition{Type: v1alpha1.TypeDNSReady, Status: corev1.ConditionFalse, Reason: v1alpha1.ReasonDNSRefused, Message: "DNSRecord x: not allowed: zone example.org"},
			want: xpv2.Condition{Type: v1alpha1.TypeValid, Status: corev1.ConditionFalse, Reason: v1alpha1.ReasonDNSRefused,
				Message: "1 rule for a.example.com, not published while the hostname's DNS record is refused: DNSRecord x: not allowed: zone example.org"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, publichostname.ValidCondition(valid, tc.dns), ignoreTime); diff != "" {
				t.Errorf("ValidCondition (-want +got):\n%s", diff)
			}
		})
	}
}

func TestProblemReason(t *testing.T) {
	service := publish.Problem{Field: "spec.origin.service.port", Message: "Service web not found", Waiting: true, WaitingFor: publish.WaitingForService}
	secret := publish.Problem{Field: "spec.originRequest.caPoolSecretRef", Message: "Secret web-ca not found in namespace a", Waiting: true, WaitingFor: publish.WaitingForSecret}
	invalid := publish.Problem{Field: "spec.hostname", Message: "not a hostname"}
	cases := map[string]struct {
		problems []publish.Problem
		want     xpv2.ConditionReason
	}{
		"AService":          {problems: []publish.Problem{service}, want: publichostname.ReasonWaitingForService},
		"ASecret":           {problems: []publish.Problem{secret}, want: publichostname.ReasonWaitingForSecret},
		"TheFirstWaitNames": {problems: []publish.Problem{secret, service}, want: publichostname.ReasonWaitingForSecret},
		"InvalidDominates":  {problems: []publish.Problem{secret, invalid}, want: handshake.ReasonInvalid},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := publichostname.ProblemReason(tc.problems); got != tc.want {
				t.Errorf("ProblemReason() = %q, want %q", got, tc.want)
			}
		})
	}
}

// Every kind of wait gives Valid the hand-shake's reason for it: the
// CloudflareTunnel reads those (onItsWay) to tell a hostname on its way
// from one waiting for its author.
func TestWaitingReasonsAreTheHandshakes(t *testing.T) {
	for kind, want := range map[string]xpv2.ConditionReason{
		publish.WaitingForService:           handshake.ReasonWaitingForService,
		publish.WaitingForSecret:            handshake.ReasonWaitingForSecret,
		publish.WaitingForAccessPolicy:      handshake.ReasonWaitingForAccessPolicy,
		publish.WaitingForAccessApplication: handshake.ReasonWaitingForAccessApplication,
		publish.WaitingForHostname:          handshake.ReasonWaitingForHostname,
	} {
		if got := publichostname.ProblemReason([]publish.Problem{{Field: "spec", Message: "waiting", Waiting: true, WaitingFor: kind}}); got != want {
			t.Errorf("waiting for %s: reason %q, want %q", kind, got, want)
		}
	}
}

// TestCheckGone: when the application of a hostname whose spec no longer
// asks for Access may go: once its tunnel serves its current rules and
// none of them carries the application's audience.
func TestCheckGone(t *testing.T) {
	const aud = "aud-1"
	open := ztv1alpha1.IngressRule{Hostname: ptr.To("a.example.com"), Service: "http://web:80"}
	protected := open
	protected.OriginRequest = &ztv1alpha1.OriginRequest{Access: &ztv1alpha1.OriginAccess{Required: ptr.To(true), TeamName: "team", AudTag: []string{aud}}}
	otherCheck := open
	otherCheck.OriginRequest = &ztv1alpha1.OriginRequest{Access: &ztv1alpha1.OriginAccess{Required: ptr.To(true), TeamName: "team", AudTag: []string{"aud-elsewhere"}}}
	served := func(version int, generation int64, rules int) *v1alpha1.PublishedStatus {
		return &v1alpha1.PublishedStatus{Tunnel: "edge", Accepted: true, ObservedGeneration: generation, Rules: rules, ConfigVersion: version}
	}
	cases := []struct {
		name   string
		answer *v1alpha1.PublishedStatus
		rules  []ztv1alpha1.IngressRule
		aud    string
		want   bool
	}{
		{name: "OpenRulesServed", answer: served(7, 2, 1), rules: []ztv1alpha1.IngressRule{open}, aud: aud, want: true},
		{name: "NoAnswerYet", answer: nil, rules: []ztv1alpha1.IngressRule{open}, aud: aud},
		{name: "OpenRulesOnTheirWay", answer: served(0, 2, 1), rules: []ztv1alpha1.IngressRule{open}, aud: aud},
		{name: "TheAnswerIsForTheProtectedGeneration", answer: served(7, 1, 1), rules: []ztv1alpha1.IngressRule{open}, aud: aud},
		{name: "TheAnswerCountsOtherRules", answer: served(7, 2, 2), rules: []ztv1alpha1.IngressRule{open}, aud: aud},
		{name: "NotAccepted", answer: &v1alpha1.PublishedStatus{Tunnel: "edge", ObservedGeneration: 2, ConfigVersion: 7}, rules: []ztv1alpha1.IngressRule{open}, aud: aud},
		{name: "ServedRulesStillCheckIt", answer: served(7, 2, 1), rules: []ztv1alpha1.IngressRule{protected}, aud: aud},
		{name: "ServedRulesCheckAnotherApplication", answer: served(7, 2, 1), rules: []ztv1alpha1.IngressRule{otherCheck}, aud: aud, want: true},
		{name: "NoRulesServeTheHostname", answer: served(7, 2, 0), rules: nil, aud: aud},
		// Made in Cloudflare, its audience not observed yet: it guards the
		// hostname at the edge all the same.
		{name: "AudienceNotKnownOpenRulesServed", answer: served(7, 2, 1), rules: []ztv1alpha1.IngressRule{open}, aud: "", want: true},
		{name: "AudienceNotKnownOpenRulesOnTheirWay", answer: served(0, 2, 1), rules: []ztv1alpha1.IngressRule{open}, aud: ""},
		{name: "AudienceNotKnownServedRulesCheckAccess", answer: served(7, 2, 1), rules: []ztv1alpha1.IngressRule{otherCheck}, aud: ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ph := &v1alpha1.PublicHostname{}
			ph.Status.Tunnel, ph.Status.Rules, ph.Status.RulesGeneration = c.answer, c.rules, 2
			if got := publichostname.CheckGone(ph, c.aud); got != c.want {
				t.Errorf("CheckGone = %t, want %t", got, c.want)
			}
		})
	}
}

// TestAccessState: what the hostname metrics count, read from the spec and
// the typed reasons of the conditions.
func TestAccessState(t *testing.T) {
	managed := &v1alpha1.Access{Required: ptr.To(true), Policies: []v1alpha1.AccessPolicyName{{Name: "staff"}}}
	optional := &v1alpha1.Access{Required: ptr.To(false), TeamName: "acme", AudTags: []string{"a"}}
	valid := func(ok bool, reason xpv2.ConditionReason) xpv2.Condition {
		s := corev1.ConditionFalse
		if ok {
			s = corev1.ConditionTrue
		}
		return xpv2.Condition{Type: v1alpha1.TypeValid, Status: s, Reason: reason}
	}
	cases := map[string]struct {
		access   *v1alpha1.Access
		valid    xpv2.Condition
		accepted bool
		want     metrics.HostnameAccess
	}{
		"ProtectedInItsTunnel":           {access: managed, valid: valid(true, "Resolved"), accepted: true, want: metrics.HostnameProtected},
		"ExplicitCountsToo":              {access: &v1alpha1.Access{TeamName: "acme", AudTags: []string{"a"}}, valid: valid(true, "Resolved"), accepted: true, want: metrics.HostnameProtected},
		"WaitingForThePolicy":            {access: managed, valid: valid(false, publichostname.ReasonWaitingForAccessPolicy), want: metrics.HostnameWaitingForAccess},
		"WaitingForTheApplication":       {access: managed, valid: valid(false, publichostname.ReasonWaitingForAccessApplication), want: metrics.HostnameWaitingForAccess},
		"ValidButNotInItsTunnel":         {access: managed, valid: valid(true, "Resolved"), want: metrics.HostnameOther},
		"InvalidForAnotherReason":        {access: managed, valid: valid(false, handshake.ReasonInvalid), accepted: true, want: metrics.HostnameOther},
		"NoAccess":                       {valid: valid(true, "Resolved"), accepted: true, want: metrics.HostnameOther},
		"TokensCheckedOnlyWhenPresent":   {access: optional, valid: valid(true, "Resolved"), accepted: true, want: metrics.HostnameOther},
		"WaitingButNoLongerAskingAccess": {valid: valid(false, publichostname.ReasonWaitingForAccessPolicy), want: metrics.HostnameOther},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ph := &v1alpha1.PublicHostname{Spec: v1alpha1.PublicHostnameSpec{TunnelRef: v1alpha1.TunnelReference{Name: "edge"}, Access: tc.access}}
			ph.Namespace = "n"
			ph.Status.Tunnel = &v1alpha1.PublishedStatus{Tunnel: "edge", Accepted: tc.accepted}
			ph.SetConditions(tc.valid)
			if got := publichostname.AccessState(ph); got != tc.want {
				t.Errorf("AccessState = %s, want %s", got, tc.want)
			}
		})
	}
}
