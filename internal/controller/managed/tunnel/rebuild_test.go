package tunnel_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/common"
	connv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/connectivity/v1alpha1"
	dnsv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/dns/v1alpha1"
	tv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

// site is one application's managed resources as its manifests have them:
// a tunnel, a private route and a VPC service through it, and a DNS record.
type site struct {
	tunnel *v1alpha1.Tunnel
	route  *v1alpha1.HostnameRoute
	svc    *connv1alpha1.VPCService
	record *dnsv1alpha1.DNSRecord
}

func (s site) all() []resource.Managed {
	var out []resource.Managed
	if s.tunnel != nil {
		out = append(out, s.tunnel)
	}
	for _, m := range []resource.Managed{s.route, s.svc, s.record} {
		if !reflect.ValueOf(m).IsNil() {
			out = append(out, m)
		}
	}
	return out
}

// manifests builds the same site every time, as GitOps re-applies it: the
// same names, through the config cfg, with policies (nil: all), the route
// and service pointing at tunnelID once known.
func manifests(ns, cfg, tunnelID string, policies xpv2.ManagementPolicies, adoptByName bool) site {
	ref := &xpv2.ProviderConfigReference{Kind: tv1alpha1.ClusterProviderConfigKind, Name: cfg}
	mrs := xpv2.ManagedResourceSpec{ProviderConfigReference: ref, ManagementPolicies: policies}
	om := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: ns, Name: name} }
	host := "db." + ns + ".internal"
	return site{
		tunnel: &v1alpha1.Tunnel{ObjectMeta: om("edge"), Spec: v1alpha1.TunnelSpec{ManagedResourceSpec: mrs, AdoptByName: adoptByName,
			ForProvider: v1alpha1.TunnelParameters{Name: "edge-" + ns}}},
		route: &v1alpha1.HostnameRoute{ObjectMeta: om("db"), Spec: v1alpha1.HostnameRouteSpec{ManagedResourceSpec: mrs,
			ForProvider: v1alpha1.HostnameRouteParameters{Hostname: host, TunnelID: ptr.To(tunnelID)}}},
		svc: &connv1alpha1.VPCService{ObjectMeta: om("db"), Spec: connv1alpha1.VPCServiceSpec{ManagedResourceSpec: mrs, AdoptByName: adoptByName,
			ForProvider: connv1alpha1.VPCServiceParameters{Name: "db-" + ns, Type: "tcp", TCPPort: ptr.To[int64](5432),
				Host: connv1alpha1.ServiceHost{Hostname: ptr.To(host), ResolverNetwork: &connv1alpha1.ResolverNetwork{TunnelID: ptr.To(tunnelID)}}}}},
		record: &dnsv1alpha1.DNSRecord{ObjectMeta: om("www"), Spec: dnsv1alpha1.DNSRecordSpec{ManagedResourceSpec: mrs,
			ForProvider: dnsv1alpha1.DNSRecordParameters{Name: "www-" + ns + ".example.com", Type: "CNAME", Content: tunnelID + ".cfargotunnel.com", Proxied: ptr.To(true)}}},
	}
}

// ids is the Cloudflare ID of each managed resource, by kind.
func ids(t *testing.T, s site) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, m := range s.all() {
		if err := p.Get(m); err != nil {
			t.Fatal(err)
		}
		out[fmt.Sprintf("%T/%s", m, m.GetName())] = meta.GetExternalName(m)
	}
	return out
}

// live counts the account's live objects of the site's names.
func live(ns string) string {
	st := p.Sim.Snapshot()
	var tunnels, routes, services, records int
	for _, x := range st.Tunnels {
		if x.Name == "edge-"+ns && x.DeletedAt == nil {
			tunnels++
		}
	}
	for _, x := range st.HostnameRoutes {
		if x.Hostname == "db."+ns+".internal" && x.DeletedAt == nil {
			routes++
		}
	}
	for _, x := range st.Services {
		if x.Name == "db-"+ns {
			services++
		}
	}
	for _, x := range st.DNSRecords {
		if x.Name == "www-"+ns+".example.com" {
			records++
		}
	}
	return fmt.Sprintf("%d tunnels, %d routes, %d services, %d records", tunnels, routes, services, records)
}

func createAll(t *testing.T, s site) {
	t.Helper()
	for _, m := range s.all() {
		p.Create(t, m)
	}
}

func deleteAll(t *testing.T, s site) {
	t.Helper()
	for _, m := range s.all() {
		p.DeleteAndWait(t, m)
	}
}

// TestARebuiltClusterGetsItsOwnObjectsBack: a cluster's managed resources
// are orphaned (management policies without Delete) and deleted, as when a
// cluster is lost; the same manifests are applied again. Under another
// owner ID nothing is adopted: the DNS record and the route are reported as
// another installation's, the tunnel's and service's names as taken, and
// nothing is created beside them. Under the same owner ID the record and
// route are adopted back by their markers, and with spec.adoptByName the
// tunnel and service too: the same IDs, no duplicates.
func TestARebuiltClusterGetsItsOwnObjectsBack(t *testing.T) {
	ns := p.Namespace(t)
	before := p.ClusterConfig(t, "site-a-"+ns, func(s *tv1alpha1.ProviderConfigSpec) { s.OwnerID = "site-a" })
	stranger := p.ClusterConfig(t, "site-b-"+ns, func(s *tv1alpha1.ProviderConfigSpec) { s.OwnerID = "site-b" })
	orphaning := xpv2.ManagementPolicies{xpv2.ManagementActionObserve, xpv2.ManagementActionCreate, xpv2.ManagementActionUpdate, xpv2.ManagementActionLateInitialize}

	// The tunnel first: the route, service and record point at its ID.
	first := manifests(ns, before.Name, "", orphaning, false)
	p.Create(t, first.tunnel)
	p.WaitReady(t, first.tunnel)
	tunnelID := meta.GetExternalName(first.tunnel)
	first = manifests(ns, before.Name, tunnelID, orphaning, false)
	createAll(t, first.withoutTunnel())
	for _, m := range first.all() {
		p.WaitReady(t, m)
	}
	want := ids(t, first)
	t.Logf("before the loss: %v", want)

	// The cluster is lost: every Kubernetes object goes, Cloudflare keeps
	// everything.
	deleteAll(t, first)
	if got := live(ns); got != "1 tunnels, 1 routes, 1 services, 1 records" {
		t.Fatalf("after orphaning: %s", got)
	}

	// Another installation applies the same manifests: nothing is its own.
	theirs := manifests(ns, stranger.Name, tunnelID, orphaning, false)
	createAll(t, theirs)
	for _, c := range []struct {
		m    resource.Managed
		want string
	}{
		{theirs.tunnel, "name taken"},
		{theirs.svc, "name taken"},
		{theirs.route, `owner "site-a"`},
		{theirs.record, `owner "site-a"`},
	} {
		p.WaitSynced(t, c.m, "refused: "+c.want, func(s xpv2.Condition) bool {
			return s.Status == corev1.ConditionFalse && strings.Contains(s.Message, c.want)
		})
		if id := meta.GetExternalName(c.m); id != "" {
			t.Errorf("%T %s adopted %s under another owner ID", c.m, c.m.GetName(), id)
		}
	}
	if got := live(ns); got != "1 tunnels, 1 routes, 1 services, 1 records" {
		t.Errorf("under another owner ID: %s", got)
	}
	deleteAll(t, theirs)

	// The rebuilt cluster, with the same owner ID: the marked objects come
	// back; the tunnel and service only with the opt-in.
	rebuilt := manifests(ns, before.Name, tunnelID, nil, false)
	createAll(t, rebuilt)
	p.WaitReady(t, rebuilt.route)
	p.WaitReady(t, rebuilt.record)
	p.WaitSynced(t, rebuilt.tunnel, "name taken without the opt-in", func(s xpv2.Condition) bool {
		return s.Status == corev1.ConditionFalse && s.Reason == common.ReasonNameTaken
	})
	for _, m := range []client.Object{rebuilt.tunnel, rebuilt.svc} {
		wait.Eventually(t, wait.Patience, "adoptByName set", func() error {
			if err := p.Get(m); err != nil {
				return err
			}
			switch o := m.(type) {
			case *v1alpha1.Tunnel:
				o.Spec.AdoptByName = true
			case *connv1alpha1.VPCService:
				o.Spec.AdoptByName = true
			}
			return p.Client.Update(context.Background(), m)
		})
	}
	for _, m := range rebuilt.all() {
		p.WaitReady(t, m)
	}
	if got := ids(t, rebuilt); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after the rebuild the IDs are %v, want %v", got, want)
	}
	if got := live(ns); got != "1 tunnels, 1 routes, 1 services, 1 records" {
		t.Errorf("after the rebuild: %s", got)
	}

	// Deleting the rebuilt resources deletes what they adopted.
	deleteAll(t, rebuilt.withoutTunnel())
	p.DeleteAndWait(t, rebuilt.tunnel)
	if got := live(ns); got != "0 tunnels, 0 routes, 0 services, 0 records" {
		t.Errorf("after deleting the rebuilt resources: %s", got)
	}
}

// withoutTunnel is the site's other resources as a site whose all() skips
// the tunnel.
func (s site) withoutTunnel() site { return site{route: s.route, svc: s.svc, record: s.record} }
