package publichostname

// Origins: the guardrails an origin passes before anything is published.

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	kmeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/origin"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/gatewayapi"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sharing"
)

// refuseOrigin reports an origin the provider config does not allow: the
// condition's reason names the rule.
func (r *Reconciler) refuseOrigin(ph *v1alpha1.PublicHostname, refused error) {
	rule, _ := clients.OriginRule(refused)
	reason := xpv2.ConditionReason(rule)
	msg := refused.Error()
	if len(ph.Status.Rules) > 0 {
		msg += "; the rules of the last allowed spec stay published"
	} else {
		msg += "; nothing is published until this is fixed"
	}
	r.warnOnce(ph, v1alpha1.TypeValid, reason, msg)
	ph.SetConditions(cond(v1alpha1.TypeValid, false, reason, msg))
}

// originGuard is the check of rules' origins against the allowed origins of
// the provider config the tunnel's resources use, for this hostname's
// namespace, following the Services they name to where they lead. It
// returns the refusal, or the error that kept it from judging.
func (r *Reconciler) originGuard(ctx context.Context, ph *v1alpha1.PublicHostname, cft *v1alpha1.CloudflareTunnel) (func([]ztv1alpha1.IngressRule) (refused, err error), error) {
	cfg, err := r.guardrails(ctx, cft)
	if err != nil {
		return nil, err
	}
	from, err := r.originSource(ctx, ph)
	if err != nil {
		return nil, err
	}
	look := clients.ServiceLeads(ctx, r.kube)
	return func(rules []ztv1alpha1.IngressRule) (error, error) {
		for _, rule := range rules {
			err := cfg.FollowOrigin(rule.Service, from, look)
			if _, refused := clients.OriginRule(err); refused {
				return err, nil
			}
			if err != nil {
				return nil, err
			}
		}
		return nil, nil
	}, nil
}

// guardrails are those of the provider config the tunnel's resources use
// (as the CloudflareTunnel chooses it).
func (r *Reconciler) guardrails(ctx context.Context, cft *v1alpha1.CloudflareTunnel) (clients.Config, error) {
	if cft.Spec.CredentialsSecretRef != nil {
		// The ProviderConfig made for it has no allowances.
		return clients.Config{Source: fmt.Sprintf("the ProviderConfig of CloudflareTunnel %s/%s's credentialsSecretRef", cft.Namespace, cft.Name), Namespaced: true}, nil
	}
	ref := xpv2.ProviderConfigReference{Kind: v1alpha1.ClusterProviderConfigKind, Name: "default"}
	if cft.Spec.ProviderConfigRef != nil {
		ref = *cft.Spec.ProviderConfigRef
	}
	return clients.GuardrailsOf(ctx, r.kube, ref, cft.Namespace)
}

// originSource is who publishes the hostname's origins: its namespace, and
// the Service of another namespace that the GatewayBinding controlling it
// was granted there (a ReferenceGrant of that namespace allows the
// GatewayBindings of this one to use it). The grant is read here, not taken
// from the binding: anyone who may write this namespace's PublicHostnames
// may also make one that names a binding as its controller.
func (r *Reconciler) originSource(ctx context.Context, ph *v1alpha1.PublicHostname) (origin.Source, error) {
	from := origin.Source{Namespace: ph.Namespace, ClusterDomain: r.clusterDomain}
	c := metav1.GetControllerOf(ph)
	if c != nil && c.Kind == "Gateway" && c.APIVersion == gwv1.SchemeGroupVersion.String() {
		return r.gatewayOrigins(ctx, ph, c, from)
	}
	if c == nil || c.Kind != v1alpha1.GatewayBindingKind || c.APIVersion != v1alpha1.SchemeGroupVersion.String() {
		return from, nil
	}
	b := &v1alpha1.GatewayBinding{}
	if err := r.kube.Get(ctx, types.NamespacedName{Namespace: ph.Namespace, Name: c.Name}, b); err != nil || b.UID != c.UID {
		return from, errors.Wrap(client.IgnoreNotFound(err), "cannot get the GatewayBinding controlling the hostname")
	}
	svc := b.Spec.Origin.Service
	if svc.Namespace == "" || svc.Namespace == ph.Namespace {
		return from, nil
	}
	grants := &gwv1beta1.ReferenceGrantList{}
	if err := r.kube.List(ctx, grants, client.InNamespace(svc.Namespace)); err != nil {
		if kmeta.IsNoMatchError(err) {
			return from, nil
		}
		return from, errors.Wrap(err, "cannot list ReferenceGrants")
	}
	if sharing.ServiceGranted(grants.Items, ph.Namespace, svc.Name) {
		from.Granted = append(from.Granted, svc.Namespace+"/"+svc.Name)
	}
	return from, nil
}

// gatewayOrigins are the backends of the HTTPRoutes and GRPCRoutes
// attached to the Gateway controlling a hostname (this provider's Gateway
// controller makes it): each Service of a route's own namespace, and of
// another where a ReferenceGrant there lets that namespace's routes of that
// kind use it. They are read here, not taken from the Gateway, for the
// reason the GatewayBinding's grant is.
func (r *Reconciler) gatewayOrigins(ctx context.Context, ph *v1alpha1.PublicHostname, c *metav1.OwnerReference, from origin.Source) (origin.Source, error) {
	gw := &gwv1.Gateway{}
	if err := r.kube.Get(ctx, types.NamespacedName{Namespace: ph.Namespace, Name: c.Name}, gw); err != nil || gw.UID != c.UID {
		return from, errors.Wrap(client.IgnoreNotFound(ignoreNoMatch(err)), "cannot get the Gateway controlling the hostname")
	}
	attached, err := r.gatewayRoutes(ctx, gw)
	if err != nil {
		return from, err
	}
	grants := map[string][]gwv1beta1.ReferenceGrant{}
	for _, rt := range attached {
		for _, svc := range rt.backends {
			if svc.Namespace != rt.namespace {
				if _, ok := grants[svc.Namespace]; !ok {
					l := &gwv1beta1.ReferenceGrantList{}
					if err := r.kube.List(ctx, l, client.InNamespace(svc.Namespace)); err != nil {
						return from, errors.Wrap(ignoreNoMatch(err), "cannot list ReferenceGrants")
					}
					grants[svc.Namespace] = l.Items
				}
				if !sharing.ServiceGrantedTo(grants[svc.Namespace], sharing.From{Group: gwv1.GroupName, Kind: rt.kind, Namespace: rt.namespace}, svc.Name) {
					continue
				}
			}
			from.Granted = append(from.Granted, svc.Namespace+"/"+svc.Name)
		}
	}
	return from, nil
}

// routeBackends are one route's kind, namespace and Service backends.
type routeBackends struct {
	kind, namespace string
	backends        []gatewayapi.ServiceBackend
}

// gatewayRoutes are the HTTPRoutes and GRPCRoutes naming gw as a parent.
func (r *Reconciler) gatewayRoutes(ctx context.Context, gw *gwv1.Gateway) ([]routeBackends, error) {
	attached := func(refs []gwv1.ParentReference, ns string) bool {
		return slices.ContainsFunc(refs, func(ref gwv1.ParentReference) bool { return gatewayapi.RefersTo(ref, ns, gw) })
	}
	var out []routeBackends
	https := &gwv1.HTTPRouteList{}
	if err := r.kube.List(ctx, https); err != nil {
		return nil, errors.Wrap(ignoreNoMatch(err), "cannot list HTTPRoutes")
	}
	for i, rt := range https.Items {
		if attached(rt.Spec.ParentRefs, rt.Namespace) {
			out = append(out, routeBackends{kind: "HTTPRoute", namespace: rt.Namespace, backends: gatewayapi.ServiceBackends(&https.Items[i])})
		}
	}
	grpcs := &gwv1.GRPCRouteList{}
	if err := r.kube.List(ctx, grpcs); err != nil {
		return out, errors.Wrap(ignoreNoMatch(err), "cannot list GRPCRoutes")
	}
	for i, rt := range grpcs.Items {
		if attached(rt.Spec.ParentRefs, rt.Namespace) {
			out = append(out, routeBackends{kind: "GRPCRoute", namespace: rt.Namespace, backends: gatewayapi.GRPCServiceBackends(&grpcs.Items[i])})
		}
	}
	return out, nil
}

func ignoreNoMatch(err error) error {
	if kmeta.IsNoMatchError(err) {
		return nil
	}
	return err
}

// checkCAPool says what is wrong with a CA Secret key, if anything.
func (r *Reconciler) checkCAPool(ctx context.Context, ns string, pool v1alpha1.LocalSecretKeySelector) (string, error) {
	s := &corev1.Secret{}
	err := r.kube.Get(ctx, types.NamespacedName{Namespace: ns, Name: pool.Name}, s)
	switch {
	case kerrors.IsNotFound(err):
		return fmt.Sprintf("Secret %s not found in namespace %s", pool.Name, ns), nil
	case err != nil:
		return "", errors.Wrap(err, "cannot get the CA Secret")
	case len(s.Data[pool.Key]) == 0:
		return fmt.Sprintf("Secret %s has no key %s", pool.Name, pool.Key), nil
	}
	return "", nil
}
