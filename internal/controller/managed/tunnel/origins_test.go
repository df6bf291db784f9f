package tunnel_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

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
