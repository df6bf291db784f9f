package mr_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/common"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare/cloudflaretest"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/dnsrecord"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/hostnameroute"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/mr"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/virtualnetwork"
)

// TestReason: each failure, made by the code that fails that way (the
// provider's refusals; the Cloudflare client against a server that answers
// so, a closed port, a reset connection, a spent deadline), gives its
// reason, also wrapped as the managed reconciler wraps it.
func TestReason(t *testing.T) {
	guardrails := clients.Config{Source: "ProviderConfig team-a", Allow: v1alpha1.Allowances{Zones: []string{"example.com"}}}
	cases := map[string]struct {
		err  error
		want xpv2.ConditionReason
	}{
		"NameTaken":             {&mr.NameTakenError{Kind: "tunnel", Name: "edge", ID: "t-1"}, common.ReasonNameTaken},
		"RouteInTheWay":         {&hostnameroute.ConflictError{Hostname: "a.example.com", RouteID: "r-1"}, common.ReasonNameTaken},
		"RecordInTheWay":        {&dnsrecord.ConflictError{Type: "CNAME", Name: "a.example.com", ID: "d-1"}, common.ReasonNameTaken},
		"AnotherResourceHolds":  {&mr.ClaimedError{Kind: "Tunnel", ID: "t-1", By: "ns/edge"}, common.ReasonConflict},
		"AnOlderDefault":        {&virtualnetwork.DefaultClaimedError{By: "ns/main"}, common.ReasonConflict},
		"ZoneNotAllowed":        {guardrails.CheckZone("example.org"), common.ReasonNotAllowed},
		"ForeignTunnel":         {&mr.ForeignTunnelError{ID: "t-1", By: "other/edge"}, common.ReasonNotAllowed},
		"ForeignVirtualNetwork": {&mr.ForeignVirtualNetworkError{ID: "v-1", By: "other/net"}, common.ReasonNotAllowed},
		"ReferenceElsewhere":    {&mr.ReferenceNotAllowedError{Detail: `"other" is not "ns"`}, common.ReasonNotAllowed},
		"RateLimited":           {cloudflaretest.Answered(t, 429, 971, "Please wait and consider throttling your request speed"), common.ReasonRateLimited},
		"ServerError":           {cloudflaretest.Answered(t, 503, 0, ""), common.ReasonTransient},
		"ConnectionRefused":     {cloudflaretest.Unreachable(t), common.ReasonTransient},
		"ConnectionReset":       {cloudflaretest.Reset(t), common.ReasonTransient},
		"AnswerCutShort":        {cloudflaretest.CutShort(t), common.ReasonTransient},
		"BudgetQueueOutlasted":  {cloudflaretest.DeadlineSpent(t), common.ReasonTransient},
		"InvalidRecord":         {cloudflaretest.Answered(t, 400, 9007, "Content for CNAME record is invalid"), common.ReasonRefused},
		"TokenLacksPermission":  {cloudflaretest.Answered(t, 403, 10000, "Authentication error"), common.ReasonRefused},
		"TokenLostTheObject":    {&cloudflare.AccessLostError{Kind: "tunnel", ID: "t-1", Permission: "Account › Cloudflare Tunnel: Edit", Err: cloudflaretest.Answered(t, 403, 9109, "Unauthorized to access requested resource")}, common.ReasonPermissionDenied},
		"A5xxCodeIsNoStatus":    {cloudflaretest.Answered(t, 400, 5001, "something"), common.ReasonRefused},
		"AnyOtherFailure":       {errors.New("spec.forProvider.tunnelId is not set"), ""},
		"NoFailure":             {nil, ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, mr.Reason(errors.Wrap(tc.err, "observe failed"))); diff != "" {
				t.Errorf("Reason(%v) -want +got:\n%s", tc.err, diff)
			}
		})
	}
}
