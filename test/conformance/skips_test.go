package conformance

import (
	"os"
	"strings"
	"testing"
)

// Every test skipped by name is listed in the docs with its reason.
func TestSkipsAreDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/gateway-api.md")
	if err != nil {
		t.Fatal(err)
	}
	for name := range skipped {
		if !strings.Contains(string(doc), "`"+name+"`") {
			t.Errorf("docs/gateway-api.md does not list the skipped test %s", name)
		}
	}
}
