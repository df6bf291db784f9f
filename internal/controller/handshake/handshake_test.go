package handshake

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/common"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
)

// hostname is a PublicHostname of namespace team-a naming tunnel ref
// ("<name>" or "<namespace>/<name>"), with answer as its status.tunnel.
func hostname(ref string, answer *v1alpha1.PublishedStatus) *v1alpha1.PublicHostname {
	ph := &v1alpha1.PublicHostname{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "web", Generation: 1}}
	ph.Spec.Hostname = "web.example.com"
	ph.Spec.TunnelRef.Name = ref
	if ns, name, ok := strings.Cut(ref, "/"); ok {
		ph.Spec.TunnelRef.Namespace, ph.Spec.TunnelRef.Name = ns, name
	}
	ph.Status.Tunnel = answer
	return ph
}

// TestTunnelKeys: a hostname is found by the tunnel it names and, until
// that one answers, by the tunnel that published it last.
func TestTunnelKeys(t *testing.T) {
	cases := map[string]struct {
		ph   *v1alpha1.PublicHostname
		want []string
	}{
		"NotAnswered":               {ph: hostname("edge", nil), want: []string{"team-a/edge"}},
		"AnsweredByItsTunnel":       {ph: hostname("edge", &v1alpha1.PublishedStatus{Tunnel: "edge"}), want: []string{"team-a/edge"}},
		"ASharedTunnelAnswered":     {ph: hostname("infra/edge", &v1alpha1.PublishedStatus{Tunnel: "infra/edge"}), want: []string{"infra/edge"}},
		"MovedFromItsOwnNamespaces": {ph: hostname("infra/edge", &v1alpha1.PublishedStatus{Tunnel: "old"}), want: []string{"infra/edge", "team-a/old"}},
		"MovedFromASharedTunnel":    {ph: hostname("edge", &v1alpha1.PublishedStatus{Tunnel: "infra/edge"}), want: []string{"team-a/edge", "infra/edge"}},
		"NotAPublicHostname":        {ph: nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			if tc.ph == nil {
				got = TunnelKeys(&v1alpha1.CloudflareTunnel{})
			} else {
				got = TunnelKeys(tc.ph)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("TunnelKeys -want +got:\n%s", diff)
			}
		})
	}
}

// TestAnswerNameIsReadBack: the name a tunnel answers with is read back as
// that tunnel, from the hostname's namespace and from another.
func TestAnswerNameIsReadBack(t *testing.T) {
	for _, tunnel := range []types.NamespacedName{{Namespace: "team-a", Name: "edge"}, {Namespace: "infra", Name: "edge"}} {
		ph := hostname("x", &v1alpha1.PublishedStatus{Tunnel: AnswerName(tunnel, "team-a")})
		if got := Answered(ph); got != tunnel {
			t.Errorf("Answered(AnswerName(%s)) = %s", tunnel, got)
		}
	}
	if got := TunnelName(hostname("infra/edge", nil)); got != "infra/edge" {
		t.Errorf("TunnelName of another namespace's tunnel = %q, want infra/edge", got)
	}
}

// TestHolderName: a holder is named only when it is of the loser's
// namespace, however the tunnel that answered named it.
func TestHolderName(t *testing.T) {
	cases := map[string]struct {
		answer *v1alpha1.PublishedStatus
		want   string
	}{
		"NoAnswer":                         {},
		"NoHolder":                         {answer: &v1alpha1.PublishedStatus{Tunnel: "edge"}},
		"SameNamespaceByName":              {answer: &v1alpha1.PublishedStatus{Tunnel: "edge", ClaimedBy: "api"}, want: "api"},
		"SameNamespaceFromASharedTunnel":   {answer: &v1alpha1.PublishedStatus{Tunnel: "infra/edge", ClaimedBy: "team-a/api"}, want: "api"},
		"TheSharedTunnelsOwnNamespace":     {answer: &v1alpha1.PublishedStatus{Tunnel: "infra/edge", ClaimedBy: "api"}},
		"AnotherTenantFromItsOwnNamespace": {answer: &v1alpha1.PublishedStatus{Tunnel: "edge", ClaimedBy: "team-b/api"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := HolderName(hostname("edge", tc.answer)); got != tc.want {
				t.Errorf("HolderName = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestAwaitsUnpublishing: only a hostname with its own Access application
// whose answer from this tunnel still counts rules waits.
func TestAwaitsUnpublishing(t *testing.T) {
	edge := types.NamespacedName{Namespace: "team-a", Name: "edge"}
	withAccess := func(answer *v1alpha1.PublishedStatus) *v1alpha1.PublicHostname {
		ph := hostname("edge", answer)
		ph.Spec.Access = &v1alpha1.Access{Policies: []v1alpha1.AccessPolicyName{{Name: "staff"}}}
		return ph
	}
	cases := map[string]struct {
		ph   *v1alpha1.PublicHostname
		want bool
	}{
		"RulesStillPublished":   {ph: withAccess(&v1alpha1.PublishedStatus{Tunnel: "edge", Rules: 2}), want: true},
		"Unpublished":           {ph: withAccess(&v1alpha1.PublishedStatus{Tunnel: "edge", Reason: ReasonUnpublished})},
		"AnsweredByAnother":     {ph: withAccess(&v1alpha1.PublishedStatus{Tunnel: "other", Rules: 2})},
		"NoAnswer":              {ph: withAccess(nil)},
		"NoApplicationOfItsOwn": {ph: hostname("edge", &v1alpha1.PublishedStatus{Tunnel: "edge", Rules: 2})},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := AwaitsUnpublishing(tc.ph, edge); got != tc.want {
				t.Errorf("AwaitsUnpublishing = %t, want %t", got, tc.want)
			}
		})
	}
}

func condition(t xpv2.ConditionType, ok bool, reason xpv2.ConditionReason) xpv2.Condition {
	c := cond(t, ok, reason, string(t)+" says "+string(reason))
	c.LastTransitionTime = metav1.Time{}
	return c
}

// TestFailure: a hostname's failure is the first condition its author must
// act on; waiting is no failure.
func TestFailure(t *testing.T) {
	cases := map[string]struct {
		conditions []xpv2.Condition
		want       xpv2.ConditionReason
	}{
		"Published":      {conditions: []xpv2.Condition{condition(v1alpha1.TypeAccepted, true, "Accepted"), condition(v1alpha1.TypeValid, true, "Valid")}},
		"WaitingForTurn": {conditions: []xpv2.Condition{condition(v1alpha1.TypeAccepted, false, v1alpha1.ReasonWaitingForTunnel)}},
		"Conflict":       {conditions: []xpv2.Condition{condition(v1alpha1.TypeAccepted, false, v1alpha1.ReasonHostnameConflict)}, want: v1alpha1.ReasonHostnameConflict},
		"RecordRefused":  {conditions: []xpv2.Condition{condition(v1alpha1.TypeDNSReady, false, v1alpha1.ReasonDNSRefused)}, want: v1alpha1.ReasonDNSRefused},
		"NameTaken":      {conditions: []xpv2.Condition{condition(v1alpha1.TypeDNSReady, false, common.ReasonNameTaken)}, want: common.ReasonNameTaken},
		"RecordPending":  {conditions: []xpv2.Condition{condition(v1alpha1.TypeDNSReady, false, "RecordNotReady")}},
		"InvalidSpec":    {conditions: []xpv2.Condition{condition(v1alpha1.TypeValid, false, ReasonInvalid)}, want: ReasonInvalid},
		"ConflictFirst":  {conditions: []xpv2.Condition{condition(v1alpha1.TypeValid, false, ReasonInvalid), condition(v1alpha1.TypeAccepted, false, v1alpha1.ReasonHostnameConflict)}, want: v1alpha1.ReasonHostnameConflict},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ph := hostname("edge", nil)
			ph.SetConditions(tc.conditions...)
			c, failed := Failure(ph)
			if failed != (tc.want != "") || c.Reason != tc.want {
				t.Errorf("Failure = %q, %t; want %q", c.Reason, failed, tc.want)
			}
		})
	}
}

// TestAcceptedCondition: the tunnel's answer counts only when it is from
// the tunnel the hostname names now.
func TestAcceptedCondition(t *testing.T) {
	cases := map[string]struct {
		answer *v1alpha1.PublishedStatus
		want   xpv2.Condition
	}{
		"NoAnswer":          {want: xpv2.Condition{Status: corev1.ConditionFalse, Reason: v1alpha1.ReasonWaitingForTunnel, Message: "waiting for CloudflareTunnel edge to publish the hostname"}},
		"AnsweredByAnother": {answer: &v1alpha1.PublishedStatus{Tunnel: "old", Accepted: true, Reason: "Accepted"}, want: xpv2.Condition{Status: corev1.ConditionFalse, Reason: v1alpha1.ReasonWaitingForTunnel, Message: "waiting for CloudflareTunnel edge to publish the hostname"}},
		"Accepted":          {answer: &v1alpha1.PublishedStatus{Tunnel: "edge", Accepted: true, Reason: "Accepted", Message: "published"}, want: xpv2.Condition{Status: corev1.ConditionTrue, Reason: "Accepted", Message: "published"}},
		"Refused":           {answer: &v1alpha1.PublishedStatus{Tunnel: "edge", Reason: string(v1alpha1.ReasonHostnameConflict), Message: "older claim"}, want: xpv2.Condition{Status: corev1.ConditionFalse, Reason: v1alpha1.ReasonHostnameConflict, Message: "older claim"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := AcceptedCondition(hostname("edge", tc.answer))
			tc.want.Type, got.LastTransitionTime = v1alpha1.TypeAccepted, metav1.Time{}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("AcceptedCondition -want +got:\n%s", diff)
			}
		})
	}
}

// TestReadyCondition: Ready says the first condition not met (the claim's
// and record's first while Valid waits on them), then waits for the
// tunnel's configuration to hold this generation.
func TestReadyCondition(t *testing.T) {
	met := []xpv2.Condition{condition(v1alpha1.TypeValid, true, "Valid"), condition(v1alpha1.TypeAccepted, true, "Accepted"), condition(v1alpha1.TypeDNSReady, true, v1alpha1.ReasonDNSReady)}
	cases := map[string]struct {
		conditions []xpv2.Condition
		answer     *v1alpha1.PublishedStatus
		want       xpv2.ConditionReason
	}{
		"ValidFirst":             {conditions: []xpv2.Condition{condition(v1alpha1.TypeValid, false, ReasonInvalid), condition(v1alpha1.TypeAccepted, false, v1alpha1.ReasonHostnameConflict)}, want: ReasonInvalid},
		"TheClaimBeforeWaiting":  {conditions: []xpv2.Condition{condition(v1alpha1.TypeValid, false, ReasonWaitingForHostname), condition(v1alpha1.TypeAccepted, false, v1alpha1.ReasonHostnameConflict)}, want: v1alpha1.ReasonHostnameConflict},
		"AnOlderGeneration":      {conditions: met, answer: &v1alpha1.PublishedStatus{Tunnel: "edge", ObservedGeneration: 0, ConfigVersion: 3}, want: v1alpha1.ReasonWaitingForTunnel},
		"NotInTheConfiguration":  {conditions: met, answer: &v1alpha1.PublishedStatus{Tunnel: "edge", ObservedGeneration: 1}, want: v1alpha1.ReasonWaitingForTunnel},
		"InTheTunnelsConfigured": {conditions: met, answer: &v1alpha1.PublishedStatus{Tunnel: "edge", ObservedGeneration: 1, ConfigVersion: 3, Rules: 1}, want: ReasonPublished},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ph := hostname("edge", tc.answer)
			ph.SetConditions(tc.conditions...)
			got := ReadyCondition(ph)
			if got.Reason != tc.want || (got.Status == corev1.ConditionTrue) != (tc.want == ReasonPublished) {
				t.Errorf("ReadyCondition = %s %q (%s), want reason %q", got.Status, got.Reason, got.Message, tc.want)
			}
		})
	}
}
