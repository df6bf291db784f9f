package accesspolicy

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/common"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sharing"
)

// InUseError says a policy's deletion waits for the applications that use
// it. It names only applications of the policy's own namespace: those of
// namespaces it is shared with are counted, never named (a tenant's object
// names are not the policy owner's to read in a status, nor the reverse).
type InUseError struct {
	ID string
	Use
}

func (e *InUseError) Error() string {
	return fmt.Sprintf("deletion waits: Access policy %s is used by %s; remove it from their policies (or delete them) first", e.ID, e.describe())
}

// ConditionReason of a policy in use: PolicyInUse.
func (e *InUseError) ConditionReason() xpv2.ConditionReason { return common.ReasonPolicyInUse }

// Use is who uses a policy: the applications of its own namespace by name,
// and how many of other namespaces; Elsewhere when Cloudflare itself says
// applications no AccessApplication here accounts for link it.
type Use struct {
	Names     []string
	Others    int
	Elsewhere bool
}

// Empty says whether nothing uses the policy.
func (u Use) Empty() bool { return len(u.Names) == 0 && u.Others == 0 && !u.Elsewhere }

func (u Use) describe() string {
	parts := slices.Clone(u.Names)
	if u.Others > 0 {
		parts = append(parts, fmt.Sprintf("%d AccessApplication(s) of other namespaces it is shared with", u.Others))
	}
	if u.Elsewhere {
		parts = append(parts, "Access applications that still link it at Cloudflare (made outside this cluster, or of a namespace the policy no longer shares with; Cloudflare refused the deletion)")
	}
	return strings.Join(parts, ", ")
}

// Users are the AccessApplications that use the policy p of ID id: those
// that may use it (of its namespace, or of one its spec.allowedNamespaces
// shares it with) and link it at Cloudflare (status.atProvider.policyIds
// holds the ID). An application that names it but was refused, or was
// never made, holds nothing: another tenant cannot wedge the policy's
// deletion by naming it. One being deleted still uses it until it is gone
// from Cloudflare (its status keeps the IDs until then). Cloudflare's own
// refusal to delete a policy still linked stays the last word (Elsewhere).
func Users(ctx context.Context, kube client.Reader, p *v1alpha1.AccessPolicy, id string) (Use, error) {
	if id == "" {
		return Use{}, nil
	}
	apps := &v1alpha1.AccessApplicationList{}
	if err := kube.List(ctx, apps); err != nil {
		return Use{}, errors.Wrap(err, "cannot list AccessApplications")
	}
	allowed := map[string]bool{p.Namespace: true}
	var u Use
	for i := range apps.Items {
		app := &apps.Items[i]
		if !links(app, id) {
			continue
		}
		ok, known := allowed[app.Namespace]
		if !known {
			var err error
			if ok, err = sharedWith(ctx, kube, p, app.Namespace); err != nil {
				return Use{}, err
			}
			allowed[app.Namespace] = ok
		}
		switch {
		case !ok:
		case app.Namespace == p.Namespace:
			u.Names = append(u.Names, "AccessApplication "+app.Namespace+"/"+app.Name)
		default:
			u.Others++
		}
	}
	slices.Sort(u.Names)
	return u, nil
}

// links says whether app links the policy of ID id at Cloudflare, as its
// status last observed.
func links(app *v1alpha1.AccessApplication, id string) bool {
	return slices.Contains(app.Status.AtProvider.PolicyIDs, id)
}

// sharedWith says whether p's spec.allowedNamespaces shares it with ns.
func sharedWith(ctx context.Context, kube client.Reader, p *v1alpha1.AccessPolicy, ns string) (bool, error) {
	if !sharing.SharedBy(p.Spec.AllowedNamespaces) {
		return false, nil
	}
	n := &corev1.Namespace{}
	if err := kube.Get(ctx, types.NamespacedName{Name: ns}, n); err != nil {
		return false, errors.Wrap(client.IgnoreNotFound(err), "cannot get Namespace")
	}
	return sharing.AllowedBy(p.Spec.AllowedNamespaces, p.Namespace, ns, n.Labels), nil
}
