package install_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv"
)

const (
	chartDir = "cluster/charts/provider-cloudflare-tunnel"
	// release is the release name README.md and docs/install.md install with; its objects
	// are then named as cluster/install names them.
	release = "provider-cloudflare-tunnel"
)

// allOptions turns on every optional object and sets every flag, so a
// server-side dry run sees everything the chart can render.
var allOptions = []string{
	"--set", "replicas=2",
	"--set", "credentials.create=true,credentials.apiToken=chart-test-token,credentials.accountID=0123456789abcdef0123456789abcdef",
	"--set", "providerConfig.create=true,providerConfig.endpoint=http://127.0.0.1:8787/client/v4/,providerConfig.ownerID=chart-test",
	"--set", "ingressClass.default=true",
	"--set", "provider.logLevel=debug,provider.pollInterval=30s,provider.syncInterval=2h,provider.maxReconcileRate=50",
	"--set", "cloudflare.rateLimit=1200,cloudflare.rateWindow=5m,cloudflare.budgetBurst=5,cloudflare.dnsBatchWindow=500ms,cloudflare.dnsBatchSize=100",
	"--set-json", `cloudflare.budgetFraction=0.5`,
	"--set", "podLabels.team=platform,podAnnotations.note=chart-test,priorityClassName=system-cluster-critical",
	"--set", "metrics.service.enabled=true,metrics.prometheusRule.enabled=true,metrics.dashboard.enabled=true",
	"--set", "metrics.serviceMonitor.labels.release=prometheus,metrics.podMonitor.labels.release=prometheus",
}

// monitors are the two ways the chart has Prometheus scrape the provider;
// one at a time (both would scrape each pod twice).
var monitors = [][]string{
	{"--set", "metrics.serviceMonitor.enabled=true"},
	{"--set", "metrics.podMonitor.enabled=true"},
}

// helmTemplate renders the chart as `helm template` does, into the
// namespace ns, and returns its documents (or helm's error output).
func helmTemplate(t *testing.T, ns string, args ...string) ([]*unstructured.Unstructured, error) {
	t.Helper()
	return helmTemplateRelease(t, release, ns, args...)
}

// helmTemplateRelease is helmTemplate for another release name.
func helmTemplateRelease(t *testing.T, release, ns string, args ...string) ([]*unstructured.Unstructured, error) {
	t.Helper()
	helm, err := testenv.Helm()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(helm, append([]string{"template", release, filepath.Join(testenv.RepoRoot(), chartDir), "--namespace", ns}, args...)...)
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+t.TempDir(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_DATA_HOME="+t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%w: %s", err, stderr.String())
	}
	docs, err := decodeDocuments(&stdout)
	if err != nil {
		t.Fatalf("helm template output: %v", err)
	}
	return docs, nil
}

// helmLabels are the labels Helm charts add by convention; cluster/install
// has no release, so they are all the two may differ in.
var helmLabels = []string{"app.kubernetes.io/instance", "app.kubernetes.io/version", "app.kubernetes.io/managed-by", "helm.sh/chart"}

func withoutHelmLabels(u *unstructured.Unstructured) map[string]any {
	u = u.DeepCopy()
	paths := [][]string{{"metadata", "labels"}, {"spec", "selector", "matchLabels"}, {"spec", "template", "metadata", "labels"}}
	if u.GetKind() == "Service" {
		paths = append(paths, []string{"spec", "selector"})
	}
	for _, path := range paths {
		m, found, _ := unstructured.NestedStringMap(u.Object, path...)
		if !found {
			continue
		}
		for _, l := range helmLabels {
			delete(m, l)
		}
		_ = unstructured.SetNestedStringMap(u.Object, m, path...)
	}
	return u.Object
}

func key(u *unstructured.Unstructured) string {
	return u.GetKind() + " " + client.ObjectKeyFromObject(u).String()
}

// TestChartRendersTheInstall keeps one source of truth: with default values
// the chart renders exactly cluster/install's objects (but the Namespace,
// which Helm's --namespace makes), label for label and rule for rule, so the
// RBAC checks of this package hold for the chart too.
func TestChartRendersTheInstall(t *testing.T) {
	docs, err := helmTemplate(t, namespace)
	if err != nil {
		t.Fatal(err)
	}
	chart := map[string]map[string]any{}
	for _, d := range docs {
		chart[key(d)] = withoutHelmLabels(d)
	}
	install := map[string]map[string]any{}
	for _, d := range installDocuments(t) {
		if d.obj.GetKind() == "Namespace" {
			continue
		}
		install[key(d.obj)] = d.obj.Object
	}
	if diff := cmp.Diff(install, chart); diff != "" {
		t.Errorf("helm template (defaults) differs from cluster/install (-install +chart):\n%s", diff)
	}
}

// TestChartCRDsAreThePackages: the chart's crds/ is make generate's copy
// of package/crds.
func TestChartCRDsAreThePackages(t *testing.T) {
	root := testenv.RepoRoot()
	list := func(dir string) []string {
		names, err := filepath.Glob(filepath.Join(root, dir, "*.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		for i := range names {
			names[i] = filepath.Base(names[i])
		}
		sort.Strings(names)
		return names
	}
	pkg, chart := list(crdDir), list(filepath.Join(chartDir, "crds"))
	if diff := cmp.Diff(pkg, chart); diff != "" || len(pkg) == 0 {
		t.Fatalf("chart crds/ and package/crds hold different files (run make generate) (-package +chart):\n%s", diff)
	}
	for _, name := range pkg {
		// Two unreadable files would compare equal, so a read error fails.
		a, err := os.ReadFile(filepath.Join(root, crdDir, name))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(root, chartDir, "crds", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between package/crds and the chart (run make generate)", name)
		}
	}
}

// TestChartIsAccepted server-side dry-runs everything the chart renders
// with every option on, in a namespace enforcing the restricted Pod
// Security Standard, with the Prometheus Operator's CRDs installed.
func TestChartIsAccepted(t *testing.T) {
	ctx := context.Background()
	env.InstallThirdPartyCRDs(t, "prometheus-operator")
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "chart-test", Labels: map[string]string{
		"pod-security.kubernetes.io/enforce":         "restricted",
		"pod-security.kubernetes.io/enforce-version": "latest",
	}}}
	if err := env.Client.Create(ctx, ns); err != nil && !kerrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	var docs []*unstructured.Unstructured
	for i, monitor := range monitors {
		rendered, err := helmTemplate(t, ns.Name, append(slices.Clone(allOptions), monitor...)...)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			docs = rendered
		}
		for _, d := range rendered {
			if i > 0 && d.GetKind() != "PodMonitor" {
				continue // the rest is the first render's
			}
			docs = append(docs, d)
		}
	}
	kinds := map[string]bool{}
	for _, d := range docs {
		kinds[d.GetKind()] = true
		t.Run(key(d), func(t *testing.T) {
			namespaced, err := env.Client.IsObjectNamespaced(d)
			if err != nil {
				t.Fatalf("unknown kind: %v", err)
			}
			if namespaced && d.GetNamespace() != ns.Name {
				t.Errorf("namespace is %q, want the release's, %q", d.GetNamespace(), ns.Name)
			}
			if err := apply(ctx, d, client.DryRunAll); err != nil {
				t.Errorf("API server rejects it: %v", err)
			}
		})
	}
	for _, k := range []string{"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "Deployment", "IngressClass", "Secret", "ClusterProviderConfig", "Service", "ServiceMonitor", "PodMonitor", "PrometheusRule", "ConfigMap"} {
		if !kinds[k] {
			t.Errorf("no %s rendered with every option on", k)
		}
	}

	t.Run("PodPassesRestrictedPodSecurity", func(t *testing.T) {
		var dep *appsv1.Deployment
		for _, d := range docs {
			if d.GetKind() == "Deployment" {
				dep = convert[appsv1.Deployment](t, d)
			}
		}
		tmpl := dep.Spec.Template
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "provider", Labels: tmpl.Labels, Annotations: tmpl.Annotations}, Spec: tmpl.Spec}
		// priorityClassName needs the class to exist; the built-in one does.
		if err := env.Client.Create(ctx, pod, client.DryRunAll); err != nil {
			t.Errorf("the provider's pod does not pass the restricted Pod Security Standard: %v", err)
		}
	})

	t.Run("FlagsFromValues", func(t *testing.T) {
		var args []string
		for _, d := range docs {
			if d.GetKind() == "Deployment" {
				args = convert[appsv1.Deployment](t, d).Spec.Template.Spec.Containers[0].Args
			}
		}
		want := []string{"--leader-election", "--cluster-domain=cluster.local",
			"--webhook-self-signed", "--webhook-service=provider-cloudflare-tunnel-webhook", "--webhook-configuration=provider-cloudflare-tunnel", "--debug", "--poll=30s", "--sync=2h", "--max-reconcile-rate=50",
			"--cloudflare-rate-limit=1200", "--cloudflare-rate-window=5m", "--cloudflare-budget-fraction=0.5", "--cloudflare-budget-burst=5",
			"--dns-batch-window=500ms", "--dns-batch-size=100"}
		if diff := cmp.Diff(want, args); diff != "" {
			t.Errorf("provider args (-want +got):\n%s", diff)
		}
	})

	t.Run("RulesAndDashboardAreTheFiles", func(t *testing.T) {
		root := filepath.Join(testenv.RepoRoot(), chartDir, "files")
		raw, err := os.ReadFile(filepath.Join(root, "alerts.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		var alerts map[string]any
		if err := yaml.Unmarshal(raw, &alerts); err != nil {
			t.Fatal(err)
		}
		// An unreadable dashboard would equal a ConfigMap without it.
		dashboard, err := os.ReadFile(filepath.Join(root, "dashboard.json"))
		if err != nil || len(dashboard) == 0 {
			t.Fatalf("files/dashboard.json: %d bytes, %v", len(dashboard), err)
		}
		for _, d := range docs {
			switch d.GetKind() {
			case "PrometheusRule":
				spec, _, err := unstructured.NestedMap(d.Object, "spec")
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(alerts, spec); diff != "" || len(alerts) == 0 {
					t.Errorf("PrometheusRule spec differs from files/alerts.yaml (-file +rendered):\n%s", diff)
				}
			case "ConfigMap":
				data, _, err := unstructured.NestedStringMap(d.Object, "data")
				if err != nil {
					t.Fatal(err)
				}
				if data["provider-cloudflare-tunnel.json"] != string(dashboard) {
					t.Error("the dashboard ConfigMap does not hold files/dashboard.json")
				}
				if d.GetLabels()["grafana_dashboard"] != "1" {
					t.Errorf("dashboard ConfigMap labels %v lack grafana_dashboard=1 (Grafana's sidecar looks for it)", d.GetLabels())
				}
			}
		}
	})
}

// TestChartRefusesInvalidValues: a typo or a wrong type is an error naming
// the value, not a silent default.
func TestChartRefusesInvalidValues(t *testing.T) {
	cases := map[string]struct {
		args []string
		want string
	}{
		"UnknownKey":               {args: []string{"--set", "replica=2"}, want: "additional properties 'replica' not allowed"},
		"NestedTypo":               {args: []string{"--set", "provider.pollIntervall=30s"}, want: "additional properties 'pollIntervall' not allowed"},
		"WrongType":                {args: []string{"--set", "replicas=two"}, want: "/replicas"},
		"BadDuration":              {args: []string{"--set", "provider.pollInterval=1minute"}, want: "/provider/pollInterval"},
		"UnknownLogLevel":          {args: []string{"--set", "provider.logLevel=trace"}, want: "/provider/logLevel"},
		"FractionAboveOne":         {args: []string{"--set-json", "cloudflare.budgetFraction=1.5"}, want: "/cloudflare/budgetFraction"},
		"FractionAsStringAboveOne": {args: []string{"--set", "cloudflare.budgetFraction=1.5"}, want: "/cloudflare/budgetFraction"},
		"CredentialsWithoutToken":  {args: []string{"--set", "credentials.create=true"}, want: "/credentials/apiToken"},
		"BadAccountID":             {args: []string{"--set", "credentials.accountID=not-an-id"}, want: "/credentials/accountID"},
		"EndpointNotAURL":          {args: []string{"--set", "providerConfig.endpoint=localhost:8787"}, want: "/providerConfig/endpoint"},
		"TwoReplicasNoElection":    {args: []string{"--set", "replicas=2,leaderElection=false"}, want: "replicas > 1 needs leaderElection: true"},
		"BothMonitors":             {args: []string{"--set", "metrics.serviceMonitor.enabled=true,metrics.podMonitor.enabled=true"}, want: "would scrape each pod twice"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := helmTemplate(t, namespace, tc.args...)
			if err == nil {
				t.Fatalf("helm template %v succeeded; want it refused", tc.args)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
		})
	}
	// A string that is a valid fraction (what --set makes of 0.5) passes.
	if _, err := helmTemplate(t, namespace, "--set", "cloudflare.budgetFraction=0.5"); err != nil {
		t.Errorf("--set cloudflare.budgetFraction=0.5 refused: %v", err)
	}
}

// TestChartLongReleaseName: every name stays within what the API server
// accepts (a Service name is a 63-character DNS label) for a long release
// name.
func TestChartLongReleaseName(t *testing.T) {
	ctx := context.Background()
	long := "cloudflare-edge-production-eu-west-1" // 36 characters, without the chart's name
	docs, err := helmTemplateRelease(t, long, namespace, "--set", "metrics.serviceMonitor.enabled=true,metrics.dashboard.enabled=true")
	if err != nil {
		t.Fatal(err)
	}
	env.InstallThirdPartyCRDs(t, "prometheus-operator")
	applyNamespace(t, ctx, installDocuments(t))
	for _, d := range docs {
		if d.GetKind() != "Service" {
			continue
		}
		if err := apply(ctx, d, client.DryRunAll); err != nil {
			t.Errorf("%s (%d characters): %v", key(d), len(d.GetName()), err)
		}
		if !strings.Contains(d.GetName(), "provider-cloudflare-tunnel") {
			t.Errorf("Service %s: the alerts' job regex .*provider-cloudflare-tunnel.* would not match it", d.GetName())
		}
	}
}

// TestChartKeepsCredentialsAndConfig: helm uninstall must leave the
// credentials Secret and the default ClusterProviderConfig the chart made
// (the provider's finalizers hold them while managed resources still need
// them to delete their Cloudflare objects, and once the provider is gone
// nothing could release them).
func TestChartKeepsCredentialsAndConfig(t *testing.T) {
	docs, err := helmTemplate(t, namespace, "--set", "credentials.create=true,credentials.apiToken=t,credentials.accountID=0123456789abcdef0123456789abcdef,providerConfig.create=true")
	if err != nil {
		t.Fatal(err)
	}
	kept := map[string]bool{}
	for _, d := range docs {
		if d.GetAnnotations()["helm.sh/resource-policy"] == "keep" {
			kept[d.GetKind()+"/"+d.GetName()] = true
		}
	}
	for _, want := range []string{"Secret/cloudflare-credentials", "ClusterProviderConfig/default"} {
		if !kept[want] {
			t.Errorf("%s is not kept on helm uninstall (kept: %v)", want, kept)
		}
	}
}

// TestChartWebhook: under another release name the webhook's names still
// agree (configuration, Service, the provider's flags and its RBAC), and
// webhook.enabled=false renders none of it.
func TestChartWebhook(t *testing.T) {
	const rel = "edge"
	docs, err := helmTemplateRelease(t, rel, namespace)
	if err != nil {
		t.Fatal(err)
	}
	in := make([]document, 0, len(docs))
	for _, d := range docs {
		in = append(in, document{file: "chart", obj: d})
	}
	full := rel + "-provider-cloudflare-tunnel"
	dep := convert[appsv1.Deployment](t, find(t, in, "Deployment", full))
	svc := convert[corev1.Service](t, find(t, in, "Service", full+"-webhook"))
	vwc := convert[admissionregistrationv1.ValidatingWebhookConfiguration](t, find(t, in, "ValidatingWebhookConfiguration", full))
	checkWebhook(t, dep, svc, vwc)
	args := dep.Spec.Template.Spec.Containers[0].Args
	for _, a := range []string{"--webhook-self-signed", "--webhook-service=" + svc.Name, "--webhook-configuration=" + vwc.Name} {
		if !slices.Contains(args, a) {
			t.Errorf("args %v lack %s", args, a)
		}
	}
	cr := convert[rbacv1.ClusterRole](t, find(t, in, "ClusterRole", full))
	if !slices.ContainsFunc(cr.Rules, func(r rbacv1.PolicyRule) bool {
		return slices.Equal(r.Resources, []string{"validatingwebhookconfigurations"}) && slices.Equal(r.ResourceNames, []string{vwc.Name})
	}) {
		t.Errorf("ClusterRole %s does not grant the configuration %s by name", cr.Name, vwc.Name)
	}

	off, err := helmTemplateRelease(t, rel, namespace, "--set", "webhook.enabled=false")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range off {
		b, err := yaml.Marshal(d.Object)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "webhook") {
			t.Errorf("webhook.enabled=false still renders webhook settings in %s:\n%s", key(d), b)
		}
	}
}
