package ingress

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/test"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/common"
	dnsv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/dns/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/expose"
)

func published(host string) *v1alpha1.PublicHostname {
	return &v1alpha1.PublicHostname{ObjectMeta: metav1.ObjectMeta{Name: "web-host-" + host}, Spec: v1alpha1.PublicHostnameSpec{Hostname: host}}
}

func TestDesiredFrom(t *testing.T) {
	res := expose.Result{
		Routes:    []*ztv1alpha1.HostnameRoute{{ObjectMeta: metav1.ObjectMeta{Name: "r"}, Spec: ztv1alpha1.HostnameRouteSpec{ForProvider: ztv1alpha1.HostnameRouteParameters{Hostname: "a.example.com"}}}},
		Published: []*v1alpha1.PublicHostname{published("a.example.com"), published("b.example.com")},
	}
	cases := map[string]struct {
		lost, yielded map[string]string
		publish       bool
		want          []string
	}{
		"Everything":                     {publish: true, want: []string{"HostnameRoute/r", "PublicHostname/web-host-a.example.com", "PublicHostname/web-host-b.example.com"}},
		"ALostHostnameIsNotPublished":    {lost: map[string]string{"b.example.com": "ns/older"}, publish: true, want: []string{"HostnameRoute/r", "PublicHostname/web-host-a.example.com"}},
		"WithAProblemNothingIsPublished": {want: []string{"HostnameRoute/r"}},
		// Issue 34, bug 5: whoever holds the public hostname holds its
		// private route; the loser's PublicHostname stays, in line.
		"AHostnameWhosePublicClaimLostIsNotRouted": {yielded: map[string]string{"a.example.com": "team-a/api"}, publish: true, want: []string{"PublicHostname/web-host-a.example.com", "PublicHostname/web-host-b.example.com"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, o := range desiredFrom(res, tc.lost, tc.yielded, tc.publish).objs {
				got = append(got, source.Key(o))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("desired (-want +got):\n%s", diff)
			}
		})
	}
}

// converge hands an Ingress's DNS record from before PublicHostnames to the
// PublicHostname of its hostname (it is not deleted), and deletes one whose
// hostname is no longer published.
func TestConvergeHandsOverOlderRecords(t *testing.T) {
	ing := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "web", UID: "ing-uid"}}
	owner := []metav1.OwnerReference{{Kind: "Ingress", Name: "web", UID: "ing-uid", Controller: ptr.To(true)}}
	record := func(name, host string) dnsv1alpha1.DNSRecord {
		return dnsv1alpha1.DNSRecord{
			ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name, OwnerReferences: owner},
			Spec:       dnsv1alpha1.DNSRecordSpec{ForProvider: dnsv1alpha1.DNSRecordParameters{Name: host}},
		}
	}
	var deleted, created []string
	kube := &test.MockClient{
		MockGet: func(_ context.Context, key client.ObjectKey, _ client.Object) error {
			return kerrors.NewNotFound(schema.GroupResource{}, key.Name)
		},
		MockCreate: func(_ context.Context, o client.Object, _ ...client.CreateOption) error {
			created = append(created, o.GetName())
			return nil
		},
		MockList: func(_ context.Context, l client.ObjectList, _ ...client.ListOption) error {
			if rl, ok := l.(*dnsv1alpha1.DNSRecordList); ok {
				rl.Items = []dnsv1alpha1.DNSRecord{record("kept", "a.example.com"), record("gone", "old.example.com")}
			}
			return nil
		},
		MockDelete: func(_ context.Context, o client.Object, _ ...client.DeleteOption) error {
			deleted = append(deleted, o.GetName())
			return nil
		},
	}
	r := &Reconciler{kube: kube, log: logging.NewNopLogger(), record: event.NewNopRecorder()}
	if _, _, err := r.converge(context.Background(), ing, desired{objs: []Owned{published("a.example.com")}}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"web-host-a.example.com"}, created); diff != "" {
		t.Errorf("created (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"gone"}, deleted); diff != "" {
		t.Errorf("deleted (-want +got):\n%s", diff)
	}
}

// A private route yielded to the holder of its public claim goes even while
// a problem keeps everything else the Ingress has: bad input must not keep
// a route that is someone else's.
func TestConvergeDropsAYieldedRouteDespiteAProblem(t *testing.T) {
	ing := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "steal", UID: "ing-uid"}}
	owner := []metav1.OwnerReference{{Kind: "Ingress", Name: "steal", UID: "ing-uid", Controller: ptr.To(true)}}
	route := func(name, host string) ztv1alpha1.HostnameRoute {
		return ztv1alpha1.HostnameRoute{
			ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: name, OwnerReferences: owner},
			Spec:       ztv1alpha1.HostnameRouteSpec{ForProvider: ztv1alpha1.HostnameRouteParameters{Hostname: host}},
		}
	}
	var deleted []string
	kube := &test.MockClient{
		MockList: func(_ context.Context, l client.ObjectList, _ ...client.ListOption) error {
			if rl, ok := l.(*ztv1alpha1.HostnameRouteList); ok {
				rl.Items = []ztv1alpha1.HostnameRoute{route("theirs", "api.example.com"), route("ours", "www.example.com")}
			}
			return nil
		},
		MockDelete: func(_ context.Context, o client.Object, _ ...client.DeleteOption) error {
			deleted = append(deleted, o.GetName())
			return nil
		},
	}
	r := &Reconciler{kube: kube, log: logging.NewNopLogger(), record: event.NewNopRecorder()}
	d := desired{keepExisting: true, yielded: map[string]string{"api.example.com": "team-a/api"}}
	if _, _, err := r.converge(context.Background(), ing, d); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"theirs"}, deleted); diff != "" {
		t.Errorf("deleted (-want +got):\n%s", diff)
	}
}

func TestFailureOf(t *testing.T) {
	cond := func(t xpv2.ConditionType, s corev1.ConditionStatus, r xpv2.ConditionReason, msg string) xpv2.Condition {
		return xpv2.Condition{Type: t, Status: s, Reason: r, Message: msg}
	}
	withConditions := func(cs ...xpv2.Condition) *v1alpha1.PublicHostname {
		p := published("a.example.com")
		p.SetConditions(cs...)
		return p
	}
	route := &ztv1alpha1.HostnameRoute{}
	route.Spec.ForProvider.TunnelID = ptr.To("6f1c0d6e-0b8e-4f51-9f5a-3c3b0c8f7a21")
	route.SetConditions(cond(xpv2.TypeSynced, corev1.ConditionFalse, common.ReasonNameTaken, "conflict: hostname a.example.com is routed by route 1234, which was not created by this resource"))
	cases := map[string]struct {
		o          Owned
		reason, in string
	}{
		"ARouteNotSynced":    {o: route, reason: "NameTaken", in: "not created by this resource"},
		"HostnameConflict":   {o: withConditions(cond(v1alpha1.TypeAccepted, corev1.ConditionFalse, "HostnameConflict", "held by b")), reason: "HostnameConflict", in: "held by b"},
		"RecordNotAllowed":   {o: withConditions(cond(v1alpha1.TypeDNSReady, corev1.ConditionFalse, common.ReasonNotAllowed, "DNSRecord x: not allowed: zone")), reason: "NotAllowed", in: "not allowed"},
		"RecordRefused":      {o: withConditions(cond(v1alpha1.TypeDNSReady, corev1.ConditionFalse, v1alpha1.ReasonDNSRefused, "DNSRecord x: no zone")), reason: "CloudflareError", in: "no zone"},
		"WaitingIsNoFailure": {o: withConditions(cond(v1alpha1.TypeDNSReady, corev1.ConditionFalse, v1alpha1.ReasonWaitingForTunnel, "waiting"))},
		"Healthy":            {o: withConditions(cond(v1alpha1.TypeAccepted, corev1.ConditionTrue, "Accepted", "ok"))},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			reason, msg := source.Failure(tc.o)
			if reason != tc.reason || (tc.in == "") != (msg == "") || (tc.in != "" && !strings.Contains(msg, tc.in)) {
				t.Errorf("source.Failure() = %q, %q; want %q mentioning %q", reason, msg, tc.reason, tc.in)
			}
		})
	}
}
