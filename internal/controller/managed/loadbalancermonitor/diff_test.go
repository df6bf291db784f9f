package loadbalancermonitor

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/loadbalancing/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/ownership"
)

var mark = ownership.Identity{Owner: "cluster-a", Kind: v1alpha1.LoadBalancerMonitorKind, Namespace: "web", Name: "probe"}.Mark()

func TestInput(t *testing.T) {
	cases := map[string]struct {
		p    v1alpha1.LoadBalancerMonitorParameters
		want cloudflare.LoadBalancerMonitorInput
	}{
		"HTTPSDefaults": {
			p:    v1alpha1.LoadBalancerMonitorParameters{Type: "https"},
			want: cloudflare.LoadBalancerMonitorInput{Type: "https", Description: mark.String(), Method: "GET", Path: "/", ExpectedCodes: "200", Interval: 60, Timeout: 5, Retries: 2},
		},
		"HTTPWithHostAndDescription": {
			p:    v1alpha1.LoadBalancerMonitorParameters{Type: "http", Description: ptr.To("app"), Path: ptr.To("/healthz"), ExpectedCodes: ptr.To("2xx"), Host: ptr.To("app.example.com"), Interval: ptr.To(int64(15)), Timeout: ptr.To(int64(3)), Retries: ptr.To(int64(0))},
			want: cloudflare.LoadBalancerMonitorInput{Type: "http", Description: "app " + mark.String(), Method: "GET", Path: "/healthz", ExpectedCodes: "2xx", Header: map[string][]string{"Host": {"app.example.com"}}, Interval: 15, Timeout: 3, Retries: 0},
		},
		"TCPHasNoHTTPFields": {
			p:    v1alpha1.LoadBalancerMonitorParameters{Type: "tcp", Port: ptr.To(int64(5432)), Path: ptr.To("/ignored")},
			want: cloudflare.LoadBalancerMonitorInput{Type: "tcp", Description: mark.String(), Method: "connection_established", Port: ptr.To(int64(5432)), Interval: 60, Timeout: 5, Retries: 2},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Input(tc.p, mark)); diff != "" {
				t.Errorf("-want +got:\n%s", diff)
			}
		})
	}
}

// observed is what Cloudflare holds after writing Input(p).
func observed(p v1alpha1.LoadBalancerMonitorParameters) cloudflare.LoadBalancerMonitor {
	in := Input(p, mark)
	return cloudflare.LoadBalancerMonitor{ID: "m", Type: in.Type, Description: in.Description, Method: in.Method, Path: in.Path, Header: in.Header, Port: in.Port, ExpectedCodes: in.ExpectedCodes, Interval: in.Interval, Timeout: in.Timeout, Retries: in.Retries}
}

func TestDiff(t *testing.T) {
	base := v1alpha1.LoadBalancerMonitorParameters{Type: "https", Description: ptr.To("app"), Path: ptr.To("/healthz"), Host: ptr.To("app.example.com")}
	cases := map[string]struct {
		edit     func(*cloudflare.LoadBalancerMonitor)
		wantDiff string // "" up to date, else a part of the diff
	}{
		"Same":                 {edit: func(*cloudflare.LoadBalancerMonitor) {}},
		"PathChanged":          {edit: func(m *cloudflare.LoadBalancerMonitor) { m.Path = "/" }, wantDiff: "path"},
		"HostRemoved":          {edit: func(m *cloudflare.LoadBalancerMonitor) { m.Header = nil }, wantDiff: "host"},
		"TypeChanged":          {edit: func(m *cloudflare.LoadBalancerMonitor) { m.Type = "http" }, wantDiff: "type"},
		"IntervalChanged":      {edit: func(m *cloudflare.LoadBalancerMonitor) { m.Interval = 30 }, wantDiff: "interval"},
		"CodesChanged":         {edit: func(m *cloudflare.LoadBalancerMonitor) { m.ExpectedCodes = "2xx" }, wantDiff: "expectedCodes"},
		"DescriptionChanged":   {edit: func(m *cloudflare.LoadBalancerMonitor) { m.Description = ownership.Comment("other", mark) }, wantDiff: "description"},
		"MarkerGone":           {edit: func(m *cloudflare.LoadBalancerMonitor) { m.Description = "app" }, wantDiff: "ownership marker"},
		"PortUnsetNotCompared": {edit: func(m *cloudflare.LoadBalancerMonitor) { m.Port = ptr.To(int64(8443)) }},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := observed(base)
			tc.edit(&got)
			d := Diff(base, got, mark)
			if (d == "") != (tc.wantDiff == "") || !strings.Contains(d, tc.wantDiff) {
				t.Errorf("Diff = %q, want %q", d, tc.wantDiff)
			}
		})
	}
}

func TestLateInitialize(t *testing.T) {
	p := v1alpha1.LoadBalancerMonitorParameters{Type: "http"}
	if !LateInitialize(&p, &cloudflare.LoadBalancerMonitor{Description: ownership.Comment("kept", mark)}) || ptr.Deref(p.Description, "") != "kept" {
		t.Errorf("description = %v, want the user part of Cloudflare's", p.Description)
	}
	if LateInitialize(&p, &cloudflare.LoadBalancerMonitor{Description: "other"}) || *p.Description != "kept" {
		t.Error("a set description was late-initialised")
	}
}
