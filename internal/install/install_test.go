// Package install_test checks the plain install manifests in cluster/install
// (for clusters without Crossplane) against a real kube-apiserver: every
// document is accepted, the provider's pod passes the restricted Pod Security
// Standard, and the RBAC grants what the controllers use — no less, no more.
package install_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/admit"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/docs"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Run(m, &env)) }

const (
	installDir = "cluster/install"
	crdDir     = "package/crds"
	fieldOwner = "install-test"

	// What cmd/provider/main.go and the manifests agree on.
	namespace      = "cloudflare-tunnel-system"
	serviceAccount = "provider-cloudflare-tunnel"
	leaseName      = "crossplane-leader-election-provider-cloudflare-tunnel" // main's LeaderElectionID
	metricsPort    = 8080                                                    // main's --metrics-bind-address
	healthPort     = 8081                                                    // main's --health-probe-bind-address
	webhookPort    = 9443                                                    // main's --webhook-port

	webhookService       = "provider-cloudflare-tunnel-webhook" // main's --webhook-service
	webhookConfiguration = "provider-cloudflare-tunnel"         // main's --webhook-configuration
)

// document is one YAML document of a manifest file.
type document struct {
	file string
	obj  *unstructured.Unstructured
}

func (d document) String() string {
	return fmt.Sprintf("%s: %s %s", d.file, d.obj.GetKind(), client.ObjectKeyFromObject(d.obj))
}

// kustomization is the subset of kustomize's schema the install uses. It is
// decoded strictly: a field the test does not model (patches, images,
// namespace, ...) would change what `kubectl apply -k` applies, so it fails
// the test rather than being ignored.
type kustomization struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Resources  []string `json:"resources"`
}

// installDocuments reads every document kustomization.yaml lists.
func installDocuments(t *testing.T) []document {
	t.Helper()
	dir := filepath.Join(testenv.RepoRoot(), installDir)
	raw, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	k := kustomization{}
	if err := yaml.UnmarshalStrict(raw, &k); err != nil {
		t.Fatalf("kustomization.yaml: %v (only apiVersion, kind and resources are supported)", err)
	}
	if k.APIVersion != "kustomize.config.k8s.io/v1beta1" || k.Kind != "Kustomization" {
		t.Fatalf("kustomization.yaml is %s %s, want kustomize.config.k8s.io/v1beta1 Kustomization", k.APIVersion, k.Kind)
	}
	if len(k.Resources) == 0 {
		t.Fatal("kustomization.yaml lists no resources")
	}

	listed := map[string]bool{}
	var docs []document
	for _, r := range k.Resources {
		// kustomize loads only files under its root; so does this test.
		if !filepath.IsLocal(r) || strings.Contains(r, "://") {
			t.Fatalf("kustomization.yaml resource %q is not a file under %s", r, installDir)
		}
		if listed[r] {
			t.Fatalf("kustomization.yaml lists %s twice", r)
		}
		listed[r] = true
		objs, err := readDocuments(filepath.Join(dir, r))
		if err != nil {
			t.Fatalf("%s: %v", r, err)
		}
		if len(objs) == 0 {
			t.Fatalf("%s holds no documents", r)
		}
		for _, o := range objs {
			docs = append(docs, document{file: filepath.Join(installDir, r), obj: o})
		}
	}

	// A manifest left out of the kustomization would silently not be installed.
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if b := filepath.Base(f); b != "kustomization.yaml" && !listed[b] {
			t.Errorf("%s/%s is not listed in kustomization.yaml", installDir, b)
		}
	}
	return docs
}

// crdDocuments reads package/crds, which the install applies first.
func crdDocuments(t *testing.T) []document {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), crdDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no CRDs in %s", crdDir)
	}
	var docs []document
	for _, f := range files {
		objs, err := readDocuments(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, o := range objs {
			if o.GetKind() != "CustomResourceDefinition" {
				t.Errorf("%s holds a %s, want only CustomResourceDefinitions", f, o.GetKind())
			}
			docs = append(docs, document{file: filepath.Join(crdDir, filepath.Base(f)), obj: o})
		}
	}
	return docs
}

// readDocuments splits a (multi-document) YAML file into objects, skipping
// empty documents.
func readDocuments(path string) ([]*unstructured.Unstructured, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return decodeDocuments(f)
}

// decodeDocuments splits a multi-document YAML stream into objects, skipping
// empty documents.
func decodeDocuments(in io.Reader) ([]*unstructured.Unstructured, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(in))
	var out []*unstructured.Unstructured
	for i := 0; ; i++ {
		raw, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		js, err := yaml.YAMLToJSON(raw)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if js = bytes.TrimSpace(js); len(js) == 0 || string(js) == "null" {
			continue // only comments, or empty
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(js); err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		out = append(out, u)
	}
}

func find(t *testing.T, docs []document, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, d := range docs {
		if d.obj.GetKind() == kind && d.obj.GetName() == name {
			return d.obj
		}
	}
	t.Fatalf("no %s %q in the install manifests", kind, name)
	return nil
}

func convert[T any](t *testing.T, u *unstructured.Unstructured) *T {
	t.Helper()
	out := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, out, true); err != nil {
		t.Fatalf("%s %s: %v", u.GetKind(), u.GetName(), err)
	}
	return out
}

func apply(ctx context.Context, u *unstructured.Unstructured, opts ...client.ApplyOption) error {
	opts = append([]client.ApplyOption{client.FieldOwner(fieldOwner), client.ForceOwnership}, opts...)
	return env.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u.DeepCopy()), opts...)
}

// applyNamespace creates the install namespace for real: a dry-run Namespace
// does not exist for the dry runs of the objects in it.
func applyNamespace(t *testing.T, ctx context.Context, docs []document) {
	t.Helper()
	if err := apply(ctx, find(t, docs, "Namespace", namespace)); err != nil {
		t.Fatalf("cannot apply Namespace %s: %v", namespace, err)
	}
}

// TestManifestsAreAccepted server-side applies (dry run) the CRDs and every
// document of the kustomization, as `kubectl apply --server-side` would.
func TestManifestsAreAccepted(t *testing.T) {
	ctx := context.Background()
	install := installDocuments(t)
	applyNamespace(t, ctx, install)

	for _, d := range append(crdDocuments(t), install...) {
		t.Run(d.String(), func(t *testing.T) {
			namespaced, err := env.Client.IsObjectNamespaced(d.obj)
			if err != nil {
				t.Fatalf("unknown kind: %v", err)
			}
			// kubectl would put an object without a namespace into the
			// current context's namespace, wherever that is.
			if namespaced && d.obj.GetNamespace() != namespace {
				t.Errorf("namespace is %q, want %q", d.obj.GetNamespace(), namespace)
			}
			if !namespaced && d.obj.GetNamespace() != "" {
				t.Errorf("cluster-scoped, but sets namespace %q", d.obj.GetNamespace())
			}
			if err := apply(ctx, d.obj, client.DryRunAll); err != nil {
				t.Errorf("API server rejects it: %v", err)
			}
		})
	}

	t.Run("ReferencesAgree", func(t *testing.T) {
		find(t, install, "ServiceAccount", serviceAccount)
		dep := convert[appsv1.Deployment](t, find(t, install, "Deployment", "provider-cloudflare-tunnel"))
		if got := dep.Spec.Template.Spec.ServiceAccountName; got != serviceAccount {
			t.Errorf("Deployment runs as ServiceAccount %q, want %q", got, serviceAccount)
		}
		sa := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: serviceAccount, Namespace: namespace}
		crb := convert[rbacv1.ClusterRoleBinding](t, find(t, install, "ClusterRoleBinding", "provider-cloudflare-tunnel"))
		rb := convert[rbacv1.RoleBinding](t, find(t, install, "RoleBinding", "provider-cloudflare-tunnel-leader-election"))
		for _, b := range []struct {
			name     string
			subjects []rbacv1.Subject
			ref      rbacv1.RoleRef
		}{{"ClusterRoleBinding " + crb.Name, crb.Subjects, crb.RoleRef}, {"RoleBinding " + rb.Name, rb.Subjects, rb.RoleRef}} {
			if !slices.Equal(b.subjects, []rbacv1.Subject{sa}) {
				t.Errorf("%s binds %v, want only %v", b.name, b.subjects, sa)
			}
			find(t, install, b.ref.Kind, b.ref.Name)
		}
		if rb.Namespace != namespace {
			t.Errorf("RoleBinding is in %q, want %q", rb.Namespace, namespace)
		}
	})

	t.Run("WebhookReachesTheProvider", func(t *testing.T) {
		dep := convert[appsv1.Deployment](t, find(t, install, "Deployment", "provider-cloudflare-tunnel"))
		svc := convert[corev1.Service](t, find(t, install, "Service", webhookService))
		vwc := convert[admissionregistrationv1.ValidatingWebhookConfiguration](t, find(t, install, "ValidatingWebhookConfiguration", webhookConfiguration))
		checkWebhook(t, dep, svc, vwc)
	})

	t.Run("IngressClassMatchesExample", func(t *testing.T) {
		ex, err := readDocuments(filepath.Join(testenv.RepoRoot(), "examples", "ingress", "ingressclass.yaml"))
		if err != nil || len(ex) != 1 {
			t.Fatalf("examples/ingress/ingressclass.yaml: %d documents, %v", len(ex), err)
		}
		if got := find(t, install, "IngressClass", "cloudflare"); !reflect.DeepEqual(got.Object, ex[0].Object) {
			t.Errorf("IngressClass differs from examples/ingress/ingressclass.yaml:\n got %v\nwant %v", got.Object, ex[0].Object)
		}
	})
}

// checkWebhook checks that the configuration's webhooks call the Service
// at the paths the provider serves (admit's), that the Service selects the
// Deployment's pods on their webhook port, and that a refusal cannot block
// the cluster while the provider is down.
func checkWebhook(t *testing.T, dep *appsv1.Deployment, svc *corev1.Service, vwc *admissionregistrationv1.ValidatingWebhookConfiguration) {
	t.Helper()
	if !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(dep.Spec.Template.Labels)) || len(svc.Spec.Selector) == 0 {
		t.Errorf("Service %s selects %v, not the Deployment's pods %v", svc.Name, svc.Spec.Selector, dep.Spec.Template.Labels)
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].TargetPort.String() != "webhook" {
		t.Errorf("Service %s ports %+v, want one with targetPort webhook", svc.Name, svc.Spec.Ports)
	}
	paths := map[string]string{"tunnels.cloudflare.com/cloudflaretunnels": admit.CloudflareTunnelPath, "zerotrust.tunnels.cloudflare.com/tunnels": admit.TunnelPath, "zerotrust.tunnels.cloudflare.com/accessservicetokens": admit.ServiceTokenPath}
	for _, w := range vwc.Webhooks {
		s := w.ClientConfig.Service
		if s == nil || s.Name != svc.Name || s.Namespace != svc.Namespace || s.Port == nil || *s.Port != svc.Spec.Ports[0].Port {
			t.Errorf("webhook %s calls %+v, want Service %s/%s port %d", w.Name, s, svc.Namespace, svc.Name, svc.Spec.Ports[0].Port)
			continue
		}
		if len(w.Rules) != 1 || len(w.Rules[0].APIGroups) != 1 || len(w.Rules[0].Resources) != 1 {
			t.Errorf("webhook %s rules %+v, want one group and resource", w.Name, w.Rules)
			continue
		}
		gr := w.Rules[0].APIGroups[0] + "/" + w.Rules[0].Resources[0]
		if want, ok := paths[gr]; !ok || s.Path == nil || *s.Path != want {
			t.Errorf("webhook %s for %s calls path %v, want %q", w.Name, gr, s.Path, want)
		}
		delete(paths, gr)
		if w.FailurePolicy == nil || *w.FailurePolicy != admissionregistrationv1.Ignore {
			t.Errorf("webhook %s failurePolicy %v, want Ignore: the controllers refuse what it would, and the provider down must not block writes", w.Name, w.FailurePolicy)
		}
		if len(w.MatchConditions) != 1 {
			t.Errorf("webhook %s has %d matchConditions, want the one that calls it only for a rotation request set or changed", w.Name, len(w.MatchConditions))
		}
	}
	if len(paths) > 0 {
		t.Errorf("no webhook for %v", paths)
	}
}

// TestExamplesAreAccepted server-side dry-runs every object of examples/
// against the real API server with the provider's CRDs: their CEL rules
// (a network that must be a CIDR, one tunnel reference of three, ...) are
// checked there, not by the offline schema validation of make lint.
func TestExamplesAreAccepted(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "examples", "*", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	// One level further: examples/gateway/native.
	deeper, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "examples", "*", "*", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, deeper...)
	var examples []document
	for _, f := range files {
		ds, err := readDocuments(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		rel, _ := filepath.Rel(testenv.RepoRoot(), f)
		for _, d := range ds {
			examples = append(examples, document{file: rel, obj: d})
		}
	}
	dryRunAll(t, examples, "the API server refuses the example")
}

// TestDocsExamplesAreAccepted server-side dry-runs every YAML block of
// README.md and docs/*.md, as TestExamplesAreAccepted does examples/: what a
// user copies from a guide is accepted as it stands. A block that is
// deliberately not a whole object (a values file, a few annotations) says
// so in its info string, ```yaml fragment, and is skipped; any other YAML
// block must hold only objects with an apiVersion and a kind. An object
// without a namespace goes where kubectl would put it, into "default".
func TestDocsExamplesAreAccepted(t *testing.T) {
	root := testenv.RepoRoot()
	pages, err := docs.Pages(root)
	if err != nil {
		t.Fatal(err)
	}
	var objects []document
	fragments := 0
	for _, path := range pages {
		page, err := docs.Read(root, path)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range page.Blocks {
			if b.Lang != "yaml" && b.Lang != "yml" {
				continue
			}
			where := fmt.Sprintf("%s:%d", path, b.Line)
			if b.Fragment() {
				fragments++
				continue
			}
			objs, err := decodeDocuments(strings.NewReader(b.Body))
			if err != nil || len(objs) == 0 {
				t.Errorf("%s: a YAML block that is no Kubernetes object (%d objects, %v): make it one, or mark it ```yaml %s", where, len(objs), err, docs.FragmentFlag)
				continue
			}
			for _, o := range objs {
				if o.GetNamespace() == "" {
					if namespaced, err := env.Client.IsObjectNamespaced(o); err == nil && namespaced {
						o.SetNamespace(metav1.NamespaceDefault)
					}
				}
				objects = append(objects, document{file: where, obj: o})
			}
		}
	}
	if len(objects) == 0 {
		t.Fatal("no YAML block in README.md or docs/*.md: the Markdown reader is broken")
	}
	t.Logf("%d objects from the documentation's YAML blocks; %d blocks marked %s", len(objects), fragments, docs.FragmentFlag)
	dryRunAll(t, objects, "the API server refuses the documentation's example")
}

// dryRunAll creates every document with a server-side dry run, each a
// subtest, after creating for real the namespaces they name (a dry run does
// not create one for the next object). Gateway API's CRDs are installed:
// examples/gateway and the Gateway API guide hold its objects.
func dryRunAll(t *testing.T, objects []document, refused string) {
	t.Helper()
	ctx := context.Background()
	env.InstallThirdPartyCRDs(t, "gateway-api")
	for _, d := range objects {
		if d.obj.GetNamespace() == "" {
			continue
		}
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: d.obj.GetNamespace()}}
		if err := env.Client.Create(ctx, ns); err != nil && !kerrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	for _, d := range objects {
		t.Run(d.String(), func(t *testing.T) {
			if err := env.Client.Create(ctx, d.obj.DeepCopy(), client.DryRunAll); err != nil && !kerrors.IsAlreadyExists(err) {
				t.Errorf("%s: %v", refused, err)
			}
		})
	}
}

// TestDeployment checks what the Deployment promises: the pod passes the
// restricted Pod Security Standard (enforced by the real admission plugin),
// and it wires main's flags and ports.
func TestDeployment(t *testing.T) {
	ctx := context.Background()
	install := installDocuments(t)
	dep := convert[appsv1.Deployment](t, find(t, install, "Deployment", "provider-cloudflare-tunnel"))

	t.Run("InstallNamespaceEnforcesRestricted", func(t *testing.T) {
		if got := find(t, install, "Namespace", namespace).GetLabels()["pod-security.kubernetes.io/enforce"]; got != "restricted" {
			t.Errorf("Namespace %s enforces %q, want restricted", namespace, got)
		}
	})

	t.Run("PodPassesRestrictedPodSecurity", func(t *testing.T) {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "pss-restricted-", Labels: map[string]string{
			"pod-security.kubernetes.io/enforce":         "restricted",
			"pod-security.kubernetes.io/enforce-version": "latest",
		}}}
		if err := env.Client.Create(ctx, ns); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), ns) })

		// The admission plugin must be on, or the next check proves nothing.
		bare := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "unhardened"},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: dep.Spec.Template.Spec.Containers[0].Image}}},
		}
		if err := env.Client.Create(ctx, bare, client.DryRunAll); !kerrors.IsForbidden(err) || !strings.Contains(err.Error(), "PodSecurity") {
			t.Fatalf("an unhardened pod was not refused by PodSecurity admission (err: %v); cannot check the provider's pod", err)
		}

		tmpl := dep.Spec.Template
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "provider", Labels: tmpl.Labels, Annotations: tmpl.Annotations},
			Spec:       tmpl.Spec,
		}
		if err := env.Client.Create(ctx, pod, client.DryRunAll); err != nil {
			t.Errorf("the provider's pod does not pass the restricted Pod Security Standard: %v", err)
		}
	})

	t.Run("MatchesMain", func(t *testing.T) {
		if r := dep.Spec.Replicas; r == nil || *r != 1 {
			t.Errorf("replicas = %v, want 1", r)
		}
		spec := dep.Spec.Template.Spec
		if len(spec.Containers) != 1 {
			t.Fatalf("%d containers, want 1", len(spec.Containers))
		}
		c := spec.Containers[0]
		if !slices.Contains(c.Args, "--cluster-domain=cluster.local") {
			t.Errorf("args %v lack --cluster-domain, where users set their cluster's domain", c.Args)
		}
		if !slices.Contains(c.Args, "--leader-election") {
			t.Errorf("args %v lack --leader-election", c.Args)
		}
		ports := map[string]int32{}
		for _, p := range c.Ports {
			ports[p.Name] = p.ContainerPort
		}
		if ports["metrics"] != metricsPort || ports["health"] != healthPort || ports["webhook"] != webhookPort {
			t.Errorf("ports %v, want metrics:%d, health:%d and webhook:%d", ports, metricsPort, healthPort, webhookPort)
		}
		for _, a := range []string{"--webhook-self-signed", "--webhook-service=" + webhookService, "--webhook-configuration=" + webhookConfiguration} {
			if !slices.Contains(c.Args, a) {
				t.Errorf("args %v lack %s: the admission webhook would not be served, or not with the certificate webhook.yaml trusts", c.Args, a)
			}
		}
		for name, p := range map[string]*corev1.Probe{"/healthz": c.LivenessProbe, "/readyz": c.ReadinessProbe} {
			if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != name || p.HTTPGet.Port.String() != "health" {
				t.Errorf("probe for %s is %+v, want an HTTP GET of %s on port health", name, p, name)
			}
		}
		sc := c.SecurityContext
		if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
			sc.RunAsUser == nil || *sc.RunAsUser != 65532 || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			t.Errorf("container securityContext %+v: want readOnlyRootFilesystem, runAsUser 65532, no privilege escalation", sc)
		}
		if spec.AutomountServiceAccountToken == nil || !*spec.AutomountServiceAccountToken {
			t.Error("automountServiceAccountToken must be true: the provider talks to the API server")
		}
		if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
			t.Errorf("resources %+v: want cpu and memory requests and a memory limit", c.Resources)
		}
	})
}

// need is one access the controllers use. Keep this table aligned with
// internal/controller (and the crossplane-runtime reconcilers they use); the
// test checks that rbac.yaml grants each of these and nothing else.
type need struct {
	group, resource string // resource may carry a "/subresource"
	verbs           []string
	namespace, name string // scoped needs; empty for cluster-wide
	why             string
}

func verbs(s string) []string { return strings.Fields(s) }

var needs = []need{
	// tunnels.cloudflare.com
	{group: "tunnels.cloudflare.com", resource: "cloudflaretunnels", verbs: verbs("get list watch update patch"), why: "cloudflaretunnel: For, finalizer (patched, so a stored spec it cannot write back never blocks it); ingress, publichostname: Get, Watches"},
	{group: "tunnels.cloudflare.com", resource: "cloudflaretunnels", verbs: verbs("create delete"), why: "gateway: the CloudflareTunnel made for a Gateway that names none (converged, released)"},
	{group: "tunnels.cloudflare.com", resource: "publichostnames", verbs: verbs("get list watch create update patch delete"), why: "publichostname: For, finalizer, spec.crossplane.resourceRefs by Patch (resourcerefs); ingress: Owns, create, update, delete; cloudflaretunnel: Watches, List"},
	{group: "tunnels.cloudflare.com", resource: "publichostnames/status", verbs: verbs("update patch"), why: "publichostname: Status().Update; cloudflaretunnel: status.tunnel by Status().Patch"},
	{group: "tunnels.cloudflare.com", resource: "publichostnames/finalizers", verbs: verbs("update"), why: "publichostname: controller reference (blockOwnerDeletion) on its DNSRecord"},
	{group: "tunnels.cloudflare.com", resource: "cloudflaretunnels/status", verbs: verbs("update"), why: "cloudflaretunnel: Status().Update"},
	{group: "tunnels.cloudflare.com", resource: "cloudflaretunnels/finalizers", verbs: verbs("update"), why: "cloudflaretunnel: SetControllerReference (blockOwnerDeletion) on Tunnel, ProviderConfig, Deployment, PDB"},
	{group: "tunnels.cloudflare.com", resource: "gatewaybindings", verbs: verbs("get list watch update"), why: "gatewaybinding: For, finalizer"},
	{group: "tunnels.cloudflare.com", resource: "gatewaybindings/status", verbs: verbs("update"), why: "gatewaybinding: Status().Update"},
	{group: "tunnels.cloudflare.com", resource: "gatewaybindings/finalizers", verbs: verbs("update"), why: "gatewaybinding: controller reference (blockOwnerDeletion) on its PublicHostnames and DNSEndpoint"},
	{group: "tunnels.cloudflare.com", resource: "gatewayparameters", verbs: verbs("get list watch"), why: "gateway: Get, Watches (the settings of the tunnel made for a Gateway)"},
	{group: "tunnels.cloudflare.com", resource: "clusterproviderconfigs", verbs: verbs("get list watch update"), why: "config: For, finalizer (providerconfig reconciler); clients.ConfigFor: Get"},
	{group: "tunnels.cloudflare.com", resource: "clusterproviderconfigs/status", verbs: verbs("update"), why: "config: Status().Update"},
	{group: "tunnels.cloudflare.com", resource: "providerconfigs", verbs: verbs("get list watch create update delete"), why: "config: For, finalizer; cloudflaretunnel: Owns, CreateOrUpdate, delete"},
	{group: "tunnels.cloudflare.com", resource: "providerconfigs/status", verbs: verbs("update"), why: "config: Status().Update"},
	{group: "tunnels.cloudflare.com", resource: "providerconfigusages", verbs: verbs("get list watch create update delete"), why: "usage tracker (APIUpdatingApplicator); config: Watches, List, Delete"},
	// managed resources (mr.Setup: managed reconciler), written by cloudflaretunnel and ingress
	{group: "zerotrust.tunnels.cloudflare.com", resource: "tunnels", verbs: verbs("get list watch create update patch delete"), why: "tunnel MR; cloudflaretunnel: Owns, CreateOrUpdate, delete; ingress: Watches; reference resolver: SSA patch"},
	{group: "zerotrust.tunnels.cloudflare.com", resource: "tunnels/status", verbs: verbs("update"), why: "managed reconciler"},
	{group: "zerotrust.tunnels.cloudflare.com", resource: "tunnels/finalizers", verbs: verbs("update"), why: "owns its connection Secret and ProviderConfigUsage (blockOwnerDeletion)"},
	{group: "zerotrust.tunnels.cloudflare.com", resource: "hostnameroutes", verbs: verbs("get list watch create update patch delete"), why: "hostnameroute MR; ingress: Owns, create, update, delete; cloudflaretunnel: Watches, List; reference resolver"},
	{group: "zerotrust.tunnels.cloudflare.com", resource: "hostnameroutes/status", verbs: verbs("update"), why: "managed reconciler"},
	{group: "zerotrust.tunnels.cloudflare.com", resource: "hostnameroutes/finalizers", verbs: verbs("update"), why: "owns its ProviderConfigUsage"},
	{group: "zerotrust.tunnels.cloudflare.com", resource: "networkroutes", verbs: verbs("get list watch create update patch delete"), why: "networkroute MR; service: Watches, create, update, delete; cloudflaretunnel: Watches, List"},
	{group: "zerotrust.tunnels.cloudflare.com", resource: "networkroutes/status", verbs: verbs("update"), why: "managed reconciler"},
	{group: "zerotrust.tunnels.cloudflare.com", resource: "networkroutes/finalizers", verbs: verbs("update"), why: "owns its ProviderConfigUsage"},
	{group: "zerotrust.tunnels.cloudflare.com", resource: "virtualnetworks", verbs: verbs("get list watch update"), why: "virtualnetwork MR (made only by users: no reference of its own to patch); networkroute reference resolver"},
	{group: "zerotrust.tunnels.cloudflare.com", resource: "virtualnetworks/status", verbs: verbs("update"), why: "managed reconciler"},
	{group: "zerotrust.tunnels.cloudflare.com", resource: "virtualnetworks/finalizers", verbs: verbs("update"), why: "owns its ProviderConfigUsage"},
	{group: "zerotrust.tunnels.cloudflare.com", resource: "accesspolicies", verbs: verbs("get list watch update patch"), why: "accesspolicy MR (made only by users; its reference resolver applies resolved group and service-token IDs by patch); accessapplication reference resolver"},
	{group: "zerotrust.tunnels.cloudflare.com", resource: "accesspolicies/status", verbs: verbs("update"), why: "managed reconciler"},
	{group: "zerotrust.tunnels.cloudflare.com", resource: "accesspolicies/finalizers", verbs: verbs("update"), why: "owns its ProviderConfigUsage"},
	{group: "zerotrust.tunnels.cloudflare.com", resource: "accessapplications", verbs: verbs("get list watch create update patch delete"), why: "accessapplication MR; made by PublicHostnames whose Access is managed"},
	{group: "zerotrust.tunnels.cloudflare.com", resource: "accessapplications/status", verbs: verbs("update"), why: "managed reconciler"},
	{group: "zerotrust.tunnels.cloudflare.com", resource: "accessapplications/finalizers", verbs: verbs("update"), why: "owns its ProviderConfigUsage"},
	{group: "zerotrust.tunnels.cloudflare.com", resource: "accessgroups", verbs: verbs("get list watch update patch"), why: "accessgroup MR (made only by users; its reference resolver applies resolved IDs by patch); Access rules' reference resolver"},
	{group: "zerotrust.tunnels.cloudflare.com", resource: "accessgroups/status", verbs: verbs("update"), why: "managed reconciler"},
	{group: "zerotrust.tunnels.cloudflare.com", resource: "accessgroups/finalizers", verbs: verbs("update"), why: "owns its ProviderConfigUsage"},
	{group: "zerotrust.tunnels.cloudflare.com", resource: "accessservicetokens", verbs: verbs("get list watch update"), why: "accessservicetoken MR (made only by users); Access rules' reference resolver"},
	{group: "zerotrust.tunnels.cloudflare.com", resource: "accessservicetokens/status", verbs: verbs("update"), why: "managed reconciler"},
	{group: "zerotrust.tunnels.cloudflare.com", resource: "accessservicetokens/finalizers", verbs: verbs("update"), why: "owns its ProviderConfigUsage (and its connection Secret)"},
	{group: "connectivity.tunnels.cloudflare.com", resource: "vpcservices", verbs: verbs("get list watch create update patch delete"), why: "vpcservice MR; ingress: Owns, create, update, delete; cloudflaretunnel: Watches, List; reference resolver"},
	{group: "connectivity.tunnels.cloudflare.com", resource: "vpcservices/status", verbs: verbs("update"), why: "managed reconciler"},
	{group: "connectivity.tunnels.cloudflare.com", resource: "vpcservices/finalizers", verbs: verbs("update"), why: "owns its ProviderConfigUsage"},
	{group: "dns.tunnels.cloudflare.com", resource: "dnsrecords", verbs: verbs("get list watch create update patch delete"), why: "dnsrecord MR; publichostname: Owns, create, update, delete, takes over the ingress's older ones; ingress: List, delete"},
	{group: "dns.tunnels.cloudflare.com", resource: "dnsrecords/status", verbs: verbs("update"), why: "managed reconciler"},
	{group: "dns.tunnels.cloudflare.com", resource: "dnsrecords/finalizers", verbs: verbs("update"), why: "owns its ProviderConfigUsage"},
	{group: "loadbalancing.tunnels.cloudflare.com", resource: "loadbalancermonitors", verbs: verbs("get list watch create update delete"), why: "loadbalancermonitor MR; made by load-balanced PublicHostnames; the pool's monitor resolver"},
	{group: "loadbalancing.tunnels.cloudflare.com", resource: "loadbalancermonitors/status", verbs: verbs("update"), why: "managed reconciler"},
	{group: "loadbalancing.tunnels.cloudflare.com", resource: "loadbalancermonitors/finalizers", verbs: verbs("update"), why: "owns its ProviderConfigUsage"},
	{group: "loadbalancing.tunnels.cloudflare.com", resource: "loadbalancerpools", verbs: verbs("get list watch create update patch delete"), why: "loadbalancerpool MR (its resolver applies the monitor and tunnel IDs by patch); made by load-balanced PublicHostnames; the load balancer's pool resolver"},
	{group: "loadbalancing.tunnels.cloudflare.com", resource: "loadbalancerpools/status", verbs: verbs("update"), why: "managed reconciler"},
	{group: "loadbalancing.tunnels.cloudflare.com", resource: "loadbalancerpools/finalizers", verbs: verbs("update"), why: "owns its ProviderConfigUsage"},
	{group: "loadbalancing.tunnels.cloudflare.com", resource: "loadbalancers", verbs: verbs("get list watch create update patch delete"), why: "loadbalancer MR (its resolver applies the pool IDs by patch); made by load-balanced PublicHostnames"},
	{group: "loadbalancing.tunnels.cloudflare.com", resource: "loadbalancers/status", verbs: verbs("update"), why: "managed reconciler"},
	{group: "loadbalancing.tunnels.cloudflare.com", resource: "loadbalancers/finalizers", verbs: verbs("update"), why: "owns its ProviderConfigUsage"},
	// Kubernetes
	{group: "", resource: "secrets", verbs: verbs("get list watch create patch delete"), why: "config + cloudflaretunnel + publichostname: Watches; credentials; connection publisher (Get, Create, Patch); token Secret delete; publichostname: Get CA Secrets"},
	{group: "", resource: "services", verbs: verbs("get list watch"), why: "ingress + publichostname: Get and Watch backends; service: For (private routes of cluster IPs)"},
	{group: "discovery.k8s.io", resource: "endpointslices", verbs: verbs("get list watch"), why: "publichostname: List and Watches (the origin guardrail judges endpoints written by hand)"},
	{group: "", resource: "events", verbs: verbs("create patch"), why: "GetEventRecorderFor (core/v1 events)"},
	{group: "", resource: "namespaces", verbs: verbs("get list watch"), why: "sharing: a namespace's labels against a shared tunnel's selector (ingress, service, publichostname, cloudflaretunnel: Watches); mr: the cluster's default owner ID (APIReader Get of kube-system)"},
	{group: "apps", resource: "deployments", verbs: verbs("get list watch create update patch delete"), why: "cloudflaretunnel: Owns, server-side apply (patch), the managed-fields upgrade (patch), delete"},
	{group: "policy", resource: "poddisruptionbudgets", verbs: verbs("get list watch create update patch delete"), why: "cloudflaretunnel: Owns, server-side apply (patch), the managed-fields upgrade (patch), delete"},
	{group: "networking.k8s.io", resource: "ingresses", verbs: verbs("get list watch update patch"), why: "ingress: For, finalizer (merge patch; update by earlier versions), List"},
	{group: "networking.k8s.io", resource: "ingresses/status", verbs: verbs("update patch"), why: "ingress: address (merge patch; update by earlier versions)"},
	{group: "networking.k8s.io", resource: "ingresses/finalizers", verbs: verbs("update"), why: "ingress: controller reference (blockOwnerDeletion) on the managed resources it makes"},
	{group: "networking.k8s.io", resource: "ingressclasses", verbs: verbs("get list watch"), why: "ingress: List"},
	{group: "gateway.networking.k8s.io", resource: "gateways", verbs: verbs("get list watch"), why: "gatewaybinding: Get, Watches"},
	{group: "gateway.networking.k8s.io", resource: "gateways", verbs: verbs("update"), why: "gateway: For, finalizer"},
	{group: "gateway.networking.k8s.io", resource: "gateways/status", verbs: verbs("update"), why: "gateway: Status().Update"},
	{group: "gateway.networking.k8s.io", resource: "gateways/finalizers", verbs: verbs("update"), why: "gateway: controller reference (blockOwnerDeletion) on its CloudflareTunnel and PublicHostnames"},
	{group: "gateway.networking.k8s.io", resource: "gatewayclasses/status", verbs: verbs("update"), why: "gateway: the GatewayClass's Accepted condition"},
	{group: "gateway.networking.k8s.io", resource: "httproutes/status", verbs: verbs("update"), why: "gateway: its own entries of status.parents"},
	{group: "gateway.networking.k8s.io", resource: "grpcroutes/status", verbs: verbs("update"), why: "gateway: its own entries of status.parents (GRPCRoutes not supported, and told so)"},
	{group: "gateway.networking.k8s.io", resource: "gatewayclasses", verbs: verbs("get list watch"), why: "gatewaybinding: Get, Watches (the class's controller name)"},
	{group: "gateway.networking.k8s.io", resource: "httproutes", verbs: verbs("get list watch"), why: "gatewaybinding: List, Watches"},
	{group: "gateway.networking.k8s.io", resource: "grpcroutes", verbs: verbs("get list watch"), why: "gatewaybinding: List through the cache (reported as not supported)"},
	{group: "gateway.networking.k8s.io", resource: "referencegrants", verbs: verbs("get list watch"), why: "gatewaybinding: List, Watches (cross-namespace origin)"},
	{group: "externaldns.k8s.io", resource: "dnsendpoints", verbs: verbs("get create update delete"), why: "gatewaybinding, gateway, ingress: ExternalDNS mode (uncached Get, Create, Update, Delete)"},
	{group: "apiextensions.k8s.io", resource: "customresourcedefinitions", verbs: verbs("get list watch"), why: "customresourcesgate (safe start)"},
	{group: "admissionregistration.k8s.io", resource: "validatingwebhookconfigurations", verbs: verbs("get patch"), name: webhookConfiguration, why: "--webhook-self-signed: its CA into the webhook configuration's caBundle (admit.SelfSigned)"},
	{group: "coordination.k8s.io", resource: "leases", verbs: verbs("create"), namespace: namespace, why: "leader election"},
	{group: "coordination.k8s.io", resource: "leases", verbs: verbs("get update"), namespace: namespace, name: leaseName, why: "leader election"},
}

// denied must stay out of the provider's reach.
var denied = []need{
	{resource: "pods", verbs: verbs("get list create")},
	{resource: "pods/exec", verbs: verbs("create")},
	{resource: "configmaps", verbs: verbs("get list")},
	{resource: "namespaces", verbs: verbs("create")},
	{resource: "namespaces", verbs: verbs("update patch delete"), name: "team-a"},
	{resource: "nodes", verbs: verbs("list")},
	{resource: "serviceaccounts/token", verbs: verbs("create")},
	{resource: "secrets", verbs: verbs("deletecollection")},
	{group: "rbac.authorization.k8s.io", resource: "clusterroles", verbs: verbs("create escalate bind")},
	{group: "apiextensions.k8s.io", resource: "customresourcedefinitions", verbs: verbs("create update delete")},
	{group: "networking.k8s.io", resource: "ingresses", verbs: verbs("create delete")},
	{group: "gateway.networking.k8s.io", resource: "httproutes/status", verbs: verbs("patch")},
	{group: "gateway.networking.k8s.io", resource: "httproutes", verbs: verbs("create update patch delete")},
	{group: "gateway.networking.k8s.io", resource: "gateways/status", verbs: verbs("patch")},
	{group: "gateway.networking.k8s.io", resource: "gateways", verbs: verbs("create delete")},
	{group: "admissionregistration.k8s.io", resource: "validatingwebhookconfigurations", verbs: verbs("get patch update delete"), name: "someone-elses-webhook"},
	{group: "admissionregistration.k8s.io", resource: "validatingwebhookconfigurations", verbs: verbs("list create")},
	{group: "admissionregistration.k8s.io", resource: "mutatingwebhookconfigurations", verbs: verbs("get patch"), name: webhookConfiguration},
	{group: "coordination.k8s.io", resource: "leases", verbs: verbs("get update"), namespace: "kube-system", name: leaseName},
	{group: "coordination.k8s.io", resource: "leases", verbs: verbs("create"), namespace: "kube-system"},
	{group: "coordination.k8s.io", resource: "leases", verbs: verbs("get update"), namespace: namespace, name: "someone-elses-lease"},
}

func (n need) key(verb string) string { return n.group + "|" + n.resource + "|" + verb }

func (n need) describe(verb string) string {
	s := verb + " " + n.resource
	if n.group != "" {
		s += " (" + n.group + ")"
	}
	if n.namespace != "" {
		s += " in namespace " + n.namespace
	}
	if n.name != "" {
		s += " named " + n.name
	}
	return s
}

func (n need) attributes(verb string) *authorizationv1.ResourceAttributes {
	res, sub, _ := strings.Cut(n.resource, "/")
	return &authorizationv1.ResourceAttributes{Namespace: n.namespace, Verb: verb, Group: n.group, Resource: res, Subresource: sub, Name: n.name}
}

// allowed asks the API server's RBAC authorizer whether the provider's
// ServiceAccount may do verb on n.
func allowed(t *testing.T, ctx context.Context, n need, verb string) bool {
	t.Helper()
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:               "system:serviceaccount:" + namespace + ":" + serviceAccount,
		Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"},
		ResourceAttributes: n.attributes(verb),
	}}
	if err := env.Client.Create(ctx, sar); err != nil {
		t.Fatalf("SubjectAccessReview: %v", err)
	}
	return sar.Status.Allowed
}

// TestRBAC checks rbac.yaml against the needs table: no wildcards, every
// need granted by the real authorizer, nothing granted beyond the table, and
// a few things the provider must never be able to do.
func TestRBAC(t *testing.T) {
	ctx := context.Background()
	install := installDocuments(t)
	cr := convert[rbacv1.ClusterRole](t, find(t, install, "ClusterRole", "provider-cloudflare-tunnel"))
	role := convert[rbacv1.Role](t, find(t, install, "Role", "provider-cloudflare-tunnel-leader-election"))

	t.Run("NoWildcards", func(t *testing.T) {
		for _, rs := range []struct {
			name  string
			rules []rbacv1.PolicyRule
		}{{"ClusterRole " + cr.Name, cr.Rules}, {"Role " + role.Name, role.Rules}} {
			for i, r := range rs.rules {
				for field, vals := range map[string][]string{"apiGroups": r.APIGroups, "resources": r.Resources, "verbs": r.Verbs, "resourceNames": r.ResourceNames, "nonResourceURLs": r.NonResourceURLs} {
					for _, v := range vals {
						if strings.Contains(v, "*") {
							t.Errorf("%s rule %d: %s contains %q", rs.name, i, field, v)
						}
					}
				}
				if len(r.NonResourceURLs) > 0 {
					t.Errorf("%s rule %d grants nonResourceURLs %v", rs.name, i, r.NonResourceURLs)
				}
			}
		}
		if cr.AggregationRule != nil {
			t.Errorf("ClusterRole %s aggregates other roles", cr.Name)
		}
	})

	t.Run("NothingBeyondTheTable", func(t *testing.T) {
		want := map[string]bool{}
		for _, n := range needs {
			for _, v := range n.verbs {
				want[n.key(v)] = true
			}
		}
		var extra []string
		for _, r := range append(slices.Clone(cr.Rules), role.Rules...) {
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					for _, v := range r.Verbs {
						if k := (need{group: g, resource: res}).key(v); !want[k] {
							extra = append(extra, k)
						}
					}
				}
			}
		}
		sort.Strings(extra)
		if len(extra) > 0 {
			t.Errorf("rbac.yaml grants access no controller needs (group|resource|verb); remove it, or add the need to the table with its reason:\n%s", strings.Join(extra, "\n"))
		}
	})

	// The authorizer decides for real once the RBAC objects exist.
	applyNamespace(t, ctx, install)
	for _, d := range install {
		switch d.obj.GetKind() {
		case "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding":
			if err := apply(ctx, d.obj); err != nil {
				t.Fatalf("cannot apply %s: %v", d, err)
			}
		}
	}

	t.Run("EveryNeedIsGranted", func(t *testing.T) {
		for _, n := range needs {
			for _, v := range n.verbs {
				if !allowed(t, ctx, n, v) {
					t.Errorf("not granted: %s, needed by %s", n.describe(v), n.why)
				}
			}
		}
	})

	t.Run("ForbiddenStaysForbidden", func(t *testing.T) {
		for _, n := range denied {
			for _, v := range n.verbs {
				if allowed(t, ctx, n, v) {
					t.Errorf("granted, but must not be: %s", n.describe(v))
				}
			}
		}
	})
}

// TestPackageWebhookConfigurationIsTheInstalls: the Crossplane package's
// webhook configuration is cluster/install's but for what Crossplane
// rewrites (its name, and each clientConfig's Service name, namespace and
// port: the provider's Service in Crossplane's namespace, port 9443, with
// Crossplane's CA), and the API server accepts it as Crossplane makes it.
func TestPackageWebhookConfigurationIsTheInstalls(t *testing.T) {
	docs, err := readDocuments(filepath.Join(testenv.RepoRoot(), "package", "webhookconfiguration.yaml"))
	if err != nil || len(docs) != 1 {
		t.Fatalf("package/webhookconfiguration.yaml: %d documents, %v", len(docs), err)
	}
	pkg := convert[admissionregistrationv1.ValidatingWebhookConfiguration](t, docs[0])
	inst := convert[admissionregistrationv1.ValidatingWebhookConfiguration](t, find(t, installDocuments(t), "ValidatingWebhookConfiguration", webhookConfiguration))
	// What Crossplane's revision establisher sets on each webhook.
	asCrossplaneMakesIt := func(v *admissionregistrationv1.ValidatingWebhookConfiguration) *admissionregistrationv1.ValidatingWebhookConfiguration {
		v = v.DeepCopy()
		v.Name, v.Labels = "crossplane-provider-provider-cloudflare-tunnel", nil
		for i := range v.Webhooks {
			s := v.Webhooks[i].ClientConfig.Service
			s.Name, s.Namespace, s.Port = "provider-cloudflare-tunnel", "crossplane-system", ptrTo(int32(9443))
			v.Webhooks[i].ClientConfig.CABundle = []byte("crossplane's CA")
		}
		return v
	}
	if diff := cmp.Diff(asCrossplaneMakesIt(inst), asCrossplaneMakesIt(pkg)); diff != "" {
		t.Errorf("package/webhookconfiguration.yaml differs from cluster/install/webhook.yaml beyond what Crossplane rewrites (-install +package):\n%s", diff)
	}
	if err := env.Client.Create(context.Background(), asCrossplaneMakesIt(pkg), client.DryRunAll); err != nil {
		t.Errorf("the API server refuses the package's webhook configuration as Crossplane makes it: %v", err)
	}
}

func ptrTo[T any](v T) *T { return &v }
