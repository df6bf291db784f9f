package hostile

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	tv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/origin"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/expose"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

// originEntries are the issue-48 cases of their topic.
func originEntries() []entry {
	return []entry{
		{name: "PublicHostname/ExternalNameServiceToMetadata", answer: custom, run: func(t *testing.T, c *corpus) string {
			return c.leadsTo(t, "en-meta", externalNameTo("metadata.google.internal"), nil, origin.RuleMetadata, "metadata.google.internal")
		}},
		{name: "PublicHostname/ExternalNameServiceToTheAPIServer", answer: custom, run: func(t *testing.T, c *corpus) string {
			return c.leadsTo(t, "en-api", externalNameTo("kubernetes.default.svc.cluster.local"), nil, origin.RuleNotListed, "Kubernetes API server")
		}},
		{name: "PublicHostname/SelectorlessServiceWithEndpointsToMetadata", answer: custom, run: func(t *testing.T, c *corpus) string {
			return c.handMadeEndpoints(t)
		}},
		{name: "Ingress/WildcardHostRoutesTheWholeZonePrivately", answer: custom, run: wildcardIngress},
	}
}

func externalNameTo(name string) corev1.ServiceSpec {
	return corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: name}
}

// leadsTo makes a Service of spec (and the EndpointSlice slice, if any) and
// a PublicHostname publishing it by reference; the hostname must be refused
// by rule, with a Warning saying where the Service leads, and publish
// nothing.
func (c *corpus) leadsTo(t *testing.T, name string, spec corev1.ServiceSpec, slice *discoveryv1.EndpointSlice, rule origin.Rule, says string) string {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: c.ns, Name: name}, Spec: spec}
	p.Create(t, svc)
	defer p.DeleteAndWait(t, svc)
	if slice != nil {
		p.Create(t, slice)
		defer p.DeleteAndWait(t, slice)
	}
	ph := c.hostname(name, name+"-"+c.ns+".example.com", func(ph *tv1alpha1.PublicHostname) {
		ph.Spec.Origin.Service.Name = name
	})
	p.Create(t, ph)
	defer p.DeleteAndWait(t, ph)
	msg := waitWarning(t, ph, string(rule), []string{"Service " + c.ns + "/" + name, says})
	wait.Eventually(t, 30*time.Second, "Valid=False "+string(rule), func() error {
		if err := p.Get(ph); err != nil {
			return err
		}
		if v := ph.GetCondition(tv1alpha1.TypeValid); v.Status != corev1.ConditionFalse || string(v.Reason) != string(rule) {
			return fmt.Errorf("Valid=%s %s", v.Status, v.Reason)
		}
		return nil
	})
	if len(ph.Status.Rules) != 0 || ph.Status.DNSRecord != "" {
		return c.knownBug(t, "a Service leading to %s is published: rules %+v, DNS record %q", says, ph.Status.Rules, ph.Status.DNSRecord)
	}
	return "Valid=False, Warning " + string(rule) + ": " + oneLine(msg)
}

// handMadeEndpoints: a Service without a selector whose EndpointSlice,
// written by hand, points at 169.254.169.254. The API server refuses a
// link-local endpoint; should it take one, the hostname is refused. A
// metadata address the API server takes (Alibaba Cloud's) is refused by the
// guardrail.
func (c *corpus) handMadeEndpoints(t *testing.T) string {
	slice := func(name, addr string) *discoveryv1.EndpointSlice {
		return &discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Namespace: c.ns, Name: name + "-1", Labels: map[string]string{discoveryv1.LabelServiceName: name}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{addr}}},
			Ports:       []discoveryv1.EndpointPort{{Port: ptr.To[int32](80)}},
		}
	}
	spec := corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(80)}}}
	var answer string
	linkLocal := slice("ep-imds", "169.254.169.254")
	if err := p.Client.Create(context.Background(), linkLocal); err != nil {
		answer = "EndpointSlice to 169.254.169.254 rejected by the API server: " + oneLine(err.Error()) + "; "
	} else {
		p.DeleteAndWait(t, linkLocal)
		answer = c.leadsTo(t, "ep-imds", spec, slice("ep-imds", "169.254.169.254"), origin.RuleMetadata, "169.254.169.254") + "; "
	}
	return answer + "to 100.100.100.200: " + c.leadsTo(t, "ep-alibaba", spec, slice("ep-alibaba", "100.100.100.200"), origin.RuleMetadata, "100.100.100.200")
}

// wildcardIngress: a wildcard host routes every name under it privately;
// the Ingress is told with a Warning.
func wildcardIngress(t *testing.T, c *corpus) string {
	zone := "wild-" + c.ns + ".example.com"
	ing := c.ingress("wildcard", nil, func(ing *networkingv1.Ingress) {
		ing.Spec.Rules = []networkingv1.IngressRule{hostRule("*."+zone, "/", networkingv1.PathTypePrefix, backend("web", number(80)))}
	})
	p.Create(t, ing)
	msg := waitWarning(t, ing, expose.NoteWildcardPrivateRoute, []string{"*." + zone, "every name under"})
	wait.Eventually(t, 60*time.Second, "the wildcard's route", func() error {
		if rs := p.HostnameRoutes(t, zone); len(rs) != 1 {
			return fmt.Errorf("%d routes for %s", len(rs), zone)
		}
		return nil
	})
	c.allowMade(zone)
	p.DeleteAndWait(t, ing)
	if strings.Contains(msg, "\n") {
		t.Errorf("a multi-line message: %q", msg)
	}
	return "Warning " + expose.NoteWildcardPrivateRoute + ": " + oneLine(msg)
}
