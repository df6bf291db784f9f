package providertest

import (
	"context"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/composite/cloudflaretunnel"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

// What envtest does not run, played for a CloudflareTunnel: the kubelet and
// the Deployment controller behind its cloudflared pods, and cloudflared
// connecting to Cloudflare.

// CreateTunnel creates the CloudflareTunnel cr and waits until the provider
// has made its Cloudflare tunnel; it returns the tunnel's ID. No cloudflared
// runs: the tunnel has never connected until RunTunnel.
func (p *Provider) CreateTunnel(t *testing.T, cr *v1alpha1.CloudflareTunnel) string {
	t.Helper()
	p.Create(t, cr)
	return p.TunnelID(t, cr)
}

// TunnelID waits until the CloudflareTunnel cr (made by the test or by a
// source) has its Cloudflare tunnel, and returns the tunnel's ID.
func (p *Provider) TunnelID(t *testing.T, cr *v1alpha1.CloudflareTunnel) string {
	t.Helper()
	wait.Eventually(t, wait.Patience, "CloudflareTunnel "+cr.Name+" has a tunnel ID", func() error {
		if err := p.Get(cr); err != nil {
			return err
		}
		if cr.Status.TunnelID == "" {
			return fmt.Errorf("no tunnel ID yet")
		}
		return nil
	})
	return cr.Status.TunnelID
}

// RunTunnel runs the CloudflareTunnel cr: its cloudflared Deployment's
// replicas become ready and as many connectors connect in the simulator; it
// waits until the CloudflareTunnel is Ready and returns the tunnel's ID.
func (p *Provider) RunTunnel(t *testing.T, cr *v1alpha1.CloudflareTunnel) string {
	t.Helper()
	id := p.TunnelID(t, cr)
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: cr.Namespace, Name: cloudflaretunnel.DeploymentName(cr)}}
	p.MarkDeploymentReady(t, dep)
	if !p.Sim.SetConnectors(id, int(ptr.Deref(dep.Spec.Replicas, 1))) {
		t.Fatalf("the simulator holds no tunnel %s", id)
	}
	wait.Eventually(t, wait.Patience, "CloudflareTunnel "+cr.Name+" Ready", func() error {
		if err := p.Get(cr); err != nil {
			return err
		}
		if c := cr.GetCondition(xpv2.TypeReady); c.Status != corev1.ConditionTrue {
			return fmt.Errorf("Ready=%s %s: %s", c.Status, c.Reason, c.Message)
		}
		return nil
	})
	return id
}

// MarkDeploymentReady reports every replica of the Deployment dep asked for
// as updated, ready and available, at its current generation.
func (p *Provider) MarkDeploymentReady(t *testing.T, dep *appsv1.Deployment) {
	t.Helper()
	wait.Eventually(t, wait.Patience, "Deployment "+dep.Name+" status set", func() error {
		if err := p.Get(dep); err != nil {
			return err
		}
		n := ptr.Deref(dep.Spec.Replicas, 1)
		dep.Status = appsv1.DeploymentStatus{ObservedGeneration: dep.Generation, Replicas: n, ReadyReplicas: n, UpdatedReplicas: n, AvailableReplicas: n}
		return p.Client.Status().Update(context.Background(), dep)
	})
}

// ReadyTunnel creates the Tunnel managed resource name in ns, for the
// Cloudflare tunnel "<name>-<ns>", and waits until it is Ready: the tunnel
// a test of a kind that routes through one needs.
func (p *Provider) ReadyTunnel(t *testing.T, ns, name string) *ztv1alpha1.Tunnel {
	t.Helper()
	tun := &ztv1alpha1.Tunnel{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       ztv1alpha1.TunnelSpec{ForProvider: ztv1alpha1.TunnelParameters{Name: name + "-" + ns}},
	}
	p.Create(t, tun)
	p.WaitReady(t, tun)
	return tun
}
