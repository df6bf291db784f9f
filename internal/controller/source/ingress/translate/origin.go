package translate

import (
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	tv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
)

// protocols an origin-protocol annotation may name.
var protocols = []string{tv1alpha1.ProtocolHTTP, tv1alpha1.ProtocolHTTPS, tv1alpha1.ProtocolHTTP2, tv1alpha1.ProtocolTCP, tv1alpha1.ProtocolSSH, tv1alpha1.ProtocolRDP}

// protocol is the origin-protocol annotation, http by default. A bad value
// is a Problem (and nothing is published, so the working rules stay).
func (t *translator) protocol() string {
	v, ok := t.ing.Annotations[tv1alpha1.AnnotationOriginProtocol]
	if !ok {
		return tv1alpha1.ProtocolHTTP
	}
	p := strings.ToLower(strings.TrimSpace(v))
	for _, want := range protocols {
		if p == want {
			return p
		}
	}
	if p == "h2c" || p == "grpc" {
		t.problem(tv1alpha1.AnnotationOriginProtocol, "%s: cloudflared speaks HTTP/2 to an origin only over TLS; use http2 for an HTTPS origin that speaks HTTP/2 (gRPC)", clip(v))
		return tv1alpha1.ProtocolHTTP
	}
	t.problem(tv1alpha1.AnnotationOriginProtocol, "must be one of %s, not %s", strings.Join(protocols, ", "), clip(v))
	return tv1alpha1.ProtocolHTTP
}

// originOptions parses the origin-* annotations. TLS verification stays on
// unless origin-no-tls-verify is "true".
func (t *translator) originOptions() *tv1alpha1.OriginOptions {
	ann := t.ing.Annotations
	o := &tv1alpha1.OriginOptions{}
	if v, ok := ann[tv1alpha1.AnnotationOriginServerName]; ok {
		if h, err := publish.Hostname(v); err != "" || strings.HasPrefix(h, "*") {
			t.problem(tv1alpha1.AnnotationOriginServerName, "%s is not a hostname", clip(v))
		} else {
			o.OriginServerName = ptr.To(h)
		}
	}
	o.MatchSNIToHost = t.boolAnnotation(tv1alpha1.AnnotationOriginMatchSNIToHost)
	o.NoTLSVerify = t.boolAnnotation(tv1alpha1.AnnotationOriginNoTLSVerify)
	if v, ok := ann[tv1alpha1.AnnotationOriginHostHeader]; ok {
		if h := strings.TrimSpace(v); h == "" || strings.ContainsAny(h, " \t\r\n/") || len(h) > 253 {
			t.problem(tv1alpha1.AnnotationOriginHostHeader, "%s is not a host", clip(v))
		} else {
			o.HTTPHostHeader = ptr.To(h)
		}
	}
	o.ConnectTimeoutSeconds = t.seconds(tv1alpha1.AnnotationOriginConnectTimeout)
	o.TLSTimeoutSeconds = t.seconds(tv1alpha1.AnnotationOriginTLSTimeout)
	if v, ok := ann[tv1alpha1.AnnotationOriginCASecret]; ok {
		name, key, hasKey := strings.Cut(strings.TrimSpace(v), "/")
		if !hasKey {
			key = tv1alpha1.DefaultCAKey
		}
		switch {
		case len(validation.IsDNS1123Subdomain(name)) > 0 || len(validation.IsConfigMapKey(key)) > 0:
			t.problem(tv1alpha1.AnnotationOriginCASecret, "must name a Secret in this namespace, optionally with its key (<secret> or <secret>/<key>; the key defaults to %s), not %s", tv1alpha1.DefaultCAKey, clip(v))
		case ptr.Deref(o.NoTLSVerify, false):
			t.problem(tv1alpha1.AnnotationOriginCASecret, "is ignored when %s is \"true\": set one or the other", tv1alpha1.AnnotationOriginNoTLSVerify)
		default:
			o.CAPoolSecretRef = &tv1alpha1.LocalSecretKeySelector{Name: name, Key: key}
		}
	}
	if *o == (tv1alpha1.OriginOptions{}) {
		return nil
	}
	return o
}

func (t *translator) boolAnnotation(key string) *bool {
	v, ok := t.ing.Annotations[key]
	if !ok {
		return nil
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true":
		return ptr.To(true)
	case "false":
		return ptr.To(false)
	}
	t.problem(key, `must be "true" or "false", not %s`, clip(v))
	return nil
}

// seconds parses a timeout: a duration ("10s", "1m") or a number of
// seconds, whole seconds from 1 to 300.
func (t *translator) seconds(key string) *int64 {
	v, ok := t.ing.Annotations[key]
	if !ok {
		return nil
	}
	s := strings.TrimSpace(v)
	d, err := time.ParseDuration(s)
	if err != nil {
		d, err = time.ParseDuration(s + "s")
	}
	if err != nil || d%time.Second != 0 || d < time.Second || d > 300*time.Second {
		t.problem(key, "must be a whole number of seconds from 1s to 300s (for example \"10s\"), not %s", clip(v))
		return nil
	}
	return ptr.To(int64(d / time.Second))
}

// access parses the access-* annotations. It fails closed: once any of them
// is present, the team and the audience tags must be right, or nothing is
// published (the hostnames keep the rules they had, with their Access check
// if they had one) — never published without the check.
func (t *translator) access() *tv1alpha1.Access {
	ann := t.ing.Annotations
	team, hasTeam := ann[tv1alpha1.AnnotationAccessTeam]
	auds, hasAuds := ann[tv1alpha1.AnnotationAccessAudTags]
	_, hasRequired := ann[tv1alpha1.AnnotationAccessRequired]
	if policies, ok := ann[tv1alpha1.AnnotationAccessPolicies]; ok {
		return t.managedAccess(policies, hasTeam || hasAuds, hasRequired)
	}
	if !hasTeam && !hasAuds && !hasRequired {
		return nil
	}
	const closed = "; the hostnames are not published without their Access check"
	a := &tv1alpha1.Access{TeamName: strings.TrimSpace(team)}
	ok := true
	if !hasTeam {
		t.problem(tv1alpha1.AnnotationAccessTeam, "required with the other access annotations: the Zero Trust team name (the <team> of <team>.cloudflareaccess.com)"+closed)
		ok = false
	} else if !teamName(a.TeamName) {
		t.problem(tv1alpha1.AnnotationAccessTeam, "%s is not a Zero Trust team name (the <team> of <team>.cloudflareaccess.com)"+closed, clip(team))
		ok = false
	}
	for _, tag := range strings.Split(auds, ",") {
		if tag = strings.TrimSpace(tag); tag != "" {
			a.AudTags = append(a.AudTags, strings.ToLower(tag))
		}
	}
	if len(a.AudTags) == 0 {
		t.problem(tv1alpha1.AnnotationAccessAudTags, "required with the other access annotations: the audience tags of the Access applications allowed, comma-separated"+closed)
		ok = false
	}
	for _, tag := range a.AudTags {
		if !audTag(tag) {
			t.problem(tv1alpha1.AnnotationAccessAudTags, "%s is not an Access audience tag (64 hexadecimal digits)"+closed, clip(tag))
			ok = false
		}
	}
	if hasRequired {
		req := t.boolAnnotation(tv1alpha1.AnnotationAccessRequired)
		if req == nil {
			ok = false
		}
		a.Required = req
	}
	if a.Required == nil {
		a.Required = ptr.To(true)
	}
	if !ok {
		return nil
	}
	return a
}

// managedAccess parses access-policies: the AccessPolicy names of an Access
// application made for each hostname. It fails closed as access does.
func (t *translator) managedAccess(list string, explicit, hasRequired bool) *tv1alpha1.Access {
	const closed = "; the hostnames are not published without their Access check"
	ok := true
	if explicit {
		t.problem(tv1alpha1.AnnotationAccessPolicies, "set either access-policies (an Access application made for each hostname) or access-team and access-aud (applications made elsewhere), not both"+closed)
		ok = false
	}
	a := &tv1alpha1.Access{Required: ptr.To(true)}
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if len(validation.IsDNS1123Subdomain(name)) > 0 {
			t.problem(tv1alpha1.AnnotationAccessPolicies, "%s is not the name of an AccessPolicy"+closed, clip(name))
			ok = false
			continue
		}
		a.Policies = append(a.Policies, tv1alpha1.AccessPolicyName{Name: name})
	}
	if len(a.Policies) == 0 && ok {
		t.problem(tv1alpha1.AnnotationAccessPolicies, "names no AccessPolicy: the AccessPolicy objects of the namespace, comma-separated"+closed)
		ok = false
	}
	if hasRequired {
		if a.Required = t.boolAnnotation(tv1alpha1.AnnotationAccessRequired); a.Required == nil {
			ok = false
		}
	}
	if !ok {
		return nil
	}
	return a
}

func teamName(s string) bool { return len(s) <= 63 && len(validation.IsDNS1123Label(s)) == 0 }

func audTag(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
