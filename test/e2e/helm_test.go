package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

const chartRelease = "provider-cloudflare-tunnel"

// helm runs the project's helm against h's cluster, with Helm's own state
// kept in the test's output.
func (h *harness) helm(args ...string) (string, error) {
	bin, err := testenv.Helm()
	if err != nil {
		return "", err
	}
	home := filepath.Join(h.out, "helm-home")
	return run(h.root, []string{"KUBECONFIG=" + h.kubeconfig, "HELM_CACHE_HOME=" + home + "/cache", "HELM_CONFIG_HOME=" + home + "/config", "HELM_DATA_HOME=" + home + "/data"}, bin, args...)
}

// TestTheHelmChart installs the chart on a cluster of its own, with a
// Cloudflare account of its own, by running the commands of docs/install.md
// ("With Helm", README's five-minute path too) and docs/operate.md (the
// monitoring objects on), runs the provider binary as the chart's
// ServiceAccount with the flags the chart's Deployment gives it, and has it
// reconcile the demo's objects: the chart's RBAC is all it has. It then
// scrapes the provider's metrics: Cloudflare's request count is the
// simulator's, the rate-limit gauge fell, the sources and managed resources
// are counted. Deleting the objects leaves nothing in the account, and
// helm uninstall removes the provider's RBAC.
func TestTheHelmChart(t *testing.T) {
	ctx := context.Background()
	token, account := "helm-api-token-"+randomHex(16), randomHex(16)
	// Cloudflare's real limit, so the responses carry its Ratelimit headers.
	s := sim.New(sim.Options{Token: token, AccountID: account, Zones: []string{zone}, RateLimit: 1200, RateWindow: 5 * time.Minute})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: s}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	h := &harness{root: env.root, out: env.out, bins: env.bins, sim: s, simURL: "http://" + l.Addr().String() + "/client/v4/", token: token, account: account}
	t.Cleanup(h.stop)
	if err := h.startCluster("helm", 1); err != nil {
		t.Fatal(err)
	}

	// The Prometheus Operator's CRDs, so the monitoring objects are
	// accepted by a real API server, not only a dry run.
	crds, err := testenv.ThirdPartyCRDs()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.kubectl("apply", "--server-side", "-f", filepath.Join(crds, "prometheus-operator")); err != nil {
		t.Fatal(err)
	}
	if err := h.waitCRDsEstablished(); err != nil {
		t.Fatal(err)
	}
	h.helmAsTheGuidesSay(t)
	for _, o := range []client.Object{
		&v1alpha1.ClusterProviderConfig{}, // default, from values
	} {
		if err := h.kube.Get(ctx, client.ObjectKey{Name: "default"}, o); err != nil {
			t.Fatalf("the chart made no ClusterProviderConfig default: %v", err)
		}
	}
	for _, kind := range []string{"servicemonitors", "prometheusrules"} {
		if out, err := h.kubectl("-n", providerNamespace, "get", kind+".monitoring.coreos.com", chartRelease, "-o", "name"); err != nil || out == "" {
			t.Errorf("no %s %s: %v", kind, chartRelease, err)
		}
	}

	// The provider runs as the chart's ServiceAccount, with the chart's
	// flags (leader election included: the Lease is the chart's Role's).
	dep := &appsv1.Deployment{}
	if err := h.kube.Get(ctx, client.ObjectKey{Namespace: providerNamespace, Name: chartRelease}, dep); err != nil {
		t.Fatal(err)
	}
	c := dep.Spec.Template.Spec.Containers[0]
	if want := "--poll=" + poll.String(); !strings.Contains(strings.Join(c.Args, " "), want) {
		t.Fatalf("the chart's Deployment runs %v, want %s from values", c.Args, want)
	}
	// The chart's --webhook-self-signed serves the admission webhook here on
	// the host: on a free port, not 9443, which anything else may hold.
	wl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	webhookPort := fmt.Sprint(wl.Addr().(*net.TCPAddr).Port)
	_ = wl.Close()
	if err := h.runProvider(ctx, "helm", providerNamespace, dep.Spec.Template.Spec.ServiceAccountName, append(slices.Clone(c.Args), "--webhook-port", webhookPort)); err != nil {
		t.Fatal(err)
	}
	// With the chart's RBAC it made its certificate and put the CA into the
	// chart's webhook configuration.
	wait.Eventually(t, time.Minute, "the webhook configuration's caBundle set to the certificate Secret's CA", func() error {
		sec := &corev1.Secret{}
		if err := h.kube.Get(ctx, client.ObjectKey{Namespace: providerNamespace, Name: chartRelease + "-webhook-tls"}, sec); err != nil {
			return err
		}
		vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		if err := h.kube.Get(ctx, client.ObjectKey{Name: chartRelease}, vwc); err != nil {
			return err
		}
		for _, w := range vwc.Webhooks {
			if len(sec.Data["ca.crt"]) == 0 || string(w.ClientConfig.CABundle) != string(sec.Data["ca.crt"]) {
				return fmt.Errorf("webhook %s caBundle is not the Secret's CA", w.Name)
			}
		}
		return nil
	})

	// The demo's objects.
	if _, err := h.kubectl("apply", "-f", filepath.Join(h.root, "hack", "demo", "manifests.yaml")); err != nil {
		t.Fatal(err)
	}
	const ns, tunnel = "redis-cf-tunnel", "redis-cache-azure-development"
	cft := &v1alpha1.CloudflareTunnel{}
	wait.Eventually(t, 2*time.Minute, "the tunnel made", func() error {
		if err := h.kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: tunnel}, cft); err != nil {
			return err
		}
		if cft.Status.TunnelID == "" || !h.sim.SetConnectors(cft.Status.TunnelID, 2) {
			return fmt.Errorf("no tunnel ID yet")
		}
		return nil
	})
	wait.Eventually(t, 3*time.Minute, "every object of the demo Ready", func() error {
		_, err := h.kubectl("-n", ns, "wait", "--for=condition=Ready", "--timeout=2s",
			"cloudflaretunnels,publichostnames,tunnels,hostnameroutes,networkroutes,vpcservices,dnsrecords", "--all")
		return err
	})

	t.Run("Metrics", func(t *testing.T) {
		wait.Eventually(t, time.Minute, "the request counter equal to the simulator's count", func() error {
			before := sumRequests(h.sim.Stats())
			fams, err := scrape(h.metricsURL)
			if err != nil {
				return err
			}
			after := sumRequests(h.sim.Stats())
			got, _ := sample(fams, "cloudflare_requests_total", nil)
			if before != after || int(got) != before {
				return fmt.Errorf("cloudflare_requests_total = %v, the simulator received %d (then %d)", got, before, after)
			}
			return nil
		})
		fams, err := scrape(h.metricsURL)
		if err != nil {
			t.Fatal(err)
		}
		total := float64(sumRequests(h.sim.Stats()))
		remaining := mustSample(t, fams, "cloudflare_rate_limit_remaining_requests", nil)
		quota := mustSample(t, fams, "cloudflare_rate_limit_quota_requests", nil)
		if quota != 1200 || remaining >= quota || remaining < quota-total {
			t.Errorf("Cloudflare's rate-limit window: %v of %v left after %v requests; want it fallen, by at most the requests sent", remaining, quota, total)
		}
		for _, c := range []struct {
			name   string
			labels map[string]string
			want   float64
		}{
			{"cloudflare_api_tokens", nil, 1},
			{"cloudflare_rate_limited_total", nil, 0},
			{"cloudflare_budget_paused", nil, 0},
			{"cloudflare_tunnel_sources", map[string]string{"kind": "Ingress", "state": "translated"}, 2},
			{"cloudflare_tunnel_sources", map[string]string{"kind": "Service", "state": "translated"}, 1},
			{"cloudflare_tunnel_sources", map[string]string{"state": "problem"}, 0},
			// No hostname here asks for Access: both served, at zero.
			{"cloudflare_tunnel_public_hostnames_protected", nil, 0},
			{"cloudflare_tunnel_public_hostnames_waiting_for_access", nil, 0},
		} {
			if got := mustSample(t, fams, c.name, c.labels); got != c.want {
				t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
			}
		}
		// The managed resources' state gauges are recorded every
		// --poll-state-metric (5 s), so a resource Ready a moment ago may
		// not be counted yet.
		wait.Eventually(t, 30*time.Second, "the managed-resource state gauges", func() error {
			fams, err := scrape(h.metricsURL)
			if err != nil {
				return err
			}
			for _, c := range []struct {
				name   string
				labels map[string]string
				want   float64
			}{
				{"crossplane_managed_resource_ready", map[string]string{"gvk": "dns.tunnels.cloudflare.com/v1alpha1, Kind=DNSRecord"}, 2},
				{"crossplane_managed_resource_exists", map[string]string{"gvk": "zerotrust.tunnels.cloudflare.com/v1alpha1, Kind=Tunnel"}, 1},
			} {
				if got, ok := sample(fams, c.name, c.labels); !ok || got != c.want {
					return fmt.Errorf("%s%v = %v (present %t), want %v", c.name, c.labels, got, ok, c.want)
				}
			}
			return nil
		})
		if got := mustSample(t, fams, "cloudflare_tunnel_configuration_writes_total", map[string]string{"outcome": "success"}); got < 1 {
			t.Errorf("cloudflare_tunnel_configuration_writes_total{outcome=success} = %v; the public hostnames were written", got)
		}
		if got := mustSample(t, fams, "cloudflare_budget_wait_seconds", nil); got != total {
			t.Errorf("cloudflare_budget_wait_seconds counts %v requests, the simulator %v", got, total)
		}
	})

	// Deleting the demo leaves nothing in the account. Then, as docs/install.md
	// says, the ClusterProviderConfig goes while the provider runs (its
	// finalizers are released with the chart's RBAC), and helm uninstall
	// removes the provider and its RBAC but keeps the credentials Secret.
	h.deleteNamespace(t, ns, tunnel, cft.Status.TunnelID, nil)
	if live := liveIDsOf(h.sim); len(live) > 0 {
		t.Errorf("objects left in the account after the demo's namespace went: %v", live)
	}
	if err := h.kube.Delete(ctx, &v1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "default"}}); err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{}
	wait.Eventually(t, time.Minute, "the ClusterProviderConfig gone and the credentials Secret released", func() error {
		if err := h.kube.Get(ctx, client.ObjectKey{Name: "default"}, &v1alpha1.ClusterProviderConfig{}); !kerrors.IsNotFound(err) {
			return fmt.Errorf("ClusterProviderConfig default: %v", err)
		}
		if err := h.kube.Get(ctx, client.ObjectKey{Namespace: providerNamespace, Name: "cloudflare-credentials"}, secret); err != nil {
			return err
		}
		if len(secret.Finalizers) > 0 {
			return fmt.Errorf("the credentials Secret still has finalizers %v", secret.Finalizers)
		}
		return nil
	})
	if out, err := h.helm("uninstall", chartRelease, "--namespace", providerNamespace); err != nil {
		t.Fatalf("helm uninstall: %v\n%s", err, out)
	}
	wait.Eventually(t, time.Minute, "the chart's objects gone", func() error {
		for _, o := range []client.Object{&rbacv1.ClusterRole{}, &rbacv1.ClusterRoleBinding{}, &appsv1.Deployment{}, &corev1.ServiceAccount{}} {
			if err := h.kube.Get(ctx, client.ObjectKey{Namespace: providerNamespace, Name: chartRelease}, o); !kerrors.IsNotFound(err) {
				return fmt.Errorf("%T %s: %v", o, chartRelease, err)
			}
		}
		return nil
	})
	if err := h.kube.Get(ctx, client.ObjectKey{Namespace: providerNamespace, Name: "cloudflare-credentials"}, secret); err != nil || secret.DeletionTimestamp != nil {
		t.Errorf("helm uninstall took the credentials Secret the guide had the user make: %v", err)
	}
}

// helmAsTheGuidesSay runs what README's five-minute path and docs/install.md
// ("With Helm") tell a user to type, then docs/operate.md's upgrade that
// turns the monitoring objects on. The test adds only what a real account
// makes unnecessary: the credentials file's place, and a values file
// pointing the default ClusterProviderConfig at the simulator (with debug
// logs and this suite's poll interval).
func (h *harness) helmAsTheGuidesSay(t *testing.T) {
	t.Helper()
	install := guideCommands(t, "docs/install.md", "## With Helm")
	if readme := guideCommands(t, "README.md", "## Publish a hostname in five minutes")[:len(install)]; !slices.EqualFunc(readme, install, slices.Equal) {
		t.Fatalf("README's five-minute install %q is not docs/install.md's %q", readme, install)
	}
	envFile := filepath.Join(h.out, "cloudflare.env")
	if err := os.WriteFile(envFile, []byte("CLOUDFLARE_API_TOKEN="+h.token+"\nCLOUDFLARE_ACCOUNT_ID="+h.account+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	values, err := yaml.Marshal(map[string]any{
		"providerConfig": map[string]any{"endpoint": h.simURL},
		"provider":       map[string]any{"logLevel": "debug", "pollInterval": poll.String()},
	})
	if err != nil {
		t.Fatal(err)
	}
	valuesFile := filepath.Join(h.out, "helm-values.yaml")
	if err := os.WriteFile(valuesFile, values, 0o600); err != nil {
		t.Fatal(err)
	}
	operate := guideCommands(t, "docs/operate.md", "## Metrics and alerts")
	for _, argv := range append(install, operate...) {
		args := slices.Clone(argv[1:])
		for i, a := range args {
			if a == "--from-env-file=cloudflare.env" {
				args[i] = "--from-env-file=" + envFile
			}
		}
		var out string
		var err error
		switch argv[0] {
		case "kubectl":
			out, err = h.kubectl(args...)
		case "helm":
			if args[0] == "install" {
				args = append(args, "--values", valuesFile)
			}
			out, err = h.helm(args...)
		default:
			t.Fatalf("a guide's command the test cannot run: %q", argv)
		}
		if err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
		}
	}
}
