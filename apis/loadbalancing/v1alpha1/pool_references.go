package v1alpha1

import (
	"context"
	"fmt"

	"github.com/pkg/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	tunnelsv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
)

// errEmpty is crossplane-runtime's word for a reference whose target has
// no value yet.
const errEmpty = "referenced field was empty (referenced resource may not yet be ready)"

// ResolveReferences of this LoadBalancerPool, written by hand: each origin's
// tunnelRef names a CloudflareTunnel, which is not a managed resource, so
// no generated resolver reads it; it resolves to the tunnel ID in the
// CloudflareTunnel's status. Only the origins are written here: what a
// resolver changes is applied server-side as the fields that changed, and
// a field the resolver applied before and leaves out of a later apply is
// removed — the atomic list of origins with it. So the monitor reference is
// read by the pool's external client instead (MonitorOf), and this writes
// nothing else.
func (mg *LoadBalancerPool) ResolveReferences(ctx context.Context, c client.Reader) error {
	p := &mg.Spec.ForProvider
	for i := range p.Origins {
		o := &p.Origins[i]
		if o.TunnelRef == nil {
			continue
		}
		id, err := tunnelIDOf(ctx, c, types.NamespacedName{Namespace: mg.GetNamespace(), Name: o.TunnelRef.Name})
		if err != nil {
			return errors.Wrapf(err, "mg.Spec.ForProvider.Origins[%d].TunnelID", i)
		}
		o.TunnelID = &id
	}
	return nil
}

// MonitorOf is the ID of the monitor p names: by reference, by selector
// (the first match with an ID), or by ID; "" for none.
func MonitorOf(ctx context.Context, c client.Reader, ns string, p LoadBalancerPoolParameters) (string, error) {
	ref := p.MonitorIDRef
	if ref == nil && p.MonitorIDSelector != nil {
		l := &LoadBalancerMonitorList{}
		if err := c.List(ctx, l, client.InNamespace(ns), client.MatchingLabels(p.MonitorIDSelector.MatchLabels)); err != nil {
			return "", errors.Wrap(err, "cannot list LoadBalancerMonitors")
		}
		for _, m := range l.Items {
			if meta.GetExternalName(&m) != "" {
				ref = &xpv2.NamespacedReference{Name: m.Name}
				break
			}
		}
		if ref == nil {
			return "", errors.New("no LoadBalancerMonitor matches monitorIdSelector")
		}
	}
	if ref == nil {
		if p.MonitorID == nil {
			return "", nil
		}
		return *p.MonitorID, nil
	}
	m := &LoadBalancerMonitor{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: ref.Name}, m); err != nil {
		return "", errors.Wrapf(err, "cannot get LoadBalancerMonitor %s", ref.Name)
	}
	id := meta.GetExternalName(m)
	if id == "" {
		return "", errors.New(fmt.Sprintf("LoadBalancerMonitor %s: %s", ref.Name, errEmpty))
	}
	return id, nil
}

// tunnelIDOf is the tunnel ID a CloudflareTunnel's status holds.
func tunnelIDOf(ctx context.Context, c client.Reader, key types.NamespacedName) (string, error) {
	ct := &tunnelsv1alpha1.CloudflareTunnel{}
	if err := c.Get(ctx, key, ct); err != nil {
		return "", errors.Wrapf(err, "cannot get CloudflareTunnel %s", key.Name)
	}
	if ct.Status.TunnelID == "" {
		return "", errors.New(fmt.Sprintf("CloudflareTunnel %s has no tunnel ID yet: %s", key.Name, errEmpty))
	}
	return ct.Status.TunnelID, nil
}
