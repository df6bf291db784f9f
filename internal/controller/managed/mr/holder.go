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
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients"
)

// HostnameIndex indexes each managed resource kind that names hostnames
// (Kind.Hostnames) by those hostnames, normalised (NormalizeHostname).
const HostnameIndex = "tunnels.cloudflare.com/hostname"

// NormalizeHostname is the form hostnames are compared in: lower case,
// without a trailing dot or a path.
func NormalizeHostname(h string) string {
	h, _, _ = strings.Cut(strings.TrimSpace(h), "/")
	return strings.TrimSuffix(strings.ToLower(h), ".")
}

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
}

func (e *HostnameHeldError) Error() string {
	return fmt.Sprintf("not allowed: hostname %s is held by another namespace (its DNS record, or its rule on a tunnel not shared with this namespace, was made there); only the holder of a hostname puts an %s on it. Nothing was written to Cloudflare; use a hostname this namespace publishes, or ask the platform team to hand this one over (list it exactly in the provider config's spec.allow.hostnameSuffixes)", e.Hostname, e.Kind)
}

// ConditionReason of a hostname another namespace holds: NotAllowed.
func (e *HostnameHeldError) ConditionReason() xpv2.ConditionReason { return common.ReasonNotAllowed }

// holderGuard refuses a resource whose edge hostnames another namespace
// holds. An object the resource made on such a hostname before it was held
// elsewhere is deleted: it gates the holder's users with another tenant's
// policies, and the holder's own application could not be made beside it.
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
	host, err := g.heldElsewhere(ctx, mg)
	if err != nil || host == "" {
		if err != nil {
			return managed.ExternalObservation{}, err
		}
		return g.TypedExternalClient.Observe(ctx, mg)
	}
	refusal := &HostnameHeldError{Kind: g.kind, Hostname: host}
	if id := meta.GetExternalName(mg); id != "" && holds(mg, id, g.observedID) {
		if _, err := g.TypedExternalClient.Delete(ctx, mg); err != nil {
			return managed.ExternalObservation{}, errors.Wrapf(err, "%s; cannot delete the one it made before", refusal.Error())
		}
		meta.SetExternalName(mg, "")
	}
	return managed.ExternalObservation{}, refusal
}

// heldElsewhere is the first of the resource's hostnames that another
// namespace holds, unless the provider config hands it to this one.
func (g *holderGuard[T]) heldElsewhere(ctx context.Context, mg T) (string, error) {
	for _, h := range g.hostnames(mg) {
		host := NormalizeHostname(h)
		if host == "" || strings.HasPrefix(host, "*") || handedOver(g.config, host) {
			continue
		}
		held, err := HeldElsewhere(ctx, g.kube, mg.GetNamespace(), host)
		if err != nil || held {
			return host, err
		}
	}
	return "", nil
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

// HeldElsewhere says whether a namespace other than ns holds host: a
// DNSRecord there made its record in Cloudflare (Ready, with an
// external-name), or a Tunnel there carries a rule for it and its
// CloudflareTunnel does not share it with ns.
func HeldElsewhere(ctx context.Context, kube client.Reader, ns, host string) (bool, error) {
	recs := &dnsv1alpha1.DNSRecordList{}
	if err := kube.List(ctx, recs, client.MatchingFields{HostnameIndex: host}, client.UnsafeDisableDeepCopy); err != nil && !apimeta.IsNoMatchError(err) {
		return false, errors.Wrap(err, "cannot list DNSRecords")
	}
	for i := range recs.Items {
		r := &recs.Items[i]
		if r.Namespace != ns && !meta.WasDeleted(r) && meta.GetExternalName(r) != "" && r.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue {
			return true, nil
		}
	}
	tuns := &ztv1alpha1.TunnelList{}
	if err := kube.List(ctx, tuns, client.MatchingFields{HostnameIndex: host}, client.UnsafeDisableDeepCopy); err != nil && !apimeta.IsNoMatchError(err) {
		return false, errors.Wrap(err, "cannot list Tunnels")
	}
	shared := sharedWith(kube, ns, false)
	for i := range tuns.Items {
		t := &tuns.Items[i]
		if t.Namespace == ns || meta.WasDeleted(t) {
			continue
		}
		ok, err := shared(ctx, t)
		if err != nil {
			return false, err
		}
		if !ok {
			return true, nil
		}
	}
	return false, nil
}
