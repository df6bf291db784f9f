package expose

// Fuzz targets for the core's own parsers: hostnames and the vpc-port. The
// sources' fuzz targets (ingress/translate, service/translate) fuzz whole
// translations. Each checks the parser against an independent oracle.

import (
	"strings"
	"testing"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/validation"

	tv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/expose/oracle"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/hostname"
)

// FuzzParseHost: parseHost accepts exactly what the hostname oracle
// accepts; what it accepts is canonical (re-parsing the public form, in any
// case, with a trailing dot, gives the same host) and its route form is what
// Cloudflare stores (cloudflare.NormalizeHostname of it is itself), a valid
// DNS subdomain without wildcard, so a route made from it settles.
func FuzzParseHost(f *testing.F) {
	for _, s := range []string{
		"redis.team-a.svc.cluster.local", "*.example.com", "APP.Example.COM.", " a.example.com ", "a..example.com",
		"*.*.example.com", "*", "*.", ".example.com", "-a.example.com", "a-.example.com", "bücher.example.com",
		"xn--bcher-kva.example.com", strings.Repeat("a", 63) + ".com", strings.Repeat("a", 64) + ".com",
		strings.Repeat("a.", 126) + "a", strings.Repeat("a.", 127) + "a", "a_b.example.com", "1.2.3.4", "a.example.com\n",
		"\u212a.example.com", "a.example.com..", "\u00a0a.example.com",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		h, msg := parseHost(raw)
		want, ok := oracle.Host(raw)
		if (msg == "") != ok {
			t.Fatalf("parseHost(%q) = %+v, %q; the oracle says valid=%t", raw, h, msg, ok)
		}
		if !ok {
			if msg == "" || len(msg) > 200 {
				t.Fatalf("parseHost(%q): message %q", raw, msg)
			}
			return
		}
		if h.public != want {
			t.Fatalf("parseHost(%q).public = %q, want %q", raw, h.public, want)
		}
		if h.route != strings.TrimPrefix(want, "*.") || h.route != hostname.Normalize(h.public) || hostname.Normalize(h.route) != h.route {
			t.Fatalf("parseHost(%q).route = %q: not the normalised, settled form of %q", raw, h.route, h.public)
		}
		if errs := validation.IsDNS1123Subdomain(h.route); len(errs) > 0 {
			t.Fatalf("route hostname %q: %v", h.route, errs)
		}
		for _, again := range []string{h.public, strings.ToUpper(h.public), h.public + ".", " " + h.public + "\t"} {
			if h2, msg := parseHost(again); msg != "" || h2 != h {
				t.Fatalf("parseHost(%q) = %+v %q, want %+v like parseHost(%q)", again, h2, msg, h, raw)
			}
		}
	})
}

// FuzzVPCPort: the vpc-port annotation is a decimal port 1-65535 or a
// Problem; a valid one is exactly the number written.
func FuzzVPCPort(f *testing.F) {
	for _, s := range []string{"6379", "1", "65535", "0", "65536", "0080", "00000000000000001", "+80", "-1", " 80", "80 ", "http", "1e3", "0x50", "٣", "", "99999999999999999999", "6379\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		tr := &translator{ann: map[string]string{tv1alpha1.AnnotationVPCPort: v}}
		n, set, ok := tr.vpcPort()
		want, wantOK := oracle.Port(v)
		if !set || ok != wantOK || (ok && n != want) {
			t.Fatalf("vpcPort(%q) = %d, %t, %t; want %d, valid=%t", v, n, set, ok, want, wantOK)
		}
		if ok != (len(tr.problems) == 0) {
			t.Fatalf("vpcPort(%q): valid=%t with problems %v", v, ok, tr.problems)
		}
		for _, p := range tr.problems {
			if len(p.String()) > 600 || strings.ContainsAny(p.String(), "\n\r") || !utf8.ValidString(p.String()) {
				t.Fatalf("problem %q: too long, raw control characters or invalid UTF-8", p.String())
			}
		}
	})
}
