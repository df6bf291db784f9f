package publish

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	v1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
)

const aud = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func svc(name string, port intstr.IntOrString, proto string) *v1alpha1.Origin {
	return &v1alpha1.Origin{Service: &v1alpha1.ServiceOrigin{Name: name, Port: port, Protocol: proto}}
}

func spec(mutate ...func(*v1alpha1.PublicHostnameSpec)) v1alpha1.PublicHostnameSpec {
	s := v1alpha1.PublicHostnameSpec{TunnelRef: v1alpha1.TunnelReference{Name: "edge"}, Hostname: "app.example.com", Origin: svc("web", intstr.FromInt32(80), "")}
	for _, m := range mutate {
		m(&s)
	}
	return s
}

func rule(host, path, service string, o *ztv1alpha1.OriginRequest) ztv1alpha1.IngressRule {
	r := ztv1alpha1.IngressRule{Hostname: ptr.To(host), Service: service, OriginRequest: o}
	if path != "" {
		r.Path = ptr.To(path)
	}
	return r
}

func TestRules(t *testing.T) {
	env := Env{Namespace: "team-a", Services: map[string]*corev1.Service{
		"grpc": {Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "api", Port: 8443}}}},
	}}
	cases := map[string]struct {
		spec     v1alpha1.PublicHostnameSpec
		env      *Env
		want     []ztv1alpha1.IngressRule
		pools    []v1alpha1.LocalSecretKeySelector
		problems []string // fields
		waiting  bool
	}{
		"PlainService": {
			spec: spec(),
			want: []ztv1alpha1.IngressRule{rule("app.example.com", "", "http://web.team-a.svc.cluster.local:80", nil)},
		},
		"ClusterDomain": {
			spec: spec(),
			env:  &Env{Namespace: "team-a", ClusterDomain: "corp.internal"},
			want: []ztv1alpha1.IngressRule{rule("app.example.com", "", "http://web.team-a.svc.corp.internal:80", nil)},
		},
		"HTTP2IsHTTPSWithHTTP2Origin": {
			spec: spec(func(s *v1alpha1.PublicHostnameSpec) {
				s.Origin = svc("grpc", intstr.FromString("api"), v1alpha1.ProtocolHTTP2)
			}),
			want: []ztv1alpha1.IngressRule{rule("app.example.com", "", "https://grpc.team-a.svc.cluster.local:8443", &ztv1alpha1.OriginRequest{HTTP2Origin: ptr.To(true)})},
		},
		"HTTP2OriginForURLOrigins": {
			spec: spec(func(s *v1alpha1.PublicHostnameSpec) {
				s.Origin = &v1alpha1.Origin{URL: ptr.To("https://grpc.apps.svc.cluster.local:8443")}
				s.OriginRequest = &v1alpha1.OriginOptions{HTTP2Origin: ptr.To(true)}
			}),
			want: []ztv1alpha1.IngressRule{rule("app.example.com", "", "https://grpc.apps.svc.cluster.local:8443", &ztv1alpha1.OriginRequest{HTTP2Origin: ptr.To(true)})},
		},
		"HTTP2OriginNeedsHTTPS": {
			spec: spec(func(s *v1alpha1.PublicHostnameSpec) {
				s.Origin = &v1alpha1.Origin{URL: ptr.To("http://grpc.apps.svc.cluster.local:8080")}
				s.OriginRequest = &v1alpha1.OriginOptions{HTTP2Origin: ptr.To(true)}
			}),
			problems: []string{"spec.origin"},
		},
		"SSHAndRDPAndTCP": {
			spec: spec(func(s *v1alpha1.PublicHostnameSpec) {
				s.Origin = nil
				s.Paths = []v1alpha1.PathOrigin{
					{Path: "/ssh", Origin: *svc("bastion", intstr.FromInt32(22), v1alpha1.ProtocolSSH)},
					{Path: "/rdp", PathType: v1alpha1.PathTypeExact, Origin: *svc("win", intstr.FromInt32(3389), v1alpha1.ProtocolRDP)},
					{Path: "^/db/.*", PathType: v1alpha1.PathTypeRegularExpression, Origin: *svc("db", intstr.FromInt32(5432), v1alpha1.ProtocolTCP)},
				}
			}),
			want: []ztv1alpha1.IngressRule{
				rule("app.example.com", "^/rdp$", "rdp://win.team-a.svc.cluster.local:3389", nil),
				rule("app.example.com", "^/ssh(/|$)", "ssh://bastion.team-a.svc.cluster.local:22", nil),
				rule("app.example.com", "^/db/.*", "tcp://db.team-a.svc.cluster.local:5432", nil),
			},
		},
		"PathsBeforeTheOrigin": {
			spec: spec(func(s *v1alpha1.PublicHostnameSpec) {
				s.Paths = []v1alpha1.PathOrigin{{Path: "/api/", Origin: *svc("api", intstr.FromInt32(8080), "")}, {Path: "/", Origin: v1alpha1.Origin{URL: ptr.To("http_status:418")}}}
				s.Origin = nil
			}),
			want: []ztv1alpha1.IngressRule{
				rule("app.example.com", "^/api(/|$)", "http://api.team-a.svc.cluster.local:8080", nil),
				rule("app.example.com", "", "http_status:418", nil),
			},
		},
		"OriginOptionsInCloudflaresForm": {
			spec: spec(func(s *v1alpha1.PublicHostnameSpec) {
				s.Origin = svc("web", intstr.FromInt32(443), v1alpha1.ProtocolHTTPS)
				s.OriginRequest = &v1alpha1.OriginOptions{
					OriginServerName: ptr.To("web.internal"), MatchSNIToHost: ptr.To(true), HTTPHostHeader: ptr.To("web.internal"),
					ConnectTimeoutSeconds: ptr.To[int64](5), TLSTimeoutSeconds: ptr.To[int64](7),
					CAPoolSecretRef: &v1alpha1.LocalSecretKeySelector{Name: "web-ca", Key: "ca.crt"},
				}
			}),
			want: []ztv1alpha1.IngressRule{rule("app.example.com", "", "https://web.team-a.svc.cluster.local:443", &ztv1alpha1.OriginRequest{
				OriginServerName: ptr.To("web.internal"), MatchSNIToHost: ptr.To(true), HTTPHostHeader: ptr.To("web.internal"),
				ConnectTimeout: ptr.To[int64](5), TLSTimeout: ptr.To[int64](7), CAPool: ptr.To("/etc/cloudflared/ca/web-ca/ca.crt"),
			})},
			pools: []v1alpha1.LocalSecretKeySelector{{Name: "web-ca", Key: "ca.crt"}},
		},
		"NoTLSVerifyOnlyWhenAsked": {
			spec: spec(func(s *v1alpha1.PublicHostnameSpec) {
				s.OriginRequest = &v1alpha1.OriginOptions{NoTLSVerify: ptr.To(false), ConnectTimeoutSeconds: ptr.To[int64](3)}
			}),
			want: []ztv1alpha1.IngressRule{rule("app.example.com", "", "http://web.team-a.svc.cluster.local:80", &ztv1alpha1.OriginRequest{ConnectTimeout: ptr.To[int64](3)})},
		},
		"Access": {
			spec: spec(func(s *v1alpha1.PublicHostnameSpec) {
				s.Access = &v1alpha1.Access{TeamName: "acme", AudTags: []string{aud}}
			}),
			want: []ztv1alpha1.IngressRule{rule("app.example.com", "", "http://web.team-a.svc.cluster.local:80", &ztv1alpha1.OriginRequest{
				Access: &ztv1alpha1.OriginAccess{Required: ptr.To(true), TeamName: "acme", AudTag: []string{aud}},
			})},
		},
		"AccessWithABadTagPublishesNothing": {
			spec: spec(func(s *v1alpha1.PublicHostnameSpec) {
				s.Access = &v1alpha1.Access{TeamName: "acme", AudTags: []string{aud, "not-a-tag"}}
			}),
			problems: []string{"spec.access.audTags[1]"},
		},
		"AccessWithoutTagsPublishesNothing": {
			spec:     spec(func(s *v1alpha1.PublicHostnameSpec) { s.Access = &v1alpha1.Access{TeamName: "Acme Corp"} }),
			problems: []string{"spec.access.teamName", "spec.access.audTags"},
		},
		"OneBadPathPublishesNothing": {
			spec: spec(func(s *v1alpha1.PublicHostnameSpec) {
				s.Paths = []v1alpha1.PathOrigin{{Path: "api", Origin: *svc("api", intstr.FromInt32(80), "")}}
			}),
			problems: []string{"spec.paths[0].path"},
		},
		"BadRegularExpression": {
			spec: spec(func(s *v1alpha1.PublicHostnameSpec) {
				s.Paths = []v1alpha1.PathOrigin{{Path: "(", PathType: v1alpha1.PathTypeRegularExpression, Origin: *svc("api", intstr.FromInt32(80), "")}}
			}),
			problems: []string{"spec.paths[0].path"},
		},
		"PathThatIsNotUTF8": {
			spec: spec(func(s *v1alpha1.PublicHostnameSpec) {
				s.Paths = []v1alpha1.PathOrigin{{Path: "/\xff", Origin: *svc("api", intstr.FromInt32(80), "")}}
			}),
			problems: []string{"spec.paths[0].path"},
		},
		"TwoOriginsForOnePath": {
			spec: spec(func(s *v1alpha1.PublicHostnameSpec) {
				s.Paths = []v1alpha1.PathOrigin{{Path: "/a", Origin: *svc("a", intstr.FromInt32(80), "")}, {Path: "/a/", Origin: *svc("b", intstr.FromInt32(80), "")}}
			}),
			problems: []string{"spec.paths[1].origin"},
		},
		"H2CIsRefusedWithAnAnswer": {
			spec:     spec(func(s *v1alpha1.PublicHostnameSpec) { s.Origin = svc("web", intstr.FromInt32(80), "h2c") }),
			problems: []string{"spec.origin.service.protocol"},
		},
		"NamedPortWaitsForItsService": {
			spec:     spec(func(s *v1alpha1.PublicHostnameSpec) { s.Origin = svc("missing", intstr.FromString("http"), "") }),
			problems: []string{"spec.origin.service.port"},
			waiting:  true,
		},
		"CAPoolAndNoTLSVerify": {
			spec: spec(func(s *v1alpha1.PublicHostnameSpec) {
				s.OriginRequest = &v1alpha1.OriginOptions{NoTLSVerify: ptr.To(true), CAPoolSecretRef: &v1alpha1.LocalSecretKeySelector{Name: "ca", Key: "ca.crt"}}
			}),
			problems: []string{"spec.originRequest.caPoolSecretRef"},
		},
		"URLOrigins": {
			spec: spec(func(s *v1alpha1.PublicHostnameSpec) {
				s.Origin = nil
				s.Paths = []v1alpha1.PathOrigin{
					{Path: "/a", Origin: v1alpha1.Origin{URL: ptr.To("https://backend.example.net")}},
					{Path: "/b", Origin: v1alpha1.Origin{URL: ptr.To("tcp://10.0.0.5:5432")}},
					{Path: "/c", Origin: v1alpha1.Origin{URL: ptr.To("unix:/run/app.sock")}},
					{Path: "/d", Origin: v1alpha1.Origin{URL: ptr.To("hello_world")}},
				}
			}),
			want: []ztv1alpha1.IngressRule{
				rule("app.example.com", "^/a(/|$)", "https://backend.example.net", nil),
				rule("app.example.com", "^/b(/|$)", "tcp://10.0.0.5:5432", nil),
				rule("app.example.com", "^/c(/|$)", "unix:/run/app.sock", nil),
				rule("app.example.com", "^/d(/|$)", "hello_world", nil),
			},
		},
		"BadURLOrigins": {
			spec: spec(func(s *v1alpha1.PublicHostnameSpec) {
				s.Origin = nil
				s.Paths = []v1alpha1.PathOrigin{
					{Path: "/a", Origin: v1alpha1.Origin{URL: ptr.To("ftp://files")}},
					{Path: "/b", Origin: v1alpha1.Origin{URL: ptr.To("tcp://db")}},
					{Path: "/c", Origin: v1alpha1.Origin{URL: ptr.To("http_status:99")}},
					{Path: "/d", Origin: v1alpha1.Origin{URL: ptr.To("http://web/app")}},
				}
			}),
			problems: []string{"spec.paths[0].origin.url", "spec.paths[1].origin.url", "spec.paths[2].origin.url", "spec.paths[3].origin.url"},
		},
		"WildcardUpperCaseHostname": {
			spec: spec(func(s *v1alpha1.PublicHostnameSpec) { s.Hostname = "*.Example.COM." }),
			want: []ztv1alpha1.IngressRule{rule("*.example.com", "", "http://web.team-a.svc.cluster.local:80", nil)},
		},
		"NoOrigin": {
			spec:     spec(func(s *v1alpha1.PublicHostnameSpec) { s.Origin = nil }),
			problems: []string{"spec"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e := env
			if tc.env != nil {
				e = *tc.env
			}
			got := Rules(tc.spec, e)
			var fields []string
			waiting := len(got.Problems) > 0
			for _, p := range got.Problems {
				fields = append(fields, p.Field)
				waiting = waiting && p.Waiting
			}
			if diff := cmp.Diff(tc.problems, fields); diff != "" {
				t.Fatalf("problems (-want +got):\n%s\n%v", diff, got.Problems)
			}
			if waiting != tc.waiting {
				t.Errorf("waiting = %v, want %v", waiting, tc.waiting)
			}
			if diff := cmp.Diff(tc.want, got.Rules); diff != "" {
				t.Errorf("rules (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.pools, got.CAPools); diff != "" {
				t.Errorf("CA pools (-want +got):\n%s", diff)
			}
			if len(got.Problems) > 0 && len(got.Rules) > 0 {
				t.Error("rules published despite problems: a hostname is published whole or not at all")
			}
		})
	}
}

func TestDecideAndConfig(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(time.Minute))
	a := Claim{Name: "a", Hostname: "app.example.com", Created: t1, Rules: []ztv1alpha1.IngressRule{rule("app.example.com", "", "http://a:80", nil)}}
	b := Claim{Name: "b", Hostname: "app.example.com", Created: t0, Rules: []ztv1alpha1.IngressRule{rule("app.example.com", "", "http://b:80", nil)}}
	c := Claim{Name: "c", Hostname: "app.example.com", Created: t0}
	w := Claim{Name: "w", Hostname: "*.example.com", Created: t1, Rules: []ztv1alpha1.IngressRule{rule("*.example.com", "", "http://w:80", nil)}}

	cases := map[string]struct {
		claims []Claim
		holder map[string]string
		lost   map[string]string
		config []string
	}{
		"OldestWins": {
			claims: []Claim{a, b, w},
			holder: map[string]string{"app.example.com": "b", "*.example.com": "w"},
			lost:   map[string]string{"a": "b"},
			config: []string{"app.example.com http://b:80", "*.example.com http://w:80", " " + CatchAllService},
		},
		"SameTimeByName": {
			claims: []Claim{c, b},
			holder: map[string]string{"app.example.com": "b"},
			lost:   map[string]string{"c": "b"},
			config: []string{"app.example.com http://b:80", " " + CatchAllService},
		},
		"AClaimWithoutRulesStillHoldsItsHostname": {
			claims: []Claim{a, Claim{Name: "0", Hostname: "app.example.com", Created: t0}},
			holder: map[string]string{"app.example.com": "0"},
			lost:   map[string]string{"a": "0"},
			config: []string{" " + CatchAllService},
		},
		"Nothing": {
			holder: map[string]string{},
			lost:   map[string]string{},
			config: []string{" " + CatchAllService},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			d := Decide(tc.claims)
			if diff := cmp.Diff(tc.holder, d.Holder); diff != "" {
				t.Errorf("holders (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.lost, d.Lost); diff != "" {
				t.Errorf("lost (-want +got):\n%s", diff)
			}
			var got []string
			for _, r := range Config(tc.claims).Ingress {
				got = append(got, ptr.Deref(r.Hostname, "")+" "+r.Service)
			}
			if diff := cmp.Diff(tc.config, got); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
			// The answer does not depend on the order of the claims.
			rev := append([]Claim(nil), tc.claims...)
			for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
				rev[i], rev[j] = rev[j], rev[i]
			}
			if diff := cmp.Diff(Config(tc.claims), Config(rev)); diff != "" {
				t.Errorf("config depends on the order of the claims:\n%s", diff)
			}
		})
	}
}

func TestHostname(t *testing.T) {
	for raw, want := range map[string]string{
		"App.Example.com.":                       "app.example.com",
		"*.example.com":                          "*.example.com",
		"a..b":                                   "",
		"*.":                                     "",
		"-a.example.com":                         "",
		"a.*.example.com":                        "",
		strings.Repeat("a", 64) + ".example.com": "",
	} {
		got, err := Hostname(raw)
		if got != want || (want == "") != (err != "") {
			t.Errorf("Hostname(%q) = %q, %q; want %q", raw, got, err, want)
		}
	}
}

func TestRuleCount(t *testing.T) {
	for n, want := range map[int]string{0: "0 rules", 1: "1 rule", 2: "2 rules", 11: "11 rules"} {
		if got := RuleCount(n); got != want {
			t.Errorf("RuleCount(%d) = %q, want %q", n, got, want)
		}
	}
}
