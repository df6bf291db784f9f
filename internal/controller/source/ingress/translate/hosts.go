package translate

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	tv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/hostname"
)

// checkTLS notes a tls section: Cloudflare terminates TLS at its edge with
// its own certificate for the hostname, so the Secrets it names are not used.
func (t *translator) checkTLS() {
	if len(t.ing.Spec.TLS) > 0 {
		t.note(NoteTLSIgnored, "spec.tls", "ignored: Cloudflare terminates TLS at its edge with a certificate of its own for each public hostname, so the Secrets named here are not used")
	}
}

// hostnames returns the Ingress's hostnames in Ingress order (so hosts[0] is
// "the first hostname"), possibly with duplicates, and false when the
// hostname annotation is bad: then nothing depending on hostnames is made,
// rather than falling back to hosts the user chose to override.
func (t *translator) hostnames() ([]host, bool) {
	if v, ok := t.ing.Annotations[tv1alpha1.AnnotationHostname]; ok {
		if strings.Contains(v, ",") {
			t.problem(tv1alpha1.AnnotationHostname, "takes one hostname, not a list: %s", clip(v))
			return nil, false
		}
		h, err := parseHost(v)
		if err != "" {
			t.problem(tv1alpha1.AnnotationHostname, "%s: %s", clip(v), err)
			return nil, false
		}
		return []host{h}, true
	}
	var hosts []host
	hasHost := false
	for i, r := range t.ing.Spec.Rules {
		if r.Host == "" {
			continue
		}
		hasHost = true
		h, err := parseHost(r.Host)
		if err != "" {
			t.problem(fmt.Sprintf("spec.rules[%d].host", i), "%s: %s", clip(r.Host), err)
			continue
		}
		hosts = append(hosts, h)
	}
	if hasHost {
		return hosts, true
	}
	// No hostname given: the backend Service's cluster DNS name, which
	// cloudflared resolves to it (the Ingress's own name resolves to
	// nothing unless a Service shares it).
	d := t.serviceHost()
	if d == "" {
		d = t.ing.Name + "." + t.ing.Namespace + "." + t.serviceDomain()
	}
	h, err := parseHost(d)
	if err != "" {
		t.problem("metadata.name", "default hostname %s: %s", clip(d), err)
		return nil, true
	}
	h.internal = true
	return []host{h}, true
}

// parseHost validates a hostname: ASCII letters (case-folded), digits and '-'
// per label, 1-63 characters a label, starting and ending with a letter or
// digit (as Kubernetes validates Ingress hosts), an optional leading "*."
// wildcard, at most 253 characters; one trailing dot is allowed.
func parseHost(raw string) (host, string) {
	h := strings.TrimSuffix(strings.TrimSpace(raw), ".")
	if len(h) > 253 {
		return host{}, "longer than 253 characters"
	}
	h = strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, h)
	name := strings.TrimPrefix(h, "*.")
	if name == "" {
		return host{}, "not a hostname"
	}
	for _, l := range strings.Split(name, ".") {
		if len(validation.IsDNS1123Label(l)) > 0 {
			return host{}, "each label must be 1-63 letters, digits or '-', starting and ending with a letter or digit; only a leading \"*.\" wildcard is allowed"
		}
	}
	return host{public: h, route: hostname.Normalize(h)}, ""
}

// published builds one PublicHostname per public host: a path per
// Ingress path, the path-less rule as the hostname's origin. A rule without
// host applies, as in Kubernetes, to every host of the Ingress (never to
// every host of the tunnel: a hostless rule would swallow other Ingresses'
// traffic). The default backend is the origin of each host that has no
// path-less rule yet, since explicit rules win over it in Kubernetes.
func (t *translator) published(hosts []host, opts *tv1alpha1.OriginOptions, access *tv1alpha1.Access) []*tv1alpha1.PublicHostname {
	_, override := t.ing.Annotations[tv1alpha1.AnnotationHostname]
	var all []string
	for _, h := range hosts {
		if !slices.Contains(all, h.public) {
			all = append(all, h.public)
		}
	}
	type key struct{ host, path string }
	routed := map[key]string{}
	specs := map[string]*tv1alpha1.PublicHostnameSpec{}
	add := func(field, h string, p networkingv1.HTTPIngressPath, path *string, origin tv1alpha1.Origin) {
		k := key{h, ptr.Deref(path, "")}
		desc := origin.Service.Name + ":" + strconv.Itoa(int(origin.Service.Port.IntVal))
		if prev, ok := routed[k]; ok {
			if prev != desc && field != "" {
				t.problem(field, "host %s path %s is already routed to %s; ignored", clip(h), clip(k.path), clip(prev))
			}
			return
		}
		routed[k] = desc
		spec := specs[h]
		if spec == nil {
			spec = &tv1alpha1.PublicHostnameSpec{TunnelRef: tv1alpha1.TunnelReference{Name: t.tunnel, Namespace: t.otherNamespace()}, Hostname: h, OriginRequest: opts, Access: access, DNS: tv1alpha1.DNSManaged}
			specs[h] = spec
		}
		if path == nil {
			spec.Origin = &origin
			return
		}
		pt := tv1alpha1.PathTypePrefix
		if p.PathType != nil && *p.PathType == networkingv1.PathTypeExact {
			pt = tv1alpha1.PathTypeExact
		}
		spec.Paths = append(spec.Paths, tv1alpha1.PathOrigin{Path: p.Path, PathType: pt, Origin: origin})
	}
	for i, r := range t.ing.Spec.Rules {
		targets := all
		if !override && r.Host != "" {
			h, err := parseHost(r.Host)
			if err != "" {
				continue // reported by hostnames
			}
			targets = []string{h.public}
		}
		if r.HTTP == nil {
			continue
		}
		for j, p := range r.HTTP.Paths {
			field := fmt.Sprintf("spec.rules[%d].http.paths[%d]", i, j)
			path, ok := t.path(field+".path", p)
			if !ok {
				continue
			}
			origin, ok := t.origin(field+".backend", &p.Backend)
			if !ok {
				continue
			}
			for _, h := range targets {
				add(field, h, p, path, origin)
			}
		}
	}
	if b := t.ing.Spec.DefaultBackend; b != nil {
		if origin, ok := t.origin("spec.defaultBackend", b); ok {
			for _, h := range all {
				add("", h, networkingv1.HTTPIngressPath{}, nil, origin)
			}
		}
	}
	var out []*tv1alpha1.PublicHostname
	slices.Sort(all)
	for _, h := range all {
		spec := specs[h]
		if spec == nil {
			continue // no backend reached it
		}
		out = append(out, &tv1alpha1.PublicHostname{
			TypeMeta:   metav1.TypeMeta{APIVersion: tv1alpha1.SchemeGroupVersion.String(), Kind: tv1alpha1.PublicHostnameKind},
			ObjectMeta: t.meta(KindPublicHostname, h),
			Spec:       *spec,
		})
	}
	return out
}

// origin is a backend as a PublicHostname's Service origin, its port
// resolved to a number (a named port is the Service port of that name).
func (t *translator) origin(field string, b *networkingv1.IngressBackend) (tv1alpha1.Origin, bool) {
	name, port, ok := t.backend(field, b)
	if !ok {
		return tv1alpha1.Origin{}, false
	}
	return tv1alpha1.Origin{Service: &tv1alpha1.ServiceOrigin{Name: name, Port: intstr.FromInt32(port), Protocol: t.protocol()}}, true
}

// path turns an Ingress path into cloudflared's path, a Go regular
// expression matched UNANCHORED against the request path. So the literal is
// quoted and anchored: Exact "/foo" is "^/foo$"; Prefix "/foo" is
// "^/foo(/|$)", Kubernetes' element-wise prefix (it matches "/foo/bar" but not
// "/foobar"); ImplementationSpecific is treated as Prefix. A prefix of "/" (or
// an empty path) matches everything and is left out.
func (t *translator) path(field string, p networkingv1.HTTPIngressPath) (*string, bool) {
	if p.Path == "" {
		return nil, true
	}
	if !strings.HasPrefix(p.Path, "/") {
		t.problem(field, "%s must start with '/'", clip(p.Path))
		return nil, false
	}
	if !utf8.ValidString(p.Path) { // cloudflared's regular expressions are UTF-8
		t.problem(field, "%s is not valid UTF-8", clip(p.Path))
		return nil, false
	}
	if p.PathType != nil && *p.PathType == networkingv1.PathTypeExact {
		return ptr.To("^" + regexp.QuoteMeta(p.Path) + "$"), true
	}
	prefix := strings.TrimRight(p.Path, "/")
	if prefix == "" {
		return nil, true
	}
	return ptr.To("^" + regexp.QuoteMeta(prefix) + prefixSuffix), true
}

const prefixSuffix = "(/|$)"
