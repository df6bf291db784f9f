package cloudflare

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"
)

// Observing 20 Access applications and their policy costs one list of each
// kind, not a get each; a list asked for (a lost create, a refused one)
// lists now and sees what was made behind the cache's back; a deleted
// application is not served from the snapshot.
func TestAccessObservationRidesTheSnapshots(t *testing.T) {
	ctx := context.Background()
	f, c := cachedFixture(t, time.Hour)
	pol := must(f.client.CreateAccessPolicy(ctx, AccessPolicyInput{Name: "staff", Decision: "allow", Include: []json.RawMessage{json.RawMessage(`{"everyone":{}}`)}}))
	var apps []string
	for i := range 20 {
		host := fmt.Sprintf("app-%d.example.com", i)
		a := must(f.client.CreateAccessApplication(ctx, AccessApplicationInput{Name: host, Domain: host, AppLauncherVisible: true,
			Destinations: []AccessDestination{{Type: "public", URI: host}}, Policies: []AccessPolicyRef{{ID: pol.ID, Precedence: 1}}}))
		apps = append(apps, a.ID)
	}
	f.sim.ResetStats()

	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if o, err := c.GetAccessOrganization(ctx); err != nil || o.AuthDomain == "" {
				t.Errorf("organization %+v, %v", o, err)
			}
		})
	}
	for _, id := range apps {
		wg.Go(func() {
			if _, err := c.GetAccessApplication(ctx, id); err != nil {
				t.Error(err)
			}
			if _, err := c.GetAccessPolicy(ctx, pol.ID); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	st := f.sim.Stats()
	if n := st["access_organizations.get"].Requests; n != 1 {
		t.Errorf("20 reads of the organization cost %d requests, want 1", n)
	}
	if st["access_apps.list"].Requests != 1 || st["access_apps.get"].Requests != 0 || st["access_policies.list"].Requests != 1 || st["access_policies.get"].Requests != 0 {
		t.Errorf("40 observations cost apps %d lists %d gets, policies %d lists %d gets; want one list each", st["access_apps.list"].Requests, st["access_apps.get"].Requests, st["access_policies.list"].Requests, st["access_policies.get"].Requests)
	}

	behind := must(f.client.CreateAccessApplication(ctx, AccessApplicationInput{Name: "behind", Domain: "behind.example.com", AppLauncherVisible: true,
		Destinations: []AccessDestination{{Type: "public", URI: "behind.example.com"}}, Policies: []AccessPolicyRef{{ID: pol.ID, Precedence: 1}}}))
	all := must(c.ListAccessApplications(ctx))
	if len(all) != 21 || f.sim.Stats()["access_apps.list"].Requests != 2 {
		t.Errorf("a list asked for: %d applications after %d lists; want 21, listed anew", len(all), f.sim.Stats()["access_apps.list"].Requests)
	}

	must(struct{}{}, c.DeleteAccessApplication(ctx, behind.ID))
	if _, err := c.GetAccessApplication(ctx, behind.ID); !IsNotFound(err) {
		t.Errorf("a deleted application: got %v, want not found", err)
	}
}
