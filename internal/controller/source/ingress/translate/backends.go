package translate

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	tv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
)

// mainBackend is the Ingress's one backend when it must pick one (the VPC
// service's, the default hostname's): the default backend, else the first
// path's. field is its path for messages; b is nil without any backend.
func (t *translator) mainBackend() (field string, b *networkingv1.IngressBackend) {
	field, b = "spec.defaultBackend", t.ing.Spec.DefaultBackend
	for i := 0; b == nil && i < len(t.ing.Spec.Rules); i++ {
		if h := t.ing.Spec.Rules[i].HTTP; h != nil && len(h.Paths) > 0 {
			field, b = fmt.Sprintf("spec.rules[%d].http.paths[0].backend", i), &h.Paths[0].Backend
		}
	}
	return field, b
}

// serviceHost is the cluster DNS name of the main backend's Service, or ""
// when there is no usable one.
func (t *translator) serviceHost() string {
	_, b := t.mainBackend()
	if b == nil || b.Service == nil || len(validation.IsDNS1123Label(b.Service.Name)) > 0 {
		return ""
	}
	return b.Service.Name + "." + t.ing.Namespace + "." + t.serviceDomain()
}

// vpcHost is the host a VPC service reaches, and false when there is none
// (a Problem). A Worker's traffic leaves the tunnel at cloudflared, inside
// the cluster, so the host must be a name cloudflared resolves to the
// backend: the backend Service's cluster DNS name, unless the hostname
// annotation names a private host explicitly. Never a public rule host: a
// public hostname resolves to Cloudflare's edge, not to the backend.
func (t *translator) vpcHost(hosts []host) (string, bool) {
	public := t.namesPublicHost()
	if _, override := t.ing.Annotations[tv1alpha1.AnnotationHostname]; override && !public {
		return hosts[0].route, true
	}
	if h := t.serviceHost(); h != "" {
		return h, true
	}
	if !public || hosts[0].internal {
		return hosts[0].route, true
	}
	t.problem(tv1alpha1.AnnotationVPCService, "not created: the Ingress's hostnames are public, and inside the cluster a public hostname resolves to Cloudflare's edge, not to a backend; give the Ingress a backend Service for the VPC service to reach")
	return "", false
}

// namesPublicHost says whether the Ingress's hostnames are public ones: it
// asks to be published (a public annotation that is not "false", even one
// that is not valid: what it published stays), or the caller says so.
func (t *translator) namesPublicHost() bool {
	v, ok := t.ing.Annotations[tv1alpha1.AnnotationPublic]
	return ok && !strings.EqualFold(strings.TrimSpace(v), "false") || t.in.NamesPublicHost
}

// vpcBackendPort is the port of the main backend.
func (t *translator) vpcBackendPort() (int32, bool) {
	field, b := t.mainBackend()
	if b == nil {
		t.problem(tv1alpha1.AnnotationVPCPort, "required: the Ingress has no backend to take the VPC service's port from")
		return 0, false
	}
	_, port, ok := t.backend(field, b)
	if !ok {
		t.problem(tv1alpha1.AnnotationVPCService, "not created: cannot determine its port from %s; set %s", field, tv1alpha1.AnnotationVPCPort)
	}
	return port, ok
}

// checkBackendKinds reports unsupported backends even when no rule needs
// them yet, so the user learns about them before making the Ingress public.
func (t *translator) checkBackendKinds() {
	if b := t.ing.Spec.DefaultBackend; b != nil {
		t.checkBackend("spec.defaultBackend", b)
	}
	for i, r := range t.ing.Spec.Rules {
		if r.HTTP == nil {
			continue
		}
		for j := range r.HTTP.Paths {
			t.checkBackend(fmt.Sprintf("spec.rules[%d].http.paths[%d].backend", i, j), &r.HTTP.Paths[j].Backend)
		}
	}
}

func (t *translator) checkBackend(field string, b *networkingv1.IngressBackend) {
	name, ok := t.serviceName(field, b)
	if ok && b.Service.Port.Number > 0 && b.Service.Port.Number <= 65535 {
		t.checkNumberedPort(field, name, t.in.Services[name], b.Service.Port.Number)
	}
}

func (t *translator) serviceName(field string, b *networkingv1.IngressBackend) (string, bool) {
	switch {
	case b.Resource != nil:
		t.problem(field, "a resource backend (%s %s) is not supported; use a Service", clip(b.Resource.Kind), clip(b.Resource.Name))
	case b.Service == nil:
		t.problem(field, "names no Service")
	case len(validation.IsDNS1123Label(b.Service.Name)) > 0:
		t.problem(field, "%s is not a valid Service name", clip(b.Service.Name))
	default:
		return b.Service.Name, true
	}
	return "", false
}

// backend resolves a backend to its Service name and port number; a named
// port is the Service port of that name (not the target port), as for any
// Ingress controller.
func (t *translator) backend(field string, b *networkingv1.IngressBackend) (string, int32, bool) {
	name, ok := t.serviceName(field, b)
	if !ok {
		return "", 0, false
	}
	p := b.Service.Port
	switch {
	case p.Number > 0 && p.Number <= 65535:
		return name, p.Number, true
	case p.Number != 0:
		t.problem(field, "port %d is not a port number 1-65535", p.Number)
		return "", 0, false
	case p.Name == "":
		t.problem(field, "Service %s has no port", clip(name))
		return "", 0, false
	}
	svc := t.in.Services[name]
	if svc == nil {
		t.problem(field, "Service %s not found, so its port %s cannot be resolved", clip(name), clip(p.Name))
		return "", 0, false
	}
	for _, sp := range svc.Spec.Ports {
		if sp.Name == p.Name && sp.Port > 0 && sp.Port <= 65535 {
			return name, sp.Port, true
		}
	}
	t.problem(field, "Service %s has no port named %s", clip(name), clip(p.Name))
	return "", 0, false
}

// checkNumberedPort notes a numbered backend port that cannot work yet: its
// Service is missing, or has no such port. The rule is made all the same —
// it needs nothing from the Service, and starts working when the Service
// does. Without Services to look at (the caller passed none) nothing is said.
func (t *translator) checkNumberedPort(field, name string, svc *corev1.Service, port int32) {
	if t.in.Services == nil {
		return
	}
	if svc == nil {
		t.note(NoteBackendServiceNotFound, field, "Service %s not found in namespace %s: traffic for it fails until it exists", clip(name), t.ing.Namespace)
		return
	}
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return // no ports to check
	}
	for _, sp := range svc.Spec.Ports {
		if sp.Port == port {
			if port == 443 && t.ing.Annotations[tv1alpha1.AnnotationOriginProtocol] == "" {
				t.note(NotePlainHTTPToTLSPort, field, "Service %s port 443 is reached as http://; if it serves TLS, requests fail: set %s: https", clip(name), tv1alpha1.AnnotationOriginProtocol)
			}
			return
		}
	}
	t.note(NoteBackendPortNotFound, field, "Service %s has no port %d: traffic for it fails until it does", clip(name), port)
}
