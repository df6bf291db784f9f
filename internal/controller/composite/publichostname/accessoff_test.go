package publichostname_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	ztv1alpha1 "github.com/context-labs/provider-cloudflare-tunnel/apis/zerotrust/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/composite/cloudflaretunnel"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/composite/publichostname"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

// withPolicy asks for managed Access with the named AccessPolicy.
func withPolicy(name string) func(*v1alpha1.PublicHostname) {
	return func(ph *v1alpha1.PublicHostname) {
		ph.Spec.Access = &v1alpha1.Access{Policies: []v1alpha1.AccessPolicyName{{Name: name}}}
	}
}

// aLargeChangeUnderWay makes LargeChangeHostnames hostnames that wait for an
// AccessPolicy applied with them and not there yet: a large change under
// way, which holds the tunnel's configuration writes on the long window.
// Their hostnames are in example.org, as the large change's are.
func aLargeChangeUnderWay(t *testing.T, ns string) []*v1alpha1.PublicHostname {
	t.Helper()
	var out []*v1alpha1.PublicHostname
	waitingForPolicies(t, ns, "coming", cloudflaretunnel.LargeChangeHostnames, func(int) string { return "coming" }, &out)
	return out
}

// waitingForPolicies makes n hostnames <prefix><i>-<ns>.example.org, the
// i-th protected by the AccessPolicy policy(i), which does not exist yet,
// appends each to made as it is made (for the caller's cleanup), and waits
// until every one says it waits for its policy.
func waitingForPolicies(t *testing.T, ns, prefix string, n int, policy func(int) string, made *[]*v1alpha1.PublicHostname) {
	t.Helper()
	for i := range n {
		ph := hostname(ns, fmt.Sprintf("%s%d", prefix, i), fmt.Sprintf("%s%d-%s.example.org", prefix, i, ns), withPolicy(policy(i)))
		p.Create(t, ph)
		*made = append(*made, ph)
	}
	for _, ph := range (*made)[len(*made)-n:] {
		wait.Eventually(t, wait.Patience, ph.Name+" waiting for its policy", func() error {
			if err := p.Get(ph); err != nil {
				return err
			}
			if c := ph.GetCondition(v1alpha1.TypeValid); c.Reason != publichostname.ReasonWaitingForAccessPolicy {
				return fmt.Errorf("Valid %s %s: %s", c.Status, c.Reason, c.Message)
			}
			return nil
		})
	}
}

// Access taken off a hostname while its tunnel holds configuration writes
// on the long window: its Access application, which guards the hostname at
// Cloudflare's edge, is deleted only once the configuration serving the
// open rules is written, so the hostname is never unserved in between,
// even when the application's audience is not known yet. That is the
// moment between its create in Cloudflare and its next observation, held
// still here: the application's reconciles are paused and its observed
// audience cleared.
func TestAccessTakenOffDuringALargeChangeGoesAfterTheOpenRules(t *testing.T) {
	ns, tunnelID := setup(t)
	staff := accessPolicy(ns, "staff", ztv1alpha1.AccessRule{EmailDomain: ptr.To("example.com")})
	p.Create(t, staff)
	coming := aLargeChangeUnderWay(t, ns)
	host := "taken-off-" + ns + ".example.com"
	ph := hostname(ns, "taken-off", host, withPolicy("staff"))
	p.Create(t, ph)
	t.Cleanup(func() {
		deleteAll(t, append(coming, ph), []*ztv1alpha1.AccessPolicy{staff})
	})
	wait.Eventually(t, wait.Patience+cloudflaretunnel.LargeChangeWindows*cloudflaretunnel.DefaultConfigBatchWindow, host+" protected in the configuration", func() error {
		return protected(t, tunnelID, host, "")
	})

	app := &ztv1alpha1.AccessApplication{}
	key := types.NamespacedName{Namespace: ns, Name: publichostname.ApplicationName(ph)}
	if err := p.Client.Get(context.Background(), key, app); err != nil {
		t.Fatal(err)
	}
	appID := meta.GetExternalName(app)
	pauseUnobserved(t, app)
	t.Cleanup(func() { resume(t, key) })

	edited := time.Now()
	p.Edit(t, ph, func() { ph.Spec.Access = nil })
	wait.Eventually(t, wait.Patience+cloudflaretunnel.LargeChangeWindows*cloudflaretunnel.DefaultConfigBatchWindow, "AccessApplication "+key.Name+" deleted", func() error {
		if err := p.Client.Get(context.Background(), key, app); err != nil {
			return err
		}
		if !meta.WasDeleted(app) {
			return fmt.Errorf("not deleted yet")
		}
		return nil
	})
	c, version := config(t, tunnelID)
	rules := rulesFor(c, host)
	if !servesOpen(rules) {
		t.Fatalf("AccessApplication %s (Cloudflare %s) deleted %s after Access was taken off, while configuration version %d serves %s with %+v: the open rules must be served first", key.Name, appID, time.Since(edited).Round(time.Millisecond), version, host, rules)
	}
	t.Logf("AccessApplication deleted %s after Access was taken off, once configuration version %d served the open rules", time.Since(edited).Round(time.Millisecond), version)
}

// pauseUnobserved pauses the application's reconciles and clears the
// audience it observed, as it is between its create in Cloudflare and its
// next observation.
func pauseUnobserved(t *testing.T, app *ztv1alpha1.AccessApplication) {
	t.Helper()
	p.Edit(t, app, func() { meta.AddAnnotations(app, map[string]string{meta.AnnotationKeyReconciliationPaused: "true"}) })
	wait.Eventually(t, wait.Patience, "AccessApplication "+app.Name+" paused, its audience cleared", func() error {
		if err := p.Get(app); err != nil {
			return err
		}
		if c := app.GetCondition(xpv2.TypeSynced); c.Reason != xpv2.ReasonReconcilePaused {
			return fmt.Errorf("Synced %s %s", c.Status, c.Reason)
		}
		app.Status.AtProvider.AUD = ""
		return p.Client.Status().Update(context.Background(), app)
	})
}

// resume takes the pause off, so the application's deletion reaches
// Cloudflare.
func resume(t *testing.T, key types.NamespacedName) {
	t.Helper()
	wait.Eventually(t, wait.Patience, "AccessApplication "+key.Name+" resumed", func() error {
		app := &ztv1alpha1.AccessApplication{}
		if err := p.Client.Get(context.Background(), key, app); kerrors.IsNotFound(err) {
			return nil
		} else if err != nil {
			return err
		}
		patch := client.MergeFrom(app.DeepCopy())
		meta.RemoveAnnotations(app, meta.AnnotationKeyReconciliationPaused)
		return p.Client.Patch(context.Background(), app, patch)
	})
}

// servesOpen says whether rules serve a hostname, none with an Access check.
func servesOpen(rules []ztv1alpha1.IngressRule) bool {
	for _, r := range rules {
		if r.OriginRequest != nil && r.OriginRequest.Access != nil {
			return false
		}
	}
	return len(rules) > 0
}

// Access asked for on an open hostname while its tunnel holds configuration
// writes on the long window: the open rule leaves Cloudflare's
// configuration within the short window, never held for the large change.
func TestAccessAskedForDuringALargeChangeClosesWithinTheShortWindow(t *testing.T) {
	ns, tunnelID := setup(t)
	coming := aLargeChangeUnderWay(t, ns)
	host := "closing-" + ns + ".example.com"
	ph := hostname(ns, "closing", host)
	p.Create(t, ph)
	t.Cleanup(func() { deleteAll(t, append(coming, ph), nil) })
	long := cloudflaretunnel.LargeChangeWindows * cloudflaretunnel.DefaultConfigBatchWindow
	wait.Eventually(t, wait.Patience+long, host+" served open", func() error {
		if c, _ := config(t, tunnelID); !servesOpen(rulesFor(c, host)) {
			return fmt.Errorf("rules %+v", rulesFor(c, host))
		}
		return nil
	})
	// The configuration was just written: the next change waits a window,
	// the short one or the long one.
	edited := time.Now()
	p.Edit(t, ph, func() { withPolicy("missing")(ph) })
	wait.Eventually(t, wait.Patience, "the open rule gone", func() error {
		if c, _ := config(t, tunnelID); len(rulesFor(c, host)) != 0 {
			return fmt.Errorf("rules still published: %+v", rulesFor(c, host))
		}
		return nil
	})
	if took := time.Since(edited); took >= long/2 {
		t.Errorf("the open rule left the configuration %s after Access was asked for, want well within the large change's window of %s", took, long)
	} else {
		t.Logf("the open rule left the configuration %s after Access was asked for", took)
	}
}
