package vpcservice_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/common"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/connectivity/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/providertest"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

var p *providertest.Provider

func TestMain(m *testing.M) { os.Exit(providertest.Run(m, &p)) }

func newTunnel(ns, name, cfName string) *ztv1alpha1.Tunnel {
	return &ztv1alpha1.Tunnel{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       ztv1alpha1.TunnelSpec{ForProvider: ztv1alpha1.TunnelParameters{Name: cfName}},
	}
}

// newService is a tcp service on port 6379 at host.
func newService(ns, name, cfName string, host v1alpha1.ServiceHost) *v1alpha1.VPCService {
	return &v1alpha1.VPCService{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.VPCServiceSpec{ForProvider: v1alpha1.VPCServiceParameters{
			Name:    cfName,
			Type:    "tcp",
			TCPPort: ptr.To[int64](6379),
			Host:    host,
		}},
	}
}

// byHostname is a host resolved through the given resolver network.
func byHostname(ns string, rn v1alpha1.ResolverNetwork) v1alpha1.ServiceHost {
	return v1alpha1.ServiceHost{Hostname: ptr.To("redis." + ns + ".svc.cluster.local"), ResolverNetwork: &rn}
}

// simTunnel creates a tunnel directly in Cloudflare, for services that name
// their tunnel by ID.
func simTunnel(t *testing.T, name string) string {
	t.Helper()
	tun, err := p.Cloudflare.CreateTunnel(context.Background(), name, "cloudflare")
	if err != nil {
		t.Fatal(err)
	}
	return tun.ID
}

func cfService(t *testing.T, id string) *cloudflare.Service {
	t.Helper()
	s, err := p.Cloudflare.GetService(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func servicesNamed(t *testing.T, name string) []cloudflare.Service {
	t.Helper()
	all, err := p.Cloudflare.ListServices(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []cloudflare.Service
	for _, s := range all {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// updateSpec changes the managed resource's spec, retrying on conflicts
// with the provider's own writes.
func updateSpec(t *testing.T, cr *v1alpha1.VPCService, change func(*v1alpha1.VPCServiceParameters)) {
	t.Helper()
	wait.Eventually(t, wait.Patience, "spec update", func() error {
		if err := p.Get(cr); err != nil {
			return err
		}
		change(&cr.Spec.ForProvider)
		return p.Client.Update(context.Background(), cr)
	})
}

func TestVPCServiceLifecycle(t *testing.T) {
	ctx := context.Background()
	ns := p.Namespace(t)
	tun := newTunnel(ns, "net", "vpc-"+ns)
	p.Create(t, tun)
	p.WaitReady(t, tun)
	tunnelID := meta.GetExternalName(tun)

	name := "redis-" + ns
	cr := newService(ns, "redis", name, byHostname(ns, v1alpha1.ResolverNetwork{TunnelIDRef: &xpv2.NamespacedReference{Name: "net"}}))
	p.Create(t, cr)
	p.WaitReady(t, cr)

	id := meta.GetExternalName(cr)
	if id == "" || cr.Status.AtProvider.ServiceID != id || cr.Status.AtProvider.CreatedAt == nil {
		t.Fatalf("external-name %q, atProvider %+v", id, cr.Status.AtProvider)
	}
	if got := ptr.Deref(cr.Spec.ForProvider.Host.ResolverNetwork.TunnelID, ""); got != tunnelID {
		t.Errorf("tunnelIdRef resolved to %q, want the Tunnel's external-name %q", got, tunnelID)
	}
	got := cfService(t, id)
	if got.Name != name || got.Type != "tcp" || ptr.Deref(got.TCPPort, 0) != 6379 ||
		got.Host.Hostname != "redis."+ns+".svc.cluster.local" || got.Host.ResolverNetwork == nil || got.Host.ResolverNetwork.TunnelID != tunnelID {
		t.Errorf("Cloudflare has %+v (host %+v)", got, got.Host)
	}

	t.Run("SteadyStateIsOneGetPerPoll", func(t *testing.T) {
		r := p.AtRest(t, 3, "/directory/services$")
		gets, lists := r.Calls["services.get"], r.Calls["services.list"]
		t.Logf("in %d observation TTLs: %d service gets, %d service lists", r.TTLs, gets, lists)
		// Observation is account-wide: at most one call (a list, or a get
		// for a miss) per observation TTL, half the test poll.
		if gets+lists > r.TTLs+1 {
			t.Errorf("in %d observation TTLs: %d gets and %d lists, want at most one read per TTL", r.TTLs, gets, lists)
		}
		if w := r.Writes(); w != 0 {
			t.Errorf("%d write calls in steady state", w)
		}
	})

	t.Run("SpecUpdatesReachCloudflare", func(t *testing.T) {
		updateSpec(t, cr, func(fp *v1alpha1.VPCServiceParameters) {
			fp.TCPPort = ptr.To[int64](6380)
			fp.Host.ResolverNetwork.ResolverIPs = []string{"10.96.0.10"}
		})
		wait.Eventually(t, wait.Patience, "tcpPort and resolverIps in Cloudflare", func() error {
			got := cfService(t, id)
			if ptr.Deref(got.TCPPort, 0) != 6380 || got.Host.ResolverNetwork == nil || !cmp.Equal(got.Host.ResolverNetwork.ResolverIPs, []string{"10.96.0.10"}) {
				return fmt.Errorf("tcpPort %v, resolver network %+v", ptr.Deref(got.TCPPort, 0), got.Host.ResolverNetwork)
			}
			return nil
		})
		p.WaitReady(t, cr)
		if meta.GetExternalName(cr) != id {
			t.Errorf("an update changed the external-name to %q", meta.GetExternalName(cr))
		}
	})

	t.Run("DriftIsCorrected", func(t *testing.T) {
		drifted := *cfService(t, id)
		drifted.TCPPort = ptr.To[int64](1234)
		drifted.Host.Hostname = "somewhere-else.example"
		drifted.Host.ResolverNetwork.ResolverIPs = nil
		if _, err := p.Cloudflare.UpdateService(ctx, id, drifted); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		// A poll is 2s; allow for a loaded machine, but not for minutes.
		wait.Eventually(t, 20*time.Second, "drift corrected", func() error {
			got := cfService(t, id)
			if ptr.Deref(got.TCPPort, 0) != 6380 || got.Host.Hostname != "redis."+ns+".svc.cluster.local" || len(got.Host.ResolverNetwork.ResolverIPs) != 1 {
				return fmt.Errorf("tcpPort %d hostname %q resolvers %v", ptr.Deref(got.TCPPort, 0), got.Host.Hostname, got.Host.ResolverNetwork.ResolverIPs)
			}
			return nil
		})
		took := time.Since(start)
		if bound := p.DriftBound(0); took > bound {
			t.Errorf("drift corrected after %s, docs/managed-resources.md promises within one and a half polls (%s)", took.Round(100*time.Millisecond), bound)
		}
		t.Logf("drift corrected after %s", took.Round(100*time.Millisecond))
	})

	t.Run("RecreatedWhenDeletedBehindOurBack", func(t *testing.T) {
		if err := p.Cloudflare.DeleteService(ctx, id); err != nil {
			t.Fatal(err)
		}
		wait.Eventually(t, wait.Patience, "service recreated", func() error {
			ss := servicesNamed(t, name)
			if len(ss) != 1 || ss[0].ServiceID == id {
				return fmt.Errorf("%d services named %s", len(ss), name)
			}
			if err := p.Get(cr); err != nil {
				return err
			}
			if meta.GetExternalName(cr) != ss[0].ServiceID {
				return fmt.Errorf("external-name %q, want %q", meta.GetExternalName(cr), ss[0].ServiceID)
			}
			if ptr.Deref(ss[0].TCPPort, 0) != 6380 || ss[0].Host.ResolverNetwork.TunnelID != tunnelID {
				return fmt.Errorf("recreated as %+v", ss[0])
			}
			return nil
		})
		p.WaitReady(t, cr)
		id = meta.GetExternalName(cr)
	})

	t.Run("DeleteRemovesTheService", func(t *testing.T) {
		p.DeleteAndWait(t, cr)
		if _, err := p.Cloudflare.GetService(ctx, id); !cloudflare.IsNotFound(err) {
			t.Errorf("after delete, GetService: %v, want not found", err)
		}
		if ss := servicesNamed(t, name); len(ss) != 0 {
			t.Errorf("%d services named %s remain", len(ss), name)
		}
	})
	p.DeleteAndWait(t, cr)
	p.DeleteAndWait(t, tun)
}

func TestVPCServiceImportObserveOnly(t *testing.T) {
	ctx := context.Background()
	ns := p.Namespace(t)
	tunnelID := simTunnel(t, "import-"+ns)
	existing, err := p.Cloudflare.CreateService(ctx, cloudflare.Service{
		Name: "imported-" + ns, Type: "tcp", TCPPort: ptr.To[int64](5432), AppProtocol: "postgresql",
		Host: cloudflare.ServiceHost{Hostname: "pg." + ns + ".svc.cluster.local", ResolverNetwork: &cloudflare.ResolverNetwork{TunnelID: tunnelID}},
	})
	if err != nil {
		t.Fatal(err)
	}
	// The spec differs in name, port and hostname: observing must not care.
	cr := newService(ns, "imported", "a-different-name-"+ns, byHostname(ns, v1alpha1.ResolverNetwork{TunnelID: ptr.To(tunnelID)}))
	cr.Spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionObserve}
	meta.SetExternalName(cr, existing.ServiceID)
	before := p.WriteCalls()
	p.Create(t, cr)
	p.WaitReady(t, cr)
	p.WaitServed(t, 3, "GET", "/directory/services$") // three more observations
	if w := p.WriteCalls() - before; w != 0 {
		t.Errorf("%d write calls reached Cloudflare for an observe-only VPCService", w)
	}
	if diff := cmp.Diff(existing, cfService(t, existing.ServiceID)); diff != "" {
		t.Errorf("an observe-only VPCService changed the service: -before, +after:\n%s", diff)
	}
	if err := p.Get(cr); err != nil {
		t.Fatal(err)
	}
	if cr.Status.AtProvider.ServiceID != existing.ServiceID || cr.Status.AtProvider.CreatedAt == nil {
		t.Errorf("atProvider %+v", cr.Status.AtProvider)
	}
	p.DeleteAndWait(t, cr)
	if _, err := p.Cloudflare.GetService(ctx, existing.ServiceID); err != nil {
		t.Errorf("deleting an observe-only VPCService deleted the service: %v", err)
	}
	if err := p.Cloudflare.DeleteService(ctx, existing.ServiceID); err != nil {
		t.Error(err)
	}
}

// TestVPCServiceCrashAfterCreate: the process died after Cloudflare created
// the service but before the external-name was saved. The next reconcile
// must adopt that service, not create a second one or stop for a human.
// This one is an address on a network, the other host shape.
func TestVPCServiceCrashAfterCreate(t *testing.T) {
	ctx := context.Background()
	ns := p.Namespace(t)
	tunnelID := simTunnel(t, "crash-"+ns)
	name := "crash-" + ns
	if _, err := p.Cloudflare.CreateService(ctx, cloudflare.Service{
		Name: name, Type: "tcp", TCPPort: ptr.To[int64](6379),
		Host: cloudflare.ServiceHost{IPv4: "10.0.0.7", Network: &cloudflare.ServiceNetwork{TunnelID: tunnelID}},
	}); err != nil {
		t.Fatal(err)
	}
	cr := newService(ns, "crash", name, v1alpha1.ServiceHost{IPv4: ptr.To("10.0.0.7"), Network: &v1alpha1.ServiceNetwork{TunnelID: ptr.To(tunnelID)}})
	meta.SetExternalCreatePending(cr, time.Now().Add(-time.Second))
	p.Create(t, cr)
	p.WaitReady(t, cr)
	if ss := servicesNamed(t, name); len(ss) != 1 || ss[0].ServiceID != meta.GetExternalName(cr) {
		t.Fatalf("after the crash: %d services named %s, external-name %q", len(ss), name, meta.GetExternalName(cr))
	}
	p.DeleteAndWait(t, cr)
	if ss := servicesNamed(t, name); len(ss) != 0 {
		t.Errorf("%d services named %s remain after delete", len(ss), name)
	}
}

// TestVPCServiceDeleteWhenAlreadyGone: the service was deleted behind our
// back; deleting the managed resource must still complete, without
// recreating the service first.
func TestVPCServiceDeleteWhenAlreadyGone(t *testing.T) {
	ctx := context.Background()
	ns := p.Namespace(t)
	tunnelID := simTunnel(t, "gone-"+ns)
	name := "gone-" + ns
	cr := newService(ns, "gone", name, byHostname(ns, v1alpha1.ResolverNetwork{TunnelID: ptr.To(tunnelID)}))
	p.Create(t, cr)
	p.WaitReady(t, cr)
	id := meta.GetExternalName(cr)

	// Pause the provider so it cannot recreate the service between its
	// deletion behind our back and the managed resource's deletion.
	wait.Eventually(t, wait.Patience, "pause", func() error {
		if err := p.Get(cr); err != nil {
			return err
		}
		meta.AddAnnotations(cr, map[string]string{meta.AnnotationKeyReconciliationPaused: "true"})
		return p.Client.Update(ctx, cr)
	})
	p.WaitSynced(t, cr, "paused", func(c xpv2.Condition) bool { return c.Reason == xpv2.ReasonReconcilePaused })
	if err := p.Cloudflare.DeleteService(ctx, id); err != nil {
		t.Fatal(err)
	}
	// Deleting twice is one deletion.
	for range 2 {
		if err := p.Client.Delete(ctx, cr); err != nil {
			t.Fatal(err)
		}
	}
	wait.Eventually(t, wait.Patience, "unpause", func() error {
		if err := p.Get(cr); err != nil {
			return err
		}
		meta.RemoveAnnotations(cr, meta.AnnotationKeyReconciliationPaused)
		return p.Client.Update(ctx, cr)
	})
	p.DeleteAndWait(t, cr)
	if ss := servicesNamed(t, name); len(ss) != 0 {
		t.Errorf("%d services named %s after deleting an already-deleted service", len(ss), name)
	}
}

func TestVPCServiceRefusesReferencesToOtherNamespaces(t *testing.T) {
	ns, other := p.Namespace(t), p.Namespace(t)
	// A real, Ready Tunnel in the other namespace: the refusal is about the
	// namespace, not a missing target.
	tun := newTunnel(other, "theirs", "theirs-"+other)
	p.Create(t, tun)
	p.WaitReady(t, tun)

	name := "borrow-" + ns
	cr := newService(ns, "borrow", name, byHostname(ns, v1alpha1.ResolverNetwork{TunnelIDRef: &xpv2.NamespacedReference{Name: "theirs", Namespace: other}}))
	p.Create(t, cr)
	c := p.WaitSynced(t, cr, "cross-namespace reference refused", func(c xpv2.Condition) bool {
		return c.Status == corev1.ConditionFalse && strings.Contains(c.Message, "references to other namespaces are not allowed")
	})
	t.Logf("Synced=False: %s", c.Message)
	if cr.Spec.ForProvider.Host.ResolverNetwork.TunnelID != nil || meta.GetExternalName(cr) != "" {
		t.Errorf("tunnelId %v, external-name %q: the reference was followed", cr.Spec.ForProvider.Host.ResolverNetwork.TunnelID, meta.GetExternalName(cr))
	}
	if ss := servicesNamed(t, name); len(ss) != 0 {
		t.Errorf("%d services named %s were created", len(ss), name)
	}
	p.DeleteAndWait(t, cr)
	p.DeleteAndWait(t, tun)
}

// TestVPCServiceSameNameRaceKeepsOneOwner creates two VPCServices in two
// namespaces naming the same Cloudflare service at the same moment, with
// different ports. However their creates and adoptions interleave, they
// must settle on one service with one owner, which keeps its port: the one
// whose create made it, or, when both began creating within mr.CreateSkew
// and both may have made it, the older resource; the other reports the
// conflict, and deleting it leaves the service alone.
func TestVPCServiceSameNameRaceKeepsOneOwner(t *testing.T) {
	ctx := context.Background()
	namespaces := []string{p.Namespace(t), p.Namespace(t)}
	tunnelID := simTunnel(t, "race-"+namespaces[0])
	cfName := "race-" + namespaces[0]
	var crs []*v1alpha1.VPCService
	for i, port := range []int64{6379, 6380} {
		ns := namespaces[i]
		cr := newService(ns, "shared", cfName, byHostname(ns, v1alpha1.ResolverNetwork{TunnelID: ptr.To(tunnelID)}))
		cr.Spec.ForProvider.TCPPort = ptr.To(port)
		crs = append(crs, cr)
	}
	errs := make(chan error, len(crs))
	for _, cr := range crs {
		go func() { errs <- p.Client.Create(ctx, cr) }()
	}
	for range crs {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}

	var owner, loser *v1alpha1.VPCService
	wait.Eventually(t, wait.Patience, "one owner, one refused", func() error {
		owner, loser = nil, nil
		for _, cr := range crs {
			if err := p.Get(cr); err != nil {
				return err
			}
			switch s := cr.GetCondition(xpv2.TypeSynced); {
			case s.Status == corev1.ConditionTrue:
				owner = cr
			case strings.Contains(s.Message, "is already managed by") || strings.Contains(s.Message, "name taken"):
				loser = cr
			}
		}
		if owner == nil || loser == nil {
			return fmt.Errorf("Synced: %s (%s), %s (%s)", crs[0].GetCondition(xpv2.TypeSynced).Status, crs[0].GetCondition(xpv2.TypeSynced).Message,
				crs[1].GetCondition(xpv2.TypeSynced).Status, crs[1].GetCondition(xpv2.TypeSynced).Message)
		}
		if ss := servicesNamed(t, cfName); len(ss) != 1 || ptr.Deref(ss[0].TCPPort, 0) != *owner.Spec.ForProvider.TCPPort {
			return fmt.Errorf("services named %s: %+v, want one with port %d", cfName, ss, *owner.Spec.ForProvider.TCPPort)
		}
		return nil
	})
	// Names are unique, so one create made the service. Its maker may keep
	// it; so may the older resource, which adopted it as possibly its own
	// before the maker's ID was saved. A newer resource that did not make
	// it has taken it from the older, which may have.
	older := owner.CreationTimestamp.Before(&loser.CreationTimestamp) || (owner.CreationTimestamp.Equal(&loser.CreationTimestamp) && owner.Namespace < loser.Namespace)
	if made := !meta.GetExternalCreateSucceeded(owner).IsZero(); !older && !made {
		t.Errorf("the newer resource %s/%s, which did not create the service, took it from the older %s/%s (%s)", owner.Namespace, owner.Name, loser.Namespace, loser.Name, loser.GetCondition(xpv2.TypeSynced).Message)
	}
	id := meta.GetExternalName(owner)

	p.DeleteAndWait(t, loser)
	if s := cfService(t, id); ptr.Deref(s.TCPPort, 0) != *owner.Spec.ForProvider.TCPPort {
		t.Errorf("after deleting the refused resource the service is %+v", s)
	}
	p.WaitReady(t, owner)
	p.DeleteAndWait(t, owner)
	if ss := servicesNamed(t, cfName); len(ss) != 0 {
		t.Errorf("services named %s after both resources were deleted: %+v", cfName, ss)
	}
}

// TestAVPCServiceOfTheSameNameMadeElsewhereIsNotAdopted: another cluster
// already has a VPC service of this name, which Workers may be bound to. A
// name finds it; it does not prove it is ours: it is neither adopted nor
// rewritten, and deleting ours leaves it alone.
func TestAVPCServiceOfTheSameNameMadeElsewhereIsNotAdopted(t *testing.T) {
	ctx := context.Background()
	ns := p.Namespace(t)
	tunnelID := simTunnel(t, "theirs-"+ns)
	name := "theirs-" + ns
	theirs, err := p.Cloudflare.CreateService(ctx, cloudflare.Service{
		Name: name, Type: "tcp", TCPPort: ptr.To[int64](5432),
		Host: cloudflare.ServiceHost{IPv4: "10.0.0.9", Network: &cloudflare.ServiceNetwork{TunnelID: tunnelID}},
	})
	if err != nil {
		t.Fatal(err)
	}
	cr := newService(ns, "mine", name, v1alpha1.ServiceHost{IPv4: ptr.To("10.0.0.7"), Network: &v1alpha1.ServiceNetwork{TunnelID: ptr.To(tunnelID)}})
	p.Create(t, cr)
	wait.Eventually(t, wait.Patience, "the name refused", func() error {
		if err := p.Get(cr); err != nil {
			return err
		}
		if c := cr.GetCondition(xpv2.TypeSynced); c.Status != corev1.ConditionFalse || c.Reason != common.ReasonNameTaken || !strings.Contains(c.Message, theirs.ServiceID) {
			return fmt.Errorf("Synced %s %s: %s", c.Status, c.Reason, c.Message)
		}
		return nil
	})
	p.WaitServed(t, 3, "GET", "/directory/services$") // three more observations
	ss := servicesNamed(t, name)
	if len(ss) != 1 || ss[0].Host.IPv4 != "10.0.0.9" || ss[0].TCPPort == nil || *ss[0].TCPPort != 5432 {
		t.Errorf("the foreign service was changed or duplicated: %+v", ss)
	}
	if err := p.Get(cr); err != nil || meta.GetExternalName(cr) != "" {
		t.Errorf("external-name %q (%v): the foreign service was adopted", meta.GetExternalName(cr), err)
	}
	p.DeleteAndWait(t, cr)
	if ss := servicesNamed(t, name); len(ss) != 1 {
		t.Errorf("deleting the refused resource deleted the foreign service")
	}
}
