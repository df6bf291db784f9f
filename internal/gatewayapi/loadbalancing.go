package gatewayapi

import (
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
)

// OtherLoadBalancing says whether a newer route asking for asked cannot
// serve a hostname whose older routes load-balance it as held: both ask for
// load balancing, and not the same. A hostname's load balancing is its
// oldest route's that asks for one; a route asking for none serves the
// hostname as it is balanced.
func OtherLoadBalancing(held, asked *v1alpha1.LoadBalancing) bool {
	return held != nil && asked != nil && !equality.Semantic.DeepEqual(held, asked)
}
