package sim

import (
	"fmt"
	"sort"
	"strings"
)

// DNSWatch is the history of some names' DNS records: after every DNS
// record write the simulator serves (a create, an update, a delete, a
// batch), the records each watched name has. A batch is one step, as
// Cloudflare applies it in one transaction, so a test reads here whether a
// name was ever left without a record, or given two, between writes.
type DNSWatch struct {
	names map[string]bool
	steps []DNSStep
}

// DNSStep is what one watched name held after one write.
type DNSStep struct {
	// Op is the write's operation ("dns_records.batch"), or "start".
	Op   string
	Name string
	// Records are the name's records, each "TYPE content", sorted.
	Records []string
}

func (d DNSStep) String() string {
	return fmt.Sprintf("after %s: %s has [%s]", d.Op, d.Name, strings.Join(d.Records, ", "))
}

// WatchDNS starts recording the records of names (fully qualified) after
// every DNS write; StopDNSWatch ends it.
func (s *Server) WatchDNS(names ...string) *DNSWatch {
	w := &DNSWatch{names: map[string]bool{}}
	for _, n := range names {
		w.names[strings.ToLower(strings.TrimSuffix(n, "."))] = true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dnsWatches = append(s.dnsWatches, w)
	w.record(s, "start")
	return w
}

// StopDNSWatch stops w and returns its history, oldest first.
func (s *Server) StopDNSWatch(w *DNSWatch) []DNSStep {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, o := range s.dnsWatches {
		if o == w {
			s.dnsWatches = append(s.dnsWatches[:i], s.dnsWatches[i+1:]...)
			break
		}
	}
	return append([]DNSStep(nil), w.steps...)
}

// checkDNSWatches records every watch after a DNS write (op), with s.mu
// held.
func (s *Server) checkDNSWatches(op string) {
	for _, w := range s.dnsWatches {
		w.record(s, op)
	}
}

func (w *DNSWatch) record(s *Server, op string) {
	held := map[string][]string{}
	for _, r := range s.records {
		if w.names[r.Name] {
			held[r.Name] = append(held[r.Name], r.Type+" "+r.Content)
		}
	}
	names := make([]string, 0, len(w.names))
	for n := range w.names {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		rs := held[n]
		sort.Strings(rs)
		w.steps = append(w.steps, DNSStep{Op: op, Name: n, Records: rs})
	}
}
