// Command changelogs-receiver serves Crossplane's change log service on a
// Unix socket and writes every entry it receives to stdout as one line of
// JSON, as Crossplane's changelogs sidecar does in a provider's pod. make
// e2e-crossplane runs the provider on the host, where no sidecar can run
// beside it; this stands in for it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/changelog"
)

func main() {
	socket := flag.String("socket-path", changelog.DefaultSocketPath, "Unix socket to serve the change log service on.")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := changelog.NewReceiver(os.Stdout).Serve(ctx, *socket); err != nil {
		fmt.Fprintln(os.Stderr, "changelogs-receiver:", err)
		os.Exit(1)
	}
}
