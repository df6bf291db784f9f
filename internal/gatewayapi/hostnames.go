// Package gatewayapi holds what every Gateway API source of this provider
// decides the same way: which hostnames a route serves on a listener, which
// parent reference attaches a route to a listener, which routes are older,
// and which Cloudflare Access check a route's annotations ask for. It is
// pure: the GatewayBinding and the native Gateway sources both use it, so a
// route means the same thing to both.
package gatewayapi

import (
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Hostname is one effective hostname of a route on a listener, or a
// problem that keeps it from being published.
type Hostname struct {
	Name    string
	Problem string
}

// AnyHostname is the name of what a route serves when neither it nor its
// listener names a hostname: every hostname.
const AnyHostname = "*"

// EffectiveHostnames are the hostnames a route serves on a listener, as
// Gateway API matches them: the route's hostnames that intersect the
// listener's, narrowed to the more specific of the two ("*.example.com" on
// a listener "app.example.com" is "app.example.com"; "a.example.com" on a
// listener "*.example.com" is "a.example.com"; two wildcards give the
// longer); the listener's when the route names none. A route's hostname
// the listener does not match is left out, as the specification requires
// ("MUST be ignored"). A wildcard is published as one: a wildcard DNS
// record and a wildcard rule, which cloudflared tries after every exact
// hostname. Only a route and listener that name no hostname at all (any
// hostname, which no DNS record can answer for) come back with a problem.
func EffectiveHostnames(route []gwv1.Hostname, listener *gwv1.Hostname) []Hostname {
	lh := strings.ToLower(string(ptr.Deref(listener, "")))
	var out []Hostname
	add := func(name, problem string) {
		if !slices.ContainsFunc(out, func(h Hostname) bool { return h.Name == name }) {
			out = append(out, Hostname{Name: name, Problem: problem})
		}
	}
	if len(route) == 0 {
		route = []gwv1.Hostname{gwv1.Hostname(lh)}
	}
	for _, r := range route {
		h, ok := intersect(strings.ToLower(string(r)), lh)
		switch {
		case !ok:
			continue
		case h == "":
			add(AnyHostname, "neither the route nor the listener names a hostname: it matches any hostname, which cannot be published; name the route's hostnames")
		case !validHostname(h):
			add(h, "not a valid hostname")
		default:
			add(h, "")
		}
	}
	return out
}

// validHostname: a DNS name, with at most one leading "*." label.
func validHostname(h string) bool {
	return len(validation.IsDNS1123Subdomain(strings.TrimPrefix(h, "*."))) == 0
}

// Intersects says whether a route's hostnames leave it any hostname on a
// listener: Gateway API does not attach a route to a listener none of
// whose hostnames match (NoMatchingListenerHostname).
func Intersects(route []gwv1.Hostname, listener *gwv1.Hostname) bool {
	lh := strings.ToLower(string(ptr.Deref(listener, "")))
	if len(route) == 0 || lh == "" {
		return true
	}
	return slices.ContainsFunc(route, func(r gwv1.Hostname) bool {
		_, ok := intersect(strings.ToLower(string(r)), lh)
		return ok
	})
}

// intersect is the hostname both match, the more specific one; "" when
// neither names one.
func intersect(route, listener string) (string, bool) {
	switch {
	case listener == "":
		return route, true
	case route == "":
		return listener, true
	case matches(listener, route):
		return route, true
	case matches(route, listener):
		return listener, true
	}
	return "", false
}

// matches says whether pattern (a hostname or "*.suffix", which matches
// one or more labels before the suffix) matches host (which may itself be
// a wildcard, matched by its suffix).
func matches(pattern, host string) bool {
	if pattern == host {
		return true
	}
	suffix, wild := strings.CutPrefix(pattern, "*")
	return wild && strings.HasSuffix(host, suffix) && len(strings.TrimPrefix(host, "*")) > len(suffix)
}

// OlderFirst orders objects as Gateway API resolves conflicts between
// routes: the oldest first, then by name.
func OlderFirst(a, b *metav1.ObjectMeta) int {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		if a.CreationTimestamp.Before(&b.CreationTimestamp) {
			return -1
		}
		return 1
	}
	if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
		return c
	}
	return strings.Compare(a.Name, b.Name)
}
