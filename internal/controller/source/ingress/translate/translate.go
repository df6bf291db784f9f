// Package translate turns an Ingress on a Cloudflare tunnel into the managed
// resources (HostnameRoute, VPCService) and public hostnames it needs: it
// reads the Ingress's rules, paths and backends into the annotation
// sources' core (expose), which decides. It is pure — no clients, no I/O —
// so the Ingress controller only applies what it returns, and every
// translation decision is tested (golden corpus, tables, fuzzing) here.
package translate

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/expose"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
)

// Labels on every object made from an Ingress, so the controller can list
// what an Ingress (or a tunnel) owns. Values go through LabelValue.
const (
	LabelIngress = publish.LabelIngress
	LabelTunnel  = publish.LabelTunnel
)

// Kind abbreviations used in the names of objects made from an Ingress.
const (
	KindHostnameRoute  = publish.KindHostnameRoute
	KindVPCService     = publish.KindVPCService
	KindDNSRecord      = publish.KindDNSRecord
	KindPublicHostname = publish.KindPublicHostname
)

// CatchAllService ends every remote configuration.
const CatchAllService = publish.CatchAllService

// Input is everything a translation depends on.
type Input struct {
	Ingress *networkingv1.Ingress
	Tunnel  expose.Tunnel
	// Services of the Ingress's namespace by name, to resolve named ports.
	Services map[string]*corev1.Service
	// ClusterDomain of Service DNS names; "" is cluster.local.
	ClusterDomain string
}

// Translate computes the MRs and public rules an Ingress on a tunnel needs.
func Translate(in Input) expose.Result {
	ing := in.Ingress
	if ing == nil {
		return expose.Result{Problems: []publish.Problem{{Field: "ingress", Message: "no Ingress"}}}
	}
	r := expose.Translate(expose.Input{
		Namespace:     ing.Namespace,
		Annotations:   ing.Annotations,
		Owner:         owner(ing),
		Tunnel:        in.Tunnel,
		Routing:       routing(ing),
		Services:      in.Services,
		ClusterDomain: in.ClusterDomain,
	})
	if len(r.Hostnames) > 0 && len(ing.Spec.TLS) > 0 {
		// Cloudflare terminates TLS at its edge with its own certificate
		// for the hostname, so the Secrets a tls section names are not used.
		r.Notes = append(r.Notes, expose.Note{Reason: expose.NoteTLSIgnored, Field: "spec.tls", Message: "ignored: Cloudflare terminates TLS at its edge with a certificate of its own for each public hostname, so the Secrets named here are not used"})
	}
	return r
}

// owner is the Ingress as the owner of what is made for it; it blocks the
// Ingress's deletion, which the provider may (it sets its finalizer).
func owner(ing *networkingv1.Ingress) expose.Owner {
	return expose.Owner{APIVersion: networkingv1.SchemeGroupVersion.String(), Kind: "Ingress", Name: ing.Name, UID: ing.UID, Label: LabelIngress, BlockOwnerDeletion: true}
}

// routing is the Ingress's rules and default backend as the core reads
// them, each with the field it is written in. An ImplementationSpecific
// path is a Prefix.
func routing(ing *networkingv1.Ingress) expose.Routing {
	r := expose.Routing{HostsField: "spec.rules[].host"}
	if b := ing.Spec.DefaultBackend; b != nil {
		d := backendOf("spec.defaultBackend", b)
		r.Default = &d
	}
	for i, rule := range ing.Spec.Rules {
		out := expose.Rule{Host: rule.Host, HostField: fmt.Sprintf("spec.rules[%d].host", i)}
		if rule.HTTP != nil {
			for j, p := range rule.HTTP.Paths {
				field := fmt.Sprintf("spec.rules[%d].http.paths[%d]", i, j)
				out.Paths = append(out.Paths, expose.Path{
					Field:   field,
					Path:    p.Path,
					Exact:   p.PathType != nil && *p.PathType == networkingv1.PathTypeExact,
					Backend: backendOf(field+".backend", &p.Backend),
				})
			}
		}
		r.Rules = append(r.Rules, out)
	}
	return r
}

// backendOf is an Ingress backend as the core reads it.
func backendOf(field string, b *networkingv1.IngressBackend) expose.Backend {
	out := expose.Backend{Field: field}
	if b.Resource != nil {
		out.Resource = &expose.Resource{Kind: b.Resource.Kind, Name: b.Resource.Name}
	}
	if s := b.Service; s != nil {
		out.Service = &expose.ServicePort{Name: s.Name, Number: s.Port.Number, PortName: s.Port.Name}
	}
	return out
}
