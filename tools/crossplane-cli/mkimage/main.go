// Command mkimage builds the provider's runtime image as an image tarball
// (the format `crossplane xpkg build --embed-runtime-image-tarball` reads)
// without a docker daemon or a base image from a registry.
//
// The image is the equivalent of cluster/images/provider-cloudflare-tunnel/Dockerfile
// (distroless/static, nonroot) reduced to what the provider needs:
//
//	layer 1: /etc/ssl/certs/ca-certificates.crt  (Cloudflare's API is HTTPS; a
//	         static Go binary reads the system roots from this path)
//	layer 2: /usr/local/bin/provider             (mode 0755)
//	config:  linux/<arch>, User 65532, Entrypoint ["/usr/local/bin/provider"]
//
// The CA bundle gets its own layer, below the binary, because it rarely
// changes: registries and nodes then keep it across provider releases.
//
// Output is reproducible: every tar entry is root-owned with a fixed mtime,
// and the image's Created time is fixed (SOURCE_DATE_EPOCH, else the Unix
// epoch), so the same inputs always give the same digest.
//
// It lives in the tools module because it needs go-containerregistry, which
// the crossplane CLI already pins there; the provider's go.mod stays clean.
package main

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

const (
	binaryPath = "/usr/local/bin/provider"
	caPath     = "/etc/ssl/certs/ca-certificates.crt"
	nonroot    = "65532" // distroless "nonroot"; matches the Dockerfile and runAsNonRoot checks
)

func main() {
	var (
		binary  = flag.String("binary", "", "static linux provider binary to install at "+binaryPath+" (required)")
		ca      = flag.String("ca", caPath, "PEM CA bundle to install at "+caPath)
		out     = flag.String("o", "", "image tarball to write (required)")
		tag     = flag.String("tag", "provider-cloudflare-tunnel:runtime", "tag recorded in the tarball's manifest")
		arch    = flag.String("arch", "amd64", "image architecture (a GOARCH); must match the binary")
		created = flag.String("created", "", "image creation time, RFC 3339 (default: $SOURCE_DATE_EPOCH, else 1970-01-01T00:00:00Z)")
	)
	flag.Parse()
	if flag.NArg() > 0 {
		fail(fmt.Errorf("unexpected arguments: %v", flag.Args()))
	}
	if *binary == "" || *out == "" {
		flag.Usage()
		fail(errors.New("-binary and -o are required"))
	}
	ts, err := createdTime(*created)
	if err != nil {
		fail(err)
	}
	start := time.Now()
	digest, err := build(*binary, *ca, *out, *tag, *arch, ts)
	if err != nil {
		fail(err)
	}
	st, _ := os.Stat(*out)
	fmt.Fprintf(os.Stderr, "mkimage: wrote %s (%s, linux/%s, %s) in %s\n", *out, digest, *arch, human(st.Size()), time.Since(start).Round(10*time.Millisecond))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "mkimage: error:", err)
	os.Exit(1)
}

// createdTime picks the image's fixed creation time. A wall-clock time would
// change the config digest, and with it the image and package digests, on
// every build.
func createdTime(flagValue string) (time.Time, error) {
	if flagValue != "" {
		t, err := time.Parse(time.RFC3339, flagValue)
		return t.UTC(), err
	}
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		sec, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH=%q: %w", s, err)
		}
		return time.Unix(sec, 0).UTC(), nil
	}
	return time.Unix(0, 0).UTC(), nil
}

func build(binary, ca, out, tag, arch string, created time.Time) (v1.Hash, error) {
	ref, err := name.NewTag(tag)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("-tag %q: %w", tag, err)
	}
	bin, err := os.ReadFile(binary)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("-binary: %w (run the static build first)", err)
	}
	if err := checkBinary(binary, arch); err != nil {
		return v1.Hash{}, err
	}
	bundle, err := os.ReadFile(ca)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return v1.Hash{}, fmt.Errorf("CA bundle %s not found; the provider needs it to reach api.cloudflare.com over TLS. "+
			"Install it with `apt-get install ca-certificates` (Debian/Ubuntu), or pass -ca <PEM bundle>", ca)
	case err != nil:
		return v1.Hash{}, fmt.Errorf("-ca: %w", err)
	case !bytes.Contains(bundle, []byte("-----BEGIN CERTIFICATE-----")):
		return v1.Hash{}, fmt.Errorf("-ca %s holds no PEM certificates", ca)
	}

	caLayer, err := layer(created, file{caPath, 0o644, bundle})
	if err != nil {
		return v1.Hash{}, err
	}
	binLayer, err := layer(created, file{binaryPath, 0o755, bin})
	if err != nil {
		return v1.Hash{}, err
	}
	// Docker media types throughout (empty.Image's default): the layers that
	// `crossplane xpkg build` appends are Docker-typed too, so the package
	// manifest stays uniform, like one built from a `docker build` image.
	img, err := mutate.Append(empty.Image,
		mutate.Addendum{Layer: caLayer, History: v1.History{Created: v1.Time{Time: created}, CreatedBy: "mkimage: COPY ca-certificates.crt " + caPath}},
		mutate.Addendum{Layer: binLayer, History: v1.History{Created: v1.Time{Time: created}, CreatedBy: "mkimage: COPY provider " + binaryPath}},
	)
	if err != nil {
		return v1.Hash{}, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return v1.Hash{}, err
	}
	cf = cf.DeepCopy()
	cf.OS = "linux"
	cf.Architecture = arch
	if arch == "arm64" {
		cf.Variant = "v8" // what docker and the Go toolchain's GOARM64 default imply
	}
	cf.Created = v1.Time{Time: created}
	cf.Config.Entrypoint = []string{binaryPath}
	cf.Config.User = nonroot
	cf.Config.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "SSL_CERT_FILE=" + caPath}
	cf.Config.Labels = map[string]string{"org.opencontainers.image.source": "https://github.com/context-labs/provider-cloudflare-tunnel"}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return v1.Hash{}, err
	}

	// Write next to the target and rename: an interrupted run never leaves a
	// truncated tarball where the next step expects a good one.
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return v1.Hash{}, err
	}
	// A unique temp name also keeps concurrent builds from clobbering each other.
	f, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".*.tmp")
	if err != nil {
		return v1.Hash{}, err
	}
	defer os.Remove(f.Name()) // no-op once renamed
	if err := tarball.Write(ref, img, f); err != nil {
		f.Close()
		return v1.Hash{}, fmt.Errorf("write %s: %w", out, err)
	}
	if err := f.Close(); err != nil {
		return v1.Hash{}, err
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil { // CreateTemp makes it 0600
		return v1.Hash{}, err
	}
	if err := os.Rename(f.Name(), out); err != nil {
		return v1.Hash{}, err
	}
	return img.Digest()
}

// checkBinary refuses binaries that cannot run in an image with no libc or
// loader: wrong architecture, or dynamically linked (CGO_ENABLED=1).
func checkBinary(p, arch string) error {
	f, err := elf.Open(p)
	if err != nil {
		return fmt.Errorf("-binary %s is not a linux ELF executable: %w", p, err)
	}
	defer f.Close()
	want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64, "arm": elf.EM_ARM, "ppc64le": elf.EM_PPC64, "s390x": elf.EM_S390, "riscv64": elf.EM_RISCV}
	if m, ok := want[arch]; ok && f.Machine != m {
		return fmt.Errorf("-binary %s is built for %v, not -arch %s", p, f.Machine, arch)
	}
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP {
			return fmt.Errorf("-binary %s is dynamically linked; the image has no libc: build it with CGO_ENABLED=0", p)
		}
	}
	return nil
}

type file struct {
	path string
	mode int64
	data []byte
}

// layer makes a gzip layer holding the files and their parent directories,
// all root-owned (readable by UID 65532) with mtime t.
func layer(t time.Time, files ...file) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	seen := map[string]bool{}
	for _, f := range files {
		rel := strings.TrimPrefix(f.path, "/")
		var dirs []string
		for d := path.Dir(rel); d != "." && !seen[d]; d = path.Dir(d) {
			seen[d] = true
			dirs = append([]string{d}, dirs...)
		}
		for _, d := range dirs {
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o755, ModTime: t}); err != nil {
				return nil, err
			}
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: rel, Mode: f.mode, Size: int64(len(f.data)), ModTime: t}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil })
}

func human(n int64) string {
	const mib = 1 << 20
	return fmt.Sprintf("%.1f MiB", float64(n)/mib)
}
