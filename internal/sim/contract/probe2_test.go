package contract

import (
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

func TestProbe2(t *testing.T) {
	s := time.Now()
	raw, err := readEmbeddedSpec()
	t.Logf("read+decode %v %d %v", time.Since(s), len(raw), err)
	s = time.Now()
	f, _ := keepPaths(raw, usedPaths)
	t.Logf("filter %v %d", time.Since(s), len(f))
	s = time.Now()
	doc, err := openapi3.NewLoader().LoadFromData(f)
	t.Logf("load filtered %v %v", time.Since(s), err)
	s = time.Now()
	_, err = gorillamux.NewRouter(doc)
	t.Logf("router filtered %v %v", time.Since(s), err)
	s = time.Now()
	full, err := openapi3.NewLoader().LoadFromData(raw)
	t.Logf("load full %v %v", time.Since(s), err)
	full.Servers = nil
	s = time.Now()
	_, err = gorillamux.NewRouter(full)
	t.Logf("router full %v %v", time.Since(s), err)
}
