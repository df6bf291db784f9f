package translate

import (
	"fmt"
	"strings"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/annotation"
)

// routeLoadBalancing is the load balancing a route's lb-* annotations ask
// for its hostnames (read as every source reads them), or why they cannot
// be used. A load-balanced hostname's PublicHostname makes no DNS record,
// and the Gateway's DNSEndpoint, in ExternalDNS mode, leaves it out: the
// load balancer holds the name.
func routeLoadBalancing(ann map[string]string, hosts []string) (*v1alpha1.LoadBalancing, string) {
	r := annotation.Read(ann)
	lb := r.LoadBalancing()
	if len(r.Problems) > 0 {
		msgs := make([]string, 0, len(r.Problems))
		for _, p := range r.Problems {
			msgs = append(msgs, fmt.Sprintf("annotation %s: %s", p.Field, p.Message))
		}
		return nil, strings.Join(msgs, "; ")
	}
	if lb == nil || len(hosts) == 0 {
		return lb, ""
	}
	if why := annotation.LoadBalancedHostnames(hosts, "route"); why != "" {
		return nil, fmt.Sprintf("annotation %s: %s; nothing of the route is published, and its hostnames stay as they are published", v1alpha1.AnnotationLBPool, why)
	}
	return lb, ""
}
