package translate

// Access and load balancing: which check and load balancing each route's
// hostnames are published with, and what is withheld or kept when routes
// disagree or an annotation cannot be used.

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

// Keeps says whether ph, which no route wants as it is now, stays as it
// is: its route's acceptance is out of date (KeepRoutes), its hostname's
// oldest route's lb-* annotations cannot be used (Kept), or it is held for
// its Access check (Held).
func (r Result) Keeps(ph *v1alpha1.PublicHostname) bool {
	return slices.ContainsFunc(r.KeepRoutes, func(route string) bool { return ph.Labels[LabelRoute] == publish.LabelValue(route) }) ||
		slices.Contains(r.Kept, ph.Name) || r.Held.Keeps(ph)
}

// claim is the first (oldest) route to name a hostname, and what it asks
// for: the hostname is published with its check and load balancing.
type claim struct {
	route  string
	access *v1alpha1.Access
	lb     *v1alpha1.LoadBalancing
	// held says why a newer route cannot serve the hostname: the claiming
	// route's annotation cannot be used, and the hostname stays as it was.
	// "" when the claim can be used.
	held string
	// published is the PublicHostname wanted for the hostname; nil when
	// held.
	published *v1alpha1.PublicHostname
}

// Why a newer route's rules for a hostname are not published.
var (
	accessDisagrees = fmt.Sprintf("an older route publishes it with another Access check (annotation %s, or spec.access): the oldest route's check is the hostname's; this route's rules for it are not published until they agree", v1alpha1.AnnotationAccessPolicies)
	lbDisagrees     = fmt.Sprintf("an older route load-balances it otherwise (annotation %s and its siblings): the oldest route's load balancing is the hostname's; this route's rules for it are not published until they agree", v1alpha1.AnnotationLBPool)
	lbHeld          = fmt.Sprintf("the lb-* annotations of an older route (annotation %s and its siblings) cannot be used, and the hostname stays as that route published it; this route's rules for it are not published until they are corrected", v1alpha1.AnnotationLBPool)
)

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
	if c.Refused != "" {
		// Published with the binding's check all the same: the route is
		// told, never let out.
		p.res.Refused = append(p.res.Refused, id+": "+c.Refused)
	}
	if c.Problem != "" {
		// What the route published with an Access check stays as it
		// was; nothing is published without the check.
		p.res.Held.Routes = append(p.res.Held.Routes, route.Name)
	}
	lb, lbProblem := annotation.RouteLoadBalancing(route.Annotations, publishable(hosts))
	for _, h := range hosts {
		bh := v1alpha1.BoundHostname{Hostname: h.Name, Route: id}
		switch {
		case h.Problem != "":
			bh.State, bh.Message = v1alpha1.HostnameNotSupported, h.Problem
		case c.Problem != "":
			bh.State, bh.PublicHostname = v1alpha1.HostnameInvalid, p.name(h.Name)
			bh.Message = c.Problem + "; what the route published with an Access check stays as it was"
			if first, _ := p.claim(h.Name, claim{route: route.Name, held: accessDisagrees}); first {
				// Kept by name too: the hostname's PublicHostname may
				// be labelled with a younger route it now yields to.
				p.res.Held.PublicHostnames = append(p.res.Held.PublicHostnames, bh.PublicHostname)
			}
		case lbProblem != "":
			// As a missing backend does on a native Gateway, a bad lb-*
			// annotation keeps what the route's hostnames publish: never
			// a CNAME instead of the load balancer asked for, nor a
			// working hostname taken down by a typo.
			bh.State, bh.PublicHostname, bh.Message = v1alpha1.HostnameInvalid, p.name(h.Name), lbProblem
			if first, _ := p.claim(h.Name, claim{route: route.Name, held: lbHeld}); first {
				p.res.Kept = append(p.res.Kept, bh.PublicHostname)
			}
		default:
			if !p.publishes(&bh, claim{route: route.Name, access: c.Access, lb: lb}) {
				continue // an older route of this binding publishes it, alike
			}
		}
		p.res.Hostnames = append(p.res.Hostnames, bh)
	}
}

// publishes decides what becomes of a hostname a route asks for as want
// says, when its annotations can be used: published by it (the oldest
// route naming it), a conflict with an older route, or, when an older
// route publishes it alike, not listed (false).
func (p *publisher) publishes(bh *v1alpha1.BoundHostname, want claim) bool {
	first, lost := p.claim(bh.Hostname, want)
	switch {
	case lost != "":
		bh.State, bh.Message = v1alpha1.HostnameConflict, lost
		return true
	case !first:
		return false
	}
	if p.wanted == nil {
		p.wanted = map[int]*v1alpha1.PublicHostname{}
	}
	ph := publicHostname(p.binding, want.route, bh.Hostname, p.origin, want.access)
	ph.Spec.LoadBalancing = want.lb.DeepCopy()
	p.claims[bh.Hostname].published = ph
	p.wanted[len(p.res.Hostnames)] = ph
	bh.State, bh.PublicHostname = v1alpha1.HostnamePending, ph.Name
	return true
}

// publishable are the hostnames a route may publish: those the listener
// takes.
func publishable(hosts []gatewayapi.Hostname) []string {
	var out []string
	for _, h := range hosts {
		if h.Problem == "" {
			out = append(out, h.Name)
		}
	}
	return out
}

// claim records a route naming a hostname, asking for want: first when it
// is the oldest to name it (its check and load balancing are the
// hostname's); otherwise lost says why this route's rules for it are not
// published ("" when it agrees with the older route). A newer route never
// changes what an older one publishes, except to load-balance a hostname
// no older route asks load balancing of, as a native Gateway's routes do:
// a hostname's load balancing is its oldest route's that asks for one.
func (p *publisher) claim(host string, want claim) (first bool, lost string) {
	c, ok := p.claims[host]
	switch {
	case !ok:
		p.claims[host] = &want
		return true, ""
	case want.held != "":
		return false, ""
	case c.held != "":
		return false, c.held
	case !gatewayapi.SameAccess(c.access, want.access):
		return false, accessDisagrees
	case gatewayapi.OtherLoadBalancing(c.lb, want.lb):
		return false, lbDisagrees
	}
	if c.lb == nil && want.lb != nil {
		c.lb = want.lb
		c.published.Spec.LoadBalancing = want.lb.DeepCopy()
	}
	return false, ""
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
