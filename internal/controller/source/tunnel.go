package source

import (
	"fmt"

	"k8s.io/utils/ptr"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	connv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/connectivity/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
)

// Tunnel is what a source's reports need of the CloudflareTunnel it
// publishes through: its Cloudflare tunnel ID, or why it has none yet, as
// the CloudflareTunnel's Ready condition says it.
type Tunnel struct {
	// Name is the CloudflareTunnel, "<namespace>/<name>".
	Name string
	ID   string
	// Reason and Message of the CloudflareTunnel's Ready condition.
	Reason  xpv2.ConditionReason
	Message string
}

// TunnelOf is cft as a source's reports need it.
func TunnelOf(cft *v1alpha1.CloudflareTunnel) Tunnel {
	c := cft.GetCondition(xpv2.TypeReady)
	return Tunnel{Name: cft.Namespace + "/" + cft.Name, ID: cft.Status.TunnelID, Reason: c.Reason, Message: c.Message}
}

// Broken says whether the tunnel will get no ID until someone acts: its
// Cloudflare name is taken by a tunnel this provider did not make, or the
// CloudflareTunnel cannot be reconciled. Waiting for a tunnel being made
// is not broken.
func (t Tunnel) Broken() bool {
	return t.ID == "" && (t.Reason == v1alpha1.ReasonTunnelNameTaken || t.Reason == xpv2.ReasonReconcileError)
}

// Problem is what a source says about its broken tunnel, once.
func (t Tunnel) Problem() (reason, msg string) {
	return string(t.Reason), fmt.Sprintf("CloudflareTunnel %s has no Cloudflare tunnel, so nothing this source asks for is published through it: %s", t.Name, t.Message)
}

// awaitsTunnelID says whether m still waits for its tunnel reference to
// resolve to an ID: its failure until then is the tunnel's, said by the
// tunnel's state, not a failure of its own (a condition written before the
// tunnel had its ID may still say so after).
func awaitsTunnelID(m Owned) bool {
	switch o := m.(type) {
	case *ztv1alpha1.HostnameRoute:
		return ptr.Deref(o.Spec.ForProvider.TunnelID, "") == ""
	case *connv1alpha1.VPCService:
		h := o.Spec.ForProvider.Host
		switch {
		case h.ResolverNetwork != nil:
			return ptr.Deref(h.ResolverNetwork.TunnelID, "") == ""
		case h.Network != nil:
			return ptr.Deref(h.Network.TunnelID, "") == ""
		}
	}
	return false
}
