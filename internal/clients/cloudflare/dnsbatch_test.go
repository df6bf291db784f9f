package cloudflare

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare/budget"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim/contract"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

// fakeSender answers batches from a function and records what was sent.
type fakeSender struct {
	mu      sync.Mutex
	batches []DNSBatch
	singles []string
	answer  func(DNSBatch) (*DNSBatchResult, error)
	one     func(name string) error
}

func (f *fakeSender) BatchDNSRecords(_ context.Context, _ string, b DNSBatch) (*DNSBatchResult, error) {
	f.mu.Lock()
	f.batches = append(f.batches, b)
	f.mu.Unlock()
	return f.answer(b)
}

func (f *fakeSender) single(name string) error {
	f.mu.Lock()
	f.singles = append(f.singles, name)
	f.mu.Unlock()
	if f.one != nil {
		return f.one(name)
	}
	return nil
}

func (f *fakeSender) CreateDNSRecord(_ context.Context, _ string, r DNSRecord) (*DNSRecord, error) {
	if err := f.single(r.Name); err != nil {
		return nil, err
	}
	r.ID = "id-" + r.Name
	return &r, nil
}

func (f *fakeSender) UpdateDNSRecord(_ context.Context, _, id string, r DNSRecord) (*DNSRecord, error) {
	r.ID = id
	return &r, f.single(r.Name)
}

func (f *fakeSender) DeleteDNSRecord(_ context.Context, _, id string) error { return f.single(id) }

// echo answers a batch as Cloudflare would, creates in reverse order so a
// match by position would go wrong.
func echo(b DNSBatch) (*DNSBatchResult, error) {
	res := &DNSBatchResult{}
	for _, id := range b.Deletes {
		res.Deletes = append(res.Deletes, DNSRecord{ID: id})
	}
	res.Puts = append(res.Puts, b.Puts...)
	for _, r := range slices.Backward(b.Posts) {
		r.ID = "id-" + r.Name
		r.Name += "." // Cloudflare's own spelling of the name
		res.Posts = append(res.Posts, r)
	}
	return res, nil
}

func record(name string) DNSRecord {
	return DNSRecord{Name: name, Type: "CNAME", Content: "t.cfargotunnel.com", Comment: "marker of " + name}
}

// createAll creates records concurrently through one batcher and returns
// each record's outcome by name.
func createAll(b *dnsBatcher, s sender, names []string) map[string]string {
	var mu sync.Mutex
	out := map[string]string{}
	var wg sync.WaitGroup
	for _, n := range names {
		wg.Go(func() {
			got, err := b.do(context.Background(), s, "zone", &dnsOp{kind: opPost, rec: record(n)})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				out[n] = "error: " + err.Error()
			default:
				out[n] = got.ID
			}
		})
	}
	wg.Wait()
	return out
}

func names(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%02d.example.com", prefix, i)
	}
	return out
}

func TestDNSBatcher(t *testing.T) {
	badRecord := &APIError{Operation: "batch", Status: http.StatusBadRequest, Codes: []int{CodeDNSHostConflict}, Messages: []string{"An A, AAAA, or CNAME record with that host already exists."}}
	rateLimited := &APIError{Operation: "batch", Status: http.StatusTooManyRequests, Codes: []int{CodeRateLimited}, Messages: []string{"Please wait"}}
	cases := map[string]struct {
		size        int
		window      time.Duration // 0: a second
		records     []string
		answer      func(DNSBatch) (*DNSBatchResult, error)
		one         func(string) error
		want        map[string]string
		wantBatches []int // operations per batch, in order sent
		// Which half of a split batch holds the bad record depends on the
		// order the writers reached the batcher, which the scheduler picks
		// (under -race and load, a05 landed in the first half 9 times in
		// 40): the sizes are compared whatever their order.
		anyHalfFirst bool
		wantSingles  int
	}{
		"WritesWithinTheWindowShareOneBatch": {
			records: names("a", 20), answer: echo,
			want:        ids(names("a", 20)),
			wantBatches: []int{20},
		},
		"AFullBatchGoesAtOnceAndTheRestFollows": {
			// Full batches go at once whatever the window; the last four
			// wait a large change's sixty windows.
			size: 8, window: 100 * time.Millisecond, records: names("a", 20), answer: echo,
			want:        ids(names("a", 20)),
			wantBatches: []int{8, 8, 4},
		},
		"OneBadRecordGetsItsErrorAndTheOthersAreWritten": {
			records: names("a", 8),
			answer: func(b DNSBatch) (*DNSBatchResult, error) {
				for _, r := range b.Posts {
					if r.Name == "a05.example.com" {
						return nil, badRecord
					}
				}
				return echo(b)
			},
			one: func(n string) error {
				if n == "a05.example.com" {
					return badRecord
				}
				return nil
			},
			want: func() map[string]string {
				m := ids(names("a", 8))
				m["a05.example.com"] = "error: " + badRecord.Error()
				return m
			}(),
			// 8 fails; the half without a05 passes; the half with it fails;
			// of that, the pair with a05 fails and splits into singles and
			// the other pair passes.
			wantBatches:  []int{8, 4, 4, 2, 2},
			anyHalfFirst: true,
			wantSingles:  2,
		},
		"AFailureThatBlamesNoRecordIsEveryones": {
			records: names("a", 4),
			answer:  func(DNSBatch) (*DNSBatchResult, error) { return nil, rateLimited },
			want: map[string]string{
				"a00.example.com": "error: " + rateLimited.Error(), "a01.example.com": "error: " + rateLimited.Error(),
				"a02.example.com": "error: " + rateLimited.Error(), "a03.example.com": "error: " + rateLimited.Error(),
			},
			wantBatches: []int{4},
		},
		"ARecordMissingFromTheAnswerHasAnUnknownOutcome": {
			records: names("a", 2),
			answer: func(b DNSBatch) (*DNSBatchResult, error) {
				res, _ := echo(b)
				res.Posts = slices.DeleteFunc(res.Posts, func(r DNSRecord) bool { return r.Name == "a00.example.com." })
				return res, nil
			},
			want: map[string]string{
				"a00.example.com": "error: " + errNotInBatchAnswer.Error(),
				"a01.example.com": "id-a01.example.com",
			},
			wantBatches: []int{2},
		},
		"ABatchOfOneIsThePlainCall": {
			records: names("a", 1), answer: echo,
			want:        ids(names("a", 1)),
			wantSingles: 1,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := &fakeSender{answer: tc.answer, one: tc.one}
			// A window long against starting twenty goroutines on a busy
			// machine: at 100 ms one of them came late in CI's load.
			window := tc.window
			if window == 0 {
				window = time.Second
			}
			b := newDNSBatcher(DNSBatching{Window: window, Size: tc.size}, nil)
			got := createAll(b, s, tc.records)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("outcomes (-want +got):\n%s", diff)
			}
			var sizes []int
			for _, sent := range s.batches {
				sizes = append(sizes, sent.Len())
			}
			want := tc.wantBatches
			if tc.anyHalfFirst {
				want, sizes = slices.Sorted(slices.Values(want)), slices.Sorted(slices.Values(sizes))
			}
			if diff := cmp.Diff(want, sizes); diff != "" {
				t.Errorf("batch sizes (-want +got):\n%s", diff)
			}
			if len(s.singles) != tc.wantSingles {
				t.Errorf("%d single calls (%v), want %d", len(s.singles), s.singles, tc.wantSingles)
			}
		})
	}
}

func ids(names []string) map[string]string {
	m := map[string]string{}
	for _, n := range names {
		m[n] = "id-" + n
	}
	return m
}

// TestDNSBatcherJoinsARetriedCreate: a reconcile that gave up waiting and
// retries the same create while the first is still queued must not send
// it twice.
func TestDNSBatcherJoinsARetriedCreate(t *testing.T) {
	s := &fakeSender{answer: echo}
	b := newDNSBatcher(DNSBatching{Window: 200 * time.Millisecond}, nil)
	gaveUp, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := b.do(gaveUp, s, "zone", &dnsOp{kind: opPost, rec: record("a")}); err == nil {
		t.Fatal("a caller whose context is done: got no error")
	}
	got, err := b.do(context.Background(), s, "zone", &dnsOp{kind: opPost, rec: record("a")})
	if err != nil || got.ID != "id-a" {
		t.Fatalf("retried create: %v, %v", got, err)
	}
	if len(s.batches) != 0 || !cmp.Equal(s.singles, []string{"a"}) {
		t.Errorf("sent batches %v and singles %v, want the one create once", s.batches, s.singles)
	}
}

// batchingFixture is a simulator and a cached client that batches DNS
// writes, checked against the OpenAPI document.
func batchingFixture(t *testing.T, ttl time.Duration) (*fixture, *CachedClient) {
	f := newFixture(t, sim.Options{}, 0)
	return f, NewCached(clients.Config{Token: testToken, AccountID: testAccount, Endpoint: f.srv.URL + "/client/v4/"}, Options{
		Budgets:        budget.NewRegistry(budget.Options{Limit: 100000}),
		Transport:      contract.NewTransport(t, http.DefaultTransport),
		DNSBatching:    DNSBatching{Window: 200 * time.Millisecond},
		ObservationTTL: ttl,
	})
}

// TestBatchedRecordWrites runs the batcher through the cached client against
// the simulator, held to Cloudflare's OpenAPI document.
func TestBatchedRecordWrites(t *testing.T) {
	ctx := context.Background()
	f, c := batchingFixture(t, 0)
	zone := sim.ZoneID("example.com")
	// One record stands in the way of a03: its create must fail alone.
	must(f.client.CreateDNSRecord(ctx, zone, DNSRecord{Name: "a03.example.com", Type: "A", Content: "192.0.2.1"}))
	f.sim.ResetStats()

	all := names("a", 10)
	var mu sync.Mutex
	created, failed := map[string]string{}, map[string]error{}
	var wg sync.WaitGroup
	for _, n := range all {
		wg.Go(func() {
			r, err := c.CreateDNSRecord(ctx, zone, record(n))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed[n] = err
				return
			}
			created[n] = r.ID
		})
	}
	wg.Wait()
	if len(failed) != 1 || !IsConflict(failed["a03.example.com"]) {
		t.Fatalf("failures %v, want only a03's conflict", failed)
	}
	// Every other record exists, with the ID its caller was given.
	for _, n := range all {
		if n == "a03.example.com" {
			continue
		}
		rs := must(f.client.ListDNSRecords(ctx, zone, DNSRecordFilter{Name: n}))
		if len(rs) != 1 || rs[0].ID != created[n] || rs[0].Comment != "marker of "+n {
			t.Errorf("%s: Cloudflare has %+v, caller was given %q", n, rs, created[n])
		}
	}
	// 10 fails on a03; 5 (a00-a04) fails, 5 passes; 2 passes; 3 (a02-a04)
	// fails; a02 alone passes; 2 (a03, a04) fails; a03 and a04 alone.
	st := f.sim.Stats()
	if b, one := st["dns_records.batch"].Requests, st["dns_records.create"].Requests; b+one > 10 {
		t.Errorf("%d batches and %d single creates for 10 records", b, one)
	}

	// Deletes share a batch too, and the snapshot forgets them.
	f.sim.ResetStats()
	for _, n := range all {
		if id := created[n]; id != "" {
			wg.Go(func() {
				if err := c.DeleteDNSRecord(ctx, zone, id); err != nil {
					t.Error(err)
				}
			})
		}
	}
	wg.Wait()
	if n := f.sim.Stats()["dns_records.batch"].Requests; n != 1 {
		t.Errorf("9 deletes took %d batches, want 1", n)
	}
	if left := must(c.ListDNSRecords(ctx, zone, DNSRecordFilter{Type: "CNAME"})); len(left) != 0 {
		t.Errorf("left after deleting: %+v", left)
	}
}

// TestLostBatchResponse: a batch that happened but whose answer was lost
// fails every write in it, and the snapshot is listed again, so a caller
// looking for its record by marker finds it instead of creating another.
func TestLostBatchResponse(t *testing.T) {
	ctx := context.Background()
	f, c := batchingFixture(t, time.Hour)
	zone := sim.ZoneID("example.com")
	must(c.ListDNSRecords(ctx, zone, DNSRecordFilter{})) // fills the snapshot
	f.sim.LoseNext("dns_records.batch", 1)
	var wg sync.WaitGroup
	for _, n := range names("a", 3) {
		wg.Go(func() {
			if _, err := c.CreateDNSRecord(ctx, zone, record(n)); err == nil {
				t.Errorf("%s: a lost response reported success", n)
			}
		})
	}
	wg.Wait()
	for _, n := range names("a", 3) {
		if rs := must(c.ListDNSRecords(ctx, zone, DNSRecordFilter{Name: n})); len(rs) != 1 || rs[0].Comment != "marker of "+n {
			t.Errorf("%s after the lost response: the cached client sees %+v, want the record that was written", n, rs)
		}
	}
}

// TestDNSBatcherBusyZoneWaitsLonger: a zone that just sent a batch holds the
// next one for five windows, so writes that trickle in during a large change
// share a batch, while a lone write waits only one window.
func TestDNSBatcherBusyZoneWaitsLonger(t *testing.T) {
	s := &fakeSender{answer: echo}
	b := newDNSBatcher(DNSBatching{Window: 100 * time.Millisecond}, nil)
	create := func(n string) {
		if _, err := b.do(context.Background(), s, "zone", &dnsOp{kind: opPost, rec: record(n)}); err != nil {
			t.Error(err)
		}
	}
	create("lone") // idle zone: out after one window, alone
	var wg sync.WaitGroup
	wg.Go(func() { create("second") })
	time.Sleep(200 * time.Millisecond) // two windows later: would be its own batch
	wg.Go(func() { create("third") })
	wg.Wait()
	if !cmp.Equal(s.singles, []string{"lone"}) || len(s.batches) != 1 || s.batches[0].Len() != 2 {
		t.Errorf("singles %v, batches %v; want the lone write alone and the next two together", s.singles, s.batches)
	}
}

func TestDNSBatchWindowFor(t *testing.T) {
	o := DNSBatching{Window: time.Second, Size: 200}
	cases := map[string]struct {
		sinceLast   time.Duration
		largeChange bool
		want        time.Duration
	}{
		"NeverSent":                {sinceLast: time.Since(time.Time{}), want: time.Second},
		"Idle":                     {sinceLast: 6 * time.Second, want: time.Second},
		"Busy":                     {sinceLast: 4 * time.Second, want: 5 * time.Second},
		"LargeChange":              {sinceLast: 4 * time.Second, largeChange: true, want: 60 * time.Second},
		"LargeChangeAWhileAgo":     {sinceLast: 19 * time.Second, largeChange: true, want: 60 * time.Second},
		"LargeChangeAfterALull":    {sinceLast: 21 * time.Second, largeChange: true, want: time.Second},
		"BusyEndsAfterFiveWindows": {sinceLast: 5 * time.Second, want: time.Second},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := o.windowFor(tc.sinceLast, tc.largeChange); got != tc.want {
				t.Errorf("windowFor(%v, %v): got %v, want %v", tc.sinceLast, tc.largeChange, got, tc.want)
			}
		})
	}
}

// TestDNSBatchLargeChange: a large batch starts a large change; the small
// batches within it (a tail, or a batch sent because every writer waited)
// do not end it; only a lull does.
func TestDNSBatchLargeChange(t *testing.T) {
	o := DNSBatching{Window: time.Second, Size: 200}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	z := &zoneBatch{}
	steps := []struct {
		at         time.Duration // when the batch opens; it is sent a second later
		size       int
		wantWindow time.Duration
	}{
		{at: 0, size: 3, wantWindow: time.Second},                              // idle zone
		{at: 2 * time.Second, size: 19, wantWindow: 5 * time.Second},           // busy, still small
		{at: 4 * time.Second, size: 20, wantWindow: 5 * time.Second},           // the first large batch
		{at: 6 * time.Second, size: 4, wantWindow: 60 * time.Second},           // in the change: small, cut short
		{at: 8 * time.Second, size: 150, wantWindow: 60 * time.Second},         // the small batch did not end it
		{at: 8*time.Second + 30*time.Second, size: 1, wantWindow: time.Second}, // after a lull: a new change
	}
	for i, st := range steps {
		if got := z.open(o, t0.Add(st.at)); got != st.wantWindow {
			t.Errorf("step %d: window %v, want %v", i, got, st.wantWindow)
		}
		z.sentBatch(o, st.size, t0.Add(st.at+time.Second))
	}
	// A small batch size still needs two writes to call a change large.
	small, zs := DNSBatching{Window: time.Second, Size: 5}, &zoneBatch{}
	zs.sentBatch(small, 1, t0)
	if got := zs.open(small, t0.Add(time.Second)); got != 5*time.Second {
		t.Errorf("after a batch of one: window %v, want the busy zone's 5s", got)
	}
}

// TestDNSBatcherSendsWhenEveryWriterWaits: batches wait for their window
// while a writer is free to join them, and go out at once, each with its
// own account's client, when every writer of the process waits.
func TestDNSBatcherSendsWhenEveryWriterWaits(t *testing.T) {
	o := DNSBatching{Window: time.Hour, Writers: 3}
	w := &dnsWaiters{}
	first, second := newDNSBatcher(o, w), newDNSBatcher(o, w) // two accounts
	s1, s2 := &fakeSender{answer: echo}, &fakeSender{answer: echo}
	create := func(b *dnsBatcher, s sender, zone, n string) {
		if _, err := b.do(context.Background(), s, zone, &dnsOp{kind: opPost, rec: record(n)}); err != nil {
			t.Error(err)
		}
	}
	var wg sync.WaitGroup
	wg.Go(func() { create(first, s1, "zone-a", "a1") })
	wg.Go(func() { create(first, s1, "zone-b", "b1") })
	wait.Eventually(t, 10*time.Second, "both writers waiting", func() error {
		if n := w.add(0); n < 2 {
			return fmt.Errorf("%d waiting", n)
		}
		return nil
	})
	time.Sleep(100 * time.Millisecond) // a batch sent early would be out by then
	s1.mu.Lock()
	sent := len(s1.singles) + len(s1.batches)
	s1.mu.Unlock()
	if w.add(0) != 2 || sent != 0 {
		t.Fatalf("with a writer free: %d waiting, sent %v %v; want 2 waiting, nothing sent", w.add(0), s1.singles, s2.singles)
	}
	done := make(chan struct{})
	go func() {
		create(second, s2, "zone-c", "c1")
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("every writer waits, yet the batches were held for their window")
	}
	slices.Sort(s1.singles)
	if !cmp.Equal(s1.singles, []string{"a1", "b1"}) || !cmp.Equal(s2.singles, []string{"c1"}) {
		t.Errorf("first account's client sent %v, second's %v; want each account's own writes", s1.singles, s2.singles)
	}
	if n := w.add(0); n != 0 {
		t.Errorf("%d writers still counted as waiting", n)
	}
}
