package publichostname

// DNS: the hostname's record, adopted only with proof, made, kept, and
// released.

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/common"
	dnsv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/dns/v1alpha1"
	lbv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/loadbalancing/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/composite/resourcerefs"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/handshake"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/handshake/target"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/index"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
)

// applyDNS converges the hostname's DNS record and says whether it is ready.
// ahead: the record is made before the hostname has rules (resolve).
func (r *Reconciler) applyDNS(ctx context.Context, ph *v1alpha1.PublicHostname, tgt target.Target, ahead bool) (xpv2.Condition, error) {
	host, _ := publish.Hostname(ph.Spec.Hostname)
	have, err := r.records(ctx, ph)
	if err != nil {
		return xpv2.Condition{}, err
	}
	want := ph.Spec.DNS != v1alpha1.DNSNone
	answer := ph.Status.Tunnel
	if want && (answer == nil || answer.Tunnel != handshake.TunnelName(ph)) {
		// Not answered yet (new, or moved to another tunnel): what it has
		// stays until its tunnel says the hostname is its.
		return cond(v1alpha1.TypeDNSReady, false, v1alpha1.ReasonWaitingForTunnel, fmt.Sprintf("waiting for CloudflareTunnel %s to accept the hostname", handshake.TunnelName(ph))), nil
	}
	if want && !answer.Accepted {
		// The hostname is another PublicHostname's: this one must not
		// hold its DNS record.
		want = false
	}
	if want && len(ph.Status.Rules) == 0 && len(have) == 0 && !ahead {
		// Never valid: nothing to point the name at yet.
		return cond(v1alpha1.TypeDNSReady, false, ReasonNoRules, "no DNS record yet: the hostname has no valid rules to publish"), nil
	}
	var mine *dnsv1alpha1.DNSRecord
	for i := range have {
		rec := &have[i]
		if want && mine == nil && strings.EqualFold(rec.Spec.ForProvider.Name, host) {
			mine = rec
			continue
		}
		if err := r.deleteRecord(ctx, ph, rec); err != nil {
			return xpv2.Condition{}, err
		}
	}
	switch {
	case ph.Spec.DNS == v1alpha1.DNSNone:
		return cond(v1alpha1.TypeDNSReady, true, ReasonDNSNone, "spec.dns is None: the hostname's DNS is managed elsewhere and must point at "+cname(tgt.ID)), nil
	case !want:
		return cond(v1alpha1.TypeDNSReady, false, ReasonNotAccepted, "no DNS record: the hostname is not this PublicHostname's on the tunnel"), nil
	}
	if !tgt.Made || tgt.ID == "" {
		return cond(v1alpha1.TypeDNSReady, false, v1alpha1.ReasonWaitingForTunnel, "waiting for the tunnel's ID, the DNS record's target"), nil
	}
	if mine == nil && answer.Rules == 0 && !ahead {
		// The tunnel has not seen this hostname's rules yet. A record made
		// now would point the name at a tunnel that does not serve it; one
		// taken over from an older version would end the tunnel's carrying
		// over of that version's rules before these can replace them.
		return cond(v1alpha1.TypeDNSReady, false, v1alpha1.ReasonWaitingForTunnel, fmt.Sprintf("waiting for CloudflareTunnel %s to take the hostname's rules before its DNS record is made", handshake.TunnelName(ph))), nil
	}
	// Ahead of its rules for an Access application, which is made only
	// for a hostname whose record is this PublicHostname's: the name then
	// leads to the tunnel's 404 until the rules with the check come.
	if mine == nil {
		if mine, err = r.adopt(ctx, ph, host); err != nil {
			return xpv2.Condition{}, err
		}
	}
	rec, err := r.applyRecord(ctx, ph, tgt, host, mine)
	if err != nil {
		return xpv2.Condition{}, err
	}
	ph.Status.DNSRecord = rec.Name
	return DNSCondition(rec), nil
}

// cname is the name a hostname's DNS record points at: the tunnel's.
func cname(tunnelID string) string {
	if tunnelID != "" {
		return tunnelID + ".cfargotunnel.com"
	}
	return "<tunnel ID>.cfargotunnel.com"
}

// DNSCondition says whether the hostname's DNS record is in Cloudflare.
func DNSCondition(rec *dnsv1alpha1.DNSRecord) xpv2.Condition {
	synced := rec.GetCondition(xpv2.TypeSynced)
	switch {
	case Refused(rec):
		return cond(v1alpha1.TypeDNSReady, false, refusal(synced.Reason), fmt.Sprintf("DNSRecord %s: %s", rec.Name, synced.Message))
	case rec.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue:
		return cond(v1alpha1.TypeDNSReady, true, v1alpha1.ReasonDNSReady, fmt.Sprintf("DNSRecord %s points %s at the tunnel", rec.Name, rec.Spec.ForProvider.Name))
	}
	return cond(v1alpha1.TypeDNSReady, false, ReasonDNSNotReady, fmt.Sprintf("waiting for DNSRecord %s: %s", rec.Name, strings.TrimSpace(string(synced.Reason)+" "+synced.Message)))
}

// Refused says whether a DNS record that was never created was refused:
// no external-name yet, and Synced=False for a reason that will not pass by
// itself (another's record in the way, no such zone, Cloudflare refusing
// the record). A record that exists keeps its rules through passing errors,
// and so does one still to be created: a create that timed out waiting for
// the request budget, was rate limited or met a server error is retried
// (its reason is RateLimited or Transient), and taking its hostname's rules
// off the tunnel meanwhile would only cost configuration writes.
func Refused(rec *dnsv1alpha1.DNSRecord) bool {
	synced := rec.GetCondition(xpv2.TypeSynced)
	return meta.GetExternalName(rec) == "" && synced.Status == corev1.ConditionFalse && !common.Passing(synced.Reason)
}

// refusal is DNSReady's reason for a record refused with reason r: r if it
// is typed, else RecordRefused.
func refusal(r xpv2.ConditionReason) xpv2.ConditionReason {
	if handshake.TypedRefusal(r) {
		return r
	}
	return v1alpha1.ReasonDNSRefused
}

// records lists the DNS records this PublicHostname controls.
func (r *Reconciler) records(ctx context.Context, ph *v1alpha1.PublicHostname) ([]dnsv1alpha1.DNSRecord, error) {
	l := &dnsv1alpha1.DNSRecordList{}
	if err := r.kube.List(ctx, l, client.InNamespace(ph.Namespace), index.Controlled(string(ph.UID))); err != nil {
		return nil, errors.Wrap(err, "cannot list DNSRecords")
	}
	out := l.Items[:0]
	for _, rec := range l.Items {
		if c := metav1.GetControllerOf(&rec); c != nil && c.UID == ph.UID {
			out = append(out, rec)
		}
	}
	return out, nil
}

// adopt takes over the DNS record that this PublicHostname's own controller
// (an Ingress, before published hostnames existed) made for the hostname, so
// an upgrade moves the record instead of deleting and recreating it (which
// would take the hostname off the internet for as long as that takes).
func (r *Reconciler) adopt(ctx context.Context, ph *v1alpha1.PublicHostname, host string) (*dnsv1alpha1.DNSRecord, error) {
	owner := metav1.GetControllerOf(ph)
	if owner == nil {
		return nil, nil
	}
	l := &dnsv1alpha1.DNSRecordList{}
	// The records the owner controls, by the controller index: the
	// tunnel's are a thousand at a thousand hostnames.
	if err := r.kube.List(ctx, l, client.InNamespace(ph.Namespace), index.Controlled(string(owner.UID))); err != nil {
		return nil, errors.Wrap(err, "cannot list DNSRecords")
	}
	for i := range l.Items {
		rec := &l.Items[i]
		c := metav1.GetControllerOf(rec)
		onTunnel := rec.Labels[publish.LabelTunnel] == publish.LabelValue(ph.Spec.TunnelRef.Name)
		if c == nil || c.UID != owner.UID || !onTunnel || meta.WasDeleted(rec) || !strings.EqualFold(rec.Spec.ForProvider.Name, host) {
			continue
		}
		rec.OwnerReferences = nil
		if err := controllerutil.SetControllerReference(ph, rec, r.kube.Scheme()); err != nil {
			return nil, errors.Wrap(err, "cannot own DNSRecord")
		}
		meta.AddLabels(rec, map[string]string{publish.LabelPublicHostname: publish.LabelValue(ph.Name)})
		if err := r.kube.Update(ctx, rec); err != nil {
			return nil, errors.Wrapf(err, "cannot take over DNSRecord %s", rec.Name)
		}
		r.record.Event(ph, event.Normal("AdoptedDNSRecord", fmt.Sprintf("Took over DNSRecord %s from %s %s, which made it for this hostname", rec.Name, c.Kind, c.Name)))
		return rec, nil
	}
	return nil, nil
}

// DesiredRecord is the DNS record a PublicHostname wants: a proxied CNAME to
// its tunnel.
func DesiredRecord(ph *v1alpha1.PublicHostname, tgt target.Target, host string) *dnsv1alpha1.DNSRecord {
	labels := map[string]string{}
	for k, v := range ph.Labels {
		if strings.HasPrefix(k, "tunnels.cloudflare.com/") {
			labels[k] = v
		}
	}
	labels[publish.LabelTunnel] = publish.LabelValue(ph.Spec.TunnelRef.Name)
	if t := handshake.Tunnel(ph); t.Namespace != ph.Namespace {
		labels[publish.LabelTunnelNamespace] = t.Namespace
	}
	labels[publish.LabelPublicHostname] = publish.LabelValue(ph.Name)
	return &dnsv1alpha1.DNSRecord{
		ObjectMeta: metav1.ObjectMeta{Namespace: ph.Namespace, Name: publish.ObjectName(ph.Name, publish.KindDNSRecord, host), Labels: labels},
		Spec: dnsv1alpha1.DNSRecordSpec{
			ManagedResourceSpec: xpv2.ManagedResourceSpec{ProviderConfigReference: tgt.ProviderConfig.DeepCopy()},
			ForProvider: dnsv1alpha1.DNSRecordParameters{
				Name:    host,
				Type:    "CNAME",
				Content: cname(tgt.ID),
				Proxied: ptr.To(true),
			},
		},
	}
}

// applyRecord creates or updates the record; cur is the one it has, if any.
func (r *Reconciler) applyRecord(ctx context.Context, ph *v1alpha1.PublicHostname, tgt target.Target, host string, cur *dnsv1alpha1.DNSRecord) (*dnsv1alpha1.DNSRecord, error) {
	want := DesiredRecord(ph, tgt, host)
	if cur == nil {
		existing := &dnsv1alpha1.DNSRecord{}
		err := r.kube.Get(ctx, client.ObjectKeyFromObject(want), existing)
		if err == nil {
			// Its name is taken by a record this hostname does not control.
			return nil, errors.Errorf("DNSRecord %s exists and is not controlled by this PublicHostname; left alone", want.Name)
		}
		if !kerrors.IsNotFound(err) {
			return nil, errors.Wrap(err, "cannot get DNSRecord")
		}
		if err := controllerutil.SetControllerReference(ph, want, r.kube.Scheme()); err != nil {
			return nil, errors.Wrap(err, "cannot own DNSRecord")
		}
		if err := r.kube.Create(ctx, want); err != nil {
			return nil, errors.Wrapf(err, "cannot create DNSRecord %s", want.Name)
		}
		r.record.Event(ph, event.Normal("CreatedDNSRecord", "Created DNSRecord "+want.Name))
		return want, nil
	}
	if meta.WasDeleted(cur) {
		return cur, nil
	}
	before := cur.DeepCopy()
	for k, v := range want.Labels {
		meta.AddLabels(cur, map[string]string{k: v})
	}
	cur.Spec.ForProvider.Name = want.Spec.ForProvider.Name
	cur.Spec.ForProvider.Type = want.Spec.ForProvider.Type
	cur.Spec.ForProvider.Content = want.Spec.ForProvider.Content
	cur.Spec.ForProvider.Proxied = want.Spec.ForProvider.Proxied
	cur.Spec.ProviderConfigReference = want.Spec.ProviderConfigReference
	if equality.Semantic.DeepEqual(before, cur) {
		return cur, nil
	}
	return cur, errors.Wrapf(r.kube.Update(ctx, cur), "cannot update DNSRecord %s", cur.Name)
}

func (r *Reconciler) deleteRecord(ctx context.Context, ph *v1alpha1.PublicHostname, rec *dnsv1alpha1.DNSRecord) error {
	if meta.WasDeleted(rec) {
		return nil
	}
	if err := r.kube.Delete(ctx, rec, client.Preconditions{UID: &rec.UID}); client.IgnoreNotFound(err) != nil {
		return errors.Wrapf(err, "cannot delete DNSRecord %s", rec.Name)
	}
	r.record.Event(ph, event.Normal("DeletingDNSRecord", fmt.Sprintf("Deleting DNSRecord %s, no longer wanted; it goes once Cloudflare confirms the deletion", rec.Name)))
	return nil
}

// writeResourceRefs names in spec.crossplane.resourceRefs the children
// that exist: its DNS records and its Access application (crossplane
// resource trace shows them).
func (r *Reconciler) writeResourceRefs(ctx context.Context, ph *v1alpha1.PublicHostname) error {
	recs, err := r.records(ctx, ph)
	if err != nil {
		return err
	}
	var refs []v1alpha1.CompositeResourceRef
	for i := range recs {
		ref, err := resourcerefs.Ref(r.kube.Scheme(), &recs[i])
		if err != nil {
			return err
		}
		refs = append(refs, ref)
	}
	for _, obj := range []client.Object{&lbv1alpha1.LoadBalancerMonitor{}, &lbv1alpha1.LoadBalancerPool{}, &lbv1alpha1.LoadBalancer{}} {
		if ph.Status.LoadBalancing == nil {
			break
		}
		obj.SetNamespace(ph.Namespace)
		obj.SetName(LoadBalancingName(ph))
		made, err := resourcerefs.Controlled(ctx, r.kube, ph, obj)
		if err != nil {
			return err
		}
		refs = append(refs, made...)
	}
	if ph.Spec.Access != nil {
		app, err := resourcerefs.Controlled(ctx, r.kube, ph, &ztv1alpha1.AccessApplication{ObjectMeta: metav1.ObjectMeta{Namespace: ph.Namespace, Name: ApplicationName(ph)}})
		if err != nil {
			return err
		}
		refs = append(refs, app...)
	}
	return resourcerefs.Write(ctx, r.kube, ph, func(p *v1alpha1.PublicHostname) **v1alpha1.CompositeCrossplane { return &p.Spec.Crossplane }, refs)
}
