package v1alpha1

import xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

// TypeServiceTokens is the condition of an AccessPolicy or AccessGroup
// whose rules name service tokens: whether those rules let the tokens in
// as written.
const TypeServiceTokens xpv2.ConditionType = "ServiceTokens"

// Reasons of the ServiceTokens condition.
const (
	// ReasonServiceTokensEffective (True): the rules' service tokens exist,
	// and the organization's settings let them count.
	ReasonServiceTokensEffective xpv2.ConditionReason = "Effective"
	// ReasonNoServiceTokens (True): the rules name no service token.
	ReasonNoServiceTokens xpv2.ConditionReason = "NoServiceTokens"
	// ReasonServiceTokenDeleted (False): a service token the rules name
	// was deleted in Cloudflare (by hand, or by Cloudflare's cleanup of
	// inactive tokens, which spares only tokens a policy names directly):
	// the rules no longer let it in.
	ReasonServiceTokenDeleted xpv2.ConditionReason = "ServiceTokenDeletedInCloudflare"
	// ReasonStrictServiceTokenAuth (False): an Allow policy names service
	// tokens while the organization's strict service token authentication
	// is on: Access ignores Allow policies for requests that carry service
	// token headers, so these rules let no service token in. A Service
	// Auth (non_identity) policy does.
	ReasonStrictServiceTokenAuth xpv2.ConditionReason = "StrictServiceTokenAuth"
	// ReasonLenientServiceTokenAuth (True): an Allow policy names service
	// tokens and the organization's strict service token authentication is
	// off: the rules count only for a visitor who also logs in.
	ReasonLenientServiceTokenAuth xpv2.ConditionReason = "LenientServiceTokenAuth"
)
