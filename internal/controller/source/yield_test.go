package source

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sharing"
)

// ph is a source's PublicHostname for host with the tunnel's answer: held,
// lost to holder, or none yet ("").
func ph(host, answer, holder string) *v1alpha1.PublicHostname {
	p := &v1alpha1.PublicHostname{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a"}, Spec: v1alpha1.PublicHostnameSpec{Hostname: host}}
	switch answer {
	case "held":
		p.SetConditions(xpv2.Condition{Type: v1alpha1.TypeAccepted, Status: "True", Reason: "Accepted"})
	case "lost":
		p.SetConditions(xpv2.Condition{Type: v1alpha1.TypeAccepted, Status: "False", Reason: v1alpha1.ReasonHostnameConflict, Message: "older claim"})
		p.Status.Tunnel = &v1alpha1.PublishedStatus{ClaimedBy: holder}
	case "waiting":
		p.SetConditions(xpv2.Condition{Type: v1alpha1.TypeAccepted, Status: "False", Reason: v1alpha1.ReasonWaitingForTunnel})
	}
	return p
}

func TestYielded(t *testing.T) {
	deleting := ph("api.example.com", "lost", "team-a/api")
	deleting.DeletionTimestamp = ptr.To(metav1.Now())
	cases := map[string]struct {
		phs  []*v1alpha1.PublicHostname
		want map[string]string
	}{
		"NoPublicHostnames":   {want: map[string]string{}},
		"HeldKeepsTheRoute":   {phs: []*v1alpha1.PublicHostname{ph("api.example.com", "held", "")}, want: map[string]string{}},
		"NotAnsweredYetKeeps": {phs: []*v1alpha1.PublicHostname{ph("api.example.com", "", "")}, want: map[string]string{}},
		// Waiting for the tunnel is not losing: what works stays.
		"WaitingKeeps": {phs: []*v1alpha1.PublicHostname{ph("api.example.com", "waiting", "")}, want: map[string]string{}},
		"LostYieldsToTheHolder": {
			phs:  []*v1alpha1.PublicHostname{ph("API.example.com", "lost", "team-a/api"), ph("www.example.com", "held", "")},
			want: map[string]string{"api.example.com": "api"},
		},
		// Another namespace's holder is another tenant's: not named.
		"AnotherNamespacesHolderIsNotNamed": {
			phs:  []*v1alpha1.PublicHostname{ph("api.example.com", "lost", "team-b/api")},
			want: map[string]string{"api.example.com": ""},
		},
		// One route serves a wildcard and its apex: it goes only when
		// both lost.
		"AWildcardStillHeldKeepsTheSharedRoute": {
			phs:  []*v1alpha1.PublicHostname{ph("wild.example.com", "lost", "team-a/wild"), ph("*.wild.example.com", "held", "")},
			want: map[string]string{},
		},
		"BothOfAPairLost": {
			phs:  []*v1alpha1.PublicHostname{ph("*.wild.example.com", "lost", ""), ph("wild.example.com", "lost", "team-a/wild")},
			want: map[string]string{"wild.example.com": "wild"},
		},
		"OneBeingDeletedIsNoClaim": {phs: []*v1alpha1.PublicHostname{deleting}, want: map[string]string{}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Yielded(tc.phs)); diff != "" {
				t.Errorf("Yielded(): -want +got:\n%s", diff)
			}
		})
	}
}

func TestUndecided(t *testing.T) {
	deleting := ph("api.example.com", "held", "")
	deleting.DeletionTimestamp = ptr.To(metav1.Now())
	refused := ph("api.example.com", "", "")
	refused.SetConditions(xpv2.Condition{Type: v1alpha1.TypeAccepted, Status: "False", Reason: sharing.ReasonTunnelNotShared})
	cases := map[string]struct {
		reason string
		phs    []*v1alpha1.PublicHostname
		public []string
		want   map[string]bool
	}{
		"NoPublicClaims":      {"a private-only source waits for nothing", nil, nil, map[string]bool{}},
		"NotMadeYet":          {"a claim whose PublicHostname is not made yet is not answered", nil, []string{"API.example.com."}, map[string]bool{"api.example.com": true}},
		"NoAnswerYet":         {"a PublicHostname without Accepted is not answered", []*v1alpha1.PublicHostname{ph("api.example.com", "", "")}, []string{"api.example.com"}, map[string]bool{"api.example.com": true}},
		"WaitingForTheTunnel": {"one waiting for its tunnel is not answered", []*v1alpha1.PublicHostname{ph("api.example.com", "waiting", "")}, []string{"api.example.com"}, map[string]bool{"api.example.com": true}},
		"Held":                {"a held claim is answered", []*v1alpha1.PublicHostname{ph("api.example.com", "held", "")}, []string{"api.example.com"}, map[string]bool{}},
		"Lost":                {"a lost claim is answered (Yielded says what follows)", []*v1alpha1.PublicHostname{ph("api.example.com", "lost", "team-a/api")}, []string{"api.example.com"}, map[string]bool{}},
		"RefusedOtherwise":    {"a refusal other than a conflict is an answer: the route does not wait forever", []*v1alpha1.PublicHostname{refused}, []string{"api.example.com"}, map[string]bool{}},
		"BeingDeleted":        {"an answer of a PublicHostname being deleted does not count", []*v1alpha1.PublicHostname{deleting}, []string{"api.example.com"}, map[string]bool{"api.example.com": true}},
		"WildcardAndApex":     {"a wildcard shares its apex's route: either answered decides", []*v1alpha1.PublicHostname{ph("*.api.example.com", "held", "")}, []string{"api.example.com", "*.api.example.com"}, map[string]bool{}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Undecided(tc.phs, tc.public)); diff != "" {
				t.Errorf("%s: Undecided (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}
