// Package loadbalancerpool reconciles LoadBalancerPool managed resources
// with Cloudflare Load Balancing pools.
package loadbalancerpool

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/common"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/loadbalancing/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/mr"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/ownership"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/poolhealth"
)

var kind = mr.Kind[*v1alpha1.LoadBalancerPool]{
	GVK:        v1alpha1.LoadBalancerPoolGroupVersionKind,
	NewObj:     func() *v1alpha1.LoadBalancerPool { return &v1alpha1.LoadBalancerPool{} },
	NewList:    func() client.ObjectList { return &v1alpha1.LoadBalancerPoolList{} },
	ObservedID: func(cr *v1alpha1.LoadBalancerPool) string { return cr.Status.AtProvider.ID },
	References: func(cr *v1alpha1.LoadBalancerPool) []*string {
		p := cr.Spec.ForProvider
		return []*string{mr.RefNamespace(p.MonitorIDRef), mr.SelectorNamespace(p.MonitorIDSelector)}
	},
	TunnelIDs: TunnelIDs,
	External: func(c mr.Connection) managed.TypedExternalClient[*v1alpha1.LoadBalancerPool] {
		return &external{pools: c.Cloudflare, conn: c}
	},
}

// Setup adds the LoadBalancerPool controller.
func Setup(mgr ctrl.Manager, o controller.Options, s mr.Settings) error {
	return mr.Setup(mgr, o, s, kind)
}

// SetupGated adds the LoadBalancerPool controller once its CRD is
// established.
func SetupGated(mgr ctrl.Manager, o controller.Options, s mr.Settings) error {
	return mr.SetupGated(mgr, o, s, kind)
}

// Pools is the part of the Load Balancing API a pool needs.
type Pools interface {
	ListPools(ctx context.Context) ([]cloudflare.Pool, error)
	GetPool(ctx context.Context, id string) (*cloudflare.Pool, error)
	CreatePool(ctx context.Context, in cloudflare.PoolInput) (*cloudflare.Pool, error)
	UpdatePool(ctx context.Context, id string, in cloudflare.PoolInput) (*cloudflare.Pool, error)
	DeletePool(ctx context.Context, id string) error
	GetLoadBalancerMonitor(ctx context.Context, id string) (*cloudflare.LoadBalancerMonitor, error)
	GetPoolHealth(ctx context.Context, id string) (*cloudflare.PoolHealth, error)
}

type external struct {
	pools Pools
	conn  mr.Connection
}

func (e *external) Disconnect(context.Context) error { return nil }

func (e *external) identity(cr *v1alpha1.LoadBalancerPool) ownership.Identity {
	return e.conn.Identity(v1alpha1.LoadBalancerPoolKind, cr)
}

// TunnelIDs are the tunnels the pool's origins are: a tunnel another
// namespace manages is refused (mr's tenancy guard).
func TunnelIDs(cr *v1alpha1.LoadBalancerPool) []string {
	var ids []string
	for _, o := range cr.Spec.ForProvider.Origins {
		if o.TunnelID != nil {
			ids = append(ids, *o.TunnelID)
		}
	}
	return ids
}

func (e *external) Observe(ctx context.Context, cr *v1alpha1.LoadBalancerPool) (managed.ExternalObservation, error) {
	p, adopted, err := mr.Locate(ctx, cr, mr.Lookup[cloudflare.Pool]{
		Get: func(ctx context.Context, id string) (*cloudflare.Pool, error) {
			o, err := e.pools.GetPool(ctx, id)
			return o, errors.Wrap(err, "cannot get load balancer pool")
		},
		Find:    func(ctx context.Context) (*cloudflare.Pool, error) { return e.find(ctx, cr) },
		ID:      func(p *cloudflare.Pool) string { return p.ID },
		Deleted: func(*cloudflare.Pool) bool { return false },
	})
	if err != nil || p == nil {
		if err == nil {
			e.conn.Metrics.SetPoolHealthy(name(cr), false, false)
		}
		return managed.ExternalObservation{ResourceExists: false}, err
	}
	cr.SetConditions(xpv2.Available())
	last := cr.Status.AtProvider.Health
	cr.Status.AtProvider = v1alpha1.LoadBalancerPoolObservation{ID: p.ID, Addresses: addresses(p.Origins), CreatedOn: mr.Time(&p.CreatedOn)}
	e.observeHealth(ctx, cr, last)
	lateInit := LateInitialize(&cr.Spec.ForProvider, p)
	want, err := e.input(ctx, cr)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	diff := Diff(want, *p)
	return managed.ExternalObservation{
		ResourceExists:          true,
		ResourceUpToDate:        diff == "",
		ResourceLateInitialized: adopted || lateInit,
		Diff:                    diff,
	}, nil
}

// observeHealth puts the health Cloudflare reports for the pool in its
// status, its Healthy condition and its metric: one request per poll,
// which the load balancers listing the pool share (the cached client). A
// failed read keeps the last health, says it is unknown now, and does not
// fail the observation: the pool itself is as desired.
func (e *external) observeHealth(ctx context.Context, cr *v1alpha1.LoadBalancerPool, last *v1alpha1.PoolHealth) {
	h, err := e.pools.GetPoolHealth(ctx, cr.Status.AtProvider.ID)
	if err != nil {
		cr.Status.AtProvider.Health = last
		cr.SetConditions(poolhealth.HealthUnknown("cannot read the pool's health from Cloudflare: " + err.Error()))
		return
	}
	health, cond := poolhealth.Pool(h)
	cr.Status.AtProvider.Health = health
	cr.SetConditions(cond)
	e.conn.Metrics.SetPoolHealthy(name(cr), health != nil && health.Healthy, health != nil)
}

func name(cr *v1alpha1.LoadBalancerPool) types.NamespacedName {
	return types.NamespacedName{Namespace: cr.GetNamespace(), Name: cr.GetName()}
}

// find looks up the pool of the desired name (names are unique in an
// account) and takes it only with this resource's ownership marker; one
// without it is someone else's. What a create whose answer was lost left
// is listed from after the create began; otherwise the account's snapshot
// serves, if it is no older than a poll.
func (e *external) find(ctx context.Context, cr *v1alpha1.LoadBalancerPool) (*cloudflare.Pool, error) {
	since := time.Now().Add(-e.conn.PollInterval)
	if !meta.GetExternalCreatePending(cr).IsZero() {
		since = mr.CreateSettledAt(cr, time.Now())
	}
	pools, err := e.pools.ListPools(cloudflare.ListedAfter(ctx, since))
	if err != nil {
		return nil, errors.Wrap(err, "cannot look for an existing load balancer pool")
	}
	for i := range pools {
		if pools[i].Name != cr.Spec.ForProvider.Name {
			continue
		}
		if _, mark, _ := ownership.Split(pools[i].Description); e.identity(cr).Made(mark) {
			return &pools[i], nil
		}
		return nil, &mr.NameTakenError{Kind: "load balancer pool", Name: pools[i].Name, ID: pools[i].ID, Created: pools[i].CreatedOn}
	}
	return nil, nil
}

func (e *external) Create(ctx context.Context, cr *v1alpha1.LoadBalancerPool) (managed.ExternalCreation, error) {
	in, err := e.checked(ctx, cr)
	if err != nil {
		return managed.ExternalCreation{}, err
	}
	p, err := e.pools.CreatePool(ctx, in)
	if err != nil {
		// A name taken since the last look, by this resource (a create
		// whose answer was lost) or by someone else, whom find names.
		if found, ferr := e.find(cloudflare.ListedAfter(ctx, time.Now()), cr); ferr != nil || found != nil {
			p, err = found, ferr
		}
	}
	if err != nil {
		return managed.ExternalCreation{}, errors.Wrap(err, "cannot create load balancer pool")
	}
	meta.SetExternalName(cr, p.ID)
	return managed.ExternalCreation{}, nil
}

func (e *external) Update(ctx context.Context, cr *v1alpha1.LoadBalancerPool) (managed.ExternalUpdate, error) {
	in, err := e.checked(ctx, cr)
	if err != nil {
		return managed.ExternalUpdate{}, err
	}
	_, err = e.pools.UpdatePool(ctx, meta.GetExternalName(cr), in)
	return managed.ExternalUpdate{}, errors.Wrap(err, "cannot update load balancer pool")
}

// checked is the pool to write, or why it is refused: every reference
// resolved, and no TCP monitor on a tunnel origin.
func (e *external) checked(ctx context.Context, cr *v1alpha1.LoadBalancerPool) (cloudflare.PoolInput, error) {
	in, err := e.input(ctx, cr)
	if err != nil || in.Monitor == "" || !hasTunnelOrigin(in.Origins) {
		return in, err
	}
	m, err := e.pools.GetLoadBalancerMonitor(ctx, in.Monitor)
	if err != nil {
		return in, errors.Wrap(err, "cannot get the pool's monitor")
	}
	return in, TunnelMonitorCheck(m.Type)
}

// input is the pool to write for cr, its monitor reference read now.
func (e *external) input(ctx context.Context, cr *v1alpha1.LoadBalancerPool) (cloudflare.PoolInput, error) {
	p := cr.Spec.ForProvider
	id, err := v1alpha1.MonitorOf(ctx, e.conn.Kube, cr.GetNamespace(), p)
	if err != nil {
		return cloudflare.PoolInput{}, &UnresolvedMonitorError{Err: err}
	}
	p.MonitorID = &id
	return Input(p, e.identity(cr).Mark())
}

// UnresolvedMonitorError refuses a write while the monitor reference
// names no monitor with an ID yet (fail closed: a pool is not written
// without the monitor asked for).
type UnresolvedMonitorError struct{ Err error }

func (e *UnresolvedMonitorError) Error() string {
	return "the pool's monitor is not resolved: " + e.Err.Error()
}

// ConditionReason of an unresolved monitor: UnresolvedReference.
func (e *UnresolvedMonitorError) ConditionReason() xpv2.ConditionReason {
	return common.ReasonUnresolvedReference
}

// TunnelMonitorCheck refuses a monitor type that cannot probe tunnel
// origins.
func TunnelMonitorCheck(monitorType string) error {
	if monitorType == "tcp" {
		return &mr.UnsupportedError{What: "a tcp monitor on tunnel origins", Why: "Cloudflare documents that TCP monitors do not work on Cloudflare Tunnel origins (<tunnel ID>.cfargotunnel.com): every origin would be reported unhealthy. Use an http or https monitor with the hostname as its host"}
	}
	return nil
}

func hasTunnelOrigin(origins []cloudflare.PoolOrigin) bool {
	for _, o := range origins {
		if strings.HasSuffix(o.Address, v1alpha1.TunnelOriginSuffix) {
			return true
		}
	}
	return false
}

// Delete deletes the pool; while load balancers use it Cloudflare refuses,
// and the deletion waits.
func (e *external) Delete(ctx context.Context, cr *v1alpha1.LoadBalancerPool) (managed.ExternalDelete, error) {
	id := meta.GetExternalName(cr)
	err := e.pools.DeletePool(ctx, id)
	switch {
	case err == nil || cloudflare.IsNotFound(err):
		e.conn.Metrics.SetPoolHealthy(name(cr), false, false)
		return managed.ExternalDelete{}, nil
	case cloudflare.IsReferenced(err):
		return managed.ExternalDelete{}, &mr.InUseError{Kind: "load balancer pool", ID: id, By: "load balancers (Cloudflare refused the deletion); remove it from their default and fallback pools (or delete them) first"}
	}
	return managed.ExternalDelete{}, errors.Wrap(err, "cannot delete load balancer pool")
}

func addresses(origins []cloudflare.PoolOrigin) []string {
	out := make([]string, 0, len(origins))
	for _, o := range origins {
		out = append(out, o.Address)
	}
	return out
}

// UnresolvedOriginError refuses a write while an origin's tunnel reference
// has no tunnel ID (fail closed: an origin without an address is not sent).
type UnresolvedOriginError struct{ Origin string }

func (e *UnresolvedOriginError) Error() string {
	return fmt.Sprintf("origin %q names a tunnel whose ID is not known yet (its CloudflareTunnel has no status.tunnelID); nothing is written until it has", e.Origin)
}

// ConditionReason of an unresolved origin: UnresolvedReference.
func (e *UnresolvedOriginError) ConditionReason() xpv2.ConditionReason {
	return common.ReasonUnresolvedReference
}
