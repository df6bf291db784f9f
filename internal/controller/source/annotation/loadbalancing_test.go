package annotation

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
)

func TestLoadBalancing(t *testing.T) {
	const (
		pool     = v1alpha1.AnnotationLBPool
		path     = v1alpha1.AnnotationLBMonitorPath
		only     = v1alpha1.AnnotationLBMonitorConnectorOnly
		codes    = v1alpha1.AnnotationLBMonitorExpectedCodes
		interval = v1alpha1.AnnotationLBMonitorInterval
		pools    = v1alpha1.AnnotationLBPools
		fallback = v1alpha1.AnnotationLBFallbackPool
		steering = v1alpha1.AnnotationLBSteering
	)
	cases := map[string]struct {
		ann      map[string]string
		want     *v1alpha1.LoadBalancing
		problems []string // the annotations named
	}{
		"None":     {ann: map[string]string{v1alpha1.AnnotationPublic: "true"}},
		"PoolOnly": {ann: map[string]string{pool: " app-b "}, want: &v1alpha1.LoadBalancing{Pool: "app-b"}},
		"Monitor": {ann: map[string]string{pool: "app-b", path: "/healthz", codes: "2XX", interval: "30s"},
			want: &v1alpha1.LoadBalancing{Pool: "app-b", Monitor: &v1alpha1.HostnameMonitor{Path: ptr.To("/healthz"), ExpectedCodes: ptr.To("2xx"), Interval: ptr.To[int64](30)}}},
		"IntervalInSeconds": {ann: map[string]string{pool: "app-b", interval: "60"},
			want: &v1alpha1.LoadBalancing{Pool: "app-b", Monitor: &v1alpha1.HostnameMonitor{Interval: ptr.To[int64](60)}}},
		"ConnectorOnly": {ann: map[string]string{pool: "app-b", path: "/cf-probe", only: "true"},
			want: &v1alpha1.LoadBalancing{Pool: "app-b", Monitor: &v1alpha1.HostnameMonitor{Path: ptr.To("/cf-probe"), ConnectorOnly: true}}},
		"ConnectorOnlyFalse": {ann: map[string]string{pool: "app-b", only: "false"}, want: &v1alpha1.LoadBalancing{Pool: "app-b"}},
		"LoadBalancer": {ann: map[string]string{pool: "app-a", pools: "app-a, app-b,", fallback: "app-b", steering: "Random"},
			want: &v1alpha1.LoadBalancing{Pool: "app-a", LoadBalancer: &v1alpha1.HostnameLoadBalancer{Pools: []string{"app-a", "app-b"}, FallbackPool: ptr.To("app-b"), SteeringPolicy: ptr.To("random")}}},
		"PoolMissing":             {ann: map[string]string{path: "/"}, problems: []string{pool}},
		"PoolNotAName":            {ann: map[string]string{pool: "app a"}, problems: []string{pool}},
		"PoolTooLong":             {ann: map[string]string{pool: strings.Repeat("p", 101)}, problems: []string{pool}},
		"PathRelative":            {ann: map[string]string{pool: "p", path: "healthz"}, problems: []string{path}},
		"PathWithSpace":           {ann: map[string]string{pool: "p", path: "/a b"}, problems: []string{path}},
		"CodesNotACode":           {ann: map[string]string{pool: "p", codes: "600"}, problems: []string{codes}},
		"IntervalTooShort":        {ann: map[string]string{pool: "p", interval: "4s"}, problems: []string{interval}},
		"IntervalNotWhole":        {ann: map[string]string{pool: "p", interval: "5.5s"}, problems: []string{interval}},
		"ConnectorOnlyNeedsPath":  {ann: map[string]string{pool: "p", only: "true"}, problems: []string{only}},
		"ConnectorOnlyNotABool":   {ann: map[string]string{pool: "p", path: "/x", only: "yes"}, problems: []string{only}},
		"PoolsWithoutOwn":         {ann: map[string]string{pool: "app-a", pools: "app-b"}, problems: []string{pools}},
		"PoolsEmpty":              {ann: map[string]string{pool: "app-a", pools: " , "}, problems: []string{pools}},
		"PoolsTwice":              {ann: map[string]string{pool: "app-a", pools: "app-a,app-b,app-a"}, problems: []string{pools}},
		"PoolsBadName":            {ann: map[string]string{pool: "app-a", pools: "app-a,b/c"}, problems: []string{pools}},
		"PoolsTooMany":            {ann: map[string]string{pool: "p0", pools: manyPools(21)}, problems: []string{pools}},
		"FallbackNotListed":       {ann: map[string]string{pool: "app-a", pools: "app-a", fallback: "app-b"}, problems: []string{fallback}},
		"SteeringUnknown":         {ann: map[string]string{pool: "app-a", pools: "app-a", steering: "geo"}, problems: []string{steering}},
		"FallbackWithoutPools":    {ann: map[string]string{pool: "app-b", fallback: "app-a"}, problems: []string{fallback}},
		"SteeringWithoutPools":    {ann: map[string]string{pool: "app-b", steering: "random"}, problems: []string{steering}},
		"EveryProblemIsReported":  {ann: map[string]string{path: "x", codes: "9", pools: "a"}, problems: []string{pool, path, codes}},
		"TwentyPoolsAreAllowed":   {ann: map[string]string{pool: "p0", pools: manyPools(20)}, want: &v1alpha1.LoadBalancing{Pool: "p0", LoadBalancer: &v1alpha1.HostnameLoadBalancer{Pools: strings.Split(manyPools(20), ",")}}},
		"ExpectedCodesOfOneClass": {ann: map[string]string{pool: "p", codes: "301"}, want: &v1alpha1.LoadBalancing{Pool: "p", Monitor: &v1alpha1.HostnameMonitor{ExpectedCodes: ptr.To("301")}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := Read(tc.ann)
			got := r.LoadBalancing()
			var named []string
			for _, p := range r.Problems {
				named = append(named, p.Field)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("LoadBalancing (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.problems, named); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func manyPools(n int) string {
	names := make([]string, n)
	for i := range names {
		names[i] = "p" + strings.Repeat("x", i/10) + string(rune('0'+i%10))
	}
	return strings.Join(names, ",")
}

// FuzzLoadBalancing: whatever the annotations, a spec.loadBalancing is
// produced only without a Problem, and only one the API server's rules on
// a PublicHostname accept; an lb-* annotation that yields none is always
// reported.
func FuzzLoadBalancing(f *testing.F) {
	f.Add("app-a", "/healthz", "true", "2xx", "30s", "app-a,app-b", "app-b", "off")
	f.Add("app-b", "", "", "", "", "", "", "")
	f.Add(" ", "/", "false", "200", "3600", "app-b, app-b", "x", "geo")
	f.Fuzz(func(t *testing.T, pool, path, only, codes, interval, pools, fallback, steering string) {
		ann := map[string]string{}
		for k, v := range map[string]string{v1alpha1.AnnotationLBPool: pool, v1alpha1.AnnotationLBMonitorPath: path, v1alpha1.AnnotationLBMonitorConnectorOnly: only,
			v1alpha1.AnnotationLBMonitorExpectedCodes: codes, v1alpha1.AnnotationLBMonitorInterval: interval, v1alpha1.AnnotationLBPools: pools,
			v1alpha1.AnnotationLBFallbackPool: fallback, v1alpha1.AnnotationLBSteering: steering} {
			if v != "" {
				ann[k] = v
			}
		}
		r := Read(ann)
		lb := r.LoadBalancing()
		switch {
		case lb == nil && HasLoadBalancing(ann) && len(r.Problems) == 0:
			t.Fatalf("no spec.loadBalancing and no problem for %v", ann)
		case lb != nil && len(r.Problems) > 0:
			t.Fatalf("spec.loadBalancing %+v despite problems %v", lb, r.Problems)
		case lb == nil:
			return
		}
		if !poolName.MatchString(lb.Pool) {
			t.Fatalf("pool %q", lb.Pool)
		}
		if m := lb.Monitor; m != nil {
			if m.ConnectorOnly && m.Path == nil {
				t.Fatalf("connectorOnly without a path: %v", ann)
			}
			if m.Path != nil && (!strings.HasPrefix(*m.Path, "/") || len(*m.Path) > maxMonitorPath) {
				t.Fatalf("path %q", *m.Path)
			}
			if m.Interval != nil && (*m.Interval < minIntervalSecs || *m.Interval > maxIntervalSecs) {
				t.Fatalf("interval %d", *m.Interval)
			}
			if m.ExpectedCodes != nil && !expectedCodes.MatchString(*m.ExpectedCodes) {
				t.Fatalf("expected codes %q", *m.ExpectedCodes)
			}
		}
		if l := lb.LoadBalancer; l != nil {
			if len(l.Pools) == 0 || len(l.Pools) > maxPools || !slices.Contains(l.Pools, lb.Pool) {
				t.Fatalf("pools %v with own %q", l.Pools, lb.Pool)
			}
			if l.FallbackPool != nil && !slices.Contains(l.Pools, *l.FallbackPool) {
				t.Fatalf("fallback %q not in %v", *l.FallbackPool, l.Pools)
			}
			if l.SteeringPolicy != nil && !slices.Contains(v1alpha1.SteeringPolicies, *l.SteeringPolicy) {
				t.Fatalf("steering %q", *l.SteeringPolicy)
			}
		}
	})
}

func TestRouteLoadBalancing(t *testing.T) {
	pool := map[string]string{v1alpha1.AnnotationLBPool: "app-a"}
	cases := map[string]struct {
		ann     map[string]string
		hosts   []string
		want    *v1alpha1.LoadBalancing
		problem string // a part of the problem; "" for none
	}{
		"NoAnnotation":                {ann: map[string]string{v1alpha1.AnnotationAccessPolicies: "staff"}, hosts: []string{"a.example.com", "b.example.com"}},
		"OneHostname":                 {ann: pool, hosts: []string{"app.example.com"}, want: &v1alpha1.LoadBalancing{Pool: "app-a"}},
		"NoHostnameYet":               {ann: pool, want: &v1alpha1.LoadBalancing{Pool: "app-a"}},
		"TwoHostnames":                {ann: pool, hosts: []string{"a.example.com", "b.example.com"}, problem: "the route publishes 2 hostnames"},
		"AWildcard":                   {ann: pool, hosts: []string{"*.example.com"}, problem: "is a wildcard"},
		"TooLong":                     {ann: pool, hosts: []string{strings.Repeat("a", 180) + ".example.com"}, problem: "longer than the 190 characters"},
		"ABadValue":                   {ann: map[string]string{v1alpha1.AnnotationLBPool: "app a"}, hosts: []string{"app.example.com"}, problem: "annotation " + v1alpha1.AnnotationLBPool + `: "app a" is not a pool name`},
		"ABadValueNamesItsAnnotation": {ann: map[string]string{v1alpha1.AnnotationLBPool: "app-a", v1alpha1.AnnotationLBSteering: "geo"}, hosts: []string{"app.example.com"}, problem: "annotation " + v1alpha1.AnnotationLBSteering + ":"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, problem := RouteLoadBalancing(tc.ann, tc.hosts)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("RouteLoadBalancing (-want +got):\n%s", diff)
			}
			if (tc.problem == "") != (problem == "") || !strings.Contains(problem, tc.problem) {
				t.Errorf("problem %q, want one saying %q", problem, tc.problem)
			}
		})
	}
}

// FuzzRouteLoadBalancing: whatever a route's hostnames and lb-pool, load
// balancing is asked only of one concrete hostname short enough for its
// pool, and lb-* annotations that ask for none are always reported.
func FuzzRouteLoadBalancing(f *testing.F) {
	f.Add("app-a", "app.example.com", "")
	f.Add("app-a", "*.example.com", "")
	f.Add("app-a", "a.example.com", "b.example.com")
	f.Add("", "a.example.com", "")
	f.Fuzz(func(t *testing.T, pool, h1, h2 string) {
		ann := map[string]string{}
		if pool != "" {
			ann[v1alpha1.AnnotationLBPool] = pool
		}
		var hosts []string
		for _, h := range []string{h1, h2} {
			if h != "" {
				hosts = append(hosts, h)
			}
		}
		lb, problem := RouteLoadBalancing(ann, hosts)
		switch {
		case lb != nil && problem != "":
			t.Fatalf("load balancing %+v despite %q", lb, problem)
		case lb == nil && problem == "" && HasLoadBalancing(ann):
			t.Fatalf("lb-pool %q on %q: no load balancing and no problem", pool, hosts)
		case !HasLoadBalancing(ann) && (lb != nil || problem != ""):
			t.Fatalf("no lb-* annotation, yet %+v %q", lb, problem)
		case lb == nil:
			return
		}
		if len(hosts) > 1 || len(hosts) == 1 && (strings.HasPrefix(hosts[0], "*") || len(hosts[0]) > maxLoadBalancedHostname) {
			t.Fatalf("load balancing %+v for hostnames %q", lb, hosts)
		}
		if !poolName.MatchString(lb.Pool) {
			t.Fatalf("pool %q", lb.Pool)
		}
	})
}
