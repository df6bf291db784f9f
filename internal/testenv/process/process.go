// Package process builds the provider binary and runs it as its own
// process, as a cluster would run it, for tests and benchmarks that need
// the provider apart from the test binary (its memory and CPU, its
// command line, its restarts).
package process

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

// BuildProvider builds cmd/provider of the repository at root into dir, as
// `make build` does (CGO_ENABLED=0, -trimpath, stripped), and returns the
// binary's path.
func BuildProvider(root, dir string) (string, error) {
	bin := filepath.Join(dir, "provider")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, "./cmd/provider")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", errors.Wrapf(err, "cannot build the provider: %s", stderr.String())
	}
	return bin, nil
}

// Process is a binary run as a child process, its output appended to Log.
type Process struct {
	Bin  string
	Args []string
	// Env is added to this process's environment.
	Env []string
	// Log is the file the process's stdout and stderr are appended to.
	Log string

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
	err    error
}

// Start starts the process. A process already started is started again
// only after it exited (Kill or Stop first).
func (p *Process) Start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	f, err := os.OpenFile(p.Log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return errors.Wrap(err, "cannot open the process log")
	}
	fmt.Fprintf(f, "=== %s start %s\n", filepath.Base(p.Bin), time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command(p.Bin, p.Args...)
	cmd.Env = append(os.Environ(), p.Env...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		_ = f.Close()
		return errors.Wrapf(err, "cannot start %s", p.Bin)
	}
	exited := make(chan struct{})
	p.cmd, p.exited, p.err = cmd, exited, nil
	go func() {
		err := cmd.Wait()
		_ = f.Close()
		p.mu.Lock()
		if p.cmd == cmd {
			p.err = err
		}
		p.mu.Unlock()
		close(exited)
	}()
	return nil
}

// Pid is the running process's ID, 0 before Start.
func (p *Process) Pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// Exited is closed when the process started last has exited; nil before
// Start.
func (p *Process) Exited() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exited
}

// Err is how the process started last ended (nil while it runs or when it
// exited 0).
func (p *Process) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// Kill stops the process at once, whatever it was doing, and waits until
// it has exited.
func (p *Process) Kill() { p.signal(syscall.SIGKILL, 0) }

// Stop asks the process to end (SIGTERM), kills it if it has not after
// grace, and waits until it has exited.
func (p *Process) Stop(grace time.Duration) { p.signal(syscall.SIGTERM, grace) }

func (p *Process) signal(sig syscall.Signal, grace time.Duration) {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return
	}
	_ = cmd.Process.Signal(sig)
	select {
	case <-exited:
		return
	case <-time.After(grace):
	}
	_ = cmd.Process.Kill()
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
	}
}
