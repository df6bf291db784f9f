package expose

import (
	"slices"

	tv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/annotation"
)

// loadBalancing parses the lb-* annotations as every source does, and
// checks that the source's hostnames can be load-balanced: exactly one (a
// pool serves one hostname), not a wildcard, and its DNS not external-dns's
// (the load balancer holds the name; a DNSEndpoint would write a record
// for it too). Nil: no load balancing, or a Problem.
func (t *translator) loadBalancing(hosts []host, dnsMode string) *tv1alpha1.LoadBalancing {
	r := annotation.Read(t.ann)
	lb := r.LoadBalancing()
	t.problems = append(t.problems, r.Problems...)
	if lb == nil {
		return nil
	}
	var public []string
	for _, h := range hosts {
		if !slices.Contains(public, h.public) {
			public = append(public, h.public)
		}
	}
	switch why := annotation.LoadBalancedHostnames(public, t.kind()); {
	case why != "":
		t.problem(tv1alpha1.AnnotationLBPool, "%s", why)
	case dnsMode == tv1alpha1.DNSModeExternalDNS:
		t.problem(tv1alpha1.AnnotationLBPool, "a load-balanced hostname has no DNS record: the load balancer holds the name, so %s %s would write a second one; set %s to %s or %s", tv1alpha1.AnnotationDNS, tv1alpha1.DNSModeExternalDNS, tv1alpha1.AnnotationDNS, tv1alpha1.DNSModeDNSRecord, tv1alpha1.DNSModeNone)
	default:
		return lb
	}
	return nil
}

// unpublishedLoadBalancing reports lb-* annotations on a source that
// publishes no hostname: only a public hostname is load-balanced.
func (t *translator) unpublishedLoadBalancing() {
	if annotation.HasLoadBalancing(t.ann) {
		t.problem(tv1alpha1.AnnotationLBPool, "load balancing is for a public hostname: set %s to \"true\" (and name the hostname), or remove the lb-* annotations", tv1alpha1.AnnotationPublic)
	}
}
