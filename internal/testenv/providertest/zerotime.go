package providertest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

// WaitAnswered waits until the managed resource mg is answered with a False
// condition (of one of types) of the given reason and a Warning event saying what (every
// want), its finalizer written (the controller's whole-object writes go
// through), and fails if it is ever seen with Synced reason
// ReconcileError: a refused input is answered, never wedged.
func (p *Provider) WaitAnswered(t *testing.T, mg resource.Managed, types []xpv2.ConditionType, reason xpv2.ConditionReason, want ...string) xpv2.Condition {
	t.Helper()
	var got xpv2.Condition
	wait.Eventually(t, wait.Patience, fmt.Sprintf("%s answered %s with its finalizer", mg.GetName(), reason), func() error {
		if err := p.Get(mg); err != nil {
			return err
		}
		if s := mg.GetCondition(xpv2.TypeSynced); s.Reason == xpv2.ReasonReconcileError {
			t.Fatalf("wedged: Synced=%s %s: %s", s.Status, s.Reason, s.Message)
		}
		if len(mg.GetFinalizers()) == 0 {
			return fmt.Errorf("no finalizer yet; Synced: %+v", mg.GetCondition(xpv2.TypeSynced))
		}
		var seen []xpv2.Condition
		for _, ct := range types {
			c := mg.GetCondition(ct)
			if c.Reason == reason && c.Status == corev1.ConditionFalse {
				got = c
				return nil
			}
			seen = append(seen, c)
		}
		return fmt.Errorf("conditions %+v", seen)
	})
	wait.Eventually(t, wait.Patience, "a Warning event saying "+strings.Join(want, ", "), func() error {
		evs := &corev1.EventList{}
		if err := p.Client.List(context.Background(), evs, client.InNamespace(mg.GetNamespace())); err != nil {
			return err
		}
		for _, e := range evs.Items {
			if e.InvolvedObject.Name == mg.GetName() && e.Type == corev1.EventTypeWarning && containsAll(e.Message, want) {
				return nil
			}
		}
		return fmt.Errorf("none of %d events", len(evs.Items))
	})
	return got
}

func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
