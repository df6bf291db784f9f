package controller

import (
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
)

func TestKubeOnlyCapsWorkers(t *testing.T) {
	cases := map[string]struct {
		reason string
		given  int
		want   int
	}{
		"Default": {
			reason: "The default --max-reconcile-rate of 100 gives a Kubernetes-only controller KubeWorkers workers.",
			given:  DefaultMaxReconcileRate,
			want:   KubeWorkers,
		},
		"Fewer": {
			reason: "A rate set below KubeWorkers is kept: the user asked for fewer reconciles at once.",
			given:  3,
			want:   3,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := kubeOnly(controller.Options{MaxConcurrentReconciles: tc.given}).MaxConcurrentReconciles
			if got != tc.want {
				t.Errorf("%s\nkubeOnly(%d): want %d workers, got %d", tc.reason, tc.given, tc.want, got)
			}
		})
	}
}

func TestDNSRecordWorkers(t *testing.T) {
	cases := map[string]struct {
		reason      string
		rate        int
		batching    cloudflare.DNSBatching
		wantWorkers int
	}{
		"Batching": {
			reason:      "A DNSRecord worker waits for its batch, so the controller runs as many as a free zone's batch holds.",
			rate:        DefaultMaxReconcileRate,
			batching:    cloudflare.DefaultDNSBatching(),
			wantWorkers: DNSRecordWorkers,
		},
		"SmallBatches": {
			reason:      "Batches smaller than --max-reconcile-rate leave the rate's workers.",
			rate:        DefaultMaxReconcileRate,
			batching:    cloudflare.DNSBatching{Window: time.Second, Size: 50},
			wantWorkers: DefaultMaxReconcileRate,
		},
		"PaidPlanBatches": {
			reason:      "A paid plan's 3,500-record batches do not make 3,500 workers.",
			rate:        DefaultMaxReconcileRate,
			batching:    cloudflare.DNSBatching{Window: time.Second, Size: 3500},
			wantWorkers: DNSRecordWorkers,
		},
		"HigherRate": {
			reason:      "A higher --max-reconcile-rate is kept.",
			rate:        500,
			batching:    cloudflare.DefaultDNSBatching(),
			wantWorkers: 500,
		},
		"NoBatching": {
			reason:      "Without batching no worker waits for a batch: the rate's workers, and no writers counted.",
			rate:        DefaultMaxReconcileRate,
			batching:    cloudflare.DNSBatching{},
			wantWorkers: DefaultMaxReconcileRate,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o, b := dnsRecordWorkers(controller.Options{MaxConcurrentReconciles: tc.rate}, tc.batching)
			if o.MaxConcurrentReconciles != tc.wantWorkers {
				t.Errorf("%s\nworkers: want %d, got %d", tc.reason, tc.wantWorkers, o.MaxConcurrentReconciles)
			}
			wantWriters := 0
			if tc.batching.Enabled() {
				wantWriters = tc.wantWorkers
			}
			if b.Writers != wantWriters {
				t.Errorf("%s\nbatch writers: want %d, got %d", tc.reason, wantWriters, b.Writers)
			}
		})
	}
}
