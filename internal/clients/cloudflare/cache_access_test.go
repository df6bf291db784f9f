package cloudflare

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
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

// Groups and service tokens ride snapshots too: one list for every
// observation of each kind; a token's rotation is recorded from its answer
// (the snapshot holds what Cloudflare lists, never the secret).
func TestAccessGroupsAndServiceTokensRideTheSnapshots(t *testing.T) {
	ctx := context.Background()
	f, c := cachedFixture(t, time.Hour)
	var groups, tokens []string
	for i := range 10 {
		g := must(f.client.CreateAccessGroup(ctx, AccessGroupInput{Name: fmt.Sprintf("g%d", i), Include: []json.RawMessage{json.RawMessage(`{"everyone":{}}`)}}))
		tok := must(f.client.CreateServiceToken(ctx, ServiceTokenInput{Name: fmt.Sprintf("t%d", i)}))
		groups, tokens = append(groups, g.ID), append(tokens, tok.ID)
	}
	f.sim.ResetStats()
	var wg sync.WaitGroup
	for i := range groups {
		wg.Go(func() {
			if _, err := c.GetAccessGroup(ctx, groups[i]); err != nil {
				t.Error(err)
			}
			if _, err := c.GetServiceToken(ctx, tokens[i]); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	st := f.sim.Stats()
	if st["access_groups.list"].Requests != 1 || st["access_groups.get"].Requests != 0 || st["access_service_tokens.list"].Requests != 1 || st["access_service_tokens.get"].Requests != 0 {
		t.Errorf("20 observations cost groups %d lists %d gets, tokens %d lists %d gets; want one list each", st["access_groups.list"].Requests, st["access_groups.get"].Requests, st["access_service_tokens.list"].Requests, st["access_service_tokens.get"].Requests)
	}

	must(c.UpdateServiceToken(ctx, tokens[0], ServiceTokenInput{Name: "renamed"}))
	must(c.RefreshServiceToken(ctx, tokens[0]))
	rotated := must(c.RotateServiceToken(ctx, tokens[0], nil))
	if rotated.ClientSecret.Reveal() == "" {
		t.Error("the rotation's answer lost its secret")
	}
	live := must(f.client.GetServiceToken(ctx, tokens[0]))
	f.sim.ResetStats()
	got := must(c.GetServiceToken(ctx, tokens[0]))
	if n := f.sim.TotalRequests(); n != 0 {
		t.Errorf("a token written through the cache then read: %d requests, want 0", n)
	}
	if diff := cmp.Diff(live, got); diff != "" {
		t.Errorf("the snapshot after the writes (-Cloudflare +snapshot):\n%s", diff)
	}
	must(struct{}{}, c.DeleteAccessGroup(ctx, groups[0]))
	if _, err := c.GetAccessGroup(ctx, groups[0]); !IsNotFound(err) {
		t.Errorf("a deleted group: got %v, want not found", err)
	}
}

// Lookups of what creates left share a list sent after their creates
// ended (ListedAfter) instead of listing once each; without a time, a
// lookup lists now.
func TestListsAfterACreateAreShared(t *testing.T) {
	ctx := context.Background()
	f, c := cachedFixture(t, time.Hour)
	failedAt := time.Now()
	for range 5 {
		must(c.ListAccessApplications(ListedAfter(ctx, failedAt)))
	}
	if n := f.sim.Stats()["access_apps.list"].Requests; n != 1 {
		t.Errorf("5 lookups after creates that ended at the same time: %d lists, want 1", n)
	}
	must(c.ListAccessApplications(ctx))
	if n := f.sim.Stats()["access_apps.list"].Requests; n != 2 {
		t.Errorf("a list asked for without a time: %d lists in all, want 2 (it lists now)", n)
	}
}
