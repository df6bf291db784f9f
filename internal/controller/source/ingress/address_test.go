package ingress_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	dnsv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/dns/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/composite/publichostname"
	ingressctl "github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/ingress"
)

func TestAddress(t *testing.T) {
	const id = "de5136fc-0000-4000-8000-000000000001"
	record := func(content string, ready corev1.ConditionStatus, deleting bool) *dnsv1alpha1.DNSRecord {
		r := &dnsv1alpha1.DNSRecord{}
		r.Spec.ForProvider.Content = content
		r.SetConditions(xpv2.Condition{Type: xpv2.TypeReady, Status: ready})
		if deleting {
			now := metav1.Now()
			r.SetDeletionTimestamp(&now)
		}
		return r
	}
	hostname := func(reason xpv2.ConditionReason, status corev1.ConditionStatus, accepted ...bool) *v1alpha1.PublicHostname {
		ph := &v1alpha1.PublicHostname{}
		ph.SetConditions(xpv2.Condition{Type: v1alpha1.TypeDNSReady, Status: status, Reason: reason})
		if len(accepted) > 0 && accepted[0] {
			ph.SetConditions(xpv2.Condition{Type: v1alpha1.TypeAccepted, Status: corev1.ConditionTrue})
		}
		return ph
	}
	route := &ztv1alpha1.HostnameRoute{}
	route.SetConditions(xpv2.Condition{Type: xpv2.TypeReady, Status: corev1.ConditionTrue})
	cases := map[string]struct {
		ms     []ingressctl.Owned
		public bool
		id     string
		want   string
	}{
		"Published":               {ms: []ingressctl.Owned{route, record(id+".cfargotunnel.com", corev1.ConditionTrue, false)}, public: true, id: id, want: id + ".cfargotunnel.com"},
		"RecordNotReady":          {ms: []ingressctl.Owned{record(id+".cfargotunnel.com", corev1.ConditionFalse, false)}, public: true, id: id},
		"OnlyARoute":              {ms: []ingressctl.Owned{route}, public: true, id: id},
		"RecordForOtherTunnel":    {ms: []ingressctl.Owned{record("other.cfargotunnel.com", corev1.ConditionTrue, false)}, public: true, id: id},
		"RecordBeingDeleted":      {ms: []ingressctl.Owned{record(id+".cfargotunnel.com", corev1.ConditionTrue, true)}, public: true, id: id},
		"Private":                 {ms: []ingressctl.Owned{record(id+".cfargotunnel.com", corev1.ConditionTrue, false)}, id: id},
		"TunnelIDNotKnownYet":     {ms: []ingressctl.Owned{record(".cfargotunnel.com", corev1.ConditionTrue, false)}, public: true},
		"AHostnamesRecordReady":   {ms: []ingressctl.Owned{route, hostname(v1alpha1.ReasonDNSReady, corev1.ConditionTrue)}, public: true, id: id, want: id + ".cfargotunnel.com"},
		"AHostnamesRecordRefused": {ms: []ingressctl.Owned{hostname(v1alpha1.ReasonDNSRefused, corev1.ConditionFalse)}, public: true, id: id},
		"DNSElsewhereNotAccepted": {ms: []ingressctl.Owned{hostname(publichostname.ReasonDNSNone, corev1.ConditionTrue)}, public: true, id: id},
		"DNSElsewhereAccepted":    {ms: []ingressctl.Owned{hostname(publichostname.ReasonDNSNone, corev1.ConditionTrue, true)}, public: true, id: id, want: id + ".cfargotunnel.com"},
		"OneOfSeveralPublished":   {ms: []ingressctl.Owned{record(id+".cfargotunnel.com", corev1.ConditionFalse, false), record(id+".cfargotunnel.com", corev1.ConditionTrue, false)}, public: true, id: id, want: id + ".cfargotunnel.com"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := ingressctl.Address(tc.ms, tc.public, tc.id); got != tc.want {
				t.Errorf("Address() = %q, want %q", got, tc.want)
			}
		})
	}
}
