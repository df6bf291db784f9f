package source_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/common"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source"
)

// TestFailure: the event a source repeats for a failure of what it made is
// named from the typed reason of that object's condition (a managed
// resource's Synced, a PublicHostname's DNSReady), whatever its message
// says.
func TestFailure(t *testing.T) {
	route := func(r xpv2.ConditionReason) source.Owned {
		o := &ztv1alpha1.HostnameRoute{}
		o.Spec.ForProvider.TunnelID = ptr.To("6f1c0d6e-0b8e-4f51-9f5a-3c3b0c8f7a21")
		o.SetConditions(xpv2.Condition{Type: xpv2.TypeSynced, Status: corev1.ConditionFalse, Reason: r, Message: "it failed"})
		return o
	}
	hostname := func(r xpv2.ConditionReason) source.Owned {
		o := &v1alpha1.PublicHostname{}
		o.SetConditions(xpv2.Condition{Type: v1alpha1.TypeDNSReady, Status: corev1.ConditionFalse, Reason: r, Message: "DNSRecord x: it failed"})
		return o
	}
	cases := map[string]struct {
		o    source.Owned
		want string
	}{
		"NameTaken":            {route(common.ReasonNameTaken), "NameTaken"},
		"AnotherResourceHolds": {route(common.ReasonConflict), "NameTaken"},
		"NotAllowed":           {route(common.ReasonNotAllowed), "NotAllowed"},
		"RefusedByCloudflare":  {route(common.ReasonRefused), "CloudflareError"},
		"RateLimited":          {route(common.ReasonRateLimited), "CloudflareError"},
		"Untyped":              {route(xpv2.ReasonReconcileError), "CloudflareError"},
		"RecordNameTaken":      {hostname(common.ReasonNameTaken), "NameTaken"},
		"RecordNotAllowed":     {hostname(common.ReasonNotAllowed), "NotAllowed"},
		"RecordRefused":        {hostname(v1alpha1.ReasonDNSRefused), "CloudflareError"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, _ := source.Failure(tc.o)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Failure() reason -want +got:\n%s", diff)
			}
		})
	}
}
