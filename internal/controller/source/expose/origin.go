package expose

import (
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	tv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/annotation"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
)

// Protocols an origin-protocol (or a Service's protocol) annotation may
// name.
var Protocols = []string{tv1alpha1.ProtocolHTTP, tv1alpha1.ProtocolHTTPS, tv1alpha1.ProtocolHTTP2, tv1alpha1.ProtocolTCP, tv1alpha1.ProtocolSSH, tv1alpha1.ProtocolRDP}

// protocol is the origin-protocol annotation, http by default. A bad value
// is a Problem (and nothing is published, so the working rules stay).
func (t *translator) protocol() string {
	v, ok := t.ann[tv1alpha1.AnnotationOriginProtocol]
	if !ok {
		return tv1alpha1.ProtocolHTTP
	}
	p := strings.ToLower(strings.TrimSpace(v))
	if slices.Contains(Protocols, p) {
		return p
	}
	if p == "h2c" || p == "grpc" {
		t.problem(tv1alpha1.AnnotationOriginProtocol, "%s: cloudflared speaks HTTP/2 to an origin only over TLS; use http2 for an HTTPS origin that speaks HTTP/2 (gRPC)", publish.Clip(v))
		return tv1alpha1.ProtocolHTTP
	}
	t.problem(tv1alpha1.AnnotationOriginProtocol, "must be one of %s, not %s", strings.Join(Protocols, ", "), publish.Clip(v))
	return tv1alpha1.ProtocolHTTP
}

// originOptions parses the origin-* annotations. TLS verification stays on
// unless origin-no-tls-verify is "true".
func (t *translator) originOptions() *tv1alpha1.OriginOptions {
	ann := t.ann
	o := &tv1alpha1.OriginOptions{}
	if v, ok := ann[tv1alpha1.AnnotationOriginServerName]; ok {
		if h, err := publish.Hostname(v); err != "" || strings.HasPrefix(h, "*") {
			t.problem(tv1alpha1.AnnotationOriginServerName, "%s is not a hostname", publish.Clip(v))
		} else {
			o.OriginServerName = ptr.To(h)
		}
	}
	o.MatchSNIToHost = t.boolAnnotation(tv1alpha1.AnnotationOriginMatchSNIToHost)
	o.NoTLSVerify = t.boolAnnotation(tv1alpha1.AnnotationOriginNoTLSVerify)
	if v, ok := ann[tv1alpha1.AnnotationOriginHostHeader]; ok {
		if h := strings.TrimSpace(v); h == "" || strings.ContainsAny(h, " \t\r\n/") || len(h) > 253 {
			t.problem(tv1alpha1.AnnotationOriginHostHeader, "%s is not a host", publish.Clip(v))
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
			t.problem(tv1alpha1.AnnotationOriginCASecret, "must name a Secret in this namespace, optionally with its key (<secret> or <secret>/<key>; the key defaults to %s), not %s", tv1alpha1.DefaultCAKey, publish.Clip(v))
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

// boolAnnotation is a "true" or "false" annotation, read as every source
// reads it.
func (t *translator) boolAnnotation(key string) *bool {
	r := annotation.Read(t.ann)
	v := r.Bool(key)
	t.problems = append(t.problems, r.Problems...)
	return v
}

// seconds parses a timeout: a duration ("10s", "1m") or a number of
// seconds, whole seconds from 1 to 300.
func (t *translator) seconds(key string) *int64 {
	v, ok := t.ann[key]
	if !ok {
		return nil
	}
	s := strings.TrimSpace(v)
	d, err := time.ParseDuration(s)
	if err != nil {
		d, err = time.ParseDuration(s + "s")
	}
	if err != nil || d%time.Second != 0 || d < time.Second || d > 300*time.Second {
		t.problem(key, "must be a whole number of seconds from 1s to 300s (for example \"10s\"), not %s", publish.Clip(v))
		return nil
	}
	return ptr.To(int64(d / time.Second))
}

// access parses the access-* annotations as every source does; it fails
// closed (annotation.Reader.Access).
func (t *translator) access() *tv1alpha1.Access {
	r := annotation.Read(t.ann)
	a := r.Access()
	t.problems = append(t.problems, r.Problems...)
	return a
}
