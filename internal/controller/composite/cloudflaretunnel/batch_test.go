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
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/origin"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/handshake"
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
		closes     bool
		want       time.Duration
	}{
		{name: "NothingComingKeepsTheShortWindow", onTheirWay: 0, want: window},
		{name: "ASingleChangeKeepsTheShortWindow", onTheirWay: 1, want: window},
		{name: "AHandfulKeepsTheShortWindow", onTheirWay: LargeChangeHostnames - 1, want: window},
		{name: "ALargeChangeWaitsSixWindows", onTheirWay: LargeChangeHostnames, want: 6 * window},
		{name: "AThousandWaitsNoLonger", onTheirWay: 1000, want: 6 * window},
		{name: "TakingAnOpenRuleOffNeverWaitsLonger", onTheirWay: 1000, closes: true, want: window},
		{name: "TakingAnOpenRuleOffAtRest", onTheirWay: 0, closes: true, want: window},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := configWindow(window, c.onTheirWay, c.closes); got != c.want {
				t.Errorf("configWindow(%v, %d, %t) = %v, want %v", window, c.onTheirWay, c.closes, got, c.want)
			}
		})
	}
}

// TestOnItsWay: which hostnames without rules are part of a change under
// way, read from their conditions at now.
func TestOnItsWay(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	waiting := func(reason xpv2.ConditionReason, since time.Duration) func(*v1alpha1.PublicHostname) {
		return func(p *v1alpha1.PublicHostname) {
			p.SetConditions(xpv2.Condition{Type: v1alpha1.TypeValid, Status: corev1.ConditionFalse, Reason: reason, LastTransitionTime: metav1.NewTime(now.Add(-since))})
		}
	}
	judged := func(p *v1alpha1.PublicHostname) { p.Generation, p.Status.ObservedGeneration = 2, 2 }
	cases := []struct {
		name   string
		mutate []func(*v1alpha1.PublicHostname)
		want   bool
	}{
		{name: "NotJudgedYet", want: true},
		{name: "ItsSpecChangedSinceItWasJudged", mutate: []func(*v1alpha1.PublicHostname){waiting(handshake.ReasonInvalid, time.Hour), judged, func(p *v1alpha1.PublicHostname) { p.Generation = 3 }}, want: true},
		{name: "ItsAccessApplicationBeingMade", mutate: []func(*v1alpha1.PublicHostname){judged, waiting(handshake.ReasonWaitingForAccessApplication, 10*time.Minute)}, want: true},
		{name: "ItsDNSRecordOrItsClaimBeingMade", mutate: []func(*v1alpha1.PublicHostname){judged, waiting(handshake.ReasonWaitingForHostname, 10*time.Minute)}, want: true},
		{name: "AnAccessPolicyAppliedWithIt", mutate: []func(*v1alpha1.PublicHostname){judged, waiting(handshake.ReasonWaitingForAccessPolicy, 30*time.Second)}, want: true},
		{name: "AServiceAppliedWithIt", mutate: []func(*v1alpha1.PublicHostname){judged, waiting(handshake.ReasonWaitingForService, RecentWait-time.Second)}, want: true},
		{name: "ASecretAppliedWithIt", mutate: []func(*v1alpha1.PublicHostname){judged, waiting(handshake.ReasonWaitingForSecret, 0)}, want: true},
		{name: "AnAccessPolicyNobodyMakes", mutate: []func(*v1alpha1.PublicHostname){judged, waiting(handshake.ReasonWaitingForAccessPolicy, RecentWait)}, want: false},
		{name: "AServiceNobodyMakes", mutate: []func(*v1alpha1.PublicHostname){judged, waiting(handshake.ReasonWaitingForService, time.Hour)}, want: false},
		{name: "ASecretNobodyMakes", mutate: []func(*v1alpha1.PublicHostname){judged, waiting(handshake.ReasonWaitingForSecret, RecentWait+time.Second)}, want: false},
		{name: "InvalidWaitsForItsAuthor", mutate: []func(*v1alpha1.PublicHostname){judged, waiting(handshake.ReasonInvalid, 0)}, want: false},
		{name: "ItsOriginRefusedByAGuardrail", mutate: []func(*v1alpha1.PublicHostname){judged, waiting(xpv2.ConditionReason(origin.RuleMetadata), 0)}, want: false},
		{
			// Its Access check waits for the hostname, which will not
			// come: Cloudflare refused its DNS record.
			name: "ItsDNSRecordRefused",
			mutate: []func(*v1alpha1.PublicHostname){judged, waiting(handshake.ReasonWaitingForHostname, 0), func(p *v1alpha1.PublicHostname) {
				p.SetConditions(xpv2.Condition{Type: v1alpha1.TypeDNSReady, Status: corev1.ConditionFalse, Reason: v1alpha1.ReasonDNSRefused})
			}},
			want: false,
		},
		{
			name: "NoLongerWantedByItsSource",
			mutate: []func(*v1alpha1.PublicHostname){func(p *v1alpha1.PublicHostname) {
				p.Annotations = map[string]string{v1alpha1.AnnotationUnwantedSince: now.Format(time.RFC3339)}
			}},
			want: false,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := ph("a", "edge", c.mutate...)
			if got := onItsWay(&h, now); got != c.want {
				t.Errorf("onItsWay = %t, want %t (Valid %+v)", got, c.want, h.GetCondition(v1alpha1.TypeValid))
			}
		})
	}
}

func TestOnTheirWay(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	cr := &v1alpha1.CloudflareTunnel{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "edge"}}
	valid := func(reason xpv2.ConditionReason) func(*v1alpha1.PublicHostname) {
		return func(p *v1alpha1.PublicHostname) {
			p.SetConditions(xpv2.Condition{Type: v1alpha1.TypeValid, Status: corev1.ConditionFalse, Reason: reason, LastTransitionTime: metav1.NewTime(now)})
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
		{name: "WaitingForItsAccessApplication", phs: []v1alpha1.PublicHostname{ph("a", "edge", valid(handshake.ReasonWaitingForAccessApplication))}, want: 1},
		{name: "InvalidWaitsForItsUserNotCounted", phs: []v1alpha1.PublicHostname{ph("a", "edge", valid(handshake.ReasonInvalid))}, want: 0},
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
				ph("a", "edge", withRules), ph("b", "edge"), ph("c", "edge", valid(handshake.ReasonWaitingForAccessApplication)), ph("d", "edge", valid(handshake.ReasonInvalid)),
			},
			want: 2,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := publish.Decide(claims(cr, c.phs))
			if got := onTheirWay(cr, c.phs, d, now); got != c.want {
				t.Errorf("onTheirWay = %d, want %d", got, c.want)
			}
		})
	}
}

// TestClosesARule: a configuration change that takes off a rule serving a
// hostname without an Access check is written within the short window.
func TestClosesARule(t *testing.T) {
	open := func(host string) ztv1alpha1.IngressRule {
		return ztv1alpha1.IngressRule{Hostname: ptr.To(host), Service: "http://web.team-a.svc.cluster.local:80"}
	}
	protected := func(host string) ztv1alpha1.IngressRule {
		r := open(host)
		r.OriginRequest = &ztv1alpha1.OriginRequest{Access: &ztv1alpha1.OriginAccess{Required: ptr.To(true), TeamName: "team", AudTag: []string{"aud-" + host}}}
		return r
	}
	notRequired := func(host string) ztv1alpha1.IngressRule {
		r := protected(host)
		r.OriginRequest.Access.Required = ptr.To(false)
		return r
	}
	onPath := func(r ztv1alpha1.IngressRule, path string) ztv1alpha1.IngressRule {
		r.Path = ptr.To(path)
		return r
	}
	catchAll := ztv1alpha1.IngressRule{Service: "http_status:404"}
	doc := func(rules ...ztv1alpha1.IngressRule) *ztv1alpha1.TunnelConfig {
		return &ztv1alpha1.TunnelConfig{Ingress: append(rules, catchAll)}
	}
	cases := []struct {
		name          string
		current, want *ztv1alpha1.TunnelConfig
		closes        bool
	}{
		{name: "TheFirstConfiguration", current: nil, want: doc(open("a.example.com")), closes: false},
		{name: "AnOpenRuleAdded", current: doc(), want: doc(open("a.example.com")), closes: false},
		{name: "AProtectedRuleAdded", current: doc(open("a.example.com")), want: doc(open("a.example.com"), protected("b.example.com")), closes: false},
		{name: "AccessAddedTakesTheOpenRuleOff", current: doc(open("a.example.com"), protected("b.example.com")), want: doc(protected("b.example.com")), closes: true},
		{name: "AccessAddedAndProtectedAtOnce", current: doc(open("a.example.com")), want: doc(protected("a.example.com")), closes: true},
		{name: "AnOpenHostnameGone", current: doc(open("a.example.com")), want: doc(), closes: true},
		{name: "ACheckNotRequiredIsOpen", current: doc(notRequired("a.example.com")), want: doc(), closes: true},
		{name: "AccessTakenOffOpensNothingClosed", current: doc(protected("a.example.com")), want: doc(open("a.example.com")), closes: false},
		{name: "AProtectedHostnameGone", current: doc(protected("a.example.com"), open("b.example.com")), want: doc(open("b.example.com")), closes: false},
		{name: "OnlyTheCatchAll", current: doc(), want: doc(), closes: false},
		{name: "AnOpenRuleMovedToAnotherPath", current: doc(onPath(open("a.example.com"), "^/old")), want: doc(onPath(open("a.example.com"), "^/new")), closes: true},
		{name: "AnOpenRuleKeptBesideAnotherPath", current: doc(onPath(open("a.example.com"), "^/old")), want: doc(onPath(open("a.example.com"), "^/new"), onPath(open("a.example.com"), "^/old")), closes: false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := closesARule(c.current, c.want); got != c.closes {
				t.Errorf("closesARule = %t, want %t", got, c.closes)
			}
		})
	}
}
