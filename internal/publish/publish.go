// Package publish turns published hostnames into the rules of a tunnel's
// remote configuration: one PublicHostname's spec into its rules (origins
// resolved, origin options and Access checked), and the PublicHostnames of a
// tunnel into its one configuration document (hostname conflicts decided,
// rules ordered, the catch-all added). It is pure — no clients, no I/O — so
// every source (Ingresses today, Services and Gateway routes next) and the
// CloudflareTunnel share one set of decisions, table-tested and fuzzed here.
package publish

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	v1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
)

// DefaultClusterDomain is the cluster DNS domain unless the provider is told
// otherwise (--cluster-domain).
const DefaultClusterDomain = "cluster.local"

// CAPoolDir is where a CloudflareTunnel mounts the CA Secrets its hostnames
// name: <CAPoolDir>/<secret>/<key> in the cloudflared container.
const CAPoolDir = "/etc/cloudflared/ca"

// CatchAllService ends every remote configuration: cloudflared requires a
// last rule without hostname or path, and anything unmatched gets a 404.
const CatchAllService = "http_status:404"

// Env is what resolving a PublicHostname's origins depends on.
type Env struct {
	// Namespace of the PublicHostname, where its Services are.
	Namespace string
	// ClusterDomain of the cluster's Service DNS names; "" is
	// DefaultClusterDomain.
	ClusterDomain string
	// Services of the namespace by name: the Services origins name, for
	// named ports and headless Services. One not there is taken for a
	// Service with a cluster IP.
	Services map[string]*corev1.Service
	// EndpointSlices of the headless Services by Service name: the ports
	// their Pods listen on.
	EndpointSlices map[string][]discoveryv1.EndpointSlice
	// TunnelNamespace is the namespace of the tunnel's cloudflared, where
	// CA Secrets are mounted from; "" is Namespace.
	TunnelNamespace string
}

// A Problem keeps a PublicHostname from being published: Field is a field
// path such as "spec.paths[1].origin.url", or an annotation key when the
// spec was made from one.
type Problem struct {
	Field   string
	Message string
	// Waiting: the input is fine but something it names is not there yet
	// (a Service whose named port resolves the origin).
	Waiting bool
	// WaitingFor is the kind of what it waits for: WaitingForService, or
	// WaitingForSecret (a CA pool Secret, checked by the controller).
	WaitingFor string
}

// Kinds a waiting Problem waits for.
const (
	WaitingForService = "Service"
	WaitingForSecret  = "Secret"
	// WaitingForAccessPolicy and WaitingForAccessApplication: a managed
	// Access check's policy, or its application in Cloudflare.
	WaitingForAccessPolicy      = "AccessPolicy"
	WaitingForAccessApplication = "AccessApplication"
	// WaitingForHostname: a managed Access check waits for the hostname
	// to be held (its tunnel's claim and its DNS record): no Access
	// application is made for a hostname that is not.
	WaitingForHostname = "Hostname"
)

func (p Problem) String() string { return p.Field + ": " + p.Message }

// Result is what one PublicHostname asks of its tunnel.
type Result struct {
	// Rules for the hostname, ordered as Config orders them; nil with any
	// Problem: a hostname is published whole or not at all, and never
	// without the Access check it asks for.
	Rules []ztv1alpha1.IngressRule
	// CAPools the rules name, for the CloudflareTunnel to mount.
	CAPools  []v1alpha1.LocalSecretKeySelector
	Problems []Problem
}

// Rules builds the rules of one PublicHostname spec.
func Rules(spec v1alpha1.PublicHostnameSpec, env Env) Result {
	b := &builder{env: env}
	host, err := Hostname(spec.Hostname)
	if err != "" {
		b.problem("spec.hostname", "%s: %s", Clip(spec.Hostname), err)
	}
	opts, caPool := b.originRequest(spec.OriginRequest)
	access := b.access("spec.access", spec.Access)
	if access != nil {
		if opts == nil {
			opts = &ztv1alpha1.OriginRequest{}
		}
		opts.Access = access
	}
	if spec.Origin == nil && len(spec.Paths) == 0 {
		b.problem("spec", "names no origin: set origin, paths, or both")
	}

	var rules []ztv1alpha1.IngressRule
	seen := map[string]string{}
	add := func(field string, path *string, o v1alpha1.Origin) {
		svc, http2, ok := b.origin(field, o)
		if !ok {
			return
		}
		k := ptr.Deref(path, "")
		if prev, dup := seen[k]; dup {
			b.problem(field, "path %s is already routed by %s", Clip(k), prev)
			return
		}
		seen[k] = field
		if opts != nil && ptr.Deref(opts.HTTP2Origin, false) && strings.HasPrefix(svc, "http://") {
			b.problem(field, "%s is not https, and spec.originRequest.http2Origin asks for HTTP/2, which cloudflared speaks to an origin only over TLS", Clip(svc))
			return
		}
		r := ztv1alpha1.IngressRule{Hostname: ptr.To(host), Path: path, Service: svc, OriginRequest: opts.DeepCopy()}
		if http2 {
			if r.OriginRequest == nil {
				r.OriginRequest = &ztv1alpha1.OriginRequest{}
			}
			r.OriginRequest.HTTP2Origin = ptr.To(true)
		}
		rules = append(rules, r)
	}
	for i, p := range spec.Paths {
		field := fmt.Sprintf("spec.paths[%d]", i)
		path, ok := b.path(field, p)
		if !ok {
			continue
		}
		add(field+".origin", path, p.Origin)
	}
	if spec.Origin != nil {
		add("spec.origin", nil, *spec.Origin)
	}
	if len(b.problems) > 0 {
		return Result{Problems: b.problems}
	}
	sortRules(rules)
	var pools []v1alpha1.LocalSecretKeySelector
	if caPool != nil {
		pools = append(pools, *caPool)
	}
	return Result{Rules: rules, CAPools: pools}
}

type builder struct {
	env      Env
	problems []Problem
}

func (b *builder) problem(field, format string, args ...any) {
	b.problems = append(b.problems, Problem{Field: field, Message: fmt.Sprintf(format, args...)})
}

func (b *builder) waiting(field, format string, args ...any) {
	b.problems = append(b.problems, Problem{Field: field, Message: fmt.Sprintf(format, args...), Waiting: true, WaitingFor: WaitingForService})
}

// Hostname validates a public hostname and returns it in the form rules and
// DNS records use: lower case, no trailing dot, an optional leading "*."
// wildcard; or a reason it is not one. Labels are 1-63 letters, digits and
// '-', starting and ending with a letter or digit, as Kubernetes validates
// Ingress hosts; at most 253 characters.
func Hostname(raw string) (string, string) {
	h := strings.ToLower(strings.TrimSuffix(strings.TrimSpace(raw), "."))
	if len(h) > 253 {
		return "", "longer than 253 characters"
	}
	name := strings.TrimPrefix(h, "*.")
	if name == "" {
		return "", "not a hostname"
	}
	for _, l := range strings.Split(name, ".") {
		if len(validation.IsDNS1123Label(l)) > 0 {
			return "", "each label must be 1-63 letters, digits or '-', starting and ending with a letter or digit; only a leading \"*.\" wildcard is allowed"
		}
	}
	return h, ""
}

// path turns a path into cloudflared's (LiteralPath), or takes a regular
// expression as it is once it compiles.
func (b *builder) path(field string, p v1alpha1.PathOrigin) (*string, bool) {
	switch p.PathType {
	case v1alpha1.PathTypeRegularExpression:
		if _, err := regexp.Compile(p.Path); err != nil {
			b.problem(field+".path", "%s is not a regular expression cloudflared can use: %v", Clip(p.Path), err)
			return nil, false
		}
		return ptr.To(p.Path), true
	case v1alpha1.PathTypeExact, v1alpha1.PathTypePrefix, "":
	default:
		b.problem(field+".pathType", "must be Prefix, Exact or RegularExpression, not %s", Clip(p.PathType))
		return nil, false
	}
	re, bad := LiteralPath(p.Path, p.PathType == v1alpha1.PathTypeExact)
	if bad != "" {
		b.problem(field+".path", "%s", bad)
		return nil, false
	}
	return re, true
}

// LiteralPath turns an Exact or Prefix path into cloudflared's, a Go regular
// expression matched UNANCHORED against the request path, or says why it
// cannot. The literal is quoted and anchored: Exact "/foo" is "^/foo$";
// Prefix "/foo" is "^/foo(/|$)", Kubernetes' element-wise prefix (it
// matches "/foo/bar" but not "/foobar"). A prefix of "/" matches
// everything and is nil.
func LiteralPath(path string, exact bool) (*string, string) {
	if !strings.HasPrefix(path, "/") {
		return nil, Clip(path) + " must start with '/'"
	}
	// Go's regular expressions are UTF-8: a quoted literal with a stray byte
	// would not compile in cloudflared and stop the whole tunnel's config.
	if !utf8.ValidString(path) {
		return nil, Clip(path) + " is not valid UTF-8"
	}
	if exact {
		return ptr.To("^" + regexp.QuoteMeta(path) + "$"), ""
	}
	prefix := strings.TrimRight(path, "/")
	if prefix == "" {
		return nil, ""
	}
	return ptr.To("^" + regexp.QuoteMeta(prefix) + prefixSuffix), ""
}

const prefixSuffix = "(/|$)"

// schemes of a Service origin's protocols; http2 is HTTPS with HTTP/2.
var schemes = map[string]string{
	v1alpha1.ProtocolHTTP:  "http",
	v1alpha1.ProtocolHTTPS: "https",
	v1alpha1.ProtocolHTTP2: "https",
	v1alpha1.ProtocolTCP:   "tcp",
	v1alpha1.ProtocolSSH:   "ssh",
	v1alpha1.ProtocolRDP:   "rdp",
}

// origin is a rule's service and whether it needs HTTP/2 to the origin.
func (b *builder) origin(field string, o v1alpha1.Origin) (string, bool, bool) {
	switch {
	case o.Service != nil && o.URL != nil:
		b.problem(field, "set exactly one of service and url")
	case o.Service != nil:
		return b.serviceOrigin(field+".service", *o.Service)
	case o.URL != nil:
		svc, ok := b.urlOrigin(field+".url", *o.URL)
		return svc, false, ok
	default:
		b.problem(field, "set exactly one of service and url")
	}
	return "", false, false
}

func (b *builder) serviceOrigin(field string, s v1alpha1.ServiceOrigin) (string, bool, bool) {
	if len(validation.IsDNS1123Label(s.Name)) > 0 {
		b.problem(field+".name", "%s is not a Service name", Clip(s.Name))
		return "", false, false
	}
	proto := s.Protocol
	if proto == "" {
		proto = v1alpha1.ProtocolHTTP
	}
	scheme, ok := schemes[proto]
	if !ok {
		b.problem(field+".protocol", "must be http, https, http2, tcp, ssh or rdp, not %s (cloudflared speaks HTTP/2 to an origin only over TLS: use http2 for gRPC)", Clip(proto))
		return "", false, false
	}
	port, ok := b.port(field+".port", s)
	if !ok {
		return "", false, false
	}
	if port, ok = b.headlessPort(field+".port", s.Name, port); !ok {
		return "", false, false
	}
	domain := b.env.ClusterDomain
	if domain == "" {
		domain = DefaultClusterDomain
	}
	return fmt.Sprintf("%s://%s.%s.svc.%s:%d", scheme, s.Name, b.env.Namespace, domain, port), proto == v1alpha1.ProtocolHTTP2, true
}

// port resolves a Service origin's port: a number as it is; a name is the
// Service port of that name (not the target port), as for Ingresses.
func (b *builder) port(field string, s v1alpha1.ServiceOrigin) (int32, bool) {
	if s.Port.Type == intstr.Int {
		if s.Port.IntVal < 1 || s.Port.IntVal > 65535 {
			b.problem(field, "%d is not a port number 1-65535", s.Port.IntVal)
			return 0, false
		}
		return s.Port.IntVal, true
	}
	name := s.Port.StrVal
	if name == "" {
		b.problem(field, "required: a port number or the name of a port of Service %s", Clip(s.Name))
		return 0, false
	}
	svc := b.env.Services[s.Name]
	if svc == nil {
		b.waiting(field, "Service %s not found, so its port %s cannot be resolved", Clip(s.Name), Clip(name))
		return 0, false
	}
	for _, sp := range svc.Spec.Ports {
		if sp.Name == name && sp.Port > 0 && sp.Port <= 65535 {
			return sp.Port, true
		}
	}
	b.waiting(field, "Service %s has no port named %s", Clip(s.Name), Clip(name))
	return 0, false
}

// headlessPort is the port cloudflared must dial for a Service origin's
// port (DialPort), or a reason to wait.
func (b *builder) headlessPort(field, name string, port int32) (int32, bool) {
	dial, why := DialPort(b.env.Services[name], port, b.env.EndpointSlices[name])
	if why != "" {
		b.waiting(field, "Service %s %s", Clip(name), why)
		return 0, false
	}
	return dial, true
}

// DialPort is the port cloudflared must dial for port of Service svc
// (nil: not known, taken for a Service with a cluster IP), given the
// Service's EndpointSlices; or, when it cannot be known yet, why. A
// Service with a cluster IP forwards its port to its Pods' target port. A
// headless one's name resolves to its Pods' addresses, where nothing
// listens on the Service port unless it is the target port: the port is
// the one its endpoints give for the Service port (the target port the
// endpoint controller resolved, or the port written by hand for a Service
// without a selector), else a numbered target port.
func DialPort(svc *corev1.Service, port int32, slices []discoveryv1.EndpointSlice) (int32, string) {
	if svc == nil || svc.Spec.ClusterIP != corev1.ClusterIPNone {
		return port, ""
	}
	for _, sp := range svc.Spec.Ports {
		if sp.Port != port {
			continue
		}
		if p, ok := slicePort(slices, sp.Name); ok {
			return p, ""
		}
		switch {
		case sp.TargetPort.Type == intstr.Int && sp.TargetPort.IntVal == 0:
			return port, ""
		case sp.TargetPort.Type == intstr.Int:
			return sp.TargetPort.IntVal, ""
		}
		return 0, fmt.Sprintf("is headless: its name leads to its Pods, and their port %s is known from its endpoints, which it has none of yet", Clip(sp.TargetPort.StrVal))
	}
	return 0, fmt.Sprintf("is headless and has no port %d: its name leads to its Pods, whose port is known from a port of the Service", port)
}

// slicePort is the port endpoints give for a Service port, by its name.
func slicePort(slices []discoveryv1.EndpointSlice, name string) (int32, bool) {
	for _, s := range slices {
		for _, p := range s.Ports {
			if ptr.Deref(p.Name, "") == name && ptr.Deref(p.Port, 0) > 0 {
				return *p.Port, true
			}
		}
	}
	return 0, false
}

// urlOrigin checks a cloudflared service: what cloudflared accepts in a rule
// and nothing it would refuse at start (which would stop the whole tunnel).
func (b *builder) urlOrigin(field, raw string) (string, bool) {
	switch {
	case raw == "hello_world":
		return raw, true
	case strings.HasPrefix(raw, "http_status:"):
		code, err := strconv.Atoi(strings.TrimPrefix(raw, "http_status:"))
		if err != nil || code < 100 || code > 599 {
			b.problem(field, "%s: http_status takes an HTTP status code 100-599", Clip(raw))
			return "", false
		}
		return raw, true
	case strings.HasPrefix(raw, "unix:") || strings.HasPrefix(raw, "unix+tls:"):
		if _, p, _ := strings.Cut(raw, ":"); !strings.HasPrefix(p, "/") {
			b.problem(field, "%s: a unix socket origin is unix:/absolute/path", Clip(raw))
			return "", false
		}
		return raw, true
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		b.problem(field, "%s is not an origin cloudflared can use: scheme://host[:port] (http, https, tcp, ssh, rdp), unix:/path, http_status:<code> or hello_world", Clip(raw))
		return "", false
	}
	switch u.Scheme {
	case "http", "https":
	case "tcp", "ssh", "rdp", "smb":
		if _, port, err := net.SplitHostPort(u.Host); err != nil || port == "" {
			b.problem(field, "%s: a %s origin needs a port", Clip(raw), u.Scheme)
			return "", false
		}
	default:
		b.problem(field, "%s: scheme %s is not one cloudflared proxies to (http, https, tcp, ssh, rdp, smb)", Clip(raw), Clip(u.Scheme))
		return "", false
	}
	if u.Path != "" && u.Path != "/" {
		b.problem(field, "%s: cloudflared ignores an origin's path; route paths with spec.paths", Clip(raw))
		return "", false
	}
	return raw, true
}

// originRequest maps the origin options to cloudflared's, and the CA pool
// they name. TLS verification stays on unless noTLSVerify says otherwise.
func (b *builder) originRequest(o *v1alpha1.OriginOptions) (*ztv1alpha1.OriginRequest, *v1alpha1.LocalSecretKeySelector) {
	if o == nil {
		return nil, nil
	}
	const f = "spec.originRequest"
	out := &ztv1alpha1.OriginRequest{
		OriginServerName: o.OriginServerName,
		MatchSNIToHost:   o.MatchSNIToHost,
		HTTPHostHeader:   o.HTTPHostHeader,
		ConnectTimeout:   o.ConnectTimeoutSeconds,
		TLSTimeout:       o.TLSTimeoutSeconds,
	}
	if ptr.Deref(o.NoTLSVerify, false) {
		out.NoTLSVerify = ptr.To(true)
	}
	if ptr.Deref(o.HTTP2Origin, false) {
		out.HTTP2Origin = ptr.To(true)
	}
	if n := o.OriginServerName; n != nil {
		if h, err := Hostname(*n); err != "" || strings.HasPrefix(h, "*") {
			b.problem(f+".originServerName", "%s is not a hostname", Clip(*n))
		}
	}
	if h := o.HTTPHostHeader; h != nil && (strings.TrimSpace(*h) == "" || strings.ContainsAny(*h, " \t\r\n/")) {
		b.problem(f+".httpHostHeader", "%s is not a host", Clip(*h))
	}
	// In a fixed order: the problems become a condition's message, which
	// must not change between two reconciles of the same spec.
	for _, t := range []struct {
		name string
		v    *int64
	}{{"connectTimeoutSeconds", o.ConnectTimeoutSeconds}, {"tlsTimeoutSeconds", o.TLSTimeoutSeconds}} {
		if t.v != nil && (*t.v < 1 || *t.v > 300) {
			b.problem(f+"."+t.name, "must be 1-300 seconds, not %d", *t.v)
		}
	}
	var pool *v1alpha1.LocalSecretKeySelector
	if s := o.CAPoolSecretRef; s != nil {
		if len(validation.IsDNS1123Subdomain(s.Name)) > 0 || len(validation.IsConfigMapKey(s.Key)) > 0 {
			b.problem(f+".caPoolSecretRef", "names no valid Secret key: %s/%s", Clip(s.Name), Clip(s.Key))
		} else if ptr.Deref(o.NoTLSVerify, false) {
			b.problem(f+".caPoolSecretRef", "is ignored when noTLSVerify is true: set one or the other")
		} else if ns := b.env.TunnelNamespace; ns != "" && ns != b.env.Namespace {
			// Verification fails closed: no rule without its CA.
			b.problem(f+".caPoolSecretRef", "names a Secret of namespace %s, but the tunnel's cloudflared runs in namespace %s and mounts only Secrets of its own: a hostname published through a shared tunnel cannot verify its origin against a CA of its namespace; use a publicly trusted certificate with originServerName, or a tunnel of this namespace", b.env.Namespace, ns)
		} else {
			pool = s.DeepCopy()
			out.CAPool = ptr.To(CAPoolPath(*s))
		}
	}
	if *out == (ztv1alpha1.OriginRequest{}) {
		return nil, pool
	}
	return out, pool
}

// CAPoolPath is where cloudflared finds a CA Secret's key.
func CAPoolPath(s v1alpha1.LocalSecretKeySelector) string {
	return CAPoolDir + "/" + s.Name + "/" + s.Key
}

// teamName and audTag are what Cloudflare accepts: a team is the
// <team>.cloudflareaccess.com label, an audience tag 64 hex digits.
var (
	teamName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)
	audTag   = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// access maps the Access check. It fails closed: anything wrong with it is a
// Problem, so the hostname is not published (or keeps its last good rules)
// rather than published without the check.
func (b *builder) access(field string, a *v1alpha1.Access) *ztv1alpha1.OriginAccess {
	if a == nil {
		return nil
	}
	before := len(b.problems)
	if !teamName.MatchString(a.TeamName) {
		b.problem(field+".teamName", "%s is not a Zero Trust team name (the <team> of <team>.cloudflareaccess.com); the hostname is not published without its Access check", Clip(a.TeamName))
	}
	if len(a.AudTags) == 0 {
		b.problem(field+".audTags", "required: the audience tag of at least one Access application; the hostname is not published without its Access check")
	}
	for i, t := range a.AudTags {
		if !audTag.MatchString(t) {
			b.problem(fmt.Sprintf("%s.audTags[%d]", field, i), "%s is not an Access audience tag (64 hexadecimal digits); the hostname is not published without its Access check", Clip(t))
		}
	}
	if len(b.problems) > before {
		return nil
	}
	return &ztv1alpha1.OriginAccess{Required: ptr.To(ptr.Deref(a.Required, true)), TeamName: a.TeamName, AudTag: append([]string(nil), a.AudTags...)}
}

// Clip quotes user input for a message, shortened so that huge values cannot
// blow up events and conditions.
func Clip(s string) string {
	const max = 64
	if len(s) > max {
		s = s[:max] + "..."
	}
	return strconv.Quote(s)
}

// RuleCount is n rules in words ("1 rule", "3 rules"), for the messages
// that count a hostname's rules.
func RuleCount(n int) string {
	if n == 1 {
		return "1 rule"
	}
	return fmt.Sprintf("%d rules", n)
}
