package mr

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	connv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/connectivity/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
)

// listReader serves a fixed list of VPCServices, as the informer cache would,
// and counts the lists.
type listReader struct {
	client.Reader
	items []connv1alpha1.VPCService
	lists int
}

func (r *listReader) List(_ context.Context, l client.ObjectList, _ ...client.ListOption) error {
	r.lists++
	l.(*connv1alpha1.VPCServiceList).Items = r.items
	return nil
}

func service(name string, created time.Time, id string, syncedSince time.Time) *connv1alpha1.VPCService {
	s := &connv1alpha1.VPCService{ObjectMeta: metav1.ObjectMeta{
		Namespace: name, Name: name, UID: types.UID(name), CreationTimestamp: metav1.NewTime(created),
	}}
	if id != "" {
		meta.SetExternalName(s, id)
	}
	if !syncedSince.IsZero() {
		s.SetConditions(xpv2.Condition{Type: xpv2.TypeSynced, Status: corev1.ConditionTrue, Reason: xpv2.ReasonReconcileSuccess, LastTransitionTime: metav1.NewTime(syncedSince)})
	}
	return s
}

func TestTenancyGuardClaims(t *testing.T) {
	now := time.Now()
	older, newer := now.Add(-time.Hour), now.Add(-30*time.Minute)
	const id = "0f7e3a52-7c0a-4c55-9d8b-3a1f2d8a9e10"
	const settle = 2 * time.Minute
	cases := map[string]struct {
		mg      *connv1alpha1.VPCService
		others  []connv1alpha1.VPCService
		deleted bool
		// wantClaimed: Observe refuses with a ClaimedError.
		wantClaimed bool
		// wantID is the external-name mg keeps.
		wantID string
		// wantExists is the observation's ResourceExists when not refused.
		wantExists bool
		wantLists  int
	}{
		"AdoptingAnObjectAnotherResourceHolds": {
			mg:          service("b", newer, "", time.Time{}),
			others:      []connv1alpha1.VPCService{*service("a", older, id, older)},
			wantClaimed: true, wantID: "", wantLists: 1,
		},
		"AdoptingAnObjectNobodyHolds": {
			mg:     service("b", newer, "", time.Time{}),
			wantID: id, wantExists: true, wantLists: 1,
		},
		// Both adopted in the same instant and both saved the ID: while
		// they settle, the newer lets go and the older keeps it.
		"RaceLoserWhileSettling": {
			mg:          service("b", newer, id, now.Add(-10*time.Second)),
			others:      []connv1alpha1.VPCService{*service("a", older, id, now.Add(-10*time.Second))},
			wantClaimed: true, wantID: id, wantLists: 1,
		},
		"RaceWinnerWhileSettling": {
			mg:     service("a", older, id, now.Add(-10*time.Second)),
			others: []connv1alpha1.VPCService{*service("b", newer, id, now.Add(-10*time.Second))},
			wantID: id, wantExists: true, wantLists: 1,
		},
		"RaceLoserBeingDeletedLetsGo": {
			mg:      service("b", newer, id, now.Add(-10*time.Second)),
			others:  []connv1alpha1.VPCService{*service("a", older, id, now.Add(-10*time.Second))},
			deleted: true,
			wantID:  id, wantExists: false, wantLists: 1,
		},
		// Settled resources are not checked again: steady-state polls do
		// not list the kind.
		"SettledIsNotCheckedAgain": {
			mg:     service("b", newer, id, now.Add(-10*time.Minute)),
			others: []connv1alpha1.VPCService{*service("a", older, id, older)},
			wantID: id, wantExists: true, wantLists: 0,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if tc.deleted {
				tc.mg.SetDeletionTimestamp(&metav1.Time{Time: now})
			}
			kube := &listReader{items: tc.others}
			g := &tenancyGuard[*connv1alpha1.VPCService]{
				TypedExternalClient: managed.TypedExternalClientFns[*connv1alpha1.VPCService]{
					ObserveFn: func(_ context.Context, mg *connv1alpha1.VPCService) (managed.ExternalObservation, error) {
						// The wrapped client finds the object by name and adopts it.
						meta.SetExternalName(mg, id)
						mg.Status.AtProvider.ServiceID = id
						return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
					},
				},
				kube: kube, kind: "VPCService", newList: func() client.ObjectList { return &connv1alpha1.VPCServiceList{} },
				settle: settle,
			}
			obs, err := g.Observe(context.Background(), tc.mg)
			var claimed *ClaimedError
			if got := errors.As(err, &claimed); got != tc.wantClaimed {
				t.Fatalf("Observe error %v, want a ClaimedError: %t", err, tc.wantClaimed)
			}
			if !tc.wantClaimed && obs.ResourceExists != tc.wantExists {
				t.Errorf("ResourceExists = %t, want %t", obs.ResourceExists, tc.wantExists)
			}
			if diff := cmp.Diff(tc.wantID, meta.GetExternalName(tc.mg)); diff != "" {
				t.Errorf("external-name: -want +got:\n%s", diff)
			}
			if tc.wantClaimed && tc.mg.Status.AtProvider.ServiceID != "" {
				t.Errorf("status of a refused resource holds %q; nothing of the other resource's object may be saved", tc.mg.Status.AtProvider.ServiceID)
			}
			if kube.lists != tc.wantLists {
				t.Errorf("listed the kind %d times, want %d", kube.lists, tc.wantLists)
			}
		})
	}
}

// tunnels serves a fixed list of Tunnels, as the informer cache would.
type tunnels struct {
	client.Reader
	items []ztv1alpha1.Tunnel
}

func (r tunnels) List(_ context.Context, l client.ObjectList, _ ...client.ListOption) error {
	if tl, ok := l.(*ztv1alpha1.TunnelList); ok {
		tl.Items = r.items
	}
	return nil
}

// tunnel is a Tunnel in namespace ns, created at created, naming id and,
// when held, having observed it as its own.
func tunnel(ns string, created time.Time, id string, held bool) ztv1alpha1.Tunnel {
	t := ztv1alpha1.Tunnel{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "t", UID: types.UID(ns), CreationTimestamp: metav1.NewTime(created)}}
	meta.SetExternalName(&t, id)
	if held {
		t.Status.AtProvider.ID = id
	}
	return t
}

// TestManagedElsewhere: a raw tunnel ID counts as a namespace's own only
// when the namespace's resource holds its claim; one that merely names it
// (refused, because another namespace's Tunnel holds it) does not.
func TestManagedElsewhere(t *testing.T) {
	now := time.Now()
	older, newer := now.Add(-time.Hour), now.Add(-30*time.Minute)
	const id = "6f1c0d6e-0b8e-4f51-9f5a-3c3b0c8f7a21"
	deleting := tunnel("a", older, id, true)
	deleting.SetDeletionTimestamp(&metav1.Time{Time: now})
	deleting.SetFinalizers([]string{"finalizer.managedresource.crossplane.io"})
	cases := map[string]struct {
		items  []ztv1alpha1.Tunnel
		shared bool
		wantBy string
	}{
		"NobodyManagesIt":       {},
		"OwnNamespaceHoldsIt":   {items: []ztv1alpha1.Tunnel{tunnel("b", newer, id, true)}},
		"AnotherNamespaceHolds": {items: []ztv1alpha1.Tunnel{tunnel("a", older, id, true)}, wantBy: "a/t"},
		// The reported bug: an Observe-only decoy in b naming a's tunnel,
		// refused, made the tunnel b's own.
		"RefusedDecoyInOwnNamespace": {items: []ztv1alpha1.Tunnel{tunnel("a", newer, id, true), tunnel("b", newer.Add(time.Second), id, false)}, wantBy: "a/t"},
		// Made before the tunnel existed, its external-name set by hand
		// later: older, and still not holding.
		"OlderDecoyInOwnNamespace": {items: []ztv1alpha1.Tunnel{tunnel("a", newer, id, true), tunnel("b", older, id, false)}, wantBy: "a/t"},
		"SharedWithTheNamespace":   {items: []ztv1alpha1.Tunnel{tunnel("a", older, id, true)}, shared: true},
		"HolderBeingDeleted":       {items: []ztv1alpha1.Tunnel{deleting}, wantBy: "a/t"},
		// Nobody holds it yet (a Tunnel just created, its status not yet
		// saved): the oldest naming it.
		"NobodyHoldsItYet": {items: []ztv1alpha1.Tunnel{tunnel("a", older, id, false), tunnel("b", newer, id, false)}, wantBy: "a/t"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			shared := func(context.Context, resource.Managed) (bool, error) { return tc.shared, nil }
			by, gotID, err := managedElsewhere(context.Background(), tunnels{items: tc.items}, &ztv1alpha1.TunnelList{}, tunnelObservedID, "b", []string{id}, shared)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantBy, by); diff != "" {
				t.Errorf("managed by: -want +got:\n%s", diff)
			}
			if by != "" && gotID != id {
				t.Errorf("refused ID %q, want %q", gotID, id)
			}
		})
	}
}

// TestTenancyGuardDecoy: a Tunnel naming another's tunnel by hand never
// holds it, however old it is.
func TestTenancyGuardDecoy(t *testing.T) {
	now := time.Now()
	older, newer := now.Add(-time.Hour), now.Add(-30*time.Minute)
	const id = "6f1c0d6e-0b8e-4f51-9f5a-3c3b0c8f7a21"
	cases := map[string]struct {
		mg          ztv1alpha1.Tunnel
		others      []ztv1alpha1.Tunnel
		wantClaimed bool
	}{
		"OlderDecoyAgainstTheHolder": {mg: tunnel("b", older, id, false), others: []ztv1alpha1.Tunnel{tunnel("a", newer, id, true)}, wantClaimed: true},
		"HolderAgainstAnOlderDecoy":  {mg: tunnel("a", newer, id, true), others: []ztv1alpha1.Tunnel{tunnel("b", older, id, false)}},
		"ImportOfATunnelNobodyHolds": {mg: tunnel("b", newer, id, false)},
		"TwoImportsTheOlderKeepsIt":  {mg: tunnel("b", older, id, false), others: []ztv1alpha1.Tunnel{tunnel("a", newer, id, false)}},
		"TwoImportsTheNewerLetsGo":   {mg: tunnel("a", newer, id, false), others: []ztv1alpha1.Tunnel{tunnel("b", older, id, false)}, wantClaimed: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := &tenancyGuard[*ztv1alpha1.Tunnel]{
				TypedExternalClient: managed.TypedExternalClientFns[*ztv1alpha1.Tunnel]{
					ObserveFn: func(_ context.Context, mg *ztv1alpha1.Tunnel) (managed.ExternalObservation, error) {
						mg.Status.AtProvider.ID = id
						return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
					},
				},
				kube: tunnels{items: tc.others}, kind: "Tunnel", newList: func() client.ObjectList { return &ztv1alpha1.TunnelList{} },
				observedID: tunnelObservedID, settle: time.Minute,
			}
			mg := tc.mg.DeepCopy()
			_, err := g.Observe(context.Background(), mg)
			var claimed *ClaimedError
			if got := errors.As(err, &claimed); got != tc.wantClaimed {
				t.Fatalf("Observe error %v, want a ClaimedError: %t", err, tc.wantClaimed)
			}
			if tc.wantClaimed && mg.Status.AtProvider.ID != tc.mg.Status.AtProvider.ID {
				t.Errorf("a refused Tunnel's status holds %q: it must keep what it had (%q)", mg.Status.AtProvider.ID, tc.mg.Status.AtProvider.ID)
			}
		})
	}
}

// TestTenancyGuardDeletesWhatItHeldThroughAForeignTunnel: a route being
// deleted whose tunnel another namespace now manages lets go of a route it
// never held, and deletes one it held (it is its own: left behind, it would
// block that tunnel's deletion).
func TestTenancyGuardDeletesWhatItHeldThroughAForeignTunnel(t *testing.T) {
	const tunnelID, routeID = "6f1c0d6e-0b8e-4f51-9f5a-3c3b0c8f7a21", "0b9f9a4e-5d0b-4b8e-8a43-1f5b7c9d2e60"
	foreign := []ztv1alpha1.Tunnel{tunnel("a", time.Now().Add(-time.Hour), tunnelID, true)}
	cases := map[string]struct {
		held        bool
		wantExists  bool
		wantObserve bool
	}{
		"NeverHeldLetsGo":    {},
		"HeldIsDeletedAsOwn": {held: true, wantExists: true, wantObserve: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := &ztv1alpha1.HostnameRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "b", Name: "r", UID: "r"}}
			r.Spec.ForProvider.TunnelID = &[]string{tunnelID}[0]
			meta.SetExternalName(r, routeID)
			if tc.held {
				r.Status.AtProvider.ID = routeID
			}
			r.SetDeletionTimestamp(&metav1.Time{Time: time.Now()})
			observed := false
			g := &tenancyGuard[*ztv1alpha1.HostnameRoute]{
				TypedExternalClient: managed.TypedExternalClientFns[*ztv1alpha1.HostnameRoute]{
					ObserveFn: func(context.Context, *ztv1alpha1.HostnameRoute) (managed.ExternalObservation, error) {
						observed = true
						return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
					},
				},
				kube: tunnels{items: foreign}, kind: "HostnameRoute", newList: func() client.ObjectList { return &ztv1alpha1.HostnameRouteList{} },
				tunnelIDs:  func(r *ztv1alpha1.HostnameRoute) []string { return []string{*r.Spec.ForProvider.TunnelID} },
				observedID: func(m resource.Managed) string { return m.(*ztv1alpha1.HostnameRoute).Status.AtProvider.ID },
				settle:     time.Minute,
			}
			obs, err := g.Observe(context.Background(), r)
			if err != nil {
				t.Fatal(err)
			}
			if obs.ResourceExists != tc.wantExists || observed != tc.wantObserve {
				t.Errorf("ResourceExists=%t, observed=%t; want %t, %t", obs.ResourceExists, observed, tc.wantExists, tc.wantObserve)
			}
		})
	}
}
