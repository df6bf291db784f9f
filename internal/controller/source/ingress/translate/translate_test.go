package translate

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	tv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/expose"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/golden"
)

const (
	ns       = "team-a"
	tunnelID = "de5136fc-0000-4000-8000-000000000001"
)

var pc = &xpv2.ProviderConfigReference{Kind: "ProviderConfig", Name: "team-a"}

func backend(svc string, port any) networkingv1.IngressBackend {
	p := networkingv1.ServiceBackendPort{}
	switch v := port.(type) {
	case int:
		p.Number = int32(v)
	case string:
		p.Name = v
	}
	return networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: svc, Port: p}}
}

func prefix(path, svc string, port any) networkingv1.HTTPIngressPath {
	return networkingv1.HTTPIngressPath{Path: path, PathType: ptr.To(networkingv1.PathTypePrefix), Backend: backend(svc, port)}
}

func rule(h string, paths ...networkingv1.HTTPIngressPath) networkingv1.IngressRule {
	r := networkingv1.IngressRule{Host: h}
	if len(paths) > 0 {
		r.HTTP = &networkingv1.HTTPIngressRuleValue{Paths: paths}
	}
	return r
}

// ingress builds an Ingress on tunnel "edge"; ann adds or, with value "-",
// removes annotations.
func ingress(name string, ann map[string]string, def *networkingv1.IngressBackend, rules ...networkingv1.IngressRule) *networkingv1.Ingress {
	a := map[string]string{tv1alpha1.AnnotationTunnel: "edge"}
	for k, v := range ann {
		if v == "-" {
			delete(a, k)
		} else {
			a[k] = v
		}
	}
	return &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: "uid-1", Annotations: a},
		Spec:       networkingv1.IngressSpec{IngressClassName: ptr.To("cloudflare"), DefaultBackend: def, Rules: rules},
	}
}

func input(i *networkingv1.Ingress, svcs ...*corev1.Service) Input {
	m := map[string]*corev1.Service{}
	for _, s := range svcs {
		m[s.Name] = s
	}
	return Input{Ingress: i, Tunnel: expose.Tunnel{Name: "edge", TunnelID: tunnelID, ProviderConfigRef: pc}, Services: m}
}

func service(name string, ports map[string]int32) *corev1.Service {
	s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	for n, p := range ports {
		s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: n, Port: p})
	}
	return s
}

// summary is a Result reduced to what a reader checks at a glance.
type summary struct {
	Hostnames, Routes, Services, Published, Rules, Problems []string
	Public                                                  bool
}

func summarize(r expose.Result) summary {
	s := summary{Hostnames: r.Hostnames, Public: r.Public}
	for _, x := range r.Routes {
		s.Routes = append(s.Routes, x.Spec.ForProvider.Hostname)
	}
	for _, x := range r.Services {
		p := x.Spec.ForProvider
		s.Services = append(s.Services, fmt.Sprintf("%s %s:%d %s", p.Name, p.Type, *p.TCPPort, *p.Host.Hostname))
	}
	for _, x := range r.Published {
		s.Published = append(s.Published, x.Spec.Hostname)
	}
	s.Rules = ruleStrings(r.Rules)
	for _, p := range r.Problems {
		s.Problems = append(s.Problems, p.Field)
	}
	return s
}

func ruleStrings(rs []ztv1alpha1.IngressRule) []string {
	var out []string
	for _, r := range rs {
		out = append(out, strings.Join(slices.DeleteFunc([]string{ptr.Deref(r.Hostname, ""), ptr.Deref(r.Path, ""), r.Service}, func(s string) bool { return s == "" }), " "))
	}
	return out
}

func TestTunnelConfig(t *testing.T) {
	r := func(h, p, s string) ztv1alpha1.IngressRule {
		x := ztv1alpha1.IngressRule{Service: s}
		if h != "" {
			x.Hostname = ptr.To(h)
		}
		if p != "" {
			x.Path = ptr.To(p)
		}
		return x
	}
	got := TunnelConfig(
		[]ztv1alpha1.IngressRule{r("*.example.com", "", "http://w:1"), r("b.example.com", "", "http://b:1"), r("b.example.com", "^/a(/|$)", "http://b:2")},
		nil,
		[]ztv1alpha1.IngressRule{
			r("*.a.example.com", "", "http://wa:1"),
			r("a.example.com", "^/x$", "http://a:3"),
			r("a.example.com", "^/x(/|$)", "http://a:2"),
			r("a.example.com", "^/longer(/|$)", "http://a:4"),
			r("b.example.com", "", "http://b:0"), // shadowed duplicate: lowest service kept
			r("b.example.com", "", "http://b:1"), // exact duplicate
			r("", "^/x", "http://hostless:1"),    // dropped: would swallow everything
			r("c.example.com", "", ""),           // dropped: no service
			r("", "", CatchAllService),           // dropped: TunnelConfig adds its own
		},
	)
	want := []string{
		"a.example.com ^/x$ http://a:3",
		"a.example.com ^/longer(/|$) http://a:4",
		"a.example.com ^/x(/|$) http://a:2",
		"b.example.com ^/a(/|$) http://b:2",
		"b.example.com http://b:0",
		"*.a.example.com http://wa:1",
		"*.example.com http://w:1",
		CatchAllService,
	}
	if diff := cmp.Diff(want, ruleStrings(got.Ingress)); diff != "" {
		t.Errorf("TunnelConfig(): -want +got:\n%s", diff)
	}
	if diff := cmp.Diff([]string{CatchAllService}, ruleStrings(TunnelConfig().Ingress)); diff != "" {
		t.Errorf("TunnelConfig() of nothing: -want +got:\n%s", diff)
	}
}

func TestMRName(t *testing.T) {
	long := strings.Repeat("very-long-ingress-name.", 11) // a 253-character subdomain
	cases := map[string]struct {
		ingress, kind, key string
		wantPrefix         string
	}{
		"Plain":          {"web", KindHostnameRoute, "web.example.com", "web-route-"},
		"DotsAndCase":    {"My.Web", KindDNSRecord, "*.example.com", "my-web-dns-"},
		"Truncated":      {long, KindVPCService, "svc", "very-long-ingress-name-very-long-ingress-name-ve-vpc-"},
		"Empty":          {"", "", "", ""},
		"OnlySymbols":    {"...", "!!", "é", ""},
		"UnicodeIngress": {"ünïcode", KindHostnameRoute, "x", "n-code-route-"},
	}
	seen := map[string]string{}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := MRName(tc.ingress, tc.kind, tc.key)
			if got != MRName(tc.ingress, tc.kind, tc.key) {
				t.Error("not deterministic")
			}
			if errs := validation.IsDNS1123Label(got); len(errs) > 0 {
				t.Errorf("MRName() = %q: %v", got, errs)
			}
			if !strings.HasPrefix(got, tc.wantPrefix) || len(got) != len(tc.wantPrefix)+10 {
				t.Errorf("MRName() = %q, want %q + 10 hex digits", got, tc.wantPrefix)
			}
			seen[got] = name
		})
	}
	// Different keys, or ingresses that only differ after truncation, get different names.
	if MRName(long+"a", "vpc", "k") == MRName(long+"b", "vpc", "k") || MRName("w", "dns", "a") == MRName("w", "dns", "b") {
		t.Error("MRName collides")
	}
	if got := LabelValue(long); len(validation.IsValidLabelValue(got)) > 0 || got != LabelValue(long) {
		t.Errorf("LabelValue() = %q: invalid or not deterministic", got)
	}
	if got := LabelValue("web.v2"); got != "web.v2" {
		t.Errorf("LabelValue() = %q, want valid values unchanged", got)
	}
}

// FuzzTranslate: Translate and TunnelConfig never panic, are deterministic,
// and only produce valid names, labels, hostnames and a valid config.
func FuzzTranslate(f *testing.F) {
	f.Add("edge", "redis-cache-dev", "6379", "false", "redis.ns.svc.cluster.local", "", "", "/", "", "redis", "", int32(6379), "Prefix")
	f.Add("edge", "", "", "true", "", "www.example.com", "*.example.com", "/api/", "/v1.0", "web", "http", int32(0), "Exact")
	f.Add("edge", "true", "99999", "yes", "a,b", "Bad_Host", "", "relative", "", "", "", int32(-1), "")
	f.Add(" ", "x", "", "TRUE", "ü.example.com", "", "", "", "", "svc", "", int32(80), "ImplementationSpecific")
	f.Fuzz(func(t *testing.T, tunnel, vpc, port, public, hostname, host1, host2, path1, path2, svc, portName string, portNum int32, pathType string) {
		ann := map[string]string{tv1alpha1.AnnotationTunnel: tunnel, tv1alpha1.AnnotationPublic: public}
		for k, v := range map[string]string{tv1alpha1.AnnotationVPCService: vpc, tv1alpha1.AnnotationVPCPort: port, tv1alpha1.AnnotationHostname: hostname} {
			if v != "" {
				ann[k] = v
			}
		}
		be := networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: svc, Port: networkingv1.ServiceBackendPort{Name: portName, Number: portNum}}}
		pt := networkingv1.PathType(pathType)
		ing := &networkingv1.Ingress{
			ObjectMeta: metav1.ObjectMeta{Name: svc + host1, Namespace: ns, Annotations: ann},
			Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{
				{Host: host1, IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{
					{Path: path1, PathType: &pt, Backend: be}, {Path: path2, Backend: networkingv1.IngressBackend{}},
				}}}},
				{Host: host2},
			}},
		}
		if portNum%2 == 0 {
			ing.Spec.DefaultBackend = &be
		}
		in := Input{Ingress: ing, Tunnel: expose.Tunnel{Name: "", TunnelID: tunnelID}, Services: map[string]*corev1.Service{svc: service(svc, map[string]int32{portName: portNum})}}
		got := Translate(in)
		if diff := cmp.Diff(got, Translate(in)); diff != "" {
			t.Fatalf("Translate() not deterministic:\n%s", diff)
		}
		var metas []metav1.ObjectMeta
		for _, r := range got.Routes {
			metas = append(metas, r.ObjectMeta)
			if errs := validation.IsDNS1123Subdomain(r.Spec.ForProvider.Hostname); len(errs) > 0 {
				t.Errorf("route hostname %q: %v", r.Spec.ForProvider.Hostname, errs)
			}
		}
		for _, s := range got.Services {
			metas = append(metas, s.ObjectMeta)
			if p := *s.Spec.ForProvider.TCPPort; p < 1 || p > 65535 {
				t.Errorf("VPC service port %d", p)
			}
		}
		for _, r := range got.Published {
			metas = append(metas, r.ObjectMeta)
		}
		for _, m := range metas {
			if errs := validation.IsDNS1123Label(m.Name); len(errs) > 0 {
				t.Errorf("MR name %q: %v", m.Name, errs)
			}
			for k, v := range m.Labels {
				if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
					t.Errorf("label %s=%q: %v", k, v, errs)
				}
			}
		}
		cfg := TunnelConfig(got.Rules, got.Rules)
		last := cfg.Ingress[len(cfg.Ingress)-1]
		if last.Hostname != nil || last.Path != nil || last.Service != CatchAllService {
			t.Errorf("last rule %+v is not the catch-all", last)
		}
		if len(cfg.Ingress) != len(got.Rules)+1 {
			t.Errorf("TunnelConfig() has %d rules, want the %d distinct ones and the catch-all", len(cfg.Ingress), len(got.Rules))
		}
		for _, r := range cfg.Ingress[:len(cfg.Ingress)-1] {
			if ptr.Deref(r.Hostname, "") == "" {
				t.Errorf("rule %+v without hostname before the catch-all", r)
			}
		}
	})
}

func TestBackendServices(t *testing.T) {
	backend := func(name string) networkingv1.IngressBackend {
		return networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: name, Port: networkingv1.ServiceBackendPort{Number: 80}}}
	}
	paths := func(names ...string) networkingv1.IngressRuleValue {
		var ps []networkingv1.HTTPIngressPath
		for _, n := range names {
			ps = append(ps, networkingv1.HTTPIngressPath{Backend: backend(n)})
		}
		return networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: ps}}
	}
	def := backend("default")
	cases := map[string]struct {
		spec networkingv1.IngressSpec
		want []string
	}{
		"Empty":                         {spec: networkingv1.IngressSpec{}, want: nil},
		"DefaultFirst":                  {spec: networkingv1.IngressSpec{DefaultBackend: &def, Rules: []networkingv1.IngressRule{{IngressRuleValue: paths("web")}}}, want: []string{"default", "web"}},
		"EachNameOnce":                  {spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{IngressRuleValue: paths("web", "api", "web")}, {IngressRuleValue: paths("api")}}}, want: []string{"web", "api"}},
		"RuleWithNoHTTP":                {spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{Host: "a.example.com"}}}, want: nil},
		"ResourceBackendsHaveNoService": {spec: networkingv1.IngressSpec{DefaultBackend: &networkingv1.IngressBackend{Resource: &corev1.TypedLocalObjectReference{Kind: "Bucket", Name: "b"}}}, want: nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := BackendServices(&networkingv1.Ingress{Spec: tc.spec})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("BackendServices(): -want +got:\n%s", diff)
			}
		})
	}
}

// TestNotesChangeNothing: a Note is only said; the answer to every input of
// the corpus is what it would be with no Services to look at, Notes about
// them aside, where neither answer has a Problem (without the Services, a
// named port does not resolve).
func TestNotesChangeNothing(t *testing.T) {
	for _, c := range golden.Cases(t, golden.Dir) {
		t.Run(c, func(t *testing.T) {
			in := readGoldenCase(t, c).input()
			got := Translate(in)
			in.Services = nil
			plain := Translate(in)
			if diff := cmp.Diff(summarize(plain), summarize(got)); diff != "" && len(got.Problems)+len(plain.Problems) == 0 {
				t.Errorf("a Note changed the result: -without +with:\n%s", diff)
			}
		})
	}
}

// TestPathNotUTF8 is the one bad input a YAML corpus cannot hold: a path
// that is not UTF-8 is a Problem on it, and the other paths are published.
func TestPathNotUTF8(t *testing.T) {
	ing := ingress("app", map[string]string{tv1alpha1.AnnotationPublic: "true"}, nil, rule("app.example.com", prefix("/ok", "web", 80), prefix("/\xff", "web", 80)))
	want := summary{
		Public: true, Hostnames: []string{"app.example.com"}, Routes: []string{"app.example.com"},
		Published: []string{"app.example.com"},
		Rules:     []string{"app.example.com ^/ok(/|$) http://web.team-a.svc.cluster.local:80"},
		Problems:  []string{"spec.rules[0].http.paths[1].path"},
	}
	if diff := cmp.Diff(want, summarize(Translate(input(ing)))); diff != "" {
		t.Errorf("Translate(): -want +got:\n%s", diff)
	}
}
