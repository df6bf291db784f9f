package accesspolicy

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/common"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
)

// InUseError says a policy's deletion waits for the applications that use
// it.
type InUseError struct {
	ID    string
	Users []string
}

func (e *InUseError) Error() string {
	return fmt.Sprintf("deletion waits: Access policy %s is used by %s; remove it from their policies (or delete them) first", e.ID, strings.Join(e.Users, ", "))
}

// ConditionReason of a policy in use: PolicyInUse.
func (e *InUseError) ConditionReason() xpv2.ConditionReason { return common.ReasonPolicyInUse }

// Users are the AccessApplications, in any namespace (a policy may be
// shared), that use the policy ns/name of ID id: by reference, or by its ID
// (which a reference resolves to). One being deleted still uses it until
// it is gone from Cloudflare.
func Users(ctx context.Context, kube client.Reader, ns, name, id string) ([]string, error) {
	apps := &v1alpha1.AccessApplicationList{}
	if err := kube.List(ctx, apps); err != nil {
		return nil, errors.Wrap(err, "cannot list AccessApplications")
	}
	var users []string
	for i := range apps.Items {
		if uses(&apps.Items[i], ns, name, id) {
			users = append(users, "AccessApplication "+apps.Items[i].Namespace+"/"+apps.Items[i].Name)
		}
	}
	sort.Strings(users)
	return users, nil
}

// uses says whether app names the policy ns/name of ID id.
func uses(app *v1alpha1.AccessApplication, ns, name, id string) bool {
	for _, p := range app.Spec.ForProvider.Policies {
		if id != "" && p.PolicyID != nil && *p.PolicyID == id {
			return true
		}
		if r := p.PolicyIDRef; r != nil && r.Name == name && (r.Namespace == ns || (r.Namespace == "" && app.Namespace == ns)) {
			return true
		}
	}
	return false
}
