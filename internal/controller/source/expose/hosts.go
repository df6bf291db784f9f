package expose

import (
	"slices"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	tv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/hostname"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
)

// hostnames returns the source's hostnames in its order (so hosts[0] is
// "the first hostname"), possibly with duplicates, and false when the
// hostname annotation is bad: then nothing depending on hostnames is made,
// rather than falling back to hosts the user chose to override.
func (t *translator) hostnames() ([]host, bool) {
	if v, ok := t.ann[tv1alpha1.AnnotationHostname]; ok {
		if strings.Contains(v, ",") {
			t.problem(tv1alpha1.AnnotationHostname, "takes one hostname, not a list: %s", publish.Clip(v))
			return nil, false
		}
		h, err := parseHost(v)
		if err != "" {
			t.problem(tv1alpha1.AnnotationHostname, "%s: %s", publish.Clip(v), err)
			return nil, false
		}
		return []host{h}, true
	}
	var hosts []host
	hasHost := false
	for _, r := range t.in.Routing.Rules {
		if r.Host == "" {
			continue
		}
		hasHost = true
		h, err := parseHost(r.Host)
		if err != "" {
			t.problem(r.HostField, "%s: %s", publish.Clip(r.Host), err)
			continue
		}
		hosts = append(hosts, h)
	}
	if hasHost {
		return hosts, true
	}
	// No hostname given: the backend Service's cluster DNS name, which
	// cloudflared resolves to it (an Ingress's own name resolves to
	// nothing unless a Service shares it).
	d := t.serviceHost()
	if d == "" {
		d = t.in.Owner.Name + "." + t.in.Namespace + "." + t.serviceDomain()
	}
	h, err := parseHost(d)
	if err != "" {
		t.problem("metadata.name", "default hostname %s: %s", publish.Clip(d), err)
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
// rule path, the path-less rule as the hostname's origin. A rule without
// host applies, as in Kubernetes, to every host of the source (never to
// every host of the tunnel: a hostless rule would swallow other sources'
// traffic). The default backend is the origin of each host that has no
// path-less rule yet, since explicit rules win over it in Kubernetes.
func (t *translator) published(hosts []host, opts *tv1alpha1.OriginOptions, access *tv1alpha1.Access) []*tv1alpha1.PublicHostname {
	_, override := t.ann[tv1alpha1.AnnotationHostname]
	var all []string
	for _, h := range hosts {
		if !slices.Contains(all, h.public) {
			all = append(all, h.public)
		}
	}
	p := &paths{t: t, routed: map[pathKey]string{}, specs: map[string]*tv1alpha1.PublicHostnameSpec{}, opts: opts, access: access}
	for _, r := range t.in.Routing.Rules {
		targets := all
		if !override && r.Host != "" {
			h, err := parseHost(r.Host)
			if err != "" {
				continue // reported by hostnames
			}
			targets = []string{h.public}
		}
		for _, rp := range r.Paths {
			p.addRulePath(rp, targets)
		}
	}
	if b := t.in.Routing.Default; b != nil {
		if origin, ok := t.origin(b); ok {
			for _, h := range all {
				p.add("", h, Path{}, nil, origin)
			}
		}
	}
	var out []*tv1alpha1.PublicHostname
	slices.Sort(all)
	for _, h := range all {
		spec := p.specs[h]
		if spec == nil {
			continue // no backend reached it
		}
		out = append(out, &tv1alpha1.PublicHostname{
			TypeMeta:   metav1.TypeMeta{APIVersion: tv1alpha1.SchemeGroupVersion.String(), Kind: tv1alpha1.PublicHostnameKind},
			ObjectMeta: t.meta(publish.KindPublicHostname, h),
			Spec:       *spec,
		})
	}
	return out
}

type pathKey struct{ host, path string }

// paths gathers the public hostnames' specs path by path; the first
// backend routed for a host and path wins.
type paths struct {
	t      *translator
	routed map[pathKey]string
	specs  map[string]*tv1alpha1.PublicHostnameSpec
	opts   *tv1alpha1.OriginOptions
	access *tv1alpha1.Access
}

// addRulePath adds a rule's path to each of its target hosts.
func (p *paths) addRulePath(rp Path, targets []string) {
	path, ok := p.t.path(rp)
	if !ok {
		return
	}
	origin, ok := p.t.origin(&rp.Backend)
	if !ok {
		return
	}
	for _, h := range targets {
		p.add(rp.Field, h, rp, path, origin)
	}
}

// add routes host h's path (nil: the host's origin) to origin, unless it
// is routed already (a Problem at field when to another backend).
func (p *paths) add(field, h string, rp Path, path *string, origin tv1alpha1.Origin) {
	k := pathKey{h, ptr.Deref(path, "")}
	desc := origin.Service.Name + ":" + strconv.Itoa(int(origin.Service.Port.IntVal))
	if prev, ok := p.routed[k]; ok {
		if prev != desc && field != "" {
			p.t.problem(field, "host %s path %s is already routed to %s; ignored", publish.Clip(h), publish.Clip(k.path), publish.Clip(prev))
		}
		return
	}
	p.routed[k] = desc
	spec := p.specs[h]
	if spec == nil {
		spec = &tv1alpha1.PublicHostnameSpec{TunnelRef: tv1alpha1.TunnelReference{Name: p.t.tunnel, Namespace: p.t.otherNamespace()}, Hostname: h, OriginRequest: p.opts, Access: p.access, DNS: tv1alpha1.DNSManaged}
		p.specs[h] = spec
	}
	if path == nil {
		spec.Origin = &origin
		return
	}
	pt := tv1alpha1.PathTypePrefix
	if rp.Exact {
		pt = tv1alpha1.PathTypeExact
	}
	spec.Paths = append(spec.Paths, tv1alpha1.PathOrigin{Path: rp.Path, PathType: pt, Origin: origin})
}

// origin is a backend as a PublicHostname's Service origin, its port
// resolved to a number (a named port is the Service port of that name).
func (t *translator) origin(b *Backend) (tv1alpha1.Origin, bool) {
	name, port, ok := t.backend(b)
	if !ok {
		return tv1alpha1.Origin{}, false
	}
	return tv1alpha1.Origin{Service: &tv1alpha1.ServiceOrigin{Name: name, Port: intstr.FromInt32(port), Protocol: t.protocol()}}, true
}

// path is a rule's path as cloudflared matches it (publish.LiteralPath),
// the key two rules of a host conflict on; nil for every path. An empty
// path is every path, as in an Ingress.
func (t *translator) path(p Path) (*string, bool) {
	if p.Path == "" {
		return nil, true
	}
	re, bad := publish.LiteralPath(p.Path, p.Exact)
	if bad != "" {
		t.problem(p.Field+".path", "%s", bad)
		return nil, false
	}
	return re, true
}
