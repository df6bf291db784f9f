// Package cloudflared is what cloudflared does with a tunnel's remote
// configuration, as far as the simulator's edge needs it: which documents it
// accepts, and which rule, service and origin options a request gets. It
// follows cloudflared's own code (github.com/cloudflare/cloudflared,
// ingress/ingress.go, ingress/rule.go, ingress/config.go,
// ingress/origin_service.go, ingress/origin_proxy.go, config/configuration.go),
// rewritten here rather than imported: the simulator must not link
// cloudflared, and only the decisions are wanted, not its proxy.
//
// The package is pure (no I/O, no clock) and imports no Cloudflare SDK, so
// its fuzz target is cheap to build.
package cloudflared

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Ingress is a configuration cloudflared accepted: its rules in order, the
// last a catch-all.
type Ingress struct {
	Rules []Rule
}

// Rule is one ingress rule, validated as cloudflared validates it.
type Rule struct {
	// Hostname as written: "" or "*" matches any host, "*.example.com" any
	// name ending in ".example.com".
	Hostname string
	// Path is matched against the request's path, unanchored; nil matches
	// every path.
	Path *regexp.Regexp
	// Service is where matching requests go.
	Service Service
	// Origin is the rule's originRequest merged over the document's and
	// cloudflared's defaults.
	Origin Origin
	// Access is the rule's own originRequest.access: cloudflared installs
	// its JWT check from the rule's own block only
	// (validateIngress reads r.OriginRequest.Access, not the merged
	// settings), so a document-wide access block enforces nothing.
	Access Access
}

// ServiceKind is the kind of origin a rule's service names.
type ServiceKind int

// The service kinds cloudflared tells apart (validateIngress, in its order).
const (
	// ServiceHTTP is an http, https, ws or wss URL: proxied as HTTP.
	ServiceHTTP ServiceKind = iota
	// ServiceStatus is "http_status:NNN": cloudflared answers NNN itself.
	ServiceStatus
	// ServiceHelloWorld is "hello_world" (or "hello-world"): cloudflared's
	// built-in test server.
	ServiceHelloWorld
	// ServiceStream is any other URL (ssh, rdp, smb, tcp, …): a TCP stream
	// carried over a websocket for `cloudflared access` clients.
	ServiceStream
	// ServiceUnix is "unix:<path>" or "unix+tls:<path>".
	ServiceUnix
	// ServiceBastion is "bastion", or any URL service under bastionMode.
	ServiceBastion
	// ServiceSocksProxy is "socks-proxy".
	ServiceSocksProxy
)

// Service is a rule's validated service.
type Service struct {
	Kind ServiceKind
	// Raw is the service as written.
	Raw string
	// Scheme is "http" or "https" for ServiceHTTP: cloudflared sends ws as
	// http and wss as https (httpService.RoundTrip).
	Scheme string
	// Host is ServiceHTTP's and ServiceStream's "host:port"; a missing
	// port is the scheme's (80 for http and ws, 443 for https and wss, as
	// Go's transport dials; 22, 3389, 445 and 7864 for ssh, rdp, smb and
	// tcp, as cloudflared's addPortIfMissing).
	Host string
	// Status is ServiceStatus's code.
	Status int
}

// Origin is how cloudflared talks to a rule's origin. Only the options the
// simulator's edge applies are kept; cloudflared's other originRequest
// options (tcpKeepAlive, noHappyEyeballs, keepAliveConnections,
// keepAliveTimeout, caPool, disableChunkedEncoding, proxyAddress,
// proxyPort, proxyType, ipRules) are read, type-checked as cloudflared
// does, and ignored.
type Origin struct {
	// ConnectTimeout bounds the TCP connect; cloudflared's default is 30 s.
	ConnectTimeout time.Duration
	// TLSTimeout bounds the TLS handshake; cloudflared's default is 10 s.
	TLSTimeout time.Duration
	// HTTPHostHeader replaces the Host header sent to the origin; the
	// original goes in X-Forwarded-Host.
	HTTPHostHeader string
	// OriginServerName is the name the origin's certificate must have (and
	// the SNI), instead of the service's host.
	OriginServerName string
	// MatchSNIToHost sends the request's Host (after HTTPHostHeader) as SNI
	// and expects it on the certificate; it wins over OriginServerName.
	MatchSNIToHost bool
	// NoTLSVerify accepts any certificate from the origin.
	NoTLSVerify bool
	// HTTP2Origin attempts HTTP/2 to the origin.
	HTTP2Origin bool
}

// Access is a rule's originRequest.access block.
type Access struct {
	Required    bool
	TeamName    string
	AudTags     []string
	Environment string
}

// cloudflared's defaults for an HTTP origin (ingress/config.go:
// defaultHTTPConnectTimeout, defaultTLSTimeout).
const (
	DefaultConnectTimeout = 30 * time.Second
	DefaultTLSTimeout     = 10 * time.Second
)

// Errors cloudflared refuses a document with (its messages, reworded).
var (
	ErrNoRules             = errors.New("the configuration has no ingress rules")
	ErrLastRuleNotCatchAll = errors.New("the last ingress rule must match all URLs (no hostname or path)")
	ErrBadWildcard         = errors.New(`a hostname may have one wildcard "*", only as its first character, e.g. "*.example.com"`)
	ErrHostnameHasPort     = errors.New("a rule's hostname cannot contain a port")
)

// Default is what cloudflared serves with no remote configuration: every
// request answered 503 (newDefaultOrigin, GetDefaultIngressRules).
func Default() Ingress {
	return Ingress{Rules: []Rule{{Service: Service{Kind: ServiceStatus, Raw: "http_status:503", Status: 503}, Origin: defaultOrigin()}}}
}

func defaultOrigin() Origin {
	return Origin{ConnectTimeout: DefaultConnectTimeout, TLSTimeout: DefaultTLSTimeout}
}

// Match is the rule cloudflared sends a request by (Ingress.FindMatchingRule
// and Rule.Matches): host is the request's Host, whose port, if any, is
// dropped; the first rule whose hostname and path both match wins, and
// when none does, the last rule (the catch-all) does. Hostnames compare
// case-sensitively, as cloudflared compares them. It returns the rule and
// its index.
func (ing Ingress) Match(host, path string) (Rule, int) {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	for i, r := range ing.Rules {
		if r.Matches(host, path) {
			return r, i
		}
	}
	last := len(ing.Rules) - 1
	return ing.Rules[last], last
}

// Matches says whether a request for host (without port) and path matches
// the rule: "" and "*" match any host, "*.example.com" any host that ends in
// ".example.com" (so not example.com itself, and any depth below it); the
// path is a regular expression matched unanchored, as Go's
// regexp.MatchString does.
func (r Rule) Matches(host, path string) bool {
	return hostMatches(r.Hostname, host) && (r.Path == nil || r.Path.MatchString(path))
}

func hostMatches(pattern, host string) bool {
	switch {
	case pattern == "" || pattern == "*" || pattern == host:
		return true
	case strings.HasPrefix(pattern, "*."):
		return strings.HasSuffix(host, pattern[1:])
	}
	return false
}

// Parse reads a remote configuration document as cloudflared does
// (RemoteConfig.UnmarshalJSON, validateIngress): a document it would refuse
// is an error, and cloudflared then keeps serving its previous
// configuration (Orchestrator.UpdateConfig).
func Parse(doc []byte) (Ingress, error) {
	var raw struct {
		OriginRequest *rawOrigin      `json:"originRequest"`
		Ingress       []rawRule       `json:"ingress"`
		WarpRouting   *rawWarpRouting `json:"warp-routing"`
	}
	if err := json.Unmarshal(doc, &raw); err != nil {
		return Ingress{}, fmt.Errorf("unreadable configuration: %w", err)
	}
	if len(raw.Ingress) == 0 {
		return Ingress{}, ErrNoRules
	}
	global := defaultOrigin()
	bastion := false
	if raw.OriginRequest != nil {
		raw.OriginRequest.mergeInto(&global, &bastion)
	}
	rules := make([]Rule, len(raw.Ingress))
	for i, rr := range raw.Ingress {
		r, err := rr.validate(i, len(raw.Ingress), global, bastion)
		if err != nil {
			return Ingress{}, err
		}
		rules[i] = r
	}
	return Ingress{Rules: rules}, nil
}

type rawRule struct {
	Hostname      string    `json:"hostname"`
	Path          string    `json:"path"`
	Service       string    `json:"service"`
	OriginRequest rawOrigin `json:"originRequest"`
}

// rawWarpRouting is read only so that a mistyped block refuses the document,
// as it does in cloudflared.
type rawWarpRouting struct {
	ConnectTimeout *seconds `json:"connectTimeout"`
	MaxActiveFlows *uint64  `json:"maxActiveFlows"`
	TCPKeepAlive   *seconds `json:"tcpKeepAlive"`
}

func (rr rawRule) validate(i, n int, global Origin, globalBastion bool) (Rule, error) {
	origin, bastion := global, globalBastion
	rr.OriginRequest.mergeInto(&origin, &bastion)
	svc, err := parseService(rr.Service, bastion)
	if err != nil {
		return Rule{}, fmt.Errorf("rule #%d: %w", i+1, err)
	}
	var access Access
	if a := rr.OriginRequest.Access; a != nil {
		// validateAccessConfiguration: audience tags need a team name.
		if a.Required && a.TeamName == "" && len(a.AudTag) > 0 {
			return Rule{}, fmt.Errorf("rule #%d: access.teamName cannot be blank when access.audTag is set", i+1)
		}
		access = Access{Required: a.Required, TeamName: a.TeamName, AudTags: a.AudTag, Environment: a.Environment}
	}
	if err := validateHostname(rr.Hostname, rr.Path, i, n); err != nil {
		return Rule{}, err
	}
	var path *regexp.Regexp
	if rr.Path != "" {
		if path, err = regexp.Compile(rr.Path); err != nil {
			return Rule{}, fmt.Errorf("rule #%d has an invalid regex: %w", i+1, err)
		}
	}
	return Rule{Hostname: rr.Hostname, Path: path, Service: svc, Origin: origin, Access: access}, nil
}

// validateHostname is cloudflared's: no port, a wildcard only as the first
// character, and the last rule, and only the last, a catch-all ("" or "*"
// without a path).
func validateHostname(hostname, path string, i, n int) error {
	if _, _, err := net.SplitHostPort(hostname); err == nil {
		return fmt.Errorf("rule #%d: %w", i+1, ErrHostnameHasPort)
	}
	if strings.LastIndex(hostname, "*") > 0 {
		return fmt.Errorf("rule #%d: %w", i+1, ErrBadWildcard)
	}
	catchAll := (hostname == "" || hostname == "*") && path == ""
	last := i == n-1
	if last && !catchAll {
		return ErrLastRuleNotCatchAll
	}
	if !last && catchAll {
		return fmt.Errorf("rule #%d matches every hostname %q, so the rules after it would never match", i+1, hostname)
	}
	return nil
}

// parseService classifies a service the way validateIngress does, in its
// order.
func parseService(s string, bastionMode bool) (Service, error) {
	switch {
	case strings.HasPrefix(s, "unix:") || strings.HasPrefix(s, "unix+tls:"):
		return Service{Kind: ServiceUnix, Raw: s}, nil
	case strings.HasPrefix(s, "http_status:"):
		code, err := strconv.Atoi(strings.TrimPrefix(s, "http_status:"))
		if err != nil {
			return Service{}, fmt.Errorf("invalid HTTP status code: %w", err)
		}
		if code < 100 || code > 999 {
			return Service{}, fmt.Errorf("invalid HTTP status code: %d", code)
		}
		return Service{Kind: ServiceStatus, Raw: s, Status: code}, nil
	case s == "hello_world" || s == "hello-world":
		return Service{Kind: ServiceHelloWorld, Raw: s}, nil
	case s == "socks-proxy":
		return Service{Kind: ServiceSocksProxy, Raw: s}, nil
	case s == "bastion" || bastionMode:
		return Service{Kind: ServiceBastion, Raw: s}, nil
	}
	return parseURLService(s)
}

func parseURLService(s string) (Service, error) {
	u, err := url.Parse(s)
	if err != nil {
		return Service{}, err
	}
	if u.Scheme == "" || u.Hostname() == "" {
		return Service{}, fmt.Errorf("%s is an invalid address, it needs a scheme and a hostname", s)
	}
	if u.Path != "" {
		return Service{}, fmt.Errorf("%s is an invalid address: ingress rules cannot proxy to another path on the origin", s)
	}
	switch u.Scheme {
	case "http", "ws":
		return Service{Kind: ServiceHTTP, Raw: s, Scheme: "http", Host: withPort(u, "80")}, nil
	case "https", "wss":
		return Service{Kind: ServiceHTTP, Raw: s, Scheme: "https", Host: withPort(u, "443")}, nil
	}
	defaults := map[string]string{"ssh": "22", "rdp": "3389", "smb": "445", "tcp": "7864"}
	return Service{Kind: ServiceStream, Raw: s, Scheme: u.Scheme, Host: withPort(u, defaults[u.Scheme])}, nil
}

func withPort(u *url.URL, port string) string {
	if u.Port() != "" || port == "" {
		return u.Host
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// seconds is cloudflared's config.CustomDuration in JSON: an integer number
// of seconds; anything else refuses the document.
type seconds time.Duration

func (s *seconds) UnmarshalJSON(b []byte) error {
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return err
	}
	*s = seconds(time.Duration(n) * time.Second)
	return nil
}

type rawAccess struct {
	Required    bool     `json:"required"`
	TeamName    string   `json:"teamName"`
	AudTag      []string `json:"audTag"`
	Environment string   `json:"environment"`
}

// rawOrigin is config.OriginRequestConfig: every field, so that a mistyped
// one refuses the document as it does in cloudflared.
type rawOrigin struct {
	ConnectTimeout         *seconds          `json:"connectTimeout"`
	TLSTimeout             *seconds          `json:"tlsTimeout"`
	TCPKeepAlive           *seconds          `json:"tcpKeepAlive"`
	NoHappyEyeballs        *bool             `json:"noHappyEyeballs"`
	KeepAliveConnections   *int              `json:"keepAliveConnections"`
	KeepAliveTimeout       *seconds          `json:"keepAliveTimeout"`
	HTTPHostHeader         *string           `json:"httpHostHeader"`
	OriginServerName       *string           `json:"originServerName"`
	MatchSNIToHost         *bool             `json:"matchSNItoHost"`
	CAPool                 *string           `json:"caPool"`
	NoTLSVerify            *bool             `json:"noTLSVerify"`
	DisableChunkedEncoding *bool             `json:"disableChunkedEncoding"`
	BastionMode            *bool             `json:"bastionMode"`
	ProxyAddress           *string           `json:"proxyAddress"`
	ProxyPort              *uint             `json:"proxyPort"`
	ProxyType              *string           `json:"proxyType"`
	IPRules                []json.RawMessage `json:"ipRules"`
	HTTP2Origin            *bool             `json:"http2Origin"`
	Access                 *rawAccess        `json:"access"`
}

// mergeInto applies the options set here over o, field by field, as
// cloudflared's setConfig does (rule over document over defaults).
func (r rawOrigin) mergeInto(o *Origin, bastion *bool) {
	if r.ConnectTimeout != nil {
		o.ConnectTimeout = time.Duration(*r.ConnectTimeout)
	}
	if r.TLSTimeout != nil {
		o.TLSTimeout = time.Duration(*r.TLSTimeout)
	}
	if r.HTTPHostHeader != nil {
		o.HTTPHostHeader = *r.HTTPHostHeader
	}
	if r.OriginServerName != nil {
		o.OriginServerName = *r.OriginServerName
	}
	if r.MatchSNIToHost != nil {
		o.MatchSNIToHost = *r.MatchSNIToHost
	}
	if r.NoTLSVerify != nil {
		o.NoTLSVerify = *r.NoTLSVerify
	}
	if r.HTTP2Origin != nil {
		o.HTTP2Origin = *r.HTTP2Origin
	}
	if r.BastionMode != nil {
		*bastion = *r.BastionMode
	}
}
