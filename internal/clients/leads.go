package clients

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/origin"
)

// ServiceLeads reads where a Service leads, for the origin guardrail
// (origin.Follow): the name an ExternalName Service stands for, or the
// addresses of the endpoints written by hand for it. Every layer that
// publishes rules judges them by it, so allow.origins is the only way
// through at each.
func ServiceLeads(ctx context.Context, kube client.Reader) origin.Lookup {
	return func(ns, name string) (origin.Lead, error) {
		svc := &corev1.Service{}
		if err := kube.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, svc); err != nil {
			return origin.Lead{}, errors.Wrap(client.IgnoreNotFound(err), "cannot get Service")
		}
		if svc.Spec.Type == corev1.ServiceTypeExternalName {
			return origin.Lead{ExternalName: svc.Spec.ExternalName}, nil
		}
		l := &discoveryv1.EndpointSliceList{}
		if err := kube.List(ctx, l, client.InNamespace(ns), client.MatchingLabels{discoveryv1.LabelServiceName: name}); err != nil {
			return origin.Lead{}, errors.Wrap(err, "cannot list EndpointSlices")
		}
		handMade := HandMadeAddresses(svc, l.Items)
		if len(handMade) == 0 {
			return origin.Lead{}, nil
		}
		pods, err := podAddressesIn(ctx, kube, ns)
		if err != nil {
			return origin.Lead{}, err
		}
		return origin.Lead{Addresses: handMade, Pods: pods}, nil
	}
}

// podAddressesIn reads the namespace's Services and EndpointSlices for
// PodAddresses.
func podAddressesIn(ctx context.Context, kube client.Reader, ns string) (map[string]bool, error) {
	svcs := &corev1.ServiceList{}
	if err := kube.List(ctx, svcs, client.InNamespace(ns)); err != nil {
		return nil, errors.Wrap(err, "cannot list Services")
	}
	slices := &discoveryv1.EndpointSliceList{}
	if err := kube.List(ctx, slices, client.InNamespace(ns)); err != nil {
		return nil, errors.Wrap(err, "cannot list EndpointSlices")
	}
	return PodAddresses(svcs.Items, slices.Items), nil
}

// endpointController is the managed-by label of the EndpointSlices that
// Kubernetes makes from a Service's selector.
const endpointController = "endpointslice-controller.k8s.io"

// HandMadeAddresses are the endpoint addresses of a Service that someone
// wrote rather than Kubernetes found from its selector: every slice of a
// Service without a selector (the endpoint controller does not look after
// those, whatever their labels say), and the slices of any Service that
// the endpoint controller did not make (it corrects those it did).
func HandMadeAddresses(svc *corev1.Service, slices []discoveryv1.EndpointSlice) []string {
	var out []string
	for _, s := range slices {
		if len(svc.Spec.Selector) > 0 && s.Labels[discoveryv1.LabelManagedBy] == endpointController {
			continue
		}
		for _, e := range s.Endpoints {
			out = append(out, e.Addresses...)
		}
	}
	return out
}

// PodAddresses are the addresses of the namespace's own Pods, as the
// endpoint controller found them for the namespace's Services with a
// selector (services and slices are one namespace's): origin.Lead's Pods.
func PodAddresses(services []corev1.Service, slices []discoveryv1.EndpointSlice) map[string]bool {
	selects := map[string]bool{}
	for _, s := range services {
		if len(s.Spec.Selector) > 0 {
			selects[s.Name] = true
		}
	}
	out := map[string]bool{}
	for _, s := range slices {
		if s.Labels[discoveryv1.LabelManagedBy] != endpointController || !selects[s.Labels[discoveryv1.LabelServiceName]] {
			continue
		}
		for _, e := range s.Endpoints {
			for _, a := range e.Addresses {
				out[a] = true
			}
		}
	}
	return out
}
