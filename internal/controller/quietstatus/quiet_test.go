package quietstatus_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	kmeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	connv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/connectivity/v1alpha1"
	dnsv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/dns/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/providertest"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

// poll is the managed resources' poll in these tests: short, so that a
// few polls pass quickly.
const poll = time.Second

// writeUnchanged runs the provider without its quiet status client, to
// show that TestConvergedIsQuiet can fail:
//
//	go test ./internal/controller/quietstatus -run TestConvergedIsQuiet -args -write-unchanged-status
var writeUnchanged = flag.Bool("write-unchanged-status", false, "run the provider with every status write sent (quietstatus off); TestConvergedIsQuiet then fails")

var p *providertest.Provider

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(providertest.RunWithOptions(m, &p, providertest.Options{PollInterval: poll, WriteUnchangedStatus: *writeUnchanged}))
}

// TestConvergedIsQuiet: once a CloudflareTunnel and its Ingresses have
// converged (every managed resource Ready, the Ingresses' addresses set),
// the provider keeps polling Cloudflare but writes no status: nothing
// changed.
func TestConvergedIsQuiet(t *testing.T) {
	ns := p.Namespace(t)
	cr := &v1alpha1.CloudflareTunnel{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "edge"},
		Spec:       v1alpha1.CloudflareTunnelSpec{TunnelName: ptr.To("edge-" + ns), Replicas: ptr.To[int32](1)},
	}
	p.Create(t, cr)
	for _, s := range []struct {
		name string
		port int32
	}{{"web", 80}, {"redis", 6379}} {
		p.Create(t, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: s.name},
			Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: s.port, TargetPort: intstr.FromInt32(s.port)}}},
		})
	}
	public := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web", Annotations: map[string]string{v1alpha1.AnnotationTunnel: "edge", v1alpha1.AnnotationPublic: "true"}},
		Spec: networkingv1.IngressSpec{IngressClassName: ptr.To("cloudflare"), Rules: []networkingv1.IngressRule{{
			Host: "quiet-" + ns + ".example.com",
			IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
				Path: "/", PathType: ptr.To(networkingv1.PathTypePrefix),
				Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}},
			}}}},
		}}},
	}
	private := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "redis", Annotations: map[string]string{
			v1alpha1.AnnotationTunnel:     "edge",
			v1alpha1.AnnotationPublic:     "false",
			v1alpha1.AnnotationVPCService: "quiet-redis-" + ns,
			v1alpha1.AnnotationVPCPort:    "6379",
		}},
		Spec: networkingv1.IngressSpec{
			IngressClassName: ptr.To("cloudflare"),
			DefaultBackend:   &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "redis", Port: networkingv1.ServiceBackendPort{Number: 6379}}},
		},
	}
	p.Create(t, public)
	p.Create(t, private)

	wait.Eventually(t, 90*time.Second, "managed resources Ready, the public Ingress addressed", func() error {
		if err := p.Get(public); err != nil {
			return err
		}
		if len(public.Status.LoadBalancer.Ingress) == 0 {
			return fmt.Errorf("Ingress %s has no address yet", public.Name)
		}
		if err := allReady(ns, 4); err != nil {
			return err
		}
		// The public hostname's rules are in Cloudflare: the tunnel's
		// configuration was written, the last change converging makes.
		phs := &v1alpha1.PublicHostnameList{}
		if err := p.Client.List(context.Background(), phs, client.InNamespace(ns)); err != nil {
			return err
		}
		if len(phs.Items) != 1 {
			return fmt.Errorf("%d PublicHostnames, want 1", len(phs.Items))
		}
		if c := phs.Items[0].GetCondition(xpv2.TypeReady); c.Status != corev1.ConditionTrue {
			return fmt.Errorf("PublicHostname %s: Ready=%s (%s)", phs.Items[0].Name, c.Status, c.Message)
		}
		return nil
	})
	// Observed since converging, so what converging set in motion (the
	// last reconciles of the resources that just became Ready) is done;
	// then watch several polls.
	p.WaitServed(t, 3, "GET", "/cfd_tunnel$")
	before := p.StatusWrites()
	r := p.AtRest(t, 6, "/cfd_tunnel$")
	after := p.StatusWrites()
	// Quiet because nothing changed, not because nothing ran: every kind
	// kept observing Cloudflare, not only the Tunnel.
	for _, op := range []string{"dns_records.list", "services.list"} {
		if r.Calls[op] == 0 {
			t.Errorf("no %s over %d observation TTLs: the provider stopped polling", op, r.TTLs)
		}
	}

	var written []string
	for obj, n := range after {
		if d := n - before[obj]; d > 0 && strings.Contains(obj, "/namespaces/"+ns+"/") {
			written = append(written, fmt.Sprintf("%s: %d", obj, d))
		}
	}
	sort.Strings(written)
	if len(written) > 0 {
		t.Errorf("%d objects had their status written over %d observation TTLs after converging, want none:\n%s", len(written), r.TTLs, strings.Join(written, "\n"))
	}
}

// allReady checks that the namespace holds at least min managed resources
// and that every one is Ready and Synced.
func allReady(ns string, min int) error {
	n := 0
	for _, l := range []client.ObjectList{&ztv1alpha1.TunnelList{}, &ztv1alpha1.HostnameRouteList{}, &connv1alpha1.VPCServiceList{}, &dnsv1alpha1.DNSRecordList{}} {
		if err := p.Client.List(context.Background(), l, client.InNamespace(ns)); err != nil {
			return err
		}
		items, err := kmeta.ExtractList(l)
		if err != nil {
			return err
		}
		for _, o := range items {
			mg := o.(resource.Managed)
			n++
			r, s := mg.GetCondition(xpv2.TypeReady), mg.GetCondition(xpv2.TypeSynced)
			if r.Status != corev1.ConditionTrue || s.Status != corev1.ConditionTrue {
				return fmt.Errorf("%T %s: Ready=%s Synced=%s (%s)", mg, mg.GetName(), r.Status, s.Status, s.Message)
			}
		}
	}
	if n < min {
		return fmt.Errorf("%d managed resources, want at least %d", n, min)
	}
	return nil
}
