package accessservicetoken

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/rotation"
)

var now = time.Date(2026, 12, 6, 2, 0, 0, 0, time.UTC)

func at(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(d)) }

// Change sends the duration only when it differs (a duration sent counts
// from now), and the name always with it.
func TestChange(t *testing.T) {
	cases := map[string]struct {
		spec   v1alpha1.AccessServiceTokenParameters
		got    cloudflare.ServiceToken
		want   cloudflare.ServiceTokenInput
		wantOK bool
	}{
		"UpToDate":       {spec: v1alpha1.AccessServiceTokenParameters{Name: "ci", Duration: "8760h"}, got: cloudflare.ServiceToken{Name: "ci", Duration: "8760h"}, want: cloudflare.ServiceTokenInput{Name: "ci"}},
		"LongFormIsSame": {spec: v1alpha1.AccessServiceTokenParameters{Name: "ci", Duration: "8760h"}, got: cloudflare.ServiceToken{Name: "ci", Duration: "8760h0m0s"}, want: cloudflare.ServiceTokenInput{Name: "ci"}},
		"DefaultIsAYear": {spec: v1alpha1.AccessServiceTokenParameters{Name: "ci"}, got: cloudflare.ServiceToken{Name: "ci", Duration: "8760h"}, want: cloudflare.ServiceTokenInput{Name: "ci"}},
		"NameDrifted":    {spec: v1alpha1.AccessServiceTokenParameters{Name: "ci", Duration: "8760h"}, got: cloudflare.ServiceToken{Name: "renamed", Duration: "8760h"}, want: cloudflare.ServiceTokenInput{Name: "ci"}, wantOK: true},
		"DurationDrifted": {
			spec: v1alpha1.AccessServiceTokenParameters{Name: "ci", Duration: "forever"}, got: cloudflare.ServiceToken{Name: "ci", Duration: "24h"},
			want: cloudflare.ServiceTokenInput{Name: "ci", Duration: "forever"}, wantOK: true,
		},
		"TurnedOffInCloudflare": {
			spec: v1alpha1.AccessServiceTokenParameters{Name: "ci", Duration: "8760h"}, got: cloudflare.ServiceToken{Name: "ci", Duration: "8760h", Enabled: ptr.To(false)},
			want: cloudflare.ServiceTokenInput{Name: "ci", Enabled: ptr.To(true)}, wantOK: true,
		},
		"AskedOff": {
			spec: v1alpha1.AccessServiceTokenParameters{Name: "ci", Duration: "8760h", Enabled: ptr.To(false)}, got: cloudflare.ServiceToken{Name: "ci", Duration: "8760h", Enabled: ptr.To(true)},
			want: cloudflare.ServiceTokenInput{Name: "ci", Enabled: ptr.To(false)}, wantOK: true,
		},
		"OffAsAsked": {
			spec: v1alpha1.AccessServiceTokenParameters{Name: "ci", Duration: "8760h", Enabled: ptr.To(false)}, got: cloudflare.ServiceToken{Name: "ci", Duration: "8760h", Enabled: ptr.To(false)},
			want: cloudflare.ServiceTokenInput{Name: "ci"},
		},
		// A token read without the field is on, as Cloudflare's default.
		"EnabledUnanswered": {spec: v1alpha1.AccessServiceTokenParameters{Name: "ci", Duration: "8760h", Enabled: ptr.To(true)}, got: cloudflare.ServiceToken{Name: "ci", Duration: "8760h"}, want: cloudflare.ServiceTokenInput{Name: "ci"}},
		// Renamed while on: the correction never sends enabled.
		"RenamedWhileOn": {
			spec: v1alpha1.AccessServiceTokenParameters{Name: "ci", Duration: "8760h"}, got: cloudflare.ServiceToken{Name: "renamed", Duration: "8760h", Enabled: ptr.To(true)},
			want: cloudflare.ServiceTokenInput{Name: "ci"}, wantOK: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok := Change(tc.spec, tc.got)
			if diff := cmp.Diff(tc.want, got); diff != "" || ok != tc.wantOK {
				t.Errorf("Change() ok %v (want %v): -want +got:\n%s", ok, tc.wantOK, diff)
			}
		})
	}
}

// RotationDue: once per new time; the secret issued at creation serves
// requests made before it; a request too far ahead is refused.
func TestRotationDue(t *testing.T) {
	created := now.Add(-time.Hour)
	cases := map[string]struct {
		want    *v1alpha1.AccessServiceTokenRotation
		last    *v1alpha1.AccessServiceTokenRotationObservation
		created time.Time
		due     bool
		refused bool
	}{
		"NoRequest":             {created: created},
		"BeforeCreation":        {want: &v1alpha1.AccessServiceTokenRotation{RequestedAt: at(-2 * time.Hour)}, created: created},
		"AfterCreation":         {want: &v1alpha1.AccessServiceTokenRotation{RequestedAt: at(-time.Minute)}, created: created, due: true},
		"ImportedUnknownCreate": {want: &v1alpha1.AccessServiceTokenRotation{RequestedAt: at(-time.Minute)}, due: true},
		"Served": {
			want: &v1alpha1.AccessServiceTokenRotation{RequestedAt: at(-time.Minute)}, created: created,
			last: &v1alpha1.AccessServiceTokenRotationObservation{RequestedAt: at(-time.Minute), RotatedAt: at(-50 * time.Second)},
		},
		"NewerRequest": {
			want: &v1alpha1.AccessServiceTokenRotation{RequestedAt: at(-time.Second)}, created: created,
			last: &v1alpha1.AccessServiceTokenRotationObservation{RequestedAt: at(-time.Minute), RotatedAt: at(-50 * time.Second)}, due: true,
		},
		"OlderThanLastRotation": {
			want: &v1alpha1.AccessServiceTokenRotation{RequestedAt: at(-55 * time.Second)}, created: created,
			last: &v1alpha1.AccessServiceTokenRotationObservation{RequestedAt: at(-time.Minute), RotatedAt: at(-50 * time.Second)},
		},
		"Future": {want: &v1alpha1.AccessServiceTokenRotation{RequestedAt: at(rotation.MaxRequestSkew + time.Second)}, created: created, refused: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			due, err := RotationDue(tc.want, tc.last, tc.created, now)
			if due != tc.due || (err != nil) != tc.refused {
				t.Errorf("RotationDue() = %v, %v; want due %v, refused %v", due, err, tc.due, tc.refused)
			}
		})
	}
}

// RefreshDue: only with refreshBefore, only for a token that expires, once
// closer to expiry than refreshBefore.
func TestRefreshDue(t *testing.T) {
	month := &metav1.Duration{Duration: 720 * time.Hour}
	cases := map[string]struct {
		before  *metav1.Duration
		expires *time.Time
		want    bool
	}{
		"NotAsked":     {expires: ptr.To(now.Add(time.Hour))},
		"NeverExpires": {before: month},
		"FarOff":       {before: month, expires: ptr.To(now.Add(721 * time.Hour))},
		"Close":        {before: month, expires: ptr.To(now.Add(719 * time.Hour)), want: true},
		"Expired":      {before: month, expires: ptr.To(now.Add(-time.Hour)), want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := RefreshDue(tc.before, tc.expires, now); got != tc.want {
				t.Errorf("RefreshDue() = %v, want %v", got, tc.want)
			}
		})
	}
}

// The replaced secret stops after the overlap asked for, else at once.
func TestPreviousExpiresAt(t *testing.T) {
	hour := now.Add(time.Hour)
	cases := map[string]struct {
		want *v1alpha1.AccessServiceTokenRotation
		exp  *time.Time
	}{
		"NoRotation":  {},
		"NoOverlap":   {want: &v1alpha1.AccessServiceTokenRotation{}},
		"ZeroOverlap": {want: &v1alpha1.AccessServiceTokenRotation{PreviousSecretExpiresAfter: &metav1.Duration{}}},
		"AnHour":      {want: &v1alpha1.AccessServiceTokenRotation{PreviousSecretExpiresAfter: &metav1.Duration{Duration: time.Hour}}, exp: &hour},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.exp, PreviousExpiresAt(tc.want, now)); diff != "" {
				t.Errorf("PreviousExpiresAt(): -want +got:\n%s", diff)
			}
		})
	}
}

// Diff names each thing to do, and nothing when there is none.
func TestDiff(t *testing.T) {
	expires := now.Add(100 * time.Hour)
	got := cloudflare.ServiceToken{ID: "t", Name: "ci", Duration: "8760h", CreatedAt: now.Add(-time.Hour), ExpiresAt: &expires}
	cases := map[string]struct {
		spec v1alpha1.AccessServiceTokenParameters
		want string
	}{
		"UpToDate": {spec: v1alpha1.AccessServiceTokenParameters{Name: "ci", Duration: "8760h"}},
		"Everything": {
			spec: v1alpha1.AccessServiceTokenParameters{
				Name: "cd", Duration: "24h",
				Rotation:      &v1alpha1.AccessServiceTokenRotation{RequestedAt: at(-time.Minute)},
				RefreshBefore: &metav1.Duration{Duration: 200 * time.Hour},
			},
			want: `name: "ci" in Cloudflare, "cd" desired
duration: "8760h" in Cloudflare, "24h" desired
rotation: spec.forProvider.rotation.requestedAt not served yet
expiry: 2026-12-10T06:00:00Z is within refreshBefore (200h0m0s)`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cr := &v1alpha1.AccessServiceToken{Spec: v1alpha1.AccessServiceTokenSpec{ForProvider: tc.spec}}
			if diff := cmp.Diff(tc.want, Diff(cr, got, now)); diff != "" {
				t.Errorf("Diff(): -want +got:\n%s", diff)
			}
		})
	}
}

// Input asks for a token off only when the spec does: otherwise enabled is
// left to Cloudflare's default (on).
func TestInputEnabled(t *testing.T) {
	for _, tc := range []struct {
		enabled *bool
		want    *bool
	}{{nil, nil}, {ptr.To(true), nil}, {ptr.To(false), ptr.To(false)}} {
		got := Input(v1alpha1.AccessServiceTokenParameters{Name: "ci", Enabled: tc.enabled})
		if diff := cmp.Diff(tc.want, got.Enabled); diff != "" {
			t.Errorf("Input(enabled %v).Enabled: -want +got:\n%s", ptr.Deref(tc.enabled, true), diff)
		}
	}
}

// A missing token is taken for deleted in Cloudflare only when the
// resource observed that very ID and is not being deleted.
func TestDeletedInCloudflare(t *testing.T) {
	observed := func(extName, statusID string, deleting bool) *v1alpha1.AccessServiceToken {
		cr := resource(extName)
		cr.Status.AtProvider.ID = statusID
		if deleting {
			cr.SetDeletionTimestamp(&metav1.Time{Time: now})
		}
		return cr
	}
	for name, tc := range map[string]struct {
		cr   *v1alpha1.AccessServiceToken
		want bool
	}{
		"ObservedThenGone":         {cr: observed("t-1", "t-1", false), want: true},
		"NeverObserved":            {cr: observed("t-1", "", false)},
		"JustMadeInPlaceOfAnother": {cr: observed("t-2", "t-1", false)},
		"NoExternalName":           {cr: observed("", "t-1", false)},
		"BeingDeleted":             {cr: observed("t-1", "t-1", true)},
	} {
		if got := DeletedInCloudflare(tc.cr); got != tc.want {
			t.Errorf("%s: DeletedInCloudflare() = %v, want %v", name, got, tc.want)
		}
	}
}
