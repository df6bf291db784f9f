package publish

import (
	"regexp"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	v1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
)

// FuzzRules feeds arbitrary hostnames, paths, origins and Access settings to
// Rules and checks what must always hold: a hostname is published whole or
// not at all; every rule is for the spec's hostname, in cloudflared's form;
// a spec asking for Access never yields a rule without the check; TLS
// verification is never turned off unless asked; the rules are in the order
// Config would put them.
func FuzzRules(f *testing.F) {
	f.Add("app.example.com", "/api", "Prefix", "web", int32(80), "http", "", "acme", aud, false)
	f.Add("*.Example.com", "^/x.*", "RegularExpression", "grpc", int32(8443), "http2", "", "", "", true)
	f.Add("a", "/", "Exact", "db", int32(5432), "tcp", "tcp://db:5432", "Bad Team", "nothex", false)
	f.Add("x.example.com", "api", "Prefix", "", int32(0), "h2c", "http_status:404", "t", aud+","+aud, false)
	f.Add("x.example.com", "/\xff", "Prefix", "web", int32(80), "http", "", "", "", false)
	f.Fuzz(func(t *testing.T, host, path, pathType, svcName string, port int32, proto, url, team, auds string, noVerify bool) {
		s := v1alpha1.PublicHostnameSpec{TunnelRef: v1alpha1.TunnelReference{Name: "edge"}, Hostname: host}
		origin := v1alpha1.Origin{Service: &v1alpha1.ServiceOrigin{Name: svcName, Port: intstr.FromInt32(port), Protocol: proto}}
		if url != "" {
			s.Origin = &v1alpha1.Origin{URL: ptr.To(url)}
		}
		s.Paths = []v1alpha1.PathOrigin{{Path: path, PathType: pathType, Origin: origin}}
		if noVerify {
			s.OriginRequest = &v1alpha1.OriginOptions{NoTLSVerify: ptr.To(true)}
		}
		if team != "" || auds != "" {
			s.Access = &v1alpha1.Access{TeamName: team}
			if auds != "" {
				s.Access.AudTags = strings.Split(auds, ",")
			}
		}
		got := Rules(s, Env{Namespace: "ns"})
		if len(got.Problems) > 0 {
			if len(got.Rules) > 0 {
				t.Fatalf("rules despite problems %v", got.Problems)
			}
			return
		}
		want, _ := Hostname(host)
		if len(got.Rules) == 0 {
			t.Fatal("no rules and no problems")
		}
		for _, r := range got.Rules {
			if ptr.Deref(r.Hostname, "") != want || want == "" {
				t.Fatalf("rule for %q, want %q", ptr.Deref(r.Hostname, ""), want)
			}
			if r.Path != nil {
				if _, err := regexp.Compile(*r.Path); err != nil {
					t.Fatalf("path %q is not a regular expression: %v", *r.Path, err)
				}
			}
			o := r.OriginRequest
			if s.Access != nil && (o == nil || o.Access == nil || !ptr.Deref(o.Access.Required, false) || len(o.Access.AudTag) == 0) {
				t.Fatalf("spec asks for Access, rule %+v has no enforcing check", r)
			}
			if o != nil && ptr.Deref(o.NoTLSVerify, false) && !noVerify {
				t.Fatal("TLS verification turned off without being asked")
			}
			if !regexp.MustCompile(`^(https?|tcp|ssh|rdp|smb)://|^unix(\+tls)?:/|^http_status:\d{3}$|^hello_world$`).MatchString(r.Service) {
				t.Fatalf("service %q is not one cloudflared takes", r.Service)
			}
		}
		cfg := TunnelConfig(got.Rules)
		if len(cfg.Ingress) != len(got.Rules)+1 {
			t.Fatalf("config has %d rules, want the %d distinct ones and the catch-all", len(cfg.Ingress), len(got.Rules))
		}
		for i := range got.Rules {
			if ptr.Deref(cfg.Ingress[i].Path, "") != ptr.Deref(got.Rules[i].Path, "") || cfg.Ingress[i].Service != got.Rules[i].Service {
				t.Fatalf("rules not in the configuration's order: %v vs %v", got.Rules, cfg.Ingress)
			}
		}
	})
}

// FuzzPathPrecedence feeds three paths of any kinds, in the order their
// claims were made (oldest first), and checks that a literal is never
// shadowed: the first rule cloudflared would try that matches an Exact
// path's literal is that Exact rule, and the first that matches a Prefix's
// literal is that Prefix or an Exact of the same literal, whatever newer
// expression or prefix asks for the hostname too.
func FuzzPathPrecedence(f *testing.F) {
	f.Add("/(login|zzzzzzzzzzzzzzzzzzzzzzzz)", "RegularExpression", "/login", "Exact", "/", "Prefix")
	f.Add("/login", "Prefix", "^/log.*", "RegularExpression", "/login", "Exact")
	f.Add("/a", "Exact", "/a/b", "Prefix", "/a", "Prefix")
	f.Add("^/a\\$$", "RegularExpression", "/a$", "Exact", ".*", "RegularExpression")
	f.Fuzz(func(t *testing.T, p1, t1, p2, t2, p3, t3 string) {
		s := v1alpha1.PublicHostnameSpec{TunnelRef: v1alpha1.TunnelReference{Name: "edge"}, Hostname: "app.example.com"}
		for i, p := range [][2]string{{p1, t1}, {p2, t2}, {p3, t3}} {
			s.Paths = append(s.Paths, v1alpha1.PathOrigin{Path: p[0], PathType: p[1], Origin: v1alpha1.Origin{URL: ptr.To("http_status:" + string(rune('1'+i)) + "00")}})
		}
		got := Rules(s, Env{Namespace: "ns"})
		if len(got.Problems) > 0 {
			return
		}
		cfg := TunnelConfig(got.Rules).Ingress
		first := func(path string) int {
			for i, r := range cfg {
				if r.Path == nil || regexp.MustCompile(*r.Path).MatchString(path) {
					return i
				}
			}
			return -1
		}
		sawExpression := false
		for i, r := range cfg[:len(cfg)-1] {
			kind, lit := ClassifyPath(ptr.Deref(r.Path, ""))
			switch kind {
			case PathRegex:
				sawExpression = true
				continue
			case PathAny:
				continue
			}
			if sawExpression {
				t.Fatalf("literal %q after an expression: %v", lit, cfg)
			}
			j := first(lit)
			if fk, fl := ClassifyPath(ptr.Deref(cfg[j].Path, "")); j != i && (kind == PathExact || fk != PathExact || fl != lit) {
				t.Fatalf("%q (rule %d) is shadowed by rule %d %q: %v", lit, i, j, ptr.Deref(cfg[j].Path, ""), cfg)
			}
		}
	})
}
