package ingress_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/ingress/translate"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

// sharedTunnel makes a CloudflareTunnel in a namespace of its own, shared
// with every namespace, and returns that namespace and the tunnel's ID.
func sharedTunnel(t *testing.T) (ns, tunnelID string) {
	t.Helper()
	ns = p.Namespace(t)
	cr := &v1alpha1.CloudflareTunnel{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "edge"},
		Spec: v1alpha1.CloudflareTunnelSpec{TunnelName: ptr.To("edge-" + ns), Replicas: ptr.To[int32](1),
			AllowedNamespaces: &v1alpha1.AllowedNamespaces{From: v1alpha1.NamespacesFromAll}},
	}
	p.CreateTunnel(t, cr)
	return ns, cr.Status.TunnelID
}

// routesOf are the HostnameRoutes an Ingress made.
func routesOf(t *testing.T, ns, ing string) []ztv1alpha1.HostnameRoute {
	t.Helper()
	l := &ztv1alpha1.HostnameRouteList{}
	if err := p.Client.List(context.Background(), l, client.InNamespace(ns), client.MatchingLabels{translate.LabelIngress: ing}); err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// services makes the Services the test Ingresses' backends name, so that
// no Warning about a missing one is repeated on each reconcile (client-go
// drops an object's events past a burst of 25).
func services(t *testing.T, ns string) {
	t.Helper()
	for name, port := range map[string]int32{"redis": 6379, "web": 80, "api": 8080} {
		p.Create(t, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: port, TargetPort: intstr.FromInt32(port)}}},
		})
	}
}

// Issue 34, bug 5: on a shared tunnel team-a holds a hostname through a
// PublicHostname. team-b's Ingress for it loses the public claim, and with
// it the private route: it makes none (and says why), and team-a's own
// private Ingress for the hostname routes it. team-a's public hostname is
// untouched throughout.
func TestTheHolderOfAPublicHostnameHoldsItsPrivateRoute(t *testing.T) {
	platform, tunnelID := sharedTunnel(t)
	teamA, teamB := p.Namespace(t), p.Namespace(t)
	services(t, teamA)
	services(t, teamB)
	edge := platform + "/edge"
	host := "api-" + platform + ".example.com"
	ph := &v1alpha1.PublicHostname{
		ObjectMeta: metav1.ObjectMeta{Namespace: teamA, Name: "api"},
		Spec: v1alpha1.PublicHostnameSpec{TunnelRef: v1alpha1.TunnelReference{Name: "edge", Namespace: platform}, Hostname: host,
			Origin: &v1alpha1.Origin{URL: ptr.To("http_status:418")}},
	}
	p.Create(t, ph)
	wait.Eventually(t, wait.Patience, "team-a's hostname published", func() error {
		if rs := rulesOf(t, tunnelID, host); len(rs) != 1 || rs[0].Service != "http_status:418" {
			return fmt.Errorf("rules %+v", rs)
		}
		return nil
	})

	wait.NextSecond()
	steal := ingress(teamB, "steal", map[string]string{v1alpha1.AnnotationTunnel: edge, v1alpha1.AnnotationPublic: "true"}, host)
	p.Create(t, steal)
	waitEvent(t, teamB, "steal", "HostnameConflict", "private route")
	// The holder is another tenant's: not named to team-b.
	waitEvent(t, teamB, "steal", "HostnameConflict", "by a PublicHostname of another namespace")
	for _, e := range warnings(t, teamB, "steal") {
		if strings.Contains(e.Message, teamA) || strings.Contains(e.Message, "PublicHostname api") {
			t.Errorf("team-b's Ingress is told of team-a's object: %s %s", e.Reason, e.Message)
		}
	}
	wait.Eventually(t, wait.Patience, "no private route for the loser", func() error {
		if rs := routesOf(t, teamB, "steal"); len(rs) != 0 {
			return fmt.Errorf("team-b has HostnameRoute %s", rs[0].Name)
		}
		return nil
	})
	if phs := publicHostnamesOf(t, steal); len(phs) != 1 {
		t.Errorf("team-b's Ingress has %d PublicHostnames, want its losing claim kept in line", len(phs))
	} else if st, err := json.Marshal(phs[0].Status); err != nil {
		t.Fatal(err)
	} else if strings.Contains(string(st), teamA) {
		// Nor in its status: status.tunnel.claimedBy names only a holder
		// of its own namespace.
		t.Errorf("team-b's PublicHostname's status names team-a's object: %s", st)
	}

	wait.NextSecond()
	mine := ingress(teamA, "mine", map[string]string{v1alpha1.AnnotationTunnel: edge, v1alpha1.AnnotationHostname: host})
	p.Create(t, mine)
	wait.Eventually(t, wait.Patience, "team-a's private Ingress routes the hostname", func() error {
		rs := routesOf(t, teamA, "mine")
		if len(rs) != 1 || rs[0].GetCondition(xpv2.TypeReady).Status != corev1.ConditionTrue {
			return fmt.Errorf("team-a's routes %+v", rs)
		}
		if cf := routesFor(t, host); len(cf) != 1 || cf[0].TunnelID != tunnelID {
			return fmt.Errorf("routes in Cloudflare %+v", cf)
		}
		return nil
	})
	if rs := routesOf(t, teamB, "steal"); len(rs) != 0 {
		t.Errorf("team-b has HostnameRoute %s", rs[0].Name)
	}
	if rs := rulesOf(t, tunnelID, host); len(rs) != 1 || rs[0].Service != "http_status:418" {
		t.Errorf("team-a's rules became %+v", rs)
	}

	deleteIngress(t, mine)
	deleteIngress(t, steal)
	p.DeleteAndWait(t, ph)
}
