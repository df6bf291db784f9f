// Package resourcerefs keeps a composite's spec.crossplane.resourceRefs: the
// objects it made that exist now. `crossplane resource trace` finds a
// composite's children there (and only there: it reads no owner
// references), so the CloudflareTunnel and the PublicHostname write them
// as Crossplane's own composite resources do.
package resourcerefs

import (
	"context"
	"slices"
	"strings"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
)

// Ref is the reference to obj, whose kind scheme knows.
func Ref(scheme *runtime.Scheme, obj client.Object) (v1alpha1.CompositeResourceRef, error) {
	gvk, err := apiutil.GVKForObject(obj, scheme)
	if err != nil {
		return v1alpha1.CompositeResourceRef{}, errors.Wrap(err, "cannot tell the kind of a child")
	}
	return v1alpha1.CompositeResourceRef{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: obj.GetName()}, nil
}

// Controlled are the references to the candidates (each naming an object by
// namespace and name) that exist and that owner controls. A candidate whose
// kind is not installed (a managed resource not activated) does not exist.
func Controlled(ctx context.Context, kube client.Client, owner metav1.Object, candidates ...client.Object) ([]v1alpha1.CompositeResourceRef, error) {
	var refs []v1alpha1.CompositeResourceRef
	for _, c := range candidates {
		err := kube.Get(ctx, client.ObjectKeyFromObject(c), c)
		if kerrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			continue
		}
		if err != nil {
			return nil, errors.Wrapf(err, "cannot get child %s", c.GetName())
		}
		if !metav1.IsControlledBy(c, owner) {
			continue
		}
		ref, err := Ref(kube.Scheme(), c)
		if err != nil {
			return nil, err
		}
		refs = append(refs, ref)
	}
	return refs, nil
}

// Sorted sorts refs by apiVersion, kind and name, the order they are kept
// in, so that the same children never read as a change.
func Sorted(refs []v1alpha1.CompositeResourceRef) []v1alpha1.CompositeResourceRef {
	slices.SortFunc(refs, func(a, b v1alpha1.CompositeResourceRef) int {
		return strings.Compare(a.APIVersion+"/"+a.Kind+"/"+a.Name, b.APIVersion+"/"+b.Kind+"/"+b.Name)
	})
	return refs
}

// Write sets obj's spec.crossplane (the field function returns it) to refs,
// sorted, by a patch of that field alone when they differ. obj takes the
// new resource version and generation, and nothing else from the answer:
// the status the caller is computing stays as it is, to be written next.
func Write[T client.Object](ctx context.Context, kube client.Client, obj T, field func(T) **v1alpha1.CompositeCrossplane, refs []v1alpha1.CompositeResourceRef) error {
	refs = Sorted(refs)
	var want *v1alpha1.CompositeCrossplane
	if len(refs) > 0 {
		want = &v1alpha1.CompositeCrossplane{ResourceRefs: refs}
	}
	if cur := *field(obj); slices.Equal(resourceRefs(cur), refs) {
		return nil
	}
	before, ok := obj.DeepCopyObject().(T)
	after, ok2 := obj.DeepCopyObject().(T)
	if !ok || !ok2 {
		return errors.New("cannot copy the composite")
	}
	*field(after) = want
	if err := kube.Patch(ctx, after, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return errors.Wrap(err, "cannot write spec.crossplane.resourceRefs")
	}
	*field(obj) = want
	obj.SetResourceVersion(after.GetResourceVersion())
	obj.SetGeneration(after.GetGeneration())
	return nil
}

func resourceRefs(c *v1alpha1.CompositeCrossplane) []v1alpha1.CompositeResourceRef {
	if c == nil {
		return nil
	}
	return c.ResourceRefs
}
