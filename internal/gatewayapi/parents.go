package gatewayapi

import (
	"strconv"
	"strings"

	"k8s.io/utils/ptr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Group of the Gateway API kinds.
const Group = gwv1.GroupName

// RefersTo says whether ref, a parent reference of a route of namespace
// ns, names the Gateway gw.
func RefersTo(ref gwv1.ParentReference, ns string, gw *gwv1.Gateway) bool {
	group := string(ptr.Deref(ref.Group, Group))
	kind := string(ptr.Deref(ref.Kind, "Gateway"))
	refNS := string(ptr.Deref(ref.Namespace, gwv1.Namespace(ns)))
	return group == Group && kind == "Gateway" && refNS == gw.Namespace && string(ref.Name) == gw.Name
}

// Selects says whether ref, naming the listener's Gateway, selects the
// listener: no section or the listener's, and no port or the listener's.
func Selects(ref gwv1.ParentReference, l *gwv1.Listener) bool {
	return (ref.SectionName == nil || *ref.SectionName == l.Name) && (ref.Port == nil || *ref.Port == l.Port)
}

// Attachment finds the parent reference by which a route of namespace ns
// attaches to the listener l of gw.
func Attachment(refs []gwv1.ParentReference, ns string, gw *gwv1.Gateway, l *gwv1.Listener) (gwv1.ParentReference, bool) {
	for _, ref := range refs {
		if RefersTo(ref, ns, gw) && Selects(ref, l) {
			return ref, true
		}
	}
	return gwv1.ParentReference{}, false
}

// SameParent says whether two parent references of a route of namespace
// ns are the same, with defaults applied: a Gateway's controller copies
// the reference it answers about.
func SameParent(a, b gwv1.ParentReference, ns string) bool {
	norm := func(r gwv1.ParentReference) string {
		return strings.Join([]string{
			string(ptr.Deref(r.Group, Group)), string(ptr.Deref(r.Kind, "Gateway")),
			string(ptr.Deref(r.Namespace, gwv1.Namespace(ns))), string(r.Name),
			string(ptr.Deref(r.SectionName, "")), strconv.Itoa(int(ptr.Deref(r.Port, 0))),
		}, "/")
	}
	return norm(a) == norm(b)
}

// ServiceBackend is a Service a route's backendRef names.
type ServiceBackend struct {
	Namespace, Name string
}

// ServiceBackends are the Services a route's rules name (backendRefs of
// group "" and kind Service), their namespace defaulted to the route's.
func ServiceBackends(r *gwv1.HTTPRoute) []ServiceBackend {
	var out []ServiceBackend
	for _, rule := range r.Spec.Rules {
		for _, b := range rule.BackendRefs {
			if ptr.Deref(b.Group, "") != "" || ptr.Deref(b.Kind, "Service") != "Service" {
				continue
			}
			out = append(out, ServiceBackend{Namespace: string(ptr.Deref(b.Namespace, gwv1.Namespace(r.Namespace))), Name: string(b.Name)})
		}
	}
	return out
}
