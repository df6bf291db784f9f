package metrics

import (
	"errors"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/types"
)

func TestSources(t *testing.T) {
	m := New()
	a, b, c := types.NamespacedName{Namespace: "n", Name: "a"}, types.NamespacedName{Namespace: "n", Name: "b"}, types.NamespacedName{Namespace: "m", Name: "a"}
	m.SetSource("Ingress", a, SourceTranslated)
	m.SetSource("Ingress", b, SourceProblem)
	m.SetSource("Ingress", c, SourceTranslated)
	m.SetSource("Service", a, SourceConflict)
	// An object's latest state replaces the one before; a forgotten one
	// leaves the count.
	m.SetSource("Ingress", b, SourceConflict)
	m.ForgetSource("Ingress", c)
	m.ForgetSource("GatewayBinding", c) // never seen: nothing happens
	m.SetSource("GatewayBinding", a, SourceTranslated)
	m.ForgetSource("GatewayBinding", a) // the last one gone: zeros, not nothing

	want := `
# HELP cloudflare_tunnel_sources Source objects (Ingress, Service, GatewayBinding, and the HTTPRoutes and GRPCRoutes of native Gateways) the provider translates, by kind and by what became of them the last time: translated, conflict or problem.
# TYPE cloudflare_tunnel_sources gauge
cloudflare_tunnel_sources{kind="GatewayBinding",state="conflict"} 0
cloudflare_tunnel_sources{kind="GatewayBinding",state="problem"} 0
cloudflare_tunnel_sources{kind="GatewayBinding",state="translated"} 0
cloudflare_tunnel_sources{kind="Ingress",state="conflict"} 1
cloudflare_tunnel_sources{kind="Ingress",state="problem"} 0
cloudflare_tunnel_sources{kind="Ingress",state="translated"} 1
cloudflare_tunnel_sources{kind="Service",state="conflict"} 1
cloudflare_tunnel_sources{kind="Service",state="problem"} 0
cloudflare_tunnel_sources{kind="Service",state="translated"} 0
`
	if err := testutil.CollectAndCompare(m, strings.NewReader(want), "cloudflare_tunnel_sources"); err != nil {
		t.Error(err)
	}
}

func TestHostnameAccess(t *testing.T) {
	m := New()
	name := func(n string) types.NamespacedName { return types.NamespacedName{Namespace: "n", Name: n} }
	m.SetHostnameAccess(name("a"), HostnameProtected)
	m.SetHostnameAccess(name("b"), HostnameProtected)
	m.SetHostnameAccess(name("c"), HostnameWaitingForAccess)
	m.SetHostnameAccess(name("d"), HostnameOther)
	m.SetHostnameAccess(name("e"), HostnameWaitingForAccess)
	// The latest state replaces the one before; a forgotten one leaves
	// the count.
	m.SetHostnameAccess(name("c"), HostnameProtected)
	m.ForgetHostname(name("b"))
	m.ForgetHostname(name("never-seen"))
	want := `
# HELP cloudflare_tunnel_public_hostnames_protected PublicHostnames whose rules are published with a required Cloudflare Access check.
# TYPE cloudflare_tunnel_public_hostnames_protected gauge
cloudflare_tunnel_public_hostnames_protected 2
# HELP cloudflare_tunnel_public_hostnames_waiting_for_access PublicHostnames not published because the AccessPolicy or the Access application their check needs does not exist yet.
# TYPE cloudflare_tunnel_public_hostnames_waiting_for_access gauge
cloudflare_tunnel_public_hostnames_waiting_for_access 1
`
	if err := testutil.CollectAndCompare(m, strings.NewReader(want), "cloudflare_tunnel_public_hostnames_protected", "cloudflare_tunnel_public_hostnames_waiting_for_access"); err != nil {
		t.Error(err)
	}
}

func TestHostnameAccessStartsAtZero(t *testing.T) {
	want := `
# HELP cloudflare_tunnel_public_hostnames_waiting_for_access PublicHostnames not published because the AccessPolicy or the Access application their check needs does not exist yet.
# TYPE cloudflare_tunnel_public_hostnames_waiting_for_access gauge
cloudflare_tunnel_public_hostnames_waiting_for_access 0
`
	if err := testutil.CollectAndCompare(New(), strings.NewReader(want), "cloudflare_tunnel_public_hostnames_waiting_for_access"); err != nil {
		t.Error(err)
	}
}

func TestConfigurationWrites(t *testing.T) {
	m := New()
	m.ConfigurationWritten(nil)
	m.ConfigurationWritten(nil)
	m.ConfigurationWritten(errors.New("boom"))
	m.ConfigurationHeld()
	want := `
# HELP cloudflare_tunnel_configuration_changes_coalesced_total Writes of a tunnel's configuration held back by the batch window so that the changes arriving meanwhile go out in that one write.
# TYPE cloudflare_tunnel_configuration_changes_coalesced_total counter
cloudflare_tunnel_configuration_changes_coalesced_total 1
# HELP cloudflare_tunnel_configuration_writes_total Writes of a tunnel's remote configuration (its published hostnames) to Cloudflare, by outcome (success, error).
# TYPE cloudflare_tunnel_configuration_writes_total counter
cloudflare_tunnel_configuration_writes_total{outcome="error"} 1
cloudflare_tunnel_configuration_writes_total{outcome="success"} 2
`
	if err := testutil.CollectAndCompare(m, strings.NewReader(want), "cloudflare_tunnel_configuration_changes_coalesced_total", "cloudflare_tunnel_configuration_writes_total"); err != nil {
		t.Error(err)
	}
}

func TestConfigurationWritesStartAtZero(t *testing.T) {
	want := `
# HELP cloudflare_tunnel_configuration_writes_total Writes of a tunnel's remote configuration (its published hostnames) to Cloudflare, by outcome (success, error).
# TYPE cloudflare_tunnel_configuration_writes_total counter
cloudflare_tunnel_configuration_writes_total{outcome="error"} 0
cloudflare_tunnel_configuration_writes_total{outcome="success"} 0
`
	if err := testutil.CollectAndCompare(New(), strings.NewReader(want), "cloudflare_tunnel_configuration_writes_total"); err != nil {
		t.Error(err)
	}
}

func TestNilMetricsDoNothing(t *testing.T) {
	var m *Metrics
	m.SetSource("Ingress", types.NamespacedName{Name: "a"}, SourceTranslated)
	m.ForgetSource("Ingress", types.NamespacedName{Name: "a"})
	m.ConfigurationWritten(nil)
	m.ConfigurationHeld()
	m.SetHostnameAccess(types.NamespacedName{Name: "a"}, HostnameProtected)
	m.ForgetHostname(types.NamespacedName{Name: "a"})
}

func TestMetricsFollowPrometheusConventions(t *testing.T) {
	m := New()
	m.SetSource("Ingress", types.NamespacedName{Name: "a"}, SourceTranslated)
	m.SetHostnameAccess(types.NamespacedName{Name: "a"}, HostnameWaitingForAccess)
	m.ConfigurationWritten(nil)
	problems, err := testutil.CollectAndLint(m)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
	if err := prometheus.NewPedanticRegistry().Register(m); err != nil {
		t.Error(err)
	}
}

// A pool's and a load balancer's series follow what is known of their
// health, and go when it is not known (or they are gone).
func TestLoadBalancingHealth(t *testing.T) {
	m := New()
	name := func(n string) types.NamespacedName { return types.NamespacedName{Namespace: "n", Name: n} }
	m.SetPoolHealthy(name("a"), true, true)
	m.SetPoolHealthy(name("b"), true, true)
	m.SetPoolHealthy(name("b"), false, true)
	m.SetPoolHealthy(name("c"), true, true)
	m.SetPoolHealthy(name("c"), false, false)
	m.SetOnFallback(name("lb"), true, true)
	m.SetOnFallback(name("other"), false, true)
	m.SetOnFallback(name("gone"), false, true)
	m.SetOnFallback(name("gone"), false, false)
	want := `
# HELP cloudflare_tunnel_load_balancer_pool_healthy 1 when Cloudflare's monitors find the LoadBalancerPool healthy in every region, 0 when not; absent while Cloudflare reports no health for it.
# TYPE cloudflare_tunnel_load_balancer_pool_healthy gauge
cloudflare_tunnel_load_balancer_pool_healthy{name="a",namespace="n"} 1
cloudflare_tunnel_load_balancer_pool_healthy{name="b",namespace="n"} 0
# HELP cloudflare_tunnel_load_balancer_on_fallback 1 when no default pool of the LoadBalancer is healthy in some region, so its fallback pool serves there; 0 when a default pool serves everywhere; absent while the pools' health is not known.
# TYPE cloudflare_tunnel_load_balancer_on_fallback gauge
cloudflare_tunnel_load_balancer_on_fallback{name="lb",namespace="n"} 1
cloudflare_tunnel_load_balancer_on_fallback{name="other",namespace="n"} 0
`
	if err := testutil.CollectAndCompare(m, strings.NewReader(want), "cloudflare_tunnel_load_balancer_pool_healthy", "cloudflare_tunnel_load_balancer_on_fallback"); err != nil {
		t.Error(err)
	}
	var none *Metrics
	none.SetPoolHealthy(name("a"), true, true)
	none.SetOnFallback(name("a"), true, true)
}
