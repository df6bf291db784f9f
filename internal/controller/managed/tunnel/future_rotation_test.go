package tunnel_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/rotation"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

// TestATokenRotationInTheFuture (issue 34, bug 4), on the Tunnel managed
// resource: a request later than now plus the skew is refused and not
// served (TokenRotation False/RotationRequestInFuture naming the value and
// the limit, and a Warning event); a far-future request that a version
// before this one served is no bar to a real one: removed, then set again
// to now, it rotates.
func TestATokenRotationInTheFuture(t *testing.T) {
	ctx := context.Background()
	ns := p.Namespace(t)
	cr := newTunnel(ns, "future", "future-"+ns)
	p.Create(t, cr)
	p.WaitReady(t, cr)
	old := secretToken(t, ns, "future-token")

	setRotation(t, cr, &v1alpha1.TokenRotation{RequestedAt: metav1.NewTime(time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC))})
	var c string
	wait.Eventually(t, wait.Patience, "TokenRotation False/RotationRequestInFuture", func() error {
		if err := p.Get(cr); err != nil {
			return err
		}
		got := cr.GetCondition(rotation.TypeTokenRotation)
		if got.Status != corev1.ConditionFalse || got.Reason != rotation.ReasonRequestInFuture {
			return fmt.Errorf("TokenRotation is %s/%s: %s", got.Status, got.Reason, got.Message)
		}
		c = got.Message
		return nil
	})
	for _, want := range []string{"spec.forProvider.tokenRotation.requestedAt 2099-01-01T00:00:00Z", "now plus 5m0s"} {
		if !strings.Contains(c, want) {
			t.Errorf("TokenRotation message %q does not say %q", c, want)
		}
	}
	wait.Eventually(t, wait.Patience, "a Warning event saying why", func() error {
		evs := &corev1.EventList{}
		if err := p.Client.List(ctx, evs, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, e := range evs.Items {
			if e.InvolvedObject.Name == cr.Name && e.Type == corev1.EventTypeWarning && strings.Contains(e.Message, "2099-01-01T00:00:00Z is later than") {
				return nil
			}
		}
		return fmt.Errorf("no such event")
	})
	if err := p.Get(cr); err != nil {
		t.Fatal(err)
	}
	if cr.Status.AtProvider.TokenRotation != nil || secretToken(t, ns, "future-token") != old {
		t.Fatalf("a refused request was served: %+v", cr.Status.AtProvider.TokenRotation)
	}

	// As a version before this one left it: the 2099 request served an
	// hour ago.
	hourAgo := metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))
	wait.Eventually(t, wait.Patience, "a served 2099 request in status", func() error {
		if err := p.Get(cr); err != nil {
			return err
		}
		cr.Status.AtProvider.TokenRotation = &v1alpha1.TokenRotationObservation{
			RequestedAt: cr.Spec.ForProvider.TokenRotation.RequestedAt, RotatedAt: &hourAgo, StaleConnectorsRemovedAt: &hourAgo, ReplacedTokenChecksum: "0",
		}
		return p.Client.Status().Update(ctx, cr)
	})
	setRotation(t, cr, nil)
	setRotation(t, cr, &v1alpha1.TokenRotation{RequestedAt: metav1.Now()})
	wait.Eventually(t, wait.Patience, "a new token", func() error {
		if secretToken(t, ns, "future-token") == old {
			return fmt.Errorf("the Secret holds the old token")
		}
		return nil
	})
	wait.Eventually(t, wait.Patience, "TokenRotation True/TokenRotated", func() error {
		if err := p.Get(cr); err != nil {
			return err
		}
		if got := cr.GetCondition(rotation.TypeTokenRotation); got.Status != corev1.ConditionTrue || got.Reason != rotation.ReasonTokenRotated {
			return fmt.Errorf("TokenRotation is %s/%s: %s", got.Status, got.Reason, got.Message)
		}
		return nil
	})
	p.DeleteAndWait(t, cr)
}

func setRotation(t *testing.T, cr *v1alpha1.Tunnel, r *v1alpha1.TokenRotation) {
	t.Helper()
	wait.Eventually(t, wait.Patience, "spec.forProvider.tokenRotation set", func() error {
		if err := p.Get(cr); err != nil {
			return err
		}
		cr.Spec.ForProvider.TokenRotation = r
		return p.Client.Update(context.Background(), cr)
	})
}

func secretToken(t *testing.T, ns, name string) string {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	wait.Eventually(t, wait.Patience, "the token Secret", func() error { return p.Get(s) })
	return string(s.Data["token"])
}
