package dnsrecord

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/test"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/dns/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
)

// TestUpdate: a record keeping its type is overwritten in place; one whose
// type changes is replaced (its delete and the new record's create in one
// transaction), never overwritten, and the replacement's ID is saved as the
// external-name at once. A record of the name that is not this resource's
// and would not fit beside the new type stops the change before any write.
func TestUpdate(t *testing.T) {
	ours := record(func(r *cloudflare.DNSRecord) { r.ID, r.Type, r.Content, r.Proxied = "m1", "A", "192.0.2.1", false })
	errBoom := errors.New("boom")
	type want struct {
		err          error
		writes       []string
		patched      bool
		externalName string
		atProviderID string
	}
	cases := map[string]struct {
		records    []cloudflare.DNSRecord
		observed   *cloudflare.DNSRecord
		spec       v1alpha1.DNSRecordParameters
		replaceErr error
		patchErr   error
		want       want
	}{
		"SameTypeIsOverwritten": {
			observed: ours,
			spec:     spec(func(p *v1alpha1.DNSRecordParameters) { p.Type, p.Content = "A", "192.0.2.2" }),
			want:     want{writes: []string{"update m1"}, externalName: "m1"},
		},
		"TheSameTypeInAnotherCaseIsOverwritten": {
			observed: ours,
			spec:     spec(func(p *v1alpha1.DNSRecordParameters) { p.Type, p.Content = "a", "192.0.2.2" }),
			want:     want{writes: []string{"update m1"}, externalName: "m1"},
		},
		"ANewTypeReplacesTheRecord": {
			records:  []cloudflare.DNSRecord{*ours},
			observed: ours,
			spec:     spec(),
			want:     want{writes: []string{"replace m1"}, patched: true, externalName: "replacement", atProviderID: "replacement"},
		},
		"OurOwnRecordsOfTheNameAreNoObstacle": {
			records:  []cloudflare.DNSRecord{*ours, *record(func(r *cloudflare.DNSRecord) { r.ID, r.Type, r.Content = "m2", "TXT", "hello" })},
			observed: ours,
			spec:     spec(),
			want:     want{writes: []string{"replace m1"}, patched: true, externalName: "replacement", atProviderID: "replacement"},
		},
		"SomeoneElsesRecordInTheWayStopsTheChange": {
			records:  []cloudflare.DNSRecord{*ours, *record(func(r *cloudflare.DNSRecord) { r.ID, r.Type, r.Content, r.Comment = "f1", "AAAA", "2001:db8::1", "" })},
			observed: ours,
			spec:     spec(),
			want: want{
				err: &ConflictError{Type: "AAAA", Name: "app.example.com", Zone: "example.com", ID: "f1", Owner: "it carries no ownership marker of this provider: it was made elsewhere (another tool, the dashboard, by hand)",
					Fix: "this resource's A record m1 is kept until a CNAME record fits beside the other records of the name: set spec.forProvider.type back, or have that record removed by whoever made it"},
				externalName: "m1",
			},
		},
		"ARefusedReplacementKeepsTheExternalName": {
			records:    []cloudflare.DNSRecord{*ours},
			observed:   ours,
			spec:       spec(),
			replaceErr: errBoom,
			want: want{
				err:          errors.Wrap(errBoom, "cannot change the record's type from A to CNAME (by deleting it and creating the new one in one batch)"),
				writes:       []string{"replace m1"},
				externalName: "m1",
			},
		},
		"AnUnsavedExternalNameIsReported": {
			records:  []cloudflare.DNSRecord{*ours},
			observed: ours,
			spec:     spec(),
			patchErr: errBoom,
			want: want{
				err:          errors.Wrap(errBoom, "the record's type was changed, but the new record's ID could not be saved as the external-name (the next reconcile finds the record by its ownership marker)"),
				writes:       []string{"replace m1"},
				patched:      true,
				externalName: "replacement",
				atProviderID: "replacement",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := &fakeRecords{records: tc.records, replaceErr: tc.replaceErr}
			patched := false
			kube := &test.MockClient{MockPatch: func(_ context.Context, obj client.Object, p client.Patch, _ ...client.PatchOption) error {
				patched = true
				if got := meta.GetExternalName(obj); got != "replacement" {
					t.Errorf("patched external-name %q, want replacement", got)
				}
				return tc.patchErr
			}}
			e := newExternal(f)
			e.conn.Kube = kube
			e.zone = zoneRef{ID: zCom.ID, Name: "example.com"}
			e.observed = tc.observed
			cr := newCR("m1", false)
			cr.Spec.ForProvider = tc.spec
			_, err := e.Update(context.Background(), cr)
			if diff := cmp.Diff(tc.want.err, err, test.EquateErrors()); diff != "" {
				t.Errorf("error: -want +got:\n%s", diff)
			}
			if diff := cmp.Diff(tc.want.writes, f.writes); diff != "" {
				t.Errorf("writes: -want +got:\n%s", diff)
			}
			if patched != tc.want.patched {
				t.Errorf("external-name patched: %t, want %t", patched, tc.want.patched)
			}
			if got := meta.GetExternalName(cr); got != tc.want.externalName {
				t.Errorf("external-name %q, want %q", got, tc.want.externalName)
			}
			if got := cr.Status.AtProvider.ID; got != tc.want.atProviderID {
				t.Errorf("status.atProvider.id %q, want %q", got, tc.want.atProviderID)
			}
		})
	}
}
