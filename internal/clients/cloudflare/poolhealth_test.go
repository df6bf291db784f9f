package cloudflare

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare/budget"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim/contract"
)

// Both shapes the OpenAPI document gives the health answer: its schema's
// (one unnamed region) and its example's (regions by name).
func TestParsePoolHealth(t *testing.T) {
	for name, c := range map[string]struct {
		raw     string
		want    *PoolHealth
		wantErr bool
	}{
		"the schema's shape": {
			raw: `{"pool_id":"p","pop_health":{"healthy":false,"origins":[{"a.example.net":{"healthy":false,"failure_reason":"HTTP timeout","rtt":"0ms"}},{"b.example.net":{"healthy":true,"response_code":200,"rtt":"1ms"}}]}}`,
			want: &PoolHealth{PoolID: "p", Regions: []RegionHealth{{Healthy: false, Origins: []OriginHealth{
				{Address: "a.example.net", FailureReason: "HTTP timeout"},
				{Address: "b.example.net", Healthy: true, ResponseCode: ptr.To[int64](200)},
			}}}},
		},
		"the example's shape, regions sorted": {
			raw: `{"pool_id":"p","pop_health":{"Singapore, SG":{"healthy":false,"origins":[{"2001:DB8::5":{"healthy":false,"failure_reason":"Response code mismatch error","response_code":503}}]},"Amsterdam, NL":{"healthy":true,"origins":[{"2001:DB8::5":{"failure_reason":"No failures","healthy":true,"response_code":401,"rtt":"12.1ms"}}]}}}`,
			want: &PoolHealth{PoolID: "p", Regions: []RegionHealth{
				{Region: "Amsterdam, NL", Healthy: true, Origins: []OriginHealth{{Address: "2001:DB8::5", Healthy: true, FailureReason: "No failures", ResponseCode: ptr.To[int64](401)}}},
				{Region: "Singapore, SG", Origins: []OriginHealth{{Address: "2001:DB8::5", FailureReason: "Response code mismatch error", ResponseCode: ptr.To[int64](503)}}},
			}},
		},
		"not probed: no regions":       {raw: `{"pool_id":"p","pop_health":{}}`, want: &PoolHealth{PoolID: "p"}},
		"a region without its verdict": {raw: `{"pool_id":"p","pop_health":{"Amsterdam, NL":{"origins":[]}}}`, wantErr: true},
		"not an object":                {raw: `[]`, wantErr: true},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := ParsePoolHealth([]byte(c.raw))
			if (err != nil) != c.wantErr {
				t.Fatalf("error = %v, want one: %t", err, c.wantErr)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// The health endpoint through the simulator, checked against the document;
// within the observation TTL a second read is served from the cache, and a
// deleted pool's health is forgotten.
func TestPoolHealthIsReadOncePerTTL(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, sim.Options{}, 0)
	c := NewCached(clients.Config{Token: testToken, AccountID: testAccount, Endpoint: f.srv.URL + "/client/v4/"}, Options{
		Budgets: budget.NewRegistry(budget.Options{Limit: 100000}), Transport: contract.NewTransport(t, http.DefaultTransport), ObservationTTL: time.Minute,
	})
	pool := must(c.CreatePool(ctx, PoolInput{Name: "a", Enabled: true, MinimumOrigins: 1, Origins: []PoolOrigin{{Name: "o", Address: "origin.example.net", Enabled: true, Weight: 1}}}))
	h := must(c.GetPoolHealth(ctx, pool.ID))
	want := &PoolHealth{PoolID: pool.ID, Regions: []RegionHealth{{Healthy: true, Origins: []OriginHealth{{Address: "origin.example.net", Healthy: true, ResponseCode: ptr.To[int64](200)}}}}}
	if diff := cmp.Diff(want, h); diff != "" {
		t.Errorf("health (-want +got):\n%s", diff)
	}
	must(c.GetPoolHealth(ctx, pool.ID))
	if n := f.sim.Served("GET", "/pools/"+pool.ID+"/health"); n != 1 {
		t.Errorf("two reads within the TTL sent %d requests, want 1", n)
	}
	must(0, c.DeletePool(ctx, pool.ID))
	if _, err := c.GetPoolHealth(ctx, pool.ID); !IsNotFound(err) {
		t.Errorf("the health of a deleted pool: %v, want not found", err)
	}
}
