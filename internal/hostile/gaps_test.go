package hostile

// Issue 48, the gaps a review found: a name under another namespace's
// wildcard, a hand-written Tunnel rule to a Service leading to the metadata
// endpoint, Access taken off a route under a GatewayBinding, and a
// GatewayClass deleted under a programmed Gateway.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/common"
	tv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/origin"
	gwtranslate "github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/gateway/translate"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

func gapsEntries() []entry {
	return []entry{
		{name: "AccessApplication/ANameUnderAnotherNamespacesWildcard", answer: custom, run: gatesUnderAWildcard},
		{name: "Tunnel/ARuleToAnExternalNameServiceLeadingToMetadata", answer: notSynced, obj: metadataByExternalName, want: []string{"not allowed", string(origin.RuleMetadata)}},
		{name: "GatewayBinding/ARouteLosesItsAccessAnnotation", answer: custom, run: takesAccessOffARoute},
		{name: "GatewayClass/DeletedUnderAProgrammedGateway", answer: custom, run: deletesTheClass},
	}
}

// gatesUnderAWildcard: another namespace's made DNS record is a wildcard,
// *.wild-<ns>.example.com; an AccessApplication of the corpus namespace
// for a name under it is refused NotAllowed, naming neither that namespace
// nor its record, and never made.
func gatesUnderAWildcard(t *testing.T, c *corpus) string {
	zone := "wild-" + c.bare + ".example.com"
	rec := c.record("wild", "*."+zone)
	rec.Namespace = c.bare
	p.Create(t, rec)
	wait.Eventually(t, 60*time.Second, "the wildcard record made", func() error {
		if err := p.Get(rec); err != nil {
			return err
		}
		if meta.GetExternalName(rec) == "" || rec.GetCondition(xpv2.TypeReady).Status != corev1.ConditionTrue {
			return fmt.Errorf("not made: %+v", rec.GetCondition(xpv2.TypeSynced))
		}
		return nil
	})
	app := &ztv1alpha1.AccessApplication{
		ObjectMeta: metav1.ObjectMeta{Namespace: c.ns, Name: "under-wildcard"},
		Spec:       ztv1alpha1.AccessApplicationSpec{ForProvider: ztv1alpha1.AccessApplicationParameters{Name: "under-wildcard", Domain: "grafana." + zone}},
	}
	p.Create(t, app)
	cond := p.WaitSynced(t, app, "Synced=False NotAllowed", func(s xpv2.Condition) bool {
		return s.Status == corev1.ConditionFalse && s.Reason == common.ReasonNotAllowed
	})
	answer := "Synced=False NotAllowed: " + oneLine(cond.Message)
	if strings.Contains(cond.Message, c.bare) && !strings.Contains(cond.Message, zone) {
		answer = c.knownBug(t, "the refusal names the holder's namespace: %s", cond.Message)
	}
	if ids := cloudflareApps(t, "grafana."+zone); len(ids) != 0 || meta.GetExternalName(app) != "" {
		answer = c.knownBug(t, "an Access application was made under another namespace's wildcard: %v", ids)
	}
	p.DeleteAndWait(t, app)
	p.DeleteAndWait(t, rec)
	c.allowMade(zone)
	return answer
}

// metadataByExternalName: a Tunnel written by hand whose rule sends a
// hostname to a Service of the namespace, an ExternalName Service naming
// the cloud metadata endpoint. The rule text is a Service of the cluster;
// where it leads is refused.
func metadataByExternalName(c *corpus) client.Object {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: c.ns, Name: "imds"}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "metadata.google.internal"}}
	if err := p.Client.Create(context.Background(), svc); client.IgnoreAlreadyExists(err) != nil {
		panic(err)
	}
	return c.tunnel("imds", "imds-"+c.ns, func(tun *ztv1alpha1.Tunnel) {
		tun.Spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionAll}
		tun.Spec.ForProvider.Config = &ztv1alpha1.TunnelConfig{Ingress: []ztv1alpha1.IngressRule{
			{Hostname: ptr.To("imds-" + c.ns + ".example.com"), Service: "http://imds." + c.ns + ".svc.cluster.local:80"}, catchAll(),
		}}
	})
}

// takesAccessOffARoute: a route under a GatewayBinding (its Gateway
// another controller's) is protected by its access-policies annotation;
// the annotation is taken off. The application is deleted once the rules
// without the check are served: none left in Cloudflare.
func takesAccessOffARoute(t *testing.T, c *corpus) string {
	p.InstallThirdPartyCRDs(t, "gateway-api")
	ns, host := c.ns, "unguarded-route-"+c.ns+".example.com"
	const controller = "example.com/traefik"
	pol := c.staffPolicy(t, "route-staff")
	class := &gwv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "traefik-unguard-" + ns}, Spec: gwv1.GatewayClassSpec{ControllerName: controller}}
	gw := &gwv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "unguard"}, Spec: gwv1.GatewaySpec{GatewayClassName: gwv1.ObjectName(class.Name),
		Listeners: []gwv1.Listener{{Name: "web", Port: 8000, Protocol: gwv1.HTTPProtocolType}}}}
	traefik := service(ns, "traefik-unguard", "web", 80)
	r := &gwv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "unguard", Annotations: map[string]string{tv1alpha1.AnnotationAccessPolicies: "route-staff"}}}
	r.Spec.ParentRefs = []gwv1.ParentReference{{Name: "unguard", SectionName: ptr.To(gwv1.SectionName("web"))}}
	r.Spec.Hostnames = []gwv1.Hostname{gwv1.Hostname(host)}
	b := c.binding("unguard", func(b *tv1alpha1.GatewayBinding) {
		b.Spec.GatewayRef.Name = "unguard"
		b.Spec.Origin.Service.Name = "traefik-unguard"
		b.Spec.Origin.Service.Port = intstr.FromInt32(80)
	})
	for _, o := range []client.Object{class, gw, traefik, r} {
		p.Create(t, o)
	}
	r.Status.Parents = []gwv1.RouteParentStatus{{ParentRef: r.Spec.ParentRefs[0], ControllerName: controller, Conditions: []metav1.Condition{{
		Type: string(gwv1.RouteConditionAccepted), Status: metav1.ConditionTrue, Reason: string(gwv1.RouteReasonAccepted), Message: "as Traefik says",
		ObservedGeneration: r.Generation, LastTransitionTime: metav1.Now(),
	}}}}
	if err := p.Client.Status().Update(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	p.Create(t, b)
	wait.Eventually(t, 90*time.Second, "the route's application made", func() error {
		if len(cloudflareApps(t, host)) != 1 {
			return fmt.Errorf("no application for %s yet", host)
		}
		return nil
	})
	p.Edit(t, r, func() { delete(r.Annotations, tv1alpha1.AnnotationAccessPolicies) })
	answer := "the application deleted once the rules without the check were served"
	wait.Eventually(t, 90*time.Second, "the application gone", func() error {
		if ids := cloudflareApps(t, host); len(ids) != 0 {
			return fmt.Errorf("applications left for %s: %v", host, ids)
		}
		return nil
	})
	if !strings.Contains(p.TunnelConfig(t, c.edgeID), host) {
		answer = c.knownBug(t, "%s was taken down with its Access, not published open as the route now asks", host)
	}
	p.DeleteAndWait(t, b)
	for _, o := range []client.Object{r, gw, class, traefik} {
		if err := p.Client.Delete(context.Background(), o); client.IgnoreNotFound(err) != nil {
			t.Fatal(err)
		}
	}
	p.DeleteAndWait(t, pol)
	wait.Eventually(t, 60*time.Second, "the binding's objects removed", func() error {
		if len(p.Records(t, host)) != 0 || strings.Contains(p.TunnelConfig(t, c.edgeID), host) {
			return fmt.Errorf("%s still published", host)
		}
		return nil
	})
	c.allowMade(host)
	return answer
}

// deletesTheClass: a Gateway of this provider's class, programmed with a
// route published, loses its GatewayClass. What it made goes, and its
// status stops saying Programmed, with no address; the route's entry of
// this controller goes too: nothing claims what no longer exists.
func deletesTheClass(t *testing.T, c *corpus) string {
	p.InstallThirdPartyCRDs(t, "gateway-api")
	ns, host := c.ns, "classless-"+c.ns+".example.com"
	class := &gwv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "cloudflare-" + ns}, Spec: gwv1.GatewayClassSpec{ControllerName: gwtranslate.ControllerName}}
	gw := &gwv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "classless"}, Spec: gwv1.GatewaySpec{GatewayClassName: gwv1.ObjectName(class.Name),
		Listeners: []gwv1.Listener{{Name: "http", Port: 80, Protocol: gwv1.HTTPProtocolType}}}}
	r := &gwv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "classless"}}
	r.Spec.ParentRefs = []gwv1.ParentReference{{Name: "classless"}}
	r.Spec.Hostnames = []gwv1.Hostname{gwv1.Hostname(host)}
	r.Spec.Rules = []gwv1.HTTPRouteRule{{BackendRefs: []gwv1.HTTPBackendRef{{BackendRef: gwv1.BackendRef{BackendObjectReference: gwv1.BackendObjectReference{Name: "web", Port: ptr.To(gwv1.PortNumber(80))}}}}}}
	for _, o := range []client.Object{class, gw, r} {
		p.Create(t, o)
	}
	cft := &tv1alpha1.CloudflareTunnel{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: gw.Name}}
	id := p.RunTunnel(t, cft)
	wait.Eventually(t, 90*time.Second, "the Gateway programmed and the route published", func() error {
		if err := p.Get(gw); err != nil {
			return err
		}
		if c := gatewayCondition(gw.Status.Conditions, string(gwv1.GatewayConditionProgrammed)); c.Status != metav1.ConditionTrue {
			return fmt.Errorf("Programmed=%s %s", c.Status, c.Message)
		}
		if !strings.Contains(p.TunnelConfig(t, id), host) {
			return fmt.Errorf("%s not published yet", host)
		}
		return nil
	})
	p.Sim.SetConnectors(id, 0)
	p.DeleteAndWait(t, class)
	answer := "Programmed no longer True, no address, the route's entry gone, the tunnel deleted"
	wait.Eventually(t, 120*time.Second, "the Gateway and the route let go", func() error {
		if err := p.Get(gw); err != nil {
			return err
		}
		if c := gatewayCondition(gw.Status.Conditions, string(gwv1.GatewayConditionProgrammed)); c.Status == metav1.ConditionTrue || len(gw.Status.Addresses) > 0 || len(gw.Finalizers) > 0 {
			return fmt.Errorf("Programmed=%s, addresses %v, finalizers %v", c.Status, gw.Status.Addresses, gw.Finalizers)
		}
		if err := p.Get(r); err != nil {
			return err
		}
		for _, e := range r.Status.Parents {
			if e.ControllerName == gwtranslate.ControllerName {
				return fmt.Errorf("the route still has this controller's entry %+v", e.Conditions)
			}
		}
		if err := p.Get(cft); err == nil {
			return fmt.Errorf("CloudflareTunnel %s still there", cft.Name)
		}
		return nil
	})
	for _, o := range []client.Object{r, gw} {
		p.DeleteAndWait(t, o)
	}
	c.allowMade(host, ns+"-classless")
	return answer
}

func gatewayCondition(cs []metav1.Condition, t string) metav1.Condition {
	for _, c := range cs {
		if c.Type == t {
			return c
		}
	}
	return metav1.Condition{}
}
