package publichostname_test

import (
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/common"
	dnsv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/dns/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare/cloudflaretest"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/composite/publichostname"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/handshake"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/dnsrecord"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/mr"
)

// TestRefused: a DNS record never created whose failure a retry outlives
// (rate limited, a server error, the network, the request budget's queue
// outlasting the reconcile) is not refused; one that is someone else's, not
// allowed, refused by Cloudflare or failing for any other reason is. The
// failures are made by the code that fails that way, and reach the record's
// Synced condition as the managed-resource layer types them.
func TestRefused(t *testing.T) {
	guardrails := clients.Config{Source: "ProviderConfig team-a", Allow: v1alpha1.Allowances{Zones: []string{"example.com"}}}
	cases := map[string]struct {
		err     error
		created bool
		want    bool
	}{
		"BudgetQueueOutlastedTheReconcile": {err: cloudflaretest.DeadlineSpent(t), want: false},
		"RateLimited":                      {err: cloudflaretest.Answered(t, 429, 971, "Please wait"), want: false},
		"ServerError":                      {err: cloudflaretest.Answered(t, 503, 0, ""), want: false},
		"ConnectionRefused":                {err: cloudflaretest.Unreachable(t), want: false},
		"ConnectionReset":                  {err: cloudflaretest.Reset(t), want: false},
		"ForeignRecordInTheWay":            {err: &dnsrecord.ConflictError{Type: "CNAME", Name: "a.example.com", Zone: "example.com", ID: "d-1"}, want: true},
		"CloudflareRefusesTheRecord":       {err: cloudflaretest.Answered(t, 400, 9007, "Content for CNAME record is invalid"), want: true},
		"A5xxLookingCodeIsNotAStatus":      {err: cloudflaretest.Answered(t, 400, 5001, "something"), want: true},
		"ZoneNotAllowed":                   {err: guardrails.CheckZone("example.org"), want: true},
		"AnyOtherFailure":                  {err: errors.New("no zone in the account matches a.example.org"), want: true},
		"ARecordThatExistsKeepsItsRules":   {err: cloudflaretest.Answered(t, 400, 9007, "Content for CNAME record is invalid"), created: true, want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rec := &dnsv1alpha1.DNSRecord{}
			if tc.created {
				meta.SetExternalName(rec, "d-1")
			}
			rec.SetConditions(failed(errors.Wrap(tc.err, "create failed")))
			if got := publichostname.Refused(rec); got != tc.want {
				t.Errorf("Refused() with Synced %+v = %v, want %v", rec.GetCondition(xpv2.TypeSynced), got, tc.want)
			}
		})
	}
}

// TestDNSConditionRepeatsTheRecordsReason: DNSReady repeats a refused
// record's typed reason, for the sources above to tell a name taken from a
// guardrail; an untyped refusal is RecordRefused.
func TestDNSConditionRepeatsTheRecordsReason(t *testing.T) {
	guardrails := clients.Config{Source: "ProviderConfig team-a", Allow: v1alpha1.Allowances{Zones: []string{"example.com"}}}
	cases := map[string]struct {
		err  error
		want xpv2.ConditionReason
	}{
		"NameTaken":       {&dnsrecord.ConflictError{Type: "CNAME", Name: "a.example.com", ID: "d-1"}, common.ReasonNameTaken},
		"NotAllowed":      {guardrails.CheckZone("example.org"), common.ReasonNotAllowed},
		"Refused":         {cloudflaretest.Answered(t, 400, 9007, "Content for CNAME record is invalid"), common.ReasonRefused},
		"AnyOtherFailure": {errors.New("no zone in the account matches a.example.org"), v1alpha1.ReasonDNSRefused},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rec := &dnsv1alpha1.DNSRecord{}
			rec.SetConditions(failed(tc.err))
			c := publichostname.DNSCondition(rec)
			if c.Reason != tc.want || !handshake.DNSRefused(c) {
				t.Errorf("DNSCondition() = %s %s, want %s (refused)", c.Status, c.Reason, tc.want)
			}
		})
	}
}

// failed is the Synced condition the managed-resource layer writes for err:
// crossplane-runtime's ReconcileError, with err's typed reason if it has
// one.
func failed(err error) xpv2.Condition {
	c := xpv2.ReconcileError(err)
	if r := mr.Reason(err); r != "" {
		c.Reason = r
	}
	return c
}
