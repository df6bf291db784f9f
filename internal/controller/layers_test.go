package controller

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/context-labs/provider-cloudflare-tunnel/"

// TestLayers holds the controllers to the design's layers, by where a
// package sits: a source (internal/controller/source/...) writes
// composites and managed resources and never reaches Cloudflare, so it
// links neither a managed-resource controller nor the Cloudflare client or
// SDK; a composite never depends on a source; a managed resource on
// neither. A package that breaks the rule is named with what it pulls in.
func TestLayers(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Deps " "}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	rules := []struct {
		layer     string
		forbidden []string
	}{
		{layer: "internal/controller/source", forbidden: []string{
			module + "internal/controller/managed", module + "internal/clients/cloudflare", "github.com/cloudflare/cloudflare-go",
		}},
		{layer: "internal/controller/composite", forbidden: []string{module + "internal/controller/source"}},
		{layer: "internal/controller/managed", forbidden: []string{module + "internal/controller/source", module + "internal/controller/composite"}},
		// The Service source shares the annotation sources' core
		// (source/expose) with the Ingress source, not its translator.
		{layer: "internal/controller/source/service", forbidden: []string{module + "internal/controller/source/ingress"}},
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, deps := strings.TrimPrefix(fields[0], module), fields[1:]
		for _, r := range rules {
			if !within(pkg, r.layer) {
				continue
			}
			checked++
			for _, d := range deps {
				for _, f := range r.forbidden {
					if within(d, f) {
						t.Errorf("%s (layer %s) depends on %s", pkg, r.layer, d)
					}
				}
			}
		}
	}
	if checked < 15 {
		t.Errorf("checked %d controller packages; the layout has at least 15: is the test looking in the right place?", checked)
	}
}

// within says whether pkg is path or below it.
func within(pkg, path string) bool {
	return pkg == path || strings.HasPrefix(pkg, path+"/")
}
