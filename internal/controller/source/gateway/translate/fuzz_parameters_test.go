package translate

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/annotation"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/gatewayapi"
)

// FuzzParameters: whatever the parameters, the annotations and the
// listeners say, a Gateway that is not accepted publishes nothing new and
// keeps everything; one that is makes a tunnel the CloudflareTunnel CRD
// admits (shared only with ClusterProviderConfig credentials), never
// changes a tunnel it names, and its PublicHostnames make DNSRecords in
// DNSRecord mode only.
func FuzzParameters(f *testing.F) {
	f.Add("tunnels.cloudflare.com", "GatewayParameters", "p", "p", "", "ExternalDNS", "All", "ProviderConfig", int32(3), "")
	f.Add("tunnels.cloudflare.com", "GatewayParameters", "p", "q", "DNSRecord", "", "Same", "", int32(-1), "")
	f.Add("example.com", "Settings", "p", "p", "None", "None", "Selector", "ClusterProviderConfig", int32(1), "mine")
	f.Fuzz(func(t *testing.T, group, kind, refName, paramsName, annotationDNS, paramsDNS, from, pcKind string, replicas int32, named string) {
		gw := gateway(func(gw *gwv1.Gateway) {
			gw.Annotations = map[string]string{}
			if annotationDNS != "" {
				gw.Annotations[v1alpha1.AnnotationDNS] = annotationDNS
			}
			if named != "" {
				gw.Annotations[v1alpha1.AnnotationTunnel] = named
			}
			gw.Spec.Infrastructure = &gwv1.GatewayInfrastructure{ParametersRef: &gwv1.LocalParametersReference{Group: gwv1.Group(group), Kind: gwv1.Kind(kind), Name: refName}}
			gw.Spec.Listeners[0].AllowedRoutes = &gwv1.AllowedRoutes{Namespaces: &gwv1.RouteNamespaces{From: ptr.To(gwv1.FromNamespaces(from)),
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}}}
		})
		spec := v1alpha1.GatewayParametersSpec{}
		if paramsDNS != "" {
			spec.DNS = &v1alpha1.BindingDNS{Mode: paramsDNS}
		}
		if pcKind != "" {
			spec.ProviderConfigRef = &xpv2.ProviderConfigReference{Kind: pcKind, Name: "creds"}
		}
		if replicas >= 0 {
			spec.Replicas = ptr.To(replicas)
		}
		route := httpRoute("edge", "r", 1, []string{"a.example.com"}, pathRule(gwv1.PathMatchPathPrefix, "/", backendRef("web", 8080)))
		res := Translate(Input{Gateway: gw, Services: services(service("edge", "web", 8080)), HTTPRoutes: []gwv1.HTTPRoute{route}, Parameters: params("edge", paramsName, spec)})
		if res.Accepted.Status != metav1.ConditionTrue {
			if !res.KeepAll || len(res.Published) > 0 {
				t.Fatalf("not accepted (%s), yet keepAll %v, published %d", res.Accepted.Message, res.KeepAll, len(res.Published))
			}
			return
		}
		if named != "" && res.MakeTunnel != nil {
			t.Fatalf("named tunnel %q, yet one is made", named)
		}
		if m := res.MakeTunnel; m != nil && m.Spec.AllowedNamespaces != nil && m.Spec.ProviderConfigRef != nil && m.Spec.ProviderConfigRef.Kind != "ClusterProviderConfig" {
			t.Fatalf("shared tunnel with %s credentials", m.Spec.ProviderConfigRef.Kind)
		}
		for _, ph := range res.Published {
			if managed := ph.Spec.DNS == v1alpha1.DNSManaged; managed != (res.DNS.Mode == v1alpha1.DNSModeDNSRecord) {
				t.Fatalf("mode %s, PublicHostname dns %s", res.DNS.Mode, ph.Spec.DNS)
			}
		}
	})
}

// FuzzAccessAnnotation: whatever a route's Access annotations say, and
// whichever namespace the route is of, a hostname is either published with
// the check the annotations parse to (a route of another namespace than
// the Gateway's: its policies qualified with its own namespace), or held
// (never published without it), and a held one is never published. A
// route of another namespace never names a policy of a namespace other
// than its own.
func FuzzAccessAnnotation(f *testing.F) {
	f.Add("admins", "", "", false, false)
	f.Add(" ", "", "false", false, true)
	f.Add("", "team", "aud", true, false)
	f.Add("a,,b", "team", "", false, false)
	f.Add("admins", "", "", true, false)
	f.Add("edge/admins", "", "", false, false)
	f.Add("platform/admins,apps/x", "", "", true, true)
	f.Fuzz(func(t *testing.T, policies, team, aud string, sameNamespace, shared bool) {
		ann := map[string]string{}
		for k, v := range map[string]string{v1alpha1.AnnotationAccessPolicies: policies, v1alpha1.AnnotationAccessTeam: team, v1alpha1.AnnotationAccessAudTags: aud} {
			if v != "" {
				ann[k] = v
			}
		}
		gw := gateway(allRoutes)
		ns := "apps"
		if sameNamespace {
			ns = gw.Namespace
		}
		r := httpRoute(ns, "r", 2, []string{"a.example.com"}, pathRule(gwv1.PathMatchPathPrefix, "/", backendRef("web", 8080)))
		r.Annotations = ann
		hosts := []string{"b.example.com"}
		if shared {
			hosts = append(hosts, "a.example.com")
		}
		open := httpRoute("apps", "open", 1, hosts, pathRule(gwv1.PathMatchPathPrefix, "/x", backendRef("web", 8080)))
		res := Translate(Input{Gateway: gw, Services: services(service("apps", "web", 8080), service(gw.Namespace, "web", 8080)), HTTPRoutes: []gwv1.HTTPRoute{r, open}})
		c := annotation.ChildAccess(nil, "", ann)
		access, problem := c.Access, c.Problem
		if problem == "" && ns != gw.Namespace && access != nil {
			// What the route may name, said again independently of
			// routeAccess: its own namespace's policies only.
			for i := range access.Policies {
				switch p := &access.Policies[i]; p.Namespace {
				case "":
					p.Namespace = ns
				case ns:
				default:
					problem = "names another namespace's AccessPolicy"
				}
			}
		}
		for _, ph := range res.Published {
			if slices.Contains(res.Held, ph.Spec.Hostname) {
				t.Fatalf("%s is held and published", ph.Spec.Hostname)
			}
			if ph.Spec.Hostname == "a.example.com" && (problem != "" || !gatewayapi.SameAccess(ph.Spec.Access, access)) {
				t.Fatalf("a.example.com published with %+v; annotations %v of a route of namespace %s parse to %+v, problem %q", ph.Spec.Access, ann, ns, access, problem)
			}
			if a := ph.Spec.Access; a != nil && ns != gw.Namespace {
				for _, p := range a.Policies {
					if p.Namespace != ns {
						t.Fatalf("%s published with AccessPolicy %s/%s for a route of namespace %s", ph.Spec.Hostname, p.Namespace, p.Name, ns)
					}
				}
			}
		}
		if problem != "" && !slices.Contains(res.Held, "a.example.com") {
			t.Fatalf("annotations %v cannot be used (%s), yet a.example.com is not held: %v", ann, problem, res.Held)
		}
		if !shared && problem == "" && !slices.ContainsFunc(res.Published, func(ph *v1alpha1.PublicHostname) bool { return ph.Spec.Hostname == "a.example.com" }) {
			t.Fatalf("annotations %v can be used, yet a.example.com is not published", ann)
		}
	})
}
