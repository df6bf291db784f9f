package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

// TestAPublicHostnameWithoutAnIngressAndTheMetrics publishes a hostname with
// a hand-made PublicHostname through the provider binary (its own RBAC: the
// PublicHostname controller, the CloudflareTunnel's answer by status patch,
// the CA Secret mount), then reads the provider's Prometheus endpoint for
// crossplane-runtime's managed-resource metrics and the Cloudflare request
// metrics.
func TestAPublicHostnameWithoutAnIngressAndTheMetrics(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t, "published")
	create := func(o client.Object) {
		t.Helper()
		if err := env.kube.Create(ctx, o); err != nil {
			t.Fatalf("create %T %s: %v", o, o.GetName(), err)
		}
	}
	create(&v1alpha1.CloudflareTunnel{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "edge"},
		Spec:       v1alpha1.CloudflareTunnelSpec{TunnelName: ptr.To("e2e-" + ns), Replicas: ptr.To[int32](1)},
	})
	create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-ca"}, Data: map[string][]byte{"ca.crt": []byte("-----BEGIN CERTIFICATE-----\n")}})
	host := "hand-made-" + ns + "." + zone
	ph := &v1alpha1.PublicHostname{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app"},
		Spec: v1alpha1.PublicHostnameSpec{
			TunnelRef:     v1alpha1.TunnelReference{Name: "edge"},
			Hostname:      host,
			Origin:        &v1alpha1.Origin{Service: &v1alpha1.ServiceOrigin{Name: "web", Port: intstr.FromInt32(443), Protocol: v1alpha1.ProtocolHTTPS}},
			OriginRequest: &v1alpha1.OriginOptions{CAPoolSecretRef: &v1alpha1.LocalSecretKeySelector{Name: "web-ca", Key: "ca.crt"}},
		},
	}
	create(ph)
	wait.Eventually(t, 2*time.Minute, "the PublicHostname Ready", func() error {
		if err := env.kube.Get(ctx, client.ObjectKeyFromObject(ph), ph); err != nil {
			return err
		}
		if c := ph.GetCondition(xpv2.TypeReady); c.Status != corev1.ConditionTrue {
			return fmt.Errorf("Ready=%s %s: %s", c.Status, c.Reason, c.Message)
		}
		return nil
	})
	cft := &v1alpha1.CloudflareTunnel{}
	if err := env.kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: "edge"}, cft); err != nil {
		t.Fatal(err)
	}
	st := env.sim.Snapshot()
	records := 0
	for _, r := range st.DNSRecords {
		if r.Name == host && r.Content == cft.Status.TunnelID+".cfargotunnel.com" && r.Proxied {
			records++
		}
	}
	if records != 1 {
		t.Errorf("%d proxied CNAMEs %s → the tunnel, want 1", records, host)
	}
	cfg, err := env.cf.GetTunnelConfiguration(ctx, cft.Status.TunnelID)
	if err != nil {
		t.Fatal(err)
	}
	if c := string(cfg.Config); !strings.Contains(c, `"hostname":"`+host+`"`) || !strings.Contains(c, `"caPool":"/etc/cloudflared/ca/web-ca/ca.crt"`) {
		t.Errorf("tunnel configuration %s: want the hostname's rule with its CA pool", c)
	}

	t.Run("TheCASecretIsMountedInTheCloudflaredPod", func(t *testing.T) {
		wait.Eventually(t, 2*time.Minute, "a cloudflared pod with the CA Secret at the rule's path", func() error {
			pods := &corev1.PodList{}
			if err := env.kube.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{"app.kubernetes.io/instance": "edge"}); err != nil {
				return err
			}
			for _, pod := range pods.Items {
				for _, v := range pod.Spec.Volumes {
					if v.Secret == nil || v.Secret.SecretName != "web-ca" {
						continue
					}
					for _, m := range pod.Spec.Containers[0].VolumeMounts {
						if m.Name == v.Name && m.ReadOnly && m.MountPath == "/etc/cloudflared/ca/web-ca" {
							return nil
						}
					}
				}
			}
			return fmt.Errorf("%d pods, none mounts Secret web-ca at /etc/cloudflared/ca/web-ca", len(pods.Items))
		})
	})

	t.Run("Metrics", func(t *testing.T) {
		var body string
		wait.Eventually(t, time.Minute, "managed-resource and Cloudflare metrics", func() error {
			resp, err := http.Get(env.metricsURL)
			if err != nil {
				return err
			}
			defer func() { _ = resp.Body.Close() }()
			b, err := io.ReadAll(resp.Body)
			if err != nil {
				return err
			}
			body = string(b)
			for _, want := range []string{
				`crossplane_managed_resource_exists{gvk="dns.tunnels.cloudflare.com/v1alpha1, Kind=DNSRecord"}`,
				`crossplane_managed_resource_ready{gvk="zerotrust.tunnels.cloudflare.com/v1alpha1, Kind=Tunnel"}`,
				"crossplane_managed_resource_first_time_to_readiness_seconds_bucket",
				"cloudflare_requests_total",
			} {
				if !strings.Contains(body, want) {
					return fmt.Errorf("no %s", want)
				}
			}
			return nil
		})
	})

	env.deleteNamespace(t, ns, "edge", cft.Status.TunnelID, nil)
	for _, r := range env.sim.Snapshot().DNSRecords {
		if r.Name == host {
			t.Errorf("DNS record %s left behind", host)
		}
	}
}
