package process

import (
	"fmt"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// script writes a shell script that logs its arguments and then waits,
// ending with "term" on SIGTERM unless it ignores it.
func script(t *testing.T, ignoreTerm bool) string {
	t.Helper()
	trap := `trap 'echo term; exit 0' TERM`
	if ignoreTerm {
		trap = `trap '' TERM`
	}
	p := filepath.Join(t.TempDir(), "provider")
	body := "#!/bin/sh\n" + trap + "\necho \"args $* env $BENCH_PROCESS_TEST\"\nwhile :; do sleep 0.05; done\n"
	if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func waitLog(t *testing.T, log, want string) {
	t.Helper()
	wait.Eventually(t, 5*time.Second, fmt.Sprintf("the log holding %q", want), func() error {
		if b, _ := os.ReadFile(log); !strings.Contains(string(b), want) {
			return fmt.Errorf("log %q", b)
		}
		return nil
	})
}

func TestStopEndsTheProcessGracefully(t *testing.T) {
	log := filepath.Join(t.TempDir(), "log")
	p := &Process{Bin: script(t, false), Args: []string{"--a", "b"}, Env: []string{"BENCH_PROCESS_TEST=yes"}, Log: log}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	if p.Pid() == 0 {
		t.Fatal("no pid after Start")
	}
	waitLog(t, log, "args --a b env yes")
	p.Stop(5 * time.Second)
	select {
	case <-p.Exited():
	default:
		t.Fatal("Stop returned before the process exited")
	}
	waitLog(t, log, "term")
	if err := p.Err(); err != nil {
		t.Errorf("a process that exited 0 on SIGTERM reports %v", err)
	}
}

func TestStopKillsAProcessThatIgnoresSIGTERM(t *testing.T) {
	log := filepath.Join(t.TempDir(), "log")
	p := &Process{Bin: script(t, true), Log: log}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	waitLog(t, log, "args")
	start := time.Now()
	p.Stop(200 * time.Millisecond)
	if el := time.Since(start); el < 200*time.Millisecond {
		t.Errorf("Stop killed after %s, before the grace period", el)
	}
	select {
	case <-p.Exited():
	default:
		t.Fatal("Stop returned before the process exited")
	}
	if p.Err() == nil {
		t.Error("a killed process reports no error")
	}
}

func TestKillAndStartAgain(t *testing.T) {
	log := filepath.Join(t.TempDir(), "log")
	p := &Process{Bin: script(t, true), Log: log}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	first := p.Pid()
	p.Kill()
	if err := syscall.Kill(first, 0); err == nil {
		t.Errorf("process %d still exists after Kill", first)
	}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	defer p.Kill()
	if p.Pid() == first || p.Pid() == 0 {
		t.Errorf("pid after the second Start = %d, first was %d", p.Pid(), first)
	}
	b, _ := os.ReadFile(log)
	if n := strings.Count(string(b), "=== provider start"); n != 2 {
		t.Errorf("log has %d start headers, want 2 (appended, not truncated):\n%s", n, b)
	}
}

func TestStartFailsForAMissingBinary(t *testing.T) {
	p := &Process{Bin: filepath.Join(t.TempDir(), "nothing"), Log: filepath.Join(t.TempDir(), "log")}
	if err := p.Start(); err == nil {
		p.Kill()
		t.Fatal("Start of a missing binary succeeded")
	}
	p.Stop(time.Second) // nothing to stop: must not block or panic
}
