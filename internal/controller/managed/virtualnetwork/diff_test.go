package virtualnetwork

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/ownership"
)

var mark = ownership.Identity{Owner: "cluster-a", Kind: v1alpha1.VirtualNetworkKind, Namespace: "net", Name: "blue"}.Mark()

func TestDiff(t *testing.T) {
	observed := &cloudflare.VirtualNetwork{Name: "blue", Comment: ownership.Comment("c", mark)}
	cases := map[string]struct {
		p        v1alpha1.VirtualNetworkParameters
		observed *cloudflare.VirtualNetwork
		upToDate bool
	}{
		"Same":             {p: v1alpha1.VirtualNetworkParameters{Name: "blue", Comment: ptr.To("c")}, upToDate: true},
		"Renamed":          {p: v1alpha1.VirtualNetworkParameters{Name: "green", Comment: ptr.To("c")}},
		"CommentChanged":   {p: v1alpha1.VirtualNetworkParameters{Name: "blue", Comment: ptr.To("d")}},
		"DefaultUnset":     {p: v1alpha1.VirtualNetworkParameters{Name: "blue"}, observed: &cloudflare.VirtualNetwork{Name: "blue", Comment: ownership.Comment("", mark), IsDefaultNetwork: true}, upToDate: true},
		"DefaultWanted":    {p: v1alpha1.VirtualNetworkParameters{Name: "blue", IsDefaultNetwork: ptr.To(true)}},
		"DefaultUnwanted":  {p: v1alpha1.VirtualNetworkParameters{Name: "blue", IsDefaultNetwork: ptr.To(false)}, observed: &cloudflare.VirtualNetwork{Name: "blue", Comment: ownership.Comment("", mark), IsDefaultNetwork: true}},
		"UnmarkedIsMarked": {p: v1alpha1.VirtualNetworkParameters{Name: "blue", Comment: ptr.To("c")}, observed: &cloudflare.VirtualNetwork{Name: "blue", Comment: "c"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o := observed
			if tc.observed != nil {
				o = tc.observed
			}
			if d := Diff(tc.p, o, mark); (d == "") != tc.upToDate {
				t.Errorf("Diff = %q, want up to date = %v", d, tc.upToDate)
			}
		})
	}
}

func TestInput(t *testing.T) {
	cases := map[string]struct {
		p    v1alpha1.VirtualNetworkParameters
		want cloudflare.VirtualNetworkInput
	}{
		"Plain":           {p: v1alpha1.VirtualNetworkParameters{Name: "blue"}, want: cloudflare.VirtualNetworkInput{Name: "blue", Comment: mark.String()}},
		"Comment":         {p: v1alpha1.VirtualNetworkParameters{Name: "blue", Comment: ptr.To("c")}, want: cloudflare.VirtualNetworkInput{Name: "blue", Comment: "c " + mark.String()}},
		"MadeDefault":     {p: v1alpha1.VirtualNetworkParameters{Name: "blue", IsDefaultNetwork: ptr.To(true)}, want: cloudflare.VirtualNetworkInput{Name: "blue", Comment: mark.String(), IsDefaultNetwork: ptr.To(true)}},
		"NeverUndefaults": {p: v1alpha1.VirtualNetworkParameters{Name: "blue", IsDefaultNetwork: ptr.To(false)}, want: cloudflare.VirtualNetworkInput{Name: "blue", Comment: mark.String()}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, input(tc.p, mark)); diff != "" {
				t.Errorf("-want +got:\n%s", diff)
			}
		})
	}
}
