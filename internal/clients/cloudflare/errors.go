package cloudflare

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"

	cf "github.com/cloudflare/cloudflare-go/v7"
)

// APIError is a failed Cloudflare call: the HTTP status and the Cloudflare
// error codes and messages from the envelope. Its message is short and never
// contains credentials.
type APIError struct {
	Operation string
	Status    int
	Codes     []int
	Messages  []string
}

func (e *APIError) Error() string {
	var parts []string
	for i, c := range e.Codes {
		parts = append(parts, fmt.Sprintf("%d %s", c, e.Messages[i]))
	}
	detail := strings.Join(parts, "; ")
	if detail == "" {
		detail = http.StatusText(e.Status)
	}
	return fmt.Sprintf("%s: Cloudflare API returned %d: %s", e.Operation, e.Status, detail)
}

// HasCode reports whether Cloudflare returned the given error code.
func (e *APIError) HasCode(code int) bool {
	for _, c := range e.Codes {
		if c == code {
			return true
		}
	}
	return false
}

// wrap turns an SDK error into an *APIError named after the operation, and
// leaves transport errors wrapped with that context.
func wrap(err error, op string) error {
	if err == nil {
		return nil
	}
	var sdkErr *cf.Error
	if errors.As(err, &sdkErr) {
		ae := &APIError{Operation: op, Status: sdkErr.StatusCode}
		for _, d := range sdkErr.Errors {
			ae.Codes = append(ae.Codes, int(d.Code))
			ae.Messages = append(ae.Messages, d.Message)
		}
		return ae
	}
	return fmt.Errorf("%s: %w", op, err)
}

func asAPIError(err error) (*APIError, bool) {
	var ae *APIError
	ok := errors.As(err, &ae)
	return ae, ok
}

// Cloudflare error codes the provider acts on.
const (
	CodeTunnelNameExists     = 1013
	CodeTunnelHasConnections = 1022
	CodeTunnelHasRoutes      = 1023
	CodeRouteNotFound        = 1015
	CodeDNSRecordNotFound    = 81044
	CodeDNSHostConflict      = 81053
	CodeDNSCNAMEConflict     = 81054
	CodeDNSRecordExists      = 81057
	CodeDNSIdenticalExists   = 81058
	CodeRateLimited          = 971
	CodeAuthentication       = 10000
)

// IsNotFound is true when the object does not exist (404, or a code that
// means the same).
func IsNotFound(err error) bool {
	ae, ok := asAPIError(err)
	return ok && (ae.Status == http.StatusNotFound || ae.HasCode(CodeDNSRecordNotFound) || ae.HasCode(CodeRouteNotFound))
}

// IsAlreadyExists is true when a create collided with an object that has the
// same natural key (tunnel name, identical DNS record, route hostname…).
func IsAlreadyExists(err error) bool {
	ae, ok := asAPIError(err)
	return ok && (ae.Status == http.StatusConflict || ae.HasCode(CodeTunnelNameExists) || ae.HasCode(CodeDNSRecordExists) || ae.HasCode(CodeDNSIdenticalExists))
}

// IsConflict is true when a write clashes with a different object, for
// example a CNAME on a name that already has an A record.
func IsConflict(err error) bool {
	ae, ok := asAPIError(err)
	return ok && (ae.HasCode(CodeDNSHostConflict) || ae.HasCode(CodeDNSCNAMEConflict) || ae.HasCode(81056))
}

// IsRateLimited is true for a 429: the token's request budget is spent.
func IsRateLimited(err error) bool {
	ae, ok := asAPIError(err)
	return ok && (ae.Status == http.StatusTooManyRequests || ae.HasCode(CodeRateLimited))
}

// IsAuthentication is true when the token was refused or lacks permission.
func IsAuthentication(err error) bool {
	ae, ok := asAPIError(err)
	return ok && (ae.Status == http.StatusUnauthorized || ae.Status == http.StatusForbidden || ae.HasCode(CodeAuthentication))
}

// IsTransient is true for failures worth retrying unchanged: 5xx, 408,
// timeouts (a reconcile's deadline spent queueing for the request budget
// among them), cancellation, and network errors (a refused or reset
// connection, a response cut short).
func IsTransient(err error) bool {
	if err == nil {
		return false
	}
	if ae, ok := asAPIError(err); ok {
		return ae.Status >= 500 || ae.Status == http.StatusRequestTimeout
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.ErrUnexpectedEOF)
}

// IsRefused is true when Cloudflare answered the request with a client
// error (4xx) other than a rate limit: the request, or the token, is what
// it refuses, and sending it again unchanged is refused again.
func IsRefused(err error) bool {
	ae, ok := asAPIError(err)
	return ok && ae.Status >= 400 && ae.Status < 500 && ae.Status != http.StatusRequestTimeout && !IsRateLimited(err)
}

// IsForbidden is true for a 403: the token may not make this call, on this
// object or at all.
func IsForbidden(err error) bool {
	ae, ok := asAPIError(err)
	return ok && ae.Status == http.StatusForbidden
}

// AccessLostError is an object that Cloudflare's list of its kind leaves
// out and whose get by ID is refused with 403, although the list itself
// was served: the token lost its permission on it. Since 2026-05-21
// Cloudflare's lists show only what the token may read (granular
// permissions, per tunnel), so an object missing from a list is not
// deleted on that evidence; a 404 would say it is gone, a 403 says only
// that this token may not see it. Nothing is created in its place.
type AccessLostError struct {
	// Kind names the object ("tunnel"), ID is its Cloudflare ID.
	Kind, ID string
	// Permission is what the token needs to read and manage it.
	Permission string
	// Err is Cloudflare's refusal.
	Err error
}

func (e *AccessLostError) Error() string {
	return fmt.Sprintf("the API token may no longer read %s %s: Cloudflare no longer lists it and refuses a get by ID (%v); it is not taken for deleted and nothing is created in its place. Grant the token %s", e.Kind, e.ID, e.Err, e.Permission)
}

func (e *AccessLostError) Unwrap() error { return e.Err }

// IsAccessLost is true when the token lost its permission on an object it
// manages (AccessLostError).
func IsAccessLost(err error) bool {
	var al *AccessLostError
	return errors.As(err, &al)
}
