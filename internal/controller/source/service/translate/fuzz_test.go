package translate

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/expose"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
)

// FuzzExpose holds what any Service's exposure promises: objects owned by
// and labelled for the Service, valid names, a public hostname only for a
// hostname that is routed too and only on the port and protocol asked for,
// never a VPC service or public hostname guessed from an ambiguous port, and
// never a public Service's VPC service reaching its public name.
func FuzzExpose(f *testing.F) {
	f.Add("edge", "db.example.com", "true", "cache", "", "tcp", "", "postgres", int32(5432), "", int32(0), "")
	f.Add("edge", "", "", "cache", "", "", "", "redis", int32(6379), "metrics", int32(9121), "")
	f.Add("edge", "www.example.com", "true", "", "", "", "https", "web", int32(8443), "", int32(0), "None")
	f.Add("edge", "a,b", "maybe", "true", "0", "ftp", "weird", "", int32(70000), "x", int32(-1), "ExternalDNS")
	f.Fuzz(func(t *testing.T, tunnel, hostname, public, vpc, portAnn, protocol, appProtocol, name1 string, port1 int32, name2 string, port2 int32, dns string) {
		ann := map[string]string{v1alpha1.AnnotationTunnel: tunnel}
		for k, v := range map[string]string{
			v1alpha1.AnnotationHostname: hostname, v1alpha1.AnnotationPublic: public, v1alpha1.AnnotationVPCService: vpc,
			v1alpha1.AnnotationPort: portAnn, v1alpha1.AnnotationProtocol: protocol, v1alpha1.AnnotationDNS: dns,
		} {
			if v != "" {
				ann[k] = v
			}
		}
		svc := service(ann, nil)
		svc.Spec.Ports = []corev1.ServicePort{{Name: name1, Port: port1}}
		if appProtocol != "" {
			svc.Spec.Ports[0].AppProtocol = ptr.To(appProtocol)
		}
		if name2 != "" || port2 != 0 {
			svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Name: name2, Port: port2})
		}
		res := Expose(ExposeInput{Service: svc, Tunnel: expose.Tunnel{Name: strings.TrimSpace(tunnel)}})
		if !res.Wanted && len(objects(res.Result)) > 0 {
			t.Fatalf("objects made for a Service that asks for none")
		}
		routed := map[string]bool{}
		for _, r := range res.Routes {
			routed[r.Spec.ForProvider.Hostname] = true
		}
		for _, o := range objects(res.Result) {
			if errs := validation.IsDNS1123Label(o.GetName()); len(errs) > 0 {
				t.Fatalf("object name %q: %v", o.GetName(), errs)
			}
			if c := o.GetOwnerReferences(); len(c) != 1 || c[0].Kind != "Service" || c[0].Name != svc.Name || c[0].UID != svc.UID {
				t.Fatalf("%s is not controlled by the Service: %+v", o.GetName(), c)
			}
			if o.GetLabels()[publish.LabelService] != svc.Name || o.GetLabels()[publish.LabelIngress] != "" {
				t.Fatalf("%s labels %v", o.GetName(), o.GetLabels())
			}
		}
		ambiguous := len(svc.Spec.Ports) > 1 && portAnn == ""
		if ambiguous && len(res.Published) > 0 {
			t.Fatalf("published a Service of %d ports with no port annotation", len(svc.Spec.Ports))
		}
		if ambiguous && len(res.Services) > 0 {
			t.Fatalf("made a VPC service for a Service of %d ports with no port annotation", len(svc.Spec.Ports))
		}
		for _, ph := range res.Published {
			if !routed[ph.Spec.Hostname] && !routed[strings.TrimPrefix(ph.Spec.Hostname, "*.")] {
				t.Fatalf("public hostname %s is not among the routed %v", ph.Spec.Hostname, res.Routes)
			}
			if o := ph.Spec.Origin; o == nil || o.Service == nil || o.Service.Name != svc.Name {
				t.Fatalf("public hostname %s does not reach the Service: %+v", ph.Spec.Hostname, ph.Spec.Origin)
			}
		}
		if strings.EqualFold(strings.TrimSpace(public), "true") {
			// A Worker's traffic leaves at cloudflared, in the cluster,
			// where a public name resolves to Cloudflare's edge.
			for _, s := range res.Services {
				if h := ptr.Deref(s.Spec.ForProvider.Host.Hostname, ""); h != svc.Name+"."+svc.Namespace+".svc.cluster.local" {
					t.Fatalf("the VPC service of a public Service reaches %s, not the Service's cluster name", h)
				}
			}
		}
		if protocol != "" && !known(strings.ToLower(strings.TrimSpace(protocol))) && len(res.Published) > 0 {
			t.Fatalf("published with the protocol annotation %q, which names no protocol", protocol)
		}
	})
}
