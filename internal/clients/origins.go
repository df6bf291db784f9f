package clients

import (
	"fmt"
	"slices"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/common"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/origin"
)

// OriginNotAllowedError says a provider config's allowed origins refuse a
// rule's origin. Its Rule is the PublicHostname's condition reason naming
// the rule; a managed resource's Synced says NotAllowed (ConditionReason),
// as for every guardrail refusal.
type OriginNotAllowedError struct {
	// Source names the config.
	Source string
	*origin.Refusal
}

// ConditionReason of a refused origin on a managed resource: NotAllowed.
func (e *OriginNotAllowedError) ConditionReason() xpv2.ConditionReason {
	return common.ReasonNotAllowed
}

func (e *OriginNotAllowedError) Error() string {
	return fmt.Sprintf(notAllowedPrefix+"%s does not allow %s (%s). Nothing was written to Cloudflare", e.Source, e.Refusal.Error(), e.Rule)
}

// CheckOrigin refuses an origin the config's allowed origins do not allow
// (origin.Check): by default a source publishes its own namespace's
// Services, http_status:<code> and hello_world; spec.allow.origins lists
// more; link-local and metadata addresses never.
func (c Config) CheckOrigin(o string, from origin.Source) error {
	if r := origin.Check(o, from, c.Allow.Origins); r != nil {
		return &OriginNotAllowedError{Source: c.Source, Refusal: r}
	}
	return nil
}

// FollowOrigin is CheckOrigin that also judges where the Services an
// origin names lead (origin.Follow), as look reads them. A refusal is an
// OriginNotAllowedError; look's error is returned as it is.
func (c Config) FollowOrigin(o string, from origin.Source, look origin.Lookup) error {
	r, err := origin.Follow(o, from, c.Allow.Origins, look)
	if err != nil {
		return err
	}
	if r != nil {
		return &OriginNotAllowedError{Source: c.Source, Refusal: r}
	}
	return nil
}

// OriginRule is the rule that refused an origin, if err is such a refusal.
func OriginRule(err error) (origin.Rule, bool) {
	var e *OriginNotAllowedError
	if errors.As(err, &e) {
		return e.Rule, true
	}
	return "", false
}

// IsOriginRule says whether a condition reason is an allowed-origins rule.
func IsOriginRule(reason string) bool { return slices.Contains(origin.Rules, origin.Rule(reason)) }
