package hostile

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	tv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

// pathPrecedenceEntries are the issue-48 cases of their topic. (Bug 10, a
// Gateway whose class goes, is tested where the Gateway API CRDs are
// installed: internal/controller/source/gateway,
// TestMovingAGatewayToAnotherClassSaysSoAtOnce and
// TestAllowedRoutesAndDeletingTheClass.)
func pathPrecedenceEntries() []entry {
	return []entry{
		{name: "PublicHostname/ALongExpressionAheadOfAnExactPath", answer: custom, run: expressionTakesAnExactPath},
	}
}

// expressionTakesAnExactPath: a hostname's paths are an Exact /login and,
// written first, an expression matching /login too that is far longer;
// /login must still go to the Exact path's origin (Gateway API: Exact
// before everything), and so must a prefix's literal.
func expressionTakesAnExactPath(t *testing.T, c *corpus) string {
	host := "capture-" + c.ns + ".example.com"
	zs := "/" + strings.Repeat("z", 60)
	capture := "^(/login|/api/.*|" + zs + ")$"
	ph := c.hostname("capture", host, func(ph *tv1alpha1.PublicHostname) {
		ph.Spec.Paths = []tv1alpha1.PathOrigin{
			{Path: capture, PathType: tv1alpha1.PathTypeRegularExpression, Origin: tv1alpha1.Origin{URL: ptr.To("http_status:418")}},
			{Path: "/login", PathType: tv1alpha1.PathTypeExact, Origin: tv1alpha1.Origin{Service: &tv1alpha1.ServiceOrigin{Name: "web", Port: intstr.FromInt32(80)}}},
			{Path: "/api", PathType: tv1alpha1.PathTypePrefix, Origin: tv1alpha1.Origin{Service: &tv1alpha1.ServiceOrigin{Name: "web", Port: intstr.FromInt32(80)}}},
		}
	})
	p.Create(t, ph)
	web := "http://web." + c.ns + ".svc.cluster.local:80"
	var got map[string]string
	wait.Eventually(t, 60*time.Second, "the hostname published", func() error {
		got = firstRules(t, c.edgeID, host, "/login", "/api/users", zs)
		if got[zs] == "" {
			return fmt.Errorf("%s not published yet: %v", host, got)
		}
		return nil
	})
	p.DeleteAndWait(t, ph)
	wait.Eventually(t, 60*time.Second, "the hostname unpublished", func() error {
		if len(p.Records(t, host)) != 0 || strings.Contains(p.TunnelConfig(t, c.edgeID), host) {
			return fmt.Errorf("%s still published", host)
		}
		return nil
	})
	c.allowMade(host)
	if got["/login"] != web || got["/api/users"] != web {
		return c.knownBug(t, "an expression written first takes literal paths: /login goes to %s, /api/users to %s", got["/login"], got["/api/users"])
	}
	return "/login and /api/users go to the literal paths' origin, the expression serves the rest"
}

// firstRules is, for each path, the service of the first rule of the
// tunnel's configuration cloudflared would take for host and that path.
func firstRules(t *testing.T, tunnelID, host string, paths ...string) map[string]string {
	t.Helper()
	var cfg ztv1alpha1.TunnelConfig
	if doc := p.TunnelConfig(t, tunnelID); doc != "" {
		if err := json.Unmarshal([]byte(doc), &cfg); err != nil {
			t.Fatal(err)
		}
	}
	out := map[string]string{}
	for _, path := range paths {
		for _, r := range cfg.Ingress {
			if ptr.Deref(r.Hostname, "") == host && (r.Path == nil || regexp.MustCompile(*r.Path).MatchString(path)) {
				out[path] = r.Service
				break
			}
		}
	}
	return out
}
