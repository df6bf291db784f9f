package mr

// Reading a Tunnel managed resource for the kinds that only need to know of
// it: its ID, its credentials, its labels.
//
// A Tunnel holds its tunnel's whole configuration document, a rule per
// published hostname: at a thousand hostnames a deep copy of it is hundreds
// of kilobytes, and every managed resource that references a Tunnel used to
// make one per reconcile. getTunnel copies everything but that document.
// (Sources and composites read a tunnel through the CloudflareTunnel's
// status: internal/controller/handshake/target.)

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
)

// getTunnel reads the Tunnel called key from kube without its configuration
// document (spec.forProvider.config is nil in what it returns); everything
// else is a copy the caller may change. Errors are kube's, unwrapped, so
// callers can test for NotFound.
func getTunnel(ctx context.Context, kube client.Reader, key client.ObjectKey) (*ztv1alpha1.Tunnel, error) {
	// The cache's own object, shared: read here, never handed out.
	shared := &ztv1alpha1.Tunnel{}
	if err := kube.Get(ctx, key, shared, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	return withoutConfig(shared), nil
}

// withoutConfig is a deep copy of t but for its configuration document.
func withoutConfig(t *ztv1alpha1.Tunnel) *ztv1alpha1.Tunnel {
	skeleton := *t
	skeleton.Spec.ForProvider.Config = nil
	out := skeleton.DeepCopy()
	if out.GetObjectKind().GroupVersionKind().Empty() {
		out.SetGroupVersionKind(ztv1alpha1.TunnelGroupVersionKind)
	}
	return out
}
