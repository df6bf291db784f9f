package cloudflared

import (
	"net"
	"testing"
)

// FuzzParseAndMatch: whatever document Parse accepts ends in a catch-all,
// and Match never panics and picks the first rule that matches, or the
// last rule when none does.
func FuzzParseAndMatch(f *testing.F) {
	for _, seed := range []struct{ doc, host, path string }{
		{`{"ingress": [{"hostname": "a.example.com", "path": "^/api", "service": "http://a:80"}, {"service": "http_status:404"}]}`, "a.example.com", "/api/x"},
		{`{"ingress": [{"hostname": "*.example.com", "service": "https://w"}, {"hostname": "*", "service": "http_status:404"}]}`, "b.a.example.com:443", "/"},
		{`{"ingress": [{"hostname": "*", "path": "health", "service": "http_status:204"}, {"service": "hello_world"}]}`, "x.org", "/healthz"},
		{`{"originRequest": {"connectTimeout": 3, "bastionMode": true}, "ingress": [{"service": "ssh://db"}]}`, "", ""},
		{`{"ingress": [{"hostname": "a.example.com", "service": "unix:/s", "originRequest": {"access": {"required": true, "teamName": "t", "audTag": ["x"]}}}, {"service": "http_status:503"}]}`, "[::1]:80", "/%2F"},
		{`{"ingress": []}`, "a", "/"},
	} {
		f.Add(seed.doc, seed.host, seed.path)
	}
	f.Fuzz(func(t *testing.T, doc, host, path string) {
		ing, err := Parse([]byte(doc))
		if err != nil {
			return
		}
		last := ing.Rules[len(ing.Rules)-1]
		if (last.Hostname != "" && last.Hostname != "*") || last.Path != nil {
			t.Fatalf("accepted a document whose last rule is not a catch-all: %q", doc)
		}
		r, i := ing.Match(host, path)
		bare := host
		if h, _, err := net.SplitHostPort(host); err == nil {
			bare = h
		}
		for j := 0; j < i; j++ {
			if ing.Rules[j].Matches(bare, path) {
				t.Fatalf("Match chose rule %d but rule %d matches %q %q first", i, j, host, path)
			}
		}
		if i != len(ing.Rules)-1 && !r.Matches(bare, path) {
			t.Fatalf("Match chose rule %d, which does not match %q %q", i, host, path)
		}
	})
}
