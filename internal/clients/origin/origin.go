// Package origin decides whether a tunnel rule may send requests to an
// origin: the "allowed origins" guardrail of a provider config. It is pure
// and imports nothing but the standard library, so it is table-tested and
// fuzzed cheaply, and both layers that publish rules (the PublicHostname,
// which knows whose rule it is, and the Tunnel managed resource, which does
// not) ask the same question the same way.
//
// The default allows what a namespace can reach anyway: its own Services by
// their cluster DNS name, and the answers cloudflared makes up itself
// (http_status:<code>, hello_world). Anything else is allowed only when the
// provider config lists it. Link-local and cloud metadata addresses are
// never allowed: a rule for one publishes the node's cloud credentials to
// the internet.
//
// Check reads what the rule says; Follow also judges where the cluster's
// Services it names lead (an ExternalName Service's name, endpoints written
// by hand), as the caller read them. Neither sees what public DNS answers
// for a listed name.
package origin

import (
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Rule names the rule that refuses an origin; it is the reason of the
// condition that reports the refusal.
type Rule string

// The rules.
const (
	// RuleMetadata: a link-local or cloud metadata address, which no
	// entry allows.
	RuleMetadata Rule = "OriginMetadataAddress"
	// RuleUnreadable: the origin, or its host, is not in a form the
	// guardrail reads safely: an IP address in a spelling resolvers
	// accept but ParseAddr does not (2852039166, 0xa9.0xfe.0xa9.0xfe),
	// user information, a host that is not a DNS name.
	RuleUnreadable Rule = "OriginUnreadable"
	// RuleOtherNamespace: a Service of a namespace other than the
	// source's, which that namespace did not grant.
	RuleOtherNamespace Rule = "OriginOtherNamespace"
	// RuleNotListed: neither the default nor spec.allow.origins allows it.
	RuleNotListed Rule = "OriginNotListed"
)

// Rules are every rule, for callers that tell a refusal by its reason.
var Rules = []Rule{RuleMetadata, RuleUnreadable, RuleOtherNamespace, RuleNotListed}

// Refusal says which rule refuses an origin, and why.
type Refusal struct {
	Origin string
	Rule   Rule
	// Why says what the origin is and what to do instead.
	Why string
}

func (r *Refusal) Error() string { return fmt.Sprintf("origin %q: %s", clip(r.Origin), r.Why) }

// Source is who asks to publish an origin.
type Source struct {
	// Namespace of the resource whose rule it is; its Services are
	// allowed. "" when it is not known (a Tunnel managed resource's
	// configuration aggregates the rules of every namespace a tunnel
	// serves): then the Services of any namespace are, and the layer that
	// knows the namespace checks it.
	Namespace string
	// Granted are Services of other namespaces, as "<namespace>/<name>",
	// that their namespace let the source use (a Gateway API
	// ReferenceGrant): the source vouches for them.
	Granted []string
	// ClusterDomain of Service DNS names; "" is cluster.local.
	ClusterDomain string
}

// DefaultClusterDomain is the cluster DNS domain unless Source says
// otherwise.
const DefaultClusterDomain = "cluster.local"

// Check refuses an origin that neither the default nor the allowed entries
// allow, and a link-local or metadata one always. An entry is a DNS name,
// which allows itself and the names below it at a label boundary (a
// Service's short name <name>.<namespace>.svc counts as its name, so
// "team-b.svc" allows team-b's Services); a CIDR or an IP address, which
// allows IP addresses inside it; "unix:<path>", which allows that socket;
// or a service cloudflared names without a host ("bastion"), which allows
// itself. Entries that are none of these allow nothing.
func Check(origin string, from Source, allowed []string) *Refusal {
	t, r := parse(origin)
	if r != nil {
		return r
	}
	return check(origin, t, from, allowed)
}

// check is Check of an origin read.
func check(origin string, t target, from Source, allowed []string) *Refusal {
	if why := never(t); why != "" {
		return &Refusal{Origin: origin, Rule: RuleMetadata, Why: why + "; it is never published, whatever spec.allow.origins lists"}
	}
	if t.builtin {
		return nil
	}
	svc, isSvc := serviceName(t.host, from.ClusterDomain)
	if isSvc && svc.short() != "kubernetes.default.svc" {
		if from.Namespace == "" || svc.namespace == from.Namespace || slices.Contains(from.Granted, svc.namespace+"/"+svc.name) {
			return nil
		}
	}
	if listed(t, svc, isSvc, allowed) {
		return nil
	}
	return notAllowed(origin, t, svc, isSvc, from)
}

// target is an origin as the guardrail reads it.
type target struct {
	// builtin: an answer cloudflared makes itself (hello_world,
	// http_status:<code>).
	builtin bool
	// raw is a service without a host ("bastion").
	raw string
	// socket is a unix socket's path.
	socket string
	// host is a lower-case DNS name without trailing dot, or "" when the
	// host is an IP address, addr.
	host string
	addr netip.Addr
}

func parse(origin string) (target, *Refusal) {
	unreadable := func(format string, args ...any) (target, *Refusal) {
		return target{}, &Refusal{Origin: origin, Rule: RuleUnreadable, Why: fmt.Sprintf(format, args...)}
	}
	switch {
	case origin == "hello_world":
		return target{builtin: true}, nil
	case strings.HasPrefix(origin, "http_status:"):
		code := strings.TrimPrefix(origin, "http_status:")
		if n, err := strconv.Atoi(code); err != nil || n < 100 || n > 599 || strconv.Itoa(n) != code {
			return unreadable("http_status takes an HTTP status code 100-599")
		}
		return target{builtin: true}, nil
	case strings.HasPrefix(origin, "unix:") || strings.HasPrefix(origin, "unix+tls:"):
		_, p, _ := strings.Cut(origin, ":")
		if !strings.HasPrefix(p, "/") {
			return unreadable("a unix socket origin is unix:/absolute/path")
		}
		return target{socket: p}, nil
	}
	if strings.TrimSpace(origin) != origin || strings.ContainsAny(origin, "\\\x00") {
		return unreadable("an origin with spaces, backslashes or NULs is not one cloudflared reads the way the guardrail would")
	}
	u, err := url.Parse(origin)
	if err != nil {
		return unreadable("not a URL the guardrail can read")
	}
	if u.Scheme == "" || u.Opaque != "" {
		if origin != "" && u.Host == "" && u.Scheme == "" && u.Opaque == "" && !strings.ContainsAny(origin, ":/?#@%") {
			// A service cloudflared names by a word ("bastion").
			return target{raw: origin}, nil
		}
		return unreadable("not scheme://host[:port]")
	}
	if u.User != nil {
		return unreadable("user information in an origin hides its host from a reader; it is not accepted")
	}
	if u.Host == "" {
		return unreadable("the origin names no host")
	}
	h := u.Hostname()
	if strings.HasPrefix(u.Host, "[") {
		a, err := netip.ParseAddr(h)
		if err != nil || !a.Is6() {
			return unreadable("the bracketed host is not an IPv6 address")
		}
		return target{addr: a.WithZone("")}, nil
	}
	t, why := parseHost(h)
	if why == "" && t.addr.Is6() {
		why = "an IPv6 address in a URL is written in brackets"
	}
	if why != "" {
		return unreadable("%s", why)
	}
	return t, nil
}

// parseHost reads a host: an IP address or a DNS name. It says why not
// when it is neither in a form the guardrail reads safely.
func parseHost(h string) (target, string) {
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	if a, err := netip.ParseAddr(h); err == nil && a.Zone() == "" {
		return target{addr: a}, ""
	}
	if numeric(h) {
		return target{}, fmt.Sprintf("%s reads as an IP address in a spelling resolvers accept (decimal, octal, hexadecimal, or fewer than four parts) but the guardrail does not; write it as a dotted-decimal address", clip(h))
	}
	if !dnsName(h) {
		return target{}, "the host is not a DNS name (letters, digits, '-' and '_' in dot-separated labels of 1-63) or an IP address"
	}
	return target{host: h}, ""
}

// numeric says whether a host is all numbers in the dot-separated forms
// inet_aton accepts as an IPv4 address: 1 to 4 parts, each decimal, octal
// (leading 0) or hexadecimal (0x).
func numeric(h string) bool {
	parts := strings.Split(h, ".")
	if len(parts) > 4 {
		return false
	}
	for _, p := range parts {
		if p == "" {
			return false
		}
		digits := p
		hex := strings.HasPrefix(p, "0x")
		if hex {
			digits = p[2:]
		}
		for _, c := range digits {
			if !('0' <= c && c <= '9' || hex && 'a' <= c && c <= 'f') {
				return false
			}
		}
	}
	return true
}

func dnsName(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for _, l := range strings.Split(h, ".") {
		if l == "" || len(l) > 63 {
			return false
		}
		for _, c := range l {
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// metadataPrefixes are never allowed: link-local (every cloud's metadata
// service at 169.254.169.254, ECS task metadata at 169.254.170.2, AWS's DNS
// and time at .253 and .123), and the metadata and host services that are
// not link-local.
var metadataPrefixes = []netip.Prefix{
	netip.MustParsePrefix("169.254.0.0/16"),     // IPv4 link-local
	netip.MustParsePrefix("fe80::/10"),          // IPv6 link-local
	netip.MustParsePrefix("fd00:ec2::/32"),      // AWS IMDS, DNS and time over IPv6 (fd00:ec2::254, ::253, ::123)
	netip.MustParsePrefix("fd20:ce::254/128"),   // Google Compute Engine metadata over IPv6
	netip.MustParsePrefix("100.100.100.200/32"), // Alibaba Cloud metadata
	netip.MustParsePrefix("192.0.0.192/32"),     // Oracle Cloud's former metadata address
	netip.MustParsePrefix("168.63.129.16/32"),   // Azure WireServer (host agent: extension settings, health)
}

// metadataNames are never allowed, nor the names below them: the names
// clouds give their metadata services.
var metadataNames = []string{
	"metadata",                 // Google Compute Engine, through the node's search path
	"metadata.google.internal", // Google Compute Engine
	"metadata.goog",            // Google Compute Engine
	"instance-data",            // AWS, through the node's search path
	"instance-data.ec2.internal",
	"metadata.tencentyun.com",      // Tencent Cloud
	"metadata.packet.net",          // Equinix Metal
	"metadata.platformequinix.com", // Equinix Metal
}

// never says why an origin is a link-local or metadata one, if it is. An
// IPv6 address that carries an IPv4 one (IPv4-mapped, IPv4-compatible,
// NAT64, 6to4) is judged by the IPv4 one too. A name is judged by the
// IPv4 address it spells in four labels, dotted (169.254.169.254.nip.io)
// or dashed (169-254-169-254.ns.pod.cluster.local, which CoreDNS answers
// with that address), since such names resolve to it.
func never(t target) string {
	if t.addr.IsValid() {
		for _, a := range withEmbedded(t.addr) {
			if metadataAddr(a) {
				return fmt.Sprintf("%s is a link-local or cloud metadata address", a)
			}
		}
		return ""
	}
	if t.host == "" {
		return ""
	}
	for _, n := range metadataNames {
		if t.host == n || strings.HasSuffix(t.host, "."+n) {
			return fmt.Sprintf("%s is a cloud metadata service's name", n)
		}
	}
	if a, ok := spelledAddr(t.host); ok && metadataAddr(a) {
		return fmt.Sprintf("%s resolves to %s, a link-local or cloud metadata address", t.host, a)
	}
	return ""
}

func metadataAddr(a netip.Addr) bool {
	return slices.ContainsFunc(metadataPrefixes, func(p netip.Prefix) bool { return p.Contains(a) })
}

var (
	compat = netip.MustParsePrefix("::/96")
	nat64  = netip.MustParsePrefix("64:ff9b::/96")
	sixTo4 = netip.MustParsePrefix("2002::/16")
)

// withEmbedded is a and the IPv4 address it carries, if any.
func withEmbedded(a netip.Addr) []netip.Addr {
	out := []netip.Addr{a}
	if a.Is4In6() {
		return append(out, a.Unmap())
	}
	if !a.Is6() {
		return out
	}
	b := a.As16()
	switch {
	case compat.Contains(a) || nat64.Contains(a):
		out = append(out, netip.AddrFrom4([4]byte(b[12:16])))
	case sixTo4.Contains(a):
		out = append(out, netip.AddrFrom4([4]byte(b[2:6])))
	}
	return out
}

// spelledAddr finds an IPv4 address spelled in a name's labels: four
// labels of one decimal number each, or one label of four dash-separated.
func spelledAddr(host string) (netip.Addr, bool) {
	labels := strings.Split(host, ".")
	for i := range labels {
		if a, err := netip.ParseAddr(strings.ReplaceAll(labels[i], "-", ".")); err == nil && a.Is4() {
			return a, true
		}
		if i+4 <= len(labels) {
			if a, err := netip.ParseAddr(strings.Join(labels[i:i+4], ".")); err == nil && a.Is4() {
				return a, true
			}
		}
	}
	return netip.Addr{}, false
}

// service is a Service's cluster DNS name, read.
type service struct{ name, namespace string }

func (s service) short() string { return s.name + "." + s.namespace + ".svc" }

// serviceName reads a Service's cluster DNS name:
// [<pod>.]<name>.<namespace>.svc, optionally followed by the cluster
// domain. A name of fewer labels ("web", "web.team-b") is not one: it
// resolves through cloudflared's DNS search path, in the tunnel's
// namespace first and then the node's domains.
func serviceName(host, clusterDomain string) (service, bool) {
	if clusterDomain == "" {
		clusterDomain = DefaultClusterDomain
	}
	rest, ok := strings.CutSuffix(host, ".svc."+strings.TrimSuffix(strings.ToLower(clusterDomain), "."))
	if !ok {
		if rest, ok = strings.CutSuffix(host, ".svc"); !ok {
			return service{}, false
		}
	}
	labels := strings.Split(rest, ".")
	if len(labels) < 2 {
		return service{}, false
	}
	return service{name: labels[len(labels)-2], namespace: labels[len(labels)-1]}, true
}

// listed says whether an entry allows the origin.
func listed(t target, svc service, isSvc bool, allowed []string) bool {
	for _, e := range allowed {
		e = strings.TrimSpace(e)
		switch {
		case t.raw != "":
			if e == t.raw {
				return true
			}
		case t.socket != "":
			if p, ok := strings.CutPrefix(e, "unix:"); ok && p == t.socket {
				return true
			}
		case t.addr.IsValid():
			if p, ok := prefix(e); ok && p.Contains(t.addr.Unmap()) {
				return true
			}
		case t.host != "":
			n := strings.TrimPrefix(strings.TrimSuffix(strings.ToLower(e), "."), "*.")
			if n == "" || !dnsName(n) {
				continue
			}
			if under(t.host, n) || isSvc && under(svc.short(), n) {
				return true
			}
		}
	}
	return false
}

func under(host, name string) bool { return host == name || strings.HasSuffix(host, "."+name) }

// prefix reads a CIDR or IP address entry.
func prefix(e string) (netip.Prefix, bool) {
	if p, err := netip.ParsePrefix(e); err == nil {
		p = p.Masked()
		if p.Addr().Is4In6() {
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		return p, p.IsValid()
	}
	a, err := netip.ParseAddr(e)
	if err != nil || a.Zone() != "" {
		return netip.Prefix{}, false
	}
	a = a.Unmap()
	return netip.PrefixFrom(a, a.BitLen()), true
}

// notAllowed says why the default does not allow an origin no entry lists.
func notAllowed(origin string, t target, svc service, isSvc bool, from Source) *Refusal {
	r := &Refusal{Origin: origin, Rule: RuleNotListed}
	switch {
	case isSvc && svc.short() == "kubernetes.default.svc":
		r.Why = "the Kubernetes API server is not published unless spec.allow.origins lists it (kubernetes.default.svc)"
	case isSvc:
		r.Rule = RuleOtherNamespace
		r.Why = fmt.Sprintf("Service %s/%s is in another namespace than %s; a namespace publishes only its own Services unless spec.allow.origins lists this one (%s) or its namespace (%s.svc)", svc.namespace, svc.name, from.Namespace, svc.short(), svc.namespace)
	case t.host != "" && !strings.Contains(t.host, "."):
		r.Why = fmt.Sprintf("%s is a name without a dot, which cloudflared resolves through its DNS search path (the tunnel's namespace, then the node's domains); name a Service as <name>.<namespace>.svc, or list the name in spec.allow.origins", t.host)
	case t.host != "":
		r.Why = fmt.Sprintf("%s is not a Service of this namespace (<name>.<namespace>.svc[.%s]); list it, or a name above it, in spec.allow.origins", t.host, domainOr(from.ClusterDomain))
	case t.addr.IsValid():
		r.Why = fmt.Sprintf("IP address %s is not allowed unless spec.allow.origins lists a CIDR holding it", t.addr)
	case t.socket != "":
		r.Why = fmt.Sprintf("a unix socket in cloudflared's container is not allowed unless spec.allow.origins lists it (unix:%s)", t.socket)
	default:
		r.Why = "cloudflared service " + clip(t.raw) + " is not allowed unless spec.allow.origins lists it"
	}
	return r
}

func domainOr(d string) string {
	if d == "" {
		return DefaultClusterDomain
	}
	return d
}

// clip shortens what a user wrote for a message.
func clip(s string) string {
	const max = 120
	if len(s) <= max {
		return s
	}
	return s[:max] + "..."
}
