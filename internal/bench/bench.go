// Package bench holds the helpers of the scale benchmark (bench_test.go):
// counting what the Cloudflare simulator holds and was asked, the minimum
// request count of the scenario, and in-process memory and CPU sampling.
// The benchmark itself runs with `make bench`; see docs/benchmarks.md.
package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim"
)

// Stats are the simulator's per-operation request counts.
type Stats map[string]sim.OpStats

// Sub returns the requests s received since before (s minus before).
func (s Stats) Sub(before Stats) Stats {
	out := Stats{}
	for op, st := range s {
		b := before[op]
		d := sim.OpStats{Requests: st.Requests - b.Requests, RateLimited: st.RateLimited - b.RateLimited, ByStatus: map[int]int{}}
		for code, n := range st.ByStatus {
			if dn := n - b.ByStatus[code]; dn != 0 {
				d.ByStatus[code] = dn
			}
		}
		if d.Requests != 0 {
			out[op] = d
		}
	}
	return out
}

// Total is the number of requests, and of 429 answers, over all operations.
func (s Stats) Total() (requests, rateLimited int) {
	for _, st := range s {
		requests += st.Requests
		rateLimited += st.RateLimited
	}
	return requests, rateLimited
}

// Requests of one operation ("services.create").
func (s Stats) Requests(op string) int { return s[op].Requests }

// Errors counts answers that were neither 2xx nor 429.
func (s Stats) Errors() int {
	n := 0
	for _, st := range s {
		for code, c := range st.ByStatus {
			if (code < 200 || code > 299) && code != 429 {
				n += c
			}
		}
	}
	return n
}

// Table writes the per-operation counts, largest first, with their share of
// the total and non-2xx statuses.
func (s Stats) Table(w io.Writer) {
	total, _ := s.Total()
	ops := slices.Collect(maps.Keys(s))
	slices.SortFunc(ops, func(a, b string) int {
		if d := s[b].Requests - s[a].Requests; d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "operation\trequests\tshare\tnon-2xx\t")
	for _, op := range ops {
		st := s[op]
		var bad []string
		for _, code := range slices.Sorted(maps.Keys(st.ByStatus)) {
			if code < 200 || code > 299 {
				bad = append(bad, fmt.Sprintf("%d×%d", st.ByStatus[code], code))
			}
		}
		nb := strings.Join(bad, " ")
		if nb == "" {
			nb = "-"
		}
		fmt.Fprintf(tw, "%s\t%d\t%.1f%%\t%s\t\n", op, st.Requests, 100*float64(st.Requests)/float64(max(total, 1)), nb)
	}
	fmt.Fprintf(tw, "total\t%d\t\t\t\n", total)
	_ = tw.Flush()
}

// Live counts what the simulated account holds (soft-deleted objects are
// not live) and the names held more than once.
type Live struct {
	Tunnels, Routes, Services, Records, CIDRRoutes int
	// Duplicates lists names (tunnel names, route hostnames, service names,
	// record names) held by more than one live object.
	Duplicates []string
	// ConfigHostnames is the number of distinct hostnames in the remote
	// configurations of the live tunnels.
	ConfigHostnames int
}

// Leftovers is the number of live objects of any kind.
func (l Live) Leftovers() int {
	return l.Tunnels + l.Routes + l.Services + l.Records + l.CIDRRoutes
}

func (l Live) String() string {
	return fmt.Sprintf("%d tunnels, %d hostname routes, %d VPC services, %d DNS records, %d CIDR routes; %d hostnames in tunnel configuration; duplicates: %v",
		l.Tunnels, l.Routes, l.Services, l.Records, l.CIDRRoutes, l.ConfigHostnames, l.Duplicates)
}

// Count tallies a simulator snapshot.
func Count(st sim.State) Live {
	var l Live
	seen := map[string]int{}
	hosts := map[string]bool{}
	for _, t := range st.Tunnels {
		if t.DeletedAt != nil {
			continue
		}
		l.Tunnels++
		seen["tunnel "+t.Name]++
		var cfg struct {
			Ingress []struct {
				Hostname string `json:"hostname"`
			} `json:"ingress"`
		}
		if json.Unmarshal([]byte(t.Config), &cfg) == nil {
			for _, r := range cfg.Ingress {
				if r.Hostname != "" {
					hosts[r.Hostname] = true
				}
			}
		}
	}
	for _, r := range st.HostnameRoutes {
		if r.DeletedAt == nil {
			l.Routes++
			seen["route "+r.Hostname]++
		}
	}
	for _, s := range st.Services {
		l.Services++
		seen["service "+s.Name]++
	}
	for _, r := range st.DNSRecords {
		l.Records++
		seen["record "+r.Type+" "+r.Name]++
	}
	for _, c := range st.CIDRRoutes {
		if c.DeletedAt == nil {
			l.CIDRRoutes++
		}
	}
	for _, k := range slices.Sorted(maps.Keys(seen)) {
		if seen[k] > 1 {
			l.Duplicates = append(l.Duplicates, fmt.Sprintf("%s ×%d", k, seen[k]))
		}
	}
	l.ConfigHostnames = len(hosts)
	return l
}

// Minimum is the fewest Cloudflare requests the scenario can be done with.
type Minimum struct {
	Creates       int // one per Cloudflare object: N routes + N services + N records
	TunnelCreate  int // 1
	Token         int // 1: the run token for the cloudflared Secret
	ZoneList      int // 1: resolving example.com's zone ID for all records
	ConfigWrites  int // one per batch of rules written to the tunnel's configuration
	Total         int
	Deletes       int // teardown: N routes + N services + N records + 1 tunnel
	ConfigBatches int
}

// MinimumRequests is the request floor for one tunnel and n public Ingresses
// with one host and one VPC service each, with the rules of all Ingresses
// written to the tunnel's configuration in `batches` writes (1 at best: one
// write carrying every rule). Nothing is read back: every observation a
// controller makes is overhead.
func MinimumRequests(n, batches int) Minimum {
	m := Minimum{Creates: 3 * n, TunnelCreate: 1, Token: 1, ZoneList: 1, ConfigWrites: batches, Deletes: 3*n + 1, ConfigBatches: batches}
	m.Total = m.Creates + m.TunnelCreate + m.Token + m.ZoneList + m.ConfigWrites
	return m
}

// CPUTime is the user and system CPU time this process has used
// (getrusage(RUSAGE_SELF)): the provider's controllers, but also the
// benchmark's own client and the simulator; envtest's kube-apiserver and
// etcd are child processes and not included.
func CPUTime() (user, sys time.Duration) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}

// Mem is a memory reading of this process.
type Mem struct {
	HeapInuse, Sys uint64
}

// MB renders bytes as mebibytes.
func MB(b uint64) float64 { return float64(b) / (1 << 20) }

// MemSampler reads runtime.MemStats at an interval and keeps the peaks, of
// the whole run and of the current phase.
type MemSampler struct {
	mu          sync.Mutex
	peak, phase Mem
	stop        chan struct{}
	done        chan struct{}
}

// StartMemSampler samples now and then every interval until Stop.
func StartMemSampler(interval time.Duration) *MemSampler {
	s := &MemSampler{stop: make(chan struct{}), done: make(chan struct{})}
	s.sample()
	go func() {
		defer close(s.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
				s.sample()
			}
		}
	}()
	return s
}

func (s *MemSampler) sample() {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	s.mu.Lock()
	for _, p := range []*Mem{&s.peak, &s.phase} {
		p.HeapInuse = max(p.HeapInuse, ms.HeapInuse)
		p.Sys = max(p.Sys, ms.Sys)
	}
	s.mu.Unlock()
}

// Peak returns the highest readings since the start.
func (s *MemSampler) Peak() Mem {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peak
}

// Phase returns the highest readings of the current phase and starts a new
// one.
func (s *MemSampler) Phase() Mem {
	s.sample()
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.phase
	s.phase = Mem{}
	return p
}

// Stop ends sampling and returns the peaks.
func (s *MemSampler) Stop() Mem {
	close(s.stop)
	<-s.done
	s.sample()
	return s.Peak()
}

// Now reads the current memory use.
func Now() Mem {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return Mem{HeapInuse: ms.HeapInuse, Sys: ms.Sys}
}

// Budget is what the provider's request budget (internal/clients/cloudflare/
// budget) reports through its Prometheus metrics.
type Budget struct {
	Requests    uint64  // requests that went through the budget (the wait histogram's count)
	WaitSeconds float64 // time they spent waiting for it, summed
	RateLimited float64 // 429s the provider saw
}

// Sub returns b minus before.
func (b Budget) Sub(before Budget) Budget {
	return Budget{Requests: b.Requests - before.Requests, WaitSeconds: b.WaitSeconds - before.WaitSeconds, RateLimited: b.RateLimited - before.RateLimited}
}

// ReadBudget gathers the budget's metrics from controller-runtime's registry,
// where the budget package registers them. Missing metrics read as zero.
func ReadBudget() Budget {
	var b Budget
	mfs, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		return b
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			switch mf.GetName() {
			case "cloudflare_budget_wait_seconds":
				b.Requests += m.GetHistogram().GetSampleCount()
				b.WaitSeconds += m.GetHistogram().GetSampleSum()
			case "cloudflare_rate_limited_total":
				b.RateLimited += m.GetCounter().GetValue()
			}
		}
	}
	return b
}
