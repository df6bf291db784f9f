package controller

import (
	"os/exec"
	"path"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/context-labs/provider-cloudflare-tunnel/"

// TestLayers holds the controllers to the design's layers, by where a
// package sits: a source (internal/controller/source/...) writes
// composites and managed resources and never reaches Cloudflare, so it
// links neither a composite's or a managed resource's controller nor the
// Cloudflare client or SDK (it reads what a composite answers through
// internal/controller/handshake); a composite never depends on a source,
// nor on another composite (the PublicHostname and CloudflareTunnel meet
// in package handshake); a managed resource on neither; the hand-shake on
// no controller. The Service source does not run the Ingress translator.
// A package that breaks a rule is named with what it pulls in.
func TestLayers(t *testing.T) {
	pkgs := controllerPackages(t)
	rules := []struct {
		layer     string
		forbidden []string
	}{
		{layer: "internal/controller/source", forbidden: []string{
			module + "internal/controller/managed", module + "internal/controller/composite",
			module + "internal/clients/cloudflare", "github.com/cloudflare/cloudflare-go",
		}},
		{layer: "internal/controller/composite", forbidden: []string{module + "internal/controller/source"}},
		{layer: "internal/controller/composite/cloudflaretunnel", forbidden: []string{module + "internal/controller/composite/publichostname"}},
		{layer: "internal/controller/composite/publichostname", forbidden: []string{module + "internal/controller/composite/cloudflaretunnel"}},
		{layer: "internal/controller/managed", forbidden: []string{module + "internal/controller/source", module + "internal/controller/composite"}},
		// The Service source shares the annotation sources' core
		// (source/expose) with the Ingress source, not its translator.
		{layer: "internal/controller/source/service", forbidden: []string{module + "internal/controller/source/ingress"}},
		{layer: "internal/controller/handshake", forbidden: []string{
			module + "internal/controller/source", module + "internal/controller/composite", module + "internal/controller/managed",
		}},
	}
	checked := 0
	for _, p := range pkgs {
		for _, r := range rules {
			if !within(p.path, r.layer) {
				continue
			}
			checked++
			for _, d := range p.deps {
				for _, f := range r.forbidden {
					if within(d, f) {
						t.Errorf("%s (layer %s) depends on %s", p.path, r.layer, d)
					}
				}
			}
		}
	}
	if checked < 15 {
		t.Errorf("checked %d controller packages; the layout has at least 15: is the test looking in the right place?", checked)
	}
}

// TestManagedHoldsKindsAndMR: internal/controller/managed holds the managed
// kinds, each set up through the one generic wiring mr, and mr itself;
// helpers that are not kinds (the ProviderConfig controller, the status
// writer) live elsewhere. A kind's own subpackages are its business.
func TestManagedHoldsKindsAndMR(t *testing.T) {
	const managed, mr = "internal/controller/managed", "internal/controller/managed/mr"
	kinds := 0
	for _, p := range controllerPackages(t) {
		parent, _ := path.Split(p.path)
		if strings.TrimSuffix(parent, "/") != managed || p.path == mr {
			continue
		}
		if !slices.Contains(p.imports, module+mr) {
			t.Errorf("%s is not a managed kind (it is not set up through %s): move it out of %s", p.path, mr, managed)
			continue
		}
		kinds++
	}
	if kinds < 10 {
		t.Errorf("found %d managed kinds under %s; there are at least 10: is the test looking in the right place?", kinds, managed)
	}
}

// pkg is a package of the module, its path without the module's prefix.
type pkg struct {
	path          string
	imports, deps []string
}

// controllerPackages are the packages below this one, with their imports
// and dependencies.
func controllerPackages(t *testing.T) []pkg {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}|{{join .Imports " "}}|{{join .Deps " "}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Split(line, "|")
		pkgs = append(pkgs, pkg{path: strings.TrimPrefix(fields[0], module), imports: strings.Fields(fields[1]), deps: strings.Fields(fields[2])})
	}
	return pkgs
}

// within says whether pkg is path or below it.
func within(pkg, path string) bool {
	return pkg == path || strings.HasPrefix(pkg, path+"/")
}
