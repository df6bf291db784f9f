package service_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

func exposedService(ns, name string, ann map[string]string, ports ...corev1.ServicePort) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: ann},
		Spec:       corev1.ServiceSpec{Ports: ports},
	}
}

func annotations(kv ...string) map[string]string {
	a := map[string]string{v1alpha1.AnnotationTunnel: "edge"}
	for i := 0; i+1 < len(kv); i += 2 {
		a[kv[i]] = kv[i+1]
	}
	return a
}

// madeFor counts the objects made for a Service, by kind.
func madeFor(t *testing.T, ns, svc string) map[string]int {
	t.Helper()
	sel := client.MatchingLabels{publish.LabelService: svc}
	routes, phs := &ztv1alpha1.HostnameRouteList{}, &v1alpha1.PublicHostnameList{}
	for _, l := range []client.ObjectList{routes, phs} {
		if err := p.Client.List(context.Background(), l, client.InNamespace(ns), sel); err != nil {
			t.Fatal(err)
		}
	}
	return map[string]int{"HostnameRoute": len(routes.Items), "PublicHostname": len(phs.Items)}
}

// The design's redis example without an Ingress: the Service alone gets a
// private hostname route under its cluster name and a Workers VPC service
// reaching it there; both go with the annotations.
func TestAServiceOnlyPrivateRouteWithVPCService(t *testing.T) {
	ns, tunnelID := setup(t)
	host := "redis." + ns + ".svc.cluster.local"
	vpc := "redis-cache-" + ns
	svc := exposedService(ns, "redis", annotations(v1alpha1.AnnotationVPCService, vpc), corev1.ServicePort{Name: "redis", Port: 6379})
	p.Create(t, svc)
	wait.Eventually(t, wait.Patience, "route and VPC service in Cloudflare", func() error {
		rs, ss := p.HostnameRoutes(t, host), p.VPCServices(t, vpc)
		if len(rs) != 1 || len(ss) != 1 {
			return fmt.Errorf("%d routes, %d VPC services", len(rs), len(ss))
		}
		if rs[0].TunnelID != tunnelID {
			return fmt.Errorf("route through %s, want %s", rs[0].TunnelID, tunnelID)
		}
		s := ss[0]
		if s.Host.Hostname != host || ptr.Deref(s.TCPPort, 0) != 6379 || s.Host.ResolverNetwork == nil || s.Host.ResolverNetwork.TunnelID != tunnelID {
			return fmt.Errorf("VPC service %+v, want %s:6379 through the tunnel", s, host)
		}
		return nil
	})
	if n := madeFor(t, ns, "redis")["PublicHostname"]; n != 0 {
		t.Errorf("a private Service has %d PublicHostnames", n)
	}

	edit(t, svc, func(s *corev1.Service) {
		delete(s.Annotations, v1alpha1.AnnotationTunnel)
		delete(s.Annotations, v1alpha1.AnnotationVPCService)
	})
	wait.Eventually(t, wait.Patience, "route and VPC service gone", func() error {
		if rs, ss := p.HostnameRoutes(t, host), p.VPCServices(t, vpc); len(rs)+len(ss) != 0 {
			return fmt.Errorf("%d routes, %d VPC services left", len(rs), len(ss))
		}
		return nil
	})
}

// A public TCP Service (protocol annotation) and a public HTTPS one (the
// port's appProtocol) each get their hostname's DNS record and tunnel rule;
// deleting the Services takes both off the internet.
func TestPublicTCPAndHTTPSServices(t *testing.T) {
	ns, tunnelID := setup(t)
	dbHost, webHost := "db-"+ns+".example.com", "web-"+ns+".example.com"
	db := exposedService(ns, "db", annotations(v1alpha1.AnnotationHostname, dbHost, v1alpha1.AnnotationPublic, "true", v1alpha1.AnnotationProtocol, "tcp"),
		corev1.ServicePort{Name: "postgres", Port: 5432})
	web := exposedService(ns, "web", annotations(v1alpha1.AnnotationHostname, webHost, v1alpha1.AnnotationPublic, "true"),
		corev1.ServicePort{Name: "web", Port: 8443, AppProtocol: ptr.To("https")}, corev1.ServicePort{Name: "metrics", Port: 9090})
	web.Annotations[v1alpha1.AnnotationPort] = "web"
	p.Create(t, db)
	p.Create(t, web)
	target := tunnelID + ".cfargotunnel.com"
	wait.Eventually(t, wait.Patience, "both published", func() error {
		for _, h := range []string{dbHost, webHost} {
			rs := p.Records(t, h)
			if len(rs) != 1 || rs[0].Content != target || !rs[0].Proxied {
				return fmt.Errorf("%s: records %+v, want one proxied CNAME to %s", h, rs, target)
			}
		}
		cfg := p.TunnelConfig(t, tunnelID)
		for _, want := range []string{
			`"hostname":"` + dbHost + `","service":"tcp://db.` + ns + `.svc.cluster.local:5432"`,
			`"hostname":"` + webHost + `","service":"https://web.` + ns + `.svc.cluster.local:8443"`,
		} {
			if !strings.Contains(cfg, want) {
				return fmt.Errorf("configuration %s lacks %s", cfg, want)
			}
		}
		return nil
	})

	p.DeleteAndWait(t, db)
	p.DeleteAndWait(t, web)
	wait.Eventually(t, wait.Patience, "both unpublished", func() error {
		for _, h := range []string{dbHost, webHost} {
			if rs := p.Records(t, h); len(rs) != 0 {
				return fmt.Errorf("%s: %d records left", h, len(rs))
			}
			if strings.Contains(p.TunnelConfig(t, tunnelID), h) {
				return fmt.Errorf("%s still in the configuration", h)
			}
			if rs := p.HostnameRoutes(t, h); len(rs) != 0 {
				return fmt.Errorf("%s: %d routes left", h, len(rs))
			}
		}
		return nil
	})
}

// The port rules and bad input: each gets a Warning naming the annotation,
// and what the Service already has stays as it was.
func TestServicePortRulesAndBadInput(t *testing.T) {
	ns, tunnelID := setup(t)
	host := "app-" + ns + ".example.com"
	svc := exposedService(ns, "app", annotations(v1alpha1.AnnotationHostname, host, v1alpha1.AnnotationPublic, "true"),
		corev1.ServicePort{Name: "http", Port: 8080}, corev1.ServicePort{Name: "admin", Port: 9000})
	p.Create(t, svc)
	waitEvent(t, ns, "app", "InvalidAnnotation", "has 2 ports (http 8080, admin 9000); set "+v1alpha1.AnnotationPort)
	if n := madeFor(t, ns, "app")["PublicHostname"]; n != 0 {
		t.Fatalf("an ambiguous port was published (%d PublicHostnames)", n)
	}

	edit(t, svc, func(s *corev1.Service) { s.Annotations[v1alpha1.AnnotationPort] = "8080" })
	rule := `"hostname":"` + host + `","service":"http://app.` + ns + `.svc.cluster.local:8080"`
	wait.Eventually(t, wait.Patience, "published on port 8080", func() error {
		if cfg := p.TunnelConfig(t, tunnelID); !strings.Contains(cfg, rule) {
			return fmt.Errorf("configuration %s lacks %s", cfg, rule)
		}
		return nil
	})

	// Removing the tunnel annotation removes everything.
	edit(t, svc, func(s *corev1.Service) { delete(s.Annotations, v1alpha1.AnnotationTunnel) })
	wait.Eventually(t, wait.Patience, "unpublished", func() error {
		if rs := p.Records(t, host); len(rs) != 0 {
			return fmt.Errorf("%d records left", len(rs))
		}
		if m := madeFor(t, ns, "app"); m["HostnameRoute"]+m["PublicHostname"] != 0 {
			return fmt.Errorf("left: %v", m)
		}
		return nil
	})
}

// Bad input on a published Service: a Warning naming the annotation, and
// what works stays published. One Service a case: events about one object
// are rate limited by the API server's client.
func TestBadInputKeepsWhatAServicePublishes(t *testing.T) {
	ns, tunnelID := setup(t)
	cases := []struct {
		name, reason, says string
		edit               func(map[string]string)
	}{
		{"bad-port", "InvalidAnnotation", `"grpc" is not a port of Service bad-port (its ports: http 8080)`,
			func(a map[string]string) { a[v1alpha1.AnnotationPort] = "grpc" }},
		{"bad-protocol", "InvalidAnnotation", `must be one of http, https, http2, tcp, ssh, rdp, not "postgres"`,
			func(a map[string]string) { a[v1alpha1.AnnotationProtocol] = "postgres" }},
		{"bad-hostname", "InvalidAnnotation", v1alpha1.AnnotationHostname + `: "not a hostname"`,
			func(a map[string]string) { a[v1alpha1.AnnotationHostname] = "not a hostname" }},
		{"bad-dns", "InvalidAnnotation", "ExternalDNS is for Ingresses",
			func(a map[string]string) { a[v1alpha1.AnnotationDNS] = "ExternalDNS" }},
		{"no-hostname", "InvalidAnnotation", "set it to the public hostname",
			func(a map[string]string) { delete(a, v1alpha1.AnnotationHostname) }},
		{"typo-tunnel", "TunnelNotFound", `no CloudflareTunnel "edgee"`,
			func(a map[string]string) { a[v1alpha1.AnnotationTunnel] = "edgee" }},
	}
	host := func(name string) string { return name + "-" + ns + ".example.com" }
	rule := func(name string) string {
		return `"hostname":"` + host(name) + `","service":"http://` + name + `.` + ns + `.svc.cluster.local:8080"`
	}
	svcs := map[string]*corev1.Service{}
	for _, tc := range cases {
		svcs[tc.name] = exposedService(ns, tc.name, annotations(v1alpha1.AnnotationHostname, host(tc.name), v1alpha1.AnnotationPublic, "true"),
			corev1.ServicePort{Name: "http", Port: 8080})
		p.Create(t, svcs[tc.name])
	}
	wait.Eventually(t, wait.Patience, "all published", func() error {
		cfg := p.TunnelConfig(t, tunnelID)
		for _, tc := range cases {
			if !strings.Contains(cfg, rule(tc.name)) {
				return fmt.Errorf("configuration %s lacks %s", cfg, rule(tc.name))
			}
			// The record follows the rule (in the zone's next DNS batch).
			if rs := p.Records(t, host(tc.name)); len(rs) != 1 {
				return fmt.Errorf("%s: %d DNS records", tc.name, len(rs))
			}
		}
		return nil
	})
	for _, tc := range cases {
		edit(t, svcs[tc.name], func(s *corev1.Service) { tc.edit(s.Annotations) })
	}
	for _, tc := range cases {
		waitEvent(t, ns, tc.name, tc.reason, tc.says)
	}
	cfg := p.TunnelConfig(t, tunnelID)
	for _, tc := range cases {
		if !strings.Contains(cfg, rule(tc.name)) {
			t.Errorf("%s took the working rule down: %s", tc.name, cfg)
		}
		if rs := p.Records(t, host(tc.name)); len(rs) != 1 {
			t.Errorf("%s: %d DNS records, want the one that worked", tc.name, len(rs))
		}
	}
}

// Issue 34, bug 6: the Workers VPC service of a public Service reaches the
// Service's cluster name, not its public hostname: a Worker's traffic leaves
// the tunnel at cloudflared, inside the cluster, where the public name
// resolves to Cloudflare's edge. The public hostname keeps its private
// route (the name WARP clients ask for) and its DNS record.
func TestPublicServicesVPCServiceReachesItsClusterName(t *testing.T) {
	ns, tunnelID := setup(t)
	public, local := "x-"+ns+".example.com", "x."+ns+".svc.cluster.local"
	vpc := "x-" + ns
	p.Create(t, exposedService(ns, "x", annotations(v1alpha1.AnnotationHostname, public, v1alpha1.AnnotationPublic, "true", v1alpha1.AnnotationVPCService, vpc),
		corev1.ServicePort{Name: "http", Port: 8080}))
	wait.Eventually(t, wait.Patience, "VPC service, route and record in Cloudflare", func() error {
		ss := p.VPCServices(t, vpc)
		if len(ss) != 1 {
			return fmt.Errorf("%d VPC services", len(ss))
		}
		if h := ss[0].Host.Hostname; h != local || ptr.Deref(ss[0].TCPPort, 0) != 8080 {
			return fmt.Errorf("VPC service reaches %s:%d, want %s:8080", h, ptr.Deref(ss[0].TCPPort, 0), local)
		}
		if rs := p.HostnameRoutes(t, public); len(rs) != 1 || rs[0].TunnelID != tunnelID {
			return fmt.Errorf("routes of %s: %+v", public, rs)
		}
		if rs := p.Records(t, public); len(rs) != 1 {
			return fmt.Errorf("%d records for %s", len(rs), public)
		}
		return nil
	})
	if rs := p.HostnameRoutes(t, local); len(rs) != 0 {
		t.Errorf("the cluster name is routed privately too: %+v", rs)
	}
}

// Issue 34, bug 5: a public Service whose hostname an older PublicHostname
// holds loses its private route with its public claim: it makes none, says
// why, and keeps its PublicHostname in line; once the holder lets go, the
// Service holds the hostname, its route included.
func TestAServiceYieldsThePrivateRouteOfAHostnameItLostPublicly(t *testing.T) {
	ns, tunnelID := setup(t)
	host := "held-" + ns + ".example.com"
	holder := &v1alpha1.PublicHostname{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "holder"},
		Spec: v1alpha1.PublicHostnameSpec{TunnelRef: v1alpha1.TunnelReference{Name: "edge"}, Hostname: host,
			Origin: &v1alpha1.Origin{URL: ptr.To("http_status:418")}},
	}
	p.Create(t, holder)
	wait.Eventually(t, wait.Patience, "the holder published", func() error {
		if cfg := p.TunnelConfig(t, tunnelID); !strings.Contains(cfg, `"hostname":"`+host+`","service":"http_status:418"`) {
			return fmt.Errorf("configuration %s", cfg)
		}
		return nil
	})
	wait.NextSecond()
	p.Create(t, exposedService(ns, "late", annotations(v1alpha1.AnnotationHostname, host, v1alpha1.AnnotationPublic, "true"), corev1.ServicePort{Name: "http", Port: 8080}))
	waitEvent(t, ns, "late", "HostnameConflict", "private route")
	wait.Eventually(t, wait.Patience, "no route for the loser", func() error {
		if n := madeFor(t, ns, "late"); n["HostnameRoute"] != 0 || n["PublicHostname"] != 1 {
			return fmt.Errorf("made %v, want its PublicHostname only", n)
		}
		return nil
	})
	if rs := p.HostnameRoutes(t, host); len(rs) != 0 {
		t.Errorf("routes in Cloudflare %+v", rs)
	}

	p.DeleteAndWait(t, holder)
	wait.Eventually(t, wait.Patience, "the Service holds the hostname, its route included", func() error {
		if rs := p.HostnameRoutes(t, host); len(rs) != 1 || rs[0].TunnelID != tunnelID {
			return fmt.Errorf("routes in Cloudflare %+v", rs)
		}
		return published(t, tunnelID, host)
	})
}
