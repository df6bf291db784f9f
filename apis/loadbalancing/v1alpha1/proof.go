package v1alpha1

import (
	"strings"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
)

// hostnameTag starts the part of a pool's description that names the
// hostname the pool serves: the first part of the proof another
// installation checks before its load balancer lists the pool.
const hostnameTag = "hostname="

// namespaceTag names the namespace whose PublicHostname made the pool: for
// the humans reading the dashboard; no decision reads it.
const namespaceTag = "namespace="

// PoolDescription is the description of a pool made for a load-balanced
// hostname by a PublicHostname of namespace ns (before the ownership
// marker, which names the installation). The namespace is left out when it
// would not fit in MaxDescriptionLength.
func PoolDescription(host, ns string) string {
	d := hostnameTag + host
	if withNS := d + " " + namespaceTag + ns; len(withNS) <= MaxDescriptionLength {
		return withNS
	}
	return d
}

// DescribedHostname is the hostname a pool's description (without its
// ownership marker) says the pool serves.
func DescribedHostname(userPart string) (string, bool) {
	for _, f := range strings.Fields(userPart) {
		if h, ok := strings.CutPrefix(f, hostnameTag); ok && h != "" {
			return h, true
		}
	}
	return "", false
}

// TypePoolsProven (a LoadBalancer naming pools by poolNames): every pool
// it names is proven to serve its hostname and listed.
const TypePoolsProven xpv2.ConditionType = "PoolsProven"

// Reasons of PoolsProven.
const (
	ReasonPoolsProven   xpv2.ConditionReason = "Proven"
	ReasonPoolNotProven xpv2.ConditionReason = "PoolNotProven"
)
