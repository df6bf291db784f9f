package cloudflaretunnel

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
)

func TestConfigBatcher(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	b := &configBatcher{now: func() time.Time { return now }}
	const window = 5 * time.Second
	steps := []struct {
		name    string
		advance time.Duration
		uid     types.UID
		want    time.Duration
	}{
		{name: "FirstChangeGoesOut", uid: "a", want: 0},
		{name: "ChangeRightAfterIsHeldForTheWholeWindow", uid: "a", want: window},
		{name: "LaterInTheWindowIsHeldForTheRest", advance: 2 * time.Second, uid: "a", want: 3 * time.Second},
		{name: "AnotherTunnelIsIndependent", uid: "b", want: 0},
		{name: "AfterTheWindowGoesOut", advance: 3 * time.Second, uid: "a", want: 0},
		{name: "AndStartsANewWindow", advance: time.Second, uid: "a", want: 4 * time.Second},
	}
	for _, s := range steps {
		now = now.Add(s.advance)
		if got := b.hold(s.uid, window); got != s.want {
			t.Errorf("%s: hold = %v, want %v", s.name, got, s.want)
		}
	}
	b.forget("a")
	if got := b.hold("a", window); got != 0 {
		t.Errorf("after forget: hold = %v, want 0", got)
	}
}

func TestConfigBatcherCountsEachHeldWriteOnce(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	b := &configBatcher{now: func() time.Time { return now }}
	const window = 5 * time.Second
	b.hold("a", window) // written
	var first []bool
	for range 3 { // three reconciles while the change waits
		if b.hold("a", window) > 0 {
			first = append(first, b.newlyHeld("a"))
		}
		now = now.Add(time.Second)
	}
	now = now.Add(window)
	if got := b.hold("a", window); got != 0 {
		t.Fatalf("after the window: hold = %v, want 0 (written)", got)
	}
	if b.hold("a", window) > 0 {
		first = append(first, b.newlyHeld("a")) // a new change after that write
	}
	if want := []bool{true, false, false, true}; !slices.Equal(first, want) {
		t.Errorf("newlyHeld = %v, want %v: one per write held back, however many reconciles", first, want)
	}
}

func TestConfigWindow(t *testing.T) {
	const window = 5 * time.Second
	cases := []struct {
		name       string
		onTheirWay int
		want       time.Duration
	}{
		{name: "NothingComingKeepsTheShortWindow", onTheirWay: 0, want: window},
		{name: "ASingleChangeKeepsTheShortWindow", onTheirWay: 1, want: window},
		{name: "AHandfulKeepsTheShortWindow", onTheirWay: LargeChangeHostnames - 1, want: window},
		{name: "ALargeChangeWaitsSixWindows", onTheirWay: LargeChangeHostnames, want: 6 * window},
		{name: "AThousandWaitsNoLonger", onTheirWay: 1000, want: 6 * window},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := configWindow(window, c.onTheirWay); got != c.want {
				t.Errorf("configWindow(%v, %d) = %v, want %v", window, c.onTheirWay, got, c.want)
			}
		})
	}
}

func TestOnTheirWay(t *testing.T) {
	cr := &v1alpha1.CloudflareTunnel{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "edge"}}
	valid := func(reason xpv2.ConditionReason) func(*v1alpha1.PublicHostname) {
		return func(p *v1alpha1.PublicHostname) {
			p.SetConditions(xpv2.Condition{Type: v1alpha1.TypeValid, Status: corev1.ConditionFalse, Reason: reason})
		}
	}
	withRules := func(p *v1alpha1.PublicHostname) {
		p.Status.Rules = []ztv1alpha1.IngressRule{{Hostname: ptr.To(p.Spec.Hostname), Service: "https://web:8443"}}
		p.SetConditions(xpv2.Condition{Type: v1alpha1.TypeValid, Status: corev1.ConditionTrue, Reason: "Valid"})
	}
	sameHost := func(p *v1alpha1.PublicHostname) { p.Spec.Hostname = "new.example.com" }
	cases := []struct {
		name string
		phs  []v1alpha1.PublicHostname
		want int
	}{
		{name: "None", want: 0},
		{name: "NotJudgedYet", phs: []v1alpha1.PublicHostname{ph("new", "edge")}, want: 1},
		{name: "WaitingForItsAccessApplication", phs: []v1alpha1.PublicHostname{ph("a", "edge", valid("WaitingForAccessApplication"))}, want: 1},
		{name: "WaitingForItsAccessPolicy", phs: []v1alpha1.PublicHostname{ph("a", "edge", valid("WaitingForAccessPolicy"))}, want: 1},
		{name: "WaitingForAService", phs: []v1alpha1.PublicHostname{ph("a", "edge", valid("WaitingForService"))}, want: 1},
		{name: "WaitingForItsHostname", phs: []v1alpha1.PublicHostname{ph("a", "edge", valid("WaitingForHostname"))}, want: 1},
		{name: "InvalidWaitsForItsUserNotCounted", phs: []v1alpha1.PublicHostname{ph("a", "edge", valid("InvalidSpec"))}, want: 0},
		{name: "WithRulesArrived", phs: []v1alpha1.PublicHostname{ph("a", "edge", withRules)}, want: 0},
		{
			// The younger claim on a hostname gets no rules published
			// whatever it waits for: it is not on its way.
			name: "ALosingClaimNotCounted",
			phs: []v1alpha1.PublicHostname{
				ph("new", "edge", func(p *v1alpha1.PublicHostname) { p.CreationTimestamp = metav1.Unix(1, 0) }),
				ph("loser", "edge", sameHost, func(p *v1alpha1.PublicHostname) { p.CreationTimestamp = metav1.Unix(2, 0) }),
			},
			want: 1,
		},
		{
			name: "Mixed",
			phs: []v1alpha1.PublicHostname{
				ph("a", "edge", withRules), ph("b", "edge"), ph("c", "edge", valid("WaitingForAccessApplication")), ph("d", "edge", valid("InvalidSpec")),
			},
			want: 2,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := publish.Decide(claims(cr, c.phs))
			if got := onTheirWay(cr, c.phs, d); got != c.want {
				t.Errorf("onTheirWay = %d, want %d", got, c.want)
			}
		})
	}
}
