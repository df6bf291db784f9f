package mr

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource/fake"
	"github.com/crossplane/crossplane-runtime/v2/pkg/test"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/common"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
)

// TestTypedReasonsThroughTheManagedReconciler runs crossplane-runtime's own
// managed reconciler, wired as Setup wires it (typedReasons around it, its
// manager's status writes through reasonsWriter, the external client
// noting reasons), with a step failing: the Synced condition it writes
// carries the reason of the error the provider's code returned, and
// ReconcileError for a failure that code did not return.
func TestTypedReasonsThroughTheManagedReconciler(t *testing.T) {
	taken := &NameTakenError{Kind: "tunnel", Name: "edge", ID: "t-1"}
	longAgo := metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))
	observed := func(exists bool) func(context.Context, *ztv1alpha1.Tunnel) (managed.ExternalObservation, error) {
		return func(context.Context, *ztv1alpha1.Tunnel) (managed.ExternalObservation, error) {
			return managed.ExternalObservation{ResourceExists: exists, ResourceUpToDate: true}, nil
		}
	}
	cases := map[string]struct {
		before     *xpv2.Condition
		resolveErr error
		connectErr error
		ext        managed.TypedExternalClientFns[*ztv1alpha1.Tunnel]
		want       xpv2.Condition
	}{
		"ObserveTaken": {
			ext: managed.TypedExternalClientFns[*ztv1alpha1.Tunnel]{ObserveFn: func(context.Context, *ztv1alpha1.Tunnel) (managed.ExternalObservation, error) {
				return managed.ExternalObservation{}, taken
			}},
			want: synced(common.ReasonNameTaken, "observe failed: "+taken.Error()),
		},
		"CreateClaimed": {
			ext: managed.TypedExternalClientFns[*ztv1alpha1.Tunnel]{ObserveFn: observed(false), CreateFn: func(context.Context, *ztv1alpha1.Tunnel) (managed.ExternalCreation, error) {
				return managed.ExternalCreation{}, &ClaimedError{Kind: "Tunnel", ID: "t-1", By: "ns/other"}
			}},
			want: synced(common.ReasonConflict, "create failed: "+(&ClaimedError{Kind: "Tunnel", ID: "t-1", By: "ns/other"}).Error()),
		},
		"ConnectNotAllowed": {
			connectErr: &ForeignTunnelError{ID: "t-1", By: "other/edge"},
			want:       synced(common.ReasonNotAllowed, "connect failed: "+(&ForeignTunnelError{ID: "t-1", By: "other/edge"}).Error()),
		},
		"ReferenceNotAllowed": {
			resolveErr: &ReferenceNotAllowedError{Detail: "x"},
			want:       synced(common.ReasonNotAllowed, (&ReferenceNotAllowedError{Detail: "x"}).Error()),
		},
		"UntypedFailureIsReconcileError": {
			ext: managed.TypedExternalClientFns[*ztv1alpha1.Tunnel]{ObserveFn: func(context.Context, *ztv1alpha1.Tunnel) (managed.ExternalObservation, error) {
				return managed.ExternalObservation{}, errBoom
			}},
			want: synced(xpv2.ReasonReconcileError, "observe failed: boom"),
		},
		"UnchangedFailureKeepsItsTime": {
			before: ptr.To(withTime(synced(common.ReasonNameTaken, "observe failed: "+taken.Error()), longAgo)),
			ext: managed.TypedExternalClientFns[*ztv1alpha1.Tunnel]{ObserveFn: func(context.Context, *ztv1alpha1.Tunnel) (managed.ExternalObservation, error) {
				return managed.ExternalObservation{}, taken
			}},
			want: withTime(synced(common.ReasonNameTaken, "observe failed: "+taken.Error()), longAgo),
		},
		"Success": {
			before: ptr.To(synced(common.ReasonNameTaken, "observe failed: "+taken.Error())),
			ext:    managed.TypedExternalClientFns[*ztv1alpha1.Tunnel]{ObserveFn: observed(true)},
			want:   xpv2.ReconcileSuccess(),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var written xpv2.Condition
			kube := &test.MockClient{
				MockGet: test.NewMockGetFn(nil, func(o client.Object) error {
					tun := o.(*ztv1alpha1.Tunnel)
					tun.SetName("edge")
					meta.SetExternalName(tun, "t-1")
					if tc.before != nil {
						tun.SetConditions(*tc.before)
					}
					return nil
				}),
				MockUpdate: test.NewMockUpdateFn(nil),
				MockStatusUpdate: func(_ context.Context, o client.Object, _ ...client.SubResourceUpdateOption) error {
					written = o.(resource.Conditioned).GetCondition(xpv2.TypeSynced)
					return nil
				},
			}
			r := typedReasons{managed.NewReconciler(reasonsManager{&fake.Manager{Client: kube, Scheme: scheme(t)}}, resource.ManagedKind(ztv1alpha1.TunnelGroupVersionKind),
				managed.WithInitializers(),
				managed.WithReferenceResolver(managed.ReferenceResolverFn(func(ctx context.Context, mg resource.Managed) error {
					return note(ctx, mg.GetCondition(xpv2.TypeSynced), tc.resolveErr)
				})),
				managed.WithTypedExternalConnector[*ztv1alpha1.Tunnel](managed.TypedExternalConnectorFn[*ztv1alpha1.Tunnel](func(ctx context.Context, mg *ztv1alpha1.Tunnel) (managed.TypedExternalClient[*ztv1alpha1.Tunnel], error) {
					if tc.connectErr != nil {
						return nil, note(ctx, mg.GetCondition(xpv2.TypeSynced), tc.connectErr)
					}
					ext := tc.ext
					ext.DisconnectFn = func(context.Context) error { return nil }
					return &notesReasons[*ztv1alpha1.Tunnel]{ext}, nil
				})),
			)}
			if _, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "edge"}}); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, written, cmpopts.IgnoreFields(xpv2.Condition{}, "LastTransitionTime")); diff != "" {
				t.Errorf("Synced -want +got:\n%s", diff)
			}
			if tc.before != nil && tc.before.Equal(tc.want) && !written.LastTransitionTime.Equal(&tc.before.LastTransitionTime) {
				t.Errorf("Synced transitioned at %v; want its time kept, %v", written.LastTransitionTime, tc.before.LastTransitionTime)
			}
		})
	}
}

// TestTypeReasonOutsideAReconcile: a status write with no reconcile's
// failure in its context (another controller's, a test's) is left as it is.
func TestTypeReasonOutsideAReconcile(t *testing.T) {
	tun := &ztv1alpha1.Tunnel{}
	tun.SetConditions(xpv2.ReconcileError(errBoom))
	if err := (reasonsClient{&test.MockClient{MockStatusUpdate: test.NewMockSubResourceUpdateFn(nil)}}).Status().Update(context.Background(), tun); err != nil {
		t.Fatal(err)
	}
	if got := tun.GetCondition(xpv2.TypeSynced).Reason; got != xpv2.ReasonReconcileError {
		t.Errorf("reason = %q, want ReconcileError", got)
	}
}

var errBoom = errors.New("boom")

func synced(r xpv2.ConditionReason, msg string) xpv2.Condition {
	return xpv2.Condition{Type: xpv2.TypeSynced, Status: corev1.ConditionFalse, Reason: r, Message: msg}
}

func withTime(c xpv2.Condition, at metav1.Time) xpv2.Condition {
	c.LastTransitionTime = at
	return c
}

func ptrTo[T any](v T) *T { return &v }

func scheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := ztv1alpha1.SchemeBuilder.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}
