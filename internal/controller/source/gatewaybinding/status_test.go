package gatewaybinding

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/gatewaybinding/translate"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/metrics"
)

// ph is a PublicHostname as its tunnel answered it: accepted (in
// configuration version 3) or refused with reason, and with its DNS record
// ready or not.
func ph(name string, accepted bool, reason string, dnsReady bool) v1alpha1.PublicHostname {
	p := v1alpha1.PublicHostname{ObjectMeta: metav1.ObjectMeta{Name: name, Generation: 1}, Spec: v1alpha1.PublicHostnameSpec{TunnelRef: v1alpha1.TunnelReference{Name: "edge"}}}
	p.Status.Tunnel = &v1alpha1.PublishedStatus{Tunnel: "edge", Accepted: accepted, Reason: reason, Message: reason + " message", ObservedGeneration: 1}
	if accepted {
		p.Status.Tunnel.ConfigVersion = 3
	}
	s := corev1.ConditionFalse
	if dnsReady {
		s = corev1.ConditionTrue
	}
	p.SetConditions(xpv2.Condition{Type: v1alpha1.TypeDNSReady, Status: s, Reason: "R", Message: "dns message"})
	return p
}

// balanced is p load-balanced under pool "app-a" for hostname host.
func balanced(p v1alpha1.PublicHostname, host string) v1alpha1.PublicHostname {
	p.Spec.Hostname, p.Spec.LoadBalancing = host, &v1alpha1.LoadBalancing{Pool: "app-a"}
	return p
}

func pending(host, phName string) v1alpha1.BoundHostname {
	return v1alpha1.BoundHostname{Hostname: host, Route: "HTTPRoute/r", State: v1alpha1.HostnamePending, PublicHostname: phName}
}

func TestObserve(t *testing.T) {
	const cname = "tid.cfargotunnel.com"
	cases := map[string]struct {
		hosts      []v1alpha1.BoundHostname
		phs        []v1alpha1.PublicHostname
		mode       string
		states     []string
		programmed string
		dns        string
		accepted   []string
		// noRecord are the accepted hostnames needing no record nor
		// CNAME: load-balanced.
		noRecord []string
	}{
		"PublishedWithRecords": {
			hosts: []v1alpha1.BoundHostname{pending("a", "ph-a")}, phs: []v1alpha1.PublicHostname{ph("ph-a", true, "Published", true)},
			states: []string{v1alpha1.HostnamePublished}, programmed: ReasonProgrammed, dns: ReasonRecordsReady, accepted: []string{"a"},
		},
		"WaitingForTheRecord": {
			hosts: []v1alpha1.BoundHostname{pending("a", "ph-a")}, phs: []v1alpha1.PublicHostname{ph("ph-a", true, "Published", false)},
			states: []string{v1alpha1.HostnamePending}, programmed: ReasonProgrammed, dns: ReasonRecordNotReady, accepted: []string{"a"},
		},
		"NoneModeDoesNotWaitForRecords": {
			hosts: []v1alpha1.BoundHostname{pending("a", "ph-a")}, phs: []v1alpha1.PublicHostname{ph("ph-a", true, "Published", true)}, mode: v1alpha1.DNSModeNone,
			states: []string{v1alpha1.HostnamePublished}, programmed: ReasonProgrammed, dns: ReasonNotManaged, accepted: []string{"a"},
		},
		// The load balancer holds the name: no record, no CNAME, and
		// no DNSEndpoint entry.
		"ALoadBalancedHostname": {
			hosts:  []v1alpha1.BoundHostname{pending("a", "ph-a"), pending("b", "ph-b")},
			phs:    []v1alpha1.PublicHostname{balanced(ph("ph-a", true, "Published", true), "a"), ph("ph-b", true, "Published", true)},
			states: []string{v1alpha1.HostnamePublished, v1alpha1.HostnamePublished}, programmed: ReasonProgrammed, dns: ReasonRecordsReady,
			accepted: []string{"a", "b"}, noRecord: []string{"a"},
		},
		"ALoadBalancedHostnameKeptForItsBadAnnotation": {
			hosts:  []v1alpha1.BoundHostname{{Hostname: "a", Route: "HTTPRoute/r", State: v1alpha1.HostnameInvalid, PublicHostname: "ph-a", Message: "annotation lb-pool: bad"}},
			phs:    []v1alpha1.PublicHostname{balanced(ph("ph-a", true, "Published", true), "a")},
			states: []string{v1alpha1.HostnameInvalid}, programmed: ReasonInvalidAnnotation, dns: ReasonRecordsReady, noRecord: []string{"a"},
		},
		"AConflict": {
			hosts:  []v1alpha1.BoundHostname{pending("a", "ph-a"), pending("b", "ph-b")},
			phs:    []v1alpha1.PublicHostname{ph("ph-a", false, "HostnameConflict", false), ph("ph-b", true, "Published", true)},
			states: []string{v1alpha1.HostnameConflict, v1alpha1.HostnamePublished}, programmed: ReasonHostnameConflict, dns: ReasonRecordsReady, accepted: []string{"b"},
		},
		"NotMadeYet": {
			hosts:  []v1alpha1.BoundHostname{pending("a", "ph-a")},
			states: []string{v1alpha1.HostnamePending}, programmed: ReasonPending, dns: ReasonRecordsReady,
		},
		// Decided by the translation: a route's bad annotation outweighs
		// a conflict, which outweighs waiting.
		"ARoutesBadAnnotation": {
			hosts:  []v1alpha1.BoundHostname{{Hostname: "a", Route: "HTTPRoute/r", State: v1alpha1.HostnameInvalid, Message: "annotation x: bad"}, {Hostname: "b", Route: "HTTPRoute/s", State: v1alpha1.HostnameConflict}, pending("c", "ph-c")},
			states: []string{v1alpha1.HostnameInvalid, v1alpha1.HostnameConflict, v1alpha1.HostnamePending}, programmed: ReasonInvalidAnnotation, dns: ReasonRecordsReady,
		},
		"RoutesDisagreeingOnAccess": {
			hosts:  []v1alpha1.BoundHostname{{Hostname: "a", Route: "HTTPRoute/r", State: v1alpha1.HostnameConflict}, {Hostname: "a", Route: "HTTPRoute/s", State: v1alpha1.HostnameConflict}},
			states: []string{v1alpha1.HostnameConflict, v1alpha1.HostnameConflict}, programmed: ReasonHostnameConflict, dns: ReasonRecordsReady,
		},
		"NothingToPublish": {
			hosts:  []v1alpha1.BoundHostname{{Hostname: "*.x", Route: "HTTPRoute/r", State: v1alpha1.HostnameNotSupported}},
			states: []string{v1alpha1.HostnameNotSupported}, programmed: ReasonNoHostnames, dns: ReasonRecordsReady,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			obs := Observe(tc.hosts, tc.phs, tc.mode, "tid")
			var states []string
			for _, h := range obs.Hostnames {
				states = append(states, h.State)
				want := cname
				if h.State == v1alpha1.HostnameNotSupported || slices.Contains(tc.noRecord, h.Hostname) {
					want = ""
				}
				if h.CNAME != want {
					t.Errorf("%s: cname %q, want %q", h.Hostname, h.CNAME, want)
				}
			}
			if diff := cmp.Diff(tc.states, states); diff != "" {
				t.Errorf("states (-want +got):\n%s", diff)
			}
			if obs.Programmed.Reason != tc.programmed || obs.Programmed.OK != (tc.programmed == ReasonProgrammed) {
				t.Errorf("Programmed = %+v, want %s", obs.Programmed, tc.programmed)
			}
			if obs.DNSReady.Reason != tc.dns {
				t.Errorf("DNSReady = %+v, want %s", obs.DNSReady, tc.dns)
			}
			if diff := cmp.Diff(tc.accepted, obs.Accepted); diff != "" {
				t.Errorf("accepted (-want +got):\n%s", diff)
			}
			records := slices.DeleteFunc(slices.Clone(tc.accepted), func(h string) bool { return slices.Contains(tc.noRecord, h) })
			if diff := cmp.Diff(records, obs.Records, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("records (-want +got):\n%s", diff)
			}
		})
	}
}

// A reference that stops resolving keeps what was published, and what the
// status said about it: only Ready and the failing condition change.
func TestSetStatusKeepsWhatIsKept(t *testing.T) {
	b := &v1alpha1.GatewayBinding{ObjectMeta: metav1.ObjectMeta{Generation: 1}}
	published := []v1alpha1.BoundHostname{{Hostname: "a", Route: "HTTPRoute/r", State: v1alpha1.HostnamePublished}}
	ok := translate.Condition{OK: true, Reason: "OK"}
	setStatus(b, translate.Result{Accepted: ok, ResolvedRefs: ok}, Observation{Hostnames: published, Programmed: translate.Condition{OK: true, Reason: ReasonProgrammed}}, translate.Condition{OK: true, Reason: ReasonRecordsReady})

	b.Generation = 2
	typo := translate.Result{Accepted: ok, ResolvedRefs: translate.Condition{Reason: translate.ReasonListenerNotFound, Message: "no listener"}, KeepExisting: true}
	setStatus(b, typo, Observation{Programmed: translate.Condition{Reason: ReasonNoHostnames}}, translate.Condition{OK: true, Reason: ReasonRecordsReady})
	for ct, want := range map[xpv2.ConditionType]string{
		TypeResolvedRefs: translate.ReasonListenerNotFound,
		TypeProgrammed:   ReasonProgrammed,
		TypeDNSReady:     ReasonRecordsReady,
		xpv2.TypeReady:   translate.ReasonListenerNotFound,
	} {
		if got := b.GetCondition(ct); string(got.Reason) != want {
			t.Errorf("%s reason = %q, want %q", ct, got.Reason, want)
		}
	}
	if diff := cmp.Diff(published, b.Status.Hostnames); diff != "" {
		t.Errorf("hostnames (-want +got):\n%s", diff)
	}

	// A revoked grant is no typo: what is said follows what is unpublished.
	b.Generation = 3
	revoked := translate.Result{Accepted: ok, ResolvedRefs: translate.Condition{Reason: translate.ReasonRefNotPermitted}}
	setStatus(b, revoked, Observation{Programmed: translate.Condition{Reason: ReasonNoHostnames}}, translate.Condition{OK: true, Reason: ReasonRecordsReady})
	if got := b.GetCondition(TypeProgrammed); string(got.Reason) != ReasonNoHostnames {
		t.Errorf("Programmed after a revoked grant = %q, want %s", got.Reason, ReasonNoHostnames)
	}
	if len(b.Status.Hostnames) != 0 {
		t.Errorf("hostnames after a revoked grant = %+v, want none", b.Status.Hostnames)
	}
}

func TestSourceState(t *testing.T) {
	ok := translate.Condition{OK: true}
	bad := translate.Condition{Reason: "GatewayNotFound"}
	host := func(state string) v1alpha1.BoundHostname { return v1alpha1.BoundHostname{State: state} }
	cases := map[string]struct {
		res       translate.Result
		obs       Observation
		nameTaken bool
		want      metrics.SourceState
	}{
		"APublicHostnameNameTaken": {res: translate.Result{Accepted: ok, ResolvedRefs: ok}, nameTaken: true, want: metrics.SourceConflict},
		"AllPublished":             {res: translate.Result{Accepted: ok, ResolvedRefs: ok}, obs: Observation{Hostnames: []v1alpha1.BoundHostname{host(v1alpha1.HostnamePublished), host(v1alpha1.HostnamePending)}}, want: metrics.SourceTranslated},
		"NotAccepted":              {res: translate.Result{Accepted: bad, ResolvedRefs: ok}, want: metrics.SourceProblem},
		"RefsUnresolved":           {res: translate.Result{Accepted: ok, ResolvedRefs: bad}, want: metrics.SourceProblem},
		"AnotherSourceHolds":       {res: translate.Result{Accepted: ok, ResolvedRefs: ok}, obs: Observation{Hostnames: []v1alpha1.BoundHostname{host(v1alpha1.HostnamePublished), host(v1alpha1.HostnameConflict)}}, want: metrics.SourceConflict},
		"ABadAnnotation":           {res: translate.Result{Accepted: ok, ResolvedRefs: ok}, obs: Observation{Hostnames: []v1alpha1.BoundHostname{host(v1alpha1.HostnameConflict), host(v1alpha1.HostnameInvalid)}}, want: metrics.SourceProblem},
		// A wildcard needs the user to act, which outweighs the conflict.
		"Wildcard": {res: translate.Result{Accepted: ok, ResolvedRefs: ok}, obs: Observation{Hostnames: []v1alpha1.BoundHostname{host(v1alpha1.HostnameConflict), host(v1alpha1.HostnameNotSupported)}}, want: metrics.SourceProblem},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := sourceState(tc.res, tc.obs, tc.nameTaken); got != tc.want {
				t.Errorf("sourceState = %s, want %s", got, tc.want)
			}
		})
	}
}
