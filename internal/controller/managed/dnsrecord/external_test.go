package dnsrecord

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/test"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/dns/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/mr"
)

// fakeRecords is a DNSRecordsAPI over a slice of records. It only serves
// what the external client's safety-critical paths need; the real behaviour
// is exercised against the simulator in dnsrecord_test.go.
type fakeRecords struct {
	records []cloudflare.DNSRecord
	// snapshot, when set, is what ListDNSRecords serves: a cached list
	// from before the latest writes. ListDNSRecordsSince always sees
	// records, and keeps the time it was asked for in since.
	snapshot  *[]cloudflare.DNSRecord
	since     time.Time
	createErr error
	// replaceErr fails ReplaceDNSRecord.
	replaceErr error
	writes     []string
}

var errNotFound = &cloudflare.APIError{Operation: "cannot get DNS record", Status: 404, Codes: []int{cloudflare.CodeDNSRecordNotFound}, Messages: []string{"Record does not exist."}}

func (f *fakeRecords) CreateDNSRecord(_ context.Context, _ string, r cloudflare.DNSRecord) (*cloudflare.DNSRecord, error) {
	f.writes = append(f.writes, "create")
	if f.createErr != nil {
		return nil, f.createErr
	}
	r.ID = "new"
	f.records = append(f.records, r)
	return &r, nil
}

func (f *fakeRecords) GetDNSRecord(_ context.Context, _, id string) (*cloudflare.DNSRecord, error) {
	for _, r := range f.records {
		if r.ID == id {
			return &r, nil
		}
	}
	return nil, errNotFound
}

func (f *fakeRecords) ListDNSRecords(_ context.Context, _ string, flt cloudflare.DNSRecordFilter) ([]cloudflare.DNSRecord, error) {
	if f.snapshot != nil {
		return named(*f.snapshot, flt.Name), nil
	}
	return named(f.records, flt.Name), nil
}

func (f *fakeRecords) ListDNSRecordsSince(_ context.Context, _ string, flt cloudflare.DNSRecordFilter, t time.Time) ([]cloudflare.DNSRecord, error) {
	f.since = t
	return named(f.records, flt.Name), nil
}

func named(records []cloudflare.DNSRecord, name string) []cloudflare.DNSRecord {
	var out []cloudflare.DNSRecord
	for _, r := range records {
		if strings.EqualFold(r.Name, name) {
			out = append(out, r)
		}
	}
	return out
}

func (f *fakeRecords) UpdateDNSRecord(_ context.Context, _, id string, r cloudflare.DNSRecord) (*cloudflare.DNSRecord, error) {
	f.writes = append(f.writes, "update "+id)
	r.ID = id
	return &r, nil
}

// ReplaceDNSRecord deletes id and creates r as "replacement".
func (f *fakeRecords) ReplaceDNSRecord(_ context.Context, _, id string, r cloudflare.DNSRecord) (*cloudflare.DNSRecord, error) {
	f.writes = append(f.writes, "replace "+id)
	if f.replaceErr != nil {
		return nil, f.replaceErr
	}
	r.ID = "replacement"
	return &r, nil
}

func (f *fakeRecords) DeleteDNSRecord(context.Context, string, string) error {
	f.writes = append(f.writes, "delete")
	return errors.New("unexpected")
}

func newCR(externalName string, deleted bool) *v1alpha1.DNSRecord {
	cr := &v1alpha1.DNSRecord{
		ObjectMeta: metav1.ObjectMeta{UID: uid, Name: "app"},
		Spec:       v1alpha1.DNSRecordSpec{ForProvider: spec()},
	}
	if externalName != "" {
		meta.SetExternalName(cr, externalName)
	}
	if deleted {
		cr.SetDeletionTimestamp(&metav1.Time{Time: time.Now()})
	}
	return cr
}

// pendingCR is a DNSRecord whose create was sent and whose outcome was
// never recorded (the process stopped, or the answer was lost).
func pendingCR() *v1alpha1.DNSRecord {
	cr := newCR("", false)
	meta.SetExternalCreatePending(cr, pendingAt)
	return cr
}

var pendingAt = time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)

// TestLostCreateIsLookedForAfterIt: the list that decides whether a create
// of unknown outcome happened is sent when the question is asked, not served
// from a snapshot that may be older than the create.
func TestLostCreateIsLookedForAfterIt(t *testing.T) {
	f := &fakeRecords{snapshot: &[]cloudflare.DNSRecord{}}
	asked := time.Now()
	if _, err := newExternal(f).Observe(context.Background(), pendingCR()); err != nil {
		t.Fatal(err)
	}
	if f.since.Before(asked) {
		t.Errorf("listed since %v, before the question was asked (%v)", f.since, asked)
	}
	settled := pendingCR()
	meta.SetExternalCreateSucceeded(settled, pendingAt.Add(time.Second))
	f.since = time.Time{}
	if _, err := newExternal(f).Observe(context.Background(), settled); err != nil {
		t.Fatal(err)
	}
	if !f.since.IsZero() {
		t.Errorf("a settled create listed since %v: the snapshot serves it", f.since)
	}
}

func newExternal(f *fakeRecords) *external {
	return &external{records: f, zones: &fakeZones{zones: account}, cache: newZoneCache(time.Now), accountID: "acct", conn: mr.Connection{Config: clients.Config{Owner: testOwner}}}
}

func TestObserve(t *testing.T) {
	foreign := *record(func(r *cloudflare.DNSRecord) { r.ID, r.Content, r.Comment = "f1", "legacy.example.net", "by hand" })
	ours := *record(func(r *cloudflare.DNSRecord) { r.ID = "m1" })

	type want struct {
		obs          managed.ExternalObservation
		err          error
		externalName string
	}
	cases := map[string]struct {
		records  []cloudflare.DNSRecord
		snapshot *[]cloudflare.DNSRecord
		cr       *v1alpha1.DNSRecord
		want     want
	}{
		"NothingThere": {
			cr: newCR("", false),
		},
		"ForeignRecordIsAConflict": {
			records: []cloudflare.DNSRecord{foreign},
			cr:      newCR("", false),
			want:    want{err: conflict(importIt)},
		},
		"ForeignRecordOfAnotherTypeIsNoConflict": {
			records: []cloudflare.DNSRecord{*record(func(r *cloudflare.DNSRecord) { r.ID, r.Type, r.Content, r.Comment = "t1", "TXT", "hello", "" })},
			cr:      newCR("", false),
		},
		"OursIsAdopted": {
			records: []cloudflare.DNSRecord{foreign, ours},
			cr:      newCR("", false),
			want: want{
				obs:          managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true, ResourceLateInitialized: true},
				externalName: "m1",
			},
		},
		"ExternalNameGone": {
			// Deleted behind our back: recreate only if nothing is in the way.
			records: []cloudflare.DNSRecord{foreign},
			cr:      newCR("gone", false),
			want: want{
				err:          conflict("the external-name gone names no record in that zone; to manage this one instead, set its ID as crossplane.io/external-name"),
				externalName: "gone",
			},
		},
		"ImportedRecord": {
			records: []cloudflare.DNSRecord{foreign},
			cr:      newCR("f1", false),
			want: want{
				obs: managed.ExternalObservation{ResourceExists: true, Diff: `content: "legacy.example.net" in Cloudflare, "` + target + `" desired
comment: "by hand" in Cloudflare, "web" desired
ownership marker: "" in Cloudflare, "` + string(mark) + `" desired`},
				externalName: "f1",
			},
		},
		"ACreateOfUnknownOutcomeIsLookedForInAListSentAfterIt": {
			// The cached list is from before the create: only a newer one
			// can show the record it made (TestLostCreateIsLookedForAfterIt).
			snapshot: &[]cloudflare.DNSRecord{foreign},
			records:  []cloudflare.DNSRecord{foreign, ours},
			cr:       pendingCR(),
			want: want{
				obs:          managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true, ResourceLateInitialized: true},
				externalName: "m1",
			},
		},
		"DeletingIgnoresForeignRecords": {
			records: []cloudflare.DNSRecord{foreign},
			cr:      newCR("", true),
		},
		"DeletingFindsOurLostRecord": {
			records: []cloudflare.DNSRecord{foreign, ours},
			cr:      newCR("", true),
			want: want{
				obs:          managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true, ResourceLateInitialized: true},
				externalName: "m1",
			},
		},
		"DeletingGoneRecord": {
			records: []cloudflare.DNSRecord{ours},
			cr:      newCR("gone", true),
			want:    want{externalName: "gone"},
		},
		"DeletingWithoutZone": {
			cr: func() *v1alpha1.DNSRecord {
				cr := newCR("", true)
				cr.Spec.ForProvider.Name = "app.example.net"
				return cr
			}(),
		},
		"NoZone": {
			cr: func() *v1alpha1.DNSRecord {
				cr := newCR("", false)
				cr.Spec.ForProvider.Name = "app.example.net"
				return cr
			}(),
			want: want{err: errors.Wrap(&errNoZone{msg: "no zone in the account matches app.example.net; set zoneId or zoneName"}, "cannot resolve the record's zone")},
		},
		"NoZoneForAPublicHostname": {
			// Its author (of a Service, an Ingress) never wrote the
			// DNSRecord: the advice names where the name comes from.
			cr: func() *v1alpha1.DNSRecord {
				cr := newCR("", false)
				cr.Spec.ForProvider.Name = "app.example.net"
				cr.OwnerReferences = []metav1.OwnerReference{{Kind: "PublicHostname", Name: "web-svc-host-1", Controller: ptr.To(true)}}
				return cr
			}(),
			want: want{err: errors.Wrap(errors.New("no zone in the account matches app.example.net; the record's name is PublicHostname web-svc-host-1's hostname: use another hostname (its spec.hostname, or the tunnels.cloudflare.com/hostname annotation of the Service or Ingress that made it), or leave its DNS to someone else (spec.dns: None, or the tunnels.cloudflare.com/dns annotation)"), "cannot resolve the record's zone")},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := &fakeRecords{records: tc.records, snapshot: tc.snapshot}
			obs, err := newExternal(f).Observe(context.Background(), tc.cr)
			if diff := cmp.Diff(tc.want.err, err, test.EquateErrors()); diff != "" {
				t.Errorf("error: -want +got:\n%s", diff)
			}
			if diff := cmp.Diff(tc.want.obs, obs); diff != "" {
				t.Errorf("observation: -want +got:\n%s", diff)
			}
			if got := meta.GetExternalName(tc.cr); got != tc.want.externalName {
				t.Errorf("external-name %q, want %q", got, tc.want.externalName)
			}
			if len(f.writes) != 0 {
				t.Errorf("Observe wrote to Cloudflare: %v", f.writes)
			}
		})
	}
}

func TestCreate(t *testing.T) {
	exists := &cloudflare.APIError{Operation: "cannot create DNS record", Status: 400, Codes: []int{cloudflare.CodeDNSHostConflict}, Messages: []string{"An A, AAAA, or CNAME record with that host already exists."}}
	cases := map[string]struct {
		records      []cloudflare.DNSRecord
		createErr    error
		wantErr      error
		externalName string
	}{
		"Created": {externalName: "new"},
		"RaceWithOurOwnCreate": {
			records:      []cloudflare.DNSRecord{*record(func(r *cloudflare.DNSRecord) { r.ID = "m1" })},
			createErr:    exists,
			externalName: "m1",
		},
		"RaceWithSomeoneElse": {
			records:   []cloudflare.DNSRecord{*record(func(r *cloudflare.DNSRecord) { r.ID, r.Comment = "f1", "" })},
			createErr: exists,
			wantErr:   conflict(importIt),
		},
		"OtherFailure": {
			createErr: errNotFound,
			wantErr:   errors.Wrap(errNotFound, "cannot create DNS record"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := &fakeRecords{records: tc.records, createErr: tc.createErr}
			e := newExternal(f)
			e.zone = zoneRef{ID: zCom.ID, Name: "example.com"}
			cr := newCR("", false)
			_, err := e.Create(context.Background(), cr)
			if diff := cmp.Diff(tc.wantErr, err, test.EquateErrors()); diff != "" {
				t.Errorf("error: -want +got:\n%s", diff)
			}
			if got := meta.GetExternalName(cr); got != tc.externalName {
				t.Errorf("external-name %q, want %q", got, tc.externalName)
			}
		})
	}
}

// TestZoneOfRefusesMoves: once a record exists, a spec pointing at another
// zone is refused instead of leaking the old record and creating a new one,
// except when deleting, which happens where the record lives.
func TestZoneOfRefusesMoves(t *testing.T) {
	cr := newCR("m1", false)
	cr.Status.AtProvider = v1alpha1.DNSRecordObservation{ZoneID: zCom.ID, ZoneName: "example.com", Name: "app.example.com"}
	cr.Spec.ForProvider.Name = "app.dev.example.com"
	e := newExternal(&fakeRecords{})
	_, err := e.zoneOf(context.Background(), cr)
	want := errors.New("the record is in zone example.com but the spec now points to zone dev.example.com: records cannot move between zones; point the spec back at example.com, or delete this DNSRecord and create a new one")
	if diff := cmp.Diff(want, err, test.EquateErrors()); diff != "" {
		t.Errorf("error: -want +got:\n%s", diff)
	}
	cr.SetDeletionTimestamp(&metav1.Time{Time: time.Now()})
	if z, err := e.zoneOf(context.Background(), cr); err != nil || z.ID != zCom.ID {
		t.Errorf("deleting: zone %+v, error %v; want the recorded zone", z, err)
	}
}

// conflict is the error for the foreign record f1 of these tests, with the
// advice fix.
func conflict(fix string) error {
	return &ConflictError{Type: "CNAME", Name: "app.example.com", Zone: "example.com", ID: "f1", Owner: "it carries no ownership marker of this provider: it was made elsewhere (another tool, the dashboard, by hand)", Fix: fix}
}

const importIt = "import it by setting its ID as crossplane.io/external-name to manage it"
