// Package controller wires every controller of the provider.
package controller

import (
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/cloudflaretunnel"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/config"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/dnsrecord"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/hostnameroute"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/ingress"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/tunnel"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/vpcservice"
)

// SetupGated registers every controller to start once its CRDs are
// established (Crossplane's safe-start).
func SetupGated(mgr ctrl.Manager, o controller.Options) error {
	for _, setup := range []func(ctrl.Manager, controller.Options) error{
		config.SetupGated,
		cloudflaretunnel.SetupGated,
		dnsrecord.SetupGated,
		hostnameroute.SetupGated,
		ingress.SetupGated,
		tunnel.SetupGated,
		vpcservice.SetupGated,
	} {
		if err := setup(mgr, o); err != nil {
			return err
		}
	}
	return nil
}
