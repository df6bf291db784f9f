package controller

import (
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
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
