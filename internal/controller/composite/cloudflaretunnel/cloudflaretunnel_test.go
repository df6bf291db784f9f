package cloudflaretunnel_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/common"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/composite/cloudflaretunnel"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/rotation"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/providertest"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

var p *providertest.Provider

func TestMain(m *testing.M) { os.Exit(providertest.Run(m, &p)) }

func waitCondition(t *testing.T, cr *v1alpha1.CloudflareTunnel, ct xpv2.ConditionType, status corev1.ConditionStatus, reason xpv2.ConditionReason) xpv2.Condition {
	t.Helper()
	var c xpv2.Condition
	wait.Eventually(t, wait.Patience, fmt.Sprintf("%s %s/%s", ct, status, reason), func() error {
		if err := p.Get(cr); err != nil {
			return err
		}
		c = cr.GetCondition(ct)
		if c.Status != status || (reason != "" && c.Reason != reason) {
			return fmt.Errorf("%s is %s/%s: %s", ct, c.Status, c.Reason, c.Message)
		}
		return nil
	})
	return c
}

func cfTunnel(t *testing.T, id string) *cloudflare.Tunnel {
	t.Helper()
	tun, err := p.Cloudflare.GetTunnel(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return tun
}

func TestCloudflareTunnelRunsAHardenedTunnel(t *testing.T) {
	ctx := context.Background()
	ns := p.Namespace(t)
	cr := &v1alpha1.CloudflareTunnel{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "redis-cache"},
		Spec: v1alpha1.CloudflareTunnelSpec{
			Replicas:     ptr.To[int32](3),
			NodeSelector: map[string]string{"kubernetes.io/os": "linux"},
			Tolerations:  []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "edge", Effect: corev1.TaintEffectNoSchedule}},
			Resources: &corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")},
			},
		},
	}
	p.Create(t, cr)
	waitCondition(t, cr, cloudflaretunnel.TypeTokenStored, corev1.ConditionTrue, cloudflaretunnel.ReasonTokenStored)

	tun := &ztv1alpha1.Tunnel{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cr.Name}}
	p.WaitReady(t, tun)
	id := meta.GetExternalName(tun)
	if got := cfTunnel(t, id); got.Name != "redis-cache" {
		t.Errorf("Cloudflare tunnel name %q, want metadata.name", got.Name)
	}
	wait.Eventually(t, wait.Patience, "status.tunnelID", func() error {
		if err := p.Get(cr); err != nil {
			return err
		}
		if cr.Status.TunnelID != id {
			return fmt.Errorf("tunnelID %q", cr.Status.TunnelID)
		}
		return nil
	})

	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "redis-cache-token"}}
	if err := p.Get(secret); err != nil {
		t.Fatal(err)
	}
	raw, _ := base64.StdEncoding.DecodeString(string(secret.Data["token"]))
	var tok struct{ A, T string }
	if err := json.Unmarshal(raw, &tok); err != nil || tok.A != providertest.AccountID || tok.T != id {
		t.Errorf("token decodes to %+v (%v), want account %s tunnel %s", tok, err, providertest.AccountID, id)
	}

	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "redis-cache-cloudflared"}}
	wait.Eventually(t, wait.Patience, "cloudflared Deployment", func() error { return p.Get(dep) })

	t.Run("DeploymentIsHardenedAndPassesThroughScheduling", func(t *testing.T) {
		pod := dep.Spec.Template.Spec
		if len(pod.Containers) != 1 {
			t.Fatalf("%d containers", len(pod.Containers))
		}
		c := pod.Containers[0]
		if c.Image != v1alpha1.DefaultCloudflaredImage {
			t.Errorf("image %q", c.Image)
		}
		if want := []string{"tunnel", "--no-autoupdate", "--metrics", "0.0.0.0:2000", "run"}; !slices.Equal(c.Args, want) || len(c.Command) != 0 {
			t.Errorf("command %v args %v, want args %v", c.Command, c.Args, want)
		}
		for _, a := range append(c.Args, c.Command...) {
			if strings.Contains(a, string(secret.Data["token"])) {
				t.Error("the token is on the command line")
			}
		}
		if len(c.Env) != 1 || c.Env[0].Name != "TUNNEL_TOKEN" || c.Env[0].Value != "" || c.Env[0].ValueFrom == nil ||
			c.Env[0].ValueFrom.SecretKeyRef.Name != "redis-cache-token" || c.Env[0].ValueFrom.SecretKeyRef.Key != "token" {
			t.Errorf("env %+v, want TUNNEL_TOKEN from Secret redis-cache-token key token", c.Env)
		}
		for name, pr := range map[string]*corev1.Probe{"readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
			if pr == nil || pr.HTTPGet == nil || pr.HTTPGet.Path != "/ready" || pr.HTTPGet.Port.IntValue() != 2000 {
				t.Errorf("%s probe %+v, want GET :2000/ready", name, pr)
			}
		}
		sc := c.SecurityContext
		if sc == nil || !ptr.Deref(sc.RunAsNonRoot, false) || ptr.Deref(sc.AllowPrivilegeEscalation, true) || !ptr.Deref(sc.ReadOnlyRootFilesystem, false) ||
			sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
			t.Errorf("container security context %+v is not hardened", sc)
		}
		if ptr.Deref(dep.Spec.Replicas, 0) != 3 || pod.NodeSelector["kubernetes.io/os"] != "linux" || len(pod.Tolerations) != 1 || pod.Tolerations[0].Value != "edge" {
			t.Errorf("replicas %v nodeSelector %v tolerations %v not passed through", dep.Spec.Replicas, pod.NodeSelector, pod.Tolerations)
		}
		if c.Resources.Requests.Cpu().String() != "50m" || c.Resources.Limits.Memory().String() != "128Mi" {
			t.Errorf("resources %+v not passed through", c.Resources)
		}
		if pod.Affinity == nil || pod.Affinity.PodAntiAffinity == nil || len(pod.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) != 1 {
			t.Errorf("pods are not spread across nodes by default: %+v", pod.Affinity)
		}
		if dep.Spec.Template.Annotations[cloudflaretunnel.AnnotationTokenHash] != cloudflaretunnel.TokenChecksum(secret.Data["token"]) {
			t.Error("the pod template has no checksum of the token")
		}
		if metav1.GetControllerOf(dep) == nil || metav1.GetControllerOf(dep).UID != cr.UID {
			t.Error("the Deployment is not controlled by the CloudflareTunnel")
		}
		pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "redis-cache-cloudflared"}}
		if err := p.Get(pdb); err != nil {
			t.Errorf("no PodDisruptionBudget for 3 replicas: %v", err)
		}
	})

	t.Run("PodPassesTheRestrictedPodSecurityStandard", func(t *testing.T) {
		restricted := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "restricted-", Labels: map[string]string{
			"pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/enforce-version": "latest",
		}}}
		if err := p.Client.Create(ctx, restricted); err != nil {
			t.Fatal(err)
		}
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: restricted.Name, Name: "cloudflared"}, Spec: *dep.Spec.Template.Spec.DeepCopy()}
		if err := p.Client.Create(ctx, pod, client.DryRunAll); err != nil {
			t.Errorf("the restricted Pod Security Standard rejects the cloudflared pod: %v", err)
		}
		// The check has teeth: a privileged variant is refused.
		bad := pod.DeepCopy()
		bad.Spec.Containers[0].SecurityContext.AllowPrivilegeEscalation = ptr.To(true)
		if err := p.Client.Create(ctx, bad, client.DryRunAll); err == nil {
			t.Error("a pod allowing privilege escalation was admitted: Pod Security admission is not enforcing")
		}
	})

	t.Run("ReadyFollowsTheDeploymentAndConnections", func(t *testing.T) {
		waitCondition(t, cr, cloudflaretunnel.TypeDeploymentReady, corev1.ConditionFalse, cloudflaretunnel.ReasonReplicasNotReady)
		p.MarkDeploymentReady(t, dep)
		waitCondition(t, cr, cloudflaretunnel.TypeDeploymentReady, corev1.ConditionTrue, cloudflaretunnel.ReasonReplicasReady)
		waitCondition(t, cr, xpv2.TypeReady, corev1.ConditionFalse, cloudflaretunnel.ReasonNotConnected)
		p.Sim.SetConnectors(id, 3)
		waitCondition(t, cr, xpv2.TypeReady, corev1.ConditionTrue, cloudflaretunnel.ReasonConnected)
		if cr.Status.Connections != 12 || cr.Status.ObservedGeneration != cr.Generation {
			t.Errorf("status connections %d observedGeneration %d/%d", cr.Status.Connections, cr.Status.ObservedGeneration, cr.Generation)
		}
	})

	t.Run("RotatedTokenRollsThePods", func(t *testing.T) {
		before := dep.Spec.Template.Annotations[cloudflaretunnel.AnnotationTokenHash]
		if err := p.Get(secret); err != nil {
			t.Fatal(err)
		}
		secret.Data["token"] = []byte(base64.StdEncoding.EncodeToString([]byte(`{"a":"` + providertest.AccountID + `","t":"` + id + `","s":"cm90YXRlZA=="}`)))
		if err := p.Client.Update(ctx, secret); err != nil {
			t.Fatal(err)
		}
		wait.Eventually(t, wait.Patience, "new checksum on the pod template", func() error {
			if err := p.Get(dep); err != nil {
				return err
			}
			if dep.Spec.Template.Annotations[cloudflaretunnel.AnnotationTokenHash] == before {
				return fmt.Errorf("checksum unchanged")
			}
			return nil
		})
	})

	t.Run("SpecEditsUpdateTheDeploymentInPlace", func(t *testing.T) {
		wait.Eventually(t, wait.Patience, "edit", func() error {
			if err := p.Get(cr); err != nil {
				return err
			}
			cr.Spec.Replicas = ptr.To[int32](1)
			cr.Spec.Image = ptr.To("cloudflare/cloudflared:2025.9.0")
			return p.Client.Update(ctx, cr)
		})
		wait.Eventually(t, wait.Patience, "deployment updated and PDB removed", func() error {
			if err := p.Get(dep); err != nil {
				return err
			}
			if ptr.Deref(dep.Spec.Replicas, 0) != 1 || dep.Spec.Template.Spec.Containers[0].Image != "cloudflare/cloudflared:2025.9.0" {
				return fmt.Errorf("replicas %v image %s", dep.Spec.Replicas, dep.Spec.Template.Spec.Containers[0].Image)
			}
			if err := p.Get(&policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "redis-cache-cloudflared"}}); !kerrors.IsNotFound(err) {
				return fmt.Errorf("PDB still there with one replica (%v)", err)
			}
			return nil
		})
		// The controller writes status meanwhile: a conflict is a race with
		// it, not the answer; try again on the latest version.
		var err error
		for range 10 {
			if err = p.Get(cr); err != nil {
				t.Fatal(err)
			}
			cr.Spec.TunnelName = ptr.To("another-name")
			if err = p.Client.Update(ctx, cr); !kerrors.IsConflict(err) {
				break
			}
		}
		if !kerrors.IsInvalid(err) || !strings.Contains(err.Error(), "tunnelName is immutable") {
			t.Errorf("renaming tunnelName: got %v, want an Invalid error saying it is immutable", err)
		}
		// Writing out the default changes nothing, so it is no change.
		for range 10 {
			if err = p.Get(cr); err != nil {
				t.Fatal(err)
			}
			cr.Spec.TunnelName = ptr.To(cr.Name)
			if err = p.Client.Update(ctx, cr); !kerrors.IsConflict(err) {
				break
			}
		}
		if err != nil {
			t.Errorf("setting tunnelName to its default (metadata.name) was refused: %v", err)
		}
	})

	t.Run("DeletionWaitsForIngressesThenCleansUp", func(t *testing.T) {
		ing := &networkingv1.Ingress{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "redis", Annotations: map[string]string{v1alpha1.AnnotationTunnel: "redis-cache"}},
			Spec: networkingv1.IngressSpec{IngressClassName: ptr.To("cloudflare"), DefaultBackend: &networkingv1.IngressBackend{
				Service: &networkingv1.IngressServiceBackend{Name: "redis", Port: networkingv1.ServiceBackendPort{Number: 6379}},
			}},
		}
		p.Create(t, ing)
		// Once the Ingress publishes through the tunnel (its private route
		// is made), the tunnel's deletion waits for it. (One that has made
		// nothing yet is told the tunnel is going: nothing of it is lost.)
		wait.Eventually(t, wait.Patience, "the Ingress's route", func() error {
			l := &ztv1alpha1.HostnameRouteList{}
			if err := p.Client.List(ctx, l, client.InNamespace(ns)); err != nil {
				return err
			}
			if len(l.Items) == 0 {
				return fmt.Errorf("no route yet")
			}
			return nil
		})
		if err := p.Client.Delete(ctx, cr); err != nil {
			t.Fatal(err)
		}
		c := waitCondition(t, cr, xpv2.TypeReady, corev1.ConditionFalse, cloudflaretunnel.ReasonTunnelInUse)
		if !strings.Contains(c.Message, "Ingress redis") {
			t.Errorf("the condition does not name the Ingress as what uses the tunnel: %s", c.Message)
		}
		if !strings.Contains(c.Message, "redis") {
			t.Errorf("the condition does not name the Ingress: %s", c.Message)
		}
		wait.Eventually(t, wait.Patience, "TunnelInUse event", func() error {
			evs := &corev1.EventList{}
			if err := p.Client.List(ctx, evs, client.InNamespace(ns)); err != nil {
				return err
			}
			for _, e := range evs.Items {
				if e.Reason == "TunnelInUse" && e.Type == corev1.EventTypeWarning && strings.Contains(e.Message, "redis") {
					return nil
				}
			}
			return fmt.Errorf("no TunnelInUse event")
		})
		if err := p.Get(dep); err != nil {
			t.Errorf("the Deployment was removed while an Ingress still used the tunnel: %v", err)
		}
		if err := p.Client.Delete(ctx, ing); err != nil {
			t.Fatal(err)
		}
		// cloudflared stops with its Deployment; play its disconnect.
		wait.Eventually(t, wait.Patience, "deployment deleted", func() error {
			if err := p.Get(dep); !kerrors.IsNotFound(err) {
				return fmt.Errorf("deployment still there (%v)", err)
			}
			return nil
		})
		p.Sim.SetConnectors(id, 0)
		p.DeleteAndWait(t, cr)
		if !cfTunnel(t, id).Deleted() {
			t.Error("the Cloudflare tunnel was left behind")
		}
		if err := p.Get(tun); !kerrors.IsNotFound(err) {
			t.Errorf("the Tunnel MR is still there: %v", err)
		}
	})
}

func TestCloudflareTunnelOrphansWhenAsked(t *testing.T) {
	ns := p.Namespace(t)
	cr := &v1alpha1.CloudflareTunnel{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "keep"},
		Spec:       v1alpha1.CloudflareTunnelSpec{TunnelName: ptr.To("keep-" + ns), Replicas: ptr.To[int32](1), DeleteTunnelOnRemove: ptr.To(false)},
	}
	p.Create(t, cr)
	waitCondition(t, cr, cloudflaretunnel.TypeTokenStored, corev1.ConditionTrue, "")
	id := cr.Status.TunnelID
	if id == "" {
		if err := p.Get(cr); err != nil {
			t.Fatal(err)
		}
		id = cr.Status.TunnelID
	}
	p.DeleteAndWait(t, cr)
	if got := cfTunnel(t, id); got.Deleted() {
		t.Error("deleteTunnelOnRemove: false deleted the Cloudflare tunnel")
	}
}

func TestCloudflareTunnelDeletionSurvivesAHandDeletedTunnel(t *testing.T) {
	ns := p.Namespace(t)
	cr := &v1alpha1.CloudflareTunnel{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gone"},
		Spec:       v1alpha1.CloudflareTunnelSpec{TunnelName: ptr.To("gone-" + ns)},
	}
	p.Create(t, cr)
	waitCondition(t, cr, cloudflaretunnel.TypeTokenStored, corev1.ConditionTrue, "")
	if err := p.Get(cr); err != nil {
		t.Fatal(err)
	}
	if err := p.Cloudflare.DeleteTunnel(context.Background(), cr.Status.TunnelID); err != nil {
		t.Fatal(err)
	}
	p.DeleteAndWait(t, cr)
	ts, err := p.Cloudflare.ListTunnels(context.Background(), cloudflare.TunnelFilter{Name: "gone-" + ns})
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 0 {
		t.Errorf("%d live tunnels left behind", len(ts))
	}
}

// TestAHandDeletedTunnelIsReplaced: deleting the child Tunnel MR by hand
// neither deletes the Cloudflare tunnel (cloudflared is connected; the
// traffic must go on) nor hangs: a new Tunnel takes the same tunnel over.
func TestAHandDeletedTunnelIsReplaced(t *testing.T) {
	ns := p.Namespace(t)
	cr := &v1alpha1.CloudflareTunnel{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "handled"},
		Spec:       v1alpha1.CloudflareTunnelSpec{TunnelName: ptr.To("handled-" + ns), Replicas: ptr.To[int32](1)},
	}
	p.Create(t, cr)
	waitCondition(t, cr, cloudflaretunnel.TypeTokenStored, corev1.ConditionTrue, "")
	if err := p.Get(cr); err != nil {
		t.Fatal(err)
	}
	id := cr.Status.TunnelID
	p.Sim.SetConnectors(id, 2)
	tun := &ztv1alpha1.Tunnel{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cr.Name}}
	if err := p.Get(tun); err != nil {
		t.Fatal(err)
	}
	oldUID := tun.UID
	if err := p.Client.Delete(context.Background(), tun); err != nil {
		t.Fatal(err)
	}
	wait.Eventually(t, wait.Patience, "a new Tunnel on the same Cloudflare tunnel, Ready", func() error {
		got := &ztv1alpha1.Tunnel{ObjectMeta: tun.ObjectMeta}
		if err := p.Get(got); err != nil {
			return err
		}
		if got.UID == oldUID || meta.GetExternalName(got) != id || got.GetCondition(xpv2.TypeReady).Status != corev1.ConditionTrue {
			return fmt.Errorf("uid %s (old %s), external-name %s (want %s), Ready %s", got.UID, oldUID, meta.GetExternalName(got), id, got.GetCondition(xpv2.TypeReady).Status)
		}
		return nil
	})
	if cfTunnel(t, id).Deleted() {
		t.Fatal("deleting the Tunnel MR by hand deleted the Cloudflare tunnel")
	}
	waitCondition(t, cr, cloudflaretunnel.TypeTokenStored, corev1.ConditionTrue, "")
	if err := p.Get(cr); err != nil || cr.Status.TunnelID != id {
		t.Errorf("status.tunnelID %q (%v), want %s", cr.Status.TunnelID, err, id)
	}
	waitEventOn(t, ns, cr.Name, string(cloudflaretunnel.ReasonTunnelReplaced))

	p.Sim.SetConnectors(id, 0)
	p.DeleteAndWait(t, cr)
	if !cfTunnel(t, id).Deleted() {
		t.Error("deleting the CloudflareTunnel left its tunnel behind")
	}
}

// TestATunnelDeletedWithItsNamespaceIsNotKept: in a namespace being
// deleted, the Tunnel's deletion is the namespace's, not a hand edit: it
// must delete the Cloudflare tunnel, not release it.
func TestATunnelDeletedWithItsNamespaceIsNotKept(t *testing.T) {
	ctx := context.Background()
	ns := p.Namespace(t)
	cr := &v1alpha1.CloudflareTunnel{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "doomed"},
		Spec:       v1alpha1.CloudflareTunnelSpec{TunnelName: ptr.To("doomed-" + ns), Replicas: ptr.To[int32](1)},
	}
	p.Create(t, cr)
	waitCondition(t, cr, cloudflaretunnel.TypeTokenStored, corev1.ConditionTrue, "")
	if err := p.Get(cr); err != nil {
		t.Fatal(err)
	}
	id := cr.Status.TunnelID
	// envtest runs no namespace controller: the namespace stays
	// Terminating, refusing new objects, and the test deletes the Tunnel
	// as the namespace controller would.
	if err := p.Client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	tun := &ztv1alpha1.Tunnel{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cr.Name}}
	if err := p.Client.Delete(ctx, tun); err != nil {
		t.Fatal(err)
	}
	wait.Eventually(t, wait.Patience, "the Cloudflare tunnel deleted with its namespace", func() error {
		if !cfTunnel(t, id).Deleted() {
			return fmt.Errorf("tunnel %s still live", id)
		}
		return nil
	})
	evs := &corev1.EventList{}
	if err := p.Client.List(ctx, evs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, e := range evs.Items {
		if e.Reason == string(cloudflaretunnel.ReasonTunnelReplaced) {
			t.Errorf("a Tunnel deleted with its namespace was treated as a hand edit: %s", e.Message)
		}
	}
}

// TestATakenTunnelNameSaysToRecreate: a CloudflareTunnel whose tunnelName
// another cluster already uses reports it where its user looks, with advice
// that works (tunnelName is immutable), and publishes no token.
func TestATakenTunnelNameSaysToRecreate(t *testing.T) {
	ns := p.Namespace(t)
	theirs, err := p.Cloudflare.CreateTunnel(context.Background(), "taken-"+ns, "cloudflare")
	if err != nil {
		t.Fatal(err)
	}
	// Made elsewhere well before: the account-wide listing has seen it. (One
	// made within mr.CreateSkew of our own create is indistinguishable
	// from what a lost create response leaves.)
	time.Sleep(2 * time.Second)
	cr := &v1alpha1.CloudflareTunnel{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "late"},
		Spec:       v1alpha1.CloudflareTunnelSpec{TunnelName: ptr.To("taken-" + ns), Replicas: ptr.To[int32](1)},
	}
	p.Create(t, cr)
	c := waitCondition(t, cr, xpv2.TypeReady, corev1.ConditionFalse, v1alpha1.ReasonTunnelNameTaken)
	// Told by the Tunnel's typed reason, not its message.
	tun := &ztv1alpha1.Tunnel{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cr.Name}}
	if err := p.Get(tun); err != nil {
		t.Fatal(err)
	}
	if s := tun.GetCondition(xpv2.TypeSynced); s.Status != corev1.ConditionFalse || s.Reason != common.ReasonNameTaken {
		t.Errorf("the Tunnel's Synced is %s %s (%s), want False %s", s.Status, s.Reason, s.Message, common.ReasonNameTaken)
	}
	for _, want := range []string{theirs.ID, "immutable", "create it again with another tunnelName"} {
		if !strings.Contains(c.Message, want) {
			t.Errorf("Ready message %q does not say %q", c.Message, want)
		}
	}
	if err := p.Get(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "late-token"}}); !kerrors.IsNotFound(err) {
		t.Errorf("a token Secret exists for a tunnel that is not ours (%v)", err)
	}
	p.DeleteAndWait(t, cr)
	if cfTunnel(t, theirs.ID).Deleted() {
		t.Error("deleting the CloudflareTunnel deleted the tunnel it never owned")
	}
}

func waitEventOn(t *testing.T, ns, name, reason string) {
	t.Helper()
	wait.Eventually(t, wait.Patience, "event "+reason+" on "+name, func() error {
		evs := &corev1.EventList{}
		if err := p.Client.List(context.Background(), evs, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, e := range evs.Items {
			if e.InvolvedObject.Name == name && e.Reason == reason {
				return nil
			}
		}
		return fmt.Errorf("no %s event", reason)
	})
}

// TestCloudflareTunnelWithItsOwnCredentials: credentialsSecretRef gets a
// managed ProviderConfig, and the Tunnel uses it.
func TestCloudflareTunnelWithItsOwnCredentials(t *testing.T) {
	ns := p.Namespace(t)
	def := &v1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	if err := p.Get(def); err != nil {
		t.Fatal(err)
	}
	p.Create(t, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team-a-cloudflare"},
		StringData: map[string]string{"CLOUDFLARE_API_TOKEN": providertest.Token, "CLOUDFLARE_ACCOUNT_ID": providertest.AccountID, "CLOUDFLARE_BASE_URL": *def.Spec.Endpoint},
	})
	cr := &v1alpha1.CloudflareTunnel{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team-a"},
		Spec:       v1alpha1.CloudflareTunnelSpec{TunnelName: ptr.To("team-a-" + ns), Replicas: ptr.To[int32](1), CredentialsSecretRef: &xpv2.LocalSecretReference{Name: "team-a-cloudflare"}},
	}
	p.Create(t, cr)
	waitCondition(t, cr, cloudflaretunnel.TypeTokenStored, corev1.ConditionTrue, "")
	tun := &ztv1alpha1.Tunnel{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team-a"}}
	if err := p.Get(tun); err != nil {
		t.Fatal(err)
	}
	if ref := tun.GetProviderConfigReference(); ref == nil || ref.Kind != "ProviderConfig" || ref.Name != "team-a-credentials" {
		t.Errorf("the Tunnel uses %+v, want the managed ProviderConfig team-a-credentials", ref)
	}
	pc := &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team-a-credentials"}}
	if err := p.Get(pc); err != nil || pc.Spec.Credentials.SecretRef.Name != "team-a-cloudflare" {
		t.Errorf("managed ProviderConfig %+v (%v)", pc.Spec, err)
	}
	// What crossplane resource trace shows as its children (one replica:
	// no PodDisruptionBudget).
	want := []v1alpha1.CompositeResourceRef{
		{APIVersion: "apps/v1", Kind: "Deployment", Name: "team-a-cloudflared"},
		{APIVersion: "tunnels.cloudflare.com/v1alpha1", Kind: "ProviderConfig", Name: "team-a-credentials"},
		{APIVersion: "zerotrust.tunnels.cloudflare.com/v1alpha1", Kind: "Tunnel", Name: "team-a"},
	}
	wait.Eventually(t, wait.Patience, "spec.crossplane.resourceRefs names the children", func() error {
		if err := p.Get(cr); err != nil {
			return err
		}
		if cr.Spec.Crossplane == nil {
			return fmt.Errorf("no spec.crossplane")
		}
		if diff := cmp.Diff(want, cr.Spec.Crossplane.ResourceRefs); diff != "" {
			return fmt.Errorf("resourceRefs (-want +got):\n%s", diff)
		}
		return nil
	})
	p.DeleteAndWait(t, cr)
}

// TestDegradedReportedAndCleared: Cloudflare's view of the tunnel and its
// connector count against the replicas asked for reach the Degraded and
// Ready conditions and the status, both ways.
func TestDegradedReportedAndCleared(t *testing.T) {
	ns := p.Namespace(t)
	cr := &v1alpha1.CloudflareTunnel{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "health"},
		Spec:       v1alpha1.CloudflareTunnelSpec{TunnelName: ptr.To("health-" + ns), Replicas: ptr.To[int32](2)},
	}
	p.Create(t, cr)
	waitCondition(t, cr, cloudflaretunnel.TypeTokenStored, corev1.ConditionTrue, "")
	id := cr.Status.TunnelID
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "health-cloudflared"}}
	p.MarkDeploymentReady(t, dep)
	// Never connected: inactive, not Ready, and none of the 2 connectors.
	waitCondition(t, cr, xpv2.TypeReady, corev1.ConditionFalse, cloudflaretunnel.ReasonNotConnected)
	waitCondition(t, cr, cloudflaretunnel.TypeDegraded, corev1.ConditionTrue, cloudflaretunnel.ReasonTooFewConnectors)

	wantStatus := func(status string, connectors int) {
		t.Helper()
		wait.Eventually(t, wait.Patience, fmt.Sprintf("status %s with %d connectors", status, connectors), func() error {
			if err := p.Get(cr); err != nil {
				return err
			}
			if cr.Status.TunnelStatus != status || cr.Status.Connectors != connectors {
				return fmt.Errorf("tunnelStatus %q connectors %d", cr.Status.TunnelStatus, cr.Status.Connectors)
			}
			return nil
		})
	}
	saysWhy := func(c xpv2.Condition, says string) {
		t.Helper()
		if !strings.Contains(c.Message, says) {
			t.Errorf("%s message %q does not say %q", c.Type, c.Message, says)
		}
	}

	t.Run("FewerConnectorsThanReplicas", func(t *testing.T) {
		p.Sim.SetConnectors(id, 2)
		waitCondition(t, cr, cloudflaretunnel.TypeDegraded, corev1.ConditionFalse, cloudflaretunnel.ReasonHealthy)
		// One connector goes: Cloudflare still says healthy (the other holds
		// all its connections); the count tells.
		p.Sim.SetConnectors(id, 1)
		c := waitCondition(t, cr, cloudflaretunnel.TypeDegraded, corev1.ConditionTrue, cloudflaretunnel.ReasonTooFewConnectors)
		saysWhy(c, "1/2 connectors connected")
		r := waitCondition(t, cr, xpv2.TypeReady, corev1.ConditionTrue, cloudflaretunnel.ReasonConnected)
		saysWhy(r, "serving, but degraded")
		wantStatus("healthy", 1)
	})

	t.Run("CloudflareSaysDegraded", func(t *testing.T) {
		// Both connectors, but one has lost two of its four connections.
		p.Sim.SetConnectorStates(id, []sim.ConnectorState{{Connections: 4}, {Connections: 2}})
		c := waitCondition(t, cr, cloudflaretunnel.TypeDegraded, corev1.ConditionTrue, cloudflaretunnel.ReasonCloudflareDegraded)
		saysWhy(c, "2/2 connectors connected, 6 edge connections")
		waitCondition(t, cr, xpv2.TypeReady, corev1.ConditionTrue, cloudflaretunnel.ReasonConnected)
		wantStatus("degraded", 2)
	})

	t.Run("AllBack", func(t *testing.T) {
		p.Sim.SetConnectors(id, 2)
		c := waitCondition(t, cr, cloudflaretunnel.TypeDegraded, corev1.ConditionFalse, cloudflaretunnel.ReasonHealthy)
		saysWhy(c, "2/2 connectors connected, 8 edge connections")
		r := waitCondition(t, cr, xpv2.TypeReady, corev1.ConditionTrue, cloudflaretunnel.ReasonConnected)
		if strings.Contains(r.Message, "degraded") {
			t.Errorf("Ready still says degraded: %s", r.Message)
		}
		wantStatus("healthy", 2)
	})

	t.Run("Down", func(t *testing.T) {
		p.Sim.SetConnectors(id, 0)
		r := waitCondition(t, cr, xpv2.TypeReady, corev1.ConditionFalse, cloudflaretunnel.ReasonTunnelDown)
		saysWhy(r, "Cloudflare reports the tunnel down")
		c := waitCondition(t, cr, cloudflaretunnel.TypeDegraded, corev1.ConditionTrue, cloudflaretunnel.ReasonTooFewConnectors)
		saysWhy(c, "0/2 connectors connected")
		wantStatus("down", 0)
	})
}

func tokenOf(t *testing.T, cr *v1alpha1.CloudflareTunnel) string {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: cr.Namespace, Name: cr.Name + "-token"}}
	if err := p.Get(s); err != nil {
		t.Fatal(err)
	}
	return string(s.Data["token"])
}

func requestRotation(t *testing.T, cr *v1alpha1.CloudflareTunnel, at time.Time) {
	t.Helper()
	wait.Eventually(t, wait.Patience, "rotation requested", func() error {
		if err := p.Get(cr); err != nil {
			return err
		}
		cr.Spec.TokenRotation = &v1alpha1.TokenRotationRequest{RequestedAt: metav1.NewTime(at)}
		return p.Client.Update(context.Background(), cr)
	})
}

// waitNewToken waits for the token Secret to hold a token other than old
// and returns it.
func waitNewToken(t *testing.T, cr *v1alpha1.CloudflareTunnel, old string) string {
	t.Helper()
	var tok string
	wait.Eventually(t, wait.Patience, "a new token in the Secret", func() error {
		if tok = tokenOf(t, cr); tok == old {
			return fmt.Errorf("the Secret still holds the old token")
		}
		return nil
	})
	return tok
}

func connectorIDs(t *testing.T, id string) []string {
	t.Helper()
	cs, err := p.Cloudflare.TunnelConnectors(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range cs {
		out = append(out, c.ID)
	}
	slices.Sort(out)
	return out
}

// TestTokenRotation: a requested rotation puts a new token in the Secret,
// which Cloudflare accepts while it refuses the old one; the pods roll onto
// it; once rolled out, the connectors of the old token are removed; a served
// request is not rotated again.
func TestTokenRotation(t *testing.T) {
	ns := p.Namespace(t)
	cr := &v1alpha1.CloudflareTunnel{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rotate"},
		Spec:       v1alpha1.CloudflareTunnelSpec{TunnelName: ptr.To("rotate-" + ns), Replicas: ptr.To[int32](2)},
	}
	p.Create(t, cr)
	waitCondition(t, cr, cloudflaretunnel.TypeTokenStored, corev1.ConditionTrue, "")
	id := cr.Status.TunnelID
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rotate-cloudflared"}}
	p.MarkDeploymentReady(t, dep)
	old := tokenOf(t, cr)
	var stale []string
	for range 2 {
		c, err := p.Sim.Connect(old)
		if err != nil {
			t.Fatal(err)
		}
		stale = append(stale, c)
	}
	slices.Sort(stale)
	waitCondition(t, cr, xpv2.TypeReady, corev1.ConditionTrue, cloudflaretunnel.ReasonConnected)

	requestRotation(t, cr, time.Now())
	fresh := waitNewToken(t, cr, old)
	wait.Eventually(t, wait.Patience, "status.tokenRotatedAt", func() error {
		if err := p.Get(cr); err != nil {
			return err
		}
		if cr.Status.TokenRotatedAt == nil {
			return fmt.Errorf("not set")
		}
		return nil
	})
	if _, err := p.Sim.Connect(old); err == nil {
		t.Error("Cloudflare accepts the replaced token")
	}
	newConnector, err := p.Sim.Connect(fresh)
	if err != nil {
		t.Fatalf("Cloudflare refuses the new token: %v", err)
	}
	wait.Eventually(t, wait.Patience, "the pods roll onto the new token", func() error {
		if err := p.Get(dep); err != nil {
			return err
		}
		if dep.Spec.Template.Annotations[cloudflaretunnel.AnnotationTokenHash] != cloudflaretunnel.TokenChecksum([]byte(fresh)) {
			return fmt.Errorf("pod template on the old token")
		}
		return nil
	})
	// Until the rollout is done, the old connectors keep serving.
	if got := connectorIDs(t, id); len(got) != 3 {
		t.Errorf("connectors %v before the rollout finished, want the 2 old ones and the new one", got)
	}

	p.MarkDeploymentReady(t, dep)
	wait.Eventually(t, wait.Patience, "connectors of the old token removed", func() error {
		if got := connectorIDs(t, id); !slices.Equal(got, []string{newConnector}) {
			return fmt.Errorf("connectors %v, want only %s (stale: %v)", got, newConnector, stale)
		}
		return nil
	})
	waitEventOn(t, ns, cr.Name, "TokenRotated")

	// A served request is not rotated again: nothing more is written.
	tun := &ztv1alpha1.Tunnel{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cr.Name}}
	wait.Eventually(t, wait.Patience, "stale connectors removal recorded", func() error {
		if err := p.Get(tun); err != nil {
			return err
		}
		if r := tun.Status.AtProvider.TokenRotation; r == nil || r.StaleConnectorsRemovedAt == nil {
			return fmt.Errorf("tokenRotation %+v", r)
		}
		return nil
	})
	edits := p.Sim.Stats()["tunnels.edit"].Requests
	p.WaitServed(t, 3, "GET", "/cfd_tunnel$") // three more observations of the Tunnel
	if got := p.Sim.Stats()["tunnels.edit"].Requests; got != edits || tokenOf(t, cr) != fresh {
		t.Errorf("after the rotation was served: %d tunnel edits (was %d), token changed %v", got, edits, tokenOf(t, cr) != fresh)
	}

	// A Secret back on the replaced token (a publication that failed, a
	// restore from backup) is put back on the token Cloudflare accepts.
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cr.Name + "-token"}}
	wait.Eventually(t, wait.Patience, "the old token written back", func() error {
		if err := p.Get(secret); err != nil {
			return err
		}
		secret.Data["token"] = []byte(old)
		return p.Client.Update(context.Background(), secret)
	})
	wait.Eventually(t, wait.Patience, "the current token republished", func() error {
		if tokenOf(t, cr) != fresh {
			return fmt.Errorf("the Secret holds the replaced token")
		}
		return nil
	})

	p.Sim.SetConnectors(id, 0)
	p.DeleteAndWait(t, cr)
}

// TestTokenRotationHealsALostResponse: Cloudflare takes the new secret but
// its answer is lost. The retry reads the token instead of rotating again,
// and the Secret ends on the token Cloudflare accepts.
func TestTokenRotationHealsALostResponse(t *testing.T) {
	ns := p.Namespace(t)
	cr := &v1alpha1.CloudflareTunnel{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "lost"},
		Spec:       v1alpha1.CloudflareTunnelSpec{TunnelName: ptr.To("lost-" + ns), Replicas: ptr.To[int32](1)},
	}
	p.Create(t, cr)
	waitCondition(t, cr, cloudflaretunnel.TypeTokenStored, corev1.ConditionTrue, "")
	old := tokenOf(t, cr)
	p.Sim.LoseNext("tunnels.edit", 1)
	before := p.Sim.Stats()["tunnels.edit"].ByStatus[200]

	requestRotation(t, cr, time.Now())
	fresh := waitNewToken(t, cr, old)
	if _, err := p.Sim.Connect(fresh); err != nil {
		t.Errorf("the Secret holds a token Cloudflare refuses: %v", err)
	}
	if _, err := p.Sim.Connect(old); err == nil {
		t.Error("Cloudflare accepts the replaced token")
	}
	st := p.Sim.Stats()["tunnels.edit"]
	if st.ByStatus[500] < 1 || st.ByStatus[200] != before {
		t.Errorf("tunnel edits by status %v: want the one lost (500) and no second rotation", st.ByStatus)
	}
	p.Sim.SetConnectors(cr.Status.TunnelID, 0)
	p.DeleteAndWait(t, cr)
}

// TestTokenRotationRequestIsValidated: requestedAt is an RFC 3339 time,
// anything else is refused at admission, saying why; any change of the time
// is admitted, earlier ones too (a mistyped time can be corrected), and the
// controller decides what it does (TestAFutureRotationIsRefusedAndCanBeCorrected).
func TestTokenRotationRequestIsValidated(t *testing.T) {
	ctx := context.Background()
	ns := p.Namespace(t)
	cr := &v1alpha1.CloudflareTunnel{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "validated"},
		Spec: v1alpha1.CloudflareTunnelSpec{
			TunnelName: ptr.To("validated-" + ns), Replicas: ptr.To[int32](0),
			TokenRotation: &v1alpha1.TokenRotationRequest{RequestedAt: metav1.NewTime(time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC))},
		},
	}
	p.Create(t, cr)
	patch := func(body string) error {
		return p.Client.Patch(ctx, cr.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(body)))
	}
	if err := patch(`{"spec":{"tokenRotation":{"requestedAt":"next tuesday"}}}`); err == nil || !strings.Contains(err.Error(), "requestedAt") {
		t.Errorf("a requestedAt that is no time: %v, want refused", err)
	}
	if err := patch(`{"spec":{"tokenRotation":{"requestedAt":"2026-12-01T10:00:00Z"}}}`); err != nil {
		t.Errorf("an earlier requestedAt: %v, want accepted (a mistyped time must be correctable)", err)
	}
	if err := patch(`{"spec":{"tokenRotation":{"requestedAt":"2026-12-03T10:00:00Z"}}}`); err != nil {
		t.Errorf("a later requestedAt: %v, want accepted", err)
	}
	p.DeleteAndWait(t, cr)
}

// TestAFutureRotationIsRefusedAndCanBeCorrected (issue 34, bug 4): a
// mistyped year is admitted (admission has no clock) but refused by the
// controller, with a Warning event and a False TokenRotation condition that
// name the value and the limit; nothing rotates and the Tunnel is not asked.
// Corrected to the current time (an earlier value), it rotates once. A time
// at or before that rotation is reported as already served; removed and
// set again to the current time, it rotates again.
func TestAFutureRotationIsRefusedAndCanBeCorrected(t *testing.T) {
	ns := p.Namespace(t)
	cr := &v1alpha1.CloudflareTunnel{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "future"},
		Spec:       v1alpha1.CloudflareTunnelSpec{TunnelName: ptr.To("future-" + ns), Replicas: ptr.To[int32](1)},
	}
	p.Create(t, cr)
	waitCondition(t, cr, cloudflaretunnel.TypeTokenStored, corev1.ConditionTrue, "")
	old := tokenOf(t, cr)
	tun := &ztv1alpha1.Tunnel{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cr.Name}}

	requestRotation(t, cr, time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC))
	c := waitCondition(t, cr, rotation.TypeTokenRotation, corev1.ConditionFalse, rotation.ReasonRequestInFuture)
	for _, want := range []string{"spec.tokenRotation.requestedAt 2099-01-01T00:00:00Z", "now plus 5m0s", "Replace it with the current time"} {
		if !strings.Contains(c.Message, want) {
			t.Errorf("TokenRotation message %q does not say %q", c.Message, want)
		}
	}
	waitEventOn(t, ns, cr.Name, string(rotation.ReasonRequestInFuture))
	if err := p.Get(tun); err != nil {
		t.Fatal(err)
	}
	if r := tun.Spec.ForProvider.TokenRotation; r != nil || tun.Status.AtProvider.TokenRotation != nil || tokenOf(t, cr) != old {
		t.Fatalf("a refused request was served: the Tunnel is asked %+v, did %+v", r, tun.Status.AtProvider.TokenRotation)
	}

	// Corrected to now, an earlier value: admitted, and it rotates.
	requestRotation(t, cr, time.Now())
	fresh := waitNewToken(t, cr, old)
	waitCondition(t, cr, rotation.TypeTokenRotation, corev1.ConditionTrue, rotation.ReasonTokenRotated)
	if err := p.Get(cr); err != nil || cr.Status.TokenRotatedAt == nil {
		t.Fatalf("status.tokenRotatedAt %v (%v)", cr.Status.TokenRotatedAt, err)
	}

	// A time before that rotation: served already, and said so.
	requestRotation(t, cr, cr.Status.TokenRotatedAt.Add(-time.Minute))
	c = waitCondition(t, cr, rotation.TypeTokenRotation, corev1.ConditionTrue, rotation.ReasonAlreadyServed)
	if !strings.Contains(c.Message, "already newer than asked for") {
		t.Errorf("TokenRotation message %q", c.Message)
	}
	waitEventOn(t, ns, cr.Name, string(rotation.ReasonAlreadyServed))
	if tokenOf(t, cr) != fresh {
		t.Error("a request already served rotated the token")
	}

	// Removed, then set again to now: it rotates.
	wait.Eventually(t, wait.Patience, "rotation request removed", func() error {
		if err := p.Get(cr); err != nil {
			return err
		}
		cr.Spec.TokenRotation = nil
		return p.Client.Update(context.Background(), cr)
	})
	wait.Eventually(t, wait.Patience, "the Tunnel no longer asked", func() error {
		if err := p.Get(tun); err != nil {
			return err
		}
		if r := tun.Spec.ForProvider.TokenRotation; r != nil {
			return fmt.Errorf("tokenRotation %+v", r)
		}
		return nil
	})
	// A second ahead of the last rotation's, which is stored to the second.
	requestRotation(t, cr, time.Now().Add(2*time.Second))
	waitNewToken(t, cr, fresh)
	p.Sim.SetConnectors(cr.Status.TunnelID, 0)
	p.DeleteAndWait(t, cr)
}

// TestAZeroTimeStoredBeforeTheRuleIsAnsweredNotWedged (issue 48, bug 9):
// the API server refuses a rotation request before rotation.Earliest, but
// one stored before that rule existed (here: with the rule lifted for the
// create) is answered — the tunnel is made, the request refused with
// TokenRotation=False RotationRequestTooOld and a Warning, nothing asked
// of the Tunnel — and the CloudflareTunnel is deleted as any other: its
// finalizer is patched alone, never written back with a zero time the API
// server would refuse as null.
func TestAZeroTimeStoredBeforeTheRuleIsAnsweredNotWedged(t *testing.T) {
	ctx := context.Background()
	ns := p.Namespace(t)
	const name = "zero-time"
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1alpha1.SchemeGroupVersion.String(), "kind": "CloudflareTunnel",
		"metadata": map[string]any{"namespace": ns, "name": name},
		"spec": map[string]any{"tunnelName": name + "-" + ns, "replicas": int64(0),
			"tokenRotation": map[string]any{"requestedAt": "0001-01-01T00:00:00Z"}},
	}}
	withoutTheRule(t, func() error { return p.Client.Create(ctx, u.DeepCopy()) })

	cr := &v1alpha1.CloudflareTunnel{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	c := waitCondition(t, cr, rotation.TypeTokenRotation, corev1.ConditionFalse, rotation.ReasonRequestTooOld)
	for _, want := range []string{"spec.tokenRotation.requestedAt 0001-01-01T00:00:00Z", "set it to the current time"} {
		if !strings.Contains(c.Message, want) {
			t.Errorf("TokenRotation message %q does not say %q", c.Message, want)
		}
	}
	waitEventOn(t, ns, name, string(rotation.ReasonRequestTooOld))
	waitCondition(t, cr, cloudflaretunnel.TypeTokenStored, corev1.ConditionTrue, "")
	tun := &ztv1alpha1.Tunnel{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := p.Get(tun); err != nil || tun.Spec.ForProvider.TokenRotation != nil {
		t.Errorf("the Tunnel (%v) is asked %+v, want nothing", err, tun.Spec.ForProvider.TokenRotation)
	}
	p.DeleteAndWait(t, cr)
}

// withoutTheRule runs create with the CloudflareTunnel CRD's rule on
// requestedAt lifted, as before the rule existed, until create succeeds;
// then puts the rule back and waits until the API server applies it again.
func withoutTheRule(t *testing.T, create func() error) {
	t.Helper()
	ctx := context.Background()
	crd := &unstructured.Unstructured{}
	crd.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"})
	key := client.ObjectKey{Name: "cloudflaretunnels." + v1alpha1.SchemeGroupVersion.Group}
	path := []string{"schema", "openAPIV3Schema", "properties", "spec", "properties", "tokenRotation", "properties", "requestedAt", "x-kubernetes-validations"}
	var rule []any
	edit := func(set func(version map[string]any)) {
		wait.Eventually(t, wait.Patience, "the CRD edited", func() error {
			if err := p.Client.Get(ctx, key, crd); err != nil {
				return err
			}
			versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
			for _, v := range versions {
				set(v.(map[string]any))
			}
			if err := unstructured.SetNestedSlice(crd.Object, versions, "spec", "versions"); err != nil {
				return err
			}
			return p.Client.Update(ctx, crd)
		})
	}
	edit(func(v map[string]any) {
		if r, ok, _ := unstructured.NestedSlice(v, path...); ok {
			rule = r
		}
		unstructured.RemoveNestedField(v, path...)
	})
	if rule == nil {
		t.Fatal("the CRD has no rule on requestedAt")
	}
	restore := func() {
		edit(func(v map[string]any) { _ = unstructured.SetNestedSlice(v, rule, path...) })
	}
	defer restore()
	wait.Eventually(t, wait.Patience, "a create without the rule", create)
}
