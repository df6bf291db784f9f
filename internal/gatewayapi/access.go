package gatewayapi

import (
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/ptr"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
)

// SameAccess says whether two routes ask for the same check (required
// defaults to true, as the API defaults it).
func SameAccess(a, b *v1alpha1.Access) bool {
	norm := func(a *v1alpha1.Access) *v1alpha1.Access {
		if a == nil {
			return nil
		}
		a = a.DeepCopy()
		a.Required = ptr.To(ptr.Deref(a.Required, true))
		return a
	}
	return equality.Semantic.DeepEqual(norm(a), norm(b))
}
