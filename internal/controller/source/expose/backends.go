package expose

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	tv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
)

// mainBackend is the source's one backend when it must pick one (the VPC
// service's, the default hostname's): the default backend, else the first
// path's; nil without any backend.
func (t *translator) mainBackend() *Backend {
	if b := t.in.Routing.Default; b != nil {
		return b
	}
	for _, r := range t.in.Routing.Rules {
		if len(r.Paths) > 0 {
			return &r.Paths[0].Backend
		}
	}
	return nil
}

// serviceHost is the cluster DNS name of the main backend's Service, or ""
// when there is no usable one.
func (t *translator) serviceHost() string {
	b := t.mainBackend()
	if b == nil || b.Service == nil || len(validation.IsDNS1123Label(b.Service.Name)) > 0 {
		return ""
	}
	return b.Service.Name + "." + t.in.Namespace + "." + t.serviceDomain()
}

// vpcHost is the host a VPC service reaches, and false when there is none
// (a Problem). A Worker's traffic leaves the tunnel at cloudflared, inside
// the cluster, so the host must be a name cloudflared resolves to the
// backend: the backend Service's cluster DNS name, unless the hostname
// annotation names a private host explicitly. Never a public rule host: a
// public hostname resolves to Cloudflare's edge, not to the backend.
func (t *translator) vpcHost(hosts []host) (string, bool) {
	public := t.namesPublicHost()
	if _, override := t.ann[tv1alpha1.AnnotationHostname]; override && !public {
		return hosts[0].route, true
	}
	if h := t.serviceHost(); h != "" {
		return h, true
	}
	if !public || hosts[0].internal {
		return hosts[0].route, true
	}
	t.problem(tv1alpha1.AnnotationVPCService, "not created: the %[1]s's hostnames are public, and inside the cluster a public hostname resolves to Cloudflare's edge, not to a backend; give the %[1]s a backend Service for the VPC service to reach", t.kind())
	return "", false
}

// namesPublicHost says whether the source's hostnames are public ones: it
// asks to be published (a public annotation that is not "false", even one
// that is not valid: what it published stays), or the caller says so.
func (t *translator) namesPublicHost() bool {
	v, ok := t.ann[tv1alpha1.AnnotationPublic]
	return ok && !strings.EqualFold(strings.TrimSpace(v), "false") || t.in.NamesPublicHost
}

// vpcBackendPort is the port of the main backend.
func (t *translator) vpcBackendPort() (int32, bool) {
	b := t.mainBackend()
	if b == nil {
		t.problem(tv1alpha1.AnnotationVPCPort, "required: the %s has no backend to take the VPC service's port from", t.kind())
		return 0, false
	}
	_, port, ok := t.backend(b)
	if !ok {
		t.problem(tv1alpha1.AnnotationVPCService, "not created: cannot determine its port from %s; set %s", b.Field, tv1alpha1.AnnotationVPCPort)
	}
	return port, ok
}

// checkBackendKinds reports unsupported backends even when no rule needs
// them yet, so the user learns about them before making the source public.
func (t *translator) checkBackendKinds() {
	if b := t.in.Routing.Default; b != nil {
		t.checkBackend(b)
	}
	for _, r := range t.in.Routing.Rules {
		for i := range r.Paths {
			t.checkBackend(&r.Paths[i].Backend)
		}
	}
}

func (t *translator) checkBackend(b *Backend) {
	name, ok := t.serviceName(b)
	if ok && b.Service.Number > 0 && b.Service.Number <= 65535 {
		t.checkNumberedPort(b.Field, name, t.in.Services[name], b.Service.Number)
	}
}

func (t *translator) serviceName(b *Backend) (string, bool) {
	switch {
	case b.Resource != nil:
		t.problem(b.Field, "a resource backend (%s %s) is not supported; use a Service", publish.Clip(b.Resource.Kind), publish.Clip(b.Resource.Name))
	case b.Service == nil:
		t.problem(b.Field, "names no Service")
	case len(validation.IsDNS1123Label(b.Service.Name)) > 0:
		t.problem(b.Field, "%s is not a valid Service name", publish.Clip(b.Service.Name))
	default:
		return b.Service.Name, true
	}
	return "", false
}

// backend resolves a backend to its Service name and port number; a named
// port is the Service port of that name (not the target port), as for any
// Ingress controller.
func (t *translator) backend(b *Backend) (string, int32, bool) {
	name, ok := t.serviceName(b)
	if !ok {
		return "", 0, false
	}
	field, p := b.Field, b.Service
	switch {
	case p.Number > 0 && p.Number <= 65535:
		return name, p.Number, true
	case p.Number != 0:
		t.problem(field, "port %d is not a port number 1-65535", p.Number)
		return "", 0, false
	case p.PortName == "":
		t.problem(field, "Service %s has no port", publish.Clip(name))
		return "", 0, false
	}
	svc := t.in.Services[name]
	if svc == nil {
		t.problem(field, "Service %s not found, so its port %s cannot be resolved", publish.Clip(name), publish.Clip(p.PortName))
		return "", 0, false
	}
	for _, sp := range svc.Spec.Ports {
		if sp.Name == p.PortName && sp.Port > 0 && sp.Port <= 65535 {
			return name, sp.Port, true
		}
	}
	t.problem(field, "Service %s has no port named %s", publish.Clip(name), publish.Clip(p.PortName))
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
		t.note(NoteBackendServiceNotFound, field, "Service %s not found in namespace %s: traffic for it fails until it exists", publish.Clip(name), t.in.Namespace)
		return
	}
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return // no ports to check
	}
	for _, sp := range svc.Spec.Ports {
		if sp.Port == port {
			if port == 443 && t.ann[tv1alpha1.AnnotationOriginProtocol] == "" {
				t.note(NotePlainHTTPToTLSPort, field, "Service %s port 443 is reached as http://; if it serves TLS, requests fail: set %s: https", publish.Clip(name), tv1alpha1.AnnotationOriginProtocol)
			}
			return
		}
	}
	t.note(NoteBackendPortNotFound, field, "Service %s has no port %d: traffic for it fails until it does", publish.Clip(name), port)
}
