package clients

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/common"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/origin"
)

// TestCheckOrigin: a refusal is a guardrail refusal (reason NotAllowed, for
// the sources that report their objects' failures), names its config
// and its rule, and the rule is a condition reason IsOriginRule knows.
func TestCheckOrigin(t *testing.T) {
	c := Config{Source: "ClusterProviderConfig tenants", Allow: v1alpha1.Allowances{Origins: []string{"internal.example.net"}}}
	from := origin.Source{Namespace: "team-a"}
	if err := c.CheckOrigin("https://db.internal.example.net", from); err != nil {
		t.Errorf("a listed origin: %v", err)
	}
	if err := c.CheckOrigin("http://web.team-a.svc:80", from); err != nil {
		t.Errorf("the namespace's own Service: %v", err)
	}
	err := c.CheckOrigin("http://169.254.169.254:80", from)
	rule, ok := OriginRule(err)
	if diff := cmp.Diff(origin.RuleMetadata, rule); !ok || diff != "" {
		t.Fatalf("OriginRule(%v) = %q, %v", err, rule, ok)
	}
	want := `not allowed: ClusterProviderConfig tenants does not allow origin "http://169.254.169.254:80": 169.254.169.254 is a link-local or cloud metadata address; it is never published, whatever spec.allow.origins lists (OriginMetadataAddress). Nothing was written to Cloudflare`
	if diff := cmp.Diff(want, err.Error()); diff != "" {
		t.Errorf("message -want +got:\n%s", diff)
	}
	var reasoned interface{ ConditionReason() xpv2.ConditionReason }
	if !errors.As(err, &reasoned) || reasoned.ConditionReason() != common.ReasonNotAllowed || !IsOriginRule(string(rule)) || IsOriginRule("InvalidSpec") {
		t.Errorf("a refusal's reason or rule is not recognised")
	}
}
