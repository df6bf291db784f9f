// Package loadbalancer reconciles LoadBalancer managed resources with a
// zone's Cloudflare load balancers.
package loadbalancer

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
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
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare/zonename"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/mr"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/ownership"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/poolhealth"
)

var kind = mr.Kind[*v1alpha1.LoadBalancer]{
	GVK:        v1alpha1.LoadBalancerGroupVersionKind,
	NewObj:     func() *v1alpha1.LoadBalancer { return &v1alpha1.LoadBalancer{} },
	NewList:    func() client.ObjectList { return &v1alpha1.LoadBalancerList{} },
	ObservedID: func(cr *v1alpha1.LoadBalancer) string { return cr.Status.AtProvider.ID },
	References: func(cr *v1alpha1.LoadBalancer) []*string {
		p := cr.Spec.ForProvider
		out := []*string{mr.SelectorNamespace(p.DefaultPoolsSelector), mr.RefNamespace(p.FallbackPoolRef), mr.SelectorNamespace(p.FallbackPoolSelector)}
		for i := range p.DefaultPoolsRefs {
			out = append(out, mr.RefNamespace(&p.DefaultPoolsRefs[i]))
		}
		return out
	},
	// The hostname must be inside the provider config's allowed hostname
	// suffixes, and no other namespace may hold it (mr's holder check).
	Hostnames:     hostnames,
	EdgeHostnames: hostnames,
	External: func(c mr.Connection) managed.TypedExternalClient[*v1alpha1.LoadBalancer] {
		return &external{api: c.Cloudflare, conn: c}
	},
}

func hostnames(cr *v1alpha1.LoadBalancer) []string {
	return []string{zonename.Normalize(cr.Spec.ForProvider.Hostname)}
}

// Setup adds the LoadBalancer controller.
func Setup(mgr ctrl.Manager, o controller.Options, s mr.Settings) error {
	return mr.Setup(mgr, o, s, kind)
}

// SetupGated adds the LoadBalancer controller once its CRD is established.
func SetupGated(mgr ctrl.Manager, o controller.Options, s mr.Settings) error {
	return mr.SetupGated(mgr, o, s, kind)
}

// API is the part of the Cloudflare API a load balancer needs: its own
// calls, the zones to find its zone in, and the DNS records that may hold
// its hostname.
type API interface {
	ListLoadBalancers(ctx context.Context, zoneID string) ([]cloudflare.LoadBalancer, error)
	GetLoadBalancer(ctx context.Context, zoneID, id string) (*cloudflare.LoadBalancer, error)
	CreateLoadBalancer(ctx context.Context, zoneID string, in cloudflare.LoadBalancerInput) (*cloudflare.LoadBalancer, error)
	UpdateLoadBalancer(ctx context.Context, zoneID, id string, in cloudflare.LoadBalancerInput) (*cloudflare.LoadBalancer, error)
	DeleteLoadBalancer(ctx context.Context, zoneID, id string) error
	ListZones(ctx context.Context, name string) ([]cloudflare.Zone, error)
	ListDNSRecordsSince(ctx context.Context, zoneID string, f cloudflare.DNSRecordFilter, t time.Time) ([]cloudflare.DNSRecord, error)
	// The pools poolNames names and their tunnels' configurations, read
	// for their proof (proof.go), never written.
	ListPools(ctx context.Context) ([]cloudflare.Pool, error)
	GetTunnelConfiguration(ctx context.Context, id string) (*cloudflare.TunnelConfiguration, error)
	GetTunnel(ctx context.Context, id string) (*cloudflare.Tunnel, error)
	GetPoolHealth(ctx context.Context, id string) (*cloudflare.PoolHealth, error)
}

type external struct {
	api  API
	conn mr.Connection
}

func (e *external) Disconnect(context.Context) error { return nil }

func (e *external) identity(cr *v1alpha1.LoadBalancer) ownership.Identity {
	return e.conn.Identity(v1alpha1.LoadBalancerKind, cr)
}

// HostnameHeldError refuses a hostname whose DNS record or load balancer
// this resource did not make: Cloudflare would let a load balancer shadow
// the record (it takes precedence), and another's load balancer is never
// taken over.
type HostnameHeldError struct {
	Hostname, By string
}

func (e *HostnameHeldError) Error() string {
	return fmt.Sprintf("not allowed: hostname %s is held by %s, which this resource did not make; it is neither replaced nor shadowed. To take a load balancer over on purpose, set its ID as the crossplane.io/external-name annotation; a DNS record must be removed by its owner first", e.Hostname, e.By)
}

// ConditionReason of a hostname held by another: NotAllowed.
func (e *HostnameHeldError) ConditionReason() xpv2.ConditionReason { return common.ReasonNotAllowed }

// zone is the zone of the hostname: the one observed, while the hostname
// is still in it, else the account's zone that is the hostname's longest
// suffix; it must be one the provider config allows.
func (e *external) zone(ctx context.Context, cr *v1alpha1.LoadBalancer) (cloudflare.Zone, error) {
	host := zonename.Normalize(cr.Spec.ForProvider.Hostname)
	at := cr.Status.AtProvider
	z := cloudflare.Zone{ID: at.ZoneID, Name: at.ZoneName}
	if z.ID == "" || !zonename.In(host, z.Name) {
		zones, err := e.api.ListZones(ctx, "")
		if err != nil {
			return z, errors.Wrap(err, "cannot list zones")
		}
		var ok bool
		if z, ok = zonename.Closest(host, zones, func(z cloudflare.Zone) string { return z.Name }); !ok {
			return z, errors.Errorf("no zone of the account holds %s", host)
		}
	}
	return z, e.conn.Config.CheckZone(z.Name)
}

func (e *external) Observe(ctx context.Context, cr *v1alpha1.LoadBalancer) (managed.ExternalObservation, error) {
	z, err := e.zone(ctx, cr)
	if err != nil {
		if meta.WasDeleted(cr) && cr.Status.AtProvider.ZoneID == "" {
			return managed.ExternalObservation{ResourceExists: false}, nil
		}
		return managed.ExternalObservation{}, err
	}
	lb, adopted, err := mr.Locate(ctx, cr, mr.Lookup[cloudflare.LoadBalancer]{
		Get: func(ctx context.Context, id string) (*cloudflare.LoadBalancer, error) {
			o, err := e.api.GetLoadBalancer(ctx, z.ID, id)
			return o, errors.Wrap(err, "cannot get load balancer")
		},
		Find:    func(ctx context.Context) (*cloudflare.LoadBalancer, error) { return e.find(ctx, cr, z.ID) },
		ID:      func(lb *cloudflare.LoadBalancer) string { return lb.ID },
		Deleted: func(*cloudflare.LoadBalancer) bool { return false },
	})
	if err != nil || lb == nil {
		if err == nil {
			e.conn.Metrics.SetOnFallback(name(cr), false, false)
		}
		return managed.ExternalObservation{ResourceExists: false}, err
	}
	cr.SetConditions(xpv2.Available())
	cr.Status.AtProvider = v1alpha1.LoadBalancerObservation{ID: lb.ID, ZoneID: z.ID, ZoneName: z.Name, CreatedOn: mr.Time(&lb.CreatedOn)}
	e.observeServing(ctx, cr, lb)
	lateInit := LateInitialize(&cr.Spec.ForProvider, lb)
	p, err := e.params(ctx, cr)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	diff := Diff(Input(p, e.identity(cr).Mark()), *lb)
	return managed.ExternalObservation{
		ResourceExists:          true,
		ResourceUpToDate:        diff == "",
		ResourceLateInitialized: adopted || lateInit,
		Diff:                    diff,
	}, nil
}

// observeServing derives which pool serves from the health Cloudflare
// reports of each default pool, as Cloudflare holds the load balancer:
// one request per default pool per poll, shared with the pools' own
// resources (the cached client). A pool whose health cannot be read is
// unknown.
func (e *external) observeServing(ctx context.Context, cr *v1alpha1.LoadBalancer, lb *cloudflare.LoadBalancer) {
	health := map[string]*cloudflare.PoolHealth{}
	for _, id := range lb.DefaultPools {
		if _, seen := health[id]; !seen {
			health[id], _ = e.api.GetPoolHealth(ctx, id)
		}
	}
	served, cond := poolhealth.Serving(poolhealth.LoadBalancer{DefaultPools: lb.DefaultPools, FallbackPool: lb.FallbackPool, SteeringPolicy: lb.SteeringPolicy, Health: health})
	at := &cr.Status.AtProvider
	at.ServingPool, at.HealthyPools, at.FallbackRegions = served.Pool, served.HealthyPools, served.FallbackRegions
	cr.SetConditions(cond)
	known := cond.Reason != v1alpha1.ReasonHealthUnknown
	e.conn.Metrics.SetOnFallback(name(cr), known && cond.Status == corev1.ConditionFalse, known)
}

func name(cr *v1alpha1.LoadBalancer) types.NamespacedName {
	return types.NamespacedName{Namespace: cr.GetNamespace(), Name: cr.GetName()}
}

// find looks up the zone's load balancer of the hostname (one per name in
// a zone) and takes it only with this resource's ownership marker; one
// without it is another's, and refused.
func (e *external) find(ctx context.Context, cr *v1alpha1.LoadBalancer, zoneID string) (*cloudflare.LoadBalancer, error) {
	since := time.Now().Add(-e.conn.PollInterval)
	if !meta.GetExternalCreatePending(cr).IsZero() {
		since = mr.CreateSettledAt(cr, time.Now())
	}
	lbs, err := e.api.ListLoadBalancers(cloudflare.ListedAfter(ctx, since), zoneID)
	if err != nil {
		return nil, errors.Wrap(err, "cannot look for an existing load balancer")
	}
	host := zonename.Normalize(cr.Spec.ForProvider.Hostname)
	for i := range lbs {
		if zonename.Normalize(lbs[i].Name) != host {
			continue
		}
		if _, mark, _ := ownership.Split(lbs[i].Description); e.identity(cr).Made(mark) {
			return &lbs[i], nil
		}
		return nil, &HostnameHeldError{Hostname: host, By: "load balancer " + lbs[i].ID}
	}
	return nil, nil
}

// recordsHolding refuses a hostname a DNS record answers for: the new
// load balancer would silently take its place.
func (e *external) recordsHolding(ctx context.Context, zoneID, host string) error {
	records, err := e.api.ListDNSRecordsSince(ctx, zoneID, cloudflare.DNSRecordFilter{Name: host}, time.Now())
	if err != nil {
		return errors.Wrap(err, "cannot look for DNS records of the hostname")
	}
	for _, r := range records {
		if zonename.Normalize(r.Name) == host && (r.Type == "A" || r.Type == "AAAA" || r.Type == "CNAME") {
			return &HostnameHeldError{Hostname: host, By: fmt.Sprintf("DNS %s record %s", r.Type, r.ID)}
		}
	}
	return nil
}

func (e *external) Create(ctx context.Context, cr *v1alpha1.LoadBalancer) (managed.ExternalCreation, error) {
	p, err := e.params(ctx, cr)
	if err != nil {
		return managed.ExternalCreation{}, err
	}
	if err := resolved(p); err != nil {
		return managed.ExternalCreation{}, err
	}
	z, err := e.zone(ctx, cr)
	if err != nil {
		return managed.ExternalCreation{}, err
	}
	if err := e.recordsHolding(ctx, z.ID, zonename.Normalize(cr.Spec.ForProvider.Hostname)); err != nil {
		return managed.ExternalCreation{}, err
	}
	lb, err := e.api.CreateLoadBalancer(ctx, z.ID, Input(p, e.identity(cr).Mark()))
	if err != nil {
		// A name taken since the last look: this resource's (a create
		// whose answer was lost), or another's, which find names.
		if found, ferr := e.find(cloudflare.ListedAfter(ctx, time.Now()), cr, z.ID); ferr != nil || found != nil {
			lb, err = found, ferr
		}
	}
	if err != nil {
		return managed.ExternalCreation{}, errors.Wrap(err, "cannot create load balancer")
	}
	meta.SetExternalName(cr, lb.ID)
	return managed.ExternalCreation{}, nil
}

func (e *external) Update(ctx context.Context, cr *v1alpha1.LoadBalancer) (managed.ExternalUpdate, error) {
	p, err := e.params(ctx, cr)
	if err != nil {
		return managed.ExternalUpdate{}, err
	}
	if err := resolved(p); err != nil {
		return managed.ExternalUpdate{}, err
	}
	// The zone is looked up again, not read from status: a late
	// initialisation earlier in the same reconcile replaced the status in
	// memory with the stored one, which a first observation has not yet
	// written.
	z, err := e.zone(ctx, cr)
	if err != nil {
		return managed.ExternalUpdate{}, err
	}
	_, err = e.api.UpdateLoadBalancer(ctx, z.ID, meta.GetExternalName(cr), Input(p, e.identity(cr).Mark()))
	return managed.ExternalUpdate{}, errors.Wrap(err, "cannot update load balancer")
}

func (e *external) Delete(ctx context.Context, cr *v1alpha1.LoadBalancer) (managed.ExternalDelete, error) {
	z, err := e.zone(ctx, cr)
	if err != nil {
		return managed.ExternalDelete{}, err
	}
	err = e.api.DeleteLoadBalancer(ctx, z.ID, meta.GetExternalName(cr))
	if err == nil || cloudflare.IsNotFound(err) {
		e.conn.Metrics.SetOnFallback(name(cr), false, false)
		return managed.ExternalDelete{}, nil
	}
	return managed.ExternalDelete{}, errors.Wrap(err, "cannot delete load balancer")
}

// UnresolvedPoolsError refuses a write while the default or fallback pools
// have no IDs (fail closed: a load balancer is never made with fewer pools
// than asked).
type UnresolvedPoolsError struct{}

func (e *UnresolvedPoolsError) Error() string {
	return "the default pools and the fallback pool must all be resolved (their LoadBalancerPools created) before the load balancer is written"
}

// ConditionReason of unresolved pools: UnresolvedReference.
func (e *UnresolvedPoolsError) ConditionReason() xpv2.ConditionReason {
	return common.ReasonUnresolvedReference
}

func resolved(p v1alpha1.LoadBalancerParameters) error {
	if len(p.DefaultPools) == 0 || len(p.DefaultPools) < len(p.DefaultPoolsRefs) || p.FallbackPool == nil || *p.FallbackPool == "" {
		return &UnresolvedPoolsError{}
	}
	return nil
}
