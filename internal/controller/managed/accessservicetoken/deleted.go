package accessservicetoken

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/common"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
)

// Reasons of the Warning events for a token Cloudflare deleted or turned
// off.
const (
	// EventRecreating: a token deleted in Cloudflare is made again.
	EventRecreating event.Reason = "RecreatingDeletedToken"
	// EventTurningOn: a token turned off in Cloudflare is turned on again,
	// as spec.forProvider.enabled asks.
	EventTurningOn event.Reason = "TurningTokenOnAgain"
)

// DeletedInCloudflareError says that the token this resource made was
// deleted in Cloudflare, and that the resource waits for the user
// (spec.onDeletedInCloudflare: Wait). It never holds a secret.
type DeletedInCloudflareError struct {
	// ID of the deleted token.
	ID string
	// Secret is the connection Secret's name ("" when none is written).
	Secret string
	// LastSeenAt is when the token last authenticated, as last observed.
	LastSeenAt *metav1.Time
	// Cleanup is the account's cleanup of inactive tokens when it is on.
	Cleanup *cloudflare.ServiceTokenInactivity
}

func (e *DeletedInCloudflareError) Error() string {
	return fmt.Sprintf("%s; nothing is made in its place while spec.onDeletedInCloudflare is Wait: set it to Recreate to make a new token and publish its client ID and secret, or delete this resource", e.what())
}

// Recreating is the message of the Warning event of a token made again.
func (e *DeletedInCloudflareError) Recreating() string {
	return fmt.Sprintf("%s; making a new one (spec.onDeletedInCloudflare: Recreate), with a new client ID and secret%s; policies and groups naming it by serviceTokenRef follow the new token, rules naming the old ID by serviceTokenId do not", e.what(), e.publishedIn())
}

// what says what happened, and Cloudflare's likely reason.
func (e *DeletedInCloudflareError) what() string {
	msg := fmt.Sprintf("Access service token %s was deleted in Cloudflare%s: its client ID and secret%s no longer authenticate", e.ID, cause(e.Cleanup, "delete", e.LastSeenAt), e.publishedIn())
	return msg
}

func (e *DeletedInCloudflareError) publishedIn() string {
	if e.Secret == "" {
		return ""
	}
	return fmt.Sprintf(" (Secret %s)", e.Secret)
}

// ConditionReason of a token deleted in Cloudflare: DeletedInCloudflare.
func (e *DeletedInCloudflareError) ConditionReason() xpv2.ConditionReason {
	return common.ReasonDeletedInCloudflare
}

// TurningOnMessage is the message of the Warning event of a token turned
// off in Cloudflare being turned on again.
func TurningOnMessage(t cloudflare.ServiceToken, c *cloudflare.ServiceTokenInactivity) string {
	var seen *metav1.Time
	if t.LastSeenAt != nil {
		seen = &metav1.Time{Time: *t.LastSeenAt}
	}
	return fmt.Sprintf("Access service token %s was turned off in Cloudflare%s; turning it on again, as spec.forProvider.enabled asks (set it to false to keep it off)", t.ID, cause(c, "disable", seen))
}

// cause names Cloudflare's cleanup of inactive tokens as the likely cause
// when it is on for the account with this action; "" otherwise (a person
// may have done it).
func cause(c *cloudflare.ServiceTokenInactivity, action string, lastSeen *metav1.Time) string {
	if c == nil || !c.Enabled || c.Action != action {
		return ""
	}
	used := "it never authenticated"
	if lastSeen != nil {
		used = "it last authenticated at " + lastSeen.UTC().Format(time.RFC3339)
	}
	return fmt.Sprintf(" (likely by Cloudflare's cleanup of inactive service tokens, on for this account: tokens that have not authenticated for %d days are %sd unless an Access policy names them directly, and one named only through an Access group is not spared; %s)", c.InactivityThresholdDays, action, used)
}
