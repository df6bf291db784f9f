// Package loadbalancermonitor reconciles LoadBalancerMonitor managed
// resources with Cloudflare Load Balancing monitors.
package loadbalancermonitor

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/loadbalancing/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/mr"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/ownership"
)

var kind = mr.Kind[*v1alpha1.LoadBalancerMonitor]{
	GVK:        v1alpha1.LoadBalancerMonitorGroupVersionKind,
	NewObj:     func() *v1alpha1.LoadBalancerMonitor { return &v1alpha1.LoadBalancerMonitor{} },
	NewList:    func() client.ObjectList { return &v1alpha1.LoadBalancerMonitorList{} },
	ObservedID: func(cr *v1alpha1.LoadBalancerMonitor) string { return cr.Status.AtProvider.ID },
	External: func(c mr.Connection) managed.TypedExternalClient[*v1alpha1.LoadBalancerMonitor] {
		return &external{monitors: c.Cloudflare, conn: c}
	},
}

// Setup adds the LoadBalancerMonitor controller.
func Setup(mgr ctrl.Manager, o controller.Options, s mr.Settings) error {
	return mr.Setup(mgr, o, s, kind)
}

// SetupGated adds the LoadBalancerMonitor controller once its CRD is
// established.
func SetupGated(mgr ctrl.Manager, o controller.Options, s mr.Settings) error {
	return mr.SetupGated(mgr, o, s, kind)
}

// Monitors is the part of the Load Balancing API a monitor needs.
type Monitors interface {
	ListLoadBalancerMonitors(ctx context.Context) ([]cloudflare.LoadBalancerMonitor, error)
	GetLoadBalancerMonitor(ctx context.Context, id string) (*cloudflare.LoadBalancerMonitor, error)
	CreateLoadBalancerMonitor(ctx context.Context, in cloudflare.LoadBalancerMonitorInput) (*cloudflare.LoadBalancerMonitor, error)
	UpdateLoadBalancerMonitor(ctx context.Context, id string, in cloudflare.LoadBalancerMonitorInput) (*cloudflare.LoadBalancerMonitor, error)
	DeleteLoadBalancerMonitor(ctx context.Context, id string) error
	ListPools(ctx context.Context) ([]cloudflare.Pool, error)
}

type external struct {
	monitors Monitors
	conn     mr.Connection
}

func (e *external) Disconnect(context.Context) error { return nil }

func (e *external) mark(cr *v1alpha1.LoadBalancerMonitor) ownership.Identity {
	return e.conn.Identity(v1alpha1.LoadBalancerMonitorKind, cr)
}

func (e *external) Observe(ctx context.Context, cr *v1alpha1.LoadBalancerMonitor) (managed.ExternalObservation, error) {
	m, adopted, err := mr.Locate(ctx, cr, mr.Lookup[cloudflare.LoadBalancerMonitor]{
		Get: func(ctx context.Context, id string) (*cloudflare.LoadBalancerMonitor, error) {
			o, err := e.monitors.GetLoadBalancerMonitor(ctx, id)
			return o, errors.Wrap(err, "cannot get load balancer monitor")
		},
		Find:    func(ctx context.Context) (*cloudflare.LoadBalancerMonitor, error) { return e.find(ctx, cr) },
		ID:      func(m *cloudflare.LoadBalancerMonitor) string { return m.ID },
		Deleted: func(*cloudflare.LoadBalancerMonitor) bool { return false },
	})
	if err != nil || m == nil {
		return managed.ExternalObservation{ResourceExists: false}, err
	}
	cr.SetConditions(xpv2.Available())
	cr.Status.AtProvider = v1alpha1.LoadBalancerMonitorObservation{ID: m.ID, CreatedOn: mr.Time(&m.CreatedOn)}
	lateInit := LateInitialize(&cr.Spec.ForProvider, m)
	diff := Diff(cr.Spec.ForProvider, *m, e.mark(cr).Mark())
	return managed.ExternalObservation{
		ResourceExists:          true,
		ResourceUpToDate:        diff == "",
		ResourceLateInitialized: adopted || lateInit,
		Diff:                    diff,
	}, nil
}

// find is the monitor this resource made, found by the ownership marker in
// its description: monitors have no name, and the marker is the only
// proof. What a create whose answer was lost left is listed from after the
// create began; otherwise (an object an earlier life of this resource
// made) the account's snapshot serves, if it is no older than a poll.
func (e *external) find(ctx context.Context, cr *v1alpha1.LoadBalancerMonitor) (*cloudflare.LoadBalancerMonitor, error) {
	since := time.Now().Add(-e.conn.PollInterval)
	if !meta.GetExternalCreatePending(cr).IsZero() {
		since = mr.CreateSettledAt(cr, time.Now())
	}
	all, err := e.monitors.ListLoadBalancerMonitors(cloudflare.ListedAfter(ctx, since))
	if err != nil {
		return nil, errors.Wrap(err, "cannot look for a monitor this resource made")
	}
	id := e.mark(cr)
	var ours []cloudflare.LoadBalancerMonitor
	for _, m := range all {
		if _, mark, _ := ownership.Split(m.Description); id.Made(mark) {
			ours = append(ours, m)
		}
	}
	switch len(ours) {
	case 0:
		return nil, nil
	case 1:
		return &ours[0], nil
	default:
		return nil, errors.Errorf("%d monitors carry this resource's ownership marker; set the external-name to the ID of the one to manage", len(ours))
	}
}

func (e *external) Create(ctx context.Context, cr *v1alpha1.LoadBalancerMonitor) (managed.ExternalCreation, error) {
	m, err := e.monitors.CreateLoadBalancerMonitor(ctx, Input(cr.Spec.ForProvider, e.mark(cr).Mark()))
	if err != nil {
		return managed.ExternalCreation{}, errors.Wrap(err, "cannot create load balancer monitor")
	}
	meta.SetExternalName(cr, m.ID)
	return managed.ExternalCreation{}, nil
}

func (e *external) Update(ctx context.Context, cr *v1alpha1.LoadBalancerMonitor) (managed.ExternalUpdate, error) {
	_, err := e.monitors.UpdateLoadBalancerMonitor(ctx, meta.GetExternalName(cr), Input(cr.Spec.ForProvider, e.mark(cr).Mark()))
	return managed.ExternalUpdate{}, errors.Wrap(err, "cannot update load balancer monitor")
}

// Delete deletes the monitor; while pools use it Cloudflare refuses, and
// the deletion waits, naming them.
func (e *external) Delete(ctx context.Context, cr *v1alpha1.LoadBalancerMonitor) (managed.ExternalDelete, error) {
	id := meta.GetExternalName(cr)
	err := e.monitors.DeleteLoadBalancerMonitor(ctx, id)
	switch {
	case err == nil || cloudflare.IsNotFound(err):
		return managed.ExternalDelete{}, nil
	case cloudflare.IsReferenced(err):
		return managed.ExternalDelete{}, &mr.InUseError{Kind: "load balancer monitor", ID: id, By: e.users(ctx, id)}
	}
	return managed.ExternalDelete{}, errors.Wrap(err, "cannot delete load balancer monitor")
}

// users names the pools that use monitor id, as the account's snapshot
// has them.
func (e *external) users(ctx context.Context, id string) string {
	pools, err := e.monitors.ListPools(cloudflare.ListedAfter(ctx, time.Now()))
	var names []string
	for _, p := range pools {
		if p.Monitor == id {
			names = append(names, fmt.Sprintf("%q (%s)", p.Name, p.ID))
		}
	}
	if err != nil || len(names) == 0 {
		return "pools (Cloudflare refused the deletion); remove it from their monitor first"
	}
	return "pools " + strings.Join(names, ", ") + "; remove it from their monitor (or delete them) first"
}

// Defaults Cloudflare documents for a monitor, and the expected code the
// provider asks for when none is given.
const (
	DefaultInterval      = 60
	DefaultTimeout       = 5
	DefaultRetries       = 2
	DefaultExpectedCodes = "200"
)

// Input is the monitor Cloudflare is asked to hold for p, with mark in its
// description.
func Input(p v1alpha1.LoadBalancerMonitorParameters, mark ownership.Mark) cloudflare.LoadBalancerMonitorInput {
	in := cloudflare.LoadBalancerMonitorInput{
		Type:        p.Type,
		Description: ownership.Comment(ptr.Deref(p.Description, ""), mark),
		Port:        p.Port,
		Interval:    ptr.Deref(p.Interval, DefaultInterval),
		Timeout:     ptr.Deref(p.Timeout, DefaultTimeout),
		Retries:     ptr.Deref(p.Retries, DefaultRetries),
	}
	if p.Type == "tcp" {
		in.Method = ptr.Deref(p.Method, "connection_established")
		return in
	}
	in.Method = ptr.Deref(p.Method, "GET")
	in.Path = ptr.Deref(p.Path, "/")
	in.ExpectedCodes = ptr.Deref(p.ExpectedCodes, DefaultExpectedCodes)
	if p.Host != nil {
		in.Header = map[string][]string{"Host": {*p.Host}}
	}
	return in
}

// LateInitialize fills an unset description with the user part of
// Cloudflare's.
func LateInitialize(p *v1alpha1.LoadBalancerMonitorParameters, m *cloudflare.LoadBalancerMonitor) bool {
	if p.Description != nil {
		return false
	}
	user, _, _ := ownership.Split(m.Description)
	p.Description = ptr.To(user)
	return true
}

// Diff describes how the monitor Cloudflare holds differs from p (with
// mark as its ownership marker); "" when it is up to date.
func Diff(p v1alpha1.LoadBalancerMonitorParameters, got cloudflare.LoadBalancerMonitor, mark ownership.Mark) string {
	want := Input(p, mark)
	var d []string
	field := func(name string, in, desired any) {
		if fmt.Sprint(in) != fmt.Sprint(desired) {
			d = append(d, fmt.Sprintf("%s: %v in Cloudflare, %v desired", name, in, desired))
		}
	}
	field("type", got.Type, want.Type)
	field("method", got.Method, want.Method)
	field("interval", got.Interval, want.Interval)
	field("timeout", got.Timeout, want.Timeout)
	field("retries", got.Retries, want.Retries)
	if p.Type != "tcp" {
		field("path", got.Path, want.Path)
		field("expectedCodes", got.ExpectedCodes, want.ExpectedCodes)
		field("host", hostOf(got.Header), ptr.Deref(p.Host, ""))
	}
	if p.Port != nil {
		field("port", ptr.Deref(got.Port, 0), *p.Port)
	}
	user, gotMark, _ := ownership.Split(got.Description)
	if p.Description != nil {
		field("description", fmt.Sprintf("%q", user), fmt.Sprintf("%q", *p.Description))
	}
	field("ownership marker", fmt.Sprintf("%q", gotMark), fmt.Sprintf("%q", mark))
	return strings.Join(d, "; ")
}

// hostOf is the Host header of a probe, "" when none.
func hostOf(h map[string][]string) string {
	if len(h["Host"]) == 0 {
		return ""
	}
	return h["Host"][0]
}
