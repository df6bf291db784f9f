// Package changelog connects the managed resource reconcilers to Crossplane's
// change log service: every create, update and delete they make is sent, as
// an entry, over a Unix socket to a receiver (Crossplane's changelogs
// sidecar in the provider's pod, which writes each entry to its log).
//
// An entry is crossplane-runtime's: the kind, name and external-name of the
// managed resource, the operation, its error if it failed, and a snapshot
// of the resource as it was before the operation (metadata, spec, status).
// Connection details (a tunnel's run token, a service token's client
// secret) are never part of it: they go to the connection Secret, which the
// managed reconciler publishes apart from the resource.
package changelog

import (
	"path/filepath"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/crossplane/crossplane-runtime/v2/apis/changelogs/proto/v1alpha1"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
)

// DefaultSocketPath is where Crossplane's changelogs sidecar listens, in a
// volume its container and the provider's share.
const DefaultSocketPath = "/var/run/changelogs/changelogs.sock"

// SendTimeout bounds how long a reconcile waits for the receiver to take
// one entry (crossplane-runtime waits for the socket to be ready within
// it): a receiver that is down delays each change by this much, and the
// change is made all the same.
const SendTimeout = 10 * time.Second

// Logger is a change logger sending to the receiver at socketPath, as
// providerVersion ("provider-cloudflare-tunnel:<version>"), and the
// function that closes its connection. Nothing is dialled until the first
// entry is sent, so a receiver that starts later is found.
func Logger(socketPath, providerVersion string) (managed.ChangeLogger, func() error, error) {
	if !filepath.IsAbs(socketPath) {
		return nil, nil, errors.Errorf("the change log socket path %q is not absolute", socketPath)
	}
	conn, err := grpc.NewClient("unix://"+socketPath, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, nil, errors.Wrapf(err, "cannot make a change log client for %s", socketPath)
	}
	l := managed.NewGRPCChangeLogger(v1alpha1.NewChangeLogServiceClient(conn),
		managed.WithProviderVersion(providerVersion), managed.WithSendTimeout(SendTimeout))
	return l, conn.Close, nil
}
