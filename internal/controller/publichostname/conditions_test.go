package publichostname_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/publichostname"
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
