package providerconfig

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

// TestCoalescedOneReconcilePerBurst: a burst of usage events for one config
// is one queued reconcile, and only after the delay.
func TestCoalescedOneReconcilePerBurst(t *testing.T) {
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	toDefault := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: "default"}}}
	})
	h := coalesced{inner: toDefault, after: 200 * time.Millisecond}
	for range 500 {
		h.Create(context.Background(), event.CreateEvent{Object: &v1alpha1.ProviderConfigUsage{}}, q)
	}
	h.Delete(context.Background(), event.DeleteEvent{Object: &v1alpha1.ProviderConfigUsage{}}, q)
	if n := q.Len(); n != 0 {
		t.Fatalf("queued at once: %d, want 0 until the delay has passed", n)
	}
	// The delaying queue keeps one entry per request, however often it is
	// added: once the delay has passed, the burst is one reconcile.
	wait.Eventually(t, 5*time.Second, "the burst queued once", func() error {
		if n := q.Len(); n != 1 {
			return fmt.Errorf("%d queued, want 1 for the whole burst", n)
		}
		return nil
	})
}
