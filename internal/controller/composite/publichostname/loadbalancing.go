package publichostname

// Load balancing: a load-balanced hostname has no DNS record. Its
// PublicHostname makes, besides its rules, this cluster's pool (its tunnel
// as the one origin, the hostname as Host header, a description naming the
// hostname: the proof another cluster's load balancer checks) and the
// pool's monitor; where the spec asks, also the load balancer, which names
// the pools by name and lists only those proven to serve the hostname (the
// LoadBalancer managed resource decides that: it alone reads Cloudflare).

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/common"
	lbv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/loadbalancing/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/handshake"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/handshake/target"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
)

// Pool health as status.loadBalancing.poolHealth says it.
const (
	PoolHealthy   = "Healthy"
	PoolUnhealthy = "Unhealthy"
	PoolUnknown   = "Unknown"
)

// typeHealthy is the condition a LoadBalancerPool reports its health on.
const typeHealthy xpv2.ConditionType = "Healthy"

// ReasonLoadBalanced (DNSReady=True for a load-balanced hostname): the
// load balancer, not a DNS record, holds the name.
const ReasonLoadBalanced xpv2.ConditionReason = "LoadBalanced"

// LoadBalancingName is the name of the monitor, pool and load balancer a
// PublicHostname makes (three kinds, one name).
func LoadBalancingName(ph *v1alpha1.PublicHostname) string { return ph.Name }

// connectorProbeOrigin answers the connector-only probe from cloudflared.
const connectorProbeOrigin = "http_status:200"

// WithConnectorProbe is the spec with the rule a connector-only monitor
// probes: its path, answered by cloudflared itself.
func WithConnectorProbe(spec v1alpha1.PublicHostnameSpec) v1alpha1.PublicHostnameSpec {
	lb := spec.LoadBalancing
	if lb == nil || lb.Monitor == nil || !lb.Monitor.ConnectorOnly || lb.Monitor.Path == nil {
		return spec
	}
	probe := v1alpha1.PathOrigin{Path: *lb.Monitor.Path, PathType: v1alpha1.PathTypeExact, Origin: v1alpha1.Origin{URL: ptr.To(connectorProbeOrigin)}}
	spec.Paths = append([]v1alpha1.PathOrigin{probe}, spec.Paths...)
	return spec
}

func childMeta(ph *v1alpha1.PublicHostname) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: ph.Namespace, Name: LoadBalancingName(ph), Labels: map[string]string{publish.LabelPublicHostname: publish.LabelValue(ph.Name)}}
}

// DesiredMonitor is the monitor of the hostname's pool: by default an
// https probe of "/" with the hostname as Host header, so the tunnel
// routes it to the hostname's own origin.
func DesiredMonitor(ph *v1alpha1.PublicHostname, tgt target.Target) *lbv1alpha1.LoadBalancerMonitor {
	host, _ := publish.Hostname(ph.Spec.Hostname)
	m := ptr.Deref(ph.Spec.LoadBalancing.Monitor, v1alpha1.HostnameMonitor{})
	return &lbv1alpha1.LoadBalancerMonitor{
		ObjectMeta: childMeta(ph),
		Spec: lbv1alpha1.LoadBalancerMonitorSpec{
			ManagedResourceSpec: xpv2.ManagedResourceSpec{ProviderConfigReference: tgt.ProviderConfig.DeepCopy()},
			ForProvider: lbv1alpha1.LoadBalancerMonitorParameters{
				// A description of its own, or the managed resource would
				// late-initialise one this would take away again.
				Description: ptr.To(lbv1alpha1.PoolDescription(host, ph.Namespace)),
				Type:        ptr.Deref(m.Type, "https"), Host: ptr.To(host), Path: ptr.To(ptr.Deref(m.Path, "/")), ExpectedCodes: m.ExpectedCodes,
				Interval: m.Interval, Timeout: m.Timeout, Retries: m.Retries,
			},
		},
	}
}

// DesiredPool is this cluster's pool for the hostname: its tunnel the one
// origin, the hostname its Host header, and a description naming the
// hostname (lbv1alpha1.PoolDescription), the proof other clusters' load
// balancers read.
func DesiredPool(ph *v1alpha1.PublicHostname, tgt target.Target) *lbv1alpha1.LoadBalancerPool {
	host, _ := publish.Hostname(ph.Spec.Hostname)
	return &lbv1alpha1.LoadBalancerPool{
		ObjectMeta: childMeta(ph),
		Spec: lbv1alpha1.LoadBalancerPoolSpec{
			ManagedResourceSpec: xpv2.ManagedResourceSpec{ProviderConfigReference: tgt.ProviderConfig.DeepCopy()},
			ForProvider: lbv1alpha1.LoadBalancerPoolParameters{
				Name:         ph.Spec.LoadBalancing.Pool,
				Description:  ptr.To(lbv1alpha1.PoolDescription(host, ph.Namespace)),
				MonitorIDRef: &xpv2.NamespacedReference{Name: LoadBalancingName(ph)},
				Origins:      []lbv1alpha1.PoolOrigin{{Name: "tunnel", TunnelID: ptr.To(tgt.ID), Host: ptr.To(host)}},
			},
		},
	}
}

// DesiredLoadBalancer is the load balancer of the hostname: the pools by
// name, the fallback the last of them unless named.
func DesiredLoadBalancer(ph *v1alpha1.PublicHostname, tgt target.Target) *lbv1alpha1.LoadBalancer {
	host, _ := publish.Hostname(ph.Spec.Hostname)
	lb := ph.Spec.LoadBalancing.LoadBalancer
	pools := lb.Pools
	return &lbv1alpha1.LoadBalancer{
		ObjectMeta: childMeta(ph),
		Spec: lbv1alpha1.LoadBalancerSpec{
			ManagedResourceSpec: xpv2.ManagedResourceSpec{ProviderConfigReference: tgt.ProviderConfig.DeepCopy()},
			ForProvider: lbv1alpha1.LoadBalancerParameters{
				Hostname:         host,
				PoolNames:        append([]string(nil), pools...),
				FallbackPoolName: ptr.To(ptr.Deref(lb.FallbackPool, pools[len(pools)-1])),
				SteeringPolicy:   lb.SteeringPolicy,
				SessionAffinity:  lb.SessionAffinity,
			},
		},
	}
}

// applyLoadBalancing converges a load-balanced hostname's pool, monitor
// and load balancer, and answers DNSReady: the load balancer holds the
// name once it (or, when another cluster holds it, this pool) is made.
func (r *Reconciler) applyLoadBalancing(ctx context.Context, ph *v1alpha1.PublicHostname, tgt target.Target) (xpv2.Condition, error) {
	if waiting, err := r.dropRecordsFirst(ctx, ph); err != nil || waiting != "" {
		return cond(v1alpha1.TypeDNSReady, false, ReasonDNSNotReady, waiting), err
	}
	if c, wait := lbPrerequisite(ph, tgt); wait {
		if c.Reason == ReasonNotAccepted {
			// The hostname is another PublicHostname's: nothing of this
			// one may stand at Cloudflare for it.
			if _, err := r.releaseLoadBalancing(ctx, ph); err != nil {
				return xpv2.Condition{}, err
			}
		}
		ph.SetConditions(cond(v1alpha1.TypeLoadBalanced, false, c.Reason, c.Message))
		return c, nil
	}
	before := PoolUnknown
	if ph.Status.LoadBalancing != nil && ph.Status.LoadBalancing.PoolHealth != "" {
		before = ph.Status.LoadBalancing.PoolHealth
	}
	st := &v1alpha1.LoadBalancingStatus{Monitor: LoadBalancingName(ph), Pool: LoadBalancingName(ph)}
	ph.Status.LoadBalancing = st
	mon, taken, err := applyChild(ctx, r, ph, DesiredMonitor(ph, tgt), &lbv1alpha1.LoadBalancerMonitor{}, syncMonitor)
	if err != nil || taken {
		return r.lbTaken(ph, "LoadBalancerMonitor", err)
	}
	pool, taken, err := applyChild(ctx, r, ph, DesiredPool(ph, tgt), &lbv1alpha1.LoadBalancerPool{}, syncPool)
	if err != nil || taken {
		return r.lbTaken(ph, "LoadBalancerPool", err)
	}
	st.PoolID, st.PoolHealth = meta.GetExternalName(pool), PoolHealth(pool)
	if e, changed := PoolHealthEvent(ph.Spec.LoadBalancing.Pool, before, st.PoolHealth, pool.GetCondition(typeHealthy).Message); changed {
		r.record.Event(ph, e)
	}
	var lb *lbv1alpha1.LoadBalancer
	switch {
	case ph.Spec.LoadBalancing.LoadBalancer == nil:
		if err := r.dropChild(ctx, ph, &lbv1alpha1.LoadBalancer{}); err != nil {
			return xpv2.Condition{}, err
		}
	case st.PoolID != "":
		// Made once its own pool is: a load balancer without it would
		// only wait, unproven.
		if lb, taken, err = applyChild(ctx, r, ph, DesiredLoadBalancer(ph, tgt), &lbv1alpha1.LoadBalancer{}, syncLoadBalancer); err != nil || taken {
			return r.lbTaken(ph, "LoadBalancer", err)
		}
		st.LoadBalancer = lb.Name
	}
	lbc := LoadBalancedCondition(ph.Spec.LoadBalancing, mon, pool, lb)
	ph.SetConditions(lbc)
	return LoadBalancedDNS(ph.Spec.LoadBalancing, lbc, pool, lb), nil
}

// lbPrerequisite says what a load-balanced hostname waits for before its
// pool is made: its tunnel's answer accepting it with its rules (a pool
// must not point at a tunnel that does not serve the hostname), and the
// tunnel's ID.
func lbPrerequisite(ph *v1alpha1.PublicHostname, tgt target.Target) (xpv2.Condition, bool) {
	answer := ph.Status.Tunnel
	switch {
	case answer == nil || answer.Tunnel != handshake.TunnelName(ph):
		return cond(v1alpha1.TypeDNSReady, false, v1alpha1.ReasonWaitingForTunnel, fmt.Sprintf("waiting for CloudflareTunnel %s to accept the hostname before its pool is made", handshake.TunnelName(ph))), true
	case !answer.Accepted:
		return cond(v1alpha1.TypeDNSReady, false, ReasonNotAccepted, "no pool: the hostname is not this PublicHostname's on the tunnel"), true
	case !tgt.Made || tgt.ID == "":
		return cond(v1alpha1.TypeDNSReady, false, v1alpha1.ReasonWaitingForTunnel, "waiting for the tunnel's ID, the pool's origin"), true
	case answer.Rules == 0:
		return cond(v1alpha1.TypeDNSReady, false, v1alpha1.ReasonWaitingForTunnel, fmt.Sprintf("waiting for CloudflareTunnel %s to take the hostname's rules before its pool is made", handshake.TunnelName(ph))), true
	}
	return xpv2.Condition{}, false
}

// dropRecordsFirst deletes the DNS records a hostname made before it was
// load-balanced: Cloudflare would let the load balancer shadow them, and
// the LoadBalancer refuses a hostname a record holds. It says what it
// waits for while one is still in Cloudflare.
func (r *Reconciler) dropRecordsFirst(ctx context.Context, ph *v1alpha1.PublicHostname) (string, error) {
	have, err := r.records(ctx, ph)
	if err != nil || len(have) == 0 {
		return "", err
	}
	names := make([]string, 0, len(have))
	for i := range have {
		if err := r.deleteRecord(ctx, ph, &have[i]); err != nil {
			return "", err
		}
		names = append(names, have[i].Name)
	}
	ph.Status.DNSRecord = ""
	return fmt.Sprintf("the hostname is load-balanced: waiting for DNSRecord %s to leave Cloudflare before the load balancer holds the name", strings.Join(names, ", ")), nil
}

// lbTaken is DNSReady (and LoadBalanced) for a child whose name another
// object holds, or err.
func (r *Reconciler) lbTaken(ph *v1alpha1.PublicHostname, kind string, err error) (xpv2.Condition, error) {
	if err != nil {
		return xpv2.Condition{}, err
	}
	msg := fmt.Sprintf("%s %s exists and is not this PublicHostname's; it is left alone, and the hostname is not load-balanced from here", kind, LoadBalancingName(ph))
	r.warnOnce(ph, v1alpha1.TypeLoadBalanced, v1alpha1.ReasonChildNameTaken, msg)
	c := cond(v1alpha1.TypeLoadBalanced, false, v1alpha1.ReasonChildNameTaken, msg)
	ph.SetConditions(c)
	return cond(v1alpha1.TypeDNSReady, false, v1alpha1.ReasonChildNameTaken, msg), nil
}

// Reasons of the events a load-balanced hostname's pool health changes
// make.
const (
	ReasonPoolUnhealthy event.Reason = "PoolUnhealthy"
	ReasonPoolHealthy   event.Reason = "PoolHealthy"
)

// PoolHealthEvent is the event the pool's health moving from before to now
// makes, and whether it makes one: a Warning when it turns Unhealthy (from
// Healthy, or at its first report), a Normal event when an unhealthy pool
// is Healthy again. why is the pool's Healthy condition's message.
func PoolHealthEvent(pool, before, now, why string) (event.Event, bool) {
	switch {
	case now == PoolUnhealthy && before != PoolUnhealthy:
		msg := fmt.Sprintf("pool %s is unhealthy: Cloudflare's load balancer serves the hostname from the next healthy pool in order, or the fallback pool", pool)
		if why != "" {
			msg += " (" + why + ")"
		}
		return event.Warning(ReasonPoolUnhealthy, errors.New(msg)), true
	case now == PoolHealthy && before == PoolUnhealthy:
		return event.Normal(ReasonPoolHealthy, fmt.Sprintf("pool %s is healthy again: the load balancer may serve from it", pool)), true
	}
	return event.Event{}, false
}

// PoolHealth reads the pool's health from its Healthy condition.
func PoolHealth(pool *lbv1alpha1.LoadBalancerPool) string {
	switch pool.GetCondition(typeHealthy).Status {
	case corev1.ConditionTrue:
		return PoolHealthy
	case corev1.ConditionFalse:
		return PoolUnhealthy
	}
	return PoolUnknown
}

// mrRefused says whether a managed resource was refused: Synced=False for
// a reason that does not pass by itself.
func mrRefused(mg resource.Managed) bool {
	synced := mg.GetCondition(xpv2.TypeSynced)
	return synced.Status == corev1.ConditionFalse && !common.Passing(synced.Reason) && synced.Reason != common.ReasonUnresolvedReference
}

func mrReady(mg resource.Managed) bool {
	return meta.GetExternalName(mg) != "" && mg.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue
}

// LoadBalancedCondition says whether what the spec asks for is made: the
// monitor and pool, and the load balancer with every pool it names proven
// (lb nil: not asked for, or not made yet).
func LoadBalancedCondition(spec *v1alpha1.LoadBalancing, mon *lbv1alpha1.LoadBalancerMonitor, pool *lbv1alpha1.LoadBalancerPool, lb *lbv1alpha1.LoadBalancer) xpv2.Condition {
	for _, mg := range []resource.Managed{mon, pool} {
		if mrRefused(mg) {
			c := mg.GetCondition(xpv2.TypeSynced)
			return cond(v1alpha1.TypeLoadBalanced, false, v1alpha1.ReasonPoolRefused, fmt.Sprintf("%s %s: %s", kindName(mg), mg.GetName(), c.Message))
		}
		if !mrReady(mg) {
			return cond(v1alpha1.TypeLoadBalanced, false, v1alpha1.ReasonWaitingForPool, fmt.Sprintf("waiting for %s %s to be made in Cloudflare", kindName(mg), mg.GetName()))
		}
	}
	if spec.LoadBalancer == nil {
		return cond(v1alpha1.TypeLoadBalanced, true, v1alpha1.ReasonLoadBalanced, fmt.Sprintf("pool %s is made; a load balancer of another cluster lists it once it proves the pool serves the hostname", spec.Pool))
	}
	if lb == nil {
		return cond(v1alpha1.TypeLoadBalanced, false, v1alpha1.ReasonWaitingForLoadBalancer, "waiting for the pool to be made before the load balancer")
	}
	synced := lb.GetCondition(xpv2.TypeSynced)
	switch {
	case mrRefused(lb) && meta.GetExternalName(lb) == "":
		return cond(v1alpha1.TypeLoadBalanced, false, v1alpha1.ReasonLoadBalancerRefused, fmt.Sprintf("LoadBalancer %s: %s", lb.Name, synced.Message))
	case !mrReady(lb):
		return cond(v1alpha1.TypeLoadBalanced, false, v1alpha1.ReasonWaitingForLoadBalancer, fmt.Sprintf("waiting for LoadBalancer %s to be made in Cloudflare: %s", lb.Name, strings.TrimSpace(string(synced.Reason)+" "+synced.Message)))
	}
	if p := lb.GetCondition(lbv1alpha1.TypePoolsProven); p.Status == corev1.ConditionFalse {
		return cond(v1alpha1.TypeLoadBalanced, false, v1alpha1.ReasonPoolNotProven, fmt.Sprintf("LoadBalancer %s: %s", lb.Name, p.Message))
	}
	return cond(v1alpha1.TypeLoadBalanced, true, v1alpha1.ReasonLoadBalanced, fmt.Sprintf("LoadBalancer %s lists every pool named, each proven to serve the hostname", lb.Name))
}

// LoadBalancedDNS is DNSReady of a load-balanced hostname: the name is
// held once the load balancer is made (here, or in another cluster for
// this pool); a pool another cluster has not proven does not hold back the
// hostname's own publication.
func LoadBalancedDNS(spec *v1alpha1.LoadBalancing, lbc xpv2.Condition, pool *lbv1alpha1.LoadBalancerPool, lb *lbv1alpha1.LoadBalancer) xpv2.Condition {
	switch {
	case lbc.Status == corev1.ConditionTrue || lbc.Reason == v1alpha1.ReasonPoolNotProven:
	case spec.LoadBalancer == nil && mrReady(pool):
	default:
		return cond(v1alpha1.TypeDNSReady, false, lbc.Reason, lbc.Message)
	}
	if spec.LoadBalancer == nil {
		return cond(v1alpha1.TypeDNSReady, true, ReasonLoadBalanced, fmt.Sprintf("no DNS record: the hostname is load-balanced, and the load balancer of the cluster that holds it lists pool %s once proven", spec.Pool))
	}
	return cond(v1alpha1.TypeDNSReady, true, ReasonLoadBalanced, fmt.Sprintf("no DNS record: LoadBalancer %s holds the name", lb.Name))
}

// applyChild creates want, or brings the child of its name this
// PublicHostname controls to it (sync copies what the PublicHostname
// decides); taken says an object of that name is another's, left alone.
func applyChild[T client.Object](ctx context.Context, r *Reconciler, ph *v1alpha1.PublicHostname, want, cur T, sync func(cur, want T)) (T, bool, error) {
	kind := kindName(want)
	err := r.kube.Get(ctx, client.ObjectKeyFromObject(want), cur)
	if kerrors.IsNotFound(err) {
		if err := controllerutil.SetControllerReference(ph, want, r.kube.Scheme()); err != nil {
			return want, false, errors.Wrapf(err, "cannot own %s", kind)
		}
		if err := r.kube.Create(ctx, want); err != nil {
			return want, false, errors.Wrapf(err, "cannot create %s %s", kind, want.GetName())
		}
		r.record.Event(ph, event.Normal(event.Reason("Created"+kind), fmt.Sprintf("Created %s %s", kind, want.GetName())))
		return want, false, nil
	}
	if err != nil {
		return cur, false, errors.Wrapf(err, "cannot get %s", kind)
	}
	if !metav1.IsControlledBy(cur, ph) {
		return cur, true, nil
	}
	before := cur.DeepCopyObject()
	sync(cur, want)
	if equality.Semantic.DeepEqual(before, cur) || meta.WasDeleted(cur) {
		return cur, false, nil
	}
	return cur, false, errors.Wrapf(r.kube.Update(ctx, cur), "cannot update %s %s", kind, cur.GetName())
}

// kindName is the kind of a typed object (typed objects read from the API
// server carry no kind of their own).
func kindName(obj any) string {
	t := fmt.Sprintf("%T", obj)
	return t[strings.LastIndex(t, ".")+1:]
}

func syncMonitor(cur, want *lbv1alpha1.LoadBalancerMonitor) {
	meta.AddLabels(cur, want.Labels)
	cur.Spec.ProviderConfigReference = want.Spec.ProviderConfigReference
	cur.Spec.ForProvider = want.Spec.ForProvider
}

func syncPool(cur, want *lbv1alpha1.LoadBalancerPool) {
	meta.AddLabels(cur, want.Labels)
	cur.Spec.ProviderConfigReference = want.Spec.ProviderConfigReference
	// The monitor's ID is resolved from the reference at each write.
	cur.Spec.ForProvider = want.Spec.ForProvider
}

func syncLoadBalancer(cur, want *lbv1alpha1.LoadBalancer) {
	meta.AddLabels(cur, want.Labels)
	cur.Spec.ProviderConfigReference = want.Spec.ProviderConfigReference
	desc := cur.Spec.ForProvider.Description // late-initialised from Cloudflare
	cur.Spec.ForProvider = want.Spec.ForProvider
	cur.Spec.ForProvider.Description = desc
}

// dropChild deletes the child of its kind this PublicHostname controls, if
// any. A cluster that has not activated the kind has none.
func (r *Reconciler) dropChild(ctx context.Context, ph *v1alpha1.PublicHostname, obj client.Object) error {
	_, err := r.deleteChild(ctx, ph, obj)
	return err
}

// deleteChild deletes the child of obj's kind this PublicHostname
// controls, and says whether one is still there (its finalizer waits for
// Cloudflare).
func (r *Reconciler) deleteChild(ctx context.Context, ph *v1alpha1.PublicHostname, obj client.Object) (bool, error) {
	err := r.kube.Get(ctx, types.NamespacedName{Namespace: ph.Namespace, Name: LoadBalancingName(ph)}, obj)
	if kerrors.IsNotFound(err) || apimeta.IsNoMatchError(err) || (err == nil && !metav1.IsControlledBy(obj, ph)) {
		return false, nil
	}
	if err != nil {
		return false, errors.Wrap(err, "cannot get a load balancing child")
	}
	if meta.WasDeleted(obj) {
		return true, nil
	}
	if err := r.kube.Delete(ctx, obj, client.Preconditions{UID: ptr.To(obj.GetUID())}); client.IgnoreNotFound(err) != nil {
		return false, errors.Wrapf(err, "cannot delete %s", obj.GetName())
	}
	return true, nil
}

// releaseLoadBalancing deletes the load balancer, pool and monitor this
// PublicHostname made, each once the one before it is gone (Cloudflare
// refuses to delete a pool a load balancer lists, or a monitor a pool
// uses), and says whether all are gone.
func (r *Reconciler) releaseLoadBalancing(ctx context.Context, ph *v1alpha1.PublicHostname) (bool, error) {
	for _, obj := range []client.Object{&lbv1alpha1.LoadBalancer{}, &lbv1alpha1.LoadBalancerPool{}, &lbv1alpha1.LoadBalancerMonitor{}} {
		if left, err := r.deleteChild(ctx, ph, obj); err != nil || left {
			return false, err
		}
	}
	ph.Status.LoadBalancing = nil
	return true, nil
}

// applyEdge converges what holds the hostname's name: its DNS record, or,
// for a load-balanced hostname, its pool, monitor and load balancer. What
// the other way made goes.
func (r *Reconciler) applyEdge(ctx context.Context, ph *v1alpha1.PublicHostname, tgt target.Target, ahead bool) (xpv2.Condition, error) {
	if ph.Spec.LoadBalancing != nil {
		return r.applyLoadBalancing(ctx, ph, tgt)
	}
	if ph.Status.LoadBalancing != nil || slices.ContainsFunc(ph.Status.Conditions, isLoadBalanced) {
		// No longer load-balanced: what it made goes (a DNS record
		// waits for the load balancer, which the LoadBalancer's own
		// finalizer keeps until Cloudflare deleted it).
		gone, err := r.releaseLoadBalancing(ctx, ph)
		if err != nil || !gone {
			return cond(v1alpha1.TypeDNSReady, false, ReasonDNSNotReady, fmt.Sprintf("no longer load-balanced: waiting for its LoadBalancer, LoadBalancerPool and LoadBalancerMonitor %s to leave Cloudflare before its DNS record is made", LoadBalancingName(ph))), err
		}
		ph.Status.Conditions = slices.DeleteFunc(ph.Status.Conditions, isLoadBalanced)
	}
	return r.applyDNS(ctx, ph, tgt, ahead)
}

func isLoadBalanced(c xpv2.Condition) bool { return c.Type == v1alpha1.TypeLoadBalanced }
