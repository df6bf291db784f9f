// Command xpkgverify checks a built provider package (.xpkg) against the
// sources it was built from, without a cluster or docker:
//
//   - layers: the xpkg is an image tarball; `crossplane xpkg build` labels its
//     own layers in the config (io.crossplane.xpkg:<digest> = base | upbound),
//     every other layer is the embedded runtime image;
//   - package layer (package.yaml): the Provider metadata matches
//     package/crossplane.yaml, and every CRD in package/crds is there, current
//     (each field of the source appears unchanged), with none missing or extra;
//   - examples layer (.up/examples.yaml): every YAML file under examples/ is in
//     it verbatim (the builder concatenates them);
//   - runtime: config (linux/<arch>, user 65532, entrypoint), the CA bundle
//     parses, and /usr/local/bin/provider is a static binary that, extracted
//     and run as `provider --help`, exits 0 and documents --poll.
//
// Prints one line per check and exits 1 if any fails. It uses the
// go-containerregistry the crossplane CLI already pins in this tools module.
package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/x509"
	"debug/buildinfo"
	"debug/elf"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// What `crossplane xpkg build` writes (crossplane-runtime pkg/xpkg).
const (
	annotationKey   = "io.crossplane.xpkg"
	roleBase        = "base"    // package.yaml
	roleExamples    = "upbound" // .up/examples.yaml
	streamFile      = "package.yaml"
	examplesFile    = ".up/examples.yaml"
	binaryPath      = "usr/local/bin/provider"
	caPath          = "etc/ssl/certs/ca-certificates.crt"
	wantUser        = "65532"
	wantEntrypoint  = "/usr/local/bin/provider"
	requiredMetaAPI = "meta.pkg.crossplane.io/v1"
)

// Annotations package/crossplane.yaml must carry (the marketplace and
// `crossplane xpkg` show them; the brief for this package asks for all).
var requiredAnnotations = []string{
	"meta.crossplane.io/maintainer",
	"meta.crossplane.io/source",
	"meta.crossplane.io/license",
	"meta.crossplane.io/description",
	"meta.crossplane.io/readme",
	"friendly-name.meta.crossplane.io",
}

type checker struct{ total, failed int }

func (c *checker) ok(format string, a ...any) {
	c.total++
	fmt.Printf("ok   "+format+"\n", a...)
}

func (c *checker) fail(format string, a ...any) {
	c.total++
	c.failed++
	fmt.Printf("FAIL "+format+"\n", a...)
}

func (c *checker) check(cond bool, format string, a ...any) bool {
	if cond {
		c.ok(format, a...)
	} else {
		c.fail(format, a...)
	}
	return cond
}

func info(format string, a ...any) { fmt.Printf("     "+format+"\n", a...) }

func main() {
	var (
		xpkg     = flag.String("xpkg", "", "package to verify (required)")
		metaFile = flag.String("meta", "package/crossplane.yaml", "the package metadata it was built from")
		crdDir   = flag.String("crds", "package/crds", "the CRDs it must contain")
		webhooks = flag.String("webhooks", "package/webhookconfiguration.yaml", "the webhook configuration it must contain")
		exDir    = flag.String("examples", "examples", "the examples it must contain")
		helpWant = flag.String("help-contains", "--poll", "text `provider --help` must print")
		run      = flag.Bool("exec", true, "run the extracted provider binary (needs a linux host of the image's architecture)")
	)
	flag.Parse()
	if *xpkg == "" || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	c := &checker{}
	if err := verify(c, *xpkg, *metaFile, *crdDir, *webhooks, *exDir, *helpWant, *run); err != nil {
		c.fail("%v", err)
	}
	fmt.Printf("xpkg-verify: %s: %d checks, %d failed\n", *xpkg, c.total, c.failed)
	if c.failed > 0 {
		os.Exit(1)
	}
}

type layerInfo struct {
	layer v1.Layer
	role  string // base, upbound, or runtime
	files []*tar.Header
}

func verify(c *checker, path, metaFile, crdDir, webhooks, exDir, helpWant string, run bool) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	img, err := tarball.ImageFromPath(path, nil)
	if err != nil {
		return fmt.Errorf("%s is not an image tarball: %w", path, err)
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	mt, _ := img.MediaType()
	info("package %s: %.1f MiB, digest %s, manifest %s", path, float64(st.Size())/(1<<20), digest, mt)

	// --- layers ----------------------------------------------------------
	layers, err := img.Layers()
	if err != nil {
		return err
	}
	var all []*layerInfo
	byRole := map[string][]*layerInfo{}
	for i, l := range layers {
		d, err := l.Digest()
		if err != nil {
			return err
		}
		role := cf.Config.Labels[annotationKey+":"+d.String()]
		if role == "" {
			role = "runtime"
		}
		li := &layerInfo{layer: l, role: role}
		if li.files, err = headers(l); err != nil {
			return fmt.Errorf("layer %d: %w", i, err)
		}
		size, _ := l.Size()
		names := make([]string, 0, len(li.files))
		for _, h := range li.files {
			if h.Typeflag != tar.TypeDir {
				names = append(names, fmt.Sprintf("%s (%s, %o)", h.Name, humanBytes(h.Size), h.Mode))
			}
		}
		info("layer %d %-7s %s %9s  %s", i, role, d.String()[:19], humanBytes(size), strings.Join(names, ", "))
		all = append(all, li)
		byRole[role] = append(byRole[role], li)
	}
	c.check(len(byRole[roleBase]) == 1, "one package layer (%s=%s): %d", annotationKey, roleBase, len(byRole[roleBase]))
	c.check(len(byRole[roleExamples]) == 1, "one examples layer (%s=%s): %d", annotationKey, roleExamples, len(byRole[roleExamples]))
	c.check(len(byRole["runtime"]) > 0, "runtime image layers: %d", len(byRole["runtime"]))

	if len(byRole[roleBase]) == 1 {
		verifyPackage(c, byRole[roleBase][0].layer, metaFile, crdDir, webhooks)
	}
	if len(byRole[roleExamples]) == 1 {
		verifyExamples(c, byRole[roleExamples][0].layer, exDir)
	}
	return verifyRuntime(c, cf, byRole["runtime"], helpWant, run)
}

// --- package layer ---------------------------------------------------------

func verifyPackage(c *checker, l v1.Layer, metaFile, crdDir, webhooks string) {
	raw, err := fileIn(l, streamFile)
	if err != nil {
		c.fail("package layer: %v", err)
		return
	}
	docs, err := splitYAML(raw)
	if err != nil {
		c.fail("package layer: %s: %v", streamFile, err)
		return
	}
	var metas []map[string]any
	crds := map[string]map[string]any{}
	var vwcs []map[string]any
	var other []string
	for _, d := range docs {
		switch {
		case d["kind"] == "Provider" && strings.HasPrefix(str(d["apiVersion"]), "meta.pkg.crossplane.io/"):
			metas = append(metas, d)
		case d["kind"] == "CustomResourceDefinition":
			crds[str(dig(d, "metadata", "name"))] = d
		case d["kind"] == "ValidatingWebhookConfiguration":
			vwcs = append(vwcs, d)
		default:
			other = append(other, fmt.Sprintf("%v %v", d["apiVersion"], d["kind"]))
		}
	}
	c.check(len(other) == 0, "package.yaml holds only Provider metadata, CRDs and the webhook configuration (%d documents)%s", len(docs), listSuffix(other))

	// The admission webhook's configuration: the one of webhooks, current.
	if src, err := readYAMLFile(webhooks); err != nil {
		c.fail("read %s: %v", webhooks, err)
	} else if len(src) != 1 || len(vwcs) != 1 {
		c.fail("one ValidatingWebhookConfiguration in %s (%d) and in the package (%d)", webhooks, len(src), len(vwcs))
	} else if diff := subsetDiff("", src[0], vwcs[0]); diff != "" {
		c.fail("webhook configuration matches %s (rebuild the package): %s", webhooks, diff)
	} else {
		c.ok("webhook configuration matches %s (%d webhooks)", webhooks, len(asSlice(vwcs[0]["webhooks"])))
	}

	// Provider metadata.
	if !c.check(len(metas) == 1, "package.yaml has exactly one Provider metadata document: %d", len(metas)) {
		return
	}
	m := metas[0]
	c.check(m["apiVersion"] == requiredMetaAPI, "metadata apiVersion %v", m["apiVersion"])
	info("metadata name %v; annotations: %s", dig(m, "metadata", "name"), strings.Join(keys(asMap(dig(m, "metadata", "annotations"))), ", "))
	anns := asMap(dig(m, "metadata", "annotations"))
	var missing []string
	for _, k := range requiredAnnotations {
		if strings.TrimSpace(str(anns[k])) == "" {
			missing = append(missing, k)
		}
	}
	c.check(len(missing) == 0, "metadata annotations present (%d required)%s", len(requiredAnnotations), listSuffix(missing))
	c.check(hasSafeStart(dig(m, "spec", "capabilities")), "metadata spec.capabilities includes safe-start: %v", dig(m, "spec", "capabilities"))
	if src, err := readYAMLFile(metaFile); err != nil {
		c.fail("read %s: %v", metaFile, err)
	} else if len(src) != 1 {
		c.fail("%s: want 1 document, got %d", metaFile, len(src))
	} else if diff := subsetDiff("", src[0], m); diff != "" {
		c.fail("metadata matches %s (rebuild the package): %s", metaFile, diff)
	} else {
		c.ok("metadata matches %s", metaFile)
	}

	// CRDs: same set as package/crds, each current.
	want := map[string]map[string]any{}
	files, err := yamlFiles(crdDir)
	if err != nil {
		c.fail("read %s: %v", crdDir, err)
		return
	}
	for _, f := range files {
		ds, err := readYAMLFile(f)
		if err != nil {
			c.fail("read %s: %v", f, err)
			continue
		}
		for _, d := range ds {
			if d["kind"] == "CustomResourceDefinition" {
				want[str(dig(d, "metadata", "name"))] = d
			}
		}
	}
	var absent, extra, stale []string
	for n, w := range want {
		got, ok := crds[n]
		if !ok {
			absent = append(absent, n)
			continue
		}
		if diff := subsetDiff("", w, got); diff != "" {
			stale = append(stale, n+": "+diff)
		}
	}
	for n := range crds {
		if _, ok := want[n]; !ok {
			extra = append(extra, n)
		}
	}
	c.check(len(want) > 0 && len(absent) == 0 && len(extra) == 0,
		"package has all %d CRDs of %s (%d in package)%s%s", len(want), crdDir, len(crds), listSuffix(prefixed("missing ", absent)), listSuffix(prefixed("not in "+crdDir+": ", extra)))
	c.check(len(stale) == 0, "package CRDs match %s (no stale schema)%s", crdDir, listSuffix(stale))
	names := keys(crds)
	for _, n := range names {
		vs := []string{}
		for _, v := range asSlice(dig(crds[n], "spec", "versions")) {
			vs = append(vs, str(asMap(v)["name"]))
		}
		info("  CRD %s (%s, %s)", n, dig(crds[n], "spec", "scope"), strings.Join(vs, ","))
	}
}

func hasSafeStart(v any) bool {
	for _, c := range asSlice(v) {
		// Crossplane matches capabilities fuzzily: case and '-'/'_' don't matter.
		n := strings.NewReplacer("-", "", "_", "").Replace(strings.ToLower(str(c)))
		if n == "safestart" {
			return true
		}
	}
	return false
}

// --- examples layer --------------------------------------------------------

func verifyExamples(c *checker, l v1.Layer, dir string) {
	raw, err := fileIn(l, examplesFile)
	if err != nil {
		c.fail("examples layer: %v", err)
		return
	}
	var files []string
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files = append(files, p)
		return nil
	})
	if err != nil {
		c.fail("read %s: %v", dir, err)
		return
	}
	sort.Strings(files)
	var missing, skipped []string
	included, docs := 0, 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			c.fail("read %s: %v", f, err)
			continue
		}
		// xpkg build skips non-YAML and empty files (buildFilters); so do we.
		if ext := filepath.Ext(f); (ext != ".yaml" && ext != ".yml") || len(bytes.TrimSpace(b)) == 0 {
			skipped = append(skipped, f)
			continue
		}
		included++
		ds, _ := splitYAML(b)
		docs += len(ds)
		if !bytes.Contains(raw, b) {
			missing = append(missing, f)
		}
	}
	gotDocs, err := splitYAML(raw)
	if err != nil {
		c.fail("examples layer: %s: %v", examplesFile, err)
		return
	}
	c.check(included > 0 && len(missing) == 0, "examples layer holds all %d YAML files of %s verbatim%s", included, dir, listSuffix(prefixed("missing or changed ", missing)))
	c.check(len(gotDocs) == docs, "examples layer has %d documents (files hold %d)", len(gotDocs), docs)
	if len(skipped) > 0 {
		info("not packaged (xpkg build takes only non-empty .yaml/.yml): %s", strings.Join(skipped, ", "))
	}
}

// --- runtime image -----------------------------------------------------------

func verifyRuntime(c *checker, cf *v1.ConfigFile, layers []*layerInfo, helpWant string, run bool) error {
	c.check(cf.OS == "linux", "runtime os %q", cf.OS)
	c.check(slices.Equal(cf.Config.Entrypoint, []string{wantEntrypoint}), "runtime entrypoint %q", cf.Config.Entrypoint)
	c.check(cf.Config.User == wantUser, "runtime user %q (nonroot %s)", cf.Config.User, wantUser)
	info("runtime linux/%s, created %s, env %q", cf.Architecture, cf.Created.UTC().Format(time.RFC3339), cf.Config.Env)

	tmp, err := os.MkdirTemp("", "xpkg-verify-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	// Later layers win, as when a container runtime unpacks them in order.
	var binHdr, caHdr *tar.Header
	var ca []byte
	bin := filepath.Join(tmp, "provider")
	for _, li := range layers {
		err := eachFile(li.layer, func(h *tar.Header, r io.Reader) error {
			switch strings.TrimPrefix(h.Name, "./") {
			case binaryPath:
				binHdr = h
				return writeFile(bin, r)
			case caPath:
				caHdr = h
				var err error
				ca, err = io.ReadAll(r)
				return err
			}
			return nil
		})
		if err != nil {
			return err
		}
	}

	// CA bundle.
	if c.check(caHdr != nil && caHdr.Typeflag == tar.TypeReg, "runtime has /%s", caPath) {
		c.check(caHdr.Mode&0o004 != 0, "CA bundle is world-readable (mode %o) for user %s", caHdr.Mode, wantUser)
		n, bad := 0, 0
		for rest := ca; ; {
			var b *pem.Block
			if b, rest = pem.Decode(rest); b == nil {
				break
			}
			if b.Type != "CERTIFICATE" {
				continue
			}
			if _, err := x509.ParseCertificate(b.Bytes); err != nil {
				bad++
				continue
			}
			n++
		}
		c.check(n > 0, "CA bundle parses: %d certificates (%d unparsable), sha256 %x", n, bad, sha256.Sum256(ca))
	}

	// Provider binary.
	if !c.check(binHdr != nil && binHdr.Typeflag == tar.TypeReg, "runtime has /%s", binaryPath) {
		return nil
	}
	c.check(binHdr.Mode&0o777 == 0o755, "provider mode %o (want 755)", binHdr.Mode&0o7777)
	ef, err := elf.Open(bin)
	if err != nil {
		c.fail("provider is not an ELF executable: %v", err)
		return nil
	}
	static := true
	for _, p := range ef.Progs {
		if p.Type == elf.PT_INTERP {
			static = false
		}
	}
	machine := ef.Machine
	ef.Close()
	c.check(static, "provider is statically linked (no ELF interpreter)")
	wantMachine := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[cf.Architecture]
	c.check(wantMachine == 0 || machine == wantMachine, "provider machine %v matches image architecture %s", machine, cf.Architecture)
	if bi, err := buildinfo.ReadFile(bin); err == nil {
		settings := map[string]string{}
		for _, s := range bi.Settings {
			settings[s.Key] = s.Value
		}
		info("provider: %s, %s, CGO_ENABLED=%s, -trimpath=%s, -ldflags=%q", bi.Path, bi.GoVersion, settings["CGO_ENABLED"], settings["-trimpath"], settings["-ldflags"])
	}

	if !run {
		info("not running the provider (-exec=false)")
		return nil
	}
	if runtime.GOOS != "linux" || runtime.GOARCH != cf.Architecture {
		c.fail("cannot run a linux/%s provider on %s/%s (use -exec=false)", cf.Architecture, runtime.GOOS, runtime.GOARCH)
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--help")
	cmd.Dir = tmp
	cmd.Env = []string{"PATH=/usr/bin:/bin"} // no KUBECONFIG or kingpin envars leaking in
	out, err := cmd.CombinedOutput()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		c.fail("run provider --help: %v", err)
		return nil
	}
	first, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	c.check(code == 0, "provider --help exits 0 (exit %d): %s", code, first)
	c.check(strings.Contains(string(out), helpWant), "provider --help mentions %q", helpWant)
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, helpWant) {
			info("  %s", strings.TrimSpace(line))
		}
	}
	return nil
}

// --- helpers -----------------------------------------------------------------

func headers(l v1.Layer) ([]*tar.Header, error) {
	var hs []*tar.Header
	err := eachFile(l, func(h *tar.Header, _ io.Reader) error { hs = append(hs, h); return nil })
	return hs, err
}

func eachFile(l v1.Layer, fn func(*tar.Header, io.Reader) error) error {
	rc, err := l.Uncompressed()
	if err != nil {
		return err
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(h, tr); err != nil {
			return err
		}
	}
}

func fileIn(l v1.Layer, name string) ([]byte, error) {
	var out []byte
	found := false
	err := eachFile(l, func(h *tar.Header, r io.Reader) error {
		if strings.TrimPrefix(h.Name, "./") != name {
			return nil
		}
		found = true
		var err error
		out, err = io.ReadAll(r)
		return err
	})
	if err == nil && !found {
		err = fmt.Errorf("no %s in layer", name)
	}
	return out, err
}

func writeFile(p string, r io.Reader) error {
	f, err := os.OpenFile(p, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func yamlFiles(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (filepath.Ext(p) == ".yaml" || filepath.Ext(p) == ".yml") {
			out = append(out, p)
		}
		return err
	})
	sort.Strings(out)
	return out, err
}

func readYAMLFile(p string) ([]map[string]any, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	return splitYAML(b)
}

// splitYAML decodes a multi-document YAML stream, skipping empty documents.
func splitYAML(b []byte) ([]map[string]any, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
	var out []map[string]any
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		var m map[string]any
		if err := yaml.Unmarshal(doc, &m); err != nil {
			return out, err
		}
		if len(m) > 0 {
			out = append(out, m)
		}
	}
}

// subsetDiff reports the first place where want has a value that got lacks
// or differs in. Fields only in got are fine: xpkg build re-encodes objects
// and may add empty defaults (creationTimestamp: null, status: {}).
func subsetDiff(path string, want, got any) string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: not an object", orRoot(path))
		}
		for _, k := range keys(w) {
			if d := subsetDiff(path+"."+k, w[k], g[k]); d != "" {
				return d
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Sprintf("%s: list differs", orRoot(path))
		}
		for i := range w {
			if d := subsetDiff(fmt.Sprintf("%s[%d]", path, i), w[i], g[i]); d != "" {
				return d
			}
		}
		return ""
	default:
		if !reflect.DeepEqual(want, got) {
			return fmt.Sprintf("%s: %s (source) != %s (package)", orRoot(path), short(want), short(got))
		}
		return ""
	}
}

// short renders a value for a one-line message.
func short(v any) string {
	s := strings.Join(strings.Fields(fmt.Sprintf("%q", fmt.Sprint(v))), " ")
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}

func orRoot(p string) string {
	if p == "" {
		return "."
	}
	return p
}

func dig(m map[string]any, path ...string) any {
	var v any = m
	for _, p := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[p]
	}
	return v
}

func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }
func asSlice(v any) []any        { s, _ := v.([]any); return s }
func str(v any) string           { s, _ := v.(string); return s }

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func prefixed(p string, s []string) []string {
	out := make([]string, len(s))
	for i := range s {
		out[i] = p + s[i]
	}
	sort.Strings(out)
	return out
}

func listSuffix(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return ": " + strings.Join(s, "; ")
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	default:
		return fmt.Sprintf("%d B", n)
	}
}
