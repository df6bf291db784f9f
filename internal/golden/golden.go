// Package golden checks a translator against a corpus of input/output YAML
// files, the way a reviewer reads a translation change: testdata/golden/
// holds <case>.in.yaml (what the translator is given) beside
// <case>.out.yaml (what it answers). `go test ./... -run Golden -update`
// rewrites every .out.yaml from the current code; the diff is the review.
package golden

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite the golden .out.yaml files from the current code")

// Dir is where a package's corpus lives, relative to its directory.
const Dir = "testdata/golden"

// Translate turns one case's input file into the answer to compare; it
// decodes the input itself (with Decode or its own types).
type Translate func(t *testing.T, in []byte) any

// Run runs translate on every <case>.in.yaml under dir as a subtest named
// after the case and compares the YAML of its answer with <case>.out.yaml.
// It fails when dir holds fewer than min cases, so a corpus cannot shrink
// unnoticed.
func Run(t *testing.T, dir string, min int, translate Translate) {
	t.Helper()
	cases := Cases(t, dir)
	if len(cases) < min {
		t.Fatalf("%s holds %d cases, want at least %d", dir, len(cases), min)
	}
	for _, c := range cases {
		t.Run(c, func(t *testing.T) {
			in, err := os.ReadFile(filepath.Join(dir, c+".in.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			Check(t, filepath.Join(dir, c+".out.yaml"), Marshal(t, translate(t, in)))
		})
	}
}

// Cases lists the case names under dir (the .in.yaml files, sorted).
func Cases(t *testing.T, dir string) []string {
	t.Helper()
	ins, err := filepath.Glob(filepath.Join(dir, "*.in.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, in := range ins {
		out = append(out, strings.TrimSuffix(filepath.Base(in), ".in.yaml"))
	}
	sort.Strings(out)
	return out
}

// Check compares got with the file at path, or writes it there under
// -update. A missing file is a failure that names the flag.
func Check(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o600); err != nil {
			t.Fatal(err)
		}
		return
	}
	if msg := Differs(path, got); msg != "" {
		t.Error(msg)
	}
}

// Differs says how got differs from the file at path ("" when it does not).
func Differs(path string, got []byte) string {
	want, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("%v (run the test with -update to write it)", err)
	}
	if bytes.Equal(want, got) {
		return ""
	}
	return fmt.Sprintf("%s differs from the translator's answer (rerun with -update and review the diff):\n--- want\n%s\n--- got\n%s", path, want, got)
}

// Marshal is the YAML of v as a golden file holds it: keys sorted, as
// sigs.k8s.io/yaml writes them through JSON (so json tags and omitempty
// apply).
func Marshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Decode reads in into v (a pointer), strictly: a field the type does not
// have is a mistake in the corpus, not something to ignore.
func Decode(t *testing.T, in []byte, v any) {
	t.Helper()
	if err := yaml.UnmarshalStrict(in, v); err != nil {
		t.Fatalf("input: %v", err)
	}
}
