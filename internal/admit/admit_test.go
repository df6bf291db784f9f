package admit

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tunnelsv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	zerotrustv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/rotation"
)

var testNow = time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)

func clock() time.Time { return testNow }

func at(t time.Time) *metav1.Time { return &metav1.Time{Time: t} }

func cloudflareTunnel(req *metav1.Time) *tunnelsv1alpha1.CloudflareTunnel {
	t := &tunnelsv1alpha1.CloudflareTunnel{}
	if req != nil {
		t.Spec.TokenRotation = &tunnelsv1alpha1.TokenRotationRequest{RequestedAt: *req}
	}
	return t
}

func tunnel(req *metav1.Time) *zerotrustv1alpha1.Tunnel {
	t := &zerotrustv1alpha1.Tunnel{}
	if req != nil {
		t.Spec.ForProvider.TokenRotation = &zerotrustv1alpha1.TokenRotation{RequestedAt: *req}
	}
	return t
}

func serviceToken(req *metav1.Time) *zerotrustv1alpha1.AccessServiceToken {
	t := &zerotrustv1alpha1.AccessServiceToken{}
	if req != nil {
		t.Spec.ForProvider.Rotation = &zerotrustv1alpha1.AccessServiceTokenRotation{RequestedAt: *req}
	}
	return t
}

// refusal is the message a request is refused with at testNow.
func refusal(field string, req time.Time) string {
	return (&rotation.FutureRequestError{Field: field, RequestedAt: req, Now: testNow}).AtAdmission()
}

func TestRotationRequests(t *testing.T) {
	beyond := testNow.Add(rotation.MaxRequestSkew + time.Second)
	cases := map[string]struct {
		update  bool         // else create
		old     *metav1.Time // the stored request, on update
		req     *metav1.Time
		refused bool
		tooOld  bool // refused before rotation.Earliest
	}{
		"CreateUnset":                 {},
		"CreatePast":                  {req: at(testNow.Add(-24 * time.Hour))},
		"CreateNow":                   {req: at(testNow)},
		"CreateWithinSkew":            {req: at(testNow.Add(rotation.MaxRequestSkew))},
		"CreateBeyondSkew":            {req: at(beyond), refused: true},
		"CreateMistypedYear":          {req: at(time.Date(2099, 12, 5, 10, 0, 0, 0, time.UTC)), refused: true},
		"CreateZeroTime":              {req: at(time.Time{}), refused: true, tooOld: true},
		"CreateJustBeforeEarliest":    {req: at(rotation.Earliest.Add(-time.Second)), refused: true, tooOld: true},
		"CreateEarliest":              {req: at(rotation.Earliest)},
		"UpdateUnchangedZeroTime":     {update: true, old: at(time.Time{}), req: at(time.Time{})},
		"UpdateToZeroTime":            {update: true, old: at(testNow), req: at(time.Time{}), refused: true, tooOld: true},
		"UpdateUnset":                 {update: true},
		"UpdateUnchangedFuture":       {update: true, old: at(beyond), req: at(beyond)},
		"UpdateToAnotherFuture":       {update: true, old: at(beyond), req: at(beyond.Add(time.Hour)), refused: true},
		"UpdateFutureCorrectedToNow":  {update: true, old: at(beyond), req: at(testNow)},
		"UpdateSetToFuture":           {update: true, req: at(beyond), refused: true},
		"UpdateRequestRemoved":        {update: true, old: at(beyond)},
		"UpdatePastToLaterWithinSkew": {update: true, old: at(testNow.Add(-time.Hour)), req: at(testNow.Add(time.Minute))},
	}
	kinds := map[string]struct {
		field  string
		create func(req *metav1.Time) error
		update func(old, req *metav1.Time) error
	}{
		"CloudflareTunnel": {
			field: CloudflareTunnelField,
			create: func(req *metav1.Time) error {
				_, err := CloudflareTunnelValidator(clock).ValidateCreate(context.Background(), cloudflareTunnel(req))
				return err
			},
			update: func(old, req *metav1.Time) error {
				_, err := CloudflareTunnelValidator(clock).ValidateUpdate(context.Background(), cloudflareTunnel(old), cloudflareTunnel(req))
				return err
			},
		},
		"Tunnel": {
			field: TunnelField,
			create: func(req *metav1.Time) error {
				_, err := TunnelValidator(clock).ValidateCreate(context.Background(), tunnel(req))
				return err
			},
			update: func(old, req *metav1.Time) error {
				_, err := TunnelValidator(clock).ValidateUpdate(context.Background(), tunnel(old), tunnel(req))
				return err
			},
		},
		"AccessServiceToken": {
			field: ServiceTokenField,
			create: func(req *metav1.Time) error {
				_, err := ServiceTokenValidator(clock).ValidateCreate(context.Background(), serviceToken(req))
				return err
			},
			update: func(old, req *metav1.Time) error {
				_, err := ServiceTokenValidator(clock).ValidateUpdate(context.Background(), serviceToken(old), serviceToken(req))
				return err
			},
		},
	}
	for kind, k := range kinds {
		for name, tc := range cases {
			t.Run(kind+"/"+name, func(t *testing.T) {
				want := ""
				switch {
				case tc.tooOld:
					want = (&rotation.TooOldRequestError{Field: k.field, RequestedAt: tc.req.Time}).Error()
				case tc.refused:
					want = refusal(k.field, tc.req.Time)
				}
				var err error
				if tc.update {
					err = k.update(tc.old, tc.req)
				} else {
					err = k.create(tc.req)
				}
				got := ""
				if err != nil {
					got = err.Error()
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("refusal (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// The refusal says what is wrong and the time to set.
func TestRefusalMessage(t *testing.T) {
	_, err := CloudflareTunnelValidator(clock).ValidateCreate(context.Background(), cloudflareTunnel(at(time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC))))
	want := "spec.tokenRotation.requestedAt 2099-01-01T00:00:00Z is more than 5m0s ahead of the provider's clock, which reads 2026-12-05T10:00:00Z: a mistyped time? Set it to the current time (2026-12-05T10:00:00Z) to rotate the run token now"
	if err == nil || err.Error() != want {
		t.Errorf("refusal:\n got %v\nwant %s", err, want)
	}
}

func TestDeleteIsAdmitted(t *testing.T) {
	if _, err := TunnelValidator(clock).ValidateDelete(context.Background(), tunnel(at(time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)))); err != nil {
		t.Errorf("delete refused: %v", err)
	}
}
