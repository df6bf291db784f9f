package cloudflared

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// mustParse parses a document the test expects cloudflared to accept.
func mustParse(t *testing.T, doc string) Ingress {
	t.Helper()
	ing, err := Parse([]byte(doc))
	if err != nil {
		t.Fatalf("Parse(%s): %v", doc, err)
	}
	return ing
}

// TestMatch is cloudflared's rule choice: each case a document, a request
// and the index of the rule cloudflared picks.
func TestMatch(t *testing.T) {
	const doc = `{"ingress": [
		{"hostname": "app.example.com", "path": "^/api", "service": "http://api:8080"},
		{"hostname": "app.example.com", "path": "static", "service": "http://static:80"},
		{"hostname": "app.example.com", "service": "http://web:80"},
		{"hostname": "*.example.com", "service": "http://wild:80"},
		{"hostname": "*", "path": "^/health$", "service": "http_status:204"},
		{"hostname": "exact.example.com", "service": "http://shadowed:80"},
		{"service": "http_status:404"}
	]}`
	ing := mustParse(t, doc)
	for _, tc := range []struct {
		name, host, path string
		want             int
	}{
		{"first match wins over a later broader rule", "app.example.com", "/api/users", 0},
		{"path regex is unanchored: matches in the middle", "app.example.com", "/assets/static/x.css", 1},
		{"anchored regex does not match elsewhere", "app.example.com", "/v1/api", 2},
		{"host without path rule", "app.example.com", "/", 2},
		{"port is dropped from the Host", "app.example.com:8443", "/api", 0},
		{"wildcard covers one level", "x.example.com", "/", 3},
		{"wildcard covers any depth", "a.b.example.com", "/", 3},
		{"wildcard does not cover the apex", "example.com", "/", 6},
		{"wildcard does not cover a look-alike suffix", "xexample.com", "/", 6},
		{"an earlier wildcard shadows a later exact host", "exact.example.com", "/", 3},
		{"star hostname with a path is not a catch-all", "other.org", "/health", 4},
		{"star hostname path is anchored by its own regex", "other.org", "/healthz", 6},
		{"hostnames compare case-sensitively, as cloudflared does", "APP.EXAMPLE.COM", "/", 6},
		{"case-sensitive exact host falls to a wildcard", "App.example.com", "/", 3},
		{"catch-all for an unknown host", "other.org", "/", 6},
		{"empty host goes to the catch-all", "", "/", 6},
		{"IPv6 literal with port", "[::1]:80", "/", 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, got := ing.Match(tc.host, tc.path)
			if got != tc.want {
				t.Errorf("Match(%q, %q) = rule %d, want rule %d", tc.host, tc.path, got, tc.want)
			}
		})
	}
}

// TestParseServices is how cloudflared reads each kind of service.
func TestParseServices(t *testing.T) {
	for _, tc := range []struct {
		service string
		want    Service
	}{
		{"http://web.ns.svc.cluster.local", Service{Kind: ServiceHTTP, Scheme: "http", Host: "web.ns.svc.cluster.local:80"}},
		{"http://web:8080", Service{Kind: ServiceHTTP, Scheme: "http", Host: "web:8080"}},
		{"https://web", Service{Kind: ServiceHTTP, Scheme: "https", Host: "web:443"}},
		{"ws://web", Service{Kind: ServiceHTTP, Scheme: "http", Host: "web:80"}},
		{"wss://web:9443", Service{Kind: ServiceHTTP, Scheme: "https", Host: "web:9443"}},
		{"http://[::1]:80", Service{Kind: ServiceHTTP, Scheme: "http", Host: "[::1]:80"}},
		{"http_status:404", Service{Kind: ServiceStatus, Status: 404}},
		{"http_status:999", Service{Kind: ServiceStatus, Status: 999}},
		{"hello_world", Service{Kind: ServiceHelloWorld}},
		{"hello-world", Service{Kind: ServiceHelloWorld}},
		{"ssh://db", Service{Kind: ServiceStream, Scheme: "ssh", Host: "db:22"}},
		{"rdp://pc", Service{Kind: ServiceStream, Scheme: "rdp", Host: "pc:3389"}},
		{"smb://fs", Service{Kind: ServiceStream, Scheme: "smb", Host: "fs:445"}},
		{"tcp://db:5432", Service{Kind: ServiceStream, Scheme: "tcp", Host: "db:5432"}},
		{"tcp://db", Service{Kind: ServiceStream, Scheme: "tcp", Host: "db:7864"}},
		{"unix:/run/app.sock", Service{Kind: ServiceUnix}},
		{"unix+tls:/run/app.sock", Service{Kind: ServiceUnix}},
		{"bastion", Service{Kind: ServiceBastion}},
		{"socks-proxy", Service{Kind: ServiceSocksProxy}},
	} {
		t.Run(tc.service, func(t *testing.T) {
			ing := mustParse(t, `{"ingress": [{"service": "`+tc.service+`"}]}`)
			got := ing.Rules[0].Service
			tc.want.Raw = tc.service
			if got != tc.want {
				t.Errorf("service %q = %+v, want %+v", tc.service, got, tc.want)
			}
		})
	}
}

// TestParseRefuses lists documents cloudflared refuses (and so keeps its
// previous configuration).
func TestParseRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		is        error
	}{
		{"not JSON", `{`, nil},
		{"no rules", `{"ingress": []}`, ErrNoRules},
		{"last rule has a hostname", `{"ingress": [{"hostname": "a.example.com", "service": "http://a"}]}`, ErrLastRuleNotCatchAll},
		{"last rule has a path", `{"ingress": [{"path": "/x", "service": "http://a"}]}`, ErrLastRuleNotCatchAll},
		{"catch-all before the end", `{"ingress": [{"service": "http://a"}, {"service": "http_status:404"}]}`, nil},
		{"star catch-all before the end", `{"ingress": [{"hostname": "*", "service": "http://a"}, {"service": "http_status:404"}]}`, nil},
		{"hostname with a port", `{"ingress": [{"hostname": "a.example.com:443", "service": "http://a"}, {"service": "http_status:404"}]}`, ErrHostnameHasPort},
		{"wildcard in the middle", `{"ingress": [{"hostname": "a.*.example.com", "service": "http://a"}, {"service": "http_status:404"}]}`, ErrBadWildcard},
		{"two wildcards", `{"ingress": [{"hostname": "*.*.example.com", "service": "http://a"}, {"service": "http_status:404"}]}`, ErrBadWildcard},
		{"bad regex", `{"ingress": [{"hostname": "a.example.com", "path": "(", "service": "http://a"}, {"service": "http_status:404"}]}`, nil},
		{"service without scheme", `{"ingress": [{"service": "localhost:8080"}]}`, nil},
		{"service with a path", `{"ingress": [{"service": "http://a/base"}]}`, nil},
		{"status not a number", `{"ingress": [{"service": "http_status:abc"}]}`, nil},
		{"status out of range", `{"ingress": [{"service": "http_status:1000"}]}`, nil},
		{"status too low", `{"ingress": [{"service": "http_status:99"}]}`, nil},
		{"connectTimeout as a string", `{"ingress": [{"service": "http://a", "originRequest": {"connectTimeout": "30s"}}]}`, nil},
		{"connectTimeout fractional", `{"originRequest": {"connectTimeout": 1.5}, "ingress": [{"service": "http://a"}]}`, nil},
		{"noTLSVerify mistyped", `{"ingress": [{"service": "http://a", "originRequest": {"noTLSVerify": "yes"}}]}`, nil},
		{"access audTag without teamName", `{"ingress": [{"service": "http://a", "originRequest": {"access": {"required": true, "audTag": ["x"]}}}]}`, nil},
		{"warp-routing mistyped", `{"ingress": [{"service": "http://a"}], "warp-routing": {"connectTimeout": "5s"}}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.doc))
			if err == nil {
				t.Fatalf("Parse accepted %s; cloudflared refuses it", tc.doc)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("Parse error %v, want %v", err, tc.is)
			}
		})
	}
}

// TestOriginOptions: the rule's originRequest over the document's over
// cloudflared's defaults, field by field; access only from the rule itself.
func TestOriginOptions(t *testing.T) {
	ing := mustParse(t, `{
		"originRequest": {"connectTimeout": 5, "httpHostHeader": "global.internal", "noTLSVerify": true,
			"access": {"required": true, "teamName": "t", "audTag": ["g"]}},
		"ingress": [
			{"hostname": "a.example.com", "service": "https://a",
			 "originRequest": {"httpHostHeader": "a.internal", "originServerName": "a.cert", "tlsTimeout": 3,
			 	"access": {"required": true, "teamName": "team", "audTag": ["aud1", "aud2"]}}},
			{"hostname": "b.example.com", "service": "https://b", "originRequest": {"noTLSVerify": false, "matchSNItoHost": true, "http2Origin": true}},
			{"service": "http_status:404"}
		]}`)
	a, b, last := ing.Rules[0], ing.Rules[1], ing.Rules[2]
	if want := (Origin{ConnectTimeout: 5 * time.Second, TLSTimeout: 3 * time.Second, HTTPHostHeader: "a.internal", OriginServerName: "a.cert", NoTLSVerify: true}); a.Origin != want {
		t.Errorf("rule a origin = %+v, want %+v", a.Origin, want)
	}
	if want := (Origin{ConnectTimeout: 5 * time.Second, TLSTimeout: DefaultTLSTimeout, HTTPHostHeader: "global.internal", MatchSNIToHost: true, HTTP2Origin: true}); b.Origin != want {
		t.Errorf("rule b origin = %+v, want %+v", b.Origin, want)
	}
	if !a.Access.Required || a.Access.TeamName != "team" || strings.Join(a.Access.AudTags, ",") != "aud1,aud2" {
		t.Errorf("rule a access = %+v", a.Access)
	}
	if b.Access.Required || last.Access.Required {
		t.Errorf("a document-wide access block must not make rules require Access (cloudflared reads the rule's own): b %+v, last %+v", b.Access, last.Access)
	}
	if d := mustParse(t, `{"ingress": [{"service": "http://a"}]}`).Rules[0].Origin; d != defaultOrigin() {
		t.Errorf("defaults = %+v, want %+v", d, defaultOrigin())
	}
}

// TestBastionMode: a document-wide bastionMode turns URL services into the
// bastion, but not the services cloudflared checks before it.
func TestBastionMode(t *testing.T) {
	ing := mustParse(t, `{"originRequest": {"bastionMode": true}, "ingress": [
		{"hostname": "a.example.com", "service": "http://a"},
		{"hostname": "b.example.com", "service": "hello_world"},
		{"service": "http_status:404"}]}`)
	if k := ing.Rules[0].Service.Kind; k != ServiceBastion {
		t.Errorf("http service under bastionMode is kind %d, want bastion", k)
	}
	if k := ing.Rules[1].Service.Kind; k != ServiceHelloWorld {
		t.Errorf("hello_world under bastionMode is kind %d, want hello world", k)
	}
	if k := ing.Rules[2].Service.Kind; k != ServiceStatus {
		t.Errorf("http_status under bastionMode is kind %d, want status", k)
	}
}

func TestDefaultAnswers503(t *testing.T) {
	r, i := Default().Match("anything.example.com", "/")
	if i != 0 || r.Service.Kind != ServiceStatus || r.Service.Status != 503 {
		t.Errorf("Default() serves %+v (rule %d), want http_status:503", r.Service, i)
	}
}
