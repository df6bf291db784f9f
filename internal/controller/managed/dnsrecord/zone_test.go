package dnsrecord

import (
	"bytes"
	"context"
	"fmt"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/test"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/dns/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

var (
	zCom    = cloudflare.Zone{ID: "11111111111111111111111111111111", Name: "example.com"}
	zDevCom = cloudflare.Zone{ID: "22222222222222222222222222222222", Name: "dev.example.com"}
	zOrg    = cloudflare.Zone{ID: "33333333333333333333333333333333", Name: "example.org"}
	account = []cloudflare.Zone{zCom, zDevCom, zOrg}
)

func TestInZone(t *testing.T) {
	cases := map[string]struct {
		name, zone string
		want       bool
	}{
		"Apex":               {name: "example.com", zone: "example.com", want: true},
		"Subdomain":          {name: "app.example.com", zone: "example.com", want: true},
		"Deep":               {name: "a.b.c.example.com", zone: "example.com", want: true},
		"CaseAndDot":         {name: "App.Example.COM.", zone: "example.com", want: true},
		"NotOnLabelBoundary": {name: "badexample.com", zone: "example.com", want: false},
		"OtherZone":          {name: "app.example.org", zone: "example.com", want: false},
		"ZoneIsLonger":       {name: "example.com", zone: "dev.example.com", want: false},
		"EmptyZone":          {name: "example.com", zone: "", want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := inZone(tc.name, tc.zone); got != tc.want {
				t.Errorf("inZone(%q, %q) = %v, want %v", tc.name, tc.zone, got, tc.want)
			}
		})
	}
}

func TestLongestSuffixZone(t *testing.T) {
	cases := map[string]struct {
		name   string
		zones  []cloudflare.Zone
		want   cloudflare.Zone
		wantOK bool
	}{
		"Apex":                   {name: "example.com", zones: account, want: zCom, wantOK: true},
		"Child":                  {name: "app.example.com", zones: account, want: zCom, wantOK: true},
		"MoreSpecificZoneWins":   {name: "app.dev.example.com", zones: account, want: zDevCom, wantOK: true},
		"MoreSpecificZoneApex":   {name: "dev.example.com", zones: account, want: zDevCom, wantOK: true},
		"OrderDoesNotMatter":     {name: "app.dev.example.com", zones: []cloudflare.Zone{zDevCom, zCom}, want: zDevCom, wantOK: true},
		"LabelBoundary":          {name: "badexample.com", zones: account},
		"LabelBoundaryInSubzone": {name: "x.notdev.example.com", zones: account, want: zCom, wantOK: true},
		"CaseInsensitive":        {name: "APP.Example.Org.", zones: account, want: zOrg, wantOK: true},
		"NoMatch":                {name: "app.example.net", zones: account},
		"NoZones":                {name: "app.example.com"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok := longestSuffixZone(tc.name, tc.zones)
			if ok != tc.wantOK || got != tc.want {
				t.Errorf("longestSuffixZone(%q) = %+v, %v; want %+v, %v", tc.name, got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

func TestStatusZoneStillDesired(t *testing.T) {
	at := v1alpha1.DNSRecordObservation{ZoneID: zCom.ID, ZoneName: "example.com", Name: "app.example.com"}
	cases := map[string]struct {
		p    v1alpha1.DNSRecordParameters
		at   v1alpha1.DNSRecordObservation
		want bool
	}{
		"NoStatus":               {p: v1alpha1.DNSRecordParameters{Name: "app.example.com"}},
		"SuffixSameName":         {p: v1alpha1.DNSRecordParameters{Name: "App.example.com."}, at: at, want: true},
		"SuffixRenamed":          {p: v1alpha1.DNSRecordParameters{Name: "app.dev.example.com"}, at: at},
		"ZoneNameSame":           {p: v1alpha1.DNSRecordParameters{Name: "other.example.com", ZoneName: ptr.To("Example.com")}, at: at, want: true},
		"ZoneNameChanged":        {p: v1alpha1.DNSRecordParameters{Name: "app.dev.example.com", ZoneName: ptr.To("dev.example.com")}, at: at},
		"ZoneIDSame":             {p: v1alpha1.DNSRecordParameters{Name: "app.example.com", ZoneID: ptr.To(zCom.ID)}, at: at, want: true},
		"ZoneIDChanged":          {p: v1alpha1.DNSRecordParameters{Name: "app.example.com", ZoneID: ptr.To(zOrg.ID)}, at: at},
		"ZoneIDNameLeftTheZone":  {p: v1alpha1.DNSRecordParameters{Name: "app.example.org", ZoneID: ptr.To(zCom.ID)}, at: at},
		"ZoneIDWithoutKnownName": {p: v1alpha1.DNSRecordParameters{Name: "app.example.org", ZoneID: ptr.To(zCom.ID)}, at: v1alpha1.DNSRecordObservation{ZoneID: zCom.ID}, want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := statusZoneStillDesired(tc.p, tc.at); got != tc.want {
				t.Errorf("statusZoneStillDesired() = %v, want %v", got, tc.want)
			}
		})
	}
}

// fakeZones is a ZonesAPI over a fixed zone list that counts its calls.
type fakeZones struct {
	zones []cloudflare.Zone
	err   error
	calls []string // the name filter of each call
}

func (f *fakeZones) ListZones(_ context.Context, name string) ([]cloudflare.Zone, error) {
	f.calls = append(f.calls, name)
	if f.err != nil {
		return nil, f.err
	}
	var out []cloudflare.Zone
	for _, z := range f.zones {
		if name == "" || strings.EqualFold(z.Name, name) {
			out = append(out, z)
		}
	}
	return out, nil
}

func TestResolveZone(t *testing.T) {
	errBoom := errors.New("boom")
	cases := map[string]struct {
		p         v1alpha1.DNSRecordParameters
		api       *fakeZones
		want      zoneRef
		wantErr   error
		wantCalls []string
	}{
		"BySuffix": {
			p:         v1alpha1.DNSRecordParameters{Name: "app.example.com"},
			api:       &fakeZones{zones: account},
			want:      zoneRef{ID: zCom.ID, Name: "example.com"},
			wantCalls: []string{""},
		},
		"BySuffixLongest": {
			p:         v1alpha1.DNSRecordParameters{Name: "app.dev.example.com"},
			api:       &fakeZones{zones: account},
			want:      zoneRef{ID: zDevCom.ID, Name: "dev.example.com"},
			wantCalls: []string{""},
		},
		"BySuffixNoMatch": {
			p:   v1alpha1.DNSRecordParameters{Name: "app.example.net"},
			api: &fakeZones{zones: account},
			// The miss relists once: the cached list was fetched just now,
			// so it is not refreshed again.
			wantErr:   &errNoZone{msg: "no zone in the account matches app.example.net", hint: "set zoneId or zoneName"},
			wantCalls: []string{""},
		},
		"BySuffixListFails": {
			p:         v1alpha1.DNSRecordParameters{Name: "app.example.com"},
			api:       &fakeZones{err: errBoom},
			wantErr:   errors.Wrap(errBoom, "cannot list zones"),
			wantCalls: []string{""},
		},
		"ByName": {
			p:         v1alpha1.DNSRecordParameters{Name: "app.dev.example.com", ZoneName: ptr.To("example.com")},
			api:       &fakeZones{zones: account},
			want:      zoneRef{ID: zCom.ID, Name: "example.com"},
			wantCalls: []string{"example.com"},
		},
		"ByNameUnknown": {
			p:         v1alpha1.DNSRecordParameters{Name: "app.example.net", ZoneName: ptr.To("example.net")},
			api:       &fakeZones{zones: account},
			wantErr:   &errNoZone{msg: "no zone named example.net in the account"},
			wantCalls: []string{"example.net"},
		},
		"ByNameRecordOutsideZone": {
			p:         v1alpha1.DNSRecordParameters{Name: "app.example.org", ZoneName: ptr.To("example.com")},
			api:       &fakeZones{zones: account},
			wantErr:   &errNoZone{msg: "record name app.example.org is not in zone example.com"},
			wantCalls: []string{"example.com"},
		},
		"ByID": {
			p:         v1alpha1.DNSRecordParameters{Name: "app.example.org", ZoneID: ptr.To(zOrg.ID)},
			api:       &fakeZones{zones: account},
			want:      zoneRef{ID: zOrg.ID, Name: "example.org"},
			wantCalls: []string{""},
		},
		"ByIDNotListable": {
			// The name is only a nicety: a token that cannot list zones
			// still gets the zone it named.
			p:         v1alpha1.DNSRecordParameters{Name: "app.example.org", ZoneID: ptr.To(zOrg.ID)},
			api:       &fakeZones{err: errBoom},
			want:      zoneRef{ID: zOrg.ID},
			wantCalls: []string{""},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := newZoneCache(time.Now)
			got, err := c.resolveZone(context.Background(), tc.api, "acct", tc.p)
			if diff := cmp.Diff(tc.wantErr, err, test.EquateErrors()); diff != "" {
				t.Errorf("error: -want +got:\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(zoneRef{})); diff != "" {
				t.Errorf("zone: -want +got:\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantCalls, tc.api.calls); diff != "" {
				t.Errorf("ListZones calls: -want +got:\n%s", diff)
			}
		})
	}
}

// TestZoneCache: zones are looked up once per account, not per reconcile;
// a miss relists at most every zoneMissRefresh; entries expire.
func TestZoneCache(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1_700_000_000, 0)
	c := newZoneCache(func() time.Time { return now })
	api := &fakeZones{zones: []cloudflare.Zone{zCom}}
	resolve := func(p v1alpha1.DNSRecordParameters) (zoneRef, error) {
		t.Helper()
		return c.resolveZone(ctx, api, "acct", p)
	}
	byName := v1alpha1.DNSRecordParameters{Name: "a.example.com", ZoneName: ptr.To("example.com")}
	bySuffix := v1alpha1.DNSRecordParameters{Name: "a.dev.example.com"}

	for range 3 {
		if _, err := resolve(bySuffix); err != nil {
			t.Fatal(err)
		}
		if _, err := resolve(byName); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff([]string{""}, api.calls); diff != "" {
		t.Fatalf("one listing serves every lookup: -want +got:\n%s", diff)
	}

	// Another account has its own cache entries.
	if _, err := c.resolveZone(ctx, api, "other", byName); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"", "example.com"}, api.calls); diff != "" {
		t.Fatalf("per-account cache: -want +got:\n%s", diff)
	}

	// A more specific zone added later is not seen while the list is fresh
	// (the record name still matches example.com)…
	api.zones = append(api.zones, zDevCom)
	api.calls = nil
	now = now.Add(time.Minute)
	if z, _ := resolve(bySuffix); z.ID != zCom.ID || len(api.calls) != 0 {
		t.Fatalf("fresh cache: got %+v after calls %v", z, api.calls)
	}
	// …but after the TTL it is.
	now = now.Add(zoneCacheTTL)
	if z, _ := resolve(bySuffix); z.ID != zDevCom.ID || len(api.calls) != 1 {
		t.Fatalf("expired cache: got %+v after calls %v", z, api.calls)
	}

	// A name no zone matches relists once, then not again until
	// zoneMissRefresh has passed.
	api.calls = nil
	miss := v1alpha1.DNSRecordParameters{Name: "a.example.net"}
	now = now.Add(zoneMissRefresh)
	for range 3 {
		if _, err := resolve(miss); !isNoZone(err) {
			t.Fatalf("want a no-zone error, got %v", err)
		}
	}
	if len(api.calls) != 1 {
		t.Fatalf("misses listed %d times, want 1", len(api.calls))
	}
	api.zones = append(api.zones, cloudflare.Zone{ID: "44444444444444444444444444444444", Name: "example.net"})
	now = now.Add(zoneMissRefresh)
	if z, err := resolve(miss); err != nil || z.Name != "example.net" {
		t.Fatalf("a zone added later is found after zoneMissRefresh: %+v, %v", z, err)
	}
}

// blockingZones holds every ListZones call until released, counting them.
type blockingZones struct {
	zones   []cloudflare.Zone
	release chan struct{}
	calls   atomic.Int32
}

func (b *blockingZones) ListZones(context.Context, string) ([]cloudflare.Zone, error) {
	b.calls.Add(1)
	<-b.release
	return b.zones, nil
}

// TestZoneCacheSharesConcurrentListings: records created together resolve
// their zone with one listing, not one each.
func TestZoneCacheSharesConcurrentListings(t *testing.T) {
	c := newZoneCache(time.Now)
	api := &blockingZones{zones: []cloudflare.Zone{zCom}, release: make(chan struct{})}
	const records = 50
	var wg sync.WaitGroup
	errs := make(chan error, records)
	for i := range records {
		wg.Add(1)
		go func() {
			defer wg.Done()
			z, err := c.resolveZone(context.Background(), api, "acct", v1alpha1.DNSRecordParameters{Name: fmt.Sprintf("r%d.example.com", i)})
			if err == nil && z.ID != zCom.ID {
				err = fmt.Errorf("resolved %+v, want %s", z, zCom.ID)
			}
			errs <- err
		}()
	}
	// Let every caller reach the listing in flight before it answers.
	wait.Eventually(t, 5*time.Second, "every caller in the shared listing", func() error {
		if n := inSharedCall(); n < records {
			return fmt.Errorf("%d callers in it", n)
		}
		return nil
	})
	close(api.release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := api.calls.Load(); n != 1 {
		t.Errorf("%d concurrent zone resolutions made %d listings, want 1", records, n)
	}
}

// inSharedCall counts the goroutines inside a singleflight call: the one
// making it and those waiting for its answer.
func inSharedCall() int {
	var stacks bytes.Buffer
	_ = pprof.Lookup("goroutine").WriteTo(&stacks, 2)
	return strings.Count(stacks.String(), "singleflight.(*Group).Do(")
}
