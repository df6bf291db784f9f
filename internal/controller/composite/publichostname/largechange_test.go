package publichostname_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/composite/cloudflaretunnel"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

// largeChange is how many protected hostnames the large change brings, and
// arrival how far apart their Access checks become ready: a trickle, as
// when each waits for an Access application made one at a time under the
// request budget.
const (
	largeChange = 60
	arrival     = 750 * time.Millisecond
)

// A large change of protected hostnames whose Access checks become ready
// one by one, over nine batch windows, goes out in a few configuration
// writes, not one per window; a single protected hostname added once the
// change is over is published within the short window. Its hostnames are
// in a zone of their own (example.org): sixty records put a zone in DNS
// batching's long window, which would hold the records of the package's
// next tests, all in example.com.
func TestALargeProtectedChangeIsWrittenInFewWrites(t *testing.T) {
	ns, tunnelID := setup(t)
	var phs []*v1alpha1.PublicHostname
	var policies []*ztv1alpha1.AccessPolicy
	t.Cleanup(func() { deleteAll(t, phs, policies) })
	// Each names a policy of its own that does not exist yet, so the test
	// decides when each hostname's check can be made.
	waitingForPolicies(t, ns, "h", largeChange, func(i int) string { return fmt.Sprintf("p%d", i) }, &phs)
	_, before := config(t, tunnelID)

	tick := time.NewTicker(arrival)
	defer tick.Stop()
	for i := range largeChange {
		policy := accessPolicy(ns, fmt.Sprintf("p%d", i), ztv1alpha1.AccessRule{EmailDomain: ptr.To("example.com")})
		p.Create(t, policy)
		policies = append(policies, policy)
		<-tick.C
	}
	for _, ph := range phs {
		wait.Eventually(t, wait.Patience, ph.Name+" protected in the configuration", func() error {
			return protected(t, tunnelID, ph.Spec.Hostname, "")
		})
	}
	_, after := config(t, tunnelID)
	// One write per batch window is about largeChange × arrival ÷
	// DefaultConfigBatchWindow = 9, and one more for the last. The long
	// window allows two writes while ten or more hostnames are on their
	// way (one at once, one a long window later), and the last nine
	// arrive over under two short windows: three writes.
	if writes := after - before; writes > 5 {
		t.Errorf("%d configuration writes for %d protected hostnames arriving over %s, want at most 5", writes, largeChange, largeChange*arrival)
	} else {
		t.Logf("%d configuration writes for %d protected hostnames arriving over %s", writes, largeChange, largeChange*arrival)
	}

	t.Run("ASingleHostnameAtRestGetsTheShortWindow", func(t *testing.T) {
		ph := hostname(ns, "single", "single-"+ns+".example.org", func(ph *v1alpha1.PublicHostname) {
			ph.Spec.Access = &v1alpha1.Access{Policies: []v1alpha1.AccessPolicyName{{Name: "p0"}}}
		})
		start := time.Now()
		p.Create(t, ph)
		phs = append(phs, ph)
		wait.Eventually(t, wait.Patience, "the single hostname protected in the configuration", func() error {
			return protected(t, tunnelID, ph.Spec.Hostname, "")
		})
		// The short window and the making of its Access application; the
		// long window alone would be six short ones.
		long := cloudflaretunnel.LargeChangeWindows * cloudflaretunnel.DefaultConfigBatchWindow
		if took := time.Since(start); took >= long/2 {
			t.Errorf("a single protected hostname took %s to be published, want well within the large change's window of %s", took, long)
		} else {
			t.Logf("a single protected hostname published in %s", took)
		}
	})
}

// deleteAll deletes the hostnames, then the policies, and waits for each to
// be gone: all at once, so their configuration writes coalesce.
func deleteAll(t *testing.T, phs []*v1alpha1.PublicHostname, policies []*ztv1alpha1.AccessPolicy) {
	t.Helper()
	for _, ph := range phs {
		if err := p.Client.Delete(context.Background(), ph); err != nil && !kerrors.IsNotFound(err) {
			t.Error(err)
		}
	}
	for _, ph := range phs {
		wait.Eventually(t, wait.Patience, ph.Name+" gone", func() error {
			if err := p.Get(ph); !kerrors.IsNotFound(err) {
				return fmt.Errorf("still there (%v)", err)
			}
			return nil
		})
	}
	for _, policy := range policies {
		p.DeleteAndWait(t, policy)
	}
}
