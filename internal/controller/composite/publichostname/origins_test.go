package publichostname_test

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/origin"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

// waitRefused waits for a PublicHostname's Valid and Ready conditions to be
// False for the rule, and for a Warning event of that reason.
func waitRefused(t *testing.T, ph *v1alpha1.PublicHostname, rule origin.Rule) {
	t.Helper()
	wait.Eventually(t, wait.Patience, fmt.Sprintf("%s refused by %s", ph.Name, rule), func() error {
		if err := p.Get(ph); err != nil {
			return err
		}
		for _, ct := range []xpv2.ConditionType{"Valid", xpv2.TypeReady} {
			if c := ph.GetCondition(ct); c.Status != corev1.ConditionFalse || c.Reason != xpv2.ConditionReason(rule) {
				return fmt.Errorf("%s=%s %s: %s", ct, c.Status, c.Reason, c.Message)
			}
		}
		return nil
	})
	waitEvent(t, ph.Namespace, ph.Name, string(rule), "not allowed")
}

// TestOriginsGuardrail: under a provider config that lists no origins, a
// PublicHostname publishing the cloud metadata address, or another
// namespace's Service by its DNS name, is refused with a Warning event and
// False conditions naming the rule, and nothing of it reaches the tunnel's
// configuration in Cloudflare, while one of the namespace's own Services is
// published beside them. A config that lists an origin publishes it. A
// spec changed to a refused origin keeps what it published.
func TestOriginsGuardrail(t *testing.T) {
	ns, tunnelID := setup(t)
	other := p.Namespace(t)
	refused := []struct {
		ph   *v1alpha1.PublicHostname
		rule origin.Rule
	}{
		{hostname(ns, "metadata", "metadata-"+ns+".example.com", func(ph *v1alpha1.PublicHostname) {
			ph.Spec.Origin = &v1alpha1.Origin{URL: ptr.To("http://169.254.169.254:80")}
		}), origin.RuleMetadata},
		{hostname(ns, "neighbour", "neighbour-"+ns+".example.com", func(ph *v1alpha1.PublicHostname) {
			ph.Spec.Origin = &v1alpha1.Origin{URL: ptr.To("http://web." + other + ".svc.cluster.local:80")}
		}), origin.RuleOtherNamespace},
		{hostname(ns, "listed-elsewhere", "listed-elsewhere-"+ns+".example.com", func(ph *v1alpha1.PublicHostname) {
			ph.Spec.Origin = &v1alpha1.Origin{URL: ptr.To("https://api.internal.example.net")}
		}), origin.RuleNotListed},
	}
	for _, r := range refused {
		p.Create(t, r.ph)
	}
	own := hostname(ns, "own", "own-"+ns+".example.com")
	p.Create(t, own)
	for _, r := range refused {
		waitRefused(t, r.ph, r.rule)
		if len(r.ph.Status.Rules) != 0 || r.ph.Status.DNSRecord != "" {
			t.Errorf("%s: rules %+v, DNS record %q; want none", r.ph.Name, r.ph.Status.Rules, r.ph.Status.DNSRecord)
		}
	}
	waitReady(t, own)
	c, _ := config(t, tunnelID)
	for _, r := range refused {
		if got := rulesFor(c, r.ph.Spec.Hostname); len(got) != 0 {
			t.Errorf("the tunnel's configuration in Cloudflare holds %+v for %s, which was refused", got, r.ph.Name)
		}
		if rs := records(t, r.ph.Spec.Hostname); len(rs) != 0 {
			t.Errorf("DNS records %+v for %s, which was refused", rs, r.ph.Name)
		}
	}
	if got := rulesFor(c, own.Spec.Hostname); len(got) != 1 {
		t.Errorf("rules for the namespace's own Service %+v, want one", got)
	}

	t.Run("AListedOriginIsPublished", func(t *testing.T) {
		cpc := p.ClusterConfig(t, "origins-"+ns, func(s *v1alpha1.ProviderConfigSpec) {
			s.Allow = &v1alpha1.Allowances{Origins: []string{"internal.example.net", "169.254.0.0/16"}}
		})
		cr := &v1alpha1.CloudflareTunnel{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "listed"},
			Spec: v1alpha1.CloudflareTunnelSpec{TunnelName: ptr.To("listed-" + ns), Replicas: ptr.To[int32](1),
				ProviderConfigRef: &xpv2.ProviderConfigReference{Kind: v1alpha1.ClusterProviderConfigKind, Name: cpc.Name}},
		}
		p.Create(t, cr)
		api := hostname(ns, "api", "api-"+ns+".example.com", func(ph *v1alpha1.PublicHostname) {
			ph.Spec.TunnelRef.Name = cr.Name
			ph.Spec.Origin = &v1alpha1.Origin{URL: ptr.To("https://api.internal.example.net")}
		})
		// Listing link-local addresses does not allow them.
		stillRefused := hostname(ns, "metadata-listed", "metadata-listed-"+ns+".example.com", func(ph *v1alpha1.PublicHostname) {
			ph.Spec.TunnelRef.Name = cr.Name
			ph.Spec.Origin = &v1alpha1.Origin{URL: ptr.To("http://169.254.169.254:80")}
		})
		p.Create(t, stillRefused)
		p.Create(t, api)
		waitRefused(t, stillRefused, origin.RuleMetadata)
		waitReady(t, api)
		if err := p.Get(cr); err != nil {
			t.Fatal(err)
		}
		c, _ := config(t, cr.Status.TunnelID)
		if got := rulesFor(c, api.Spec.Hostname); len(got) != 1 || got[0].Service != "https://api.internal.example.net" {
			t.Errorf("rules for the listed origin %+v, want one to https://api.internal.example.net", got)
		}
		if got := rulesFor(c, stillRefused.Spec.Hostname); len(got) != 0 {
			t.Errorf("the tunnel's configuration holds %+v for the metadata address", got)
		}
	})

	t.Run("ARefusedChangeKeepsWhatWasPublished", func(t *testing.T) {
		want := own.Status.Rules
		wait.Eventually(t, wait.Patience, "own changed to the metadata address", func() error {
			if err := p.Get(own); err != nil {
				return err
			}
			own.Spec.Origin = &v1alpha1.Origin{URL: ptr.To("http://[::ffff:169.254.169.254]:80")}
			return p.Client.Update(t.Context(), own)
		})
		waitRefused(t, own, origin.RuleMetadata)
		c, _ := config(t, tunnelID)
		if got := rulesFor(c, own.Spec.Hostname); len(got) != 1 || got[0].Service != want[0].Service {
			t.Errorf("rules in Cloudflare after a refused change %+v, want the last allowed one to %s", got, want[0].Service)
		}
	})
}
