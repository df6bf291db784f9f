package bench

import (
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestDNSRequests(t *testing.T) {
	cases := map[string]struct {
		n, size, want int
	}{
		"no records":                 {n: 0, size: 200, want: 0},
		"one batch, partly filled":   {n: 50, size: 200, want: 1},
		"one batch, exactly full":    {n: 200, size: 200, want: 1},
		"one record over a batch":    {n: 201, size: 200, want: 2},
		"1,000 in free-zone batches": {n: 1000, size: 200, want: 5},
		"paid-plan batches":          {n: 1000, size: 3500, want: 1},
		"batching off":               {n: 1000, size: 1, want: 1000},
		"no batch size is off":       {n: 7, size: 0, want: 7},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := DNSRequests(tc.n, tc.size); got != tc.want {
				t.Errorf("DNSRequests(%d, %d) = %d, want %d", tc.n, tc.size, got, tc.want)
			}
		})
	}
}

func TestMinimumRequests(t *testing.T) {
	cases := map[string]struct {
		n, size, writes int
		want            Minimum
	}{
		"batched, one configuration write": {n: 1000, size: 200, writes: 1,
			want: Minimum{Routes: 1000, Services: 1000, DNS: 5, Tunnel: 1, ZoneList: 1, ConfigWrites: 1, Total: 2008}},
		"batching off: one request per record": {n: 1000, size: 1, writes: 1,
			want: Minimum{Routes: 1000, Services: 1000, DNS: 1000, Tunnel: 1, ZoneList: 1, ConfigWrites: 1, Total: 3003}},
		"measured configuration writes count": {n: 50, size: 200, writes: 4,
			want: Minimum{Routes: 50, Services: 50, DNS: 1, Tunnel: 1, ZoneList: 1, ConfigWrites: 4, Total: 107}},
		"at least one configuration write": {n: 10, size: 200, writes: 0,
			want: Minimum{Routes: 10, Services: 10, DNS: 1, Tunnel: 1, ZoneList: 1, ConfigWrites: 1, Total: 24}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, MinimumRequests(tc.n, tc.size, tc.writes)); diff != "" {
				t.Errorf("MinimumRequests(%d, %d, %d): -want +got:\n%s", tc.n, tc.size, tc.writes, diff)
			}
		})
	}
}

func TestMinimumWithAccess(t *testing.T) {
	base := MinimumRequests(1000, 200, 1)
	cases := map[string]struct {
		got, want Minimum
	}{
		"1,000 protected hostnames sharing 3 policies": {base.WithAccess(1000, 3),
			Minimum{Routes: 1000, Services: 1000, DNS: 5, Tunnel: 1, ZoneList: 1, ConfigWrites: 1, Access: 1004, Total: 3012}},
		"no Access": {base.WithAccess(0, 0), base},
		"their deletion": {DeletionMinimum(1000, 200, 1).WithAccessDeletion(1000, 3),
			Minimum{Routes: 1000, Services: 1000, DNS: 5, Tunnel: 1, ConfigWrites: 1, Access: 1003, Total: 3010}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.got); diff != "" {
				t.Errorf("-want +got:\n%s", diff)
			}
		})
	}
}

func TestDeletionMinimum(t *testing.T) {
	cases := map[string]struct {
		n, size, writes int
		want            Minimum
	}{
		"batched": {n: 1000, size: 200, writes: 1,
			want: Minimum{Routes: 1000, Services: 1000, DNS: 5, Tunnel: 1, ConfigWrites: 1, Total: 2007}},
		"batching off": {n: 1000, size: 1, writes: 3,
			want: Minimum{Routes: 1000, Services: 1000, DNS: 1000, Tunnel: 1, ConfigWrites: 3, Total: 3004}},
		"at least one configuration write": {n: 1, size: 200, writes: 0,
			want: Minimum{Routes: 1, Services: 1, DNS: 1, Tunnel: 1, ConfigWrites: 1, Total: 5}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, DeletionMinimum(tc.n, tc.size, tc.writes)); diff != "" {
				t.Errorf("DeletionMinimum(%d, %d, %d): -want +got:\n%s", tc.n, tc.size, tc.writes, diff)
			}
		})
	}
}

func TestBudgetTime(t *testing.T) {
	cases := map[string]struct {
		requests int
		rate     float64
		burst    int
		want     time.Duration
	}{
		"within the burst":   {requests: 10, rate: 3.2, burst: 10, want: 0},
		"past the burst":     {requests: 42, rate: 3.2, burst: 10, want: 10 * time.Second},
		"the default budget": {requests: 2009, rate: 3.2, burst: 10, want: time.Duration(1999 / 3.2 * float64(time.Second))},
		"no rate":            {requests: 100, rate: 0, burst: 10, want: 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := BudgetTime(tc.requests, tc.rate, tc.burst); got != tc.want {
				t.Errorf("BudgetTime(%d, %v, %d) = %s, want %s", tc.requests, tc.rate, tc.burst, got, tc.want)
			}
		})
	}
}

func secs(ns ...int) []time.Duration {
	out := make([]time.Duration, len(ns))
	for i, n := range ns {
		out[i] = time.Duration(n) * time.Second
	}
	return out
}

func TestSpreadOf(t *testing.T) {
	s := time.Second
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = 100 - i // 100..1, reversed
	}
	cases := map[string]struct {
		in   []time.Duration
		want Spread
	}{
		"none":   {in: nil, want: Spread{}},
		"one":    {in: secs(7), want: Spread{N: 1, First: 7 * s, Median: 7 * s, P95: 7 * s, Last: 7 * s}},
		"two":    {in: secs(9, 3), want: Spread{N: 2, First: 3 * s, Median: 3 * s, P95: 9 * s, Last: 9 * s}},
		"odd":    {in: secs(5, 1, 4, 2, 3), want: Spread{N: 5, First: 1 * s, Median: 3 * s, P95: 5 * s, Last: 5 * s}},
		"100":    {in: secs(hundred...), want: Spread{N: 100, First: 1 * s, Median: 50 * s, P95: 95 * s, Last: 100 * s}},
		"ties":   {in: secs(2, 2, 2, 8), want: Spread{N: 4, First: 2 * s, Median: 2 * s, P95: 8 * s, Last: 8 * s}},
		"a wave": {in: secs(1, 60, 60, 60, 61, 61, 61, 62, 62, 62), want: Spread{N: 10, First: 1 * s, Median: 61 * s, P95: 62 * s, Last: 62 * s}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			before := append([]time.Duration(nil), tc.in...)
			if diff := cmp.Diff(tc.want, SpreadOf(tc.in)); diff != "" {
				t.Errorf("SpreadOf(%v): -want +got:\n%s", tc.in, diff)
			}
			if diff := cmp.Diff(before, tc.in); diff != "" {
				t.Errorf("SpreadOf changed its input: -before +after:\n%s", diff)
			}
		})
	}
}

const status = `Name:	provider
Umask:	0022
State:	S (sleeping)
VmPeak:	 1942312 kB
VmSize:	 1942312 kB
VmHWM:	  172032 kB
VmRSS:	  150528 kB
RssAnon:	  120000 kB
Threads:	12
`

func TestParseStatus(t *testing.T) {
	cases := map[string]struct {
		in       string
		hwm, rss uint64
		wantErr  bool
	}{
		"a provider":                  {in: status, hwm: 172032 << 10, rss: 150528 << 10},
		"no VmHWM":                    {in: "Name:\tx\nVmRSS:\t 10 kB\n", wantErr: true},
		"not in kB":                   {in: "VmHWM:\t10 MB\nVmRSS:\t10 kB\n", wantErr: true},
		"not numeric":                 {in: "VmHWM:\tlots kB\nVmRSS:\t10 kB\n", wantErr: true},
		"a kernel thread has neither": {in: "Name:\tkthreadd\nState:\tS\n", wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			hwm, rss, err := ParseStatus(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("ParseStatus: error %v, want error %t", err, tc.wantErr)
			}
			if hwm != tc.hwm || rss != tc.rss {
				t.Errorf("ParseStatus = %d, %d; want %d, %d", hwm, rss, tc.hwm, tc.rss)
			}
		})
	}
}

func TestParseStat(t *testing.T) {
	cases := map[string]struct {
		in        string
		user, sys time.Duration
		wantErr   bool
	}{
		"a provider": {in: "4242 (provider) S 1 4242 4242 0 -1 4194560 9000 0 0 0 1234 567 0 0 20 0 12 0 81320 1988927488 37632 18446744073709551615\n",
			user: 12340 * time.Millisecond, sys: 5670 * time.Millisecond},
		"a name with spaces and parentheses": {in: "7 (a (b) c) R 1 7 7 0 -1 0 0 0 0 0 3 4 0 0 20 0 1 0 1 1 1\n",
			user: 30 * time.Millisecond, sys: 40 * time.Millisecond},
		"no name":            {in: "7 R 1 7 7", wantErr: true},
		"too few fields":     {in: "7 (x) R 1 7 7 0 -1 0 0 0 0 0 3", wantErr: true},
		"utime not a number": {in: "7 (x) R 1 7 7 0 -1 0 0 0 0 0 x 4 0", wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			user, sys, err := ParseStat(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("ParseStat: error %v, want error %t", err, tc.wantErr)
			}
			if user != tc.user || sys != tc.sys {
				t.Errorf("ParseStat = %s, %s; want %s, %s", user, sys, tc.user, tc.sys)
			}
		})
	}
}

// TestProcSampler reads this test process: the CPU it burns in a phase
// shows in that phase, and memory it touches shows in that phase's peak.
func TestProcSampler(t *testing.T) {
	s, err := StartProcSampler(os.Getpid(), 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	// Spin until the kernel has counted 150ms of this process's CPU (by
	// getrusage, not the sampler under test), however loaded the machine.
	spun := selfCPU(t)
	deadline := time.Now().Add(time.Minute)
	for x := 0; selfCPU(t)-spun < 150*time.Millisecond && time.Now().Before(deadline); x++ {
		_ = x * x
	}
	buf := make([]byte, 64<<20)
	for i := range buf {
		buf[i] = 1
	}
	u, err := s.Phase()
	if err != nil {
		t.Fatal(err)
	}
	if u.CPU() < 100*time.Millisecond {
		t.Errorf("phase CPU = %s after 150ms of CPU spent spinning, want at least 100ms", u.CPU())
	}
	if u.PeakRSS < 64<<20 || u.PeakRSS < u.RSS {
		t.Errorf("phase peak RSS = %.0f MiB (RSS %.0f MiB) after touching 64 MiB", MB(u.PeakRSS), MB(u.RSS))
	}
	_ = buf[len(buf)-1]
	idle, err := s.Phase()
	if err != nil {
		t.Fatal(err)
	}
	if idle.CPU() > u.CPU() {
		t.Errorf("an idle phase used %s CPU, more than the busy one's %s", idle.CPU(), u.CPU())
	}
}

func TestParseBudget(t *testing.T) {
	metrics := `# HELP cloudflare_budget_wait_seconds Time spent waiting.
# TYPE cloudflare_budget_wait_seconds histogram
cloudflare_budget_wait_seconds_bucket{token="a",le="1"} 3
cloudflare_budget_wait_seconds_bucket{token="a",le="+Inf"} 5
cloudflare_budget_wait_seconds_sum{token="a"} 12.5
cloudflare_budget_wait_seconds_count{token="a"} 5
cloudflare_budget_wait_seconds_bucket{token="b",le="1"} 1
cloudflare_budget_wait_seconds_bucket{token="b",le="+Inf"} 2
cloudflare_budget_wait_seconds_sum{token="b"} 0.5
cloudflare_budget_wait_seconds_count{token="b"} 2
# HELP cloudflare_rate_limited_total 429s.
# TYPE cloudflare_rate_limited_total counter
cloudflare_rate_limited_total{token="a"} 1
# TYPE go_goroutines gauge
go_goroutines 42
`
	got, err := ParseBudget(strings.NewReader(metrics))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Budget{Requests: 7, WaitSeconds: 13, RateLimited: 1}, got); diff != "" {
		t.Errorf("ParseBudget: -want +got:\n%s", diff)
	}
	if got, err := ParseBudget(strings.NewReader("go_goroutines 1\n")); err != nil || got != (Budget{}) {
		t.Errorf("ParseBudget without budget metrics = %+v, %v; want zero", got, err)
	}
	if _, err := ParseBudget(strings.NewReader("not{ metrics\n")); err == nil {
		t.Error("ParseBudget accepted a malformed exposition")
	}
}

func TestParseWork(t *testing.T) {
	metrics := `# TYPE workqueue_queue_duration_seconds histogram
workqueue_queue_duration_seconds_bucket{controller="publichostname",name="publichostname",le="+Inf"} 4
workqueue_queue_duration_seconds_sum{controller="publichostname",name="publichostname"} 2
workqueue_queue_duration_seconds_count{controller="publichostname",name="publichostname"} 4
workqueue_queue_duration_seconds_bucket{name="dns-batch",le="+Inf"} 1
workqueue_queue_duration_seconds_sum{name="dns-batch"} 0.5
workqueue_queue_duration_seconds_count{name="dns-batch"} 1
# TYPE controller_runtime_reconcile_time_seconds histogram
controller_runtime_reconcile_time_seconds_bucket{controller="publichostname",le="+Inf"} 3
controller_runtime_reconcile_time_seconds_sum{controller="publichostname"} 0.3
controller_runtime_reconcile_time_seconds_count{controller="publichostname"} 3
`
	got, err := ParseWork(strings.NewReader(metrics))
	if err != nil {
		t.Fatal(err)
	}
	want := Works{
		"publichostname": {Dequeued: 4, QueueSeconds: 2, Reconciles: 3, ReconcileSeconds: 0.3},
		"dns-batch":      {Dequeued: 1, QueueSeconds: 0.5},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParseWork: -want +got:\n%s", diff)
	}
	if w := got["publichostname"]; w.MeanQueue() != 500*time.Millisecond || w.MeanReconcile() != 100*time.Millisecond {
		t.Errorf("means = %s / %s; want 500ms / 100ms", w.MeanQueue(), w.MeanReconcile())
	}
	if (Work{}).MeanQueue() != 0 {
		t.Error("the mean of nothing is not zero")
	}
	later := Works{"publichostname": {Dequeued: 6, QueueSeconds: 3, Reconciles: 5, ReconcileSeconds: 0.5}, "dns-batch": {Dequeued: 1, QueueSeconds: 0.5}}
	delta := later.Sub(got)
	if diff := cmp.Diff(Works{"publichostname": {Dequeued: 2, QueueSeconds: 1, Reconciles: 2, ReconcileSeconds: 0.2}}, delta, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("Sub: -want +got:\n%s", diff)
	}
	if diff := cmp.Diff(later, got.Add(delta), cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("Add: -want +got:\n%s", diff)
	}
	if _, err := ParseWork(strings.NewReader("not{ metrics\n")); err == nil {
		t.Error("ParseWork accepted a malformed exposition")
	}
}

// selfCPU is the user and system CPU this process has used, as the kernel
// counts it.
func selfCPU(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
