package service_test

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

// A public Service protected by annotation, as an Ingress is: access-policies
// names an AccessPolicy of the namespace, and the hostname is published only
// behind the Access application made for it.
func TestAPublicServiceProtectedByItsPolicies(t *testing.T) {
	ns, tunnelID := setup(t)
	host := "ops-" + ns + ".example.com"
	p.Create(t, &ztv1alpha1.AccessPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ops"},
		Spec: ztv1alpha1.AccessPolicySpec{ForProvider: ztv1alpha1.AccessPolicyParameters{
			Name: "ops-" + ns, Decision: "allow", Include: []ztv1alpha1.AccessRule{{Email: ptr.To("ada@example.com")}},
		}},
	})
	svc := exposedService(ns, "grafana", annotations(v1alpha1.AnnotationHostname, host, v1alpha1.AnnotationPublic, "true", v1alpha1.AnnotationAccessPolicies, "ops"),
		corev1.ServicePort{Name: "http", Port: 3000})
	p.Create(t, svc)
	wait.Eventually(t, wait.Patience, "published behind its application", func() error {
		cfg := p.TunnelConfig(t, tunnelID)
		if !strings.Contains(cfg, `"hostname":"`+host+`"`) || len(p.Records(t, host)) != 1 {
			return fmt.Errorf("not published yet: %s", cfg)
		}
		if !strings.Contains(cfg, `"audTag":["`) || !strings.Contains(cfg, `"required":true`) {
			t.Fatalf("published without the application's audience: %s", cfg)
		}
		return nil
	})
	for email, want := range map[string]bool{"ada@example.com": true, "bob@example.com": false} {
		if got, why := p.Sim.AccessDecision(host, "/", sim.AccessIdentity{Email: email}); got != want {
			t.Errorf("%s let in: %v (%s), want %v", email, got, why, want)
		}
	}
	p.DeleteAndWait(t, svc)
}
