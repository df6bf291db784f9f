package publichostname_test

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/origin"
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
