package ingress

// Reports: what an Ingress's objects say, written back where its author
// and ExternalDNS look (its DNSEndpoint, its address, its events).

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	k8sevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	dnsv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/dns/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/expose"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/externaldns"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/ingress/translate"
)

// dropDNSEndpoint deletes the Ingress's DNSEndpoint if it may have one:
// one this process wrote, or, once per Ingress, one an earlier run may have
// written. Most Ingresses never have one, and asking on every reconcile
// would cost an API request each.
//
// While the DNSEndpoint kind is not installed no Ingress can have one (the
// kind's removal took its objects), so after one lookup finds it missing
// the others do not ask for a minute: at a thousand Ingresses each asking
// made the client rediscover the API group a thousand times.
func (r *Reconciler) dropDNSEndpoint(ctx context.Context, ing *networkingv1.Ingress) error {
	if maybe, seen := r.endpoints.Load(ing.UID); seen && !maybe.(bool) {
		return nil
	}
	if err := r.deleteDNSEndpoint(ctx, ing); err != nil {
		return err
	}
	r.endpoints.Store(ing.UID, false)
	return nil
}

// deleteDNSEndpoint deletes the Ingress's DNSEndpoint, unless the kind was
// found missing within the last minute and this process wrote none for it
// (one it wrote means the kind was installed since).
func (r *Reconciler) deleteDNSEndpoint(ctx context.Context, ing *networkingv1.Ingress) error {
	wrote, _ := r.endpoints.Load(ing.UID)
	if until, ok := r.endpointKindMissingUntil.Load().(time.Time); ok && time.Now().Before(until) && wrote != true {
		return nil
	}
	installed, err := externaldns.DeleteIfInstalled(ctx, r.kube, ing.Namespace, ing.Name, ing.UID)
	if !installed {
		r.endpointKindMissingUntil.Store(time.Now().Add(time.Minute))
	}
	return err
}

// applyDNSEndpoint writes the DNSEndpoint of a public Ingress in
// ExternalDNS mode: a proxied CNAME to the tunnel for each hostname its
// tunnel accepted. In the other modes it removes the Ingress's DNSEndpoint,
// if it has one.
func (r *Reconciler) applyDNSEndpoint(ctx context.Context, ing *networkingv1.Ingress, res expose.Result, ms []Owned, tunnelID string) (bool, error) {
	if !res.Public || res.DNSMode != v1alpha1.DNSModeExternalDNS {
		return true, r.dropDNSEndpoint(ctx, ing)
	}
	r.endpoints.Store(ing.UID, true)
	if tunnelID == "" {
		return true, nil // the tunnel's ID arriving requeues the Ingress
	}
	var hosts []string
	for _, m := range ms {
		if ph, ok := m.(*v1alpha1.PublicHostname); ok && !meta.WasDeleted(ph) && ph.GetCondition(v1alpha1.TypeAccepted).Status == corev1.ConditionTrue {
			hosts = append(hosts, ph.Spec.Hostname)
		}
	}
	owner := metav1.OwnerReference{APIVersion: networkingv1.SchemeGroupVersion.String(), Kind: "Ingress", Name: ing.Name, UID: ing.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
	want := externaldns.Endpoint(ing.Name, ing.Namespace, map[string]string{translate.LabelIngress: translate.LabelValue(ing.Name)}, owner, hosts, tunnelID+".cfargotunnel.com", res.ExternalDNSProxiedKey)
	out, err := externaldns.Apply(ctx, r.kube, want)
	if err != nil {
		return false, err
	}
	key := string(ing.UID) + "/dnsendpoint"
	if out == externaldns.Written {
		r.reported.Delete(key)
		return true, nil
	}
	msg := externaldns.Describe(out, ing.Name, len(hosts))
	if last, ok := r.reported.Load(key); !ok || last != msg {
		r.reported.Store(key, msg)
		r.warn(ing, map[externaldns.Outcome]string{externaldns.CRDMissing: "DNSEndpointCRDMissing", externaldns.Conflict: "DNSEndpointConflict"}[out], msg)
	}
	return false, nil
}

// Address is what a public Ingress's address should say: its tunnel's
// <tunnelID>.cfargotunnel.com once Cloudflare holds at least one of its
// hostnames' DNS records pointing there — not while every record is refused
// (a conflict, no zone) or still being made, and never for a private
// Ingress.
func Address(ms []Owned, public bool, tunnelID string) string {
	if !public || tunnelID == "" {
		return ""
	}
	target := tunnelID + ".cfargotunnel.com"
	for _, m := range ms {
		if meta.WasDeleted(m) {
			continue
		}
		switch o := m.(type) {
		case *v1alpha1.PublicHostname:
			// Its record is in Cloudflare; or its DNS is someone else's
			// (ExternalDNS reads this address) and the tunnel serves it.
			dns := o.GetCondition(v1alpha1.TypeDNSReady)
			accepted := o.GetCondition(v1alpha1.TypeAccepted).Status == corev1.ConditionTrue
			if dns.Status == corev1.ConditionTrue && (dns.Reason == v1alpha1.ReasonDNSReady || accepted) {
				return target
			}
		case *dnsv1alpha1.DNSRecord:
			// One made before published hostnames, not taken over yet.
			if o.Spec.ForProvider.Content == target && o.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue {
				return target
			}
		}
	}
	return ""
}

// updateAddress sets the Ingress's address to host, or none.
func (r *Reconciler) updateAddress(ctx context.Context, ing *networkingv1.Ingress, host string) error {
	var want []networkingv1.IngressLoadBalancerIngress
	if host != "" {
		want = []networkingv1.IngressLoadBalancerIngress{{Hostname: host}}
	}
	cur := ing.Status.LoadBalancer.Ingress
	if len(cur) == len(want) && (len(want) == 0 || cur[0].Hostname == want[0].Hostname) {
		return nil
	}
	orig := ing.DeepCopy()
	ing.Status.LoadBalancer.Ingress = want
	// A merge patch, for the reason of finalizerPatch: an Ingress's status
	// update writes its metadata too.
	return errors.Wrap(r.kube.Status().Patch(ctx, ing, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})), "cannot update Ingress address")
}

// Reasons of the events that say a public Ingress's tunnel serves nothing.
const (
	ReasonTunnelNotConnected = "TunnelNotConnected"
	ReasonTunnelDown         = "TunnelDown"
)

// ConnectionNotice is what a public Ingress says about its tunnel's
// connections to Cloudflare, from the CloudflareTunnel's status.tunnelStatus:
// a tunnel that never connected (Cloudflare's "inactive", the usual state
// for the moments after it is made) is a Normal event, one that had
// connections and has none ("down") a Warning; a connected one, nothing.
// Either way the hostnames keep their DNS records and the address, which
// are right, and answer with Cloudflare's error 1033 until cloudflared
// connects.
func ConnectionNotice(status, tunnel string) (warning bool, reason, msg string) {
	switch status {
	case "inactive":
		return false, ReasonTunnelNotConnected, fmt.Sprintf("CloudflareTunnel %s has never connected to Cloudflare: this Ingress's hostnames are published but answer with Cloudflare's error 1033 until cloudflared connects (see the CloudflareTunnel's Ready condition)", tunnel)
	case "down":
		return true, ReasonTunnelDown, fmt.Sprintf("CloudflareTunnel %s has no connections to Cloudflare: this Ingress's hostnames answer with Cloudflare's error 1033 until cloudflared connects again (see the CloudflareTunnel's Ready condition)", tunnel)
	}
	return false, "", ""
}

// reportConnection says on a public Ingress, once per change, that its
// tunnel has no connections (ConnectionNotice).
func (r *Reconciler) reportConnection(ing *networkingv1.Ingress, public bool, cft *v1alpha1.CloudflareTunnel) {
	key := string(ing.UID) + "/connection"
	status, name := "", ""
	if public && cft != nil {
		status, name = cft.Status.TunnelStatus, cft.Namespace+"/"+cft.Name
	}
	warning, reason, msg := ConnectionNotice(status, name)
	if msg == "" {
		r.reported.Delete(key)
		return
	}
	if last, ok := r.reported.Load(key); ok && last == msg {
		return
	}
	r.reported.Store(key, msg)
	if warning {
		r.warn(ing, reason, msg)
		return
	}
	r.record.Event(ing, event.Normal(event.Reason(reason), msg))
}

// connectionChanged passes a CloudflareTunnel update that changes whether
// it has connections, which its public Ingresses say.
func connectionChanged() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e k8sevent.UpdateEvent) bool {
		o, okOld := e.ObjectOld.(*v1alpha1.CloudflareTunnel)
		n, okNew := e.ObjectNew.(*v1alpha1.CloudflareTunnel)
		return okOld && okNew && o.Status.TunnelStatus != n.Status.TunnelStatus
	}}
}

// reportManagedFailures repeats a managed resource's failure (a hostname
// routed to another tunnel, a public host in no zone of the account) on the
// Ingress, where its author looks.
func (r *Reconciler) reportManagedFailures(ing *networkingv1.Ingress, tunnel source.Tunnel, ms []Owned) {
	source.ReportFailures(&r.reported, ing, tunnel, ms, func(reason, msg string) { r.warn(ing, reason, msg) })
}
