package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	dnsv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/dns/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare/budget"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/composite/cloudflaretunnel"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/providertest"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

// previousBuild is the provider at hack/upgrade-from, from this repository's
// own history: its source tree (for its CRDs and install manifests) and its
// binary, built as `make build` does and cached by commit.
func previousBuild(t *testing.T) (root, bin, rev string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(env.root, "hack", "upgrade-from"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			rev = l
		}
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(cache, "provider-cloudflare-tunnel", "previous", rev)
	root, bin = filepath.Join(dir, "src"), filepath.Join(dir, "provider")
	if _, err := os.Stat(bin); err == nil {
		return root, bin, rev
	}
	if _, err := run(env.root, nil, "git", "cat-file", "-e", rev+"^{commit}"); err != nil {
		t.Fatalf("the upgrade test starts from commit %s (hack/upgrade-from), which this clone does not have (a shallow clone?): %v", rev, err)
	}
	_ = os.RemoveAll(dir)
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := run(env.root, nil, "sh", "-c", fmt.Sprintf("git archive %s | tar -x -C %q", rev, root)); err != nil {
		t.Fatal(err)
	}
	if _, err := run(root, []string{"CGO_ENABLED=0"}, "go", "build", "-trimpath", "-o", bin+".tmp", "./cmd/provider"); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(bin+".tmp", bin); err != nil {
		t.Fatal(err)
	}
	t.Logf("built the provider at %s in %s", rev[:12], time.Since(start).Round(time.Second))
	return root, bin, rev
}

// previous boots a cluster running the previous version, on a simulated
// account of its own so that every request it sees is the upgrade's.
func previous(t *testing.T, name, root, bin string) *harness {
	t.Helper()
	h := &harness{root: env.root, out: env.out, bins: env.bins, manifests: root, bin: bin, token: "e2e-upgrade-token-" + randomHex(16), account: randomHex(16)}
	h.sim = sim.New(sim.Options{Token: h.token, AccountID: h.account, Zones: []string{zone}, RateLimit: sim.CloudflareRateLimit, RateWindow: sim.CloudflareRateWindow})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h.sim}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	h.simURL = "http://" + l.Addr().String() + "/client/v4/"
	h.cf = cloudflare.New(clients.Config{Token: h.token, AccountID: h.account, Endpoint: h.simURL}, cloudflare.Options{Budgets: budget.NewRegistry(budget.Options{Limit: 1000000})})
	t.Cleanup(h.stop)
	if err := h.boot(context.Background(), name, 2); err != nil {
		t.Fatal(err)
	}
	return h
}

// cloudflareIDs are the IDs of every object the account holds.
func cloudflareIDs(st sim.State) []string {
	var ids []string
	for _, x := range st.Tunnels {
		if x.DeletedAt == nil {
			ids = append(ids, "tunnel "+x.ID)
		}
	}
	for _, x := range st.HostnameRoutes {
		if x.DeletedAt == nil {
			ids = append(ids, "route "+x.ID)
		}
	}
	for _, x := range st.Services {
		ids = append(ids, "vpc "+x.ServiceID)
	}
	for _, x := range st.DNSRecords {
		ids = append(ids, "dns "+x.ID)
	}
	slices.Sort(ids)
	return ids
}

// writes counts the account's create and delete requests, and all writes.
func writes(s *sim.Server) (createsDeletes map[string]int, all int) {
	createsDeletes = map[string]int{}
	for op, st := range s.Stats() {
		if strings.HasSuffix(op, ".list") || strings.HasSuffix(op, ".get") || strings.Contains(op, "get_") {
			continue
		}
		all += st.Requests
		if strings.HasSuffix(op, ".create") || strings.HasSuffix(op, ".delete") {
			createsDeletes[op] = st.Requests
		}
	}
	return createsDeletes, all
}

// TestUpgradeFromThePreviousVersionTouchesNothing installs the provider as it
// was last released (hack/upgrade-from, built from this repository's history)
// with plain manifests, converges public and private Ingresses with VPC
// services, then upgrades the way a plain-manifest user does: apply the new
// CRDs and cluster/install, and swap the binary (a new image: the old process
// is stopped, the new one starts). Every Cloudflare object must keep its ID,
// no create or delete may reach Cloudflare, the tunnel's configuration must
// keep every rule, and every Ingress its address. The public hostnames' DNS
// records move from their Ingresses to the new PublicHostnames by takeover,
// not by recreation.
func TestUpgradeFromThePreviousVersionTouchesNothing(t *testing.T) {
	ctx := context.Background()
	root, bin, rev := previousBuild(t)
	h := previous(t, "cluster-upgrade", root, bin)
	ns := h.namespace(t, "upgrade")
	const n = 4
	h.workload(t, ns, "edge", n)
	wait.Eventually(t, 3*time.Minute, "every managed resource Ready on the previous version", h.allReady(t, ns, 1+n+n+n/2))
	cft := &v1alpha1.CloudflareTunnel{}
	if err := h.kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: "edge"}, cft); err != nil {
		t.Fatal(err)
	}
	h.sim.SetConnectors(cft.Status.TunnelID, 2)
	addresses := func() map[string]string {
		l := &networkingv1.IngressList{}
		if err := h.kube.List(ctx, l, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, i := range l.Items {
			if lb := i.Status.LoadBalancer.Ingress; len(lb) > 0 {
				out[i.Name] = lb[0].Hostname
			}
		}
		return out
	}
	rules := func() (string, int) {
		tc, err := h.cf.GetTunnelConfiguration(ctx, cft.Status.TunnelID)
		if err != nil {
			t.Fatal(err)
		}
		var c ztv1alpha1.TunnelConfig
		if err := json.Unmarshal(tc.Config, &c); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(c.Ingress)
		return string(b), tc.Version
	}
	recordUIDs := func() map[string]types.UID {
		l := &dnsv1alpha1.DNSRecordList{}
		if err := h.kube.List(ctx, l, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		out := map[string]types.UID{}
		for _, r := range l.Items {
			out[r.Name] = r.UID
		}
		return out
	}
	wait.Eventually(t, time.Minute, "the public Ingresses' addresses", func() error {
		if a := addresses(); len(a) != n/2 {
			return fmt.Errorf("addresses %v", a)
		}
		return nil
	})
	connectorKey := client.ObjectKey{Namespace: ns, Name: "edge-cloudflared"}
	depBefore := &appsv1.Deployment{}
	if err := h.kube.Get(ctx, connectorKey, depBefore); err != nil {
		t.Fatal(err)
	}
	if legacy := cloudflaretunnel.LegacyManagers(depBefore.ManagedFields, cft.UID); legacy.Len() == 0 {
		t.Errorf("the previous version's Deployment has no update manager owning its controller reference: %+v", depBefore.ManagedFields)
	}
	idsBefore, addrBefore, recsBefore := cloudflareIDs(h.sim.Snapshot()), addresses(), recordUIDs()
	rulesBefore, versionBefore := rules()
	cdBefore, allBefore := writes(h.sim)

	// The upgrade, as docs/install.md ("Upgrading") tells a plain-manifest
	// user to type it.
	start := time.Now()
	for _, argv := range guideCommands(t, "docs/install.md", "## Upgrading") {
		if argv[0] != "kubectl" {
			t.Fatalf("a guide's command the test cannot run: %q", argv)
		}
		if out, err := h.kubectl(argv[1:]...); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
		}
	}
	h.provider.stop()
	h.provider.Bin = filepath.Join(env.out, "provider")
	if err := h.provider.start(); err != nil {
		t.Fatal(err)
	}
	wait.Eventually(t, 2*time.Minute, "every public hostname Ready on the new version, its DNS record taken over", func() error {
		l := &v1alpha1.PublicHostnameList{}
		if err := h.kube.List(ctx, l, client.InNamespace(ns)); err != nil {
			return err
		}
		if len(l.Items) != n/2 {
			return fmt.Errorf("%d PublicHostnames, want %d", len(l.Items), n/2)
		}
		for _, ph := range l.Items {
			if c := ph.GetCondition(xpv2.TypeReady); c.Status != corev1.ConditionTrue {
				return fmt.Errorf("PublicHostname %s: Ready=%s %s: %s", ph.Name, c.Status, c.Reason, c.Message)
			}
		}
		return nil
	})
	converged := time.Since(start)
	// Two drift polls for anything the new version would still change: a
	// list at most every half poll, so five lists span two polls.
	providertest.WaitServed(t, h.sim, 5, http.MethodGet, "/zones/"+sim.ZoneID(zone)+"/dns_records$")
	wait.Eventually(t, time.Minute, "every managed resource Ready on the new version", h.allReady(t, ns, 1+n+n+n/2))

	if diff := cmp.Diff(idsBefore, cloudflareIDs(h.sim.Snapshot())); diff != "" {
		t.Errorf("Cloudflare objects changed across the upgrade (-before +after):\n%s", diff)
	}
	cdAfter, allAfter := writes(h.sim)
	for op, n := range cdAfter {
		if n != cdBefore[op] {
			t.Errorf("%d %s requests reached Cloudflare during the upgrade, want 0", n-cdBefore[op], op)
		}
	}
	rulesAfter, versionAfter := rules()
	if rulesAfter != rulesBefore {
		t.Errorf("the tunnel's rules changed across the upgrade:\nbefore %s\nafter  %s", rulesBefore, rulesAfter)
	}
	if versionAfter != versionBefore {
		t.Errorf("the tunnel's configuration was rewritten (version %d → %d) with the same rules", versionBefore, versionAfter)
	}
	if diff := cmp.Diff(addrBefore, addresses()); diff != "" {
		t.Errorf("Ingress addresses changed (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(recsBefore, recordUIDs()); diff != "" {
		t.Errorf("DNSRecord managed resources were replaced (-before +after):\n%s", diff)
	}
	// The cloudflared Deployment moved to server-side apply: the previous
	// version's update manager owns nothing any more.
	depAfter := &appsv1.Deployment{}
	if err := h.kube.Get(ctx, connectorKey, depAfter); err != nil {
		t.Fatal(err)
	}
	managers := map[string]metav1.ManagedFieldsOperationType{}
	for _, m := range depAfter.ManagedFields {
		managers[m.Manager] = m.Operation
	}
	if legacy := cloudflaretunnel.LegacyManagers(depAfter.ManagedFields, cft.UID); legacy.Len() > 0 || managers[cloudflaretunnel.FieldOwner] != metav1.ManagedFieldsOperationApply {
		t.Errorf("the Deployment's managers after the upgrade are %v (the previous version's %v still own fields), want %s applying", managers, sets.List(legacy), cloudflaretunnel.FieldOwner)
	}
	if img := depAfter.Spec.Template.Spec.Containers[0].Image; img != v1alpha1.DefaultCloudflaredImage {
		t.Errorf("cloudflared image %s after the upgrade, want the new default %s", img, v1alpha1.DefaultCloudflaredImage)
	}
	l := &dnsv1alpha1.DNSRecordList{}
	if err := h.kube.List(ctx, l, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, r := range l.Items {
		if c := metav1.GetControllerOf(&r); c == nil || c.Kind != v1alpha1.PublicHostnameKind {
			t.Errorf("DNSRecord %s is controlled by %+v, want its PublicHostname", r.Name, c)
		}
	}
	t.Logf("upgrade from %s: %d Cloudflare objects kept, %d writes of any kind by the upgrade (0 creates, 0 deletes), public hostnames Ready %s after the binary swap",
		rev[:12], len(idsBefore), allAfter-allBefore, converged.Round(time.Second))
}
