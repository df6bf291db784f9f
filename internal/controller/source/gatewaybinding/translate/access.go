package translate

// Access: which check each route's hostnames are published with, and what
// is withheld when routes disagree or an annotation cannot be used.

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/utils/ptr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/annotation"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/gatewayapi"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
)

// Held are PublicHostnames kept as they are while the binding's routes ask
// for an Access check they cannot have: those of routes whose access
// annotation cannot be used, and those of hostnames whose routes disagree
// on their check. Only one with an Access check is kept: a route asking for
// a check is never left open meanwhile, a protected hostname never taken
// down.
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

// claim is the first route to name a hostname, and what it asks for.
type claim struct {
	route   string
	access  *v1alpha1.Access
	invalid bool
	// entries are the indices in Result.Hostnames of the routes that
	// publish it (the first, and later ones that disagree on Access).
	entries  []int
	conflict bool
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
			p.claim(h.Name, route.Name, nil, true)
			// Kept by name too: the hostname's PublicHostname may be
			// labelled with a younger route it now yields to.
			p.res.Held.PublicHostnames = append(p.res.Held.PublicHostnames, bh.PublicHostname)
		default:
			if !p.claim(h.Name, route.Name, access, false) {
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

// claim records a route naming a hostname and says whether the route's
// entry is to be listed: the first route's is, a later one's only when it
// asks for another Access check (a conflict, which withholds the hostname).
func (p *publisher) claim(host, route string, access *v1alpha1.Access, invalid bool) bool {
	c, ok := p.claims[host]
	if !ok {
		p.claims[host] = &claim{route: route, access: access, invalid: invalid, entries: []int{len(p.res.Hostnames)}}
		return true
	}
	if c.invalid || invalid || gatewayapi.SameAccess(c.access, access) {
		return false
	}
	c.conflict = true
	c.entries = append(c.entries, len(p.res.Hostnames))
	return true
}

// publish lists the wanted PublicHostnames. A hostname whose routes ask for
// different Access checks is published by none of them: both are told, and
// the PublicHostname already made for it stays as it was.
func (p *publisher) publish() {
	for host, c := range p.claims {
		if !c.conflict {
			continue
		}
		var routes []string
		for _, i := range c.entries {
			routes = append(routes, p.res.Hostnames[i].Route)
		}
		for _, i := range c.entries {
			h := &p.res.Hostnames[i]
			h.State = v1alpha1.HostnameConflict
			h.Message = fmt.Sprintf("%s ask for different Access checks (annotation %s, or spec.access): not published until they agree; what was published with an Access check stays as it was", strings.Join(routes, " and "), v1alpha1.AnnotationAccessPolicies)
			delete(p.wanted, i)
		}
		p.res.Held.PublicHostnames = append(p.res.Held.PublicHostnames, p.name(host))
	}
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
