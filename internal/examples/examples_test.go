package examples_test

// TestExamples applies examples/ to a running provider (a real API server,
// the provider's controllers, the Cloudflare simulator) as a user trying
// them would: each folder whole (kubectl apply -f examples/access/), and
// each file alone (kubectl apply -f examples/access/application.yaml).
// Each of those runs must end with every object the provider answers for
// Ready (a Gateway of this provider's class Programmed, its routes
// Accepted), and none refused as a loser of a claim: no NameTaken,
// Conflict, NotAllowed, HostnameConflict, TunnelNameTaken or RecordRefused
// on any condition — two examples of one folder must never claim the same
// hostname, name or record.
//
// The runs share one control plane and one simulated account, all at once.
// To keep them apart, each run's objects are rewritten, the same way for
// every object of the run, so collisions inside a run stay collisions: its
// namespaces get the run's prefix ("f7-team-a", also in namespace
// references, "<ns>/<tunnel>" annotations, kubernetes.io/metadata.name
// selectors and <svc>.<ns>.svc names), its hostnames under example.com and
// internal.example get the run's label (app.example.com →
// app.f7.example.com), and the names that are unique in a Cloudflare
// account (a CloudflareTunnel's tunnelName, defaulted to its name; every
// spec.forProvider.name but a DNS record's; a VPC service annotation; a
// load-balanced hostname's pool names, in spec.loadBalancing or the lb-*
// annotations) get the run's prefix. ClusterProviderConfigs are renamed
// with the prefix, so examples/provider never replaces the test's
// "default".
//
// What an example needs from outside its folder — the prerequisites — the
// test makes, and only these:
//   - the ClusterProviderConfig "default" for the simulated account (what
//     examples/provider/config.yaml shows, pointing at the simulator);
//   - every namespace a run names, labelled tunnels.cloudflare.com/edge=true
//     as examples/gateway/native/gateway.yaml asks (a run's own Namespace
//     objects are applied over them);
//   - the cluster-scoped objects of examples/ (IngressClass, GatewayClasses,
//     PriorityClass), the same in every run, applied once before the runs,
//     with Gateway API's CRDs;
//   - the Services the examples route to, the CA Secrets "web-ca" and the
//     credentials Secret "team-a-cloudflare" they name, and the
//     CloudflareTunnels they say exist ("edge" of team-a,
//     "redis-cache-azure-development" of redis-cf-tunnel, "shared" of
//     team-a), in the namespaces the run uses, unless the run defines them
//     (prerequisites below); Cloudflare IDs the examples name (tunnels to
//     import) are replaced by IDs of the run's own;
//   - what runs no code in a test: the test plays the kubelet (cloudflared's
//     Deployment is ready), cloudflared (two connectors in the simulator)
//     and Traefik (it accepts the HTTPRoutes of its Gateways).
//
// Two kinds of example cannot be Ready anywhere but in their author's
// account, and are only checked for refusals (exceptions below): imports of
// objects by Cloudflare ID (Observe-only), and the provider config whose
// credentials come from the provider's environment. And a few files mean
// nothing without their folder-mates (a route without its Gateway): alone,
// they are checked for refusals only (needsFolderMates below).

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/yaml"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/composite/cloudflaretunnel"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/gateway/translate"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/providertest"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

var p *providertest.Provider

func TestMain(m *testing.M) { os.Exit(providertest.Run(m, &p)) }

// refused are the reasons of a loser: an object that one of its folder-mates
// (or another example) beat to a hostname, name or record.
var refused = []string{"NameTaken", "Conflict", "NotAllowed", "HostnameConflict", "TunnelNameTaken", "RecordRefused"}

// exceptions are example objects that cannot be Ready outside their
// author's account ("file|Kind|name"): they are checked for refusals only.
var exceptions = map[string]string{
	"connectivity/vpcservice.yaml|VPCService|internal-api":    "reached through a tunnel ID of the author's account",
	"connectivity/vpcservice.yaml|VPCService|legacy-postgres": "an import (Observe) of the author's VPC service",
	"dns/dnsrecord.yaml|DNSRecord|legacy-www":                 "an import (Observe) of the author's DNS record",
	"zerotrust/tunnel.yaml|Tunnel|legacy-tunnel":              "an import (Observe) of the author's tunnel",
	"provider/config.yaml|ClusterProviderConfig|from-environment": "credentials from the provider's environment, " +
		"which the test's provider does not have",
}

// needsFolderMates are the files that publish nothing alone: applied alone,
// they are checked for refusals only.
var needsFolderMates = map[string]string{
	"gateway/access.yaml":           "its route needs gateway.yaml's Gateway and gatewaybinding.yaml",
	"gateway/gatewaybinding.yaml":   "it binds gateway.yaml's Gateway, with access.yaml's policy",
	"gateway/httproute.yaml":        "its Gateway is gateway.yaml's, its binding gatewaybinding.yaml",
	"gateway/native/gateway.yaml":   "its tunnel's settings are gatewayparameters.yaml",
	"gateway/native/httproute.yaml": "its Gateway is gateway.yaml's",
	"gateway/native/grpcroute.yaml": "its Gateway is gateway.yaml's",
}

// shared are the cluster-scoped kinds applied once for every run.
var shared = map[string]bool{"IngressClass": true, "GatewayClass": true, "PriorityClass": true}

// noReady are the provider's kinds no controller sets conditions on.
var noReady = map[string]bool{"GatewayParameters": true, "ProviderConfigUsage": true}

// prerequisites are the objects examples name and expect to exist, in
// their original namespaces; when, if set, is a string the run's files
// must contain for the object to be made.
var prerequisites = []struct {
	obj  client.Object
	when string
}{
	{obj: service("team-a", "web", port("https", 8443), port("http", 80), port("alt", 8080))},
	{obj: service("team-a", "api", port("http", 8080), port("metrics", 9090))},
	{obj: service("team-a", "api-canary", port("http", 9090))},
	{obj: service("team-a", "admin", port("http", 8080))},
	{obj: service("team-a", "grafana", port("http", 3000))},
	{obj: service("team-a", "greeter", port("grpc", 8443))},
	{obj: service("team-a", "greeter-canary", port("grpc", 8443))},
	{obj: service("redis-cf-tunnel", "web", port("http", 80))},
	{obj: service("redis-cf-tunnel", "api", port("http", 8080))},
	{obj: service("redis-cf-tunnel", "admin", port("https", 443))},
	{obj: service("redis-cf-tunnel", "grafana", port("http", 3000))},
	{obj: service("redis-cf-tunnel", "prometheus", port("http", 9090))},
	{obj: service("redis-cf-tunnel", "alertmanager", port("http", 9093))},
	{obj: service("redis-cf-tunnel", "redis-cache-azure-dev", port("redis", 6379))},
	{obj: service("shared-services", "admin", port("http", 8080))},
	{obj: service("shared-services", "billing", port("grpc", 8443))},
	{obj: service("traefik", "traefik", port("web", 8000))},
	{obj: secret("team-a", "web-ca", map[string]string{"ca.crt": "-----BEGIN CERTIFICATE-----\n"}), when: "web-ca"},
	{obj: secret("redis-cf-tunnel", "web-ca", map[string]string{"ca.crt": "-----BEGIN CERTIFICATE-----\n"}), when: "web-ca"},
	{obj: secret("team-a", "team-a-cloudflare", map[string]string{"CLOUDFLARE_API_TOKEN": providertest.Token, "CLOUDFLARE_ACCOUNT_ID": providertest.AccountID}), when: "team-a-cloudflare"},
	{obj: tunnel("team-a", "edge")},
	{obj: tunnel("redis-cf-tunnel", "redis-cache-azure-development")},
	{obj: tunnel("team-a", "shared"), when: "tunnels.cloudflare.com/tunnel: shared"},
}

func port(name string, n int32) corev1.ServicePort {
	return corev1.ServicePort{Name: name, Port: n, TargetPort: intstr.FromInt32(n)}
}

// service is headless: the runs' Services would fill the test API
// server's small Service IP range, and an origin is reached by name.
func service(ns, name string, ports ...corev1.ServicePort) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Ports: ports}}
}

func secret(ns, name string, data map[string]string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, StringData: data}
}

func tunnel(ns, name string) *v1alpha1.CloudflareTunnel {
	return &v1alpha1.CloudflareTunnel{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1alpha1.CloudflareTunnelSpec{Replicas: ptr.To[int32](1)}}
}

// doc is one object of an example file.
type doc struct {
	file string // relative to examples/
	name string // as the file names it
	obj  *unstructured.Unstructured
}

func (d doc) key() string { return d.file + "|" + d.obj.GetKind() + "|" + d.name }

// A run is one folder whole or one file alone.
type run struct {
	name, id string
	files    []string
	alone    bool
	// namespaces maps the files' namespaces to the run's.
	namespaces map[string]string
	docs       []doc
	text       string
}

func TestExamples(t *testing.T) {
	root := filepath.Join(testenv.RepoRoot(), "examples")
	folders := exampleFolders(t, root)
	p.InstallThirdPartyCRDs(t, "gateway-api")
	kinds := providerKinds(t)

	var runs []*run
	for _, f := range folders {
		runs = append(runs, &run{name: f.dir, files: f.files})
	}
	for _, f := range folders {
		if len(f.files) < 2 {
			continue // the folder's run is the file's
		}
		for _, file := range f.files {
			runs = append(runs, &run{name: file, files: []string{file}, alone: true})
		}
	}
	var clusterDocs []doc
	for i, r := range runs {
		r.id = fmt.Sprintf("x%d", i)
		clusterDocs = append(clusterDocs, r.load(t, root)...)
	}
	applyShared(t, clusterDocs)

	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			r.apply(t)
			r.check(t, kinds)
		})
	}
}

type folder struct {
	dir   string
	files []string
}

// exampleFolders lists examples/'s folders with YAML files, deeper ones
// (gateway/native) as folders of their own.
func exampleFolders(t *testing.T, root string) []folder {
	t.Helper()
	byDir := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".yaml" {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		byDir[filepath.Dir(rel)] = append(byDir[filepath.Dir(rel)], rel)
		return nil
	})
	if err != nil || len(byDir) == 0 {
		t.Fatalf("no examples in %s: %v", root, err)
	}
	var out []folder
	for dir, files := range byDir {
		sort.Strings(files)
		out = append(out, folder{dir: dir, files: files})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].dir < out[j].dir })
	return out
}

// load reads and rewrites the run's objects and returns the cluster-scoped
// ones every run shares.
func (r *run) load(t *testing.T, root string) []doc {
	t.Helper()
	var raw []doc
	var text strings.Builder
	for _, f := range r.files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		text.Write(b)
		objs, err := decode(b)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, o := range objs {
			raw = append(raw, doc{file: f, name: o.GetName(), obj: o})
		}
	}
	r.text = text.String()
	r.namespaces = map[string]string{}
	for _, d := range raw {
		collectNamespaces(d.obj, r)
	}
	var sharedDocs []doc
	for _, d := range raw {
		if shared[d.obj.GetKind()] {
			sharedDocs = append(sharedDocs, d)
			continue
		}
		r.rewrite(d.obj)
		r.docs = append(r.docs, d)
	}
	return sharedDocs
}

func decode(b []byte) ([]*unstructured.Unstructured, error) {
	rd := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
	var out []*unstructured.Unstructured
	for {
		raw, err := rd.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		js, err := yaml.YAMLToJSON(raw)
		if err != nil {
			return nil, err
		}
		if js = bytes.TrimSpace(js); len(js) == 0 || string(js) == "null" {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(js); err != nil {
			return nil, err
		}
		out = append(out, u)
	}
}

// collectNamespaces notes every namespace the object is in or names.
func collectNamespaces(o *unstructured.Unstructured, r *run) {
	add := func(ns string) {
		if ns != "" {
			r.namespaces[ns] = r.id + "-" + ns
		}
	}
	if o.GetKind() == "Namespace" {
		add(o.GetName())
	}
	add(o.GetNamespace())
	walk(o.Object, "", func(path, v string) string {
		if strings.HasSuffix(path, ".namespace") || strings.HasSuffix(path, ".kubernetes.io/metadata.name") {
			add(v)
		}
		if strings.HasSuffix(path, ".tunnels.cloudflare.com/tunnel") && strings.Contains(v, "/") {
			add(strings.SplitN(v, "/", 2)[0])
		}
		return v
	})
}

var (
	domains = regexp.MustCompile(`((?:[*a-z0-9-]+\.)+)(example\.com|internal\.example)\b`)
	uuids   = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
)

// runUUID is the run's own stand-in for a Cloudflare ID an example names
// (a tunnel to import): two runs importing the same ID would collide.
func runUUID(run, id string) string {
	h := sha256.Sum256([]byte(run + "/" + id))
	x := hex.EncodeToString(h[:16])
	return x[:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:32]
}

// rewrite moves the object into the run: see the package comment.
func (r *run) rewrite(o *unstructured.Unstructured) {
	kind := o.GetKind()
	if kind == "CloudflareTunnel" {
		if _, ok, _ := unstructured.NestedString(o.Object, "spec", "tunnelName"); !ok {
			_ = unstructured.SetNestedField(o.Object, o.GetName(), "spec", "tunnelName")
		}
	}
	var svc *regexp.Regexp
	if len(r.namespaces) > 0 {
		var alts []string
		for ns := range r.namespaces {
			alts = append(alts, regexp.QuoteMeta(ns))
		}
		svc = regexp.MustCompile(`\.(` + strings.Join(alts, "|") + `)\.svc\b`)
	}
	o.Object = walk(o.Object, "", func(path, v string) string {
		switch {
		case path == ".apiVersion" || path == ".kind" || path == ".metadata.name":
			return v
		case path == ".metadata.namespace" || strings.HasSuffix(path, ".namespace") || strings.HasSuffix(path, ".kubernetes.io/metadata.name"):
			return r.namespaces[v]
		case strings.HasSuffix(path, ".tunnels.cloudflare.com/tunnel") && strings.Contains(v, "/"):
			ns, name, _ := strings.Cut(v, "/")
			return r.namespaces[ns] + "/" + name
		case strings.HasSuffix(path, ".tunnels.cloudflare.com/vpc-service"),
			path == ".spec.forProvider.name" && kind != "DNSRecord",
			path == ".spec.tunnelName",
			strings.HasPrefix(path, ".spec.loadBalancing.") && (strings.HasSuffix(path, ".pool") || strings.HasSuffix(path, ".pools") || strings.HasSuffix(path, ".fallbackPool")),
			strings.HasSuffix(path, ".tunnels.cloudflare.com/lb-pool"), strings.HasSuffix(path, ".tunnels.cloudflare.com/lb-fallback-pool"):
			return r.id + "-" + strings.TrimSpace(v)
		case strings.HasSuffix(path, ".tunnels.cloudflare.com/lb-pools"):
			pools := strings.Split(v, ",")
			for i := range pools {
				pools[i] = r.id + "-" + strings.TrimSpace(pools[i])
			}
			return strings.Join(pools, ",")
		}
		v = domains.ReplaceAllString(v, "${1}"+r.id+".${2}")
		v = uuids.ReplaceAllStringFunc(v, func(id string) string { return runUUID(r.id, id) })
		if svc != nil {
			v = svc.ReplaceAllStringFunc(v, func(m string) string {
				ns := strings.TrimSuffix(strings.TrimPrefix(m, "."), ".svc")
				return "." + r.namespaces[ns] + ".svc"
			})
		}
		return v
	}).(map[string]any)
	switch {
	case kind == "Namespace":
		o.SetName(r.namespaces[o.GetName()])
	case kind == "ClusterProviderConfig":
		o.SetName(r.id + "-" + o.GetName())
	}
}

// walk calls fn on every string value under v (not on map keys), with its
// path (".spec.forProvider.name"; list items add no element), and puts
// back what fn returns.
func walk(v any, path string, fn func(path, v string) string) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = walk(e, path+"."+k, fn)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = walk(e, path, fn)
		}
		return x
	case string:
		return fn(path, x)
	}
	return v
}

func applyObj(o *unstructured.Unstructured) error {
	return p.Client.Apply(context.Background(), client.ApplyConfigurationFromUnstructured(o.DeepCopy()), client.FieldOwner("kubectl"), client.ForceOwnership)
}

// applyShared applies the cluster-scoped objects every run shares, each
// once: they must be the same wherever examples/ defines them.
func applyShared(t *testing.T, docs []doc) {
	t.Helper()
	seen := map[string]doc{}
	for _, d := range docs {
		k := d.obj.GetKind() + "/" + d.obj.GetName()
		if prev, ok := seen[k]; ok {
			if !equalSpec(prev.obj, d.obj) {
				t.Errorf("%s is defined differently in %s and %s", k, prev.file, d.file)
			}
			continue
		}
		seen[k] = d
		if err := applyObj(d.obj); err != nil {
			t.Fatalf("%s: cannot apply %s: %v", d.file, k, err)
		}
	}
}

func equalSpec(a, b *unstructured.Unstructured) bool {
	ja, _ := a.MarshalJSON()
	jb, _ := b.MarshalJSON()
	return bytes.Equal(ja, jb)
}

// defines says whether the run holds an object of kind in ns (the run's)
// named name.
func (r *run) defines(kind, ns, name string) bool {
	return slices.ContainsFunc(r.docs, func(d doc) bool {
		return d.obj.GetKind() == kind && d.obj.GetNamespace() == ns && d.obj.GetName() == name
	})
}

// apply makes the run's namespaces and prerequisites, then applies its
// objects, Namespaces first, as kubectl apply -f does a folder.
func (r *run) apply(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	for _, ns := range r.namespaces {
		n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{"tunnels.cloudflare.com/edge": "true"}}}
		if err := p.Client.Create(ctx, n); err != nil && !kerrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	for _, pre := range prerequisites {
		ns, used := r.namespaces[pre.obj.GetNamespace()]
		if !used || (pre.when != "" && !strings.Contains(r.text, pre.when)) {
			continue
		}
		kind := fmt.Sprintf("%T", pre.obj)
		kind = kind[strings.LastIndex(kind, ".")+1:]
		name := pre.obj.GetName()
		if r.defines(kind, ns, name) || (kind == "CloudflareTunnel" && (r.defines("Tunnel", ns, name) || r.defines("Gateway", ns, name))) {
			continue
		}
		o := pre.obj.DeepCopyObject().(client.Object)
		o.SetNamespace(ns)
		if ct, ok := o.(*v1alpha1.CloudflareTunnel); ok {
			ct.Spec.TunnelName = ptr.To(ns + "-" + name)
		}
		if err := p.Client.Create(ctx, o); err != nil {
			t.Fatalf("prerequisite %s %s/%s: %v", kind, ns, name, err)
		}
	}
	docs := slices.Clone(r.docs)
	slices.SortStableFunc(docs, func(a, b doc) int {
		return boolInt(b.obj.GetKind() == "Namespace") - boolInt(a.obj.GetKind() == "Namespace")
	})
	for _, d := range docs {
		if err := applyObj(d.obj); err != nil {
			t.Fatalf("%s: the API server refuses %s %s: %v", d.file, d.obj.GetKind(), d.obj.GetName(), err)
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// kind is one of the provider's CRDs.
type kind struct {
	gvk        schema.GroupVersionKind
	namespaced bool
}

func providerKinds(t *testing.T) []kind {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "package", "crds", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs: %v", err)
	}
	var out []kind
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(b, crd); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if noReady[crd.Spec.Names.Kind] {
			continue
		}
		for _, v := range crd.Spec.Versions {
			if v.Storage {
				out = append(out, kind{
					gvk:        schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind},
					namespaced: crd.Spec.Scope == apiextensionsv1.NamespaceScoped,
				})
			}
		}
	}
	return out
}

// object is what the check saw of one object.
type object struct {
	what       string // "PublicHostname f3-team-a/grafana"
	source     string // the example's "file|Kind|name", "" for what the provider made
	conditions []metav1.Condition
	// want is the condition that must be True ("" none).
	want string
}

func (o object) String() string {
	var cs []string
	for _, c := range o.conditions {
		cs = append(cs, fmt.Sprintf("%s=%s %s: %s", c.Type, c.Status, c.Reason, c.Message))
	}
	return o.what + " [" + strings.Join(cs, "; ") + "]"
}

// check waits until every object that must be Ready is, failing at once on
// a refusal.
func (r *run) check(t *testing.T, kinds []kind) {
	t.Helper()
	const timeout = 150 * time.Second
	onlyRefusals := r.alone && needsFolderMates[r.files[0]] != ""
	played := &playground{tunnels: map[string]string{}}
	wait.Eventually(t, timeout, "every object of "+r.name+" as it must be", func() error {
		played.play(t, r)
		objs := r.observe(t, kinds)
		var pending []string
		for _, o := range objs {
			for _, c := range o.conditions {
				if slices.Contains(refused, c.Reason) {
					t.Fatalf("%s is refused as the loser of a claim: %s", o.what, o)
				}
			}
			switch {
			case o.want == "":
			case onlyRefusals || exceptions[o.source] != "":
				if len(o.conditions) == 0 {
					pending = append(pending, o.what+": not reconciled yet")
				}
			case !isTrue(o.conditions, o.want):
				pending = append(pending, fmt.Sprintf("%s not %s: %s", o.what, o.want, o))
			}
		}
		if len(pending) > 0 {
			return fmt.Errorf("\n  %s", strings.Join(pending, "\n  "))
		}
		return nil
	})
}

func isTrue(cs []metav1.Condition, typ string) bool {
	for _, c := range cs {
		if c.Type == typ {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}

// observe lists what the run holds: the provider's objects in its
// namespaces and its ClusterProviderConfigs, and the Gateways and routes of
// this provider's class.
func (r *run) observe(t *testing.T, kinds []kind) []object {
	t.Helper()
	ctx := context.Background()
	sources := map[string]string{}
	for _, d := range r.docs {
		sources[d.obj.GetKind()+"|"+d.obj.GetNamespace()+"|"+d.obj.GetName()] = d.key()
	}
	var out []object
	add := func(u unstructured.Unstructured, want string, conds []metav1.Condition) {
		out = append(out, object{
			what:       fmt.Sprintf("%s %s", u.GetKind(), client.ObjectKeyFromObject(&u)),
			source:     sources[u.GetKind()+"|"+u.GetNamespace()+"|"+u.GetName()],
			conditions: conds, want: want,
		})
	}
	for _, k := range kinds {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(k.gvk.GroupVersion().WithKind(k.gvk.Kind + "List"))
		var namespaces []string
		if k.namespaced {
			for _, ns := range r.namespaces {
				namespaces = append(namespaces, ns)
			}
		} else {
			namespaces = []string{""}
		}
		for _, ns := range namespaces {
			if err := p.Client.List(ctx, l, client.InNamespace(ns)); err != nil {
				t.Fatal(err)
			}
			for _, u := range l.Items {
				if !k.namespaced && !strings.HasPrefix(u.GetName(), r.id+"-") {
					continue
				}
				add(u, "Ready", conditions(u.Object, "status", "conditions"))
			}
		}
	}
	for _, ns := range r.namespaces {
		r.gatewayAPI(t, ns, add)
	}
	return out
}

// gatewayAPI adds the Gateways of this provider's class (Programmed) and
// the routes naming them (this provider's Accepted).
func (r *run) gatewayAPI(t *testing.T, ns string, add func(unstructured.Unstructured, string, []metav1.Condition)) {
	t.Helper()
	ctx := context.Background()
	gws := &unstructured.UnstructuredList{}
	gws.SetGroupVersionKind(gwv1.SchemeGroupVersion.WithKind("GatewayList"))
	if err := p.Client.List(ctx, gws, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, g := range gws.Items {
		if ours(t, g.Object) {
			add(g, string(gwv1.GatewayConditionProgrammed), conditions(g.Object, "status", "conditions"))
		}
	}
	for _, kind := range []string{"HTTPRoute", "GRPCRoute"} {
		routes := &unstructured.UnstructuredList{}
		routes.SetGroupVersionKind(gwv1.SchemeGroupVersion.WithKind(kind + "List"))
		if err := p.Client.List(ctx, routes, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		for _, rt := range routes.Items {
			if !namesOurGateway(t, rt) {
				continue
			}
			var conds []metav1.Condition
			parents, _, _ := unstructured.NestedSlice(rt.Object, "status", "parents")
			for _, pa := range parents {
				m, _ := pa.(map[string]any)
				if m["controllerName"] == string(translate.ControllerName) {
					conds = append(conds, conditions(m, "conditions")...)
				}
			}
			add(rt, string(gwv1.RouteConditionAccepted), conds)
		}
	}
}

func conditions(obj map[string]any, fields ...string) []metav1.Condition {
	raw, _, _ := unstructured.NestedSlice(obj, fields...)
	var out []metav1.Condition
	for _, c := range raw {
		m, _ := c.(map[string]any)
		s := func(k string) string { v, _ := m[k].(string); return v }
		out = append(out, metav1.Condition{Type: s("type"), Status: metav1.ConditionStatus(s("status")), Reason: s("reason"), Message: s("message")})
	}
	return out
}

// gatewayController is the controller of the Gateway ns/name's class, "" when
// there is none.
func gatewayController(t *testing.T, ns, name string) string {
	t.Helper()
	gw := &gwv1.Gateway{}
	if err := p.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, gw); err != nil {
		return ""
	}
	class := &gwv1.GatewayClass{}
	if err := p.Client.Get(context.Background(), client.ObjectKey{Name: string(gw.Spec.GatewayClassName)}, class); err != nil {
		return ""
	}
	return string(class.Spec.ControllerName)
}

func ours(t *testing.T, gw map[string]any) bool {
	u := unstructured.Unstructured{Object: gw}
	return gatewayController(t, u.GetNamespace(), u.GetName()) == string(translate.ControllerName)
}

func parentGateways(rt unstructured.Unstructured) []client.ObjectKey {
	refs, _, _ := unstructured.NestedSlice(rt.Object, "spec", "parentRefs")
	var out []client.ObjectKey
	for _, ref := range refs {
		m, _ := ref.(map[string]any)
		ns, _ := m["namespace"].(string)
		if ns == "" {
			ns = rt.GetNamespace()
		}
		name, _ := m["name"].(string)
		out = append(out, client.ObjectKey{Namespace: ns, Name: name})
	}
	return out
}

func namesOurGateway(t *testing.T, rt unstructured.Unstructured) bool {
	return slices.ContainsFunc(parentGateways(rt), func(k client.ObjectKey) bool {
		return gatewayController(t, k.Namespace, k.Name) == string(translate.ControllerName)
	})
}

// playground plays what runs no code in a test: the kubelet for
// cloudflared's Deployments, cloudflared's connections, and Traefik
// accepting its Gateways' HTTPRoutes.
type playground struct {
	mu sync.Mutex
	// tunnels maps a tunnel ID to the token checksum its connectors were
	// started with: a rollout onto another token replaces them, as new
	// cloudflared pods replace old ones.
	tunnels map[string]string
}

func (pg *playground) play(t *testing.T, r *run) {
	t.Helper()
	ctx := context.Background()
	for _, ns := range r.namespaces {
		cts := &v1alpha1.CloudflareTunnelList{}
		if err := p.Client.List(ctx, cts, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		for i := range cts.Items {
			pg.runTunnel(&cts.Items[i])
		}
		routes := &gwv1.HTTPRouteList{}
		if err := p.Client.List(ctx, routes, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		for i := range routes.Items {
			acceptAsTraefik(t, &routes.Items[i])
		}
	}
}

func (pg *playground) runTunnel(ct *v1alpha1.CloudflareTunnel) {
	ctx := context.Background()
	dep := &appsv1.Deployment{}
	if err := p.Client.Get(ctx, client.ObjectKey{Namespace: ct.Namespace, Name: cloudflaretunnel.DeploymentName(ct)}, dep); err == nil {
		n := ptr.Deref(dep.Spec.Replicas, 1)
		if dep.Status.ObservedGeneration != dep.Generation || dep.Status.ReadyReplicas != n || dep.Status.UpdatedReplicas != n {
			dep.Status = appsv1.DeploymentStatus{ObservedGeneration: dep.Generation, Replicas: n, ReadyReplicas: n, UpdatedReplicas: n, AvailableReplicas: n}
			_ = p.Client.Status().Update(ctx, dep)
		}
	}
	id, checksum := ct.Status.TunnelID, dep.Spec.Template.Annotations[cloudflaretunnel.AnnotationTokenHash]
	pg.mu.Lock()
	defer pg.mu.Unlock()
	started, ok := pg.tunnels[id]
	if id == "" || (ok && started == checksum) {
		return
	}
	if ok {
		p.Sim.SetConnectors(id, 0) // the old pods stop
	}
	if p.Sim.SetConnectors(id, 2) {
		pg.tunnels[id] = checksum
	}
}

// acceptAsTraefik writes Accepted for the route's parents whose Gateway
// another controller (Traefik in examples/gateway) runs, as it would.
func acceptAsTraefik(t *testing.T, rt *gwv1.HTTPRoute) {
	t.Helper()
	var parents []gwv1.RouteParentStatus
	for _, ref := range rt.Spec.ParentRefs {
		ns := string(ptr.Deref(ref.Namespace, gwv1.Namespace(rt.Namespace)))
		ctrl := gatewayController(t, ns, string(ref.Name))
		if ctrl == "" || ctrl == string(translate.ControllerName) {
			continue
		}
		parents = append(parents, gwv1.RouteParentStatus{
			ParentRef: ref, ControllerName: gwv1.GatewayController(ctrl),
			Conditions: []metav1.Condition{{Type: string(gwv1.RouteConditionAccepted), Status: metav1.ConditionTrue, Reason: string(gwv1.RouteReasonAccepted), ObservedGeneration: rt.Generation, LastTransitionTime: metav1.Now()}},
		})
	}
	if len(parents) == 0 {
		return
	}
	for _, have := range rt.Status.Parents {
		if have.ControllerName == parents[0].ControllerName && len(have.Conditions) > 0 && have.Conditions[0].ObservedGeneration == rt.Generation {
			return
		}
	}
	rt.Status.Parents = parents
	if err := p.Client.Status().Update(context.Background(), rt); err != nil && !kerrors.IsConflict(err) {
		t.Fatal(err)
	}
}
