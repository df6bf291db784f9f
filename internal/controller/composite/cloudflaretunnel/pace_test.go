package cloudflaretunnel

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	dnsv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/dns/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/publish"
)

// recordingQueue records what is added to it, and when it may run.
type recordingQueue struct {
	workqueue.TypedRateLimitingInterface[reconcile.Request]
	added []queued
}

type queued struct {
	Req   reconcile.Request
	After time.Duration
}

func (q *recordingQueue) Add(req reconcile.Request) { q.added = append(q.added, queued{Req: req}) }
func (q *recordingQueue) AddAfter(req reconcile.Request, d time.Duration) {
	q.added = append(q.added, queued{Req: req, After: d})
}

func TestFanInIsPaced(t *testing.T) {
	tunnel := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "edge"}}
	other := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "other"}}
	record := func(tunnelName string) *dnsv1alpha1.DNSRecord {
		return &dnsv1alpha1.DNSRecord{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "r", Labels: map[string]string{publish.LabelTunnel: tunnelName}}}
	}
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	p := newPacer(time.Second)
	p.now = func() time.Time { return now }
	h := p.paced(handler.EnqueueRequestsFromMapFunc(labelledTunnel))
	q := &recordingQueue{}
	ctx := context.Background()
	change := func(tunnelName string) {
		h.Update(ctx, ctrlevent.UpdateEvent{ObjectOld: record(tunnelName), ObjectNew: record(tunnelName)}, q)
	}

	change("edge") // never reconciled: at once
	p.started(tunnel)
	now = now.Add(300 * time.Millisecond)
	change("edge")  // 300ms after its reconcile began: the interval's rest
	change("other") // another tunnel is not held back
	now = now.Add(time.Second)
	change("edge") // idle for longer than the interval: at once
	p.forget(tunnel)
	p.started(other)
	p.forget(other)
	change("other") // forgotten: at once

	want := []queued{
		{Req: tunnel},
		{Req: tunnel, After: 700 * time.Millisecond},
		{Req: other},
		{Req: tunnel},
		{Req: other},
	}
	if diff := cmp.Diff(want, q.added); diff != "" {
		t.Errorf("queued: -want +got:\n%s", diff)
	}
}

func TestNilPacerPacesNothing(t *testing.T) {
	var p *pacer
	req := reconcile.Request{NamespacedName: types.NamespacedName{Name: "edge"}}
	p.started(req)
	p.forget(req)
}
