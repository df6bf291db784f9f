package service_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/composite/cloudflaretunnel"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

const sharedLabel = "tunnels.example.com/edge"

func publicIngress(ns, name, tunnel, host string) *networkingv1.Ingress {
	return &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: map[string]string{
			v1alpha1.AnnotationTunnel: tunnel, v1alpha1.AnnotationPublic: "true", v1alpha1.AnnotationHostname: host,
		}},
		Spec: networkingv1.IngressSpec{IngressClassName: ptr.To("cloudflare"), DefaultBackend: &networkingv1.IngressBackend{
			Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}},
		}},
	}
}

func labelNamespace(t *testing.T, ns string, labels map[string]string) {
	t.Helper()
	wait.Eventually(t, wait.Patience, "namespace labels", func() error {
		n := &corev1.Namespace{}
		if err := p.Client.Get(context.Background(), types.NamespacedName{Name: ns}, n); err != nil {
			return err
		}
		n.Labels = labels
		return p.Client.Update(context.Background(), n)
	})
}

func published(t *testing.T, tunnelID string, hosts ...string) error {
	t.Helper()
	cfg := p.TunnelConfig(t, tunnelID)
	for _, h := range hosts {
		if !strings.Contains(cfg, `"hostname":"`+h+`"`) {
			return fmt.Errorf("%s not in the configuration %s", h, cfg)
		}
		if rs := p.Records(t, h); len(rs) != 1 || rs[0].Content != tunnelID+".cfargotunnel.com" {
			return fmt.Errorf("%s: records %+v", h, rs)
		}
	}
	return nil
}

// A tunnel in platform, shared with the namespaces labelled for it: team-a
// (labelled) publishes through it and keeps what it makes in its own
// namespace; team-b (not labelled) is refused and gets nothing; unlabelling
// team-a unpublishes exactly its objects; and the tunnel's deletion waits for
// the users of every namespace.
func TestATunnelSharedAcrossNamespaces(t *testing.T) {
	platform := p.Namespace(t)
	teamA, teamB := p.Namespace(t), p.Namespace(t)
	labelNamespace(t, teamA, map[string]string{sharedLabel: "true"})
	cr := &v1alpha1.CloudflareTunnel{
		ObjectMeta: metav1.ObjectMeta{Namespace: platform, Name: "edge"},
		Spec: v1alpha1.CloudflareTunnelSpec{TunnelName: ptr.To("edge-" + platform), Replicas: ptr.To[int32](1),
			AllowedNamespaces: &v1alpha1.AllowedNamespaces{From: v1alpha1.NamespacesFromSelector, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{sharedLabel: "true"}}}},
	}
	p.CreateTunnel(t, cr)
	tunnelID := cr.Status.TunnelID
	shared := platform + "/edge"
	own, hostA, hostB := "own-"+platform+".example.com", "a-"+teamA+".example.com", "b-"+teamB+".example.com"
	p.Create(t, publicIngress(platform, "own", "edge", own))
	ingA := publicIngress(teamA, "web", shared, hostA)
	p.Create(t, ingA)
	vpc := "cache-" + teamA
	svcA := exposedService(teamA, "redis", annotations(v1alpha1.AnnotationTunnel, shared, v1alpha1.AnnotationVPCService, vpc), corev1.ServicePort{Name: "redis", Port: 6379})
	p.Create(t, svcA)
	p.Create(t, publicIngress(teamB, "web", shared, hostB))

	redisA := "redis." + teamA + ".svc.cluster.local"
	wait.Eventually(t, wait.Patience, "platform's and team-a's hostnames published", func() error {
		if err := published(t, tunnelID, own, hostA); err != nil {
			return err
		}
		if rs, ss := p.HostnameRoutes(t, redisA), p.VPCServices(t, vpc); len(rs) != 1 || rs[0].TunnelID != tunnelID || len(ss) != 1 {
			l := &ztv1alpha1.HostnameRouteList{}
			_ = p.Client.List(context.Background(), l, client.InNamespace(teamA))
			var d []string
			for _, m := range l.Items {
				d = append(d, fmt.Sprintf("%s %v", m.Name, m.Status.Conditions))
			}
			ev := &corev1.EventList{}
			_ = p.Client.List(context.Background(), ev, client.InNamespace(teamA))
			for _, e := range ev.Items {
				d = append(d, e.InvolvedObject.Name+": "+e.Reason+" "+e.Message)
			}
			return fmt.Errorf("team-a's Service: %d routes, %d VPC services; %v", len(rs), len(ss), d)
		}
		return nil
	})
	// What team-a made is in team-a.
	phs := &v1alpha1.PublicHostnameList{}
	if err := p.Client.List(context.Background(), phs, client.InNamespace(teamA)); err != nil {
		t.Fatal(err)
	}
	if len(phs.Items) != 1 || phs.Items[0].Spec.TunnelRef != (v1alpha1.TunnelReference{Namespace: platform, Name: "edge"}) {
		t.Fatalf("team-a's PublicHostnames: %+v", phs.Items)
	}
	// team-b: a Warning, and nothing.
	p.WaitWarning(t, teamB, "web", "TunnelNotShared", "does not allow namespace "+teamB)
	if rs := p.Records(t, hostB); len(rs) != 0 || strings.Contains(p.TunnelConfig(t, tunnelID), hostB) {
		t.Fatalf("team-b, not allowed, was published: %d records", len(rs))
	}

	// A raw tunnel ID follows the same allow-list.
	raw := func(ns, host string) *ztv1alpha1.HostnameRoute {
		return &ztv1alpha1.HostnameRoute{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "raw"},
			Spec:       ztv1alpha1.HostnameRouteSpec{ForProvider: ztv1alpha1.HostnameRouteParameters{Hostname: host, TunnelID: ptr.To(tunnelID)}},
		}
	}
	rawA, rawB := raw(teamA, "raw."+teamA+".internal"), raw(teamB, "raw."+teamB+".internal")
	p.Create(t, rawA)
	p.Create(t, rawB)
	p.WaitReady(t, rawA)
	p.WaitSynced(t, rawB, "refused a tunnel not shared with team-b", func(c xpv2.Condition) bool {
		return c.Status == corev1.ConditionFalse && strings.Contains(c.Message, "another namespace")
	})
	if rs := p.HostnameRoutes(t, "raw."+teamB+".internal"); len(rs) != 0 {
		t.Fatalf("team-b routed through a tunnel not shared with it: %+v", rs)
	}
	p.DeleteAndWait(t, rawA)
	p.DeleteAndWait(t, rawB)

	// Unlabelled: team-a's go, platform's stay.
	labelNamespace(t, teamA, nil)
	wait.Eventually(t, wait.Patience, "team-a unpublished", func() error {
		if rs := p.Records(t, hostA); len(rs) != 0 || strings.Contains(p.TunnelConfig(t, tunnelID), hostA) || len(p.HostnameRoutes(t, hostA)) != 0 {
			return fmt.Errorf("%s: %d records, or still routed or in the configuration", hostA, len(rs))
		}
		if rs, ss := p.HostnameRoutes(t, redisA), p.VPCServices(t, vpc); len(rs)+len(ss) != 0 {
			return fmt.Errorf("team-a's Service: %d routes, %d VPC services left", len(rs), len(ss))
		}
		return nil
	})
	if err := published(t, tunnelID, own); err != nil {
		t.Fatalf("unlabelling team-a took platform's own hostname down: %v", err)
	}
	p.WaitWarning(t, teamA, "web", "TunnelNotShared", "does not allow namespace "+teamA)

	// Labelled again, it comes back; the tunnel's deletion then waits for it.
	labelNamespace(t, teamA, map[string]string{sharedLabel: "true"})
	wait.Eventually(t, wait.Patience, "team-a published again", func() error { return published(t, tunnelID, hostA) })
	if err := p.Client.Delete(context.Background(), cr); err != nil {
		t.Fatal(err)
	}
	wait.Eventually(t, wait.Patience, "TunnelInUse naming team-a's Ingress", func() error {
		if err := p.Get(cr); err != nil {
			return err
		}
		c := cr.GetCondition(xpv2.TypeReady)
		if c.Reason != cloudflaretunnel.ReasonTunnelInUse || !strings.Contains(c.Message, teamA+"/web") {
			return fmt.Errorf("Ready: %s %s", c.Reason, c.Message)
		}
		return nil
	})
	p.DeleteAndWait(t, ingA)
	p.DeleteAndWait(t, svcA)
	p.DeleteAndWait(t, publicIngress(platform, "own", "edge", own))
	p.DeleteAndWait(t, publicIngress(teamB, "web", shared, hostB))
	p.DeleteAndWait(t, cr)
}
