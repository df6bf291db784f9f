package e2e

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/composite/cloudflaretunnel"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

// readyWatch follows a Deployment's status.readyReplicas through every
// change the API server records (a watch, so no moment between two polls
// is missed) and remembers the lowest.
type readyWatch struct {
	mu      sync.Mutex
	min     int32
	changes int
	surged  bool // saw more pods than replicas: a rollout in progress
	err     error
	cancel  context.CancelFunc
	done    chan struct{}
}

func watchReady(t *testing.T, ctx context.Context, dep client.ObjectKey, replicas int32) *readyWatch {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	w := &readyWatch{min: replicas, cancel: cancel, done: make(chan struct{})}
	watcher, err := env.clientset.AppsV1().Deployments(dep.Namespace).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + dep.Name})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(w.done)
		defer watcher.Stop()
		for ev := range watcher.ResultChan() {
			d, ok := ev.Object.(*appsv1.Deployment)
			w.mu.Lock()
			switch {
			case ok:
				w.changes++
				w.min = min(w.min, d.Status.ReadyReplicas)
				w.surged = w.surged || d.Status.Replicas > replicas
			case ctx.Err() == nil:
				w.err = fmt.Errorf("watch event %s: %v", ev.Type, ev.Object)
			}
			w.mu.Unlock()
		}
		if ctx.Err() == nil {
			w.mu.Lock()
			w.err = fmt.Errorf("the watch ended before the rotation did")
			w.mu.Unlock()
		}
	}()
	return w
}

func (w *readyWatch) end() (minReady int32, changes int, surged bool, err error) {
	w.cancel()
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.min, w.changes, w.surged, w.err
}

// TestTokenRotationKeepsAReadyReplica: a rotation requested on a running
// CloudflareTunnel gives the token Secret a new token Cloudflare accepts
// (and refuses the old), rolls the cloudflared pods onto it while at least
// one replica is ready at every moment, and then removes the connectors
// that ran with the old token.
func TestTokenRotationKeepsAReadyReplica(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t, "rotation")
	cft := &v1alpha1.CloudflareTunnel{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "edge"},
		Spec:       v1alpha1.CloudflareTunnelSpec{TunnelName: ptr.To("e2e-" + ns + "-edge"), Replicas: ptr.To[int32](2)},
	}
	if err := env.kube.Create(ctx, cft); err != nil {
		t.Fatal(err)
	}
	wait.Eventually(t, 2*time.Minute, "DeploymentReady", func() error {
		if err := env.kube.Get(ctx, client.ObjectKeyFromObject(cft), cft); err != nil {
			return err
		}
		if c := cft.GetCondition(cloudflaretunnel.TypeDeploymentReady); c.Status != corev1.ConditionTrue || cft.Status.TunnelID == "" {
			return fmt.Errorf("DeploymentReady %s %s, tunnel %q", c.Reason, c.Message, cft.Status.TunnelID)
		}
		return nil
	})
	id := cft.Status.TunnelID
	token := func() string {
		s := &corev1.Secret{}
		if err := env.kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: "edge-token"}, s); err != nil {
			t.Fatal(err)
		}
		return string(s.Data["token"])
	}
	// The test plays cloudflared (the KWOK pods run nothing): the two
	// running replicas connect with the token they were started with.
	old := token()
	var stale []string
	for range 2 {
		c, err := env.sim.Connect(old)
		if err != nil {
			t.Fatal(err)
		}
		stale = append(stale, c)
	}

	depKey := client.ObjectKey{Namespace: ns, Name: "edge-cloudflared"}
	watch := watchReady(t, ctx, depKey, 2)
	wait.Eventually(t, time.Minute, "rotation requested", func() error {
		if err := env.kube.Get(ctx, client.ObjectKeyFromObject(cft), cft); err != nil {
			return err
		}
		cft.Spec.TokenRotation = &v1alpha1.TokenRotationRequest{RequestedAt: metav1.Now()}
		return env.kube.Update(ctx, cft)
	})
	var fresh string
	wait.Eventually(t, time.Minute, "a new token in the Secret", func() error {
		if fresh = token(); fresh == old {
			return fmt.Errorf("still the old token")
		}
		return nil
	})
	if _, err := env.sim.Connect(old); err == nil {
		t.Error("Cloudflare accepts the replaced token")
	}
	// The new pods connect with the new token.
	var current []string
	for range 2 {
		c, err := env.sim.Connect(fresh)
		if err != nil {
			t.Fatalf("Cloudflare refuses the new token: %v", err)
		}
		current = append(current, c)
	}
	wait.Eventually(t, 2*time.Minute, "the Deployment rolled out onto the new token", func() error {
		d := &appsv1.Deployment{}
		if err := env.kube.Get(ctx, depKey, d); err != nil {
			return err
		}
		if !cloudflaretunnel.RolloutComplete(d, 2, cloudflaretunnel.TokenChecksum([]byte(fresh))) {
			return fmt.Errorf("status %+v", d.Status)
		}
		return nil
	})
	wait.Eventually(t, time.Minute, "the connectors of the old token removed", func() error {
		cs, err := env.cf.TunnelConnectors(ctx, id)
		if err != nil {
			return err
		}
		var ids []string
		for _, c := range cs {
			ids = append(ids, c.ID)
		}
		slices.Sort(ids)
		slices.Sort(current)
		if !slices.Equal(ids, current) {
			return fmt.Errorf("connectors %v, want only the new %v (stale %v)", ids, current, stale)
		}
		return nil
	})
	minReady, changes, surged, err := watch.end()
	t.Logf("the Deployment changed %d times during the rotation: readyReplicas at least %d throughout, surge seen %v", changes, minReady, surged)
	if err != nil || minReady < 1 || !surged {
		t.Errorf("readyReplicas fell to %d over %d changes (surge seen %v, watch error %v): want a rollout that kept a ready replica", minReady, changes, surged, err)
	}
	if err := env.kube.Get(ctx, client.ObjectKeyFromObject(cft), cft); err != nil || cft.Status.TokenRotatedAt == nil {
		t.Errorf("status.tokenRotatedAt %v (%v)", cft.Status.TokenRotatedAt, err)
	}

	env.sim.SetConnectors(id, 0)
	if err := env.kube.Delete(ctx, cft); err != nil {
		t.Fatal(err)
	}
	wait.Eventually(t, 2*time.Minute, "the CloudflareTunnel gone", func() error {
		if err := env.kube.Get(ctx, client.ObjectKeyFromObject(cft), cft); err == nil {
			return fmt.Errorf("still there")
		}
		return nil
	})
}
