package promrules

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/promql/promqltest"
	"github.com/prometheus/prometheus/rules"
)

const (
	chartFiles = "../../cluster/charts/provider-cloudflare-tunnel/files"
	metricsDoc = "../../docs/metrics.md"
)

var (
	promql = parser.NewParser(parser.Options{})
	quiet  = slog.New(slog.DiscardHandler)
)

// ruleFile parses the alerting rules strictly: an unknown field is an error,
// as it is for Prometheus with --rules.unknown-fields off (the default).
func ruleFile(t *testing.T) []rulefmt.Rule {
	t.Helper()
	rgs, errs := rulefmt.ParseFile(filepath.Join(chartFiles, "alerts.yaml"), false, model.UTF8Validation, promql, quiet)
	for _, err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		t.FailNow()
	}
	var out []rulefmt.Rule
	for _, g := range rgs.Groups {
		out = append(out, g.Rules...)
	}
	return out
}

func TestEveryAlertSaysWhatToDo(t *testing.T) {
	rs := ruleFile(t)
	if len(rs) < 6 {
		t.Fatalf("%d rules, want the provider-down, budget, 429, not-ready, configuration-write, source and Access alerts", len(rs))
	}
	for _, r := range rs {
		if r.Alert == "" {
			t.Errorf("rule %q is not an alert (recording rules need a test of their own here)", r.Record)
			continue
		}
		if s := r.Labels["severity"]; !slices.Contains([]string{"critical", "warning", "info"}, s) {
			t.Errorf("%s: severity %q, want critical, warning or info", r.Alert, s)
		}
		for _, a := range []string{"summary", "description", "runbook"} {
			if strings.TrimSpace(r.Annotations[a]) == "" {
				t.Errorf("%s: no %s annotation", r.Alert, a)
			}
		}
	}
}

// alertCase is one evaluation of one alert: series in promqltest's load
// syntax (one sample per minute from time 0), evaluated every minute as a
// rule group with a one-minute interval is, up to at.
type alertCase struct {
	series string
	at     time.Duration
	// firing is the label sets (beyond alertname and the rule's labels) of
	// the alerts firing at `at`; empty means none may fire.
	firing []map[string]string
}

var cases = map[string]map[string]alertCase{
	"CloudflareTunnelProviderDown": {
		"Up":              {series: `up{job="cloudflare-tunnel-system/provider-cloudflare-tunnel"} 1x20`, at: 20 * time.Minute},
		"DownFiveMinutes": {series: `up{job="cloudflare-tunnel-system/provider-cloudflare-tunnel"} 1x5 0x15`, at: 15 * time.Minute, firing: []map[string]string{{}}},
		"DownBriefly":     {series: `up{job="cloudflare-tunnel-system/provider-cloudflare-tunnel"} 1x5 0x2 1x10`, at: 10 * time.Minute},
		"NeverScraped":    {series: `up{job="another-app"} 1x20`, at: 10 * time.Minute, firing: []map[string]string{{}}},
		"OneOfTwoUp":      {series: "up{job=\"provider-cloudflare-tunnel-metrics\",pod=\"a\"} 0x20\nup{job=\"provider-cloudflare-tunnel-metrics\",pod=\"b\"} 1x20", at: 15 * time.Minute},
	},
	"CloudflareAPIBudgetNearlyExhausted": {
		"Plenty": {series: "cloudflare_rate_limit_remaining_requests 1100-50x20\ncloudflare_rate_limit_quota_requests 1200x20", at: 20 * time.Minute},
		// Another tool spends the token: 1,200 → 60 in 19 minutes.
		"SharedTokenRunsOut": {series: "cloudflare_rate_limit_remaining_requests 1200-60x20\ncloudflare_rate_limit_quota_requests 1200x20", at: 20 * time.Minute, firing: []map[string]string{{}}},
		"BrieflyLow":         {series: "cloudflare_rate_limit_remaining_requests 1000x5 100 1000x10\ncloudflare_rate_limit_quota_requests 1200x20", at: 7 * time.Minute},
	},
	"CloudflareAPIRateLimited": {
		"None":     {series: `cloudflare_rate_limited_total 0x30`, at: 30 * time.Minute},
		"One429":   {series: `cloudflare_rate_limited_total 0x10 1x20`, at: 15 * time.Minute, firing: []map[string]string{{}}},
		"LongGone": {series: `cloudflare_rate_limited_total 0x10 1x20`, at: 30 * time.Minute},
	},
	"CloudflareBudgetSaturated": {
		// Every request waits 60 s (the 65.5 s bucket) for 20 minutes.
		"Saturated": {series: budgetWait(60), at: 30 * time.Minute, firing: []map[string]string{{}}},
		"Fast":      {series: budgetWait(0.0005), at: 30 * time.Minute},
	},
	"CloudflareManagedResourcesNotReady": {
		"AllReady": {series: "crossplane_managed_resource_exists{gvk=\"DNSRecord\"} 5x30\ncrossplane_managed_resource_ready{gvk=\"DNSRecord\"} 5x30", at: 30 * time.Minute},
		"OneStuck": {
			series: "crossplane_managed_resource_exists{gvk=\"DNSRecord\"} 5x30\ncrossplane_managed_resource_ready{gvk=\"DNSRecord\"} 4x30\n" +
				"crossplane_managed_resource_exists{gvk=\"Tunnel\"} 1x30\ncrossplane_managed_resource_ready{gvk=\"Tunnel\"} 1x30",
			at: 20 * time.Minute, firing: []map[string]string{{"gvk": "DNSRecord"}},
		},
		"ConvergingWithinFifteenMinutes": {series: "crossplane_managed_resource_exists{gvk=\"DNSRecord\"} 5x30\ncrossplane_managed_resource_ready{gvk=\"DNSRecord\"} 0x10 5x20", at: 20 * time.Minute},
	},
	"CloudflareTunnelConfigurationWritesFailing": {
		"Succeeding": {series: "cloudflare_tunnel_configuration_writes_total{outcome=\"success\"} 0+1x40\ncloudflare_tunnel_configuration_writes_total{outcome=\"error\"} 0x40", at: 40 * time.Minute},
		"OnlyErrors": {series: "cloudflare_tunnel_configuration_writes_total{outcome=\"success\"} 5x40\ncloudflare_tunnel_configuration_writes_total{outcome=\"error\"} 0+1x40", at: 40 * time.Minute, firing: []map[string]string{{}}},
		// A token without Tunnel permission: nothing ever succeeds (the
		// provider makes both series at zero), or only errors were scraped.
		"FailingFromTheStart": {series: "cloudflare_tunnel_configuration_writes_total{outcome=\"success\"} 0x40\ncloudflare_tunnel_configuration_writes_total{outcome=\"error\"} 0+1x40", at: 40 * time.Minute, firing: []map[string]string{{}}},
		"NoSuccessSeries":     {series: "cloudflare_tunnel_configuration_writes_total{outcome=\"error\"} 0+1x40", at: 40 * time.Minute, firing: []map[string]string{{}}},
		// An error now and then among successful writes is retried.
		"ErrorsAmongSuccesses": {series: "cloudflare_tunnel_configuration_writes_total{outcome=\"success\"} 0+1x40\ncloudflare_tunnel_configuration_writes_total{outcome=\"error\"} 0+1x40", at: 40 * time.Minute},
	},
	"CloudflareTunnelSourcesNeedAttention": {
		"Clean": {series: "cloudflare_tunnel_sources{kind=\"Ingress\",state=\"translated\"} 10x60\ncloudflare_tunnel_sources{kind=\"Ingress\",state=\"problem\"} 0x60", at: 60 * time.Minute},
		"ALongProblem": {
			series: "cloudflare_tunnel_sources{kind=\"Ingress\",state=\"problem\"} 1x60\ncloudflare_tunnel_sources{kind=\"Service\",state=\"conflict\"} 0x30 2x30",
			at:     50 * time.Minute, firing: []map[string]string{{"kind": "Ingress", "state": "problem"}},
		},
	},
	"CloudflareTunnelHostnameWaitingForAccess": {
		"NoneWaiting": {series: "cloudflare_tunnel_public_hostnames_waiting_for_access 0x30\ncloudflare_tunnel_public_hostnames_protected 5x30", at: 30 * time.Minute},
		// An AccessPolicy named but never made.
		"WaitingTenMinutes": {series: "cloudflare_tunnel_public_hostnames_waiting_for_access 0x5 2x25", at: 20 * time.Minute, firing: []map[string]string{{}}},
		// The application takes a few minutes to be made: no alert.
		"ProtectedWithinMinutes": {series: "cloudflare_tunnel_public_hostnames_waiting_for_access 0x5 3x5 0x20", at: 25 * time.Minute},
		// Two replicas: the leader counts, the other serves zero.
		"OnlyTheLeaderCounts": {
			series: "cloudflare_tunnel_public_hostnames_waiting_for_access{pod=\"a\"} 1x30\ncloudflare_tunnel_public_hostnames_waiting_for_access{pod=\"b\"} 0x30",
			at:     20 * time.Minute, firing: []map[string]string{{}},
		},
	},
	"CloudflareLoadBalancerPoolUnhealthy": {
		"Healthy": {series: `cloudflare_tunnel_load_balancer_pool_healthy{namespace="a",name="p"} 1x30`, at: 30 * time.Minute},
		// A tunnel whose connectors dropped for good.
		"UnhealthyFiveMinutes": {
			series: `cloudflare_tunnel_load_balancer_pool_healthy{namespace="a",name="p"} 1x5 0x25` + "\n" + `cloudflare_tunnel_load_balancer_pool_healthy{namespace="a",name="q"} 1x30`,
			at:     15 * time.Minute, firing: []map[string]string{{"namespace": "a", "name": "p"}},
		},
		// A cloudflared rolled over: back within minutes, no alert.
		"BackWithinMinutes": {series: `cloudflare_tunnel_load_balancer_pool_healthy{namespace="a",name="p"} 1x5 0x3 1x20`, at: 25 * time.Minute},
		// Health not known (no monitor): no series, no alert.
		"Unknown": {series: `cloudflare_tunnel_load_balancer_on_fallback{namespace="a",name="lb"} 0x30`, at: 30 * time.Minute},
	},
	"CloudflareLoadBalancerOnFallback": {
		"ServedByADefaultPool": {series: `cloudflare_tunnel_load_balancer_on_fallback{namespace="a",name="lb"} 0x30`, at: 30 * time.Minute},
		"OnFallback": {
			series: `cloudflare_tunnel_load_balancer_on_fallback{namespace="a",name="lb"} 0x5 1x25`,
			at:     10 * time.Minute, firing: []map[string]string{{"namespace": "a", "name": "lb"}},
		},
		// Every replica's series: one alert per load balancer.
		"TwoReplicas": {
			series: `cloudflare_tunnel_load_balancer_on_fallback{namespace="a",name="lb",pod="x"} 1x30` + "\n" + `cloudflare_tunnel_load_balancer_on_fallback{namespace="a",name="lb",pod="y"} 1x30`,
			at:     10 * time.Minute, firing: []map[string]string{{"namespace": "a", "name": "lb"}},
		},
		"BackWithinAMinute": {series: `cloudflare_tunnel_load_balancer_on_fallback{namespace="a",name="lb"} 0x5 1x1 0x20`, at: 25 * time.Minute},
	},
}

// budgetWait is the wait histogram with every request (10 a second) waiting
// d seconds.
func budgetWait(d float64) string {
	var b strings.Builder
	for _, le := range []string{"0.001", "0.004", "0.016", "0.064", "0.256", "1.024", "4.096", "16.384", "65.536", "262.144", "+Inf"} {
		n := "0x40"
		if v, _ := parseFloat(le); d <= v {
			n = "0+600x40"
		}
		b.WriteString(`cloudflare_budget_wait_seconds_bucket{le="` + le + `"} ` + n + "\n")
	}
	return b.String()
}

func parseFloat(s string) (float64, error) {
	if s == "+Inf" {
		return 1e308, nil
	}
	var f float64
	err := json.Unmarshal([]byte(s), &f)
	return f, err
}

func TestAlertsFireWhenTheyShould(t *testing.T) {
	rs := ruleFile(t)
	for _, r := range rs {
		if _, ok := cases[r.Alert]; !ok {
			t.Errorf("%s has no test cases", r.Alert)
		}
	}
	for _, r := range rs {
		for name, tc := range cases[r.Alert] {
			t.Run(r.Alert+"/"+name, func(t *testing.T) {
				got := firing(t, r, tc)
				want := make([]string, 0, len(tc.firing))
				for _, l := range tc.firing {
					want = append(want, labels.FromMap(l).String())
				}
				sort.Strings(want)
				if !slices.Equal(got, want) {
					t.Errorf("firing at %v: %v, want %v", tc.at, got, want)
				}
			})
		}
	}
	for alert := range cases {
		if !slices.ContainsFunc(rs, func(r rulefmt.Rule) bool { return r.Alert == alert }) {
			t.Errorf("test cases for %s, which alerts.yaml does not have", alert)
		}
	}
}

// firing evaluates r every minute from 0 to tc.at, as Prometheus' rule
// manager does, and returns the label sets of the alerts firing at the end
// (without alertname and the rule's own labels). Annotation templates are
// expanded on the way: an error in one fails the test.
func firing(t *testing.T, r rulefmt.Rule, tc alertCase) []string {
	t.Helper()
	storage := promqltest.LoadedStorage(t, "load 1m\n"+indent(tc.series))
	engine := promqltest.NewTestEngine(t, false, 0, promqltest.DefaultMaxSamplesPerQuery)
	expr, err := promql.ParseExpr(r.Expr)
	if err != nil {
		t.Fatal(err)
	}
	rule := rules.NewAlertingRule(r.Alert, expr, time.Duration(r.For), time.Duration(r.KeepFiringFor),
		labels.FromMap(r.Labels), labels.FromMap(r.Annotations), labels.EmptyLabels(), "", true, quiet)
	query := rules.EngineQueryFunc(engine, storage)
	for at := time.Duration(0); at <= tc.at; at += time.Minute {
		if _, err := rule.Eval(context.Background(), 0, time.Unix(0, 0).Add(at), query, nil, 0); err != nil {
			t.Fatalf("eval at %v: %v", at, err)
		}
	}
	var out []string
	for _, a := range rule.ActiveAlerts() {
		if a.State != rules.StateFiring {
			continue
		}
		a.Annotations.Range(func(l labels.Label) {
			if strings.Contains(l.Value, "error expanding template") || strings.Contains(l.Value, "<no value>") {
				t.Errorf("annotation %s: %s", l.Name, l.Value)
			}
		})
		b := labels.NewBuilder(a.Labels)
		b.Del(labels.AlertName)
		for k := range r.Labels {
			b.Del(k)
		}
		out = append(out, b.Labels().String())
	}
	sort.Strings(out)
	return out
}

func indent(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i, l := range lines {
		lines[i] = "  " + l
	}
	return strings.Join(lines, "\n")
}

// dashboardQueries are the PromQL expressions of every panel target, with
// the dashboard's variables replaced by values Prometheus can parse.
func dashboardQueries(t *testing.T) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(chartFiles, "dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		UID    string `json:"uid"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	if d.UID == "" || len(d.Panels) == 0 {
		t.Fatalf("dashboard: uid %q, %d panels", d.UID, len(d.Panels))
	}
	out := map[string]string{}
	for _, p := range d.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for i, q := range p.Targets {
			out[p.Title+"#"+string(rune('A'+i))] = strings.ReplaceAll(q.Expr, "$job", ".*")
		}
	}
	return out
}

func TestDashboardQueriesParse(t *testing.T) {
	for name, q := range dashboardQueries(t) {
		if _, err := promql.ParseExpr(q); err != nil {
			t.Errorf("%s: %q: %v", name, q, err)
		}
	}
}

// documented reads the metric names docs/metrics.md lists: the first
// column of its tables, in backquotes.
func documented(t *testing.T) map[string]bool {
	t.Helper()
	raw, err := os.ReadFile(metricsDoc)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z_:][a-z0-9_:]*)`").FindAllStringSubmatch(string(raw), -1) {
		out[m[1]] = true
	}
	if len(out) < 10 {
		t.Fatalf("docs/metrics.md documents %d metrics; its tables' rows must start with | `name`", len(out))
	}
	return out
}

// metricNames lists the metrics an expression selects.
func metricNames(t *testing.T, q string) []string {
	t.Helper()
	expr, err := promql.ParseExpr(q)
	if err != nil {
		t.Fatalf("%q: %v", q, err)
	}
	var names []string
	parser.Inspect(expr, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			names = append(names, vs.Name)
		}
		return nil
	})
	return names
}

// servedByPrometheus are series Prometheus makes itself, not the provider.
var servedByPrometheus = map[string]bool{"up": true}

func TestEveryMetricUsedIsDocumented(t *testing.T) {
	doc := documented(t)
	check := func(where, q string) {
		for _, name := range metricNames(t, q) {
			base := name
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				if b, ok := strings.CutSuffix(name, suffix); ok && doc[b] {
					base = b
				}
			}
			if !doc[base] && !servedByPrometheus[base] {
				t.Errorf("%s uses %s, which docs/metrics.md does not document", where, name)
			}
		}
	}
	for _, r := range ruleFile(t) {
		check("alert "+r.Alert, r.Expr)
	}
	for name, q := range dashboardQueries(t) {
		check("panel "+name, q)
	}
}
