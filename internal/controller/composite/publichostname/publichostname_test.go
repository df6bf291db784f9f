package publichostname_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	dnsv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/dns/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/composite/publichostname"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/providertest"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

var p *providertest.Provider

func TestMain(m *testing.M) { os.Exit(providertest.Run(m, &p)) }

const aud = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// setup makes a namespace with a running CloudflareTunnel and a Service.
func setup(t *testing.T) (ns, tunnelID string) {
	t.Helper()
	ns = p.Namespace(t)
	cr := &v1alpha1.CloudflareTunnel{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "edge"},
		Spec:       v1alpha1.CloudflareTunnelSpec{TunnelName: ptr.To("edge-" + ns), Replicas: ptr.To[int32](1)},
	}
	p.CreateTunnel(t, cr)
	p.Create(t, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 8443, TargetPort: intstr.FromInt32(8443)}}},
	})
	return ns, cr.Status.TunnelID
}

func hostname(ns, name, host string, mutate ...func(*v1alpha1.PublicHostname)) *v1alpha1.PublicHostname {
	ph := &v1alpha1.PublicHostname{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.PublicHostnameSpec{
			TunnelRef: v1alpha1.TunnelReference{Name: "edge"},
			Hostname:  host,
			Origin:    &v1alpha1.Origin{Service: &v1alpha1.ServiceOrigin{Name: "web", Port: intstr.FromString("https"), Protocol: v1alpha1.ProtocolHTTPS}},
		},
	}
	for _, m := range mutate {
		m(ph)
	}
	return ph
}

func records(t *testing.T, name string) []cloudflare.DNSRecord {
	t.Helper()
	rs, err := p.Cloudflare.ListDNSRecords(context.Background(), sim.ZoneID("example.com"), cloudflare.DNSRecordFilter{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// config is the tunnel's configuration as Cloudflare holds it.
func config(t *testing.T, id string) (ztv1alpha1.TunnelConfig, int) {
	t.Helper()
	tc, err := p.Cloudflare.GetTunnelConfiguration(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var c ztv1alpha1.TunnelConfig
	if len(tc.Config) > 0 {
		if err := json.Unmarshal(tc.Config, &c); err != nil {
			t.Fatal(err)
		}
	}
	return c, tc.Version
}

func rulesFor(c ztv1alpha1.TunnelConfig, host string) []ztv1alpha1.IngressRule {
	var out []ztv1alpha1.IngressRule
	for _, r := range c.Ingress {
		if ptr.Deref(r.Hostname, "") == host {
			out = append(out, r)
		}
	}
	return out
}

func waitReady(t *testing.T, ph *v1alpha1.PublicHostname) {
	t.Helper()
	wait.Eventually(t, wait.Patience, "PublicHostname "+ph.Name+" Ready", func() error {
		if err := p.Get(ph); err != nil {
			return err
		}
		if c := ph.GetCondition(xpv2.TypeReady); c.Status != corev1.ConditionTrue {
			return fmt.Errorf("Ready=%s %s: %s", c.Status, c.Reason, c.Message)
		}
		return nil
	})
}

func waitEvent(t *testing.T, ns, name, reason, contains string) {
	t.Helper()
	p.WaitWarning(t, ns, name, reason, contains)
}

// A hostname published with no Ingress at all: its DNS record, its rule with
// every origin option in the form cloudflared reads (the simulator checks
// each request against Cloudflare's OpenAPI document), the CA Secret mounted
// where the rule says, and Ready with the configuration's version.
func TestAHandMadePublicHostname(t *testing.T) {
	ns, tunnelID := setup(t)
	host := "app-" + ns + ".example.com"
	ph := hostname(ns, "app", host, func(ph *v1alpha1.PublicHostname) {
		ph.Spec.Paths = []v1alpha1.PathOrigin{{Path: "/status", PathType: v1alpha1.PathTypeExact, Origin: v1alpha1.Origin{URL: ptr.To("http_status:204")}}}
		ph.Spec.OriginRequest = &v1alpha1.OriginOptions{
			OriginServerName: ptr.To("web.internal"), MatchSNIToHost: ptr.To(false), HTTPHostHeader: ptr.To("web.internal"),
			ConnectTimeoutSeconds: ptr.To[int64](5), TLSTimeoutSeconds: ptr.To[int64](8),
			CAPoolSecretRef: &v1alpha1.LocalSecretKeySelector{Name: "web-ca", Key: "ca.pem"},
		}
		ph.Spec.Access = &v1alpha1.Access{TeamName: "acme", AudTags: []string{aud}}
	})
	p.Create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-ca"}, Data: map[string][]byte{"ca.pem": []byte("-----BEGIN CERTIFICATE-----\n")}})
	p.Create(t, ph)
	waitReady(t, ph)

	if rs := records(t, host); len(rs) != 1 || rs[0].Type != "CNAME" || !rs[0].Proxied || rs[0].Content != tunnelID+".cfargotunnel.com" {
		t.Fatalf("DNS records %+v, want one proxied CNAME to the tunnel", rs)
	}
	// Its DNS record is what crossplane resource trace shows as its child.
	wait.Eventually(t, wait.Patience, "spec.crossplane.resourceRefs names the DNS record", func() error {
		if err := p.Get(ph); err != nil {
			return err
		}
		recs := &dnsv1alpha1.DNSRecordList{}
		if err := p.Client.List(context.Background(), recs, client.InNamespace(ns)); err != nil {
			return err
		}
		if len(recs.Items) != 1 {
			return fmt.Errorf("%d DNSRecords, want 1", len(recs.Items))
		}
		want := []v1alpha1.CompositeResourceRef{{APIVersion: "dns.tunnels.cloudflare.com/v1alpha1", Kind: "DNSRecord", Name: recs.Items[0].Name}}
		if ph.Spec.Crossplane == nil || !cmp.Equal(want, ph.Spec.Crossplane.ResourceRefs) {
			return fmt.Errorf("spec.crossplane %+v, want resourceRefs %+v", ph.Spec.Crossplane, want)
		}
		return nil
	})
	c, version := config(t, tunnelID)
	opts := &ztv1alpha1.OriginRequest{
		OriginServerName: ptr.To("web.internal"), MatchSNIToHost: ptr.To(false), HTTPHostHeader: ptr.To("web.internal"),
		ConnectTimeout: ptr.To[int64](5), TLSTimeout: ptr.To[int64](8), CAPool: ptr.To("/etc/cloudflared/ca/web-ca/ca.pem"),
		Access: &ztv1alpha1.OriginAccess{Required: ptr.To(true), TeamName: "acme", AudTag: []string{aud}},
	}
	want := []ztv1alpha1.IngressRule{
		{Hostname: ptr.To(host), Path: ptr.To("^/status$"), Service: "http_status:204", OriginRequest: opts},
		{Hostname: ptr.To(host), Service: "https://web." + ns + ".svc.cluster.local:8443", OriginRequest: opts},
	}
	if diff := cmp.Diff(want, rulesFor(c, host)); diff != "" {
		t.Errorf("rules in Cloudflare (-want +got):\n%s", diff)
	}
	// The answer names the version that first carried these rules: a later
	// write for other hostnames of the tunnel carries them unchanged and
	// leaves the answer as it was.
	if got := ph.Status.Tunnel; got == nil || !got.Accepted || got.ConfigVersion < 1 || got.ConfigVersion > version || got.Rules != 2 {
		t.Errorf("status.tunnel %+v, want accepted with 2 rules in a version up to %d", got, version)
	}

	t.Run("TheCASecretIsMountedWhereTheRuleSays", func(t *testing.T) {
		wait.Eventually(t, wait.Patience, "CA volume in the cloudflared Deployment", func() error {
			dep := &appsv1.Deployment{}
			if err := p.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "edge-cloudflared"}, dep); err != nil {
				return err
			}
			pod := dep.Spec.Template.Spec
			for _, v := range pod.Volumes {
				if v.Secret == nil || v.Secret.SecretName != "web-ca" {
					continue
				}
				for _, m := range pod.Containers[0].VolumeMounts {
					if m.Name == v.Name && m.ReadOnly && m.MountPath+"/"+v.Secret.Items[0].Path == *opts.CAPool {
						return nil
					}
				}
			}
			return fmt.Errorf("volumes %+v mounts %+v", pod.Volumes, pod.Containers[0].VolumeMounts)
		})
	})

	t.Run("DNSNoneKeepsTheRuleAndDeletesTheRecord", func(t *testing.T) {
		wait.Eventually(t, wait.Patience, "dns None", func() error {
			if err := p.Get(ph); err != nil {
				return err
			}
			ph.Spec.DNS = v1alpha1.DNSNone
			return p.Client.Update(context.Background(), ph)
		})
		wait.Eventually(t, wait.Patience, "record gone, rules kept", func() error {
			if rs := records(t, host); len(rs) != 0 {
				return fmt.Errorf("records %+v", rs)
			}
			if c, _ := config(t, tunnelID); len(rulesFor(c, host)) != 2 {
				return fmt.Errorf("rules %+v", c.Ingress)
			}
			return nil
		})
		waitReady(t, ph)
	})

	t.Run("ATunnelTypoLosesNothing", func(t *testing.T) {
		wait.Eventually(t, wait.Patience, "tunnelRef typo", func() error {
			if err := p.Get(ph); err != nil {
				return err
			}
			ph.Spec.TunnelRef.Name = "egde"
			return p.Client.Update(context.Background(), ph)
		})
		waitEvent(t, ns, "app", string(publichostname.ReasonTunnelNotFound), "egde")
		p.WaitServed(t, 4, "GET", tunnelID+"/configurations$") // read at four more polls: past the configuration batch window
		if c, _ := config(t, tunnelID); len(rulesFor(c, host)) != 2 {
			t.Errorf("the typo took the rules off the tunnel: %+v", c.Ingress)
		}
		wait.Eventually(t, wait.Patience, "typo fixed", func() error {
			if err := p.Get(ph); err != nil {
				return err
			}
			ph.Spec.TunnelRef.Name = "edge"
			return p.Client.Update(context.Background(), ph)
		})
		waitReady(t, ph)
	})

	p.DeleteAndWait(t, ph)
	wait.Eventually(t, wait.Patience, "rules gone", func() error {
		if c, _ := config(t, tunnelID); len(rulesFor(c, host)) != 0 {
			return fmt.Errorf("rules %+v", c.Ingress)
		}
		return nil
	})
}

// Two PublicHostnames claiming one hostname: the older keeps it, the newer
// is told why on its status and by an event, and takes over once the older
// goes.
func TestTheOlderClaimKeepsAHostname(t *testing.T) {
	ns, tunnelID := setup(t)
	host := "shared-" + ns + ".example.com"
	first := hostname(ns, "first", host)
	p.Create(t, first)
	waitReady(t, first)
	wait.NextSecond()
	second := hostname(ns, "second", host, func(ph *v1alpha1.PublicHostname) {
		ph.Spec.Origin = &v1alpha1.Origin{URL: ptr.To("http_status:503")}
	})
	p.Create(t, second)

	wait.Eventually(t, wait.Patience, "the newer told it lost", func() error {
		if err := p.Get(second); err != nil {
			return err
		}
		c := second.GetCondition(v1alpha1.TypeAccepted)
		if c.Status != corev1.ConditionFalse || c.Reason != "HostnameConflict" || !strings.Contains(c.Message, "first") {
			return fmt.Errorf("Accepted=%s %s: %s", c.Status, c.Reason, c.Message)
		}
		if second.Status.Tunnel == nil || second.Status.Tunnel.ClaimedBy != "first" {
			return fmt.Errorf("status.tunnel %+v", second.Status.Tunnel)
		}
		return nil
	})
	waitEvent(t, ns, "second", "HostnameConflict", "first")
	c, _ := config(t, tunnelID)
	if rs := rulesFor(c, host); len(rs) != 1 || !strings.HasPrefix(rs[0].Service, "https://web.") {
		t.Errorf("rules %+v, want only the older claim's", rs)
	}
	if rs := records(t, host); len(rs) != 1 {
		t.Errorf("%d DNS records, want 1", len(rs))
	}

	p.DeleteAndWait(t, first)
	waitReady(t, second)
	c, _ = config(t, tunnelID)
	if rs := rulesFor(c, host); len(rs) != 1 || rs[0].Service != "http_status:503" {
		t.Errorf("rules %+v, want the remaining claim's", rs)
	}
	wait.Eventually(t, wait.Patience, "one record, the remaining claim's", func() error {
		if rs := records(t, host); len(rs) != 1 {
			return fmt.Errorf("records %+v", rs)
		}
		return nil
	})
	p.DeleteAndWait(t, second)
	wait.Eventually(t, wait.Patience, "record gone", func() error {
		if rs := records(t, host); len(rs) != 0 {
			return fmt.Errorf("records %+v", rs)
		}
		return nil
	})
}

// A named port that no Service has yet: nothing published, and the
// condition says what it waits for; the Service appearing publishes it.
func TestANamedPortWaitsForItsService(t *testing.T) {
	ns, tunnelID := setup(t)
	host := "later-" + ns + ".example.com"
	ph := hostname(ns, "later", host, func(ph *v1alpha1.PublicHostname) {
		ph.Spec.Origin.Service.Name = "api"
		ph.Spec.Origin.Service.Port = intstr.FromString("grpc")
		ph.Spec.Origin.Service.Protocol = v1alpha1.ProtocolHTTP2
	})
	p.Create(t, ph)
	wait.Eventually(t, wait.Patience, "waiting for the Service", func() error {
		if err := p.Get(ph); err != nil {
			return err
		}
		if c := ph.GetCondition(v1alpha1.TypeValid); c.Reason != publichostname.ReasonWaitingForService {
			return fmt.Errorf("Valid=%s %s: %s", c.Status, c.Reason, c.Message)
		}
		return nil
	})
	if c, _ := config(t, tunnelID); len(rulesFor(c, host)) != 0 {
		t.Errorf("published before its port resolves: %+v", c.Ingress)
	}
	p.Create(t, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "api"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "grpc", Port: 9443, TargetPort: intstr.FromInt32(9443)}}},
	})
	waitReady(t, ph)
	c, _ := config(t, tunnelID)
	want := []ztv1alpha1.IngressRule{{Hostname: ptr.To(host), Service: "https://api." + ns + ".svc.cluster.local:9443", OriginRequest: &ztv1alpha1.OriginRequest{HTTP2Origin: ptr.To(true)}}}
	if diff := cmp.Diff(want, rulesFor(c, host)); diff != "" {
		t.Errorf("rules (-want +got):\n%s", diff)
	}
	p.DeleteAndWait(t, ph)
}

// A hostname being deleted is not shown Ready: while its finalizer waits for
// its DNS record (held here by a finalizer of the test's, so the wait cannot
// end before the status is read), Ready is False, Deleting, naming the
// record.
func TestADeletedHostnameIsNotReady(t *testing.T) {
	ns, _ := setup(t)
	host := "bye-" + ns + ".example.com"
	ph := hostname(ns, "bye", host)
	p.Create(t, ph)
	waitReady(t, ph)
	if ph.Status.DNSRecord == "" {
		t.Fatal("no DNSRecord in status")
	}
	const hold = "test.tunnels.cloudflare.com/hold"
	rec := &dnsv1alpha1.DNSRecord{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: ph.Status.DNSRecord}}
	wait.Eventually(t, wait.Patience, "hold on the DNSRecord", func() error {
		if err := p.Get(rec); err != nil {
			return err
		}
		rec.Finalizers = append(rec.Finalizers, hold)
		return p.Client.Update(context.Background(), rec)
	})
	if err := p.Client.Delete(context.Background(), ph); err != nil {
		t.Fatal(err)
	}
	wait.Eventually(t, wait.Patience, "Ready=False Deleting naming the record", func() error {
		if err := p.Get(ph); err != nil {
			return err
		}
		c := ph.GetCondition(xpv2.TypeReady)
		if c.Status != corev1.ConditionFalse || c.Reason != publichostname.ReasonDeleting || !strings.Contains(c.Message, "DNSRecord "+rec.Name) {
			return fmt.Errorf("Ready=%s %s: %s", c.Status, c.Reason, c.Message)
		}
		return nil
	})
	wait.Eventually(t, wait.Patience, "hold released", func() error {
		if err := p.Get(rec); err != nil {
			return err
		}
		rec.Finalizers = slices.DeleteFunc(rec.Finalizers, func(f string) bool { return f == hold })
		return p.Client.Update(context.Background(), rec)
	})
	p.DeleteAndWait(t, ph)
}

// A hostname whose DNS record Cloudflare refuses (no zone of the account
// holds it) has its rules withheld from the tunnel, and Valid says so
// instead of counting rules the tunnel answers it does not have (NoRules).
func TestARefusedRecordIsNotValid(t *testing.T) {
	ns, _ := setup(t)
	ph := hostname(ns, "nozone", "app-"+ns+".example.net")
	p.Create(t, ph)
	wait.Eventually(t, wait.Patience, "Valid=False RecordRefused beside the tunnel's NoRules", func() error {
		if err := p.Get(ph); err != nil {
			return err
		}
		v, a := ph.GetCondition(v1alpha1.TypeValid), ph.GetCondition(v1alpha1.TypeAccepted)
		if a.Reason != publichostname.ReasonNoRules {
			return fmt.Errorf("Accepted=%s %s: %s", a.Status, a.Reason, a.Message)
		}
		if v.Status != corev1.ConditionFalse || v.Reason != v1alpha1.ReasonDNSRefused {
			return fmt.Errorf("Valid=%s %s: %s", v.Status, v.Reason, v.Message)
		}
		return nil
	})
	// No one edits the DNSRecord made for it: the advice is the hostname
	// (and the annotation a Service's or Ingress's author changes).
	if c := ph.GetCondition(v1alpha1.TypeDNSReady); strings.Contains(c.Message, "zoneId") || !strings.Contains(c.Message, v1alpha1.AnnotationHostname) {
		t.Errorf("DNSReady message %q advises the DNSRecord's fields, not the hostname", c.Message)
	}
	p.DeleteAndWait(t, ph)
}

// A CA pool Secret that does not exist yet: Valid says the hostname waits
// for that Secret (not for a Service, which is there), with a Warning naming
// it; the Secret appearing publishes the hostname.
func TestAMissingCASecretIsWaitedForByName(t *testing.T) {
	ns, _ := setup(t)
	ph := hostname(ns, "ca", "ca-"+ns+".example.com", func(ph *v1alpha1.PublicHostname) {
		ph.Spec.OriginRequest = &v1alpha1.OriginOptions{CAPoolSecretRef: &v1alpha1.LocalSecretKeySelector{Name: "late-ca", Key: "ca.pem"}}
	})
	p.Create(t, ph)
	wait.Eventually(t, wait.Patience, "waiting for the Secret", func() error {
		if err := p.Get(ph); err != nil {
			return err
		}
		if c := ph.GetCondition(v1alpha1.TypeValid); c.Reason != publichostname.ReasonWaitingForSecret || !strings.Contains(c.Message, "Secret late-ca") {
			return fmt.Errorf("Valid=%s %s: %s", c.Status, c.Reason, c.Message)
		}
		return nil
	})
	waitEvent(t, ns, "ca", string(publichostname.ReasonWaitingForSecret), "late-ca")
	p.Create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "late-ca"}, Data: map[string][]byte{"ca.pem": []byte("-----BEGIN CERTIFICATE-----\n")}})
	waitReady(t, ph)
	p.DeleteAndWait(t, ph)
}
