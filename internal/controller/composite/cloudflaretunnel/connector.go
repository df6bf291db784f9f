package cloudflaretunnel

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/csaupgrade"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/connector"
)

// ReasonConnectorTampered: another writer's fields on the cloudflared
// Deployment broke its hardening, and were taken back.
const ReasonConnectorTampered = "ConnectorTampered"

// refuseConnector answers a spec.connector (or spec.image) the provider
// refuses: a Warning event when the answer is new, and DeploymentReady and
// Ready False with its reason. Nothing is applied: the running Deployment,
// if any, keeps serving as it was.
func (r *Reconciler) refuseConnector(cr *v1alpha1.CloudflareTunnel, running *appsv1.Deployment, reason xpv2.ConditionReason, err error) {
	msg := err.Error() + "; the cloudflared Deployment is left as it was"
	if running == nil || running.CreationTimestamp.IsZero() {
		msg = err.Error() + "; no cloudflared Deployment is created until it is fixed"
	} else {
		msg += fmt.Sprintf(" (%d/%d replicas ready)", running.Status.ReadyReplicas, running.Status.Replicas)
	}
	if c := cr.GetCondition(TypeDeploymentReady); c.Reason != reason || !strings.HasPrefix(c.Message, err.Error()+";") {
		r.record.Event(cr, event.Warning(event.Reason(reason), err))
	}
	cr.SetConditions(
		cond(TypeDeploymentReady, false, reason, msg),
		cond(xpv2.TypeReady, false, reason, msg),
	)
}

// restoreHardening answers a live pod template that other writers' fields
// (a hand edit, a webhook) made weaker than the hardening: the pod template
// fields that writers own by update become this controller's, and the
// Deployment is applied again, which removes those it does not set. What a
// writer owns by its own server-side apply cannot be taken back that way: it
// is an error, reported until that writer gives it up.
func (r *Reconciler) restoreHardening(ctx context.Context, cr *v1alpha1.CloudflareTunnel, want, dep *appsv1.Deployment, token []byte, weakened []string) (controllerutil.OperationResult, error) {
	r.record.Event(cr, event.Warning(ReasonConnectorTampered, errors.Errorf(
		"the cloudflared Deployment %s was changed by another writer so that the pod would %s; the provider takes its pod template back", dep.Name, strings.Join(weakened, "; "))))
	writers := TemplateWriters(dep.ManagedFields)
	if writers.Len() > 0 {
		patch, err := csaupgrade.UpgradeManagedFieldsPatch(dep, writers, FieldOwner)
		if err != nil {
			return controllerutil.OperationResultNone, errors.Wrap(err, "cannot take back the cloudflared pod template")
		}
		if patch != nil {
			if err := r.kube.Patch(ctx, dep, client.RawPatch(types.JSONPatchType, patch)); err != nil {
				return controllerutil.OperationResultNone, errors.Wrap(err, "cannot take back the cloudflared pod template")
			}
		}
	}
	if _, err := r.applyOwned(ctx, cr, want.DeepCopy(), dep, "Deployment"); err != nil {
		return controllerutil.OperationResultNone, errors.Wrap(err, "cannot apply cloudflared Deployment")
	}
	if still := connector.Weakened(&want.Spec.Template, &dep.Spec.Template, token); len(still) > 0 {
		return controllerutil.OperationResultNone, errors.Errorf("the cloudflared Deployment %s stays weaker than its hardening, by fields another writer applies server side: the pod would %s", dep.Name, strings.Join(still, "; "))
	}
	return controllerutil.OperationResultUpdated, nil
}

// TemplateWriters are the managers other than FieldOwner that own pod
// template fields by update.
func TemplateWriters(entries []metav1.ManagedFieldsEntry) sets.Set[string] {
	out := sets.New[string]()
	for _, e := range entries {
		if e.Operation != metav1.ManagedFieldsOperationUpdate || e.Subresource != "" || e.Manager == FieldOwner || e.FieldsV1 == nil {
			continue
		}
		var f map[string]map[string]any
		if err := json.Unmarshal(e.FieldsV1.Raw, &f); err != nil {
			continue
		}
		if _, ok := f["f:spec"]["f:template"]; ok {
			out.Insert(e.Manager)
		}
	}
	return out
}
