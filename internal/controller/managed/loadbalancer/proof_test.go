package loadbalancer_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/loadbalancing/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/loadbalancer"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/ownership"
)

const (
	proofHost = "app.example.com"
	tunnelA   = "aaaaaaaa-0000-4000-8000-000000000001"
	tunnelB   = "bbbbbbbb-0000-4000-8000-000000000002"
)

// provenPool is a pool another installation's PublicHostname made for
// proofHost on tunnel id.
func provenPool(name, id string) cloudflare.Pool {
	mark := ownership.Identity{Owner: "cluster-b", Kind: "LoadBalancerPool", Namespace: "team", Name: "app"}.Mark()
	return cloudflare.Pool{ID: name + "-id", Name: name, Description: ownership.Comment(v1alpha1.PoolDescription(proofHost, "team"), mark),
		Origins: []cloudflare.PoolOrigin{{Name: "tunnel", Address: id + ".cfargotunnel.com", Header: map[string][]string{"Host": {proofHost}}}}}
}

func TestUnproven(t *testing.T) {
	served := map[string]bool{tunnelA: true}
	cases := map[string]struct {
		pool func(p *cloudflare.Pool)
		// want is a part of the reason, "" for proven.
		want string
	}{
		"proven":                       {pool: func(*cloudflare.Pool) {}},
		"host header case-insensitive": {pool: func(p *cloudflare.Pool) { p.Origins[0].Header["Host"] = []string{"App.Example.com"} }},
		"no marker": {pool: func(p *cloudflare.Pool) { p.Description = v1alpha1.PoolDescription(proofHost, "team") },
			want: "no ownership marker"},
		"a UID marker of an old version": {pool: func(p *cloudflare.Pool) {
			p.Description = ownership.Comment(v1alpha1.PoolDescription(proofHost, "team"), ownership.Mark("3f1c0c56-0000-4000-8000-000000000000"))
		}, want: "no ownership marker"},
		"marker but another hostname": {pool: func(p *cloudflare.Pool) {
			p.Description = ownership.Comment(v1alpha1.PoolDescription("other.example.com", "team"), ownership.Mark("cluster-b/abc"))
		}, want: "does not name hostname"},
		"marker but no hostname": {pool: func(p *cloudflare.Pool) {
			p.Description = ownership.Comment("app pool", ownership.Mark("cluster-b/abc"))
		},
			want: "does not name hostname"},
		"no origins":       {pool: func(p *cloudflare.Pool) { p.Origins = nil }, want: "no origins"},
		"raw address":      {pool: func(p *cloudflare.Pool) { p.Origins[0].Address = "origin.example.net" }, want: "is not a tunnel"},
		"bare suffix":      {pool: func(p *cloudflare.Pool) { p.Origins[0].Address = ".cfargotunnel.com" }, want: "is not a tunnel"},
		"no host header":   {pool: func(p *cloudflare.Pool) { p.Origins[0].Header = nil }, want: "does not send Host"},
		"other host":       {pool: func(p *cloudflare.Pool) { p.Origins[0].Header["Host"] = []string{"evil.example.com"} }, want: "does not send Host"},
		"two host headers": {pool: func(p *cloudflare.Pool) { p.Origins[0].Header["Host"] = []string{proofHost, "x"} }, want: "does not send Host"},
		"tunnel without the rule": {pool: func(p *cloudflare.Pool) { p.Origins[0].Address = tunnelB + ".cfargotunnel.com" },
			want: "has no rule for app.example.com"},
		"a second origin not proven": {pool: func(p *cloudflare.Pool) {
			p.Origins = append(p.Origins, cloudflare.PoolOrigin{Name: "dc", Address: "dc.example.net", Header: map[string][]string{"Host": {proofHost}}})
		}, want: `origin "dc"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := provenPool("app-b", tunnelA)
			tc.pool(&p)
			got := loadbalancer.Unproven(proofHost, p, served)
			if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Fatalf("Unproven = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestServesHostname(t *testing.T) {
	cases := map[string]struct {
		config string
		want   bool
	}{
		"exact rule":          {`{"ingress":[{"hostname":"app.example.com","service":"http://a"},{"service":"http_status:404"}]}`, true},
		"case and dot":        {`{"ingress":[{"hostname":"APP.example.com.","service":"http://a"}]}`, true},
		"other hostnames":     {`{"ingress":[{"hostname":"www.example.com","service":"http://a"},{"service":"http_status:404"}]}`, false},
		"wildcard only":       {`{"ingress":[{"hostname":"*.example.com","service":"http://a"}]}`, false},
		"catch-all only":      {`{"ingress":[{"service":"http_status:404"}]}`, false},
		"never configured":    {`null`, false},
		"empty":               {``, false},
		"not a configuration": {`[1,2]`, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := loadbalancer.ServesHostname(json.RawMessage(tc.config), proofHost); got != tc.want {
				t.Fatalf("ServesHostname = %t, want %t", got, tc.want)
			}
		})
	}
}

func TestResolveNames(t *testing.T) {
	a, b, forged := provenPool("app-a", tunnelA), provenPool("app-b", tunnelA), provenPool("app-c", tunnelA)
	forged.Description = "app.example.com"
	pools := []cloudflare.Pool{a, b, forged}
	why := func(p cloudflare.Pool) string {
		return loadbalancer.Unproven(proofHost, p, map[string]bool{tunnelA: true})
	}
	cases := map[string]struct {
		names    []string
		fallback string
		wantIDs  []string
		wantFB   string
		unproven []string
	}{
		"in order":                    {names: []string{"app-b", "app-a"}, wantIDs: []string{"app-b-id", "app-a-id"}, wantFB: "app-a-id"},
		"fallback named":              {names: []string{"app-a", "app-b"}, fallback: "app-a", wantIDs: []string{"app-a-id", "app-b-id"}, wantFB: "app-a-id"},
		"forged left out":             {names: []string{"app-a", "app-c", "app-b"}, wantIDs: []string{"app-a-id", "app-b-id"}, wantFB: "app-b-id", unproven: []string{`"app-c"`}},
		"forged fallback is replaced": {names: []string{"app-a", "app-c"}, fallback: "app-c", wantIDs: []string{"app-a-id"}, wantFB: "app-a-id", unproven: []string{`"app-c"`}},
		"missing":                     {names: []string{"app-a", "app-z"}, wantIDs: []string{"app-a-id"}, wantFB: "app-a-id", unproven: []string{`"app-z": no pool of that name`}},
		"none proven":                 {names: []string{"app-c"}, unproven: []string{`"app-c"`}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := loadbalancer.ResolveNames(tc.names, tc.fallback, pools, why)
			if !slices.Equal(got.Default, tc.wantIDs) || got.Fallback != tc.wantFB || len(got.Unproven) != len(tc.unproven) {
				t.Fatalf("ResolveNames = %+v, want %v fallback %q, %d unproven", got, tc.wantIDs, tc.wantFB, len(tc.unproven))
			}
			for i, u := range tc.unproven {
				if !strings.Contains(got.Unproven[i], u) {
					t.Errorf("Unproven[%d] = %q, want it to contain %q", i, got.Unproven[i], u)
				}
			}
			c := loadbalancer.ProvenCondition(got)
			if (c.Reason == v1alpha1.ReasonPoolNotProven) != (len(tc.unproven) > 0) {
				t.Errorf("ProvenCondition = %s %s", c.Reason, c.Message)
			}
		})
	}
}
