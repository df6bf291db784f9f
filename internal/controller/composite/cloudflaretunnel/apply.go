package cloudflaretunnel

import (
	"context"
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/csaupgrade"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	kerrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
)

// FieldOwner is the field manager of what this controller applies server
// side (the cloudflared Deployment and its PodDisruptionBudget). It owns the
// fields it sets and no others: an annotation a mutating webhook or kubectl
// adds, or a field another controller sets, stays theirs and is not fought
// over.
const FieldOwner = "provider-cloudflare-tunnel"

// applyOwned applies want, a complete desired object controlled by cr,
// server side as FieldOwner, forcing ownership of its fields only, and
// stores the result in out. An object of that name that another controls is
// never taken over. One a previous version wrote by update (client-side)
// is first upgraded: the fields that version owned become FieldOwner's,
// so those this version no longer sets are removed rather than left behind
// under the old manager. op says whether it was created, changed (its
// generation moved) or left as it was.
func (r *Reconciler) applyOwned(ctx context.Context, cr *v1alpha1.CloudflareTunnel, want, out client.Object, kind string) (controllerutil.OperationResult, error) {
	err := r.kube.Get(ctx, client.ObjectKeyFromObject(want), out)
	exists := err == nil
	if err != nil && !kerrors.IsNotFound(err) {
		return controllerutil.OperationResultNone, errors.Wrapf(err, "cannot get %s", kind)
	}
	var generation int64
	if exists {
		if owner := metav1.GetControllerOf(out); owner != nil && owner.UID != cr.UID {
			return controllerutil.OperationResultNone, errors.Errorf("%s %s already exists and is controlled by %s %s", kind, out.GetName(), owner.Kind, owner.Name)
		}
		generation = out.GetGeneration()
		if err := r.upgradeManagedFields(ctx, cr, out); err != nil {
			return controllerutil.OperationResultNone, errors.Wrapf(err, "cannot move the fields of %s %s to server-side apply", kind, out.GetName())
		}
	}
	if err := controllerutil.SetControllerReference(cr, want, r.kube.Scheme()); err != nil {
		return controllerutil.OperationResultNone, errors.Wrapf(err, "cannot own %s", kind)
	}
	u, err := r.applyConfiguration(want)
	if err != nil {
		return controllerutil.OperationResultNone, errors.Wrapf(err, "cannot encode %s", kind)
	}
	if err := r.kube.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
		return controllerutil.OperationResultNone, errors.Wrapf(err, "cannot apply %s", kind)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out); err != nil {
		return controllerutil.OperationResultNone, errors.Wrapf(err, "cannot decode %s", kind)
	}
	switch {
	case !exists:
		return controllerutil.OperationResultCreated, nil
	case out.GetGeneration() != generation:
		return controllerutil.OperationResultUpdated, nil
	}
	return controllerutil.OperationResultNone, nil
}

// applyConfiguration is want as an apply request: with its kind, without
// status, and without the nulls a typed object encodes for what it leaves
// unset (an apply would read them as fields to own).
func (r *Reconciler) applyConfiguration(want client.Object) (*unstructured.Unstructured, error) {
	gvk, err := apiutil.GVKForObject(want, r.kube.Scheme())
	if err != nil {
		return nil, err
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(want)
	if err != nil {
		return nil, err
	}
	delete(obj, "status")
	u := &unstructured.Unstructured{Object: dropNulls(obj).(map[string]any)}
	u.SetGroupVersionKind(gvk)
	return u, nil
}

func dropNulls(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if e == nil {
				delete(t, k)
				continue
			}
			t[k] = dropNulls(e)
		}
	case []any:
		for i, e := range t {
			t[i] = dropNulls(e)
		}
	}
	return v
}

// upgradeManagedFields hands the fields a previous version of this
// controller owned by update to FieldOwner. That version is known by what
// it wrote: the controller reference to cr. Fields other writers own by
// update (kubectl edit, a webhook) stay theirs.
func (r *Reconciler) upgradeManagedFields(ctx context.Context, cr *v1alpha1.CloudflareTunnel, obj client.Object) error {
	managers := LegacyManagers(obj.GetManagedFields(), cr.UID)
	if managers.Len() == 0 {
		return nil
	}
	patch, err := csaupgrade.UpgradeManagedFieldsPatch(obj, managers, FieldOwner)
	if err != nil || patch == nil {
		return err
	}
	return r.kube.Patch(ctx, obj, client.RawPatch(types.JSONPatchType, patch))
}

// LegacyManagers are the managers that wrote, by update, the controller
// reference to the owner of this UID: what a version of this provider that
// wrote its objects with CreateOrUpdate leaves.
func LegacyManagers(entries []metav1.ManagedFieldsEntry, owner types.UID) sets.Set[string] {
	key := `k:{"uid":"` + string(owner) + `"}`
	out := sets.New[string]()
	for _, e := range entries {
		if e.Operation != metav1.ManagedFieldsOperationUpdate || e.Subresource != "" || e.FieldsV1 == nil {
			continue
		}
		var f map[string]map[string]map[string]any
		if err := json.Unmarshal(e.FieldsV1.Raw, &f); err != nil {
			continue
		}
		if _, ok := f["f:metadata"]["f:ownerReferences"][key]; ok {
			out.Insert(e.Manager)
		}
	}
	return out
}
