package publichostname_test

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/origin"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/composite/publichostname"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

func plainService(ns, name string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": name},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(80)}}},
	}
}

func externalName(ns, name, to string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: to},
	}
}

// toService is a hostname whose origin is Service name's port 80.
func toService(ns, name, svc string) *v1alpha1.PublicHostname {
	return hostname(ns, name, name+"-"+ns+".example.com", func(ph *v1alpha1.PublicHostname) {
		ph.Spec.Origin = &v1alpha1.Origin{Service: &v1alpha1.ServiceOrigin{Name: svc, Port: intstr.FromInt32(80)}}
	})
}

// flipToExternalName makes a published Service an ExternalName one.
func flipToExternalName(t *testing.T, svc *corev1.Service, to string) {
	t.Helper()
	p.Edit(t, svc, func() {
		svc.Spec = corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: to}
	})
}

// waitGone waits for the tunnel's configuration in Cloudflare to hold no
// rule for a hostname.
func waitGone(t *testing.T, tunnelID, host string) {
	t.Helper()
	wait.Eventually(t, wait.Patience, "no rule for "+host+" in Cloudflare", func() error {
		c, _ := config(t, tunnelID)
		if got := rulesFor(c, host); len(got) != 0 {
			return fmt.Errorf("rules %+v", got)
		}
		return nil
	})
}

// TestTheOriginGuardrailFollowsServices: a hostname publishing its own
// namespace's Service by reference is judged by where the Service leads. An
// ExternalName Service for the API server's name, and a Service without a
// selector whose EndpointSlice, written by hand, points at a cloud
// metadata address, are refused with the guardrail's reasons; a published
// Service flipped to an ExternalName for the metadata service, and one an
// ExternalName alias of a published hostname leads to, take their rules
// out of Cloudflare.
func TestTheOriginGuardrailFollowsServices(t *testing.T) {
	ns, tunnelID := setup(t)
	p.Create(t, externalName(ns, "apiserver", "kubernetes.default.svc.cluster.local"))
	handMade := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "by-hand"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(80)}}},
	}
	p.Create(t, handMade)
	p.Create(t, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: ns, Name: "by-hand-1", Labels: map[string]string{discoveryv1.LabelServiceName: "by-hand"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.1.2.3"}}, {Addresses: []string{metadataEndpoint}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](80)}},
	})
	toAPI, toHandMade := toService(ns, "to-api", "apiserver"), toService(ns, "to-by-hand", "by-hand")
	p.Create(t, toAPI)
	p.Create(t, toHandMade)
	waitRefused(t, toAPI, origin.RuleNotListed)
	waitEvent(t, ns, toAPI.Name, string(origin.RuleNotListed), "Kubernetes API server")
	waitRefused(t, toHandMade, origin.RuleMetadata)
	waitEvent(t, ns, toHandMade.Name, string(origin.RuleMetadata), metadataEndpoint)

	flips, aliased := plainService(ns, "flips"), plainService(ns, "aliased")
	p.Create(t, flips)
	p.Create(t, aliased)
	p.Create(t, externalName(ns, "alias", "aliased."+ns+".svc.cluster.local"))
	toFlips, toAlias := toService(ns, "to-flips", "flips"), toService(ns, "to-alias", "alias")
	p.Create(t, toFlips)
	p.Create(t, toAlias)
	waitReady(t, toFlips)
	waitReady(t, toAlias)

	flipToExternalName(t, flips, "metadata.google.internal")
	waitRefused(t, toFlips, origin.RuleMetadata)
	waitEvent(t, ns, toFlips.Name, string(origin.RuleMetadata), "metadata.google.internal")
	waitGone(t, tunnelID, toFlips.Spec.Hostname)

	// The hostname names only the alias; the Service behind it changes.
	flipToExternalName(t, aliased, "169.254.169.254")
	waitRefused(t, toAlias, origin.RuleMetadata)
	waitGone(t, tunnelID, toAlias.Spec.Hostname)
	for _, ph := range []*v1alpha1.PublicHostname{toAPI, toHandMade, toFlips, toAlias} {
		if err := p.Get(ph); err != nil {
			t.Fatal(err)
		}
		if len(ph.Status.Rules) != 0 {
			t.Errorf("%s keeps rules %+v", ph.Name, ph.Status.Rules)
		}
		if rs := records(t, ph.Spec.Hostname); len(rs) != 0 && ph != toFlips && ph != toAlias {
			t.Errorf("DNS records %+v for %s, which was refused", rs, ph.Name)
		}
	}
}

// metadataEndpoint is the metadata address an EndpointSlice written by hand
// points at: Alibaba Cloud's, which, unlike the link-local ones the API
// server refuses in an endpoint, a slice may hold.
const metadataEndpoint = "100.100.100.200"

// TestEndpointsWrittenForOwnPodsArePublished: a Service without a selector
// whose EndpointSlice, written by hand, holds an address of one of its
// namespace's own Pods (as the endpoint controller found it for a Service
// with a selector) is published: the namespace could publish that Pod
// anyway. One whose slice also holds another address is still refused.
func TestEndpointsWrittenForOwnPodsArePublished(t *testing.T) {
	ns, tunnelID := setup(t)
	const podIP, elsewhere = "10.244.1.7", "10.9.9.9"
	p.Create(t, plainService(ns, "backend"))
	p.Create(t, endpointSlice(ns, "backend-found", "backend", discoveryv1.LabelManagedBy, "endpointslice-controller.k8s.io", podIP))
	for name, addresses := range map[string][]string{"to-pod": {podIP}, "to-pod-and-more": {podIP, elsewhere}} {
		p.Create(t, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(3000)}}},
		})
		p.Create(t, endpointSlice(ns, name+"-1", name, "", "", addresses...))
	}
	toPod, toMore := toService(ns, "pub-to-pod", "to-pod"), toService(ns, "pub-to-more", "to-pod-and-more")
	p.Create(t, toPod)
	p.Create(t, toMore)
	waitReady(t, toPod)
	waitRefused(t, toMore, origin.RuleNotListed)
	waitEvent(t, ns, toMore.Name, string(origin.RuleNotListed), elsewhere)
	c, _ := config(t, tunnelID)
	if got := rulesFor(c, toPod.Spec.Hostname); len(got) != 1 {
		t.Errorf("rules for %s: %+v, want one", toPod.Spec.Hostname, got)
	}
	if got := rulesFor(c, toMore.Spec.Hostname); len(got) != 0 {
		t.Errorf("rules for the refused %s: %+v", toMore.Spec.Hostname, got)
	}
}

// endpointSlice is an IPv4 slice of Service svc on port 80 holding
// addresses, labelled label=value as well when label is not "".
func endpointSlice(ns, name, svc, label, value string, addresses ...string) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](80)}},
	}
	if label != "" {
		s.Labels[label] = value
	}
	for _, a := range addresses {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{a}})
	}
	return s
}

// TestAHeadlessServiceIsDialledAtItsPodsPort: a headless Service's name
// leads to its Pods, so the rule dials the port they listen on. With a
// named target port that is known from the Service's endpoints: the
// hostname waits for them, and their appearing publishes it.
func TestAHeadlessServiceIsDialledAtItsPodsPort(t *testing.T) {
	ns, tunnelID := setup(t)
	p.Create(t, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pods"},
		Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: map[string]string{"app": "pods"},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("web")}}},
	})
	ph := toService(ns, "to-pods", "pods")
	p.Create(t, ph)
	wait.Eventually(t, wait.Patience, "waiting for the Service's endpoints", func() error {
		if err := p.Get(ph); err != nil {
			return err
		}
		if c := ph.GetCondition(v1alpha1.TypeValid); c.Reason != publichostname.ReasonWaitingForService || !strings.Contains(c.Message, "headless") {
			return fmt.Errorf("Valid=%s %s: %s", c.Status, c.Reason, c.Message)
		}
		return nil
	})
	if c, _ := config(t, tunnelID); len(rulesFor(c, ph.Spec.Hostname)) != 0 {
		t.Errorf("published before its Pods' port is known: %+v", c.Ingress)
	}
	found := endpointSlice(ns, "pods-found", "pods", discoveryv1.LabelManagedBy, "endpointslice-controller.k8s.io", "10.244.1.8")
	found.Ports[0].Port = ptr.To[int32](3000)
	p.Create(t, found)
	waitReady(t, ph)
	c, _ := config(t, tunnelID)
	if got := rulesFor(c, ph.Spec.Hostname); len(got) != 1 || got[0].Service != "http://pods."+ns+".svc.cluster.local:3000" {
		t.Errorf("rules for %s: %+v, want one to the Pods' port 3000", ph.Spec.Hostname, got)
	}
}
