package mr

// Holder: whoever holds a hostname holds every edge object on it. A
// resource that puts an edge object on a hostname (an Access application)
// is refused when another namespace holds that hostname, proven at this
// layer by what the other namespace's managed resources hold in
// Cloudflare: a DNS record of that name made there, or a rule for it in
// the configuration of a tunnel managed there and not shared with the
// resource's namespace.

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/common"
	dnsv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/dns/v1alpha1"
	lbv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/loadbalancing/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/hostname"
)

// HostnameIndex indexes each managed resource kind that names hostnames
// (Kind.Hostnames) by those hostnames, normalised (NormalizeHostname).
const HostnameIndex = "tunnels.cloudflare.com/hostname"

// NormalizeHostname is the form hostnames are compared in: lower case,
// without a trailing dot or a path.
func NormalizeHostname(h string) string { return hostname.Key(h) }

// hostnameValues is HostnameIndex's value for a kind's hostnames.
func hostnameValues[T resource.ModernManaged](hostnames func(T) []string) func(client.Object) []string {
	return func(o client.Object) []string {
		t, ok := o.(T)
		if !ok {
			return nil
		}
		var out []string
		for _, h := range hostnames(t) {
			if n := NormalizeHostname(h); n != "" {
				out = append(out, n)
			}
		}
		return out
	}
}

// HostnameHeldError says another namespace holds a hostname the resource
// would put an edge object on. It names neither that namespace nor its
// objects: a tenant learns only that the hostname is not its own.
type HostnameHeldError struct {
	Kind, Hostname string
	// Holding is the evidence: a tunnel rule alone keeps what the
	// resource made, a DNS record takes it back.
	Holding Holding
}

func (e *HostnameHeldError) Error() string {
	if e.Holding == HeldBelowWildcard {
		return fmt.Sprintf("not allowed: wildcard hostname %s covers a name another namespace holds (a DNS record or a tunnel rule made there), and an %s on the wildcard would apply to that name too; only the holder of a hostname puts an %s on it. Nothing is written to Cloudflare, and what this resource made before is kept as it is. Name this namespace's hostnames one by one, or ask the platform team to hand the wildcard over (list it exactly in the provider config's spec.allow.hostnameSuffixes)", e.Hostname, e.Kind, e.Kind)
	}
	if e.Holding == HeldByTunnelRule {
		return fmt.Sprintf("not allowed: hostname %s is served by a rule on a tunnel another namespace manages, and no DNS record of this namespace names it; only the holder of a hostname puts an %s on it. Nothing is written to Cloudflare, and what this resource made before is kept as it is. Publish the hostname from this namespace (its DNS record proves it is held here), or ask the platform team to hand it over (list it exactly in the provider config's spec.allow.hostnameSuffixes)", e.Hostname, e.Kind)
	}
	return fmt.Sprintf("not allowed: hostname %s is held by another namespace (the DNS record that answers for it was made there); only the holder of a hostname puts an %s on it. Nothing was written to Cloudflare; use a hostname this namespace publishes, or ask the platform team to hand this one over (list it exactly in the provider config's spec.allow.hostnameSuffixes)", e.Hostname, e.Kind)
}

// ConditionReason of a hostname another namespace holds: NotAllowed.
func (e *HostnameHeldError) ConditionReason() xpv2.ConditionReason { return common.ReasonNotAllowed }

// holderGuard refuses a resource whose edge hostnames another namespace
// holds. An object the resource made on such a hostname before it was held
// elsewhere is deleted when the proof is the DNS record that answers for
// the name (HeldByDNSRecord): it gates the holder's users with another
// tenant's policies, and the holder's own application could not be made
// beside it. On weaker proof (a tunnel rule) it is kept: deleting it on a
// rule any namespace can write would open a protected hostname.
type holderGuard[T resource.ModernManaged] struct {
	managed.TypedExternalClient[T]
	kube      client.Reader
	kind      string
	config    clients.Config
	hostnames func(T) []string
	// observedID says whether the resource holds its external-name.
	observedID func(resource.Managed) string
}

func (g *holderGuard[T]) Observe(ctx context.Context, mg T) (managed.ExternalObservation, error) {
	if meta.WasDeleted(mg) {
		// What it made is its own to delete, held elsewhere or not.
		return g.TypedExternalClient.Observe(ctx, mg)
	}
	host, holding, err := g.heldElsewhere(ctx, mg)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	if holding == NotHeldElsewhere {
		return g.TypedExternalClient.Observe(ctx, mg)
	}
	refusal := &HostnameHeldError{Kind: g.kind, Hostname: host, Holding: holding}
	if id := meta.GetExternalName(mg); holding == HeldByDNSRecord && id != "" && holds(mg, id, g.observedID) {
		if _, err := g.TypedExternalClient.Delete(ctx, mg); err != nil {
			return managed.ExternalObservation{}, errors.Wrapf(err, "%s; cannot delete the one it made before", refusal.Error())
		}
		meta.SetExternalName(mg, "")
	}
	return managed.ExternalObservation{}, refusal
}

// heldElsewhere is the first of the resource's hostnames that another
// namespace holds, unless the provider config hands it to this one, with
// the proof: the strongest over all its hostnames.
func (g *holderGuard[T]) heldElsewhere(ctx context.Context, mg T) (string, Holding, error) {
	first, strongest := "", NotHeldElsewhere
	for _, h := range g.hostnames(mg) {
		host := NormalizeHostname(h)
		if host == "" || handedOver(g.config, host) {
			continue
		}
		holding, err := edgeHolding(ctx, g.kube, mg.GetNamespace(), host)
		if err != nil {
			return host, NotHeldElsewhere, err
		}
		if holding > strongest {
			first, strongest = host, holding
		}
	}
	return first, strongest, nil
}

// edgeHolding is how another namespace holds a hostname an edge object
// would be put on: the hostname itself (HolderOf), or, for a wildcard, a
// name below it (HeldBelow).
func edgeHolding(ctx context.Context, kube client.Reader, ns, host string) (Holding, error) {
	holding, err := HolderOf(ctx, kube, ns, host)
	if err != nil || holding != NotHeldElsewhere || !strings.HasPrefix(host, "*.") {
		return holding, err
	}
	return HeldBelow(ctx, kube, ns, host)
}

// handedOver says whether the provider config names the hostname itself
// among its allowed hostname suffixes: the platform team handing it to the
// namespaces the config serves.
func handedOver(c clients.Config, host string) bool {
	for _, s := range c.Allow.HostnameSuffixes {
		if NormalizeHostname(s) == host {
			return true
		}
	}
	return false
}

// Holding is how another namespace is proven to hold a hostname, weakest
// first.
type Holding int

const (
	// NotHeldElsewhere: the hostname is the namespace's own, or nobody's.
	NotHeldElsewhere Holding = iota
	// HeldBelowWildcard: the hostname is a wildcard, and another namespace
	// holds a name it covers (by either proof). An edge object on the
	// wildcard would reach that name: new writes are refused; what exists
	// is kept, so that publishing a name below cannot take down another
	// namespace's wildcard.
	HeldBelowWildcard
	// HeldByTunnelRule: no DNS record of the provider's answers for the
	// hostname, and a tunnel another namespace manages (made in
	// Cloudflare, its configuration as written there, not shared with the
	// namespace) serves a rule for it. New writes are refused; what exists
	// is kept.
	HeldByTunnelRule
	// HeldByDNSRecord: the DNS record that answers for the hostname (the
	// most specific of the provider's records that cover it, made and
	// marked) belongs to another namespace, and none of the namespace's
	// own is as specific.
	HeldByDNSRecord
)

// HolderOf says whether, and on what proof, a namespace other than ns
// holds host. The proof is what is real and marked: a DNS record the
// provider made (Ready, with an external-name), else a rule on a tunnel
// the provider made and whose configuration Cloudflare holds as written
// (servedBy). A record of ns's own takes precedence over any tunnel rule:
// DNS decides which tunnel a request reaches.
func HolderOf(ctx context.Context, kube client.Reader, ns, host string) (Holding, error) {
	// A load balancer answers for its hostname ahead of any DNS record
	// (Cloudflare's precedence): the namespace that made it holds the name.
	own, other, err := lbHolders(ctx, kube, ns, host)
	switch {
	case err != nil:
		return NotHeldElsewhere, err
	case own:
		return NotHeldElsewhere, nil
	case other:
		return HeldByDNSRecord, nil
	}
	own, other, err = dnsHolders(ctx, kube, ns, host)
	switch {
	case err != nil:
		return NotHeldElsewhere, err
	case other && own:
		// Two namespaces' records answer alike (A or AAAA records of one
		// name): neither is proven the holder.
		return HeldByTunnelRule, nil
	case other:
		return HeldByDNSRecord, nil
	case own:
		return NotHeldElsewhere, nil
	}
	served, err := servedElsewhere(ctx, kube, ns, host)
	if err != nil || !served {
		return NotHeldElsewhere, err
	}
	return HeldByTunnelRule, nil
}

// HeldBelow says whether a namespace other than ns holds a name below the
// wildcard (a name it covers, a narrower wildcard included): a made DNS
// record of that name there, or a rule for it on a tunnel managed there,
// served, and not shared with ns. Every depth counts, as DNS and
// cloudflared match a wildcard, though an Access application's wildcard
// reaches one level only: the wider test fails closed.
func HeldBelow(ctx context.Context, kube client.Reader, ns, wildcard string) (Holding, error) {
	recs := &dnsv1alpha1.DNSRecordList{}
	if err := kube.List(ctx, recs, client.UnsafeDisableDeepCopy); err != nil && !apimeta.IsNoMatchError(err) {
		return NotHeldElsewhere, errors.Wrap(err, "cannot list DNSRecords")
	}
	for i := range recs.Items {
		r := &recs.Items[i]
		if r.Namespace != ns && made(r) && strictlyBelow(wildcard, r.Spec.ForProvider.Name) {
			return HeldBelowWildcard, nil
		}
	}
	tuns := &ztv1alpha1.TunnelList{}
	if err := kube.List(ctx, tuns, client.UnsafeDisableDeepCopy); err != nil && !apimeta.IsNoMatchError(err) {
		return NotHeldElsewhere, errors.Wrap(err, "cannot list Tunnels")
	}
	shared := sharedWith(kube, ns, false)
	for i := range tuns.Items {
		t := &tuns.Items[i]
		if t.Namespace == ns || !servedBy(t) || !rulesBelow(t, wildcard) {
			continue
		}
		ok, err := shared(ctx, t)
		if err != nil || !ok {
			return HeldBelowWildcard, err
		}
	}
	return NotHeldElsewhere, nil
}

// strictlyBelow: the wildcard covers name, and name is not the wildcard.
func strictlyBelow(wildcard, name string) bool {
	return hostname.Key(name) != hostname.Key(wildcard) && hostname.Covers(wildcard, strings.TrimPrefix(hostname.Key(name), "*."))
}

func rulesBelow(t *ztv1alpha1.Tunnel, wildcard string) bool {
	if t.Spec.ForProvider.Config == nil {
		return false
	}
	for _, r := range t.Spec.ForProvider.Config.Ingress {
		if r.Hostname != nil && strictlyBelow(wildcard, *r.Hostname) {
			return true
		}
	}
	return false
}

// dnsHolders says whose made records answer for host: of the provider's
// records that cover it, the most specific (the name itself before any
// wildcard, a longer wildcard before a shorter), as DNS answers.
func dnsHolders(ctx context.Context, kube client.Reader, ns, host string) (own, other bool, err error) {
	for _, pattern := range hostname.CoveringPatterns(host) {
		recs := &dnsv1alpha1.DNSRecordList{}
		if err := kube.List(ctx, recs, client.MatchingFields{HostnameIndex: pattern}, client.UnsafeDisableDeepCopy); err != nil {
			if apimeta.IsNoMatchError(err) {
				return false, false, nil
			}
			return false, false, errors.Wrap(err, "cannot list DNSRecords")
		}
		for i := range recs.Items {
			r := &recs.Items[i]
			if !made(r) {
				continue
			}
			if r.Namespace == ns {
				own = true
			} else {
				other = true
			}
		}
		if own || other {
			return own, other, nil
		}
	}
	return false, false, nil
}

// lbHolders says whose made load balancers answer for host (exactly: a
// load balancer's hostname is never a wildcard).
func lbHolders(ctx context.Context, kube client.Reader, ns, host string) (own, other bool, err error) {
	lbs := &lbv1alpha1.LoadBalancerList{}
	if err := kube.List(ctx, lbs, client.MatchingFields{HostnameIndex: host}, client.UnsafeDisableDeepCopy); err != nil {
		if apimeta.IsNoMatchError(err) || strings.Contains(err.Error(), "index with name") {
			return false, false, nil
		}
		return false, false, errors.Wrap(err, "cannot list LoadBalancers")
	}
	for i := range lbs.Items {
		if !made(&lbs.Items[i]) {
			continue
		}
		if lbs.Items[i].Namespace == ns {
			own = true
		} else {
			other = true
		}
	}
	return own, other, nil
}

// servedElsewhere says whether a tunnel of another namespace, not shared
// with ns, serves a rule that covers host.
func servedElsewhere(ctx context.Context, kube client.Reader, ns, host string) (bool, error) {
	shared := sharedWith(kube, ns, false)
	for _, pattern := range hostname.CoveringPatterns(host) {
		tuns := &ztv1alpha1.TunnelList{}
		if err := kube.List(ctx, tuns, client.MatchingFields{HostnameIndex: pattern}, client.UnsafeDisableDeepCopy); err != nil {
			if apimeta.IsNoMatchError(err) {
				return false, nil
			}
			return false, errors.Wrap(err, "cannot list Tunnels")
		}
		for i := range tuns.Items {
			t := &tuns.Items[i]
			if t.Namespace == ns || !servedBy(t) {
				continue
			}
			ok, err := shared(ctx, t)
			if err != nil || !ok {
				return err == nil, err
			}
		}
	}
	return false, nil
}

// made says whether a managed resource made (or adopted by its marker) its
// Cloudflare object and observed it there: not being deleted, an
// external-name that is the ID it observed, and Ready.
func made(mg resource.Managed) bool {
	return !meta.WasDeleted(mg) && meta.GetExternalName(mg) != "" && mg.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue
}

// servedBy says whether the Tunnel's configuration, as its spec has it, is
// what Cloudflare holds: made, its external-name the tunnel it observed, a
// configuration version written, and Synced for this generation (an
// Observe found the configuration as written, or an Update wrote it).
func servedBy(t *ztv1alpha1.Tunnel) bool {
	synced := t.GetCondition(xpv2.TypeSynced)
	return made(t) && meta.GetExternalName(t) == t.Status.AtProvider.ID && t.Status.AtProvider.RemoteConfigVersion > 0 &&
		synced.Status == corev1.ConditionTrue && synced.ObservedGeneration == t.Generation
}
