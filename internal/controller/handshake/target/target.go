// Package target resolves the tunnel a source (an Ingress, a Service, a
// GatewayBinding, a PublicHostname) names into what it publishes through,
// or the one reason it may not: the tunnel lookup every source shares, and
// the first step of the hand-shake (package handshake) a PublicHostname
// then has with that tunnel.
package target

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sharing"
)

// Reasons a source is refused its tunnel.
const (
	// ReasonNotFound: no such CloudflareTunnel. A typo: what the source
	// publishes stays as it is.
	ReasonNotFound = sharing.ReasonTunnelNotFound
	// ReasonNotShared: the tunnel does not allow the source's namespace.
	// Policy: what the source published through it goes.
	ReasonNotShared = sharing.ReasonTunnelNotShared
	// ReasonDeleting: the tunnel is being deleted and takes no new work;
	// what the source publishes stays (the tunnel's deletion waits for it).
	ReasonDeleting = "TunnelDeleting"
)

// Refusal is why a source may not publish through the tunnel it names.
type Refusal struct {
	Reason  string
	Message string
}

func (r *Refusal) Error() string { return r.Message }

// Refused is the refusal err carries, if it is one.
func Refused(err error) (*Refusal, bool) {
	r := &Refusal{}
	if errors.As(err, &r) {
		return r, true
	}
	return nil, false
}

// Target is the tunnel a source publishes through.
type Target struct {
	// Ref names the CloudflareTunnel, which is also its Tunnel's name.
	Ref    sharing.Ref
	Tunnel *v1alpha1.CloudflareTunnel
	// Made says whether the CloudflareTunnel says (in its status) which
	// provider config its Tunnel uses: until then ID is "" and
	// ProviderConfig nil, and nothing may be made for the tunnel.
	Made bool
	// ID is the Cloudflare tunnel ID; "" until Cloudflare made it.
	ID string
	// ProviderConfig is the credentials every object made for the tunnel
	// uses; AdoptByName whether they adopt an existing Cloudflare object
	// by name.
	ProviderConfig *xpv2.ProviderConfigReference
	AdoptByName    bool
}

// Resolve is the Target ref names for a source in sourceNamespace, or a
// *Refusal (see Refused): not found, not shared with the namespace, or
// being deleted. Any other error is the API server's. It reads only the
// CloudflareTunnel (its spec and status), never the Tunnel managed
// resource: a source talks to the layer below it.
func Resolve(ctx context.Context, kube client.Reader, sourceNamespace string, ref sharing.Ref) (Target, error) {
	cft, refusal, err := sharing.Lookup(ctx, kube, sourceNamespace, ref)
	if err != nil {
		return Target{}, err
	}
	if refusal.Reason != "" {
		return Target{}, &Refusal{Reason: refusal.Reason, Message: refusal.Message}
	}
	if meta.WasDeleted(cft) {
		return Target{Ref: ref, Tunnel: cft}, &Refusal{Reason: ReasonDeleting, Message: fmt.Sprintf("CloudflareTunnel %s is being deleted: nothing new is published through it", ref)}
	}
	t := Target{Ref: ref, Tunnel: cft, ID: cft.Status.TunnelID, AdoptByName: cft.Spec.AdoptByName}
	if pc := cft.Status.ProviderConfigRef; pc != nil {
		t.Made, t.ProviderConfig = true, pc.DeepCopy()
	}
	return t, nil
}
