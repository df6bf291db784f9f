package translate

import (
	"fmt"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
)

// routeAccess is the Access check a route's annotations ask for, as its
// PublicHostnames (made in the Gateway's namespace) must name it. A route
// of the Gateway's namespace names policies as any source does. A route of
// another namespace names its own namespace's AccessPolicies: an
// unqualified name is one of the route's namespace, never of the
// Gateway's (whose policies were not shared with the route's tenant), and
// a name qualified with any other namespace is refused. The policies must
// then be shared with the Gateway's namespace by their own
// spec.allowedNamespaces, which the PublicHostname checks when it
// resolves them. A refusal is a problem: the route's hostnames are held,
// as for any annotation that cannot be used.
func routeAccess(a *v1alpha1.Access, routeNS, gatewayNS string) (*v1alpha1.Access, string) {
	if a == nil || routeNS == gatewayNS || len(a.Policies) == 0 {
		return a, ""
	}
	out := a.DeepCopy()
	for i := range out.Policies {
		p := &out.Policies[i]
		switch p.Namespace {
		case "":
			p.Namespace = routeNS
		case routeNS:
		default:
			return nil, fmt.Sprintf("annotation %s names AccessPolicy %s, of another namespace than the route's (%s): a route of another namespace than its Gateway's (%s) may name only AccessPolicies of its own namespace; name one of namespace %s and share it with namespace %s (the policy's spec.allowedNamespaces)",
				v1alpha1.AnnotationAccessPolicies, publish.Clip(p.Namespace+"/"+p.Name), routeNS, gatewayNS, routeNS, gatewayNS)
		}
	}
	return out, ""
}
