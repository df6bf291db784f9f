package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	connv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/connectivity/v1alpha1"
	dnsv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/dns/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

// foreignObjects are made in the account by someone else; the provider must
// never change or delete them, whatever happens.
type foreignObjects struct {
	tunnelID, routeID, serviceID, recordID, cnameID string
	// earlier are objects other tests left in the account; they are not
	// this test's to count.
	earlier map[string]bool
}

// liveIDs are the IDs of every live object in the account.
func liveIDs() map[string]bool { return liveIDsOf(env.sim) }

// liveIDsOf lists the IDs of the live objects of a simulated account.
func liveIDsOf(s *sim.Server) map[string]bool {
	st := s.Snapshot()
	ids := map[string]bool{}
	for _, x := range st.Tunnels {
		if x.DeletedAt == nil {
			ids[x.ID] = true
		}
	}
	for _, x := range st.HostnameRoutes {
		if x.DeletedAt == nil {
			ids[x.ID] = true
		}
	}
	for _, x := range st.Services {
		ids[x.ServiceID] = true
	}
	for _, x := range st.DNSRecords {
		ids[x.ID] = true
	}
	return ids
}

func makeForeign(t *testing.T) foreignObjects {
	t.Helper()
	ctx := context.Background()
	earlier := liveIDs()
	cf := env.cf
	tun, err := cf.CreateTunnel(ctx, "someone-elses-tunnel", "cloudflare")
	if err != nil {
		t.Fatal(err)
	}
	rt, err := cf.CreateHostnameRoute(ctx, cloudflare.HostnameRouteInput{Hostname: "billing.internal.example.net", TunnelID: tun.ID, Comment: "made by hand"})
	if err != nil {
		t.Fatal(err)
	}
	port := int64(5432)
	host := "billing.internal.example.net"
	svc, err := cf.CreateService(ctx, cloudflare.Service{Name: "billing-db", Type: "tcp", TCPPort: &port, Host: cloudflare.ServiceHost{Hostname: host, ResolverNetwork: &cloudflare.ResolverNetwork{TunnelID: tun.ID}}})
	if err != nil {
		t.Fatal(err)
	}
	zoneID := sim.ZoneID(zone)
	rec, err := cf.CreateDNSRecord(ctx, zoneID, cloudflare.DNSRecord{Name: "www." + zone, Type: "A", Content: "192.0.2.10", TTL: 300, Comment: "marketing site"})
	if err != nil {
		t.Fatal(err)
	}
	cname, err := cf.CreateDNSRecord(ctx, zoneID, cloudflare.DNSRecord{Name: "status." + zone, Type: "CNAME", Content: "statuspage.example.org", TTL: 1, Proxied: false})
	if err != nil {
		t.Fatal(err)
	}
	return foreignObjects{tunnelID: tun.ID, routeID: rt.ID, serviceID: svc.ServiceID, recordID: rec.ID, cnameID: cname.ID, earlier: earlier}
}

// foreignState is the foreign objects as the account holds them, to compare
// byte for byte before and after.
func (f foreignObjects) state(t *testing.T) string {
	t.Helper()
	st := env.sim.Snapshot()
	var parts []string
	add := func(v any) {
		b, _ := json.Marshal(v)
		parts = append(parts, string(b))
	}
	for _, x := range st.Tunnels {
		if x.ID == f.tunnelID {
			x.Status, x.Connectors = "", 0 // connection state is Cloudflare's, not an edit
			add(x)
		}
	}
	for _, x := range st.HostnameRoutes {
		if x.ID == f.routeID {
			add(x)
		}
	}
	for _, x := range st.Services {
		if x.ServiceID == f.serviceID {
			add(x)
		}
	}
	for _, x := range st.DNSRecords {
		if x.ID == f.recordID || x.ID == f.cnameID {
			add(x)
		}
	}
	if len(parts) != 5 {
		t.Errorf("foreign objects: %d of 5 still exist", len(parts))
	}
	return strings.Join(parts, "\n")
}

func (f foreignObjects) ids() map[string]bool {
	ids := map[string]bool{f.tunnelID: true, f.routeID: true, f.serviceID: true, f.recordID: true, f.cnameID: true}
	for id := range f.earlier {
		ids[id] = true
	}
	return ids
}

// accountReport counts what the account holds that is not foreign, and the
// duplicates among it (two live objects with the same natural key).
type accountReport struct {
	Tunnels, Routes, Services, Records int
	ConfigHostnames                    []string
	Duplicates                         []string
}

func report(foreign foreignObjects, tunnelID string) accountReport {
	st := env.sim.Snapshot()
	skip := foreign.ids()
	var r accountReport
	seen := map[string]int{}
	for _, x := range st.Tunnels {
		if x.DeletedAt == nil && !skip[x.ID] {
			r.Tunnels++
			seen["tunnel "+x.Name]++
		}
	}
	if tunnelID != "" {
		r.ConfigHostnames = configHostnames(tunnelID)
	}
	for _, x := range st.HostnameRoutes {
		if x.DeletedAt == nil && !skip[x.ID] {
			r.Routes++
			seen["route "+x.Hostname]++
		}
	}
	for _, x := range st.Services {
		if !skip[x.ServiceID] {
			r.Services++
			seen["service "+x.Name]++
		}
	}
	for _, x := range st.DNSRecords {
		if !skip[x.ID] {
			r.Records++
			seen["record "+x.Type+" "+x.Name]++
		}
	}
	for k, n := range seen {
		if n > 1 {
			r.Duplicates = append(r.Duplicates, fmt.Sprintf("%s ×%d", k, n))
		}
	}
	sort.Strings(r.Duplicates)
	sort.Strings(r.ConfigHostnames)
	return r
}

// workload is one CloudflareTunnel with n Ingresses: even ones public (a
// proxied CNAME and a tunnel rule), odd ones private; every one with a
// Workers VPC service and a private hostname route.
func workload(t *testing.T, ns, tunnel string, n int, config ...*xpv2.ProviderConfigReference) {
	t.Helper()
	env.workload(t, ns, tunnel, n, config...)
}

// workload is the package-level workload, in h's cluster.
func (h *harness) workload(t *testing.T, ns, tunnel string, n int, config ...*xpv2.ProviderConfigReference) {
	t.Helper()
	ctx := context.Background()
	create := func(o client.Object) {
		if err := h.kube.Create(ctx, o); err != nil {
			t.Fatalf("create %T %s: %v", o, o.GetName(), err)
		}
	}
	cft := &v1alpha1.CloudflareTunnel{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: tunnel},
		Spec:       v1alpha1.CloudflareTunnelSpec{TunnelName: ptr.To("e2e-" + ns + "-" + tunnel), Replicas: ptr.To[int32](2)},
	}
	if len(config) > 0 {
		cft.Spec.ProviderConfigRef = config[0]
	}
	create(cft)
	for i := range n {
		name := fmt.Sprintf("app-%02d", i)
		create(&corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}}},
		})
		ann := map[string]string{
			v1alpha1.AnnotationTunnel:     tunnel,
			v1alpha1.AnnotationVPCService: fmt.Sprintf("e2e-%s-%s", ns, name),
		}
		host := fmt.Sprintf("%s-%s.%s", name, ns, zone)
		if i%2 == 0 {
			ann[v1alpha1.AnnotationPublic] = "true"
		} else {
			ann[v1alpha1.AnnotationPublic] = "false"
			host = fmt.Sprintf("%s.%s.svc.cluster.local", name, ns)
		}
		create(&networkingv1.Ingress{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: ann},
			Spec: networkingv1.IngressSpec{
				IngressClassName: ptr.To("cloudflare"),
				Rules: []networkingv1.IngressRule{{Host: host, IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
					Paths: []networkingv1.HTTPIngressPath{{Path: "/", PathType: ptr.To(networkingv1.PathTypePrefix), Backend: networkingv1.IngressBackend{
						Service: &networkingv1.IngressServiceBackend{Name: name, Port: networkingv1.ServiceBackendPort{Name: "http"}},
					}}},
				}}}},
			},
		})
	}
}

// managed lists the managed resources of a namespace.
func managed(t *testing.T, ns string) []resource.Managed { t.Helper(); return env.managed(t, ns) }

// managed lists the managed resources of a namespace of h's cluster.
func (h *harness) managed(t *testing.T, ns string) []resource.Managed {
	t.Helper()
	var out []resource.Managed
	for _, l := range []client.ObjectList{&ztv1alpha1.TunnelList{}, &ztv1alpha1.HostnameRouteList{}, &connv1alpha1.VPCServiceList{}, &dnsv1alpha1.DNSRecordList{}} {
		if err := h.kube.List(context.Background(), l, client.InNamespace(ns)); err != nil {
			t.Fatalf("list %T: %v", l, err)
		}
		out = append(out, l.(resource.ManagedList).GetItems()...)
	}
	return out
}

func allReady(t *testing.T, ns string, want int) func() error { return env.allReady(t, ns, want) }

// allReady is the package-level allReady, in h's cluster.
func (h *harness) allReady(t *testing.T, ns string, want int) func() error {
	return func() error {
		ms := h.managed(t, ns)
		if len(ms) != want {
			return fmt.Errorf("%d managed resources, want %d", len(ms), want)
		}
		var notReady []string
		for _, m := range ms {
			if m.GetCondition(xpv2.TypeReady).Status != corev1.ConditionTrue || m.GetCondition(xpv2.TypeSynced).Status != corev1.ConditionTrue {
				notReady = append(notReady, fmt.Sprintf("%T/%s (%s)", m, m.GetName(), m.GetCondition(xpv2.TypeSynced).Message))
			}
		}
		if len(notReady) > 0 {
			if len(notReady) > 3 {
				notReady = append(notReady[:3], fmt.Sprintf("and %d more", len(notReady)-3))
			}
			return fmt.Errorf("not Ready and Synced: %s", strings.Join(notReady, ", "))
		}
		return nil
	}
}

// TestFaultsRestartsNoLeaksNoDuplicates converges and then deletes 50
// Ingresses while Cloudflare fails 20% of calls, loses the response of 5% of
// writes that did happen, adds latency and throttles with 429s, and while
// the provider is killed (SIGKILL) and restarted at random points. Afterwards
// the account must hold exactly what should exist, and nothing after
// deletion; objects made by others are never touched.
func TestFaultsRestartsNoLeaksNoDuplicates(t *testing.T) {
	const n = 50
	ctx := context.Background()
	ns := namespace(t, "faults")
	foreign := makeForeign(t)
	foreignBefore := foreign.state(t)
	env.sim.ResetStats()

	faults := sim.Faults{ErrorRate: 0.2, LostResponseRate: 0.05, Latency: 50 * time.Millisecond}
	env.sim.SetFaults(faults)
	defer env.sim.SetFaults(sim.Faults{})
	// Beside the random losses: the first two DNS batches (the public
	// Ingresses' records, created together) happen but lose their answer;
	// often one batch carries them all and there is no second.
	env.sim.LoseNext("dns_records.batch", 2)
	defer env.sim.LoseNext("dns_records.batch", 0)
	stop := make(chan struct{})
	restarts := env.provider.restartRandomly(t, stop, 6*time.Second, 15*time.Second)

	start := time.Now()
	workload(t, ns, "edge", n)
	// A burst of 429s with retry-after while everything is being created,
	// as when another tool spends the token's budget.
	time.AfterFunc(20*time.Second, func() { env.sim.Throttle(10 * time.Second) })

	// 1 Tunnel + n routes + n VPC services + n/2 DNS records.
	wantMRs := 1 + n + n + n/2
	wait.Eventually(t, 10*time.Minute, "every managed resource Ready under faults and restarts", allReady(t, ns, wantMRs))
	cft := &v1alpha1.CloudflareTunnel{}
	if err := env.kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: "edge"}, cft); err != nil {
		t.Fatal(err)
	}
	env.sim.SetConnectors(cft.Status.TunnelID, 2)
	wait.Eventually(t, 3*time.Minute, "the CloudflareTunnel Ready (cloudflared admitted under the restricted Pod Security Standard)", func() error {
		if err := env.kube.Get(ctx, client.ObjectKeyFromObject(cft), cft); err != nil {
			return err
		}
		if c := cft.GetCondition(xpv2.TypeReady); c.Status != corev1.ConditionTrue {
			return fmt.Errorf("%s: %s", c.Reason, c.Message)
		}
		return nil
	})
	wait.Eventually(t, 2*time.Minute, "all public hostnames in the tunnel configuration", func() error {
		if got := len(report(foreign, cft.Status.TunnelID).ConfigHostnames); got != n/2 {
			return fmt.Errorf("%d hostnames in the configuration, want %d", got, n/2)
		}
		return nil
	})
	converged := time.Since(start)
	convergeStats := env.sim.Stats()
	lostConverge := env.sim.LostResponses()

	got := report(foreign, cft.Status.TunnelID)
	want := accountReport{Tunnels: 1, Routes: n, Services: n, Records: n / 2, ConfigHostnames: got.ConfigHostnames}
	if got.Tunnels != want.Tunnels || got.Routes != want.Routes || got.Services != want.Services || got.Records != want.Records || len(got.Duplicates) > 0 {
		t.Errorf("after convergence the account holds %+v, want %+v with no duplicates", got, want)
	}
	// Every object is the one its managed resource names, and each is named once.
	assertOneToOne(t, ns, foreign)

	// Two are armed, but when the first batch carries every record (and the
	// lost answer heals through the ownership marker) no second batch is
	// sent: one lost answer is the least that proves the healing.
	if lostConverge["dns_records.batch"] < 1 {
		t.Errorf("%d DNS batch answers lost during convergence, want at least 1: the records were not batched", lostConverge["dns_records.batch"])
	}

	// Deletion, under the same faults and restarts; the first batch of
	// deletes loses its answer too.
	env.sim.LoseNext("dns_records.batch", 1)
	delStart := time.Now()
	if err := env.kube.DeleteAllOf(ctx, &networkingv1.Ingress{}, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if err := env.kube.Delete(ctx, cft); err != nil {
		t.Fatal(err)
	}
	// The CloudflareTunnel stops cloudflared before it deletes the tunnel;
	// KWOK runs no container, so play cloudflared disconnecting once its
	// Deployment is gone.
	wait.Eventually(t, 10*time.Minute, "the cloudflared Deployment gone", func() error {
		if err := env.kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: "edge-cloudflared"}, &appsv1.Deployment{}); !kerrors.IsNotFound(err) {
			return fmt.Errorf("still there (%v)", err)
		}
		return nil
	})
	env.sim.SetConnectors(cft.Status.TunnelID, 0)
	wait.Eventually(t, 10*time.Minute, "every Ingress, managed resource and the CloudflareTunnel gone", func() error {
		ings := &networkingv1.IngressList{}
		if err := env.kube.List(ctx, ings, client.InNamespace(ns)); err != nil {
			return err
		}
		cfts := &v1alpha1.CloudflareTunnelList{}
		if err := env.kube.List(ctx, cfts, client.InNamespace(ns)); err != nil {
			return err
		}
		if left := len(ings.Items) + len(cfts.Items) + len(managed(t, ns)); left > 0 {
			return fmt.Errorf("%d objects left", left)
		}
		return nil
	})
	deleted := time.Since(delStart)
	close(stop)
	nRestarts := <-restarts
	env.sim.SetFaults(sim.Faults{})

	after := report(foreign, "")
	if after.Tunnels+after.Routes+after.Services+after.Records > 0 {
		t.Errorf("leaked after deletion: %+v", after)
	}
	if foreignAfter := foreign.state(t); foreignAfter != foreignBefore {
		t.Errorf("foreign objects were touched:\nbefore:\n%s\nafter:\n%s", foreignBefore, foreignAfter)
	}
	if nRestarts < 5 {
		t.Errorf("the provider was restarted %d times, want at least 5", nRestarts)
	}

	stats := env.sim.Stats()
	total, injected, throttled := 0, 0, 0
	for _, s := range stats {
		total += s.Requests
		injected += s.ByStatus[500]
		throttled += s.RateLimited
	}
	lost := 0
	for _, v := range env.sim.LostResponses() {
		lost += v
	}
	lines := []string{
		"| measure | value |", "|---|---|",
		fmt.Sprintf("| Ingresses (public / private, each with a VPC service) | %d (%d / %d) |", n, n/2, n/2),
		fmt.Sprintf("| injected: error rate / lost-response rate / latency | %.0f%% / %.0f%% / %v |", faults.ErrorRate*100, faults.LostResponseRate*100, faults.Latency),
		"| injected: 429 burst | every call refused for 10 s (retry-after), 20 s in |",
		fmt.Sprintf("| provider restarts (SIGKILL, every 6–15 s) | %d |", nRestarts),
		fmt.Sprintf("| converged (every MR Ready, CloudflareTunnel Ready, all rules in the configuration) | %s |", converged.Round(time.Second)),
		fmt.Sprintf("| deleted (everything gone) | %s |", deleted.Round(time.Second)),
		fmt.Sprintf("| Cloudflare requests / answered 500 / answered 429 | %d / %d / %d |", total, injected, throttled),
		fmt.Sprintf("| writes whose response was lost (they happened) | %d (%d during convergence) |", lost, sumInts(lostConverge)),
		fmt.Sprintf("| of which DNS batches (several records each) | %d (%d during convergence) |", env.sim.LostResponses()["dns_records.batch"], lostConverge["dns_records.batch"]),
		fmt.Sprintf("| DNS batch requests | %d |", stats["dns_records.batch"].Requests),
		fmt.Sprintf("| account after convergence | %d tunnel, %d routes, %d VPC services, %d DNS records, %d hostnames in the configuration |", got.Tunnels, got.Routes, got.Services, got.Records, len(got.ConfigHostnames)),
		fmt.Sprintf("| duplicated | %d |", len(got.Duplicates)),
		fmt.Sprintf("| leaked after deletion | %d |", after.Tunnels+after.Routes+after.Services+after.Records),
		fmt.Sprintf("| foreign objects touched (of 5) | %d |", boolInt(foreign.state(t) != foreignBefore)),
		fmt.Sprintf("| requests until converged | %d |", sumRequests(convergeStats)),
	}
	t.Log("\n" + strings.Join(lines, "\n"))
	_ = os.WriteFile(filepath.Join(env.out, "report-faults.md"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}

func sumInts(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func sumRequests(m map[string]sim.OpStats) int {
	n := 0
	for _, v := range m {
		n += v.Requests
	}
	return n
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// assertOneToOne checks that every managed resource's external-name names a
// live object in the account and no two managed resources share one, and
// that no object of ours is left without a managed resource.
func assertOneToOne(t *testing.T, ns string, foreign foreignObjects) {
	t.Helper()
	st := env.sim.Snapshot()
	live := map[string]string{}
	for _, x := range st.Tunnels {
		if x.DeletedAt == nil {
			live[x.ID] = "tunnel " + x.Name
		}
	}
	for _, x := range st.HostnameRoutes {
		if x.DeletedAt == nil {
			live[x.ID] = "route " + x.Hostname
		}
	}
	for _, x := range st.Services {
		live[x.ServiceID] = "service " + x.Name
	}
	for _, x := range st.DNSRecords {
		live[x.ID] = "record " + x.Name
	}
	named := map[string]string{}
	for _, m := range managed(t, ns) {
		id := meta.GetExternalName(m)
		if _, ok := live[id]; !ok {
			t.Errorf("%T %s: external-name %q names no live object", m, m.GetName(), id)
		}
		if other, dup := named[id]; dup {
			t.Errorf("%T %s and %s both manage %s", m, m.GetName(), other, id)
		}
		named[id] = m.GetName()
	}
	for id, what := range live {
		if _, ok := named[id]; !ok && !foreign.ids()[id] {
			t.Errorf("leaked: %s (%s) has no managed resource", what, id)
		}
	}
}
