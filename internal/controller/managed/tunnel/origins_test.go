package tunnel_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/origin"
)

// TestOriginsGuardrail: a Tunnel whose configuration sends a hostname to
// the cloud metadata address, or to a name its provider config does not
// list, is refused before any request is written to Cloudflare, with a
// Warning event and Synced=False naming the rule. At this layer the rules'
// namespaces are not known: a Service of any namespace passes (the
// PublicHostname checks whose it is).
func TestOriginsGuardrail(t *testing.T) {
	ns := p.Namespace(t)
	configured := func(name, service string) *v1alpha1.Tunnel {
		tun := newTunnel(ns, name, name+"-"+ns)
		tun.Spec.ForProvider.Config = &v1alpha1.TunnelConfig{Ingress: []v1alpha1.IngressRule{
			{Hostname: ptr.To(name + ".example.com"), Service: service},
			{Service: "http_status:404"},
		}}
		return tun
	}
	refused := []struct {
		tun  *v1alpha1.Tunnel
		rule origin.Rule
	}{
		{configured("metadata", "http://169.254.169.254:80"), origin.RuleMetadata},
		{configured("decimal", "http://2852039166/"), origin.RuleUnreadable},
		{configured("external", "https://api.example.net"), origin.RuleNotListed},
		{configured("apiserver", "https://kubernetes.default.svc"), origin.RuleNotListed},
	}
	writes := p.WriteCalls()
	for _, r := range refused {
		p.Create(t, r.tun)
	}
	for _, r := range refused {
		c := p.WaitSynced(t, r.tun, "refused by "+string(r.rule), func(c xpv2.Condition) bool {
			return c.Status == corev1.ConditionFalse && strings.Contains(c.Message, "not allowed") && strings.Contains(c.Message, string(r.rule))
		})
		t.Logf("%s: %s", r.tun.Name, c.Message)
		p.WaitWarning(t, ns, r.tun.Name, "CannotObserveExternalResource", string(r.rule))
	}
	if n := p.WriteCalls() - writes; n != 0 {
		t.Errorf("%d requests written to Cloudflare for Tunnels the guardrail refuses", n)
	}

	anyNamespace := configured("neighbour", "http://web.other-namespace.svc.cluster.local:80")
	p.Create(t, anyNamespace)
	p.WaitReady(t, anyNamespace)
	// Nothing left behind: the package's steady-state test counts every
	// request the provider makes.
	p.DeleteAndWait(t, anyNamespace)
	for _, r := range refused {
		p.DeleteAndWait(t, r.tun)
	}
}

// TestOriginsGuardrailFollowsServices: a Tunnel written by hand whose rule
// names a Service of the cluster is judged by where that Service leads, as
// a PublicHostname's is: an ExternalName Service naming the metadata
// endpoint, a selector-less Service whose hand-written endpoints name the
// metadata endpoint (the API server refuses link-local addresses in a
// slice, not names), and an ExternalName Service naming a host the provider
// config does not list are refused before anything is written to
// Cloudflare; nothing but allow.origins lets such a rule through.
func TestOriginsGuardrailFollowsServices(t *testing.T) {
	ns := p.Namespace(t)
	p.Create(t, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "meta"}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "metadata.google.internal"}})
	p.Create(t, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "elsewhere"}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "api.example.net"}})
	p.Create(t, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hand"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}})
	p.Create(t, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: ns, Name: "hand-1", Labels: map[string]string{discoveryv1.LabelServiceName: "hand"}},
		AddressType: discoveryv1.AddressTypeFQDN,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"metadata.google.internal"}}},
		Ports:       []discoveryv1.EndpointPort{{Port: ptr.To[int32](80)}},
	})
	configured := func(name, service string) *v1alpha1.Tunnel {
		tun := newTunnel(ns, name, name+"-"+ns)
		tun.Spec.ForProvider.Config = &v1alpha1.TunnelConfig{Ingress: []v1alpha1.IngressRule{
			{Hostname: ptr.To(name + ".example.com"), Service: service},
			{Service: "http_status:404"},
		}}
		return tun
	}
	refused := []struct {
		tun  *v1alpha1.Tunnel
		rule origin.Rule
	}{
		{configured("externalname", "http://meta."+ns+".svc.cluster.local:80"), origin.RuleMetadata},
		{configured("endpoints", "http://hand."+ns+".svc.cluster.local:80"), origin.RuleMetadata},
		{configured("unlisted", "https://elsewhere."+ns+".svc:443"), origin.RuleNotListed},
	}
	writes := p.WriteCalls()
	for _, r := range refused {
		p.Create(t, r.tun)
	}
	for _, r := range refused {
		c := p.WaitSynced(t, r.tun, "refused by "+string(r.rule), func(c xpv2.Condition) bool {
			return c.Status == corev1.ConditionFalse && strings.Contains(c.Message, "not allowed") && strings.Contains(c.Message, string(r.rule))
		})
		t.Logf("%s: %s", r.tun.Name, c.Message)
		if meta.GetExternalName(r.tun) != "" {
			t.Errorf("%s: made in Cloudflare (external-name %s)", r.tun.Name, meta.GetExternalName(r.tun))
		}
	}
	if n := p.WriteCalls() - writes; n != 0 {
		t.Errorf("%d requests written to Cloudflare for Tunnels the guardrail refuses", n)
	}
	for _, r := range refused {
		p.DeleteAndWait(t, r.tun)
	}
}
