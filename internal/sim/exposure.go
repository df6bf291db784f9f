package sim

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"
)

// ExposureWatch checks, after every write the simulator serves, that its
// hostnames are never reachable without an Access check: whenever a DNS
// record sends one of them to a tunnel (a CNAME to <id>.cfargotunnel.com),
// every rule of that tunnel's configuration that can match the hostname
// requires an Access token of some audience. A stale audience is no
// exposure (cloudflared then refuses every token: closed, not open); a
// rule without the check is. It is the simulator's history of
// configurations and records, reduced to the one question tests ask of it.
//
// It also records the moments a rule for a watched hostname required an
// audience no Access application has (Stale): closed, not open, but on
// the way down it means the application went before the rules did.
type ExposureWatch struct {
	hosts      map[string]bool
	writes     int
	violations []string
	stale      []string
}

// Stale lists the moments a rule that can match a watched hostname
// required an audience no Access application has. Read it after StopWatch.
func (w *ExposureWatch) Stale() []string { return append([]string(nil), w.stale...) }

// WatchExposure starts checking hosts after every write; StopWatch ends it.
func (s *Server) WatchExposure(hosts ...string) *ExposureWatch {
	w := &ExposureWatch{hosts: map[string]bool{}}
	for _, h := range hosts {
		w.hosts[strings.ToLower(h)] = true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.watches = append(s.watches, w)
	w.check(s, "start")
	return w
}

// StopWatch stops w and returns the writes it checked and what it found:
// each a moment a hostname was reachable without an Access check.
func (s *Server) StopWatch(w *ExposureWatch) (writes int, violations []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, o := range s.watches {
		if o == w {
			s.watches = append(s.watches[:i], s.watches[i+1:]...)
			break
		}
	}
	return w.writes, append([]string(nil), w.violations...)
}

// checkExposure runs every watch after a write (op), with s.mu held.
func (s *Server) checkExposure(op string) {
	for _, w := range s.watches {
		w.check(s, op)
	}
}

func (w *ExposureWatch) check(s *Server, op string) {
	w.writes++
	w.checkAudiences(s, op)
	for _, rec := range s.records {
		host := strings.ToLower(rec.Name)
		id, ok := strings.CutSuffix(strings.ToLower(rec.Content), ".cfargotunnel.com")
		if !w.hosts[host] || rec.Type != "CNAME" || !ok {
			continue
		}
		t := s.tunnelByID(id)
		if t == nil || t.config == nil {
			continue
		}
		for _, bad := range unprotectedRules(t.config.Config, host) {
			w.violations = append(w.violations, fmt.Sprintf("after %s (write %d): DNS sends %s to tunnel %s, whose rule %s has no Access check", op, w.writes, host, id, bad))
		}
	}
}

type configRule struct {
	Hostname      string `json:"hostname"`
	Path          string `json:"path"`
	Service       string `json:"service"`
	OriginRequest struct {
		Access *struct {
			Required bool     `json:"required"`
			AudTag   []string `json:"audTag"`
		} `json:"access"`
	} `json:"originRequest"`
}

// matchingRules are the rules of a configuration document that can match
// host: rules naming the host (or a wildcard covering it) and a catch-all
// that serves anything but a fixed status. An unreadable document is nil.
func matchingRules(config json.RawMessage, host string) []configRule {
	var doc struct {
		Ingress []configRule `json:"ingress"`
	}
	if json.Unmarshal(config, &doc) != nil {
		return nil
	}
	var out []configRule
	for _, r := range doc.Ingress {
		matches := r.Hostname == "" && !strings.HasPrefix(r.Service, "http_status:")
		if r.Hostname != "" {
			ok, _ := path.Match(strings.ToLower(r.Hostname), host)
			matches = ok
		}
		if matches {
			out = append(out, r)
		}
	}
	return out
}

// unprotectedRules are the rules of a configuration document that can
// match host and do not require an Access token.
func unprotectedRules(config json.RawMessage, host string) []string {
	if json.Unmarshal(config, &struct{}{}) != nil {
		return []string{"(configuration unreadable)"}
	}
	var bad []string
	for _, r := range matchingRules(config, host) {
		a := r.OriginRequest.Access
		if a == nil || !a.Required || len(a.AudTag) == 0 {
			bad = append(bad, fmt.Sprintf("%q path %q -> %s", r.Hostname, r.Path, r.Service))
		}
	}
	return bad
}

// checkAudiences records every rule of any tunnel that can match a watched
// hostname and requires an audience no application has.
func (w *ExposureWatch) checkAudiences(s *Server, op string) {
	auds := map[string]bool{}
	for _, a := range s.access.apps {
		auds[a.AUD] = true
	}
	for _, t := range s.tunnels {
		if t.config == nil || t.DeletedAt != nil {
			continue
		}
		for host := range w.hosts {
			for _, r := range matchingRules(t.config.Config, host) {
				a := r.OriginRequest.Access
				if a == nil || !a.Required {
					continue
				}
				for _, aud := range a.AudTag {
					if !auds[aud] {
						w.stale = append(w.stale, fmt.Sprintf("after %s (write %d): tunnel %s's rule %q path %q requires audience %s, which no Access application has", op, w.writes, t.ID, r.Hostname, r.Path, aud))
					}
				}
			}
		}
	}
}
