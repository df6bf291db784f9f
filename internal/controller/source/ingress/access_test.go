package ingress_test

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

// An Ingress protected by annotation: access-policies names an AccessPolicy
// of the namespace; its hostname is published only behind an Access
// application made for it, which lets in whom the policy names.
func TestAnIngressProtectedByItsPolicies(t *testing.T) {
	ns, tunnelID := setup(t)
	host := "staff-" + ns + ".example.com"
	p.Create(t, &ztv1alpha1.AccessPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "staff"},
		Spec: ztv1alpha1.AccessPolicySpec{ForProvider: ztv1alpha1.AccessPolicyParameters{
			Name: "staff-" + ns, Decision: "allow", Include: []ztv1alpha1.AccessRule{{EmailDomain: ptr.To("example.com")}},
		}},
	})
	ing := ingress(ns, "staff", map[string]string{v1alpha1.AnnotationTunnel: "edge", v1alpha1.AnnotationPublic: "true", v1alpha1.AnnotationAccessPolicies: "staff"}, host)
	p.Create(t, ing)
	wait.Eventually(t, wait.Patience, "published behind its application", func() error {
		rs := rulesOf(t, tunnelID, host)
		if len(rs) == 0 || len(recordsNamed(t, host)) != 1 {
			return fmt.Errorf("rules %+v, records %d", rs, len(recordsNamed(t, host)))
		}
		for _, r := range rs {
			if r.OriginRequest == nil || r.OriginRequest.Access == nil || len(r.OriginRequest.Access.AudTag) != 1 {
				t.Fatalf("rule %+v published without the application's audience", r)
			}
		}
		return nil
	})
	for email, want := range map[string]bool{"ada@example.com": true, "eve@example.net": false} {
		if got, why := p.Sim.AccessDecision(host, "/", sim.AccessIdentity{Email: email}); got != want {
			t.Errorf("%s let in: %v (%s), want %v", email, got, why, want)
		}
	}
	deleteIngress(t, ing)
	wait.Eventually(t, wait.Patience, "the application gone with the hostname", func() error {
		if ok, why := p.Sim.AccessDecision(host, "/", sim.AccessIdentity{Email: "eve@example.net"}); !ok {
			return fmt.Errorf("an application still guards %s: %s", host, why)
		}
		return nil
	})
}
