// Package source holds what the source controllers (Ingress, Service) share
// about the objects they make: what kind each is, how a desired one is
// copied onto the one that exists, and what failure of one to repeat on the
// source, where its author looks.
package source

import (
	"fmt"
	"sort"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/common"
	connv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/connectivity/v1alpha1"
	dnsv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/dns/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/handshake"
)

// Owned is what a source makes: managed resources and PublicHostnames.
type Owned interface {
	client.Object
	resource.Conditioned
}

// Kind of an object a source makes.
func Kind(m client.Object) string {
	switch m.(type) {
	case *ztv1alpha1.HostnameRoute:
		return ztv1alpha1.HostnameRouteKind
	case *connv1alpha1.VPCService:
		return connv1alpha1.VPCServiceKind
	case *dnsv1alpha1.DNSRecord:
		return dnsv1alpha1.DNSRecordKind
	case *v1alpha1.PublicHostname:
		return v1alpha1.PublicHostnameKind
	case *ztv1alpha1.NetworkRoute:
		return ztv1alpha1.NetworkRouteKind
	case *v1alpha1.CloudflareTunnel:
		return v1alpha1.CloudflareTunnelKind
	}
	return "object"
}

// Key identifies an object among those of one source: kind and name.
func Key(m client.Object) string { return Kind(m) + "/" + m.GetName() }

// CopySpec sets cur's forProvider (and labels) to want's, keeping what the
// managed reconciler added (resolved IDs, late-initialised fields stay
// unless the translation sets them). It reports whether anything changed.
func CopySpec(cur, want Owned) bool {
	before := cur.DeepCopyObject()
	cur.SetLabels(want.GetLabels())
	switch c := cur.(type) {
	case *ztv1alpha1.HostnameRoute:
		w := want.(*ztv1alpha1.HostnameRoute)
		c.Spec.ForProvider.Hostname = w.Spec.ForProvider.Hostname
		c.Spec.ForProvider.TunnelIDRef = w.Spec.ForProvider.TunnelIDRef
		c.Spec.ProviderConfigReference = w.Spec.ProviderConfigReference
	case *connv1alpha1.VPCService:
		w := want.(*connv1alpha1.VPCService)
		if w.Spec.ForProvider.Host.ResolverNetwork != nil && c.Spec.ForProvider.Host.ResolverNetwork != nil {
			// Keep the resolved tunnel ID; the reference re-resolves it.
			w.Spec.ForProvider.Host.ResolverNetwork.TunnelID = c.Spec.ForProvider.Host.ResolverNetwork.TunnelID
		}
		c.Spec.ForProvider = w.Spec.ForProvider
		c.Spec.ProviderConfigReference = w.Spec.ProviderConfigReference
		c.Spec.AdoptByName = w.Spec.AdoptByName
	case *v1alpha1.PublicHostname:
		// spec.crossplane is the PublicHostname's own record of its
		// children, not the source's to decide.
		own := c.Spec.Crossplane
		c.Spec = want.(*v1alpha1.PublicHostname).Spec
		c.Spec.Crossplane = own
	}
	return !equality.Semantic.DeepEqual(before, cur)
}

// FailureReason names a failure for an event, from the reason of a managed
// resource's Synced=False (or of a PublicHostname's DNSReady=False, which
// repeats its DNS record's): a name taken by an object this provider did
// not create or another resource holds, a guardrail of the provider
// config, or any other Cloudflare error.
func FailureReason(r xpv2.ConditionReason) string {
	switch {
	case common.Taken(r):
		return "NameTaken"
	case r == common.ReasonNotAllowed:
		return "NotAllowed"
	default:
		return "CloudflareError"
	}
}

// Failure is the failure of one object a source made, if any, as an event
// reason and message: a managed resource that cannot sync, or a
// PublicHostname that is not published for a reason its author must act on.
func Failure(m Owned) (string, string) {
	if ph, ok := m.(*v1alpha1.PublicHostname); ok {
		c, ok := handshake.Failure(ph)
		if !ok {
			return "", ""
		}
		if c.Type == v1alpha1.TypeDNSReady {
			return FailureReason(c.Reason), c.Message
		}
		return string(c.Reason), c.Message
	}
	c := m.GetCondition(xpv2.TypeSynced)
	if c.Status != corev1.ConditionFalse || c.Message == "" || awaitsTunnelID(m) || stale(m, c) {
		return "", ""
	}
	return FailureReason(c.Reason), c.Message
}

// stale says whether c was written about an older spec of m (a reference
// resolved since, a spec fixed since): not a failure of what m asks now.
func stale(m Owned, c xpv2.Condition) bool {
	return c.ObservedGeneration != 0 && c.ObservedGeneration < m.GetGeneration()
}

// ReportFailures repeats the failures of the objects a source made on the
// source, through warn, once per distinct failure: reported holds the last
// one said for each object (by UID), and for the source itself (src). client-go
// drops an object's events past a burst of 25, and repeats would crowd out
// the failures that matter. While the tunnel has no ID, every object fails
// the same way (its tunnel reference resolves to nothing): that is not
// repeated; a tunnel that will not get one without the user acting is said
// once, with the CloudflareTunnel's reason, and a tunnel being made is the
// normal path, said by nothing.
func ReportFailures(reported *sync.Map, src client.Object, tunnel Tunnel, ms []Owned, warn func(reason, msg string)) {
	key := string(src.GetUID()) + "/tunnel"
	if tunnel.ID == "" {
		if !tunnel.Broken() {
			reported.Delete(key)
			return
		}
		reason, msg := tunnel.Problem()
		if last, ok := reported.Load(key); !ok || last != msg {
			reported.Store(key, msg)
			warn(reason, msg)
		}
		return
	}
	reported.Delete(key)
	sort.Slice(ms, func(i, j int) bool { return Key(ms[i]) < Key(ms[j]) })
	for _, m := range ms {
		reason, msg := Failure(m)
		if msg == "" {
			reported.Delete(m.GetUID())
			continue
		}
		if last, ok := reported.Load(m.GetUID()); ok && last == msg {
			continue
		}
		reported.Store(m.GetUID(), msg)
		warn(reason, fmt.Sprintf("%s %s: %s", Kind(m), m.GetName(), msg))
	}
}
