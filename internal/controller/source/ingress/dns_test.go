package ingress_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/externaldns"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

func dnsEndpoint(t *testing.T, ns, name string) (*unstructured.Unstructured, error) {
	t.Helper()
	ep := &unstructured.Unstructured{}
	ep.SetGroupVersionKind(externaldns.GroupVersionKind)
	err := p.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, ep)
	return ep, err
}

func annotate(t *testing.T, ing *networkingv1.Ingress, key, value string) {
	t.Helper()
	p.Edit(t, ing, func() { ing.Annotations[key] = value })
}

func hasRule(t *testing.T, tunnelID, host string) bool {
	t.Helper()
	return strings.Contains(tunnelConfig(t, tunnelID), `"hostname":"`+host+`"`)
}

// The DNS annotation: None publishes the rules and writes no record;
// ExternalDNS warns while the DNSEndpoint kind is missing (the rules are
// published all the same), writes one DNSEndpoint once it is installed, and
// removes it when the Ingress goes back to DNSRecord mode, which makes the
// record; a bad value changes nothing. The only test of this package that
// installs external-dns's CRD.
func TestDNSModes(t *testing.T) {
	ns, tunnelID := setup(t)
	host := "dns-modes-" + ns + ".example.com"
	ing := ingress(ns, "site", map[string]string{
		v1alpha1.AnnotationTunnel: "edge",
		v1alpha1.AnnotationPublic: "true",
		v1alpha1.AnnotationDNS:    "None",
	}, host)
	p.Create(t, ing)
	wait.Eventually(t, wait.Patience, "the rules of "+host, func() error {
		if !hasRule(t, tunnelID, host) {
			return fmt.Errorf("not in the tunnel's configuration yet")
		}
		if err := p.Get(ing); err != nil {
			return err
		}
		if a := ing.Status.LoadBalancer.Ingress; len(a) != 1 || a[0].Hostname != tunnelID+".cfargotunnel.com" {
			return fmt.Errorf("address %+v, want the tunnel's", a)
		}
		return nil
	})
	if rs := recordsNamed(t, host); len(rs) > 0 {
		t.Errorf("DNS mode None made records: %+v", rs)
	}

	annotate(t, ing, v1alpha1.AnnotationDNS, "Route53")
	waitEvent(t, ns, ing.Name, "InvalidIngress", "Route53")
	if !hasRule(t, tunnelID, host) {
		t.Errorf("a bad DNS annotation unpublished %s", host)
	}

	annotate(t, ing, v1alpha1.AnnotationDNS, "ExternalDNS")
	waitEvent(t, ns, ing.Name, "DNSEndpointCRDMissing", "externaldns.k8s.io")
	if !hasRule(t, tunnelID, host) {
		t.Errorf("%s was unpublished while the DNSEndpoint kind is missing", host)
	}

	p.InstallThirdPartyCRDs(t, "external-dns")
	var ep *unstructured.Unstructured
	wait.Eventually(t, wait.Patience, "the Ingress's DNSEndpoint", func() error {
		var err error
		ep, err = dnsEndpoint(t, ns, ing.Name)
		return err
	})
	if got, want := externaldns.Hosts(ep), []string{host}; !cmp.Equal(got, want) {
		t.Errorf("DNSEndpoint hosts = %v, want %v", got, want)
	}
	eps := ep.Object["spec"].(map[string]any)["endpoints"].([]any)
	if e := eps[0].(map[string]any); e["targets"].([]any)[0] != tunnelID+".cfargotunnel.com" || e["recordType"] != "CNAME" {
		t.Errorf("endpoint %+v, want a CNAME to the tunnel", e)
	}
	if rs := recordsNamed(t, host); len(rs) > 0 {
		t.Errorf("ExternalDNS mode made records through Cloudflare: %+v", rs)
	}

	annotate(t, ing, v1alpha1.AnnotationDNS, "DNSRecord")
	wait.Eventually(t, wait.Patience, "the record made and the DNSEndpoint gone", func() error {
		if _, err := dnsEndpoint(t, ns, ing.Name); client.IgnoreNotFound(err) != nil || err == nil {
			return fmt.Errorf("DNSEndpoint still there (%v)", err)
		}
		if rs := recordsNamed(t, host); len(rs) != 1 {
			return fmt.Errorf("records %+v, want one", rs)
		}
		return nil
	})
}
