package networkroute

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/mr"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/networkroute/claim"
)

// lagging is a virtual network whose list before a create is a moment old:
// it misses a route made just before, which a list sent after the create
// shows. Any other call panics (the embedded interface is nil).
type lagging struct {
	cloudflare.TeamnetAPI
	// missed is the route made elsewhere just before the create.
	missed  *cloudflare.CIDRRoute
	created []cloudflare.CIDRRoute
	deleted []string
}

func (l *lagging) ListVirtualNetworks(context.Context) ([]cloudflare.VirtualNetwork, error) {
	return []cloudflare.VirtualNetwork{{ID: "vnet", IsDefaultNetwork: true}}, nil
}

func (l *lagging) ListCIDRRoutesNow(context.Context, cloudflare.CIDRRouteFilter) ([]cloudflare.CIDRRoute, error) {
	return nil, nil
}

func (l *lagging) CreateCIDRRoute(_ context.Context, in cloudflare.CIDRRouteInput) (*cloudflare.CIDRRoute, error) {
	r := cloudflare.CIDRRoute{ID: "r" + in.Network, Network: in.Network, TunnelID: in.TunnelID, VirtualNetworkID: in.VirtualNetworkID, Comment: in.Comment, CreatedAt: time.Now()}
	l.created = append(l.created, r)
	return &r, nil
}

func (l *lagging) ListCIDRRoutesSince(_ context.Context, _ cloudflare.CIDRRouteFilter, t time.Time) ([]cloudflare.CIDRRoute, error) {
	out := []cloudflare.CIDRRoute{}
	if l.missed != nil {
		out = append(out, *l.missed)
	}
	return append(out, l.created...), nil
}

func (l *lagging) DeleteCIDRRoute(_ context.Context, id string) error {
	l.deleted = append(l.deleted, id)
	return nil
}

// TestCreateUndoesARouteThatOverlapsOneItsCheckMissed: the check before a
// create reads a list up to a second old; a route made elsewhere in that
// second is seen by the list after the create, and the new route is
// deleted again and reported as the conflict (issue: 10.250.1.0/24 and
// 10.0.0.0/8 created beside a foreign 10.250.0.0/16 made a second before).
func TestCreateUndoesARouteThatOverlapsOneItsCheckMissed(t *testing.T) {
	foreign := &cloudflare.CIDRRoute{ID: "foreign", Network: "10.250.0.0/16", TunnelID: "theirs", VirtualNetworkID: "vnet", Comment: "made by hand", CreatedAt: time.Now().Add(-time.Second)}
	cases := map[string]struct {
		network     string
		missed      *cloudflare.CIDRRoute
		wantDeleted []string
		wantID      string
	}{
		"InsideIt":  {network: "10.250.1.0/24", missed: foreign, wantDeleted: []string{"r10.250.1.0/24"}},
		"AroundIt":  {network: "10.0.0.0/8", missed: foreign, wantDeleted: []string{"r10.0.0.0/8"}},
		"Elsewhere": {network: "10.251.1.0/24", missed: foreign, wantID: "r10.251.1.0/24"},
		"Nothing":   {network: "10.250.1.0/24", wantID: "r10.250.1.0/24"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			api := &lagging{missed: tc.missed}
			e := &external{teamnet: api, conn: mr.Connection{Config: clients.Config{Owner: "cluster-a"}}}
			cr := &v1alpha1.NetworkRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name, UID: "u"}}
			cr.Spec.ForProvider = v1alpha1.NetworkRouteParameters{Network: tc.network, TunnelID: ptr.To("mine")}
			_, err := e.Create(context.Background(), cr)
			var conflict *claim.ConflictError
			if wantConflict := len(tc.wantDeleted) > 0; errors.As(err, &conflict) != wantConflict {
				t.Fatalf("Create error %v, want a conflict: %t", err, wantConflict)
			}
			if conflict != nil && conflict.Other.ID != foreign.ID {
				t.Errorf("conflict names route %s, want %s", conflict.Other.ID, foreign.ID)
			}
			if diff := cmp.Diff(tc.wantDeleted, api.deleted); diff != "" {
				t.Errorf("routes deleted again: -want +got:\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantID, meta.GetExternalName(cr)); diff != "" {
				t.Errorf("external-name: -want +got:\n%s", diff)
			}
		})
	}
}
