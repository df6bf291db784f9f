package gatewayapi

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/ptr"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/source/annotation"
)

// RouteAccess is the Access check of a route's hostnames: the route's own
// access annotations (those an Ingress takes) when it has any, else def.
// It fails closed: an annotation that cannot be used is a problem (the
// route publishes nothing new), and no annotation value means "no check",
// so a route cannot drop def by mistake or on purpose.
func RouteAccess(def *v1alpha1.Access, annotations map[string]string) (*v1alpha1.Access, string) {
	if !annotation.HasAccess(annotations) {
		return def.DeepCopy(), ""
	}
	r := annotation.Read(annotations)
	a := r.Access()
	if len(r.Problems) == 0 {
		return a, ""
	}
	msgs := make([]string, 0, len(r.Problems))
	for _, p := range r.Problems {
		msgs = append(msgs, fmt.Sprintf("annotation %s: %s", p.Annotation, p.Message))
	}
	return nil, strings.Join(msgs, "; ")
}

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
