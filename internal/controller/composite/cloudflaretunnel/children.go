package cloudflaretunnel

// The connector's children: the token it runs with, its Deployment and
// its PodDisruptionBudget.

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/connector"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/composite/resourcerefs"
)

func (r *Reconciler) deleteStaleToken(ctx context.Context, cr *v1alpha1.CloudflareTunnel) error {
	s := &corev1.Secret{}
	if err := r.kube.Get(ctx, types.NamespacedName{Namespace: cr.Namespace, Name: TokenSecretName(cr)}, s); err != nil {
		return client.IgnoreNotFound(errors.Wrap(err, "cannot get token Secret"))
	}
	if owner := metav1.GetControllerOf(s); owner == nil || owner.Kind != ztv1alpha1.TunnelKind || owner.Name != cr.Name {
		return nil
	}
	return errors.Wrap(client.IgnoreNotFound(r.kube.Delete(ctx, s, client.Preconditions{UID: &s.UID})), "cannot delete the token Secret of a deleted Tunnel")
}

func (r *Reconciler) token(ctx context.Context, cr *v1alpha1.CloudflareTunnel) ([]byte, error) {
	s := &corev1.Secret{}
	err := r.kube.Get(ctx, types.NamespacedName{Namespace: cr.Namespace, Name: TokenSecretName(cr)}, s)
	if kerrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, errors.Wrap(err, "cannot get token Secret")
	}
	return s.Data[TokenKey], nil
}

// applyDeployment applies the cloudflared Deployment server side. A
// connector the provider refuses (spec.connector, spec.image) changes
// nothing: the running Deployment stays as it was, returned with the
// refusal.
func (r *Reconciler) applyDeployment(ctx context.Context, cr *v1alpha1.CloudflareTunnel, token []byte, pools []v1alpha1.LocalSecretKeySelector) (*appsv1.Deployment, error) {
	want, refused := DesiredDeployment(cr, token, pools...)
	dep := &appsv1.Deployment{}
	if refused != nil {
		err := r.kube.Get(ctx, types.NamespacedName{Namespace: cr.Namespace, Name: DeploymentName(cr)}, dep)
		if client.IgnoreNotFound(err) != nil {
			return nil, errors.Wrap(err, "cannot get cloudflared Deployment")
		}
		return dep, refused
	}
	op, err := r.applyOwned(ctx, cr, want.DeepCopy(), dep, "Deployment")
	if err != nil {
		return nil, errors.Wrap(err, "cannot apply cloudflared Deployment")
	}
	if weakened := connector.Weakened(&want.Spec.Template, &dep.Spec.Template, token); len(weakened) > 0 {
		// Server-side apply leaves other writers' fields alone; when
		// theirs break the hardening, the hardening wins.
		if op, err = r.restoreHardening(ctx, cr, want, dep, token, weakened); err != nil {
			return nil, err
		}
	}
	r.recordOp(cr, op, "Deployment", dep.Name)
	return dep, nil
}

func (r *Reconciler) applyPDB(ctx context.Context, cr *v1alpha1.CloudflareTunnel) error {
	want := DesiredPDB(cr)
	if want == nil {
		pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: cr.Namespace, Name: DeploymentName(cr)}}
		return errors.Wrap(client.IgnoreNotFound(r.kube.Delete(ctx, pdb)), "cannot delete PodDisruptionBudget")
	}
	pdb := &policyv1.PodDisruptionBudget{}
	op, err := r.applyOwned(ctx, cr, want, pdb, "PodDisruptionBudget")
	if err != nil {
		return errors.Wrap(err, "cannot apply PodDisruptionBudget")
	}
	r.recordOp(cr, op, "PodDisruptionBudget", pdb.Name)
	return nil
}

func (r *Reconciler) recordOp(cr *v1alpha1.CloudflareTunnel, op controllerutil.OperationResult, kind, name string) {
	switch op {
	case controllerutil.OperationResultCreated:
		r.record.Event(cr, event.Normal(event.Reason("Created"+kind), fmt.Sprintf("Created %s %s", kind, name)))
	case controllerutil.OperationResultUpdated:
		r.record.Event(cr, event.Normal(event.Reason("Updated"+kind), fmt.Sprintf("Updated %s %s", kind, name)))
	}
}

// writeResourceRefs names in spec.crossplane.resourceRefs the children
// that exist: the Tunnel, the cloudflared Deployment and its
// PodDisruptionBudget, and the ProviderConfig of spec.credentialsSecretRef
// (crossplane resource trace shows them; the token Secret is the Tunnel's
// connection Secret, which trace --show-connection-secrets shows under it).
func (r *Reconciler) writeResourceRefs(ctx context.Context, cr *v1alpha1.CloudflareTunnel) error {
	in := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: cr.Namespace, Name: name} }
	candidates := []client.Object{
		&ztv1alpha1.Tunnel{ObjectMeta: in(cr.Name)},
		&appsv1.Deployment{ObjectMeta: in(DeploymentName(cr))},
		&policyv1.PodDisruptionBudget{ObjectMeta: in(DeploymentName(cr))},
	}
	if cr.Spec.CredentialsSecretRef != nil {
		candidates = append(candidates, &v1alpha1.ProviderConfig{ObjectMeta: in(ProviderConfigName(cr))})
	}
	refs, err := resourcerefs.Controlled(ctx, r.kube, cr, candidates...)
	if err != nil {
		return err
	}
	return resourcerefs.Write(ctx, r.kube, cr, func(c *v1alpha1.CloudflareTunnel) **v1alpha1.CompositeCrossplane { return &c.Spec.Crossplane }, refs)
}
