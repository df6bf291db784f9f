package sim

import (
	"crypto/rand"
	"fmt"
	"hash/crc32"
	"slices"
	"time"
)

// Service tokens as Cloudflare runs them since the second half of 2026
// (cloudflare-docs, src/content/changelog/access/ 2026-08-25 to 2026-10-02,
// and the service tokens page,
// developers.cloudflare.com/cloudflare-one/access-controls/service-credentials/service-tokens/):
// a scannable client secret format, strict service token authentication,
// and the cleanup of inactive tokens. Turning a token off (`enabled`) is in
// access.go and access_eval.go.

// secretPrefix, secretBodyLength and secretChecksumLength are the
// documented client secret format: "cfast_[40 alphanumeric
// characters][8-character checksum]" for secrets made on or after
// 2026-08-26; older ones are 64 hexadecimal characters.
const (
	secretPrefix         = "cfast_"
	secretBodyLength     = 40
	secretChecksumLength = 8
)

const alphanumerics = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// newScannableSecret is a client secret in the documented format. Its
// checksum is a GUESS: Cloudflare documents its length, not how it is
// computed; here it is the CRC-32 (IEEE) of the prefix and body, in 8
// lowercase hexadecimal characters.
func newScannableSecret() string {
	b := make([]byte, secretBodyLength)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphanumerics[int(b[i])%len(alphanumerics)]
	}
	body := secretPrefix + string(b)
	return body + clientSecretChecksum(body)
}

func clientSecretChecksum(prefixAndBody string) string {
	return fmt.Sprintf("%08x", crc32.ChecksumIEEE([]byte(prefixAndBody)))
}

// strictServiceTokenAuthForced is the day from which new Zero Trust
// organizations have strict service token authentication on, for good
// (documented).
var strictServiceTokenAuthForced = time.Date(2026, 10, 5, 0, 0, 0, 0, time.UTC)

// ServiceTokenInactivity is the organization's cleanup of inactive
// service tokens, as its `service_token_inactivity` object (documented:
// enabled, inactivity_threshold_days from 30 to 365, action "disable" or
// "delete").
type ServiceTokenInactivity struct {
	Enabled                 bool   `json:"enabled"`
	InactivityThresholdDays int    `json:"inactivity_threshold_days"`
	Action                  string `json:"action"`
}

// newOrganizationTokenSettings are the service-token settings an
// organization made at created starts with: strict authentication on when
// made on or after 2026-10-05 (documented), off before; the cleanup off.
// That the cleanup's object is answered while off, as disable after 90
// days, is a GUESS from terraform-provider-cloudflare, which notes that the
// API fills action and inactivity_threshold_days with defaults when
// enabled is false.
func newOrganizationTokenSettings(created time.Time) (strict bool, inactivity ServiceTokenInactivity) {
	return !created.Before(strictServiceTokenAuthForced), ServiceTokenInactivity{Action: "disable", InactivityThresholdDays: 90}
}

// SetStrictServiceTokenAuth turns the organization's strict service token
// authentication on or off, as an administrator does in the dashboard or
// with `strict_service_token_auth` (documented). An organization made on
// or after 2026-10-05 cannot turn it off (documented; the refusal's form
// is the simulator's).
func (s *Server) SetStrictServiceTokenAuth(on bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	org := s.access.org
	if org == nil {
		return fmt.Errorf("the account has no Zero Trust organization")
	}
	if !on && !org.CreatedAt.Before(strictServiceTokenAuthForced) {
		return fmt.Errorf("an organization made on or after %s cannot turn strict service token authentication off", strictServiceTokenAuthForced.Format(time.DateOnly))
	}
	org.StrictServiceTokenAuth, org.UpdatedAt = on, s.now()
	return nil
}

// SetServiceTokenInactivity sets the organization's cleanup of inactive
// service tokens, refusing what Cloudflare documents as out of bounds.
// The cleanup itself runs when CleanUpInactiveServiceTokens is called.
func (s *Server) SetServiceTokenInactivity(c ServiceTokenInactivity) error {
	if c.InactivityThresholdDays < 30 || c.InactivityThresholdDays > 365 {
		return fmt.Errorf("inactivity_threshold_days %d is not from 30 to 365", c.InactivityThresholdDays)
	}
	if c.Action != "disable" && c.Action != "delete" {
		return fmt.Errorf("action %q is neither disable nor delete", c.Action)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.access.org == nil {
		return fmt.Errorf("the account has no Zero Trust organization")
	}
	s.access.org.ServiceTokenInactivity, s.access.org.UpdatedAt = c, s.now()
	return nil
}

// CleanUpInactiveServiceTokens runs Cloudflare's cleanup of inactive
// service tokens once, at the simulator's clock, and returns the IDs of
// the tokens it disabled or deleted. Cloudflare runs it "gradually in the
// background" (documented); a test calls it, after moving the clock, to
// stand for a pass of it. A token is inactive, as documented, when it is
// older than the period, has not authenticated during it, and no Access
// policy rule names it directly: one named only through an Access group
// is not spared. Nothing happens while the cleanup is off.
func (s *Server) CleanUpInactiveServiceTokens() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	org := s.access.org
	if org == nil || !org.ServiceTokenInactivity.Enabled {
		return nil
	}
	now := s.now()
	since := now.AddDate(0, 0, -org.ServiceTokenInactivity.InactivityThresholdDays)
	var cleaned []string
	for _, t := range slices.Clone(s.access.tokens) {
		if !s.inactiveSince(t, since) {
			continue
		}
		cleaned = append(cleaned, t.ID)
		if org.ServiceTokenInactivity.Action == "delete" {
			s.access.tokens = slices.DeleteFunc(s.access.tokens, func(o *serviceToken) bool { return o == t })
			continue
		}
		t.Enabled, t.UpdatedAt = false, now
	}
	return cleaned
}

// inactiveSince says whether t is eligible for the cleanup with its
// period starting at since. A disabled token is not taken again (GUESS).
func (s *Server) inactiveSince(t *serviceToken, since time.Time) bool {
	if !t.Enabled || !t.CreatedAt.Before(since) {
		return false
	}
	if t.LastSeenAt != nil && !t.LastSeenAt.Before(since) {
		return false
	}
	return !s.namedByAPolicy(t.ID)
}

// namedByAPolicy says whether a reusable policy's rule names the token
// directly; an Access group naming it does not count (documented).
func (s *Server) namedByAPolicy(id string) bool {
	for _, p := range s.access.policies {
		if p.ruleSets.uses("service_token", id) {
			return true
		}
	}
	return false
}
