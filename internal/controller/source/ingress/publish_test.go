package ingress_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	dnsv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/dns/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/ingress/translate"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

const aud = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// rulesOf are the tunnel's rules for host, as Cloudflare holds them.
func rulesOf(t *testing.T, tunnelID, host string) []ztv1alpha1.IngressRule {
	t.Helper()
	var c ztv1alpha1.TunnelConfig
	if err := json.Unmarshal([]byte(tunnelConfig(t, tunnelID)), &c); err != nil {
		t.Fatal(err)
	}
	var out []ztv1alpha1.IngressRule
	for _, r := range c.Ingress {
		if ptr.Deref(r.Hostname, "") == host {
			out = append(out, r)
		}
	}
	return out
}

func publicHostnamesOf(t *testing.T, ing client.Object) []v1alpha1.PublicHostname {
	t.Helper()
	l := &v1alpha1.PublicHostnameList{}
	if err := p.Client.List(context.Background(), l, client.InNamespace(ing.GetNamespace()), client.MatchingLabels{translate.LabelIngress: ing.GetName()}); err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// Every origin option annotation reaches the tunnel's configuration in the
// form cloudflared reads (the simulator checks each request against
// Cloudflare's OpenAPI document), through the Ingress's PublicHostname.
func TestOriginOptionsReachTheTunnel(t *testing.T) {
	ns, tunnelID := setup(t)
	host := "tls-" + ns + ".example.com"
	ing := ingress(ns, "tls", map[string]string{
		v1alpha1.AnnotationTunnel:               "edge",
		v1alpha1.AnnotationPublic:               "true",
		v1alpha1.AnnotationOriginProtocol:       "https",
		v1alpha1.AnnotationOriginServerName:     "web.internal",
		v1alpha1.AnnotationOriginMatchSNIToHost: "true",
		v1alpha1.AnnotationOriginHostHeader:     "web.internal",
		v1alpha1.AnnotationOriginConnectTimeout: "5s",
		v1alpha1.AnnotationOriginTLSTimeout:     "10",
		v1alpha1.AnnotationOriginCASecret:       "web-ca",
		v1alpha1.AnnotationAccessTeam:           "acme",
		v1alpha1.AnnotationAccessAudTags:        aud,
	}, host)
	p.Create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-ca"}, Data: map[string][]byte{v1alpha1.DefaultCAKey: []byte("-----BEGIN CERTIFICATE-----\n")}})
	p.Create(t, ing)
	opts := &ztv1alpha1.OriginRequest{
		OriginServerName: ptr.To("web.internal"), MatchSNIToHost: ptr.To(true), HTTPHostHeader: ptr.To("web.internal"),
		ConnectTimeout: ptr.To[int64](5), TLSTimeout: ptr.To[int64](10), CAPool: ptr.To("/etc/cloudflared/ca/web-ca/ca.crt"),
		Access: &ztv1alpha1.OriginAccess{Required: ptr.To(true), TeamName: "acme", AudTag: []string{aud}},
	}
	want := []ztv1alpha1.IngressRule{
		{Hostname: ptr.To(host), Path: ptr.To("^/api(/|$)"), Service: "https://api." + ns + ".svc.cluster.local:8080", OriginRequest: opts},
		{Hostname: ptr.To(host), Service: "https://web." + ns + ".svc.cluster.local:80", OriginRequest: opts},
	}
	wait.Eventually(t, wait.Patience, "rules with every origin option", func() error {
		if diff := cmp.Diff(want, rulesOf(t, tunnelID, host)); diff != "" {
			return fmt.Errorf("rules (-want +got):\n%s", diff)
		}
		return nil
	})
	phs := publicHostnamesOf(t, ing)
	if len(phs) != 1 || phs[0].Spec.Hostname != host || phs[0].Spec.TunnelRef.Name != "edge" {
		t.Fatalf("PublicHostnames %+v, want one for %s on edge", phs, host)
	}

	t.Run("ABadOptionKeepsTheWorkingRule", func(t *testing.T) {
		setAnnotation(t, ing, v1alpha1.AnnotationOriginConnectTimeout, "forever")
		waitEvent(t, ns, "tls", "InvalidIngress", v1alpha1.AnnotationOriginConnectTimeout)
		p.WaitServed(t, 4, "GET", tunnelID+"/configurations$") // read at four more polls: past the configuration batch window
		if diff := cmp.Diff(want, rulesOf(t, tunnelID, host)); diff != "" {
			t.Errorf("a bad annotation changed the working rules (-want +got):\n%s", diff)
		}
		setAnnotation(t, ing, v1alpha1.AnnotationOriginConnectTimeout, "5s")
	})

	t.Run("AMalformedAccessAnnotationKeepsTheProtectedRule", func(t *testing.T) {
		setAnnotation(t, ing, v1alpha1.AnnotationAccessAudTags, "not-a-tag")
		waitEvent(t, ns, "tls", "InvalidIngress", v1alpha1.AnnotationAccessAudTags)
		p.WaitServed(t, 4, "GET", tunnelID+"/configurations$") // read at four more polls: past the configuration batch window
		for _, r := range rulesOf(t, tunnelID, host) {
			if r.OriginRequest == nil || r.OriginRequest.Access == nil || !ptr.Deref(r.OriginRequest.Access.Required, false) {
				t.Fatalf("rule %+v published without its Access check", r)
			}
		}
		if diff := cmp.Diff(want, rulesOf(t, tunnelID, host)); diff != "" {
			t.Errorf("rules changed (-want +got):\n%s", diff)
		}
	})
	deleteIngress(t, ing)
	if rs := recordsNamed(t, host); len(rs) != 0 {
		t.Errorf("records left: %+v", rs)
	}
}

// A new public Ingress whose Access annotation is malformed is not published
// at all: no DNS record, no rule — never published without protection.
func TestAMalformedAccessAnnotationPublishesNothing(t *testing.T) {
	ns, tunnelID := setup(t)
	host := "guarded-" + ns + ".example.com"
	ing := ingress(ns, "guarded", map[string]string{
		v1alpha1.AnnotationTunnel:         "edge",
		v1alpha1.AnnotationPublic:         "true",
		v1alpha1.AnnotationAccessRequired: "true",
		v1alpha1.AnnotationAccessTeam:     "acme",
		// no audience tag
	}, host)
	p.Create(t, ing)
	waitEvent(t, ns, "guarded", "InvalidIngress", v1alpha1.AnnotationAccessAudTags)
	wait.Eventually(t, wait.Patience, "its private route (the rest of the Ingress works)", func() error {
		if len(routesFor(t, host)) != 1 {
			return fmt.Errorf("no route yet")
		}
		return nil
	})
	// The tunnel holds no rules yet, so its configuration is not read:
	// four more observations of the tunnels, past the batch window.
	p.WaitServed(t, 4, "GET", "/cfd_tunnel$")
	if rs := rulesOf(t, tunnelID, host); len(rs) != 0 {
		t.Errorf("published without its Access check: %+v", rs)
	}
	if rs := recordsNamed(t, host); len(rs) != 0 {
		t.Errorf("DNS records %+v for a hostname that must not be published", rs)
	}
	if phs := publicHostnamesOf(t, ing); len(phs) != 0 {
		t.Errorf("PublicHostnames %+v", phs)
	}
	setAnnotation(t, ing, v1alpha1.AnnotationAccessAudTags, aud)
	wait.Eventually(t, wait.Patience, "published with the check once fixed", func() error {
		rs := rulesOf(t, tunnelID, host)
		if len(rs) == 0 {
			return fmt.Errorf("not yet")
		}
		for _, r := range rs {
			if r.OriginRequest == nil || r.OriginRequest.Access == nil {
				return fmt.Errorf("rule %+v without Access", r)
			}
		}
		return nil
	})
	deleteIngress(t, ing)
}

// An Ingress's DNS record made before published hostnames existed (owned by
// the Ingress, as the previous version made it) is taken over by its
// PublicHostname, not deleted and recreated: the Cloudflare record keeps its
// ID and no DNS write reaches Cloudflare.
func TestAnOlderIngressRecordIsTakenOverNotRecreated(t *testing.T) {
	ns, tunnelID := setup(t)
	host := "legacy-" + ns + ".example.com"
	ing := ingress(ns, "legacy", map[string]string{v1alpha1.AnnotationTunnel: "edge", v1alpha1.AnnotationPublic: "true"}, host)
	ing.Spec.IngressClassName = ptr.To("someone-else") // not ours until the record is in place
	p.Create(t, ing)

	rec := &dnsv1alpha1.DNSRecord{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: translate.MRName(ing.Name, translate.KindDNSRecord, host),
			Labels:          map[string]string{translate.LabelIngress: ing.Name, translate.LabelTunnel: "edge"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "networking.k8s.io/v1", Kind: "Ingress", Name: ing.Name, UID: ing.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
		},
		Spec: dnsv1alpha1.DNSRecordSpec{ForProvider: dnsv1alpha1.DNSRecordParameters{Name: host, Type: "CNAME", Content: tunnelID + ".cfargotunnel.com", Proxied: ptr.To(true)}},
	}
	p.Create(t, rec)
	p.WaitReady(t, rec)
	before := recordsNamed(t, host)
	if len(before) != 1 {
		t.Fatalf("records %+v", before)
	}
	writes := func() int {
		st := p.Sim.Stats()
		return st["dns_records.create"].Requests + st["dns_records.delete"].Requests
	}
	w0 := writes()

	wait.Eventually(t, wait.Patience, "the Ingress is ours", func() error {
		if err := p.Get(ing); err != nil {
			return err
		}
		ing.Spec.IngressClassName = ptr.To("cloudflare")
		return p.Client.Update(context.Background(), ing)
	})
	wait.Eventually(t, wait.Patience, "the record taken over by the PublicHostname and the Ingress's address set", func() error {
		got := &dnsv1alpha1.DNSRecord{}
		if err := p.Client.Get(context.Background(), client.ObjectKeyFromObject(rec), got); err != nil {
			return err
		}
		if got.UID != rec.UID {
			return fmt.Errorf("the DNSRecord was recreated")
		}
		c := metav1.GetControllerOf(got)
		if c == nil || c.Kind != v1alpha1.PublicHostnameKind {
			return fmt.Errorf("controller %+v", c)
		}
		if err := p.Get(ing); err != nil {
			return err
		}
		if lb := ing.Status.LoadBalancer.Ingress; len(lb) != 1 || lb[0].Hostname != tunnelID+".cfargotunnel.com" {
			return fmt.Errorf("address %+v", lb)
		}
		if len(rulesOf(t, tunnelID, host)) == 0 {
			return fmt.Errorf("no rules yet")
		}
		return nil
	})
	after := recordsNamed(t, host)
	if len(after) != 1 || after[0].ID != before[0].ID {
		t.Errorf("records %+v, want the same record %s", after, before[0].ID)
	}
	if n := writes() - w0; n != 0 {
		t.Errorf("%d DNS creates or deletes reached Cloudflare during the takeover, want 0", n)
	}
	wait.Eventually(t, wait.Patience, "its PublicHostname Ready with the record", func() error {
		phs := publicHostnamesOf(t, ing)
		if len(phs) != 1 || phs[0].Status.DNSRecord != rec.Name {
			return fmt.Errorf("%d PublicHostnames, want one with DNSRecord %s", len(phs), rec.Name)
		}
		if c := phs[0].GetCondition(xpv2.TypeReady); c.Status != corev1.ConditionTrue {
			return fmt.Errorf("Ready=%s %s: %s", c.Status, c.Reason, c.Message)
		}
		return nil
	})
	deleteIngress(t, ing)
	if rs := recordsNamed(t, host); len(rs) != 0 {
		t.Errorf("records left: %+v", rs)
	}
}

// A hand-made PublicHostname older than an Ingress's claim on the same
// hostname keeps it; the Ingress is told.
func TestAnIngressLosesAHostnameToAnOlderPublicHostname(t *testing.T) {
	ns, tunnelID := setup(t)
	host := "claimed-" + ns + ".example.com"
	ph := &v1alpha1.PublicHostname{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hand-made"},
		Spec: v1alpha1.PublicHostnameSpec{TunnelRef: v1alpha1.TunnelReference{Name: "edge"}, Hostname: host,
			Origin: &v1alpha1.Origin{URL: ptr.To("http_status:418")}},
	}
	p.Create(t, ph)
	wait.Eventually(t, wait.Patience, "the hand-made hostname published", func() error {
		if rs := rulesOf(t, tunnelID, host); len(rs) != 1 || rs[0].Service != "http_status:418" {
			return fmt.Errorf("rules %+v", rs)
		}
		return nil
	})
	wait.NextSecond()
	ing := ingress(ns, "late", map[string]string{v1alpha1.AnnotationTunnel: "edge", v1alpha1.AnnotationPublic: "true"}, host)
	p.Create(t, ing)
	waitEvent(t, ns, "late", "HostnameConflict", "hand-made")
	if rs := rulesOf(t, tunnelID, host); len(rs) != 1 || rs[0].Service != "http_status:418" {
		t.Errorf("rules %+v, want the older claim's only", rs)
	}
	if err := p.Get(ing); err != nil {
		t.Fatal(err)
	}
	if lb := ing.Status.LoadBalancer.Ingress; len(lb) != 0 && strings.Contains(lb[0].Hostname, "cfargotunnel") {
		// The record is the hand-made hostname's; the Ingress publishes nothing.
		t.Errorf("address %+v on an Ingress that publishes nothing", lb)
	}
	deleteIngress(t, ing)
	p.DeleteAndWait(t, ph)
}
