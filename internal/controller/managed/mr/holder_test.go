package mr

import (
	"context"
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"

	"github.com/context-labs/provider-cloudflare-tunnel/apis"
	dnsv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/dns/v1alpha1"
	lbv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/loadbalancing/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients"
)

func TestNormalizeHostname(t *testing.T) {
	for in, want := range map[string]string{
		"Grafana.Example.com":        "grafana.example.com",
		"grafana.example.com.":       "grafana.example.com",
		"grafana.example.com/admin":  "grafana.example.com",
		" grafana.example.com/a/b/ ": "grafana.example.com",
		"*.example.com":              "*.example.com",
		"":                           "",
	} {
		if got := NormalizeHostname(in); got != want {
			t.Errorf("NormalizeHostname(%q) = %q, want %q", in, got, want)
		}
	}
}

// Only the hostname itself in the config's suffixes hands it over: a
// parent suffix allows a namespace to publish under it, not to gate what
// another namespace publishes there.
func TestHandedOver(t *testing.T) {
	cfg := func(s ...string) clients.Config {
		var c clients.Config
		c.Allow.HostnameSuffixes = s
		return c
	}
	for _, tc := range []struct {
		name string
		cfg  clients.Config
		host string
		want bool
	}{
		{"no guardrails", cfg(), "grafana.example.com", false},
		{"a parent suffix", cfg("example.com"), "grafana.example.com", false},
		{"a wildcard parent", cfg("*.example.com"), "grafana.example.com", false},
		{"the hostname itself", cfg("team-b.example.com", "Grafana.Example.com."), "grafana.example.com", true},
		{"another hostname", cfg("grafana2.example.com"), "grafana.example.com", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := handedOver(tc.cfg, tc.host); got != tc.want {
				t.Errorf("handedOver(%v, %q) = %v, want %v", tc.cfg.Allow.HostnameSuffixes, tc.host, got, tc.want)
			}
		})
	}
}

func madeRecord(ns, name, host string) *dnsv1alpha1.DNSRecord {
	r := &dnsv1alpha1.DNSRecord{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	r.Spec.ForProvider.Name = host
	meta.SetExternalName(r, "rec-"+ns+"-"+name)
	r.SetConditions(xpv2.Available())
	return r
}

// madeLB is a LoadBalancer of ns for host; made says Cloudflare has it.
func madeLB(ns, host string, made bool) *lbv1alpha1.LoadBalancer {
	lb := &lbv1alpha1.LoadBalancer{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "lb"}}
	lb.Spec.ForProvider.Hostname = host
	if made {
		meta.SetExternalName(lb, "lb-"+ns)
		lb.SetConditions(xpv2.Available())
	}
	return lb
}

// tunnelWithRule is a hand-made Tunnel of ns whose configuration has a rule
// for host; served says it is made and its configuration written as is.
func tunnelWithRule(ns, host string, served bool) *ztv1alpha1.Tunnel {
	tun := &ztv1alpha1.Tunnel{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "squat", Generation: 2}}
	tun.Spec.ForProvider.Config = &ztv1alpha1.TunnelConfig{Ingress: []ztv1alpha1.IngressRule{{Hostname: ptr.To(host), Service: "http://web." + ns + ".svc.cluster.local"}, {Service: "http_status:404"}}}
	if served {
		meta.SetExternalName(tun, "tun-"+ns)
		tun.Status.AtProvider.ID = "tun-" + ns
		tun.Status.AtProvider.RemoteConfigVersion = 3
		tun.SetConditions(xpv2.Available(), xpv2.ReconcileSuccess().WithObservedGeneration(2))
	}
	return tun
}

// The holder is proven by what is real and marked: a made DNS record, the
// most specific that covers the name, before any tunnel rule; a tunnel
// rule only when Cloudflare serves it.
func TestHolderOf(t *testing.T) {
	const host = "grafana.apps.example.com"
	unsynced := tunnelWithRule("team-b", host, true)
	unsynced.Generation = 3 // a spec change not yet written
	unmadeRecord := madeRecord("team-b", "rec", host)
	meta.SetExternalName(unmadeRecord, "")
	for name, tc := range map[string]struct {
		objs []client.Object
		want Holding
	}{
		"nothing":                                   {nil, NotHeldElsewhere},
		"another namespace's record":                {[]client.Object{madeRecord("team-b", "rec", host)}, HeldByDNSRecord},
		"another namespace's record, not made":      {[]client.Object{unmadeRecord}, NotHeldElsewhere},
		"the namespace's own record":                {[]client.Object{madeRecord("team-a", "rec", host)}, NotHeldElsewhere},
		"a tunnel rule never made":                  {[]client.Object{tunnelWithRule("team-b", host, false)}, NotHeldElsewhere},
		"a tunnel rule not yet written":             {[]client.Object{unsynced}, NotHeldElsewhere},
		"a served tunnel rule":                      {[]client.Object{tunnelWithRule("team-b", host, true)}, HeldByTunnelRule},
		"a served wildcard tunnel rule":             {[]client.Object{tunnelWithRule("team-b", "*.apps.example.com", true)}, HeldByTunnelRule},
		"the own record before a served rule":       {[]client.Object{madeRecord("team-a", "rec", host), tunnelWithRule("team-b", host, true)}, NotHeldElsewhere},
		"another namespace's wildcard record":       {[]client.Object{madeRecord("team-b", "rec", "*.apps.example.com")}, HeldByDNSRecord},
		"a wider wildcard of another namespace":     {[]client.Object{madeRecord("team-b", "rec", "*.example.com")}, HeldByDNSRecord},
		"the own name before another's wildcard":    {[]client.Object{madeRecord("team-a", "rec", host), madeRecord("team-b", "rec", "*.apps.example.com")}, NotHeldElsewhere},
		"the own wildcard before a wider one":       {[]client.Object{madeRecord("team-a", "rec", "*.apps.example.com"), madeRecord("team-b", "rec", "*.example.com")}, NotHeldElsewhere},
		"another's name before the own wildcard":    {[]client.Object{madeRecord("team-a", "rec", "*.apps.example.com"), madeRecord("team-b", "rec", host)}, HeldByDNSRecord},
		"records of both namespaces":                {[]client.Object{madeRecord("team-a", "rec", host), madeRecord("team-b", "rec", host)}, HeldByTunnelRule},
		"a sibling's record":                        {[]client.Object{madeRecord("team-b", "rec", "prometheus.apps.example.com")}, NotHeldElsewhere},
		"another namespace's load balancer":         {[]client.Object{madeLB("team-b", host, true)}, HeldByDNSRecord},
		"another's load balancer, not made":         {[]client.Object{madeLB("team-b", host, false)}, NotHeldElsewhere},
		"the own load balancer before a record":     {[]client.Object{madeLB("team-a", host, true), madeRecord("team-b", "rec", host)}, NotHeldElsewhere},
		"the own load balancer before a rule":       {[]client.Object{madeLB("team-a", host, true), tunnelWithRule("team-b", host, true)}, NotHeldElsewhere},
		"another's load balancer before own record": {[]client.Object{madeLB("team-b", host, true), madeRecord("team-a", "rec", host)}, HeldByDNSRecord},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := HolderOf(context.Background(), holderKube(t, tc.objs...), "team-a", host)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("HolderOf = %v, want %v", got, tc.want)
			}
		})
	}
}

// holderKube is a fake API server indexing DNSRecords and Tunnels by
// hostname, as the provider's cache does.
func holderKube(t *testing.T, objs ...client.Object) client.Client {
	t.Helper()
	s := runtime.NewScheme()
	if err := apis.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).
		WithIndex(&lbv1alpha1.LoadBalancer{}, HostnameIndex, hostnameValues(func(lb *lbv1alpha1.LoadBalancer) []string { return []string{lb.Spec.ForProvider.Hostname} })).
		WithIndex(&dnsv1alpha1.DNSRecord{}, HostnameIndex, hostnameValues(func(r *dnsv1alpha1.DNSRecord) []string { return []string{r.Spec.ForProvider.Name} })).
		WithIndex(&ztv1alpha1.Tunnel{}, HostnameIndex, hostnameValues(func(t *ztv1alpha1.Tunnel) []string {
			var hs []string
			for _, r := range t.Spec.ForProvider.Config.Ingress {
				if r.Hostname != nil {
					hs = append(hs, *r.Hostname)
				}
			}
			return hs
		})).Build()
}

// An edge object on a wildcard reaches every name below it: another
// namespace holding one of them keeps the wildcard from this namespace
// (refused, what exists kept); a namespace is never kept from a name by
// its own wildcard, nor from a wildcard by its own names.
func TestEdgeHoldingOfWildcards(t *testing.T) {
	const wildcard = "*.apps.example.com"
	for name, tc := range map[string]struct {
		host string
		objs []client.Object
		want Holding
	}{
		"nothing":                        {wildcard, nil, NotHeldElsewhere},
		"another namespace's name below": {wildcard, []client.Object{madeRecord("team-b", "rec", "grafana.apps.example.com")}, HeldBelowWildcard},
		"another namespace's name two levels below": {wildcard, []client.Object{madeRecord("team-b", "rec", "a.grafana.apps.example.com")}, HeldBelowWildcard},
		"another namespace's narrower wildcard":     {wildcard, []client.Object{madeRecord("team-b", "rec", "*.grafana.apps.example.com")}, HeldBelowWildcard},
		"another namespace's name below, not made": {wildcard, []client.Object{func() client.Object {
			r := madeRecord("team-b", "rec", "grafana.apps.example.com")
			meta.SetExternalName(r, "")
			return r
		}()}, NotHeldElsewhere},
		"another namespace's served rule below":             {wildcard, []client.Object{tunnelWithRule("team-b", "grafana.apps.example.com", true)}, HeldBelowWildcard},
		"another namespace's rule below, not served":        {wildcard, []client.Object{tunnelWithRule("team-b", "grafana.apps.example.com", false)}, NotHeldElsewhere},
		"another namespace's apex is not below":             {wildcard, []client.Object{madeRecord("team-b", "rec", "apps.example.com")}, NotHeldElsewhere},
		"another namespace's sibling is not below":          {wildcard, []client.Object{madeRecord("team-b", "rec", "grafana.web.example.com")}, NotHeldElsewhere},
		"a look-alike suffix is not below":                  {wildcard, []client.Object{madeRecord("team-b", "rec", "grafana.xapps.example.com")}, NotHeldElsewhere},
		"the own names below":                               {wildcard, []client.Object{madeRecord("team-a", "rec", "grafana.apps.example.com"), tunnelWithRule("team-a", "a.apps.example.com", true)}, NotHeldElsewhere},
		"another namespace's same wildcard":                 {wildcard, []client.Object{madeRecord("team-b", "rec", wildcard)}, HeldByDNSRecord},
		"another namespace's wider wildcard":                {wildcard, []client.Object{madeRecord("team-b", "rec", "*.example.com")}, HeldByDNSRecord},
		"the own wildcard before a wider one":               {wildcard, []client.Object{madeRecord("team-a", "rec", wildcard), madeRecord("team-b", "rec", "*.example.com")}, NotHeldElsewhere},
		"the own wildcard, another's name below":            {wildcard, []client.Object{madeRecord("team-a", "rec", wildcard), madeRecord("team-b", "rec", "grafana.apps.example.com")}, HeldBelowWildcard},
		"a name under the own wildcard":                     {"grafana.apps.example.com", []client.Object{madeRecord("team-a", "rec", wildcard)}, NotHeldElsewhere},
		"a name under the own wildcard, another's below it": {"grafana.apps.example.com", []client.Object{madeRecord("team-a", "rec", wildcard), madeRecord("team-b", "rec", "a.grafana.apps.example.com")}, NotHeldElsewhere},
		"another's name under the own wildcard":             {"grafana.apps.example.com", []client.Object{madeRecord("team-a", "rec", wildcard), madeRecord("team-b", "rec", "grafana.apps.example.com")}, HeldByDNSRecord},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := edgeHolding(context.Background(), holderKube(t, tc.objs...), "team-a", tc.host)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("edgeHolding(%s) = %v, want %v", tc.host, got, tc.want)
			}
		})
	}
}

// The guard deletes what a resource made on a wildcard only when another
// namespace's DNS record answers for the wildcard itself; a name another
// namespace holds below the wildcard refuses new writes and keeps what
// exists, so publishing a name cannot take another namespace's wildcard
// down.
func TestHolderGuardOnAWildcard(t *testing.T) {
	const wildcard = "*.apps.example.com"
	for name, tc := range map[string]struct {
		held        client.Object
		wantHolding Holding
		wantDeleted bool
	}{
		"another namespace's name below":   {madeRecord("team-b", "rec", "grafana.apps.example.com"), HeldBelowWildcard, false},
		"another namespace's wildcard":     {madeRecord("team-b", "rec", wildcard), HeldByDNSRecord, true},
		"another namespace's wider record": {madeRecord("team-b", "rec", "*.example.com"), HeldByDNSRecord, true},
	} {
		t.Run(name, func(t *testing.T) {
			deleted, observed := false, false
			g := &holderGuard[*dnsv1alpha1.DNSRecord]{
				TypedExternalClient: managed.TypedExternalClientFns[*dnsv1alpha1.DNSRecord]{
					ObserveFn: func(context.Context, *dnsv1alpha1.DNSRecord) (managed.ExternalObservation, error) {
						observed = true
						return managed.ExternalObservation{}, nil
					},
					DeleteFn: func(context.Context, *dnsv1alpha1.DNSRecord) (managed.ExternalDelete, error) {
						deleted = true
						return managed.ExternalDelete{}, nil
					},
				},
				kube:      holderKube(t, tc.held),
				kind:      "AccessApplication",
				hostnames: func(r *dnsv1alpha1.DNSRecord) []string { return []string{r.Spec.ForProvider.Name} },
			}
			mine := &dnsv1alpha1.DNSRecord{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "mine"}}
			mine.Spec.ForProvider.Name = wildcard
			meta.SetExternalName(mine, "app-1")
			_, err := g.Observe(context.Background(), mine)
			var held *HostnameHeldError
			if !errors.As(err, &held) || held.Holding != tc.wantHolding || held.Hostname != wildcard {
				t.Fatalf("Observe = %v, want a HostnameHeldError for %s with holding %v", err, wildcard, tc.wantHolding)
			}
			if observed || deleted != tc.wantDeleted {
				t.Errorf("observed %t, deleted %t; want not observed, deleted %t", observed, deleted, tc.wantDeleted)
			}
			if kept := meta.GetExternalName(mine) == "app-1"; kept == tc.wantDeleted {
				t.Errorf("external-name %q after Observe; deleted %t", meta.GetExternalName(mine), tc.wantDeleted)
			}
		})
	}
}
