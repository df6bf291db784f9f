// Package bench holds the helpers of the scale benchmark (bench_test.go):
// counting what the Cloudflare simulator holds and was asked, the request
// floors of the scenario and the time the request budget needs for them,
// the provider process's memory and CPU from /proc, the spread of the
// Ingresses' times to Ready, and the provider's budget metrics. The
// benchmark itself runs with `make bench`; see docs/benchmarks.md.
package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

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
	// AccessApps and AccessPolicies: Cloudflare Access applications and
	// reusable policies.
	AccessApps, AccessPolicies int
	// Duplicates lists names (tunnel names, route hostnames, service names,
	// record names) held by more than one live object.
	Duplicates []string
	// ConfigHostnames is the number of distinct hostnames in the remote
	// configurations of the live tunnels; AccessProtected, those of them
	// whose every rule requires an Access token.
	ConfigHostnames, AccessProtected int
}

// Leftovers is the number of live objects of any kind.
func (l Live) Leftovers() int {
	return l.Tunnels + l.Routes + l.Services + l.Records + l.CIDRRoutes + l.AccessApps + l.AccessPolicies
}

func (l Live) String() string {
	return fmt.Sprintf("%d tunnels, %d hostname routes, %d VPC services, %d DNS records, %d CIDR routes, %d Access applications, %d Access policies; %d hostnames in tunnel configuration; duplicates: %v",
		l.Tunnels, l.Routes, l.Services, l.Records, l.CIDRRoutes, l.AccessApps, l.AccessPolicies, l.ConfigHostnames, l.Duplicates)
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
				Hostname      string `json:"hostname"`
				OriginRequest struct {
					Access *struct {
						Required bool     `json:"required"`
						AudTag   []string `json:"audTag"`
					} `json:"access"`
				} `json:"originRequest"`
			} `json:"ingress"`
		}
		if json.Unmarshal([]byte(t.Config), &cfg) == nil {
			for _, r := range cfg.Ingress {
				if r.Hostname == "" {
					continue
				}
				a := r.OriginRequest.Access
				checked := a != nil && a.Required && len(a.AudTag) > 0
				was, seen := hosts[r.Hostname]
				hosts[r.Hostname] = checked && (was || !seen)
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
	for _, a := range st.Access.Applications {
		l.AccessApps++
		seen["access application "+a.Domain]++
	}
	l.AccessPolicies = len(st.Access.Policies)
	for _, k := range slices.Sorted(maps.Keys(seen)) {
		if seen[k] > 1 {
			l.Duplicates = append(l.Duplicates, fmt.Sprintf("%s ×%d", k, seen[k]))
		}
	}
	l.ConfigHostnames = len(hosts)
	for _, checked := range hosts {
		if checked {
			l.AccessProtected++
		}
	}
	return l
}

// DefaultDNSBatchSize is the most records one DNS batch request of a free
// Cloudflare zone carries (POST /zones/{zone_id}/dns_records/batch).
const DefaultDNSBatchSize = 200

// Minimum is the fewest Cloudflare requests a phase of the scenario (one
// tunnel, n public Ingresses with one host and one VPC service each) can be
// done with. Nothing is read back: every observation a controller makes is
// overhead.
type Minimum struct {
	Routes   int // n hostname routes
	Services int // n VPC services
	DNS      int // ⌈n / batch size⌉ DNS requests: n when each record is its own request
	// Tunnel is 1: the tunnel's create, or its delete. The create's answer
	// carries the token cloudflared runs with, so the token costs no
	// request of its own.
	Tunnel       int
	ZoneList     int // 1 on creation: resolving example.com's zone ID for all records
	ConfigWrites int // writes of the tunnel's configuration (rules added, or removed)
	// Access: an Access application per protected hostname and a policy
	// per shared policy, created or deleted; on creation also one read of
	// the account's Access organization (its team domain).
	Access int
	Total  int
}

// WithAccess adds to a creation floor the Access applications of apps
// protected hostnames, the policies they share and one read of the Access
// organization: what protecting them costs at the least.
func (m Minimum) WithAccess(apps, policies int) Minimum {
	if apps+policies == 0 {
		return m
	}
	m.Access = apps + policies + 1
	m.Total += m.Access
	return m
}

// WithAccessDeletion adds to a teardown floor the deletes of apps
// applications and policies policies.
func (m Minimum) WithAccessDeletion(apps, policies int) Minimum {
	m.Access = apps + policies
	m.Total += m.Access
	return m
}

// DNSRequests is the fewest requests that write n DNS records batchSize at
// a time; batchSize < 2 is one request per record.
func DNSRequests(n, batchSize int) int {
	if n <= 0 {
		return 0
	}
	if batchSize < 2 {
		return n
	}
	return (n + batchSize - 1) / batchSize
}

// MinimumRequests is the floor until Ready: 2n route and service creates,
// the DNS records in batches of batchSize (1: one request per record), the
// tunnel, one zone list and configWrites configuration writes
// (at least one: a single write carrying every rule).
func MinimumRequests(n, batchSize, configWrites int) Minimum {
	m := Minimum{Routes: n, Services: n, DNS: DNSRequests(n, batchSize), Tunnel: 1, ZoneList: 1, ConfigWrites: max(configWrites, 1)}
	m.Total = m.Routes + m.Services + m.DNS + m.Tunnel + m.ZoneList + m.ConfigWrites
	return m
}

// DeletionMinimum is the floor of the teardown: 2n route and service
// deletes, the records' deletes in batches of batchSize, configWrites
// writes taking the rules out of the tunnel's configuration (the Ingresses
// go before the tunnel, so their rules must; at least one) and the
// tunnel's delete.
func DeletionMinimum(n, batchSize, configWrites int) Minimum {
	m := Minimum{Routes: n, Services: n, DNS: DNSRequests(n, batchSize), Tunnel: 1, ConfigWrites: max(configWrites, 1)}
	m.Total = m.Routes + m.Services + m.DNS + m.Tunnel + m.ConfigWrites
	return m
}

// BudgetTime is the time a token bucket of rate requests per second and
// burst requests needs to let requests through, starting full.
func BudgetTime(requests int, rate float64, burst int) time.Duration {
	if rate <= 0 {
		return 0
	}
	return time.Duration(float64(max(requests-burst, 0)) / rate * float64(time.Second))
}

// Spread summarises durations (times to Ready from the run's start).
type Spread struct {
	N                        int
	First, Median, P95, Last time.Duration
}

// SpreadOf is the spread of ds (in any order; ds is not changed), the
// percentiles by nearest rank: the median is the ⌈n/2⌉-th smallest, the
// 95th percentile the ⌈0.95 n⌉-th.
func SpreadOf(ds []time.Duration) Spread {
	if len(ds) == 0 {
		return Spread{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := func(p float64) time.Duration {
		i := int(math.Ceil(p*float64(len(s)))) - 1
		return s[min(max(i, 0), len(s)-1)]
	}
	return Spread{N: len(s), First: s[0], Median: rank(0.5), P95: rank(0.95), Last: s[len(s)-1]}
}

// ClockTick is the unit of the CPU times in /proc/<pid>/stat (USER_HZ,
// 100 on Linux).
const ClockTick = 10 * time.Millisecond

// Proc is one reading of a process's /proc files.
type Proc struct {
	// PeakRSS is VmHWM: the highest resident set since the process started
	// or since ResetPeak.
	PeakRSS uint64
	// RSS is VmRSS: the resident set now.
	RSS uint64
	// User and Sys are the CPU time the process has used (utime, stime).
	User, Sys time.Duration
}

// CPU is the user plus system CPU time.
func (p Proc) CPU() time.Duration { return p.User + p.Sys }

// ReadProc reads /proc/<pid>/status and /proc/<pid>/stat.
func ReadProc(pid int) (Proc, error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Proc{}, errors.Wrap(err, "cannot read the process status")
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return Proc{}, errors.Wrap(err, "cannot read the process stat")
	}
	var p Proc
	if p.PeakRSS, p.RSS, err = ParseStatus(string(status)); err != nil {
		return Proc{}, err
	}
	if p.User, p.Sys, err = ParseStat(string(stat)); err != nil {
		return Proc{}, err
	}
	return p, nil
}

// ParseStatus reads VmHWM and VmRSS, in bytes, from a /proc/<pid>/status.
func ParseStatus(status string) (hwm, rss uint64, err error) {
	found := 0
	for line := range strings.Lines(status) {
		key, val, ok := strings.Cut(line, ":")
		if !ok || (key != "VmHWM" && key != "VmRSS") {
			continue
		}
		f := strings.Fields(val)
		if len(f) != 2 || f[1] != "kB" {
			return 0, 0, errors.Errorf("cannot parse %s: %q", key, strings.TrimSpace(val))
		}
		kb, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			return 0, 0, errors.Wrapf(err, "cannot parse %s", key)
		}
		if key == "VmHWM" {
			hwm = kb << 10
		} else {
			rss = kb << 10
		}
		found++
	}
	if found != 2 {
		return 0, 0, errors.New("no VmHWM and VmRSS in the process status")
	}
	return hwm, rss, nil
}

// ParseStat reads utime and stime from a /proc/<pid>/stat line. The
// command name (field 2) is in parentheses and may hold spaces and
// parentheses itself, so fields are counted after its last ')'.
func ParseStat(stat string) (user, sys time.Duration, err error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, 0, errors.New("cannot parse the process stat: no command name")
	}
	// After the name: state (field 3) ... utime (14), stime (15).
	f := strings.Fields(stat[i+1:])
	if len(f) < 13 {
		return 0, 0, errors.New("cannot parse the process stat: too few fields")
	}
	u, err := strconv.ParseUint(f[11], 10, 64)
	if err != nil {
		return 0, 0, errors.Wrap(err, "cannot parse utime")
	}
	s, err := strconv.ParseUint(f[12], 10, 64)
	if err != nil {
		return 0, 0, errors.Wrap(err, "cannot parse stime")
	}
	return time.Duration(u) * ClockTick, time.Duration(s) * ClockTick, nil
}

// ResetPeak sets the process's VmHWM back to its VmRSS (writing 5 to
// /proc/<pid>/clear_refs, Linux 4.0 and later), so the next reading's peak
// is that of what followed.
func ResetPeak(pid int) error {
	return errors.Wrap(os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0), "cannot reset the peak RSS")
}

// PhaseUsage is what a process used during one phase.
type PhaseUsage struct {
	// PeakRSS is the phase's highest resident set: VmHWM since the phase
	// began when it could be reset then, else the highest VmRSS sampled.
	PeakRSS uint64
	// RSS is the resident set at the phase's end.
	RSS uint64
	// CPU is the user and system time used in the phase.
	User, Sys time.Duration
	// PeakExact says PeakRSS is the kernel's VmHWM, not a sample.
	PeakExact bool
}

// CPU is the user plus system CPU time.
func (u PhaseUsage) CPU() time.Duration { return u.User + u.Sys }

// ProcSampler follows one process through the phases of a run: at each
// phase's end it reads the process's CPU time and peak RSS and resets the
// peak, and in between it samples VmRSS every interval (the peak when the
// kernel's cannot be reset).
type ProcSampler struct {
	pid  int
	mu   sync.Mutex
	last Proc
	// sampled is the highest VmRSS sampled in the current phase.
	sampled uint64
	exact   bool
	stop    chan struct{}
	done    chan struct{}
}

// StartProcSampler starts a phase now and samples pid every interval until
// Stop.
func StartProcSampler(pid int, interval time.Duration) (*ProcSampler, error) {
	p, err := ReadProc(pid)
	if err != nil {
		return nil, err
	}
	s := &ProcSampler{pid: pid, last: p, sampled: p.RSS, exact: ResetPeak(pid) == nil, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
				if p, err := ReadProc(pid); err == nil {
					s.mu.Lock()
					s.sampled = max(s.sampled, p.RSS)
					s.mu.Unlock()
				}
			}
		}
	}()
	return s, nil
}

// Phase ends the current phase, returns what the process used in it, and
// starts the next.
func (s *ProcSampler) Phase() (PhaseUsage, error) {
	p, err := ReadProc(s.pid)
	if err != nil {
		return PhaseUsage{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	u := PhaseUsage{RSS: p.RSS, User: p.User - s.last.User, Sys: p.Sys - s.last.Sys, PeakRSS: max(s.sampled, p.RSS), PeakExact: s.exact}
	if s.exact {
		u.PeakRSS = max(u.PeakRSS, p.PeakRSS)
	}
	s.last, s.sampled = p, p.RSS
	s.exact = ResetPeak(s.pid) == nil
	return u, nil
}

// Stop ends sampling.
func (s *ProcSampler) Stop() {
	close(s.stop)
	<-s.done
}

// MB renders bytes as mebibytes.
func MB(b uint64) float64 { return float64(b) / (1 << 20) }

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

// ParseBudget reads the budget's metrics from a Prometheus text exposition
// (the provider's /metrics). Missing metrics read as zero.
func ParseBudget(r io.Reader) (Budget, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(r)
	if err != nil {
		return Budget{}, errors.Wrap(err, "cannot parse the provider's metrics")
	}
	var b Budget
	if mf, ok := mfs["cloudflare_budget_wait_seconds"]; ok {
		for _, m := range mf.GetMetric() {
			b.Requests += m.GetHistogram().GetSampleCount()
			b.WaitSeconds += m.GetHistogram().GetSampleSum()
		}
	}
	if mf, ok := mfs["cloudflare_rate_limited_total"]; ok {
		for _, m := range mf.GetMetric() {
			b.RateLimited += m.GetCounter().GetValue()
		}
	}
	return b, nil
}

// Presence says which of one hostname's Cloudflare objects the account
// holds: its hostname route, the VPC service of that name, its rule in a
// live tunnel's configuration, and its DNS record.
type Presence struct {
	Route, Service, Rule, Record bool
}

// PresenceOf reads a simulator snapshot for one hostname and VPC service.
func PresenceOf(st sim.State, hostname, service string) Presence {
	var p Presence
	for _, r := range st.HostnameRoutes {
		p.Route = p.Route || (r.DeletedAt == nil && r.Hostname == hostname)
	}
	for _, s := range st.Services {
		p.Service = p.Service || s.Name == service
	}
	for _, r := range st.DNSRecords {
		p.Record = p.Record || r.Name == hostname
	}
	for _, t := range st.Tunnels {
		if t.DeletedAt != nil {
			continue
		}
		var cfg struct {
			Ingress []struct {
				Hostname string `json:"hostname"`
			} `json:"ingress"`
		}
		if json.Unmarshal([]byte(t.Config), &cfg) == nil {
			for _, r := range cfg.Ingress {
				p.Rule = p.Rule || r.Hostname == hostname
			}
		}
	}
	return p
}

// Hop is one step of a single change, and when each of the changes reached
// it (counted from the change; missing when it was not seen).
type Hop struct {
	Name  string
	Times []time.Duration
}

// HopSpread is a hop's median and 95th percentile (nearest rank) over the
// changes that reached it, and how many did.
func (h Hop) Spread() Spread { return SpreadOf(h.Times) }

// Work is what one controller's queue and reconciles reported through
// controller-runtime's metrics: how long items waited in its queue before a
// worker took them, and how long its reconciles ran.
type Work struct {
	Dequeued         uint64  // items a worker took (workqueue_queue_duration_seconds' count)
	QueueSeconds     float64 // their time in the queue, summed
	Reconciles       uint64  // controller_runtime_reconcile_time_seconds' count
	ReconcileSeconds float64 // their time, summed
}

// MeanQueue is the mean time an item waited in the queue.
func (w Work) MeanQueue() time.Duration { return mean(w.QueueSeconds, w.Dequeued) }

// MeanReconcile is the mean time of one reconcile.
func (w Work) MeanReconcile() time.Duration { return mean(w.ReconcileSeconds, w.Reconciles) }

func mean(sum float64, n uint64) time.Duration {
	if n == 0 {
		return 0
	}
	return time.Duration(math.Round(sum / float64(n) * float64(time.Second)))
}

// Works are the controllers' Work, by controller name.
type Works map[string]Work

// Sub returns w minus before, controller by controller; controllers with
// nothing in between are left out.
func (w Works) Sub(before Works) Works {
	out := Works{}
	for name, now := range w {
		b := before[name]
		d := Work{
			Dequeued: now.Dequeued - b.Dequeued, QueueSeconds: now.QueueSeconds - b.QueueSeconds,
			Reconciles: now.Reconciles - b.Reconciles, ReconcileSeconds: now.ReconcileSeconds - b.ReconcileSeconds,
		}
		if d.Dequeued > 0 || d.Reconciles > 0 {
			out[name] = d
		}
	}
	return out
}

// Add returns w plus more, controller by controller.
func (w Works) Add(more Works) Works {
	out := Works{}
	for name, a := range w {
		out[name] = a
	}
	for name, m := range more {
		a := out[name]
		out[name] = Work{
			Dequeued: a.Dequeued + m.Dequeued, QueueSeconds: a.QueueSeconds + m.QueueSeconds,
			Reconciles: a.Reconciles + m.Reconciles, ReconcileSeconds: a.ReconcileSeconds + m.ReconcileSeconds,
		}
	}
	return out
}

// ParseWork reads the controllers' queue and reconcile metrics from a
// Prometheus text exposition. A workqueue is named by its controller label,
// or by its name label when it has none.
func ParseWork(r io.Reader) (Works, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, errors.Wrap(err, "cannot parse the provider's metrics")
	}
	out := Works{}
	for _, m := range mfs["workqueue_queue_duration_seconds"].GetMetric() {
		name := label(m, "controller", "name")
		w := out[name]
		w.Dequeued += m.GetHistogram().GetSampleCount()
		w.QueueSeconds += m.GetHistogram().GetSampleSum()
		out[name] = w
	}
	for _, m := range mfs["controller_runtime_reconcile_time_seconds"].GetMetric() {
		name := label(m, "controller")
		w := out[name]
		w.Reconciles += m.GetHistogram().GetSampleCount()
		w.ReconcileSeconds += m.GetHistogram().GetSampleSum()
		out[name] = w
	}
	return out, nil
}

// label is the value of the first of names that m carries.
func label(m *dto.Metric, names ...string) string {
	for _, n := range names {
		for _, l := range m.GetLabel() {
			if l.GetName() == n && l.GetValue() != "" {
				return l.GetValue()
			}
		}
	}
	return ""
}
