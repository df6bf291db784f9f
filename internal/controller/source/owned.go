package source

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
)

// YieldedBy are the hostnames whose private route o yields to the holder of
// their public claim (Yielded), read from the PublicHostnames o controls,
// by UID.
func YieldedBy(ctx context.Context, kube client.Reader, o Owner) (map[string]string, error) {
	own, err := claimsOf(ctx, kube, o)
	if err != nil {
		return nil, err
	}
	return Yielded(own), nil
}

// UndecidedBy are the hostnames of public (o's public claims) whose claim
// is not answered yet (Undecided), read as YieldedBy.
func UndecidedBy(ctx context.Context, kube client.Reader, o Owner, public []string) (map[string]bool, error) {
	own, err := claimsOf(ctx, kube, o)
	if err != nil {
		return nil, err
	}
	return Undecided(own, public), nil
}

// claimsOf are the PublicHostnames o controls, by UID.
func claimsOf(ctx context.Context, kube client.Reader, o Owner) ([]*v1alpha1.PublicHostname, error) {
	l := &v1alpha1.PublicHostnameList{}
	opts := []client.ListOption{client.InNamespace(o.Namespace)}
	if o.Select != nil {
		opts = append(opts, o.Select)
	}
	if err := kube.List(ctx, l, opts...); err != nil {
		return nil, errors.Wrap(err, "cannot list PublicHostnames")
	}
	var own []*v1alpha1.PublicHostname
	for i := range l.Items {
		if c := metav1.GetControllerOf(&l.Items[i]); c != nil && o.UID != "" && c.UID == o.UID {
			own = append(own, &l.Items[i])
		}
	}
	return own, nil
}
