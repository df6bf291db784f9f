package translate

// Fuzz targets for every piece of user input the translator parses: the
// annotations, hostnames, the vpc-port, Ingress paths and the rule order of
// the tunnel's remote configuration. Each one checks the parser against an
// independent oracle (regular expressions, Kubernetes' Ingress matching
// rules), not just that it does not panic. hack/fuzz.sh runs them bounded;
// `go test` runs their seeds.

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	tv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/expose"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/expose/oracle"
)

const fzTunnelID = "de5136fc-0000-4000-8000-0000000000ff"

// Oracles, written from the rules the translator documents, independently
// of its code.
var (
	fzLabelRe     = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)
	fzSubdomainRe = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
)

func fzProblemFields(r expose.Result) []string {
	var fs []string
	for _, p := range r.Problems {
		if !slices.Contains(fs, p.Field) {
			fs = append(fs, p.Field)
		}
	}
	slices.Sort(fs)
	return fs
}

// checkProblemMessages: user input in a message is quoted and clipped, so
// a huge or multi-line annotation can neither blow up events nor forge
// lines in them.
func checkProblemMessages(t *testing.T, r expose.Result) {
	t.Helper()
	for _, p := range r.Problems {
		if len(p.String()) > 600 {
			t.Errorf("problem of %d bytes: %.100s...", len(p.String()), p.String())
		}
		if strings.ContainsAny(p.String(), "\n\r") || !utf8.ValidString(p.String()) {
			t.Errorf("problem %q carries raw control characters or invalid UTF-8", p.String())
		}
	}
	for _, n := range r.Notes {
		if len(n.String()) > 600 || strings.ContainsAny(n.String(), "\n\r") || !utf8.ValidString(n.String()) || n.Reason == "" {
			t.Errorf("note %q (reason %q): too long, raw control characters, invalid UTF-8 or no reason", n.String(), n.Reason)
		}
	}
}

// FuzzAnnotations: the five annotations, each present or absent (bit i of
// present), on an otherwise valid Ingress. Every annotation is either
// accepted with exactly the meaning its oracle gives, or reported as a
// Problem naming it; nothing else is reported, and a bad annotation takes
// away only what depends on it.
func FuzzAnnotations(f *testing.F) {
	f.Add("edge", "true", "redis-cache", "6379", "redis.team-a.svc.cluster.local", uint8(0b11111))
	f.Add("edge", "false", "true", "http", "*.example.com", uint8(0b11111))
	f.Add(" edge ", "TRUE", "Redis_Cache", "0", "not a host!", uint8(0b11111))
	f.Add("", "maybe", "", "70000", "a.example.com,b.example.com", uint8(0b11111))
	f.Add("team-a/edge", "yes", "x", "0080", "APP.Example.COM.", uint8(0b11111))
	f.Add("edge", "true\n", "svc\"; drop", "6379\npublic: true", "ok.example.com\nevil.example.com", uint8(0b11110))
	f.Add("edge", "", "", "", "", uint8(0b00001))
	f.Add("EDGE", "False", strings.Repeat("a", 64), "+80", strings.Repeat("a", 64)+".example.com", uint8(0b11111))
	f.Add("edge", "true", "v", "65535", "bücher.example.com", uint8(0b11111))
	f.Add("edge", "true", "v", "1", "*", uint8(0b11011))
	f.Fuzz(func(t *testing.T, tunnel, public, vpc, port, hostname string, present uint8) {
		keys := []string{tv1alpha1.AnnotationTunnel, tv1alpha1.AnnotationPublic, tv1alpha1.AnnotationVPCService, tv1alpha1.AnnotationVPCPort, tv1alpha1.AnnotationHostname}
		vals := []string{tunnel, public, vpc, port, hostname}
		ann := map[string]string{}
		for i, k := range keys {
			if present&(1<<i) != 0 {
				ann[k] = vals[i]
			}
		}
		ing := &networkingv1.Ingress{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team-a", UID: "uid-1", Annotations: ann},
			Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{
				Host: "www.example.com",
				IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
					Path: "/", PathType: ptr.To(networkingv1.PathTypePrefix),
					Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}},
				}}}},
			}}},
		}
		in := Input{Ingress: ing, Tunnel: expose.Tunnel{TunnelID: fzTunnelID}}
		got := Translate(in)
		if diff := cmp.Diff(got, Translate(in)); diff != "" {
			t.Fatalf("Translate() not deterministic:\n%s", diff)
		}
		checkProblemMessages(t, got)

		// The tunnel annotation gates everything.
		// "<name>", or "<namespace>/<name>" for a tunnel shared with it.
		tun := strings.TrimSpace(ann[tv1alpha1.AnnotationTunnel])
		tunNS, crossNS := "", false
		if i := strings.Index(tun, "/"); i >= 0 {
			tunNS, tun, crossNS = tun[:i], tun[i+1:], true
		}
		wantNS := tunNS
		if tunNS == ing.Namespace {
			wantNS = ""
		}
		if tun == "" || len(tun) > 253 || !fzSubdomainRe.MatchString(tun) || crossNS && (len(tunNS) > 63 || !fzLabelRe.MatchString(tunNS)) {
			if fs := fzProblemFields(got); !slices.Equal(fs, []string{tv1alpha1.AnnotationTunnel}) || len(got.Routes)+len(got.Services)+len(got.Published)+len(got.Rules) > 0 {
				t.Fatalf("tunnel %q: problems %v and %d objects, want only a tunnel problem and nothing", tun, fs, len(got.Routes)+len(got.Services)+len(got.Published)+len(got.Rules))
			}
			return
		}
		for _, r := range got.Routes {
			if r.Labels[LabelTunnel] != LabelValue(tun) || r.Spec.ForProvider.TunnelIDRef.Name != tun || r.Spec.ForProvider.TunnelIDRef.Namespace != wantNS || r.Labels["tunnels.cloudflare.com/tunnel-namespace"] != wantNS {
				t.Errorf("route %s is not on tunnel %q: %v %+v", r.Name, tun, r.Labels, r.Spec.ForProvider.TunnelIDRef)
			}
		}

		var wantFields []string
		bad := func(key string) { wantFields = append(wantFields, key) }

		wantPublic := false
		if v, ok := ann[tv1alpha1.AnnotationPublic]; ok {
			switch {
			case strings.EqualFold(v, "true"):
				wantPublic = true
			case strings.EqualFold(v, "false"):
			default:
				bad(tv1alpha1.AnnotationPublic)
			}
		}
		v, wantVPC := ann[tv1alpha1.AnnotationVPCService]
		if wantVPC && (v == "true" || v == "false" || !fzLabelRe.MatchString(v)) {
			bad(tv1alpha1.AnnotationVPCService)
			wantVPC = false
		}
		wantPort := int32(80) // the backend's
		if v, ok := ann[tv1alpha1.AnnotationVPCPort]; ok {
			n, ok := oracle.Port(v)
			if !ok {
				bad(tv1alpha1.AnnotationVPCPort)
				wantVPC = false
			}
			wantPort = n
		}
		wantPublicName, hostOK := "www.example.com", true
		if v, ok := ann[tv1alpha1.AnnotationHostname]; ok {
			if wantPublicName, hostOK = oracle.Host(v); strings.Contains(v, ",") || !hostOK {
				bad(tv1alpha1.AnnotationHostname)
				hostOK = false
			}
		}
		slices.Sort(wantFields)
		if fs := fzProblemFields(got); !slices.Equal(fs, wantFields) {
			t.Fatalf("problems on %v, want on %v: %v", fs, wantFields, got.Problems)
		}

		if !hostOK {
			if len(got.Hostnames)+len(got.Routes)+len(got.Services)+len(got.Published)+len(got.Rules) > 0 {
				t.Fatalf("a bad hostname annotation still produced %v", summarizeFz(got))
			}
			return
		}
		wantRoute := strings.TrimPrefix(wantPublicName, "*.")
		if !slices.Equal(got.Hostnames, []string{wantRoute}) || len(got.Routes) != 1 || got.Routes[0].Spec.ForProvider.Hostname != wantRoute {
			t.Fatalf("hostnames %v, want [%s]", summarizeFz(got), wantRoute)
		}
		if wantVPC {
			if len(got.Services) != 1 {
				t.Fatalf("%d VPC services, want 1", len(got.Services))
			}
			// The host cloudflared resolves to the backend: the hostname
			// annotation of a private Ingress, else the backend Service's
			// cluster name (never a public rule host, nor the host of an
			// Ingress whose public annotation is not "false": what it
			// published stays).
			wantHost := "web.team-a.svc.cluster.local"
			pub, asked := ann[tv1alpha1.AnnotationPublic]
			if _, ok := ann[tv1alpha1.AnnotationHostname]; ok && (!asked || strings.EqualFold(strings.TrimSpace(pub), "false")) {
				wantHost = wantRoute
			}
			p := got.Services[0].Spec.ForProvider
			if p.Name != ann[tv1alpha1.AnnotationVPCService] || p.Type != "tcp" || *p.TCPPort != int64(wantPort) || *p.Host.Hostname != wantHost {
				t.Fatalf("VPC service %s %s:%d %s, want %s tcp:%d %s", p.Name, p.Type, *p.TCPPort, *p.Host.Hostname, ann[tv1alpha1.AnnotationVPCService], wantPort, wantHost)
			}
		} else if len(got.Services) != 0 {
			t.Fatalf("a VPC service %s that is not wanted", got.Services[0].Spec.ForProvider.Name)
		}
		if got.Public != wantPublic {
			t.Fatalf("public = %t, want %t", got.Public, wantPublic)
		}
		if !wantPublic {
			if len(got.Published)+len(got.Rules) > 0 {
				t.Fatalf("a private Ingress has public hostnames or rules: %v", summarizeFz(got))
			}
			return
		}
		if len(got.Published) != 1 || got.Published[0].Spec.Hostname != wantPublicName || got.Published[0].Spec.TunnelRef.Name != tun || got.Published[0].Spec.TunnelRef.Namespace != wantNS || got.Published[0].Spec.DNS != tv1alpha1.DNSManaged {
			t.Fatalf("public hostnames %v, want %s on tunnel %s with its DNS record", summarizeFz(got), wantPublicName, tun)
		}
		if len(got.Rules) == 0 {
			t.Fatal("a public Ingress without rules")
		}
		for _, r := range got.Rules {
			if ptr.Deref(r.Hostname, "") != wantPublicName {
				t.Fatalf("rule for %q, want only %q", ptr.Deref(r.Hostname, ""), wantPublicName)
			}
		}
	})
}

func summarizeFz(r expose.Result) string {
	var recs []string
	for _, x := range r.Published {
		recs = append(recs, x.Spec.Hostname)
	}
	return fmt.Sprintf("hostnames %v published %v rules %v problems %v", r.Hostnames, recs, ruleStrings(r.Rules), r.Problems)
}

// Hosts of the two Ingresses of FuzzRuleOrdering. They overlap in what they
// match (an exact host under a wildcard, a longer wildcard under a shorter
// one) but never share a host, as the Ingress controller's hostname claims
// guarantee for Ingresses on one tunnel.
var (
	fzHostsA   = []string{"a.example.com", "*.example.com", "x.a.example.com"}
	fzHostsB   = []string{"b.example.com", "*.a.example.com", "deep.x.a.example.com"}
	fzRequests = []string{
		"a.example.com", "b.example.com", "x.a.example.com", "deep.x.a.example.com", "y.example.com", "y.a.example.com", "z.y.a.example.com",
		"one.team-a.svc.cluster.local", "two.team-a.svc.cluster.local", "other.test",
	}
)

// fzRule is one rule as Kubernetes defines its path matching (hosts match
// as cloudflared matches them: "*.example.com" is any name ending in
// ".example.com"), with the service it routes to.
type fzRule struct {
	host    string
	lit     string // "" for a rule matching every path
	exact   bool
	service string
}

func (r fzRule) hostMatches(h string) bool {
	if base, ok := strings.CutPrefix(r.host, "*"); ok {
		return strings.HasSuffix(h, base)
	}
	return h == r.host
}

func (r fzRule) pathMatches(p string) bool {
	switch {
	case r.lit == "":
		return true
	case r.exact:
		return p == r.lit
	}
	return p == r.lit || strings.HasPrefix(p, r.lit+"/")
}

// moreSpecific: exact hosts before wildcards, longer wildcards first; then
// Exact paths before Prefix ones of the same literal, longer literals first,
// path-less last.
func (r fzRule) moreSpecific(o fzRule) bool {
	rw, ow := strings.HasPrefix(r.host, "*"), strings.HasPrefix(o.host, "*")
	if rw != ow {
		return !rw
	}
	if len(r.host) != len(o.host) {
		return len(r.host) > len(o.host)
	}
	rl, ol := len(r.lit), len(o.lit)
	if r.lit == "" {
		rl = -1
	}
	if o.lit == "" {
		ol = -1
	}
	if rl != ol {
		return rl > ol
	}
	return r.exact && !o.exact
}

// fzIngress builds an Ingress with one rule per path (its host chosen from
// hosts by sel), and the oracle's view of the rules it should publish.
func fzIngress(name string, hosts []string, paths []string, types, sel uint16, withDefault bool) (*networkingv1.Ingress, []fzRule) {
	ing := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team-a", Annotations: map[string]string{tv1alpha1.AnnotationTunnel: "edge", tv1alpha1.AnnotationPublic: "true"}},
	}
	svc := func(i int) (string, int32) { return fmt.Sprintf("%s-svc%d", name, i), int32(8000 + i) }
	url := func(i int) string {
		n, p := svc(i)
		return fmt.Sprintf("http://%s.team-a.svc.cluster.local:%d", n, p)
	}
	var oracle []fzRule
	seen := map[[3]string]bool{}
	var ruleHosts []string
	for i, path := range paths {
		host := hosts[int(sel>>(2*i)&3)%len(hosts)]
		pt := []networkingv1.PathType{networkingv1.PathTypeExact, networkingv1.PathTypePrefix, networkingv1.PathTypeImplementationSpecific, networkingv1.PathTypePrefix}[types>>(2*i)&3]
		n, port := svc(i)
		ing.Spec.Rules = append(ing.Spec.Rules, networkingv1.IngressRule{Host: host, IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
			Paths: []networkingv1.HTTPIngressPath{{Path: path, PathType: ptr.To(pt), Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: n, Port: networkingv1.ServiceBackendPort{Number: port}}}}},
		}}})
		if !slices.Contains(ruleHosts, host) {
			ruleHosts = append(ruleHosts, host)
		}
		if path != "" && !strings.HasPrefix(path, "/") {
			continue // a Problem; the API server refuses it anyway
		}
		r := fzRule{host: host, lit: path, exact: pt == networkingv1.PathTypeExact && path != "", service: url(i)}
		if !r.exact {
			r.lit = strings.TrimRight(path, "/")
		}
		k := [3]string{r.host, r.lit, fmt.Sprint(r.exact)}
		if !seen[k] { // the first rule for a host and path wins
			seen[k] = true
			oracle = append(oracle, r)
		}
	}
	if len(ruleHosts) == 0 {
		// The default hostname is cluster-internal: a public Ingress
		// without a hostname publishes nothing (and says so).
		return ing, nil
	}
	if withDefault {
		ing.Spec.DefaultBackend = &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: name + "-default", Port: networkingv1.ServiceBackendPort{Number: 80}}}
		for _, h := range ruleHosts {
			if k := [3]string{h, "", "false"}; !seen[k] {
				seen[k] = true
				oracle = append(oracle, fzRule{host: h, service: "http://" + name + "-default.team-a.svc.cluster.local:80"})
			}
		}
	}
	return ing, oracle
}

// FuzzRuleOrdering: for two public Ingresses on one tunnel with fuzzed
// paths and path types, TunnelConfig is deterministic and independent of
// the Ingresses' order, has exactly one rule per host and path and one
// catch-all at the end, and — what the order is for — the first rule
// cloudflared matches for any request is the one Kubernetes' Ingress rules
// pick: exact host over wildcard, longer wildcard over shorter, Exact path
// over Prefix, longest prefix, else the default backend, else 404.
func FuzzRuleOrdering(f *testing.F) {
	f.Add("/api", "/api/v1", "/", "", uint16(0b01010101), uint16(0), uint16(0b0110), true)
	f.Add("/a", "/a/", "/a.b", "/a$", uint16(0b00100100), uint16(0b11100100), uint16(0b1001), false)
	f.Add("/x(/|$)", "/[", "/\\", "/$", uint16(0b11111111), uint16(0b01010101), uint16(0b0011), true)
	f.Add("/", "/", "/a/b/c", "/a/b", uint16(0b00000001), uint16(0b10101010), uint16(0b1111), true)
	f.Add("relative", "/ü/é", "//", "/a//b", uint16(0b10011100), uint16(0b00011011), uint16(0), false)
	f.Fuzz(func(t *testing.T, p1, p2, p3, p4 string, types, sel uint16, bits uint16, withDefault bool) {
		ps := []string{p1, p2, p3, p4}
		for i := range ps {
			// The API server speaks JSON: paths are valid UTF-8.
			ps[i] = strings.ToValidUTF8(ps[i], "")
		}
		// bits splits the paths between the Ingresses.
		var pa, pb []string
		for i, p := range ps {
			if bits&(1<<i) != 0 {
				pb = append(pb, p)
			} else {
				pa = append(pa, p)
			}
		}
		ingA, oa := fzIngress("one", fzHostsA, pa, types, sel, withDefault)
		ingB, ob := fzIngress("two", fzHostsB, pb, types>>8, sel>>8, withDefault && bits&16 == 0)
		ra := Translate(Input{Ingress: ingA, Tunnel: expose.Tunnel{TunnelID: fzTunnelID}})
		rb := Translate(Input{Ingress: ingB, Tunnel: expose.Tunnel{TunnelID: fzTunnelID}})
		cfg := TunnelConfig(ra.Rules, rb.Rules)
		if diff := cmp.Diff(cfg, TunnelConfig(rb.Rules, ra.Rules)); diff != "" {
			t.Fatalf("TunnelConfig depends on the order of the Ingresses:\n%s", diff)
		}
		if diff := cmp.Diff(cfg, TunnelConfig(ra.Rules, rb.Rules, ra.Rules)); diff != "" {
			t.Fatalf("TunnelConfig with a repeated Ingress differs:\n%s", diff)
		}
		rules := cfg.Ingress
		last := rules[len(rules)-1]
		if last.Hostname != nil || last.Path != nil || last.Service != CatchAllService {
			t.Fatalf("last rule %+v is not the catch-all", last)
		}
		oracle := append(oa, ob...)
		if len(rules)-1 != len(oracle) {
			t.Fatalf("%d rules before the catch-all, want %d:\n%s\nwant %+v", len(rules)-1, len(oracle), strings.Join(ruleStrings(rules), "\n"), oracle)
		}
		compiled := make([]*regexp.Regexp, len(rules))
		for i, r := range rules[:len(rules)-1] {
			if ptr.Deref(r.Hostname, "") == "" || r.Service == CatchAllService {
				t.Fatalf("rule %d %+v: a second catch-all", i, r)
			}
			if r.Path != nil {
				re, err := regexp.Compile(*r.Path)
				if err != nil {
					t.Fatalf("rule %d path %q is not a regular expression cloudflared accepts: %v", i, *r.Path, err)
				}
				compiled[i] = re
			}
		}

		var paths []string
		for _, p := range append(ps, "/", "/zzz") {
			for _, q := range []string{p, p + "/", p + "/z", p + "z", strings.TrimRight(p, "/")} {
				if strings.HasPrefix(q, "/") && !slices.Contains(paths, q) {
					paths = append(paths, q)
				}
			}
		}
		for _, host := range fzRequests {
			for _, path := range paths {
				got := CatchAllService
				for i, r := range rules[:len(rules)-1] {
					base, wild := strings.CutPrefix(*r.Hostname, "*")
					if (wild && strings.HasSuffix(host, base) || !wild && host == *r.Hostname) && (compiled[i] == nil || compiled[i].MatchString(path)) {
						got = r.Service
						break
					}
				}
				want, best := CatchAllService, fzRule{}
				found := false
				for _, r := range oracle {
					if r.hostMatches(host) && r.pathMatches(path) && (!found || r.moreSpecific(best)) {
						best, found = r, true
					}
				}
				if found {
					want = best.service
				}
				if got != want {
					t.Fatalf("request %s%s goes to %s, want %s (rule %+v); configuration:\n%s", host, path, got, want, best, strings.Join(ruleStrings(rules), "\n"))
				}
			}
		}
	})
}

// FuzzMRName: whatever an Ingress, kind and key are called, MR names are
// DNS-1123 labels and label values valid, both deterministic, and names of
// different keys differ.
func FuzzMRName(f *testing.F) {
	f.Add("web", KindHostnameRoute, "web.example.com")
	f.Add(strings.Repeat("very-long-ingress-name.", 11), KindVPCService, "svc")
	f.Add("ünïcode", KindDNSRecord, "*.example.com")
	f.Add("", "", "")
	f.Add("...", "!!", "é")
	f.Fuzz(func(t *testing.T, ingress, kind, key string) {
		n := MRName(ingress, kind, key)
		if errs := validation.IsDNS1123Label(n); len(errs) > 0 || n != MRName(ingress, kind, key) {
			t.Fatalf("MRName(%q, %q, %q) = %q: %v", ingress, kind, key, n, errs)
		}
		if MRName(ingress, kind, key+"x") == n || MRName(ingress, kind+"x", key) == n {
			t.Fatalf("MRName(%q, %q, %q) collides with another key's", ingress, kind, key)
		}
		v := LabelValue(ingress)
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 || v != LabelValue(ingress) {
			t.Fatalf("LabelValue(%q) = %q: %v", ingress, v, errs)
		}
		if valid := len(validation.IsValidLabelValue(ingress)) == 0; valid != (v == ingress) {
			t.Fatalf("LabelValue(%q) = %q: a valid value must be kept and only a valid one", ingress, v)
		}
	})
}
