package translate

// Access: which check each route's hostnames are published with, and what
// is withheld when routes disagree or an annotation cannot be used.

import (
	"fmt"
	"slices"

	"k8s.io/utils/ptr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/annotation"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/gatewayapi"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
)

// Held are PublicHostnames kept as they are while the binding's routes ask
// for an Access check they cannot have: those of routes whose access
// annotation cannot be used, when such a route is the oldest to name the
// hostname (a newer route never holds, freezes or takes down a hostname an
// older one serves). Only one with an Access check is kept: a route asking
// for a check is never left open meanwhile, a protected hostname never
// taken down.
type Held struct {
	Routes          []string
	PublicHostnames []string
}

// Keeps says whether ph is held.
func (h Held) Keeps(ph *v1alpha1.PublicHostname) bool {
	a := ph.Spec.Access
	if a == nil || !ptr.Deref(a.Required, true) {
		return false
	}
	return slices.Contains(h.PublicHostnames, ph.Name) || slices.ContainsFunc(h.Routes, func(r string) bool {
		return ph.Labels[LabelRoute] == publish.LabelValue(r)
	})
}

// claim is the first (oldest) route to name a hostname, and what it asks
// for: the hostname is published with its check.
type claim struct {
	route   string
	access  *v1alpha1.Access
	invalid bool
}

// publisher gathers the routes' hostnames, oldest route first, and decides
// what is published.
type publisher struct {
	binding *v1alpha1.GatewayBinding
	origin  string
	res     *Result
	claims  map[string]*claim
	wanted  map[int]*v1alpha1.PublicHostname
}

// route adds an accepted route's hostnames.
func (p *publisher) route(route *gwv1.HTTPRoute, hosts []gatewayapi.Hostname) {
	id := "HTTPRoute/" + route.Name
	c := annotation.ChildAccess(p.binding.Spec.Access, "the binding's spec.access", route.Annotations)
	access, problem := c.Access, c.Problem
	if c.Refused != "" {
		// Published with the binding's check all the same: the route is
		// told, never let out.
		p.res.Refused = append(p.res.Refused, id+": "+c.Refused)
	}
	if problem != "" {
		// What the route published with an Access check stays as it
		// was; nothing is published without the check.
		p.res.Held.Routes = append(p.res.Held.Routes, route.Name)
	}
	for _, h := range hosts {
		bh := v1alpha1.BoundHostname{Hostname: h.Name, Route: id}
		switch {
		case h.Problem != "":
			bh.State, bh.Message = v1alpha1.HostnameNotSupported, h.Problem
		case problem != "":
			bh.State, bh.PublicHostname = v1alpha1.HostnameInvalid, p.name(h.Name)
			bh.Message = problem + "; what the route published with an Access check stays as it was"
			if first, _ := p.claim(h.Name, route.Name, nil, true); first {
				// Kept by name too: the hostname's PublicHostname may
				// be labelled with a younger route it now yields to.
				p.res.Held.PublicHostnames = append(p.res.Held.PublicHostnames, bh.PublicHostname)
			}
		default:
			first, lost := p.claim(h.Name, route.Name, access, false)
			if lost {
				bh.State = v1alpha1.HostnameConflict
				bh.Message = fmt.Sprintf("an older route publishes it with another Access check (annotation %s, or spec.access): the oldest route's check is the hostname's; this route's rules for it are not published until they agree", v1alpha1.AnnotationAccessPolicies)
				p.res.Hostnames = append(p.res.Hostnames, bh)
				continue
			}
			if !first {
				continue // an older route of this binding publishes it, alike
			}
			if p.wanted == nil {
				p.wanted = map[int]*v1alpha1.PublicHostname{}
			}
			ph := publicHostname(p.binding, route.Name, h.Name, p.origin, access)
			p.wanted[len(p.res.Hostnames)] = ph
			bh.State, bh.PublicHostname = v1alpha1.HostnamePending, ph.Name
		}
		p.res.Hostnames = append(p.res.Hostnames, bh)
	}
}

// claim records a route naming a hostname: first when it is the oldest to
// name it (its check is the hostname's); lost when an older route asks for
// another check, or cannot be used, and this route's rules for it are not
// published. A newer route never changes what an older one publishes.
func (p *publisher) claim(host, route string, access *v1alpha1.Access, invalid bool) (first, lost bool) {
	c, ok := p.claims[host]
	if !ok {
		p.claims[host] = &claim{route: route, access: access, invalid: invalid}
		return true, false
	}
	if invalid {
		return false, false
	}
	return false, c.invalid || !gatewayapi.SameAccess(c.access, access)
}

// publish lists the wanted PublicHostnames.
func (p *publisher) publish() {
	slices.Sort(p.res.Held.PublicHostnames)
	for i := range p.res.Hostnames {
		if ph, ok := p.wanted[i]; ok {
			p.res.Published = append(p.res.Published, ph)
		}
	}
}

func (p *publisher) name(host string) string {
	return publish.ObjectName(p.binding.Name, publish.KindPublicHostname, host)
}
