package loadbalancerpool

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/loadbalancing/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/ownership"
)

var mark = ownership.Identity{Owner: "cluster-a", Kind: v1alpha1.LoadBalancerPoolKind, Namespace: "web", Name: "a"}.Mark()

const tunnelID = "6b7b9f8c-0d3e-4b59-9f38-1e6f1b0c6a11"

func TestInput(t *testing.T) {
	cases := map[string]struct {
		p       v1alpha1.LoadBalancerPoolParameters
		want    cloudflare.PoolInput
		wantErr bool
	}{
		"TunnelOriginWithHost": {
			p: v1alpha1.LoadBalancerPoolParameters{Name: "a", MonitorID: ptr.To("m"), Origins: []v1alpha1.PoolOrigin{{Name: "cluster-a", TunnelRef: &v1alpha1.TunnelOriginReference{Name: "edge"}, TunnelID: ptr.To(strings.ToUpper(tunnelID)), Host: ptr.To("app.example.com")}}},
			want: cloudflare.PoolInput{Name: "a", Description: mark.String(), Enabled: true, MinimumOrigins: 1, Monitor: "m", Origins: []cloudflare.PoolOrigin{
				{Name: "cluster-a", Address: tunnelID + ".cfargotunnel.com", Enabled: true, Weight: 1, Header: map[string][]string{"Host": {"app.example.com"}}},
			}},
		},
		"RawAddressWeightAndDisabled": {
			p: v1alpha1.LoadBalancerPoolParameters{Name: "b", Description: ptr.To("d"), Enabled: ptr.To(false), MinimumOrigins: ptr.To(int64(2)), Origins: []v1alpha1.PoolOrigin{
				{Name: "x", Address: ptr.To("Origin.Example.NET"), Weight: ptr.To(int64(50))},
				{Name: "y", Address: ptr.To("192.0.2.1"), Enabled: ptr.To(false), Weight: ptr.To(int64(0))},
			}},
			want: cloudflare.PoolInput{Name: "b", Description: "d " + mark.String(), Enabled: false, MinimumOrigins: 2, Origins: []cloudflare.PoolOrigin{
				{Name: "x", Address: "origin.example.net", Enabled: true, Weight: 0.5},
				{Name: "y", Address: "192.0.2.1", Enabled: false, Weight: 0},
			}},
		},
		"UnresolvedTunnelIsNotSent": {
			p:       v1alpha1.LoadBalancerPoolParameters{Name: "c", Origins: []v1alpha1.PoolOrigin{{Name: "t", TunnelRef: &v1alpha1.TunnelOriginReference{Name: "edge"}}}},
			wantErr: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Input(tc.p, mark)
			var unresolved *UnresolvedOriginError
			if tc.wantErr != errors.As(err, &unresolved) {
				t.Fatalf("err = %v, want an UnresolvedOriginError: %t", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); !tc.wantErr && diff != "" {
				t.Errorf("-want +got:\n%s", diff)
			}
		})
	}
}

// held is what Cloudflare holds after a write of in.
func held(in cloudflare.PoolInput) cloudflare.Pool {
	return cloudflare.Pool{ID: "p", Name: in.Name, Description: in.Description, Enabled: in.Enabled, MinimumOrigins: in.MinimumOrigins, Monitor: in.Monitor, Origins: append([]cloudflare.PoolOrigin(nil), in.Origins...)}
}

func TestDiff(t *testing.T) {
	want, err := Input(v1alpha1.LoadBalancerPoolParameters{Name: "a", MonitorID: ptr.To("m"), Origins: []v1alpha1.PoolOrigin{
		{Name: "one", TunnelID: ptr.To(tunnelID), Host: ptr.To("app.example.com"), Weight: ptr.To(int64(33))},
		{Name: "two", Address: ptr.To("origin.example.net")},
	}}, mark)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		edit     func(*cloudflare.Pool)
		wantDiff string
	}{
		"Same":                 {edit: func(*cloudflare.Pool) {}},
		"WeightToTwoDecimals":  {edit: func(p *cloudflare.Pool) { p.Origins[0].Weight = 0.3300000001 }},
		"AddressCase":          {edit: func(p *cloudflare.Pool) { p.Origins[1].Address = "Origin.example.net" }},
		"WeightChanged":        {edit: func(p *cloudflare.Pool) { p.Origins[0].Weight = 0.5 }, wantDiff: "origins"},
		"OriginDisabledByHand": {edit: func(p *cloudflare.Pool) { p.Origins[1].Enabled = false }, wantDiff: "origins"},
		"HostHeaderRemoved":    {edit: func(p *cloudflare.Pool) { p.Origins[0].Header = nil }, wantDiff: "origins"},
		"OriginAddedByHand": {edit: func(p *cloudflare.Pool) {
			p.Origins = append(p.Origins, cloudflare.PoolOrigin{Name: "x", Address: "x"})
		}, wantDiff: "origins"},
		"OriginsReordered":        {edit: func(p *cloudflare.Pool) { p.Origins[0], p.Origins[1] = p.Origins[1], p.Origins[0] }, wantDiff: "origins"},
		"MonitorDetached":         {edit: func(p *cloudflare.Pool) { p.Monitor = "" }, wantDiff: "monitor"},
		"MinimumOriginsChanged":   {edit: func(p *cloudflare.Pool) { p.MinimumOrigins = 2 }, wantDiff: "minimumOrigins"},
		"Disabled":                {edit: func(p *cloudflare.Pool) { p.Enabled = false }, wantDiff: "enabled"},
		"MarkerRemovedByHand":     {edit: func(p *cloudflare.Pool) { p.Description = "" }, wantDiff: "description"},
		"RenamedInCloudflare":     {edit: func(p *cloudflare.Pool) { p.Name = "b" }, wantDiff: "name"},
		"DescriptionEditedByHand": {edit: func(p *cloudflare.Pool) { p.Description = ownership.Comment("x", mark) }, wantDiff: "description"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := held(want)
			got.Origins = append([]cloudflare.PoolOrigin(nil), want.Origins...)
			tc.edit(&got)
			d := Diff(want, got)
			if (d == "") != (tc.wantDiff == "") || !strings.Contains(d, tc.wantDiff) {
				t.Errorf("Diff = %q, want %q", d, tc.wantDiff)
			}
		})
	}
}

func TestTunnelMonitorCheck(t *testing.T) {
	for typ, refused := range map[string]bool{"tcp": true, "http": false, "https": false} {
		err := TunnelMonitorCheck(typ)
		if (err != nil) != refused {
			t.Errorf("%s monitor on a tunnel: %v, want refused %t", typ, err, refused)
		}
		if err != nil && !strings.Contains(err.Error(), "do not work on Cloudflare Tunnel origins") {
			t.Errorf("the refusal does not say why: %v", err)
		}
	}
}
