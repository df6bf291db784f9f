package changelog

import (
	"context"
	"io"
	"net"
	"os"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/crossplane/crossplane-runtime/v2/apis/changelogs/proto/v1alpha1"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

// Receiver serves the change log service as Crossplane's changelogs sidecar
// does: each entry it receives is written to Out as one line of JSON
// (protojson, the sidecar's format). It stands in for the sidecar where the
// provider runs outside a pod (make e2e-crossplane, integration tests).
type Receiver struct {
	v1alpha1.UnimplementedChangeLogServiceServer

	mu  sync.Mutex
	out io.Writer
}

// NewReceiver writes the entries it receives to out.
func NewReceiver(out io.Writer) *Receiver { return &Receiver{out: out} }

// SendChangeLog writes the request's entry.
func (r *Receiver) SendChangeLog(_ context.Context, req *v1alpha1.SendChangeLogRequest) (*v1alpha1.SendChangeLogResponse, error) {
	if req.GetEntry() == nil {
		return nil, status.Error(codes.InvalidArgument, "the request has no change log entry")
	}
	b, err := protojson.Marshal(req.GetEntry())
	if err != nil {
		return nil, status.Error(codes.Internal, errors.Wrap(err, "cannot marshal the change log entry").Error())
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, err := r.out.Write(append(b, '\n')); err != nil {
		return nil, status.Error(codes.Internal, errors.Wrap(err, "cannot write the change log entry").Error())
	}
	return &v1alpha1.SendChangeLogResponse{}, nil
}

// Serve listens on the Unix socket socketPath (replacing a stale socket
// file) and serves r until ctx ends.
func (r *Receiver) Serve(ctx context.Context, socketPath string) error {
	if err := os.Remove(socketPath); err != nil && !os.IsNotExist(err) {
		return errors.Wrapf(err, "cannot remove the stale socket %s", socketPath)
	}
	lis, err := net.Listen("unix", socketPath)
	if err != nil {
		return errors.Wrapf(err, "cannot listen on %s", socketPath)
	}
	s := grpc.NewServer()
	v1alpha1.RegisterChangeLogServiceServer(s, r)
	stop := context.AfterFunc(ctx, s.GracefulStop)
	defer stop()
	return errors.Wrap(s.Serve(lis), "cannot serve the change log service")
}
