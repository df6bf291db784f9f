package mr

import (
	"fmt"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/common"
)

// InUseError says a deletion waits: Cloudflare refuses to delete an object
// others still use (a Load Balancing monitor that pools name, a pool that
// load balancers name), so the resource keeps it, and retries, until they
// let go of it.
type InUseError struct {
	// Kind and ID of the object being deleted.
	Kind, ID string
	// By says who uses it, and what to do.
	By string
}

func (e *InUseError) Error() string {
	return fmt.Sprintf("deletion waits: %s %s is still used by %s; retrying", e.Kind, e.ID, e.By)
}

// ConditionReason of an object still in use: InUse.
func (e *InUseError) ConditionReason() xpv2.ConditionReason { return common.ReasonInUse }

// UnsupportedError refuses a spec Cloudflare documents as not working.
type UnsupportedError struct {
	// What is asked, and why it does not work.
	What, Why string
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("unsupported: %s: %s", e.What, e.Why)
}

// ConditionReason of an unsupported spec: Unsupported.
func (e *UnsupportedError) ConditionReason() xpv2.ConditionReason { return common.ReasonUnsupported }
