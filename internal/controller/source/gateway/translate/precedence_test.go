package translate

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/golden"
)

// A hostname is the oldest route's, whatever order the routes are listed
// in: in every permutation of the corpus's routes the older route's
// hostname is published as it asks, with its Access check, and held by no
// newer route.
func TestANewerRouteNeverHoldsOrOpensAnOlderRoutesHostname(t *testing.T) {
	in, err := os.ReadFile(filepath.Join("testdata", "golden", "another-namespaces-newer-route-cannot-freeze-or-open-a-hostname.in.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var c gatewayCorpus
	golden.Decode(t, in, &c)
	routes := c.HTTPRoutes
	for _, order := range [][]int{{0, 1, 2}, {2, 1, 0}, {1, 2, 0}, {2, 0, 1}} {
		c.HTTPRoutes = nil
		for _, i := range order {
			c.HTTPRoutes = append(c.HTTPRoutes, routes[i])
		}
		res := Translate(c.input())
		if len(res.Held) != 0 {
			t.Errorf("order %v: held %v", order, res.Held)
		}
		if len(res.Published) != 1 || !Protected(res.Published[0]) || *res.Published[0].Spec.Origin.URL != "http://web.team-a.svc.cluster.local:8080" {
			t.Fatalf("order %v: published %d: %+v, want only the oldest route's a.example.com with its Access check", order, len(res.Published), res.Published)
		}
	}
}
